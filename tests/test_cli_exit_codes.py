"""Every exit code of `sinkcheck run` pinned by a test, on cheap paths: fake in-test targets
(loaded by module:Class) that keep records in memory and hand back an Observation."""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from adapters.observation import BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord
from adapters.observation import RecordToProduce
from adapters.target import Fault, Target, TargetInfo
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
    # shrunk to one record, and as many more as its file needs to be committed (conformance.generators.testable)
    assert failed[0]["scenario"].endswith("-shrunk")
    assert failed[0]["records"] <= int(failed[0]["connector"]["flush.size"])
    # the search went on past it: the later scenarios that fail the same way are shown, not shrunk again
    assert len(doc["results"]) == 5  # as many scenarios as asked: a batch drawn again runs only the rest of its share
    shown = [e for e in failed if not e["scenario"].endswith("-shrunk")]
    assert shown and all(f"fails as {failed[0]['scenario']} (no-loss / lost)" in e["notes"] for e in shown), shown
    assert Path(failed[0]["scenario_file"]).exists() and doc["seed"] == 0


def test_a_generated_failure_a_known_bug_explains_is_not_shrunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure the catalogue explains (every claimed property it failed is one its known bug
    breaks, on a release the bug affects: acceptance) is reported as found: the catalogue holds
    its reproducer, and a shrink on a real connector is a dozen or more runs one after another.
    The catalogue's entries are for real sinks: this stands one in for the user's target."""
    import conformance.playing.generated as generated

    entry = {"id": "own-loses-records", "cite": "#1", "version": "1.0", "witness": "no-loss: lost"}
    monkeypatch.setattr(generated, "explained_by_known_bug", lambda r: entry if r.failed() else None)
    assert run(tmp_path, "--target", spec(LosingTarget), "--no-named", "--examples", "5", "--no-faults",
               "--profile", "ci") == Exit.FAILED
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    failed = [e for e in doc["results"] if e["status"] == "fail"]
    assert failed and len(doc["results"]) == 5
    assert not any(e["scenario"].endswith("-shrunk") for e in doc["results"])
    assert "fails as known bug own-loses-records (#1) of 1.0 does (no-loss: lost): not shrunk" in failed[0]["notes"]
    assert all(f"{failed[0]['scenario']} (no-loss / lost)" in e["notes"] and "not shrunk again" in e["notes"]
               for e in failed[1:]), failed


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
    # a fixed seed: the fake writes every value into one object, which some drawn formats cannot decode
    assert run(tmp_path, "--target", spec(PassingTarget), "--no-named", "--examples", "3", "--no-faults",
               "--profile", "ci") in (Exit.OK, Exit.UNKNOWN)
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

    import conformance.generators.strategies as strategies
    from conformance.catalog.base import BASE
    from conformance.inputs.scenario import Scenario

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
    assert failed[0]["scenario"].endswith("-shrunk") and failed[0]["records"] == 3
    cells = {v["property"]: v["cell"] for v in failed[0]["verdicts"]}
    assert cells["no-loss"] == "fail" and cells["liveness"] == "pass" and "flaky" not in failed[0]
    # the search went on and found the other bug, shrunk on its own below 3 records
    died = [e for e in failed[1:] if e["scenario"].endswith("-shrunk")
            and {v["property"]: v["cell"] for v in e["verdicts"]}["liveness"] == "fail"]
    assert died and died[0]["records"] < 3
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


# --- a user's input mistakes: exit 4 and one message naming the input, never a traceback ------

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
CONNECTOR = json.loads((EXAMPLES / "connector.json").read_text())
RECORDS = [json.loads(line) for line in (EXAMPLES / "records.jsonl").read_text().splitlines() if line.strip()]


def config_file(tmp_path: Path, **changes: str) -> str:
    p = tmp_path / "connector.json"
    p.write_text(json.dumps({"name": "s3", "config": {**CONNECTOR["config"], **changes}}))
    return str(p)


def records_file(tmp_path: Path, records: list[dict[str, Any]] | None = None) -> str:
    p = tmp_path / "records.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in (RECORDS if records is None else records)))
    return str(p)


def model(tmp_path: Path, *args: str, config: str | None = None, records: str | None = None) -> int:
    return main(["model", "--config", config or str(EXAMPLES / "connector.json"),
                 "--records", records or str(EXAMPLES / "records.jsonl"), *args])


def usage_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def test_model_out_under_a_file_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    assert model(tmp_path, "--out", str(tmp_path / "f" / "expected.json")) == Exit.USAGE
    assert f"lies under {tmp_path / 'f'}, which is a file" in usage_error(capsys)
    assert model(tmp_path, "--out", str(tmp_path)) == Exit.USAGE
    assert "is a directory" in usage_error(capsys)


@pytest.mark.parametrize("under", [False, True])
def test_run_out_naming_a_file_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], under: bool) -> None:
    (tmp_path / "f").write_text("x")
    out = tmp_path / "f" / "sub" if under else tmp_path / "f"
    assert main(["run", "--target", spec(PassingTarget), *CHEAP, "--out", str(out)]) == Exit.USAGE
    assert ("which is a file" if under else "is a file; give a directory") in usage_error(capsys)


@pytest.mark.parametrize("command", ["replay", "gate", "audit", "preflight"])
def test_every_out_under_a_file_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    (tmp_path / "f").write_text("x")
    out = str(tmp_path / "f" / "out")
    args = {"replay": ["replay", str(saved_scenario(tmp_path))],
            "gate": ["gate", "--baseline", spec(PassingTarget), "--candidate", spec(PassingTarget), *CHEAP],
            "audit": ["audit", "--records", str(EXAMPLES / "records.jsonl"), "--bucket", "s3://bucket/p",
                      "--config", str(EXAMPLES / "connector.json"), "--s3-endpoint", "http://127.0.0.1:1"],
            "preflight": ["preflight", "--s3-endpoint", "http://127.0.0.1:1"]}[command]
    assert main([*args, "--out", out]) == Exit.USAGE
    assert f"--out {out}: lies under {tmp_path / 'f'}, which is a file" in usage_error(capsys)


def test_records_with_binary_garbage_are_4_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bin.jsonl"
    bad.write_bytes((EXAMPLES / "records.jsonl").read_bytes() + b"\xff\xfe\x00garbage\n")
    assert model(tmp_path, "--out", "-", records=str(bad)) == Exit.USAGE
    msg = usage_error(capsys)
    assert f"{bad}: line 10: " in msg and "not UTF-8 text" in msg


def test_a_put_schedule_carrying_more_records_than_given_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    puts = tmp_path / "puts.jsonl"
    puts.write_text("".join(json.dumps({"at": 1714557605000 + i, "count": 5}) + "\n" for i in range(5)))
    assert model(tmp_path, "--puts", str(puts), "--out", "-") == Exit.USAGE
    assert f"--puts {puts}: the put schedule carries 25 records but only 9 were given" in usage_error(capsys)


def saved_scenario(tmp_path: Path, **changes: Any) -> Path:
    from conformance.playing.session import named_scenarios

    doc = named_scenarios(["rotate-interval-table"])[0].to_json()
    for k, v in changes.items():
        if k == "config":
            doc["connector"]["config"].update(v)
        else:
            doc[k] = v
    p = tmp_path / "scenario.json"
    p.write_text(json.dumps(doc))
    return p


@pytest.mark.parametrize("case,expected", [
    ("fault", "faults[0]: unknown fault kind 'explode'"),
    ("unsupported", "fault 'kill-worker' is not supported by the Python sink"),
    ("config", "connector config is rejected for pysink"),
    ("binary", "is not UTF-8 text"),
    ("both-topics", "topics and topics.regex are mutually exclusive options, but both are set."),
    ("topic", "Topic name is invalid: 'a/../b' contains one or more characters other than ASCII alphanumerics"),
])
def test_replay_of_a_scenario_it_cannot_play_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                                  expected: str) -> None:
    if case in ("fault", "unsupported"):
        kind = "explode" if case == "fault" else "kill-worker"
        p = saved_scenario(tmp_path, faults=[{"after": 1, "kind": kind, "params": {}}])
    elif case == "config":
        p = saved_scenario(tmp_path, config={"flush.size": "abc"})
    elif case == "both-topics":
        p = saved_scenario(tmp_path, config={"topics": "events", "topics.regex": "ev.*"})
    elif case == "topic":
        p = saved_scenario(tmp_path, topics={"a/../b": 1})
    else:
        p = tmp_path / "scenario.json"
        p.write_bytes(b"\x00\xff\xfe\x89PNG garbage\x80")
    assert main(["replay", str(p), "--out", str(tmp_path / "replay")]) == Exit.USAGE
    assert expected in usage_error(capsys)


def test_audit_of_an_unreachable_broker_is_4_within_seconds(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import sinkcheck.audit_cmd as audit_cmd

    monkeypatch.setattr(audit_cmd, "BROKER_WAIT_S", 1.0)
    monkeypatch.setattr(audit_cmd.check_broker, "__defaults__", (1.0,))
    started = time.monotonic()
    assert main(["audit", "--records", "kafka://127.0.0.1:1/t", "--bucket", "s3://bucket/p",
                 "--config", str(EXAMPLES / "connector.json"), "--out", str(tmp_path / "audit")]) == Exit.USAGE
    assert time.monotonic() - started < 15
    assert "no Kafka broker answered at 127.0.0.1:1 within 1 s" in usage_error(capsys)


def test_audit_records_with_binary_garbage_are_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bin.jsonl"
    bad.write_bytes(b'{"topic": "orders"}\n\x80\n')
    assert main(["audit", "--records", str(bad), "--bucket", "s3://bucket/p",
                 "--config", str(EXAMPLES / "connector.json"), "--out", str(tmp_path / "audit")]) == Exit.USAGE
    assert f"{bad}: line 2: not UTF-8 text" in usage_error(capsys)


# --- what Kafka or Kafka Connect refuses, refused the same way in every command ---------------

@pytest.mark.parametrize("changes,expected", [
    ({"topics.regex": "ord.*"}, "topics and topics.regex are mutually exclusive options, but both are set."),
    ({"topics": "orders/../x"}, "Topic name is invalid: 'orders/../x' contains one or more characters"),
    ({"topics": "orders,.."}, "Topic name is invalid: '..' is not allowed"),
    ({"topics": "ord ers"}, "Topic name is invalid: 'ord ers'"),
    ({"topics": "ordérs🙂"}, "other than ASCII alphanumerics, '.', '_' and '-'"),
    ({"topics": "o" * 250}, "longer than the max allowed length 249"),
    ({"value.converter": "io.confluent.connect.json.JsonSchemaConverter",
      "value.converter.schema.registry.url": "http://127.0.0.1:8081"},
     "the model reads the Schema Registry wire format of io.confluent.connect.avro.AvroConverter and "
     "io.confluent.connect.protobuf.ProtobufConverter only, not JsonSchemaConverter's"),
    ({"value.converter": "io.confluent.connect.avro.AvroConverter"},
     "it needs value.converter.schema.registry.url"),
])
@pytest.mark.parametrize("command", ["model", "run"])
def test_configs_kafka_connect_refuses_are_4_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        changes: dict[str, str], expected: str, command: str) -> None:
    cfg = config_file(tmp_path, **changes)
    if command == "model":
        assert model(tmp_path, "--out", "-", config=cfg) == Exit.USAGE
    else:
        assert run(tmp_path, "--target", "model@12.1.9", "--connector-config", cfg, *CHEAP) == Exit.USAGE
    assert expected in usage_error(capsys)


@pytest.mark.parametrize("change,expected", [
    ("topic", "line 1: Topic name is invalid: 'or ders'"),
    ("duplicate", "line 4: offset 2 repeats offset 2 in orders-0"),
    ("backwards", "line 5: offset 3 goes back from offset 4 in orders-0"),
])
def test_records_kafka_could_not_have_given_are_4(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str,
                                                  expected: str) -> None:
    recs = [dict(r) for r in RECORDS]
    if change == "topic":
        recs = [dict(r, topic="or ders") for r in recs]
    elif change == "duplicate":
        recs.insert(3, dict(recs[2]))
    else:
        recs[3], recs[4] = recs[4], recs[3]
    assert model(tmp_path, "--out", "-", records=records_file(tmp_path, recs)) == Exit.USAGE
    assert expected in usage_error(capsys)


def test_a_scenario_record_whose_offset_goes_back_is_refused() -> None:
    from conformance.inputs.scenario import Scenario, ScenarioError

    sc = saved_scenario_doc()
    sc["records"][0]["offset"], sc["records"][1]["offset"] = 5, 5
    with pytest.raises(ScenarioError, match=r"records\[1\]: offset 5 does not go forward from 5"):
        Scenario.from_json(sc)


def saved_scenario_doc() -> dict[str, Any]:
    from conformance.playing.session import named_scenarios

    return named_scenarios(["rotate-interval-table"])[0].to_json()


@pytest.mark.parametrize("command", ["model", "run-target", "run", "gate"])
def test_a_connector_version_the_model_has_no_profile_for_is_4(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               command: str) -> None:
    if command == "model":
        assert model(tmp_path, "--connector-version", "99.0.0", "--out", "-") == Exit.USAGE
    elif command == "run-target":
        assert run(tmp_path, "--target", "model@99.0.0", *CHEAP) == Exit.USAGE
    elif command == "run":
        assert run(tmp_path, "--target", spec(PassingTarget), "--connector-version", "99.0.0", *CHEAP) == Exit.USAGE
    else:
        assert main(["gate", "--baseline", spec(PassingTarget), "--candidate", spec(PassingTarget),
                     "--candidate-version", "99.0.0", "--out", str(tmp_path / "gate")]) == Exit.USAGE
    err = usage_error(capsys)
    assert "no profile for connector 99.0.0" in err and "12.1.x" in err and "10.6.x" in err


def test_an_unknown_property_is_warned_about_once_as_connect_logs_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    cfg = config_file(tmp_path, **{"flush.sise": "3", "value.converter.schemas.enable": "false",
                                   "transforms.x.type": "y", "consumer.override.max.poll.records": "5"})
    assert model(tmp_path, "--out", str(tmp_path / "expected.json"), config=cfg) == Exit.OK
    err = capsys.readouterr().err
    assert err.count("The configuration 'flush.sise' was supplied but isn't a known config.") == 1
    assert err.count("was supplied but isn't a known config") == 1  # Connect's own keys are known
    from sinkcheck import options

    options._WARNED.clear()
    assert run(tmp_path, "--target", "model@12.1.9", "--target", "model@10.6.3", "--connector-config", cfg,
               *CHEAP) == Exit.OK
    assert capsys.readouterr().err.count("'flush.sise' was supplied") == 1


def test_a_config_with_a_utf8_bom_is_read_as_connect_reads_it(tmp_path: Path) -> None:
    cfg = tmp_path / "bom.json"
    cfg.write_text(json.dumps(CONNECTOR), encoding="utf-8-sig")
    assert model(tmp_path, "--out", str(tmp_path / "a.json"), config=str(cfg)) == Exit.OK
    assert model(tmp_path, "--out", str(tmp_path / "b.json")) == Exit.OK
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()


def test_an_unclosed_quote_in_path_format_is_literal_text_as_in_joda(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Joda's DateTimeFormat.parseToken never checks that a quote closes (R6.3): the rest of the
    pattern is text. The model does the same and warns; an illegal letter fails the tasks."""
    timed = {"partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
             "partition.duration.ms": "3600000"}
    assert model(tmp_path, "--out", str(tmp_path / "e.json"),
                 config=config_file(tmp_path, **timed, **{"path.format": "'year=YYYY"})) == Exit.OK
    assert "a quote that is never closed" in usage_error(capsys)
    keys = {o["key"] for o in json.loads((tmp_path / "e.json").read_text())["objects"]}
    assert keys and all(k.startswith("topics/orders/year=YYYY/") for k in keys), keys
    assert run(tmp_path, "--target", "pysink", "--target", "model@12.1.9", "--connector-config",
               config_file(tmp_path, **timed, **{"path.format": "'year=YYYY"}), *CHEAP) == Exit.OK
    assert model(tmp_path, "--out", str(tmp_path / "q.json"),
                 config=config_file(tmp_path, **timed, **{"path.format": "'q'=QQ"})) == Exit.OK
    fail = json.loads((tmp_path / "q.json").read_text())["task_failure"]
    assert fail and "Illegal pattern component: QQ" in fail["message"], fail
