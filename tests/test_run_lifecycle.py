"""A command's life beside its verdicts: a signal keeps what finished (exit 130/143), one command
per --out, reproducers that replay where they failed, one saved failure per failure signature.
On the Python sink's simulation and in-test targets: seconds each."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit
from sinkcheck.lifecycle import LOCK_FILE
from test_cli_exit_codes import CHEAP, FLAKY, LosingTarget, PassingTarget, SwitchTarget, run, spec

ROOT = Path(__file__).resolve().parents[1]


def interruptible() -> None:
    """The command's SIGINT as a terminal gives it: a test run started in the background (a CI
    job's shell, `cmd &`) has SIGINT ignored, and sinkcheck keeps a signal ignored at its start
    ignored (sinkcheck.lifecycle), so the signal sent would never reach it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_keeps_the_finished_runs_in_reports_marked_interrupted(tmp_path: Path, sig: int, code: int) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "sinkcheck", "run", "--target", "pysink", "--profile", "ci",
                             "--scenario", "rotate-interval-table", "--scenario", "rotate-schedule-table",
                             "--examples", "100", "--no-preflight", "--no-save-failures", "--out", str(out)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # not a TTY: one progress line per run started
            if line.startswith("[sinkcheck] 2/"):
                break
        else:
            pytest.fail("no progress line before the run ended")
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == code, stderr
    doc = json.loads((out / "results.json").read_text())
    stopped = doc["interrupted"]
    assert doc["status"] == "interrupted" and stopped["signal"] == signal.Signals(sig).name
    assert stopped["finished"] == len(doc["results"]) >= 2 and stopped["planned"] == 102
    assert f"{stopped['finished']} of 102 planned runs finished" in stdout
    assert "INTERRUPTED" in (out / "report.html").read_text()
    assert 'type="interrupted"' in (out / "junit.xml").read_text()
    assert not (out / LOCK_FILE).exists()


def test_an_out_dir_held_by_a_live_command_is_refused_with_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    holder = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / LOCK_FILE).write_text(json.dumps({"pid": holder.pid, "command": "sinkcheck run pysink"}))
        assert run(tmp_path, "--target", spec(PassingTarget), *CHEAP) == Exit.USAGE
        err = capsys.readouterr().err
        assert f"in use by pid {holder.pid} (sinkcheck run pysink" in err
        assert not (tmp_path / "out" / "results.json").exists()
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_is_taken_over_and_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / LOCK_FILE).write_text(json.dumps({"pid": gone.pid, "command": "sinkcheck gate"}))
    assert run(tmp_path, "--target", spec(PassingTarget), *CHEAP, "--no-preflight") == Exit.OK
    assert f"taking over the lock of {tmp_path / 'out'}: its holder (pid {gone.pid}, sinkcheck gate) is gone" \
        in capsys.readouterr().err
    assert not (tmp_path / "out" / LOCK_FILE).exists()  # released at the end


def test_replay_without_target_plays_the_target_the_failure_was_found_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--target", spec(LosingTarget), *CHEAP, "--no-preflight") == Exit.FAILED
    [saved] = (tmp_path / "saved").iterdir()
    doc = json.loads(saved.read_text())
    assert doc["played_on"]["target"] == spec(LosingTarget) and "no-loss" in doc["played_on"]["failed"]
    capsys.readouterr()
    # with no --target it fails again where it failed, not on the Python sink
    assert main(["replay", str(saved), "--out", str(tmp_path / "replay")]) == Exit.FAILED
    err = capsys.readouterr().err
    assert f"against {spec(LosingTarget)} (the target recorded in the file)" in err
    assert main(["replay", str(saved), "--target", spec(PassingTarget), "--out", str(tmp_path / "replay")]) == Exit.OK


def test_every_reproducer_a_model_gate_prints_replays_as_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--baseline", "model@10.5.23", "--candidate", "model@10.6.3", "--scenario",
                 "late-records-across-hour-edge", "--examples", "0", "--profile", "ci",
                 "--out", str(tmp_path / "gate")]) == Exit.OK
    printed = [ln.split("sinkcheck replay ", 1)[1] for ln in capsys.readouterr().out.splitlines()
               if "sinkcheck replay " in ln]
    assert len(printed) == 2 and any("model@10.5.23" in p for p in printed)
    for cmd in printed:
        assert main(["replay", *shlex.split(cmd)]) == Exit.OK, cmd
    # the file alone names the target too
    assert main(["replay", shlex.split(printed[0])[0]]) == Exit.OK
    assert "(the target recorded in the file)" in capsys.readouterr().err


