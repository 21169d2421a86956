"""Every exit code of `sinkcheck run` pinned by a test, on cheap paths: fake in-test targets
(loaded by module:Class) that keep records in memory and hand back an Observation."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from adapters.observation import BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord
from adapters.target import Fault, RecordToProduce, Target, TargetInfo
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
KEY_ID = "AKIAIOSFODNN7EXAMPLE"


class MemoryTarget(Target):
    """A sink that stores what it is given and writes it all into one object of JSON lines
    (a run with no object to compare tested nothing); subclasses choose what it commits,
    whether it writes, and what it reports."""

    object_format = "jsonl"

    def writes(self) -> bool:
        return True

    def __init__(self, run_dir: Path, s3_endpoint: str | None = None) -> None:
        self.run_dir = run_dir
        self.produced: list[ProducedRecord] = []
        self.faults: list[FaultEvent] = []
        self.next: dict[tuple[str, int], int] = {}

    def start(self, connector_config: Mapping[str, Any], topics: Mapping[str, int]) -> None:
        self.config = dict(connector_config)

    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        out = []
        for r in records:
            off = self.next.get((r.topic, r.partition), 0)
            self.next[(r.topic, r.partition)] = off + 1
            self.produced.append(ProducedRecord(r.topic, r.partition, off, r.timestamp, r.key, r.value, r.headers,
                                                at_ms=int(time.time() * 1000)))
            out.append(off)
        return out

    def apply_fault(self, fault: Fault) -> None:
        now = int(time.time() * 1000)
        self.faults.append(FaultEvent(fault.kind, dict(fault.params), True, now, now + 5))

    def wait_until_quiet(self, timeout_s: float) -> bool:
        return True

    def committed(self) -> dict[str, int]:
        return {}

    def observe(self) -> Observation:
        import hashlib

        from adapters.observation import S3Object

        now = int(time.time() * 1000)
        body = b"".join(p.value + b"\n" for p in self.produced if p.value is not None)
        objects = (S3Object("out/all.jsonl", len(body), hashlib.md5(body).hexdigest(), body, now),) if (
            self.writes() and body) else ()
        return Observation(produced=list(self.produced), bucket_samples=[BucketSample(now, objects)],
                           offset_samples=[OffsetSample(now, self.committed())], faults=list(self.faults), quiet=True)

    def stop(self) -> None:
        pass

    def info(self) -> TargetInfo:
        return TargetInfo(type(self).__name__)


class PassingTarget(MemoryTarget):
    """Commits nothing and loses nothing: every claimed (at-least-once) property holds."""


class LosingTarget(MemoryTarget):
    """Commits every offset but writes no object: records are lost."""

    def writes(self) -> bool:
        return False

    def committed(self) -> dict[str, int]:
        return {f"{t}-{p}": n for (t, p), n in self.next.items()}


class UnfiredFaultTarget(MemoryTarget):
    """Passes, but a fault it was meant to apply never fired: unknown."""

    def observe(self) -> Observation:
        obs = super().observe()
        obs.faults.append(FaultEvent("crash", {}, False, detail="the trigger never matched"))
        return obs


class ExplodingTarget(MemoryTarget):
    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        raise RuntimeError("the fake sink broke unexpectedly")


FLAKY = {"lose": True}


class SwitchTarget(LosingTarget):
    def writes(self) -> bool:
        return not FLAKY["lose"]

    def committed(self) -> dict[str, int]:
        return super().committed() if FLAKY["lose"] else {}


def spec(cls: type) -> str:
    return f"{__name__}:{cls.__name__}"


def run(tmp_path: Path, *args: str) -> int:
    return main(["run", "--out", str(tmp_path / "out"), "--failures-dir", str(tmp_path / "saved"), *args])


CHEAP = ("--scenario", "rotate-interval-table", "--examples", "0")


def test_pass_is_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--target", spec(PassingTarget), *CHEAP) == Exit.OK == 0
    out = capsys.readouterr().out
    assert "PASS: 1 runs" in out and "report.html" in out
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"report.html", "junit.xml", "results.json", "failures"}


def test_run_preflights_its_s3_server_into_the_report(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", spec(PassingTarget), *CHEAP) == Exit.OK
    pre = json.loads((tmp_path / "out" / "results.json").read_text())["preflight"]
    assert {c["check"] for c in pre} >= {"multipart upload invisible until complete"}
    assert all(c["status"] == "pass" for c in pre), pre
    assert 'id="preflight"' in (tmp_path / "out" / "report.html").read_text()
    assert run(tmp_path, "--target", spec(PassingTarget), *CHEAP, "--no-preflight") == Exit.OK
    assert json.loads((tmp_path / "out" / "results.json").read_text())["preflight"] is None


def test_claimed_failure_is_1_with_failure_block_and_reproducer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--target", spec(LosingTarget), *CHEAP) == Exit.FAILED == 1
    out = capsys.readouterr().out
    assert "✗ no-loss [P-NOLOSS]" in out and "Reproduce with: sinkcheck replay" in out and "FAIL: 1 runs" in out
    saved = list((tmp_path / "out" / "failures").glob("*.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["format"] == "sinkcheck.scenario/2"
    assert [p.name for p in (tmp_path / "saved").iterdir()] == [saved[0].name]


def test_unfired_fault_is_2(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", spec(UnfiredFaultTarget), *CHEAP) == Exit.UNKNOWN == 2


def test_unexpected_target_error_is_3_and_still_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--target", spec(ExplodingTarget), *CHEAP) == Exit.INTERNAL == 3
    out = capsys.readouterr().out
    assert "RuntimeError: the fake sink broke unexpectedly" in out
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["status"] == "error" and doc["errors"][0]["scenario"] == "rotate-interval-table"
    assert "<error" in (tmp_path / "out" / "junit.xml").read_text()


@pytest.mark.parametrize("problem", ["malformed", "missing", "rejected"])
def test_bad_connector_config_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str) -> None:
    cfg = tmp_path / "connector.json"
    if problem == "malformed":
        cfg.write_text('{"config": {"flush.size": "3",, }}')
    elif problem == "rejected":
        cfg.write_text(json.dumps({"config": {"connector.class": "io.confluent.connect.s3.S3SinkConnector",
                                              "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                                              "flush.size": "abc", "aws.secret.access.key": SECRET}}))
    assert run(tmp_path, "--target", "model@10.6.3", "--connector-config", str(cfg), *CHEAP) == Exit.USAGE == 4
    err = capsys.readouterr().err
    assert "--connector-config" in err and SECRET not in err
    assert not (tmp_path / "out" / "report.html").exists()


@pytest.mark.parametrize("args", [("--target", "no_such_module_xyz:Target"), ("--budget", "ten minutes"),
                                  ("--property", "no-such-property"), ("--scenario", "no-such-scenario"),
                                  ("--profile", "bogus")])
def test_usage_errors_are_4(tmp_path: Path, args: tuple[str, ...]) -> None:
    base = ["--target", spec(PassingTarget)] if args[0] != "--target" else []
    assert run(tmp_path, *base, *args, "--examples", "0") == Exit.USAGE


def test_property_filter_selecting_nothing_is_5(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a module:Class target claims at-least-once: no scenario claims naming for it
    assert run(tmp_path, "--target", spec(PassingTarget), "--property", "naming", "--examples", "3",
               "--no-faults") == Exit.NOTHING_SELECTED == 5
    assert "nothing selected" in capsys.readouterr().err


def test_budget_selecting_nothing_is_5(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", spec(PassingTarget), "--budget", "0s", "--examples", "3") == Exit.NOTHING_SELECTED


def test_generated_failure_is_shrunk(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", spec(LosingTarget), "--no-named", "--examples", "5", "--no-faults",
               "--profile", "ci") == Exit.FAILED
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    failed = [e for e in doc["results"] if e["status"] == "fail"]
    # shrunk to one record, and as many more as its file needs to be committed (conformance.testable)
    assert len(failed) == 1 and failed[0]["scenario"].endswith("-shrunk")
    assert failed[0]["records"] <= int(failed[0]["connector"]["flush.size"])
    assert Path(failed[0]["scenario_file"]).exists() and doc["seed"] == 0


def test_saved_failures_replay_first_and_heal(tmp_path: Path) -> None:
    FLAKY["lose"] = True
    try:
        assert run(tmp_path, "--target", spec(SwitchTarget), *CHEAP) == Exit.FAILED
        assert len(list((tmp_path / "saved").iterdir())) == 1
        FLAKY["lose"] = False
        assert run(tmp_path, "--target", spec(SwitchTarget), *CHEAP) == Exit.OK
        doc = json.loads((tmp_path / "out" / "results.json").read_text())
        assert doc["results"][0]["origin"] == "saved-failure"
        assert list((tmp_path / "saved").iterdir()) == []
    finally:
        FLAKY["lose"] = True


def test_model_target_passes_named_scenario(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", "model@10.6.3", *CHEAP) == Exit.OK


def test_progress_counts_scenarios_against_the_total_and_estimates_time_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--target", spec(PassingTarget), "--no-named", "--examples", "3", "--no-faults") in (Exit.OK, Exit.UNKNOWN)
    err = capsys.readouterr().err
    assert "[sinkcheck] 0/3 scenarios done" in err
    assert "[sinkcheck] 2/3 scenarios done" in err and "s left" in err.split("2/3 scenarios done")[1].splitlines()[0]


class DescribedTarget(PassingTarget):
    def info(self) -> TargetInfo:
        return TargetInfo("described", connector_class="Acme S3 sink", connector_version="3.1",
                          kafka_version="Kafka 9.9", s3_server="S3 at http://127.0.0.1:9")


def test_the_reports_environment_is_what_the_target_says_of_itself(tmp_path: Path) -> None:
    assert run(tmp_path, "--target", spec(DescribedTarget), *CHEAP) == Exit.OK
    env = json.loads((tmp_path / "out" / "results.json").read_text())["environment"]
    assert (env["connector"], env["Kafka"], env["S3 server"]) == ("Acme S3 sink 3.1", "Kafka 9.9", "S3 at http://127.0.0.1:9")
    assert "Acme S3 sink 3.1" in (tmp_path / "out" / "report.html").read_text()


RUNS: dict[str, Any] = {"n": 0, "shrinking": False}


def _shrink_on_first_failure(observe: Any) -> Any:
    def wrapped(self: Any) -> Observation:
        RUNS["shrinking"] = True  # every run fails: from now on the shrinker may go below 5 records
        return observe(self)
    return wrapped


class TwoBugsTarget(LosingTarget):
    """Two failures by size: from 3 records on it loses them all (no-loss), below that it dies
    (liveness). Shrinking a loss must not slide to the other failure."""

    def committed(self) -> dict[str, int]:
        return super().committed() if len(self.produced) >= 3 else {}

    def observe(self) -> Observation:
        obs = super().observe()
        if len(self.produced) < 3:
            from adapters.observation import StatusSample

            obs.statuses.append(StatusSample(int(time.time() * 1000), "RUNNING", ("FAILED",), "boom"))
        return obs


def test_shrinking_keeps_the_property_and_the_anomaly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shrinking only: scenarios of 5 to 20 plain records stand in for the generator, so the
    first failure is a loss and every smaller scenario the shrinker tries below 3 records fails
    otherwise."""
    from hypothesis import strategies as st

    import conformance.strategies as strategies
    from conformance.named import BASE
    from conformance.scenario import Scenario

    def big_first(**kw: Any) -> Any:
        recs = st.integers(1, 20).map(lambda n: [{"topic": "t", "partition": 0, "timestamp": 1714557600000 + i,
                                                   "key": f"k{i}", "value": {"seq": i}, "headers": []}
                                                  for i in range(n)])
        return recs.filter(lambda r: len(r) >= 5 or RUNS["shrinking"]).map(
            lambda r: Scenario("generated", {**BASE, "flush.size": "2"}, {"t": 1}, r))

    RUNS["shrinking"] = False
    monkeypatch.setattr(strategies, "scenarios", big_first)
    monkeypatch.setattr(TwoBugsTarget, "observe", _shrink_on_first_failure(TwoBugsTarget.observe))
    assert run(tmp_path, "--target", spec(TwoBugsTarget), "--no-named", "--examples", "5", "--no-faults",
               "--profile", "ci") == Exit.FAILED
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    failed = [e for e in doc["results"] if e["status"] == "fail"]
    assert len(failed) == 1 and failed[0]["scenario"].endswith("-shrunk") and failed[0]["records"] == 3
    cells = {v["property"]: v["cell"] for v in failed[0]["verdicts"]}
    assert cells["no-loss"] == "fail" and cells["liveness"] == "pass" and "flaky" not in failed[0]
    assert any("failed otherwise" in n for n in doc["notes"]), doc["notes"]


class OnceTarget(LosingTarget):
    """Loses records on its first run in the process only: a failure no replay brings back."""

    def __init__(self, run_dir: Path, s3_endpoint: str | None = None) -> None:
        super().__init__(run_dir, s3_endpoint)
        RUNS["n"] += 1
        self.loses = RUNS["n"] == 1

    def committed(self) -> dict[str, int]:
        return super().committed() if self.loses else {}


def test_a_failure_that_does_not_come_back_is_flaky_not_a_reproducer(tmp_path: Path) -> None:
    RUNS["n"] = 0
    assert run(tmp_path, "--target", spec(OnceTarget), "--no-named", "--examples", "3", "--no-faults",
               "--profile", "ci") == Exit.FAILED
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    failed = [e for e in doc["results"] if e["status"] == "fail"]
    assert len(failed) == 1 and not failed[0]["scenario"].endswith("-shrunk")
    assert failed[0]["flaky"]["reproduced"] == 0 and failed[0]["flaky"]["replays"] == 2
    assert failed[0]["flaky"]["signature"] == ["no-loss", "lost"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "FLAKY" in html and "reproduced 0 of 2 replays" in html
