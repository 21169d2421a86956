"""The upgrade gate: model@10.5.23 vs model@10.6.3 differ in partition-change rotation
(spec §18); the gate finds it with a witness. A candidate that loses records is a regression."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

GATE = ["gate", "--baseline", "model@10.5.23", "--candidate", "model@10.6.3",
        "--scenario", "late-records-across-hour-edge", "--scenario", "rotate-interval-table", "--examples", "0"]


def test_model_gate_reports_partition_change_rotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*GATE, "--out", str(tmp_path)]) == Exit.OK
    out = capsys.readouterr().out
    assert "BEHAVIOUR CHANGE (documented) late-records-across-hour-edge: 2 objects → 4" in out
    doc = json.loads((tmp_path / "results.json").read_text())
    diff = doc["baseline"]
    assert diff["compared"] == 2 and diff["regressions"] == [] and diff["unchanged"] == 1
    [change] = diff["behaviour_changes"]
    assert change["scenario"] == "late-records-across-hour-edge" and change["kind"] == "documented"
    assert change["versions"] == ["10.5.23", "10.6.3"]
    moved = {m["offset"]: (m["baseline"], m["candidate"]) for m in change["objects"]["moved_offsets"]}
    # the late record 3 (hour 09) no longer joins 0-1 once the hour changed back and forth
    assert moved["events-0@3"] == ("topics/events/year=2024/month=05/day=01/hour=09/events+0+0000000000.json",
                                   "topics/events/year=2024/month=05/day=01/hour=09/events+0+0000000003.json")
    assert set(moved) == {"events-0@3", "events-0@4", "events-0@5"}
    rules = {o["rotation"] for o in change["rotations"]["candidate"]}
    assert "R3.3 partition change" in rules
    assert "R3.3 partition change" not in {o["rotation"] for o in change["rotations"]["baseline"]}
    assert "sinkcheck replay" in change["replay_candidate"] and "model@10.6.3" in change["replay_candidate"]
    html = (tmp_path / "report.html").read_text()
    assert 'id="changes"' in html and "events-0@3" in html and "documented" in html


def test_fail_on_change_makes_the_documented_change_fail(tmp_path: Path) -> None:
    assert main([*GATE, "--fail-on-change", "--out", str(tmp_path)]) == Exit.FAILED


def test_same_version_is_unchanged(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@10.6.3", "--candidate", "model@10.6.3", "--examples", "3",
                 "--scenario", "late-records-across-hour-edge", "--out", str(tmp_path)]) == Exit.OK
    diff = json.loads((tmp_path / "results.json").read_text())["baseline"]
    assert diff["behaviour_changes"] == [] and diff["regressions"] == []


def test_regression_on_a_real_candidate_is_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_cli_exit_codes import LosingTarget, PassingTarget, spec

    code = main(["gate", "--baseline", spec(PassingTarget), "--candidate", spec(LosingTarget),
                 "--scenario", "rotate-interval-table", "--examples", "0", "--out", str(tmp_path)])
    assert code == Exit.FAILED
    out = capsys.readouterr().out
    assert "REGRESSION rotate-interval-table: no-loss [P-NOLOSS] pass → fail" in out
    diff = json.loads((tmp_path / "results.json").read_text())["baseline"]
    assert {r["property"] for r in diff["regressions"]} >= {"no-loss"}
    assert diff["regressions"][0]["witnesses"][0]["offsets"]


def test_gate_with_nothing_selected_is_5(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@10.5.23", "--candidate", "model@10.6.3", "--no-named", "--examples", "0",
                 "--out", str(tmp_path)]) == Exit.NOTHING_SELECTED


def test_gate_bad_version_is_4(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@ten", "--candidate", "model@10.6.3", "--out", str(tmp_path)]) == Exit.USAGE


def test_a_gate_between_two_configs_explains_the_change_by_the_config(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Same sink, same version, same records: the candidate turns partition-change rotation off
    (C3). Each side matches the model for its own config, so it is a configured change, not a
    regression; --fail-on-change still stops it."""
    (tmp_path / "candidate.json").write_text(json.dumps({"rotate.file.on.partition.change": "false"}))
    argv = ["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--candidate-config",
            str(tmp_path / "candidate.json"), "--scenario", "late-records-across-hour-edge", "--examples", "0"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == Exit.OK
    assert "BEHAVIOUR CHANGE (configured) late-records-across-hour-edge" in capsys.readouterr().out
    doc = json.loads((tmp_path / "a" / "results.json").read_text())
    [change] = doc["baseline"]["behaviour_changes"]
    assert change["kind"] == "configured" and "rotate.file.on.partition.change" in change["why"]
    assert doc["environment"]["candidate"].endswith("with rotate.file.on.partition.change=false")
    assert main([*argv, "--fail-on-change", "--out", str(tmp_path / "b")]) == Exit.FAILED
    assert main(["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--candidate-config",
                 str(tmp_path / "missing.json"), "--out", str(tmp_path / "c")]) == Exit.USAGE
    assert "--candidate-config: file not found" in capsys.readouterr().err


def test_objects_that_differ_because_the_baseline_broke_its_claim_are_the_fix_not_a_regression() -> None:
    """A gate of 10.6.18 against 12.1.9 once counted three 'unexplained' regressions where the
    baseline's task had died (its objects broke its model) and the candidate matched the model."""
    from reports.diff import diff_entries

    def entry(objects, matches):
        return {"scenario": "s", "target": "t", "claim": {"name": "exactly-once"}, "connector_version": "v",
                "connector": {}, "replay": "r", "steps": "", "objects": objects,
                "verdicts": [{"property": "exact-object-set", "status": "pass" if matches else "fail", "claimed": True,
                              "rule": "§16", "message": "", "witnesses": []}]}

    whole = [{"key": "a+0+0.json", "offsets": ["e-0@0", "e-0@1"]}, {"key": "a+0+2.json", "offsets": ["e-0@2"]}]
    diff = diff_entries([entry(whole[:1], False)], [entry(whole, True)])
    assert not diff["regressions"]
    assert [c["kind"] for c in diff["behaviour_changes"]] == ["fixed"]
    assert [f["property"] for f in diff["fixed"]] == ["exact-object-set"]
    # the other way round it is one
    back = diff_entries([entry(whole, True)], [entry(whole[:1], False)])
    assert "exact-object-set" in [r["property"] for r in back["regressions"]]
