"""`sinkcheck audit` on moto: a bucket written exactly as the model says passes; a tampered copy
(an object deleted, a record range copied under another start offset, one object's contents
altered, objects the model never names) fails with witnesses per topic-partition in
results.json; bad input exits 4 naming what is wrong; the same audit runs on a standalone
Spark master with one worker that the test starts and stops."""
from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from adapters.processes.managed import (LOOPBACK, ManagedProcess, child_pids, free_port, listening_ports,
    port_open, wait_until)
from adapters.processes.moto import MotoS3Server
from reference_impl.config import parse_config
from reference_impl.engine.contents import encode_view
from reference_impl.engine.model import expect, parse_records_lines
from sinkcheck.cli import main

pytestmark = pytest.mark.spark

BUCKET = "audit-tampered"
CLEAN = "audit-clean"  # the same objects, untouched
TOPIC = "events"
PARTITIONS = 4
PER_PARTITION = 20  # flush.size 3: six objects each, offsets 18 and 19 stay open
CONNECTOR = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
    "flush.size": "3", "s3.bucket.name": BUCKET, "topics.dir": "topics",
}


def _records() -> list[dict[str, Any]]:
    return [{"topic": TOPIC, "partition": p, "offset": o, "timestamp": 1_700_000_000_000 + o, "key": o,
             "value": {"user": f"u{p}-{o}", "n": o, "tags": ["a", "b"] if o % 2 else []}, "headers": []}
            for p in range(PARTITIONS) for o in range(PER_PARTITION)]


HIDDEN_COPY = f"topics/_tmp/{TOPIC}/partition=2/{TOPIC}+2+0000000003.json"  # 3..5 of events-2 again


def _key(partition: int, start: int) -> str:
    return f"topics/{TOPIC}/partition={partition}/{TOPIC}+{partition}+{start:010d}.json"


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory):
    """moto with two buckets: CLEAN exactly as the model says, BUCKET changed."""
    d = tmp_path_factory.mktemp("audit")
    records = _records()
    (d / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (d / "connector.json").write_text(json.dumps({"name": "s3-sink", "config": CONNECTOR}))
    cfg = parse_config({k: v for k, v in CONNECTOR.items() if k != "connector.class"})
    sink_records = parse_records_lines(json.dumps(r) for r in records)
    exp = expect(cfg, sink_records)
    by_off = {(r.topic, r.partition, r.offset): r for r in sink_records}
    moto = MotoS3Server(d, bucket=BUCKET).start()
    try:
        s3 = moto.client()
        moto.create_bucket(CLEAN)
        for bucket in (CLEAN, BUCKET):
            for o in exp.objects:
                body = encode_view(cfg, [by_off[(o.topic, o.partition, x)] for x in o.offsets], "value")
                s3.put_object(Bucket=bucket, Key=o.key, Body=body)

        def enc(partition: int, offsets: range) -> bytes:
            return encode_view(cfg, [by_off[(TOPIC, partition, x)] for x in offsets], "value")

        s3.delete_object(Bucket=BUCKET, Key=_key(0, 3))  # loss of 3..5
        s3.put_object(Bucket=BUCKET, Key=_key(1, 10), Body=enc(1, range(10, 13)))  # 10..12 twice
        altered = enc(2, range(0, 3)).replace(b'"u2-1"', b'"someone-else"')
        s3.put_object(Bucket=BUCKET, Key=_key(2, 0), Body=altered)  # offset 1 altered
        s3.put_object(Bucket=BUCKET, Key=_key(3, 100), Body=b'{"user":"nobody","n":100,"tags":[]}\n')
        s3.put_object(Bucket=BUCKET, Key="topics/events/partition=3/notes.txt", Body=b"left by a person\n")
        # objects Spark's file sources skip, read on the driver: zero bytes, a '_' directory
        s3.put_object(Bucket=BUCKET, Key=_key(3, 50), Body=b"")
        s3.put_object(Bucket=BUCKET, Key=HIDDEN_COPY, Body=enc(2, range(3, 6)))
        yield {"dir": d, "moto": moto, "records": str(d / "records.jsonl"), "config": str(d / "connector.json"),
               "expected": exp}
    finally:
        moto.stop()


@pytest.fixture(scope="module")
def spark(case):
    """One local session with S3A and the Kafka source for the module (the audit command reuses it)."""
    from adapters.processes.jars import jar_files
    from conformance.auditing.auditor import S3Access
    from reference_impl.engine.spark import spark_session

    access = S3Access.resolve({}, case["moto"].endpoint, env={"AWS_ACCESS_KEY_ID": MotoS3Server.ACCESS_KEY,
                                                               "AWS_SECRET_ACCESS_KEY": MotoS3Server.SECRET_KEY})
    # with the Kafka source too: jars only reach the driver when its JVM starts
    session = spark_session("local[2]", "sinkcheck-audit-tests", jars=jar_files("spark-s3a") + jar_files("spark-kafka"),
                            hadoop_conf=access.hadoop_conf())
    yield session
    session.stop()


@pytest.fixture
def creds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", MotoS3Server.ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", MotoS3Server.SECRET_KEY)