def test_a_failure_found_again_under_another_seed_keeps_one_saved_file(tmp_path: Path) -> None:
    for seed in ("1", "2", "3"):  # a named scenario takes the run's seed: once a new file per run
        assert run(tmp_path, "--target", spec(LosingTarget), *CHEAP, "--seed", seed, "--no-preflight") == Exit.FAILED
    assert len(list((tmp_path / "saved").iterdir())) == 1
    assert len(list((tmp_path / "out" / "failures").iterdir())) == 1


def test_a_failure_found_again_on_a_warm_stack_keeps_one_saved_file_under_its_own_topics(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a warm stack each run's topics get a tag of their own (events-r1, events-r2): the
    reproducer is saved without it, else each run, and each replay of the saved one (tagged
    again: events-r1-r3), left a file of its own (3 for one Lenses failure in two runs)."""
    from conformance.catalog.named import ALL_NAMED
    from conformance.playing.session import Session

    # a stand-in for a warm stack (no broker: the in-test target needs none), so that the session
    # tags each run's topics as on a Kafka Connect target's
    monkeypatch.setattr(Session, "stack_for", lambda self, spec, key=None: SimpleNamespace(s3=None))
    for _ in range(3):
        assert run(tmp_path, "--target", spec(LosingTarget), *CHEAP, "--no-preflight") == Exit.FAILED
        assert '"tp": "events-r' in (tmp_path / "out" / "results.json").read_text()  # the runs' topics were tagged
    saved = list((tmp_path / "saved").iterdir())
    assert len(saved) == 1
    assert json.loads(saved[0].read_text())["topics"] == ALL_NAMED["rotate-interval-table"]().topics


def test_picked_scenarios_replay_only_their_saved_failures_and_the_banner_counts_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    two = ("--scenario", "rotate-interval-table", "--scenario", "rotate-schedule-table", "--examples", "0", "--no-preflight")
    assert run(tmp_path, "--target", spec(LosingTarget), *two) == Exit.FAILED
    assert len(list((tmp_path / "saved").iterdir())) == 2
    capsys.readouterr()
    assert run(tmp_path, "--target", spec(LosingTarget), *CHEAP, "--no-preflight") == Exit.FAILED
    assert "1 saved + 1 named + 0 generated" in capsys.readouterr().err
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted((e["origin"], e["scenario"]) for e in doc["results"]) == [
        ("named", "rotate-interval-table"), ("saved-failure", "rotate-interval-table")]
    assert len(list((tmp_path / "saved").iterdir())) == 2  # the same two signatures: no new file


def test_a_saved_failure_that_passes_on_replay_is_retired_and_said_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    FLAKY["lose"] = True
    try:
        assert run(tmp_path, "--target", spec(SwitchTarget), *CHEAP, "--no-preflight") == Exit.FAILED
        [saved] = (tmp_path / "saved").iterdir()
        FLAKY["lose"] = False
        capsys.readouterr()
        assert run(tmp_path, "--target", spec(SwitchTarget), *CHEAP, "--no-preflight") == Exit.OK
        assert f"saved failure {saved.name} (rotate-interval-table: commit-safety, no-loss) passes now on " \
               f"{spec(SwitchTarget)}: retired, file removed" in capsys.readouterr().err
        assert list((tmp_path / "saved").iterdir()) == []
    finally:
        FLAKY["lose"] = True


def test_model_refuses_before_it_starts_an_input_the_local_engine_cannot_hold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ex = ROOT / "examples"
    args = ["model", "--config", str(ex / "connector.json"), "--records", str(ex / "records.jsonl"),
            "--out", str(tmp_path / "expected.json")]
    assert main([*args, "--max-memory", "10M"]) == Exit.USAGE
    err = capsys.readouterr().err
    assert f"--records {ex / 'records.jsonl'}:" in err and "take --engine spark" in err
    assert not (tmp_path / "expected.json").exists()
    assert main(args) == Exit.OK and (tmp_path / "expected.json").exists()


def test_the_summary_names_each_unknown_run_and_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_cli_exit_codes import UnfiredFaultTarget

    assert run(tmp_path, "--target", spec(UnfiredFaultTarget), *CHEAP, "--no-preflight") == Exit.UNKNOWN
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("UNKNOWN ")]
    assert lines[0].startswith(f"UNKNOWN rotate-interval-table on {spec(UnfiredFaultTarget)}: ")
    assert "crash" in lines[0] and "never fired" in lines[0], lines


def test_a_signal_during_a_gate_keeps_both_sides_finished_runs(tmp_path: Path) -> None:
    out = tmp_path / "gate"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "sinkcheck", "gate", "--baseline", "model@10.5.23", "--candidate",
                             "model@10.6.3", "--profile", "ci", "--out", str(out)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("[sinkcheck] 4/"):
                break
        else:
            pytest.fail("no progress line before the gate ended")
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["status"] == "interrupted" and doc["interrupted"]["finished"] >= 4
    assert doc["interrupted"]["planned"] > doc["interrupted"]["finished"]
    assert {e["target"] for e in doc["results"]} == {"model@10.5.23", "model@10.6.3"}
    assert stdout.startswith("INTERRUPTED (") or "\nINTERRUPTED (" in stdout


class SlowTarget(PassingTarget):
    def wait_until_quiet(self, timeout_s: float) -> bool:
        time.sleep(1.0)
        return True


def test_a_long_run_shows_its_progress_line_again_with_its_elapsed_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sinkcheck.terminal as terminal

    monkeypatch.setattr(terminal, "PLAIN_TICK_S", 0.3)  # off a terminal: a line every 10 s, here every 0.3 s
    assert run(tmp_path, "--target", f"{__name__}:SlowTarget", *CHEAP, "--no-preflight") == Exit.OK
    ticks = [ln for ln in capsys.readouterr().err.splitlines()
             if ln.startswith("[sinkcheck] 0/1 scenarios done") and ln.endswith("s") and " · " in ln.rsplit("on ", 1)[1]]
    assert ticks, "no tick while the scenario ran"


def test_a_signal_whose_exception_was_swallowed_stops_the_next_step() -> None:
    """Python may run the handler inside a gc callback or a __del__, where the exception is
    printed and dropped (Hypothesis has such a callback): the next progress line raises it."""
    from reports.redact import Redactor
    from sinkcheck.lifecycle import Interrupted, as_interrupted, signals_interrupt
    from sinkcheck.terminal import Terminal

    term = Terminal(Redactor())
    with signals_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.5)
        except KeyboardInterrupt:
            pass  # as a gc callback's caller drops it
        with pytest.raises(Interrupted) as raised:
            term.progress("[sinkcheck] the next step")
        assert as_interrupted(raised.value).exit_code == 143
        term.progress("[sinkcheck] once taken, it is not raised again")


def test_a_swallowed_signal_leaves_no_traceback() -> None:
    code = ("import signal\n"
            "from sinkcheck.lifecycle import Interrupted, signals_interrupt\n"
            "class Dropping:\n"
            "    def __del__(self):\n"
            "        raise Interrupted(signal.SIGTERM)  # the handler, run inside a __del__\n"
            "with signals_interrupt():\n"
            "    Dropping()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_replay_pins_the_connector_version_a_failure_ran_on() -> None:
    from sinkcheck.cli import recorded_target

    assert recorded_target({"target": "kafka-connect:confluent", "connector": "10.5.23"}) == "kafka-connect:confluent@10.5.23"
    assert recorded_target({"target": "kafka-connect:confluent@11.0.1", "connector": "11.0.1"}) == "kafka-connect:confluent@11.0.1"
    # a version that comes from its jar set cannot be pinned in the spec; other targets have none to pin
    assert recorded_target({"target": "kafka-connect:iceberg", "connector": "1.9.0"}) == "kafka-connect:iceberg"
    assert recorded_target({"target": "pysink", "connector": "0.2.0"}) == "pysink"
    assert recorded_target(None) is None
