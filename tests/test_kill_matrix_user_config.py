"""Issue 38's second acceptance point: a faulty sink still fails `sinkcheck run --connector-config
F`. Under example user configs, every variant whose rule the config exercises is killed by a run
`sinkcheck run --target pysink:<variant> --connector-config F --profile ci` plays (and the correct
sink passes that run), and every other variant is listed with the reason."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from adapters.pysink import VARIANTS
from adapters.pysink.targets.exercised import Config
from adapters.pysink.targets.variants import REGISTRY, unexercised
from conformance.calibration.kill_matrix import AIMED, main
from conformance.calibration.user_kill_matrix import (Row, _merged, generated_runs, render, row_order, summary,
                                                      user_kill_matrix, weak)
from reference_impl.config import load_config_text

CONFIGS = Path(__file__).resolve().parent.parent / "examples" / "user-configs"

# Where the catalog's AIMED misses under a config (its aims not applicable there, or not killing),
# or hits through a costly run, a run that killed the variant when its row played the plan in
# order (`python -m conformance.killmatrix --connector-config F`): a guess of where to look, which
# keeps the test to a run or two per variant; a row whose aim misses goes on through the plan.
AIMED_UNDER: dict[str, dict[str, tuple[str, ...]]] = {
    "field-dt": {"field-slash-escaped": ("generated-005",), "flush-size-per-file": ("generated-005",),
                 "no-rotation-on-incompatible": ("generated-011",)},
    "timebased-dt-seoul": {"floor-buckets": ("generated-041",), "naive-iso-in-zone": ("generated-003",),
                           "flush-size-per-file": ("generated-005",), "epoch-seconds-guess": ("generated-009",),
                           # their first killer, multipart-lost-commit, is 360 records: 1.8 s a run
                           "utc-buckets": ("crash-mid-stream",), "json-as-received": ("crash-mid-stream",)},
    "keys-headers-stored": {"partial-visible": ("error-inside-200-with-keys",)},
}
# the generated runs the aims reach into (whole batches of ten: the same draws as the profile's)
DRAWS = {"field-dt": 20, "timebased-dt-seoul": 50, "keys-headers-stored": 10}
# the exercised variants each config must kill, as the configs stand: a variant dropping
# out of these (its rule narrowed, the config changed) is a change to look at, not a pass
EXERCISED = {  # bucket-check-strict among them under every config: every start checks the bucket
    "field-dt": 21,
    "timebased-dt-seoul": 23,
    "keys-headers-stored": 20,
}


def _config(name: str) -> dict[str, str]:
    return load_config_text((CONFIGS / f"{name}.json").read_text())[1]


@pytest.mark.parametrize("name", sorted(AIMED_UNDER))
def test_every_variant_a_user_config_exercises_is_killed_under_it(tmp_path, capsys, name):
    """field-dt (FieldPartitioner on `dt`, Structs, flush.size=2), timebased-dt-seoul
    (RecordField `dt`, daily buckets in Asia/Seoul) and keys-headers-stored (JSON keys and
    headers beside each file, flush.size=4): before the generated streams carried a '/'
    in a user's partition field, their drawn time (before 1970, ISO text without an offset) in
    RecordField's field, and schema changes under the default schema.compatibility,
    field-slash-escaped, no-rotation-on-incompatible, floor-buckets and naive-iso-in-zone
    survived every run."""
    started = time.monotonic()
    plan, rows = user_kill_matrix(_config(name), list(VARIANTS), tmp_path, workers=1, enough=1,
                                  aimed={**AIMED, **AIMED_UNDER[name]}, draws=DRAWS[name])
    with capsys.disabled():
        print(f"\nkill matrix under {name}, {time.monotonic() - started:.0f}s:\n{render(rows)}\n{summary(rows)}")
    assert not weak(rows), {v: rows[v].verdict() for v in weak(rows)}
    exercised = [r for r in rows.values() if r.exercised]
    assert len(exercised) == EXERCISED[name], [r.variant for r in exercised]
    assert all(r.killers and not r.false_kills for r in exercised)
    assert all(not r.played for r in rows.values() if not r.exercised)  # listed, not played
    assert {na.scenario for na in plan.not_applicable}.isdisjoint(k for r in exercised for k in r.killers)


def test_each_variant_states_when_a_config_exercises_its_rule():
    """Every variant's class carries its `unexercised` rule (a new variant must say), and the
    brief's examples read as they should."""
    default = Config.of(_config("default-topics-orders"))
    assert all(isinstance(unexercised(v, default), (str, type(None))) for v in REGISTRY)
    assert unexercised("partition-fields-sorted", default) == (
        "partitioner is DefaultPartitioner: no partition is named after a field's value")
    assert unexercised("field-slash-escaped", Config.of(_config("field-dt"))) is None
    # a scheduled boundary never meets an open file where flush.size=1 closes every file at once
    assert unexercised("schedule-from-file-open", default).startswith("flush.size=1")
    assert unexercised("schedule-from-file-open", Config.of({**_config("default-topics-orders"),
                                                              "flush.size": "3"})) is None
    assert unexercised("headers-first-only", Config.of(_config("keys-headers-stored"))) is None
    assert unexercised("headers-first-only", default) == "store.kafka.headers=false: no headers are written"
    # conditional writes (scheduled rotation, nothing stored beside) refuse a zombie's overwrite
    assert unexercised("zombie-overwrite", default).startswith("rotate.schedule.interval.ms is set")
    assert unexercised("precondition-as-exists", default) is None
    # the reason names the property that turns conditional writes off
    off = Config.of({**_config("default-topics-orders"), "enable.conditional.writes": "false"})
    assert unexercised("precondition-as-exists", off).startswith("enable.conditional.writes=false")