def _audit(case: dict[str, Any], bucket: str, out: Path, *extra: str, config: str | None = None,
           records: str | None = None) -> tuple[int, dict]:
    code = main(["audit", "--records", records or case["records"], "--bucket", f"s3://{bucket}/topics",
                 "--config", config or case["config"], "--s3-endpoint", case["moto"].endpoint, "--out", str(out), *extra])
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return code, doc


def _by_tp(doc: dict) -> dict[str, dict[str, dict]]:
    return {e["scenario"]: {v["property"]: v for v in e["verdicts"]} for e in doc["results"]}


def test_clean_bucket_passes_with_open_tail_reported_not_lost(case, spark, creds, tmp_path):
    code, doc = _audit(case, CLEAN, tmp_path / "out")
    assert code == 0, doc
    assert doc["command"] == "audit" and doc["status"] == "pass"
    tps = _by_tp(doc)
    assert sorted(tps) == [f"{TOPIC}-{p}" for p in range(PARTITIONS)]
    for name, v in tps.items():
        assert {p: x["status"] for p, x in v.items()} == {"no-loss": "pass", "no-duplicates": "pass",
                                                          "exact-object-set": "pass"}
        assert v["no-loss"]["details"]["not_yet_visible"] == 2  # 18 and 19: the model's open tail
        assert v["no-loss"]["details"]["not_yet_visible_range"] == [18, 19]
        assert v["exact-object-set"]["details"]["exact_objects"] == 6
    entry = doc["results"][0]
    assert entry["records"] == PER_PARTITION and entry["replay"].startswith("sinkcheck audit ")
    assert (tmp_path / "out" / "report.html").exists() and (tmp_path / "out" / "junit.xml").exists()


