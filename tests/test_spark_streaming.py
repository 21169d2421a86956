"""Spark Structured Streaming as a target: its checkpoint and `_spark_metadata` log read from
small fixture files, its config named, and a real query (Kafka → S3A → moto) killed in the
middle of a batch, restarted on its checkpoint, with verdicts for both of its claims: exactly-once
through the metadata log, at-least-once for a raw listing."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from adapters.observation import BucketSample, Observation, OffsetSample, S3Object
from adapters.spark_streaming.logs import (LogFormatError, parse_log_file, parse_offsets, path_to_key,
                                           read_checkpoint, read_metadata_log)
from adapters.spark_streaming.target import SparkStreamingTarget, spark_config
from adapters.processes.managed import child_pids, listening_ports
from adapters.target import Fault, TargetError
from conformance.judging.checks.base import RunData
from conformance.judging.checks.run import run_checks
from conformance.judging.claims import claim_for, claims_for
from conformance.inputs.scenario import FaultStep, Scenario

FIXTURES = Path(__file__).parent / "fixtures" / "spark_streaming"


# --- the logs, from fixture files --------------------------------------------------------------

def test_checkpoint_committed_batch_and_batch_in_flight():
    ck = read_checkpoint(FIXTURES / "checkpoint")
    # offsets/0..2 written, commits/0..1: batch 2 was running when the process died
    assert (ck.planned, ck.committed, ck.in_flight) == (2, 1, 2)
    assert ck.committed_offsets == {"t-0": 20, "t-1": 20}
    assert ck.planned_offsets == {"t-0": 30, "t-1": 30}
    assert "batch 2 in flight" in ck.describe()
    # hidden checksum files (.0.crc) are no batches
    assert (FIXTURES / "checkpoint" / "offsets" / ".0.crc").exists()


def test_empty_checkpoint_has_nothing_committed(tmp_path):
    ck = read_checkpoint(tmp_path / "nowhere")
    assert (ck.planned, ck.committed, ck.in_flight, ck.committed_offsets) == (None, None, None, {})
    assert ck.describe() == "no batch planned yet"


def test_offsets_file_with_two_topics_and_a_source_without_offsets():
    text = 'v1\n{"batchWatermarkMs":0}\n{"a":{"1":7,"0":5},"b":{"0":3}}\n-\n'
    assert parse_offsets(text) == {"a-0": 5, "a-1": 7, "b-0": 3}
    with pytest.raises(LogFormatError, match="version"):
        parse_offsets('{"a":{"0":1}}')


def _metadata_objects() -> dict[str, bytes]:
    d = FIXTURES / "_spark_metadata"
    return {f"spark-out/_spark_metadata/{p.name}": p.read_bytes() for p in d.iterdir()}


def test_metadata_log_reads_the_latest_compact_file_and_the_batches_after_it():
    objs = _metadata_objects()
    log = read_metadata_log(objs, "sinkcheck", "spark-out")
    # 2.compact holds batches 0-2 (the deltas 0 and 1 are not read again); 3 adds two files,
    # 4 deletes one of batch 0; the temp file of a rename in progress is ignored
    assert log.compact == 2 and log.batches == (2, 3, 4) and log.latest == 4 and not log.problems
    assert log.keys == ("spark-out/part-00000-b0-c000.txt", "spark-out/part-00000-b1-c000.txt",
                        "spark-out/part-00000-b2-c000.txt", "spark-out/part-00000-b3-c000.txt",
                        "spark-out/part-00001-b1-c000.txt", "spark-out/part-00001-b2-c000.txt",
                        "spark-out/part-00001-b3-c000.txt")
    assert "spark-out/_spark_metadata/.5.0f3c.tmp" in objs


def test_metadata_log_stops_at_a_missing_batch_and_says_so():
    objs = _metadata_objects()
    del objs["spark-out/_spark_metadata/3"]
    log = read_metadata_log(objs, "sinkcheck", "spark-out")
    assert log.batches == (2,) and "batch 3" in log.problems[0]
    assert len(log.keys) == 6  # what 2.compact lists


def test_metadata_log_without_compaction_and_without_a_log():
    objs = {k: v for k, v in _metadata_objects().items() if not k.endswith(".compact")}
    objs = {k: v for k, v in objs.items() if k.rsplit("/", 1)[1] in ("0", "1")}
    log = read_metadata_log(objs, "sinkcheck", "spark-out")
    assert log.batches == (0, 1) and log.compact is None and len(log.keys) == 4
    assert read_metadata_log({"spark-out/part-0.txt": b"{}"}, "sinkcheck", "spark-out").keys == ()


def test_log_entries_and_paths():
    assert [e.action for e in parse_log_file('v1\n{"path":"s3a://b/x/p.txt","size":3,"action":"add"}\n')] == ["add"]
    assert path_to_key("s3a://b/x/part%2000.txt", "b") == "x/part 00.txt"
    assert path_to_key("s3a://other/x/p.txt", "b") is None
    assert path_to_key("file:/tmp/x", "b") is None


def test_config_keys_are_checked_by_name():
    name, s = spark_config({"name": "q", "config": {"output.prefix": "/out/", "trigger.interval.ms": "0"}})
    assert name == "q" and s["output.prefix"] == "out" and s["s3.bucket.name"] == "sinkcheck"
    with pytest.raises(TargetError, match="'flush.size'"):
        spark_config({"flush.size": "3"})
    with pytest.raises(TargetError, match="metadata.compact.interval"):
        spark_config({"metadata.compact.interval": "0"})


def test_unsupported_fault_names_the_supported_kinds(tmp_path):
    t = SparkStreamingTarget(tmp_path)
    with pytest.raises(TargetError, match="supported: crash"):
        t.apply_fault(Fault("pause"))


# --- the checkers through each view, on a hand-built observation ---------------------------------

def _obj(key: str, seqs: list[int]) -> S3Object:
    body = "".join(json.dumps({"seq": s}) + "\n" for s in seqs).encode()
    return S3Object(key, len(body), f"e-{key}", body)


def test_the_two_views_of_one_observation():
    """A killed batch left an orphan with records 2-3; the re-run batch wrote them again and
    the log lists only the re-run: the log view passes no-duplicates, the listing does not."""
    from conformance.inputs import wire

    recs = [{"topic": "t", "partition": 0, "timestamp": None, "key": None, "value": {"seq": i}, "headers": []}
            for i in range(4)]
    sc = Scenario("views", {}, {"t": 1}, recs, [FaultStep(2, "crash")])
    objs = (_obj("out/part-a.txt", [0, 1]), _obj("out/part-orphan.txt", [2, 3]), _obj("out/part-b.txt", [2, 3]),
            S3Object("out/_spark_metadata/0", 10, "m0", b"v1\n"), S3Object("out/_spark_metadata/", 0, "d", b""))
    sample = BucketSample(2, objs, committed_keys=("out/part-a.txt", "out/part-b.txt"))
    obs = Observation(bucket_samples=[sample], offset_samples=[OffsetSample(1, {"t-0": 4})], quiet=True)
    records = wire.sink_records({}, recs, range(len(recs)), wire.JSON_TEXT)
    assert wire.records_to_produce({}, recs, wire.JSON_TEXT)[0].value == b'{"seq":0}'
    log_claim, listing_claim = claims_for("spark-streaming", {}, sc.faults)
    assert (log_claim.view, listing_claim.view) == ("log", "listing")
    assert claim_for("spark-streaming", {}) == log_claim
    by_view = {}
    for c in (log_claim, listing_claim):
        data = RunData(sc, "spark-streaming", obs, c, None, None, records)
        assert data.object_format == "jsonl"
        by_view[c.view] = {v.property: v for v in run_checks(data)}
        assert by_view[c.view]["no-loss"].status == "pass", by_view[c.view]["no-loss"].to_json()
        assert by_view[c.view]["atomic-visibility"].status == "pass"
        assert by_view[c.view]["commit-safety"].status == "pass"
    assert by_view["log"]["no-duplicates"].status == "pass" and by_view["log"]["no-duplicates"].claimed
    dup = by_view["listing"]["no-duplicates"]
    assert dup.status == "fail" and not dup.claimed
    assert "out/part-orphan.txt" in dup.witnesses[0].keys
    # a record only an orphan holds is lost to a reader of the log
    lonely = BucketSample(3, objs, committed_keys=("out/part-a.txt",))
    obs2 = Observation(bucket_samples=[lonely], offset_samples=[OffsetSample(1, {"t-0": 4})], quiet=True)
    lost = {v.property: v for v in run_checks(RunData(sc, "spark-streaming", obs2, log_claim, None, None, records))}
    assert lost["no-loss"].status == "fail" and lost["commit-safety"].status == "fail"


def test_both_claims_reach_the_result_and_its_report(tmp_path):
    """A RunResult keeps the primary claim's verdicts and the listing's; a failed claimed
    property of either fails the run; results.json carries both sets, objects decoded."""
    from conformance.playing.runner import RunResult
    from conformance.judging.verdicts import FAIL, PASS, Verdict
    from reports import ReportContext
    from reports.context import entry

    recs = [{"topic": "t", "partition": 0, "timestamp": None, "key": None, "value": {"seq": i}, "headers": []}
            for i in range(2)]
    sc = Scenario("views", {}, {"t": 1}, recs)
    obj = _obj("out/part-a.txt", [0, 1])
    obs = Observation(bucket_samples=[BucketSample(2, (obj,), committed_keys=(obj.key,))],
                      offset_samples=[OffsetSample(1, {"t-0": 2})], quiet=True)
    from adapters.observation import ProducedRecord

    obs.produced = [ProducedRecord("t", 0, i, None, None, json.dumps({"seq": i}).encode()) for i in range(2)]
    log_claim, listing_claim = claims_for("spark-streaming", {})
    ok = [Verdict("no-loss", PASS, True)]
    r = RunResult(sc, "spark-streaming", log_claim, obs, None, ok, 1.0, tmp_path,
                  [(listing_claim, [Verdict("no-duplicates", FAIL, False)])])
    assert r.status == "pass" and r.all_verdicts()[1].property == "no-duplicates"
    e = entry(r, ReportContext())
    assert e["claim"]["view"] == "log"
    (other,) = e["other_claims"]
    assert other["claim"]["view"] == "listing" and other["verdicts"][0]["cell"] == "not-claimed"
    assert e["objects"][0]["offsets"] == ["t-0@0", "t-0@1"]
    bad = RunResult(sc, "spark-streaming", log_claim, obs, None, ok, 1.0, tmp_path,
                    [(listing_claim, [Verdict("no-loss", FAIL, True)])])
    assert bad.status == "fail" and [v.property for v in bad.failed()] == ["no-loss"]


# --- a real query, killed mid-batch --------------------------------------------------------------

CONFIG = {"output.prefix": "spark-out", "trigger.interval.ms": "500", "max.offsets.per.trigger": "20",
          "metadata.compact.interval": "3"}


def _records(n: int) -> list[dict]:
    return [{"topic": "t", "partition": i % 2, "timestamp": 1714557600000 + i, "key": None,
             "value": {"seq": i, "pad": "x" * 20}, "headers": []} for i in range(n)]


def kill_mid_batch_scenario() -> Scenario:
    """40 records in two batches, quiet; then the PutObject of the next batch's first file
    hangs in the fault front; once it is hung the query is SIGKILLed (that batch in flight) and
    restarted on its checkpoint; the hung write is let go (if its body was whole when the
    client died, it lands after the kill: a file no log entry names); 40 more."""
    return Scenario(
        "spark-kill-mid-batch", dict(CONFIG), {"t": 2}, _records(120),
        [FaultStep(40, "quiet", {"seconds": 150}),
         FaultStep(40, "s3", {"operation": "PutObject", "action": "hang", "key": "spark-out/part-*"}),
         FaultStep(80, "wait-fired", {"rule": 0, "seconds": 90}),
         FaultStep(80, "wait", {"seconds": 2.0}),  # the hung request's body reaches the front
         FaultStep(80, "crash"),
         FaultStep(80, "release")],
        notes="Spark file sink: a batch killed while writing its files, re-run from the checkpoint")


def _our_listening_ports(older: set[int]) -> set[int]:
    """Ports in LISTEN state held by this process's descendants, except the `older` ones (the
    machine is shared: other people's ports are none of this test's business, and neither is the
    JVM pyspark keeps for the test process once an earlier test started Spark in it)."""
    import os

    inodes = set()
    for pid in child_pids() - older:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue
    ports = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(f) as fh:
            next(fh)
            for line in fh:
                parts = line.split()
                if parts[3] == "0A" and parts[9] in inodes:
                    ports.add(int(parts[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.kafka
@pytest.mark.spark
def test_kill_mid_batch_and_restart_verdicts_for_both_claims(tmp_path):
    """The runner starts moto and the fault front (the scenario has an S3 rule), the target its
    broker and the query; verdicts under both views; nothing left running afterwards."""
    import threading

    from conformance.playing.runner import run_scenario

    started = time.monotonic()
    before = child_pids()
    seen_ports: set[int] = set()
    done = threading.Event()

    def watch_ports() -> None:
        while not done.wait(1.0):
            seen_ports.update(_our_listening_ports(before))

    watcher = threading.Thread(target=watch_ports, daemon=True)
    watcher.start()
    try:
        r = run_scenario(kill_mid_batch_scenario(), "spark-streaming", tmp_path, quiet_timeout_s=150)
    finally:
        done.set()
        watcher.join(5)
    wall = time.monotonic() - started
    obs = r.observation

    # faults: the hang fired on a batch file; the crash fired while it hung, a batch in flight
    s3 = next(f for f in obs.faults if f.kind == "s3")
    crash = next(f for f in obs.faults if f.kind == "crash")
    assert s3.fired and "PutObject" in s3.detail and "spark-out/part-" in s3.detail, s3
    # the checkpoint at the kill: the batch after the last committed one planned, not committed
    m = re.search(r"latest committed batch (\d+) .*; batch (\d+) in flight \(offsets/\d+ written, commits/\d+ absent\)",
                  crash.detail)
    assert crash.fired and m and int(m[2]) == int(m[1]) + 1, crash.detail
    assert "restarted as run #2" in crash.detail, crash.detail
    # killed while the write hung (until_ms is None when the killed client never finished sending it)
    assert s3.at_ms <= crash.at_ms and (s3.until_ms is None or crash.at_ms <= s3.until_ms), (s3, crash)

    # both claims, from one run
    assert (r.claim.name, r.claim.view) == ("exactly-once", "log")
    (listing_claim, listing_verdicts), = r.other_claims
    assert (listing_claim.name, listing_claim.view) == ("at-least-once", "listing")
    log_v = {v.property: v for v in r.verdicts}
    raw_v = {v.property: v for v in listing_verdicts}
    print(json.dumps({view: {p: f"{v.status}{'' if v.claimed else ' (measured)'}" for p, v in vs.items()}
                      for view, vs in (("log", log_v), ("listing", raw_v))}, indent=1))
    for prop in ("no-loss", "no-duplicates", "commit-safety", "atomic-visibility", "liveness", "commit-progress"):
        assert log_v[prop].status == "pass" and log_v[prop].claimed, log_v[prop].to_json()
    for prop in ("no-loss", "commit-safety", "atomic-visibility", "liveness"):
        assert raw_v[prop].status == "pass" and raw_v[prop].claimed, raw_v[prop].to_json()
    dup = raw_v["no-duplicates"]
    assert not dup.claimed and dup.status in ("pass", "fail"), dup.to_json()
    final = obs.final_bucket
    data_keys = {o.key for o in final.objects if "/part-" in o.key and "_spark_metadata" not in o.key}
    orphans = data_keys - set(final.committed_keys or ())
    if dup.status == "fail":  # files of the killed attempt repeat records of the re-run batch
        assert set(dup.witnesses[0].keys) & orphans, (orphans, dup.to_json())
    assert r.status == "pass", [v.to_json() for v in r.failed()]
    assert obs.final_offsets == {"t-0": 60, "t-1": 60}
    assert any(o.key.endswith(".compact") for o in final.objects)  # compaction ran (interval 3)
    print(f"orphans: {sorted(orphans)}; listing no-duplicates: {dup.status} ({dup.message}); wall {wall:.0f}s")

    # nothing left running: no process, no port that one of ours held
    assert seen_ports, "the port watcher saw none of the broker's, moto's or Spark's ports"
    assert not (child_pids() - before), child_pids() - before
    assert not (seen_ports & listening_ports()), seen_ports & listening_ports()