def test_a_row_plays_its_aims_first_then_the_named_then_the_generated():
    named, generated = ["a", "b", "c"], ["generated-000", "generated-001"]
    aimed = {"v": ("generated-001", "c", "gone")}
    assert row_order("v", named, generated, aimed) == ["generated-001", "c", "a", "b", "generated-000"]
    assert row_order("correct", named, generated, aimed) == [*named, *generated]
    assert row_order("w", named, (), aimed) == named


def test_a_kill_the_correct_sink_shares_is_no_kill():
    row = Row("last-record-missing", None, failed={"no-loss": ["a", "b"]}, false_kills=["a"])
    assert row.killers == ["b"] and row.killed
    row.false_kills = ["a", "b"]
    assert not row.killed and row.verdict().startswith("SURVIVED")
    assert weak({"last-record-missing": row}) == ["last-record-missing"]
    assert weak({"x": Row("x", "flush.size=1: every file holds one record")}) == []


def test_the_correct_sinks_row_played_in_pieces_adds_up():
    """The command deals the correct sink's row out among its workers; the pieces add up."""
    row = {"failed": {"no-loss": ["a"]}, "errors": [], "played": 3}
    piece = {"failed": {"no-loss": ["c"], "naming": ["c"]}, "errors": ["d: TargetError: x"], "played": 2}
    assert _merged(row, piece) == {"failed": {"no-loss": ["a", "c"], "naming": ["c"]}, "errors": ["d: TargetError: x"],
                                   "played": 5}
    assert row == {"failed": {"no-loss": ["a"]}, "errors": [], "played": 3}  # not changed in place


def test_the_generated_runs_are_those_sinkcheck_run_plays_under_the_config(tmp_path):
    """The matrix plays the generated scenarios `run --connector-config` plays: the same
    draws, prepared (fitted, adapted) and named alike (ten draws, one batch)."""
    from conformance.playing.generated import identity, run_generated
    from conformance.playing.session import Session

    cfg = _config("field-dt")
    sess = Session(tmp_path, None, None, [])
    run_generated(sess, "pysink", 10, 0, True, 30, cfg, None)
    played = [(r.scenario.name, identity(r.scenario)) for r in sess.results]
    assert played == [(sc.name, identity(sc)) for sc in generated_runs(cfg, 10)]


def test_the_command_refuses_what_sinkcheck_run_refuses(capsys):
    assert main(["--connector-config", str(CONFIGS / "debezium-transforms.json")]) == 4
    assert "transforms=unwrap,route" in capsys.readouterr().err