def test_tampered_bucket_fails_with_witnesses_per_topic_partition(case, spark, creds, tmp_path):
    code, doc = _audit(case, BUCKET, tmp_path / "out")
    assert code == 1
    tps = _by_tp(doc)

    # events-0: the object holding 3..5 was deleted
    v = tps[f"{TOPIC}-0"]
    assert v["no-loss"]["status"] == "fail" and v["no-loss"]["claimed"]
    lost = v["no-loss"]["witnesses"]
    assert [w["offsets"] for w in lost] == [[f"{TOPIC}-0@3", f"{TOPIC}-0@4", f"{TOPIC}-0@5"]]
    assert lost[0]["keys"] == [_key(0, 3)]
    missing = [w for w in v["exact-object-set"]["witnesses"] if w["anomaly"] == "missing-object"]
    assert [w["keys"] for w in missing] == [[_key(0, 3)]]
    assert v["no-duplicates"]["status"] == "pass"

    # events-1: 10..12 copied under start offset 10
    v = tps[f"{TOPIC}-1"]
    assert v["no-loss"]["status"] == "pass"
    dup = v["no-duplicates"]["witnesses"]
    assert v["no-duplicates"]["status"] == "fail" and v["no-duplicates"]["details"]["duplicated"] == 3
    assert sorted(o for w in dup for o in w["offsets"]) == [f"{TOPIC}-1@10", f"{TOPIC}-1@11", f"{TOPIC}-1@12"]
    assert all(_key(1, 10) in w["keys"] for w in dup)
    assert {k for w in dup for k in w["keys"]} == {_key(1, 9), _key(1, 12), _key(1, 10)}
    unexpected = [w for w in v["exact-object-set"]["witnesses"] if w["anomaly"] == "unexpected-object"]
    assert [w["keys"] for w in unexpected] == [[_key(1, 10)]]
    assert unexpected[0]["observed"]["records"] == "10..12"

    # events-2: record 1's value altered inside the model's object
    v = tps[f"{TOPIC}-2"]
    diff = [w for w in v["exact-object-set"]["witnesses"] if w["anomaly"] == "different-object"]
    assert [w["keys"] for w in diff] == [[_key(2, 0)]]
    assert diff[0]["observed"]["first_difference_at_row"] == 1 and "someone-else" in diff[0]["observed"]["observed_row"]
    assert [w["offsets"] for w in v["no-loss"]["witnesses"]] == [[f"{TOPIC}-2@1"]]
    dup = v["no-duplicates"]["witnesses"]  # the copy under a '_' directory is read too
    assert [(w["offsets"], w["keys"]) for w in dup] == [([f"{TOPIC}-2@3", f"{TOPIC}-2@4", f"{TOPIC}-2@5"],
                                                         [HIDDEN_COPY, _key(2, 3)])]

    # events-3: an object the model never names, holding a row of no record
    v = tps[f"{TOPIC}-3"]
    assert v["no-loss"]["status"] == "pass" and v["no-duplicates"]["status"] == "pass"
    unexpected = {w["keys"][0]: w["observed"] for w in v["exact-object-set"]["witnesses"] if w["anomaly"] == "unexpected-object"}
    assert sorted(unexpected) == [_key(3, 50), _key(3, 100)]
    assert unexpected[_key(3, 100)]["rows_matching_no_record"] == 1
    assert unexpected[_key(3, 50)]["bytes"] == 0 and unexpected[_key(3, 50)]["rows"] == 0

    # a key that names no topic-partition at all
    v = tps["(objects outside any topic-partition)"]
    assert v["exact-object-set"]["status"] == "fail"
    assert v["exact-object-set"]["witnesses"][0]["keys"] == ["topics/events/partition=3/notes.txt"]

    assert any("read on the driver" in n for n in doc["notes"]), doc["notes"]
    junit = (tmp_path / "out" / "junit.xml").read_text()
    assert f"{TOPIC}-0@3" in junit and "Reproduce with: sinkcheck audit" in junit


def test_scheduled_rotation_leaves_exact_objects_unknown_with_the_reason(case, spark, creds, tmp_path):
    cfg = dict(CONNECTOR, **{"rotate.schedule.interval.ms": "60000", "timezone": "UTC"})
    path = tmp_path / "scheduled.json"
    path.write_text(json.dumps(cfg))
    code, doc = _audit(case, BUCKET, tmp_path / "out", config=str(path))
    tps = _by_tp(doc)
    exact = tps[f"{TOPIC}-1"]["exact-object-set"]
    assert exact["status"] == "unknown" and "rotate.schedule.interval.ms" in exact["message"]
    assert not exact["claimed"]  # scheduled rotation claims at-least-once only (§16)
    # content matching still finds the deleted records: later offsets of events-0 are visible
    assert tps[f"{TOPIC}-0"]["no-loss"]["status"] == "fail"
    assert [w["offsets"] for w in tps[f"{TOPIC}-0"]["no-loss"]["witnesses"]] == [[f"{TOPIC}-0@3", f"{TOPIC}-0@4",
                                                                                   f"{TOPIC}-0@5"]]
    assert tps[f"{TOPIC}-0"]["no-loss"]["details"]["not_yet_visible"] == 2
    assert code == 1  # no-loss is claimed under at-least-once too


