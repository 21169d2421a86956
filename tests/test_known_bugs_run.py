"""What `sinkcheck run` does with failures it has seen before, on a simulated target (one of the
Python sink's faulty variants: no JVM, milliseconds a run): a failure a saved reproducer already
shows is not saved again, and saved copies of one failure are replayed once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.inputs.scenario import Scenario
from conformance.playing.session import alike_groups, failure_file_name, fails_alike
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

# flushes the latest file of a partition without its last record: crash-mid-stream fails on it
VARIANT = "pysink:last-record-missing"


def run(tmp_path: Path, *args: str) -> int:
    return main(["run", "--target", VARIANT, "--out", str(tmp_path / "out"), "--failures-dir", str(tmp_path / "saved"),
                 "--examples", "0", *args])


def saved(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "saved").glob("*.json"))


def another_reproducer(path: Path, pad: str) -> Path:
    """A reproducer of the same failure with other records (a first value one field longer), saved
    as sinkcheck names it: what another run, or another draw, of the same failure leaves."""
    doc = json.loads(path.read_text())
    doc["records"][0]["value"] = {**doc["records"][0]["value"], "pad": pad}
    sc = Scenario.from_json(doc)
    return sc.save(path.parent / failure_file_name(sc))


def origins(tmp_path: Path) -> list[str]:
    return [e["origin"] for e in json.loads((tmp_path / "out" / "results.json").read_text())["results"]]


def test_a_failure_a_saved_reproducer_already_shows_is_not_saved_again(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    (first,) = saved(tmp_path)
    other = another_reproducer(tmp_path / "saved" / first, "x")
    (tmp_path / "saved" / first).unlink()
    capsys.readouterr()
    # the saved one is replayed and fails again; the named scenario fails the same way: its
    # reproducer (the first file again) would be one more FAIL of it in every run from now on
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    assert saved(tmp_path) == [other.name]
    err = capsys.readouterr().err
    (line,) = [ln for ln in err.splitlines() if "not saved" in ln]
    assert line.startswith(f"sinkcheck run: not saved to {tmp_path / 'saved'}")
    # (the replayed one, failing again, rewrites its own file)
    assert line.endswith(f"properties): crash-mid-stream (as {other.name})")
    assert origins(tmp_path) == ["saved-failure", "named"]
    # another failure (another scenario) is saved as before
    assert run(tmp_path, "--scenario", "crash-mid-stream", "--scenario", "rotate-interval-table") == Exit.FAILED
    assert len(saved(tmp_path)) == 2 and other.name in saved(tmp_path)


def test_saved_copies_of_one_failure_are_replayed_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    (first,) = saved(tmp_path)
    copies = [another_reproducer(tmp_path / "saved" / first, pad) for pad in ("x", "y")]
    assert len(set(saved(tmp_path))) == 3
    capsys.readouterr()
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    assert origins(tmp_path) == ["saved-failure", "named"]  # one replay, not three FAILs of one failure
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if "not replayed" in ln]
    assert line.startswith(f"saved failures on {VARIANT}: 2 not replayed")
    assert len(saved(tmp_path)) == 3  # kept: played once one of them passes (then retired)
    assert all(c.name in line for c in copies if c.name != saved(tmp_path)[0])


def test_the_next_saved_copy_is_replayed_when_the_one_played_before_it_passes_now(tmp_path: Path,
                                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The group's first retired (what it recorded as failing passes now): the next is played, so
    a failure another reproducer still shows is not lost with it. Two reproducers of one known bug,
    the first recording only a property that passes on replay (no-duplicates)."""
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    (first,) = saved(tmp_path)
    another_reproducer(tmp_path / "saved" / first, "x")
    for i, name in enumerate(saved(tmp_path)):
        doc = json.loads((tmp_path / "saved" / name).read_text())
        doc["played_on"]["known_bugs"] = ["pysink-last-record-dropped"]
        if i == 0:
            doc["played_on"]["failed"] = ["no-duplicates"]
        (tmp_path / "saved" / name).write_text(json.dumps(doc))
    healed, still = saved(tmp_path)
    capsys.readouterr()
    assert run(tmp_path, "--scenario", "crash-mid-stream", "--no-save-failures") == Exit.FAILED
    assert origins(tmp_path) == ["saved-failure", "saved-failure", "named"]
    assert saved(tmp_path) == [still]
    err = capsys.readouterr().err
    assert f"saved failure {healed} " in err and "not replayed" not in err


def _saved_on(name: str, target: str, failed: list[str], bugs: list[str] | None = None) -> Scenario:
    return Scenario(name, {}, {"t": 1}, [], played_on={"target": target, "failed": failed,
                                                        **({"known_bugs": bugs} if bugs else {})})


def test_two_reproducers_fail_alike_by_their_known_bug_or_by_their_scenario_and_properties() -> None:
    a = _saved_on("generated-004-shrunk", "kafka-connect:confluent@12.1.9", ["liveness"], ["confluent-x"])
    # the same known bug, from another scenario and with another property failing beside it
    assert fails_alike(a, _saved_on("s3-stalled-complete-answer", a.played_on["target"], ["commit-progress"],
                                    ["confluent-x"]))
    assert not fails_alike(a, _saved_on("generated-009", a.played_on["target"], ["liveness"], ["confluent-y"]))
    assert not fails_alike(a, _saved_on("generated-009", "kafka-connect:confluent@11.0.1", ["liveness"],
                                        ["confluent-x"]))
    # no known bug: a generated draw is like another failing the same properties, a named scenario only like itself
    g = _saved_on("generated-017", "pysink:v", ["commit-safety", "no-loss"])
    assert fails_alike(g, _saved_on("generated-590-shrink", "pysink:v", ["no-loss", "commit-safety"]))
    assert not fails_alike(g, _saved_on("generated-590-shrink", "pysink:v", ["no-loss"]))
    assert not fails_alike(g, _saved_on("crash-mid-stream", "pysink:v", ["commit-safety", "no-loss"]))
    # a file that records no failed property (saved before they were recorded) is like no other
    assert not fails_alike(_saved_on("crash-mid-stream", "pysink:v", []), _saved_on("crash-mid-stream", "pysink:v", []))
