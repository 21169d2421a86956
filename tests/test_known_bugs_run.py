"""What `sinkcheck run` does with failures it has seen before, on a simulated target (one of the
Python sink's faulty variants: no JVM, milliseconds a run): a failure a saved reproducer already
shows is not saved again, and saved copies of one failure are replayed once."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conformance.catalog.known_bugs import KnownBug
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


# --- `--accept-known-bugs`: a team's release, its known bugs accepted, a new failure not -------------

LAST_RECORD_MISSING = ("no-loss", "exact-object-set", "atomic-visibility", "contents", "commit-safety")


def known_bug(**changes: object) -> KnownBug:
    """A known bug of the faulty variant, as the library would record one: crash-mid-stream shows it,
    and it fails the five properties the variant's missing last record fails there."""
    fields: dict[str, object] = dict(
        id="pysink-last-record-dropped", sink="pysink", title="The latest file of a partition lacks its last record",
        cite="example/pysink#7", also=(), affected=((None, None),), fixed_in=(), needs=lambda cfg: True,
        needs_text="any config", symptom="a record committed and in no object", workaround=None,
        scenarios=("crash-mid-stream",), breaks=LAST_RECORD_MISSING)
    return KnownBug(**{**fields, **changes})  # type: ignore[arg-type]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 - a function registering one entry for the test
    """Registers a test-only entry beside the library's (conformance.catalog.known_bugs.matching
    reads KNOWN_BUGS at each call) for the test's duration."""
    from conformance.catalog.known_bugs import matching

    def register(bug: KnownBug) -> KnownBug:
        monkeypatch.setattr(matching, "KNOWN_BUGS", matching.KNOWN_BUGS + (bug,))
        return bug
    return register


def test_a_run_failing_only_by_a_known_bug_of_its_release_exits_0_with_accept_known_bugs_and_1_without(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], registered) -> None:  # noqa: ANN001
    bug = registered(known_bug())
    assert run(tmp_path, "--scenario", "crash-mid-stream", "--no-save-failures") == Exit.FAILED
    out = capsys.readouterr().out
    assert "ACCEPTED" not in out and "FAIL: 1 runs: 0 passed, 1 failed, 0 unknown" in out
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "accepted_known_bugs" not in doc and "accepted" not in doc["counts"]
    assert "accepted_known_bug" not in doc["results"][0]  # without the flag nothing changes
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert 'failures="5"' in junit and "accepted-known-bug" not in junit

    assert run(tmp_path, "--scenario", "crash-mid-stream", "--no-save-failures", "--accept-known-bugs") == Exit.OK
    out = capsys.readouterr().out
    line = f"accepted known bug {bug.id} (example/pysink#7)"
    assert f"ACCEPTED crash-mid-stream on {VARIANT}: {line} of 0.2.0: atomic-visibility, commit-safety, contents, " \
           "exact-object-set, no-loss failed" in out
    assert "PASS: 1 runs: 0 passed, 1 failed (1 accepted as known bugs), 0 unknown, 0 errors" in out
    assert "✗ no-loss" not in out  # the failure block is the report's; the terminal names the bug
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["status"] == "pass" and doc["runs_status"] == "fail" and doc["counts"]["accepted"] == 1
    (accepted,) = doc["accepted_known_bugs"]
    assert accepted["id"] == bug.id and accepted["line"] == line and accepted["scenario"] == "crash-mid-stream"
    assert doc["results"][0]["accepted_known_bug"]["witness"].startswith("crash-mid-stream failed: no-loss")
    # junit: the failures a CI fails on are skips naming the bug, the witnesses kept in their text
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert 'failures="0"' in junit and junit.count('type="accepted-known-bug"') == 5
    assert f'<skipped message="{line}: no-loss [P-NOLOSS]: 4 records lost" type="accepted-known-bug">' in junit
    assert "offsets: events-0@3" in junit
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'data-status-overall="pass"' in html and "1 fail (1 accepted as known bugs)" in html
    assert f'<p class="accepted" data-known-bug="{bug.id}"><b>{line}</b>' in html