@pytest.mark.parametrize("change, message", [
    ({"records": "missing.jsonl"}, "--records: file not found: "),
    ({"records": "kafka://events"}, "where is the broker?"),
    ({"bucket": "https://audit-clean/x"}, "give s3://BUCKET/PREFIX"),
    ({"bucket": "s3://A_/x"}, "is not a valid S3 bucket name"),
    ({"bucket": "s3://no-such-bucket/topics"}, "no bucket 'no-such-bucket'"),
    ({"endpoint": "closed-port"}, "cannot reach the S3 endpoint"),
    ({"config": "bad-flush"}, "flush.size"),
    ({"config": "missing"}, "--config: file not found: "),
], ids=["records-missing", "kafka-without-broker", "not-s3", "bad-bucket-name", "no-such-bucket", "unreachable", "invalid-config",
        "config-missing"])
def test_bad_input_exits_4_naming_what_is_wrong(case, creds, tmp_path, capsys, change, message):
    """Checked before any Spark session starts: each answer names the flag and the fix."""
    records = change.get("records", case["records"])
    records = records if records.startswith("kafka://") or "records" not in change else str(tmp_path / records)
    bucket = change.get("bucket", f"s3://{CLEAN}/topics")
    endpoint = case["moto"].endpoint if "endpoint" not in change else f"http://{LOOPBACK}:{free_port()}"
    config = case["config"]
    if change.get("config") == "bad-flush":
        config = str(tmp_path / "c.json")
        Path(config).write_text(json.dumps(dict(CONNECTOR, **{"flush.size": "three"})))
    elif change.get("config") == "missing":
        config = str(tmp_path / "nope.json")
    started = time.monotonic()
    code = main(["audit", "--records", records, "--bucket", bucket, "--config", config,
                 "--s3-endpoint", endpoint, "--out", str(tmp_path / "out")])
    assert code == 4
    assert message in capsys.readouterr().err
    assert time.monotonic() - started < 30  # no S3A retrying for minutes


@pytest.mark.parametrize("change, message", [
    ("copy", f"offset 4 of {TOPIC}-1 is there more than once"),
    ("topic", "Topic name is invalid: 'ev ents' contains one or more characters other than ASCII alphanumerics"),
])
def test_records_kafka_could_not_have_given_are_4(case, spark, creds, tmp_path, capsys, change, message):
    records = _records()
    if change == "copy":
        records.append(next(r for r in records if r["partition"] == 1 and r["offset"] == 4))
    else:
        records[0]["topic"] = "ev ents"
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _ = _audit(case, CLEAN, tmp_path / "out", records=str(path))
    assert code == 4
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_s3_credentials_come_as_a_pair_from_one_place():
    from conformance.auditing.auditor import AuditInputError, S3Access

    conn = {"aws.access.key.id": "CONFIGKEY", "aws.secret.access.key": "config-secret", "store.url": "http://s3.local:9000"}
    a = S3Access.resolve(conn, env={})
    assert (a.access_key, a.secret_key, a.endpoint, a.path_style) == ("CONFIGKEY", "config-secret", "http://s3.local:9000", True)
    assert a.hadoop_conf()["fs.s3a.connection.ssl.enabled"] == "false"
    env = {"AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "env-secret"}
    assert S3Access.resolve(conn, env=env).access_key == "ENVKEY"  # the environment overrides the sink's keys
    with pytest.raises(AuditInputError, match="AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY"):
        S3Access.resolve(conn, env={"AWS_ACCESS_KEY_ID": "ENVKEY"})  # never half from each
    assert "fs.s3a.access.key" not in S3Access.resolve({}, env={}).hadoop_conf()  # S3A's own chain


# --- where the model's task dies: the audit holds the bucket to the model's own resolution ------------

def _audit_like_the_model(case: dict[str, Any], spark: Any, tmp_path: Path, bucket: str, connector: dict[str, str],
                          records: list[dict[str, Any]], *, skip: set[str] = frozenset(), extra: dict[str, bytes] | None = None):
    """Write the objects the model says may exist (all but `skip`, plus `extra`) to a bucket of
    their own, audit it on Spark, and return (the audit's outcome, the model's expectation,
    the audit per topic-partition)."""
    from conformance.auditing.auditor import BucketLocation, S3Access, run_audit
    from reference_impl.engine.spark import expect_spark, records_dataframe

    cfg = parse_config(connector)
    sink_records = parse_records_lines(json.dumps(r) for r in records)
    exp = expect(cfg, sink_records)
    by_off = {(r.topic, r.partition, r.offset): r for r in sink_records}
    moto = case["moto"]
    moto.create_bucket(bucket)
    s3 = moto.client()
    for o in exp.objects:
        if o.key not in skip:
            s3.put_object(Bucket=bucket, Key=o.key, Body=encode_view(cfg, [by_off[(o.topic, o.partition, x)] for x in o.offsets], "value"))
    for key, body in (extra or {}).items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    df = records_dataframe(spark, str(path))
    # the Spark engine over the same DataFrame is the model too
    assert expect_spark(cfg, df).to_json() | {"engine": "local"} == exp.to_json()
    access = S3Access.resolve({}, moto.endpoint, env={"AWS_ACCESS_KEY_ID": MotoS3Server.ACCESS_KEY,
                                                      "AWS_SECRET_ACCESS_KEY": MotoS3Server.SECRET_KEY})
    outcome = run_audit(spark, cfg, df, BucketLocation(bucket, "topics"), access)
    return outcome, exp, {t.name: t for t in outcome.topic_partitions}


def _held_as_the_model_says(exp: Any, tps: dict[str, Any]) -> None:
    """Per topic-partition, the audit counts the records of the model's certain objects as
    committed, those of its uncertain ones as uncertain and those of its open files as its
    open tail."""
    for name, t in tps.items():
        objs = [o for o in exp.objects if f"{o.topic}-{o.partition}" == name]
        assert t.expected_objects == len(objs), name
        assert t.open_tail == sum(len(f.offsets) for f in exp.open if f"{f.topic}-{f.partition}" == name), name
        assert t.committed == sum(len(o.offsets) for o in objs if o.certain), name
        assert t.uncertain == sum(len(o.offsets) for o in objs if not o.certain), name
        assert (t.lost, t.missing, t.duplicated) == (0, 0, 0), name


def test_a_fatal_null_is_audited_as_the_model_resolves_it(case, spark, tmp_path):
    """behavior.on.null.values=fail (the default), a null at nulls-1@5, sixth in its put order:
    the model's task dies there (R12.1); without put times the files of the records before it
    may or may not have been committed (none is certain) and nothing at or after it is put.
    The audit says the same: the same failure, the same objects expected and none certain, a
    possible object absent is not lost, an object of records after the null is unexpected."""
    connector = {k: v for k, v in CONNECTOR.items() if k != "connector.class"}
    records = [{"topic": "nulls", "partition": p, "offset": o, "timestamp": 1_700_000_000_000 + o, "key": None,
                "value": None if (p, o) == (1, 5) else {"n": o, "p": p}, "headers": []}
               for o in range(10) for p in range(2)]
    key = "topics/nulls/partition={p}/nulls+{p}+{o:010d}.json"
    after = json.dumps({"n": 6, "p": 0}).replace(" ", "").encode() + b"\n"
    outcome, exp, tps = _audit_like_the_model(case, spark, tmp_path, "audit-fatal-null", connector, records,
                                              skip={key.format(p=0, o=3)}, extra={key.format(p=0, o=6): after})
    f = exp.task_failure
    assert (f.rule, f.topic, f.partition, f.offset) == ("R12.1", "nulls", 1, 5)
    assert outcome.task_failure == f.to_json()
    assert [o.key for o in exp.objects] == [key.format(p=0, o=0), key.format(p=0, o=3), key.format(p=1, o=0)]
    assert not any(o.certain for o in exp.objects)
    _held_as_the_model_says(exp, tps)
    p0, p1 = tps["nulls-0"], tps["nulls-1"]
    assert (p0.not_yet_visible, p0.not_yet_visible_range) == (3, (3, 5))  # the possible object left out
    assert p0.unexpected == 1 and [w["keys"] for w in p0.witnesses["unexpected-object"]] == [[key.format(p=0, o=6)]]
    assert (p1.exact_objects, p1.unexpected, p1.open_tail, p1.not_yet_visible_range) == (1, 0, 2, (3, 4))


META = {"type": "struct", "optional": False, "fields": [
    {"field": "meta", "type": "struct", "optional": False, "fields": [{"field": "ts", "type": "string", "optional": True}]}]}


def test_writers_dying_in_two_topic_partitions_are_audited_as_the_model_resolves_it(case, spark, tmp_path):
    """RecordField on a missing timestamp kills a writer, at w-0@2 and at w-1@1, in the one put
    there is: the model names w-0's failure (R1.4: which writer runs first is not fixed) and
    every other writer, w-1 included, may or may not have run, so w-1's object of offset 0 is
    not certain; the audit does not call it lost when it is absent."""
    connector = {k: v for k, v in CONNECTOR.items() if k != "connector.class"}
    connector.update({"flush.size": "1", "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                      "timestamp.extractor": "RecordField", "timestamp.field": "meta.ts", "timezone": "UTC",
                      "locale": "en"})
    ok = {"schema": META, "payload": {"meta": {"ts": "2024-05-01T10:15:00Z"}}}
    bad = {"schema": META, "payload": {"meta": {"ts": None}}}
    values = {0: [ok, ok, bad, ok], 1: [ok, bad, ok], 2: [ok, ok]}
    records = [{"topic": "w", "partition": p, "offset": o, "timestamp": 1_714_558_500_000, "key": None, "value": v,
                "headers": []} for p, vs in values.items() for o, v in enumerate(vs)]
    cfg = parse_config(connector)
    w1 = [o.key for o in expect(cfg, parse_records_lines(json.dumps(r) for r in records)).objects if o.partition == 1]
    outcome, exp, tps = _audit_like_the_model(case, spark, tmp_path, "audit-writer-failures", connector, records,
                                              skip=set(w1))
    f = exp.task_failure
    assert (f.topic, f.partition, f.offset) == ("w", 0, 2) and outcome.task_failure == f.to_json()
    assert [o.certain for o in exp.objects if o.partition == 1] == [False]
    _held_as_the_model_says(exp, tps)
    assert tps["w-1"].not_yet_visible == 1 and tps["w-1"].uncertain == 1


# --- the per-topic-partition comparison, without Spark ------------------------------------------

def _compare(values: list[str], observed: dict[str, bytes], flush: int = 2):
    """audit_topic_partition on hand-made frames: records with these JSON value texts, the
    local model's objects, and the observed objects by key."""
    import pandas as pd

    from conformance.auditing.auditor import CompareSettings, OTHER_DDL, audit_topic_partition

    cfg = parse_config({k: v for k, v in dict(CONNECTOR, **{"flush.size": str(flush)}).items() if k != "connector.class"})
    recs = [{"topic": TOPIC, "partition": 0, "offset": o, "timestamp": 0, "key": "null", "value": v, "headers": "[]"}
            for o, v in enumerate(values)]
    exp = expect(cfg, parse_records_lines(json.dumps({**r, "key": None, "value": json.loads(r["value"]), "headers": []})
                                          for r in recs))
    blank = dict.fromkeys(c.split()[0] for c in OTHER_DDL.split(", "))
    rows = [{**blank, "kind": "object", "topic": TOPIC, "partition": 0, "key": o.key, "first_offset": o.offsets[0],
             "last_offset": o.offsets[-1], "siblings": "{}", "value_object": True, "certain": True, "rotation": o.rotation}
            for o in exp.objects]
    rows += [{**blank, "kind": "open", "topic": TOPIC, "partition": 0, "offsets": list(f.offsets)} for f in exp.open]
    rows += [{**blank, "kind": "observed", "topic": TOPIC, "partition": 0, "key": k, "view": "value", "content": body,
              "first_offset": int(k.rsplit("+", 1)[1].split(".")[0])} for k, body in observed.items()]
    return audit_topic_partition(CompareSettings(cfg, "topics/", False), pd.DataFrame(recs), pd.DataFrame(rows))


def test_records_with_equal_contents_are_told_apart_by_the_keys_start_offset():
    same = ['{"v":1}'] * 5  # objects 0..1 and 2..3; 4 stays open
    body = b'{"v":1}\n{"v":1}\n'
    res = _compare(same, {_key(0, 0): body, _key(0, 2): body, _key(0, 3): body})
    assert (res.exact_objects, res.unexpected, res.lost) == (2, 1, 0)
    # the copy named after offset 3 holds 3 and 4: 3 twice, 4 (the open tail) visible early
    assert res.duplicated == 1 and res.witnesses["duplicated"][0]["offsets"] == [f"{TOPIC}-0@3"]
    assert res.extra_visible == 1 and res.not_yet_visible == 0


def test_a_copy_of_many_equal_records_spreads_over_them_in_linear_time():
    """Heartbeat-like topics: 20,000 equal records; a second copy of 1,000 of them under a key
    past the end duplicates 1,000 records once each (not one record 1,000 times)."""
    beats = ['{"ok":true}'] * 20_000
    started = time.monotonic()
    res = _compare(beats, {**{_key(0, s): b'{"ok":true}\n' * 1000 for s in range(0, 20_000, 1000)},
                           _key(0, 30_000): b'{"ok":true}\n' * 1000}, flush=1000)
    assert (res.exact_objects, res.unexpected, res.lost, res.duplicated) == (20, 1, 0, 1000)
    assert time.monotonic() - started < 20


def test_a_float_written_verbatim_is_held_to_the_models_spelling_of_it():
    """The records' own text matches without encoding only when it has no float literal: the
    model reads 0.1000000000000000000001 as a double and writes 0.1."""
    precise = '{"x":0.1000000000000000000001}'
    res = _compare([precise, precise], {_key(0, 0): (precise + "\n" + precise + "\n").encode()})
    assert res.different == 1 and res.exact_objects == 0
    assert res.witnesses["different-object"][0]["observed"]["first_difference_at_row"] == 0
    spelled = _compare(['{"x":1e2}', '{"x":2}'], {_key(0, 0): b'{"x":100.0}\n{"x":2}\n'})
    assert spelled.exact_objects == 1 and spelled.lost == 0


# --- records read from the topic itself --------------------------------------------------------------

@pytest.mark.kafka
def test_records_read_from_a_topic_audit_like_the_dump(case, spark, creds, tmp_path):
    """kafka://HOST:PORT/TOPIC: the same records produced to a real broker (JSON text, as
    JsonConverter reads it), read whole by Spark's Kafka source: the clean bucket passes and
    the tampered one fails with the same witnesses as from the JSONL dump."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from adapters.processes.broker import KafkaBroker

    broker = KafkaBroker(tmp_path).start()
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1)])[TOPIC].result(30)
        producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
        for r in _records():
            producer.produce(TOPIC, key=json.dumps(r["key"]).encode(), value=json.dumps(r["value"]).encode(),
                             partition=r["partition"], timestamp=r["timestamp"])
        assert producer.flush(30) == 0
        source = f"kafka://{broker.bootstrap}/{TOPIC}"
        code, doc = _audit(case, CLEAN, tmp_path / "clean", records=source)
        assert code == 0, doc
        assert all(v["exact-object-set"]["details"]["exact_objects"] == 6 for v in _by_tp(doc).values())
        code, doc = _audit(case, BUCKET, tmp_path / "tampered", records=source)
        assert code == 1
        tps = _by_tp(doc)
        assert [w["offsets"] for w in tps[f"{TOPIC}-0"]["no-loss"]["witnesses"]] == [
            [f"{TOPIC}-0@3", f"{TOPIC}-0@4", f"{TOPIC}-0@5"]]
        assert tps[f"{TOPIC}-1"]["no-duplicates"]["details"]["duplicated"] == 3
        assert doc["environment"]["records"] == source
    finally:
        broker.stop()


# --- on a standalone cluster -------------------------------------------------------------------------

def _spark_class() -> str:
    import pyspark

    return str(Path(pyspark.__file__).parent / "bin" / "spark-class")


def _alive_workers(ui_port: int) -> int:
    with urllib.request.urlopen(f"http://{LOOPBACK}:{ui_port}/json/", timeout=5) as r:
        return int(json.loads(r.read()).get("aliveworkers", 0))


@pytest.mark.spark_cluster
def test_audit_on_a_standalone_master_with_one_worker(case, spark, creds, tmp_path):
    """The same tampered bucket, audited by executors of a standalone cluster on loopback; the
    master and the worker are stopped whatever happens, and nothing is left behind."""
    import pyspark

    spark.stop()  # one SparkContext per JVM: the cluster's session replaces the module's
    before = child_pids()
    home = str(Path(pyspark.__file__).parent)
    env = {"SPARK_HOME": home, "SPARK_LOCAL_IP": LOOPBACK, "SPARK_LOCAL_HOSTNAME": "localhost",
           "SPARK_NO_DAEMONIZE": "1", "SPARK_LOG_DIR": str(tmp_path / "logs")}
    port, ui, wport, wui = free_port(), free_port(), free_port(), free_port()
    master = ManagedProcess("spark-master", [_spark_class(), "org.apache.spark.deploy.master.Master", "--host", LOOPBACK,
                                             "--port", str(port), "--webui-port", str(ui)],
                            tmp_path / "master.log", env=env)
    worker = ManagedProcess("spark-worker", [_spark_class(), "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                                             "--port", str(wport), "--webui-port", str(wui), "--cores", "2",
                                             "--memory", "1g", "--work-dir", str(tmp_path / "work"),
                                             f"spark://{LOOPBACK}:{port}"],
                            tmp_path / "worker.log", env=env)
    ports = {port, ui, wport, wui}
    try:
        master.start()
        wait_until(lambda: port_open(port) and port_open(ui), 60, f"the Spark master on {LOOPBACK}:{port}",
                   log=master.log_path, proc=master)
        worker.start()
        wait_until(lambda: _alive_workers(ui) >= 1, 60, "one worker registered with the Spark master",
                   log=worker.log_path, proc=worker)
        code, doc = _audit(case, BUCKET, tmp_path / "out", "--spark-master", f"spark://{LOOPBACK}:{port}")
        assert code == 1
        assert "spark://" in doc["environment"]["Spark"]
        tps = _by_tp(doc)
        assert [w["offsets"] for w in tps[f"{TOPIC}-0"]["no-loss"]["witnesses"]] == [
            [f"{TOPIC}-0@3", f"{TOPIC}-0@4", f"{TOPIC}-0@5"]]
        assert tps[f"{TOPIC}-1"]["no-duplicates"]["details"]["duplicated"] == 3
        assert list((tmp_path / "work").glob("app-*")), "the audit ran no executor on the worker"
    finally:
        worker.stop()
        master.stop()
    deadline = time.monotonic() + 20
    while (child_pids() - before) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not (child_pids() - before), f"processes left behind: {child_pids() - before}"
    assert not (ports & listening_ports()), f"ports still listening: {ports & listening_ports()}"