def test_a_failure_no_known_bug_of_its_release_explains_exits_1_with_accept_known_bugs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], registered) -> None:  # noqa: ANN001
    registered(known_bug())
    # another scenario fails the same way, but the entry names crash-mid-stream only and leaves no trace
    assert run(tmp_path, "--scenario", "crash-mid-stream", "--scenario", "rotate-interval-table", "--no-save-failures",
               "--accept-known-bugs") == Exit.FAILED
    out = capsys.readouterr().out
    assert "ACCEPTED crash-mid-stream" in out and "rotate-interval-table on pysink:last-record-missing: FAIL" in out
    assert "FAIL: 2 runs: 0 passed, 2 failed (1 accepted as known bugs)" in out
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert 'failures="5"' in junit and junit.count('type="accepted-known-bug"') == 5


@pytest.mark.parametrize("changes,why", [
    ({"breaks": tuple(p for p in LAST_RECORD_MISSING if p != "commit-safety")}, "commit-safety, which it does not break"),
    ({"affected": (("1.0.0", None),), "fixed_in": ()}, "a bug of later releases than 0.2.0, the one that ran"),
    ({"sink": "confluent"}, "another sink's bug"),
])
def test_a_known_bug_accepts_a_run_only_where_it_explains_every_failed_property_on_the_release_that_ran(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], registered, changes, why) -> None:  # noqa: ANN001
    registered(known_bug(**changes))
    assert run(tmp_path, "--scenario", "crash-mid-stream", "--no-save-failures", "--accept-known-bugs") == Exit.FAILED, why
    assert "ACCEPTED" not in capsys.readouterr().out
    assert json.loads((tmp_path / "out" / "results.json").read_text())["accepted_known_bugs"] == []


def test_a_saved_reproducer_records_the_known_bug_it_reproduced(tmp_path: Path, registered) -> None:  # noqa: ANN001
    bug = registered(known_bug())
    assert run(tmp_path, "--scenario", "crash-mid-stream") == Exit.FAILED
    (name,) = saved(tmp_path)
    assert Scenario.load(tmp_path / "saved" / name).played_on["known_bugs"] == [bug.id]


# a pytest plugin registering the same test-only entry in a pytest session of the conformance suite
REGISTERING_PLUGIN = '''
from conformance.catalog.known_bugs import KnownBug, matching

matching.KNOWN_BUGS = matching.KNOWN_BUGS + (KnownBug(
    id="pysink-last-record-dropped", sink="pysink", title="The latest file of a partition lacks its last record",
    cite="example/pysink#7", also=(), affected=((None, None),), fixed_in=(), needs=lambda cfg: True,
    needs_text="any config", symptom="a record committed and in no object", workaround=None,
    scenarios=("crash-mid-stream",), breaks=%r),)
''' % (LAST_RECORD_MISSING,)


def _suite(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os
    import sys

    (tmp_path / "register_known_bug.py").write_text(REGISTERING_PLUGIN)
    root = Path(__file__).resolve().parent.parent
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rxs", "-p", "no:cacheprovider", "-p",
                           "register_known_bug", "--pyargs", "conformance.suite", f"--target={VARIANT}",
                           "-k", "test_named_scenario and crash-mid-stream and (no_loss or naming)",
                           f"--sinkcheck-out={tmp_path / 'out'}", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{tmp_path}"})


def test_the_pytest_plugins_accept_known_bugs_makes_the_known_bugs_failure_an_xfail_naming_it(tmp_path: Path) -> None:
    without = _suite(tmp_path)
    assert without.returncode == 1, (without.stdout + without.stderr)[-3000:]
    assert re.search(r"^1 failed, 1 passed, \d+ deselected in", without.stdout, re.M)
    accepting = _suite(tmp_path, "--accept-known-bugs")
    out = accepting.stdout + accepting.stderr
    assert accepting.returncode == 0, out[-3000:]
    assert re.search(r"^1 passed, \d+ deselected, 1 xfailed in", out, re.M)
    assert "accepted known bug pysink-last-record-dropped (example/pysink#7): crash-mid-stream failed" in out
