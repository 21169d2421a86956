"""Each checker on hand-made observations: a clean run passes, the anomaly it exists for
fails with a witness, a crashing checker is unknown, an unfired fault turns a pass unknown."""
from __future__ import annotations

import json

from adapters.observation import BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord, S3Object, StatusSample
from conformance.judging.checks.base import CHECKS, RunData
from conformance.judging.checks.run import run_checks
from conformance.judging.claims import C1, claim_for
from conformance.judging.untested import untested_reason
from conformance.inputs.scenario import FaultStep, Scenario
from conformance.judging.verdicts import FAIL, PASS, UNKNOWN, overall
from reference_impl.config import parse_config
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.model import expect

CONFIG = {"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "3",
          "storage.class": "io.confluent.connect.s3.storage.S3Storage", "s3.bucket.name": "b",
          "key.converter": "org.apache.kafka.connect.storage.StringConverter",
          "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
D = "topics/t/partition=0"


def scenario(n: int = 8, faults=()) -> Scenario:
    return Scenario("unit", CONFIG, {"t": 1},
                    [{"topic": "t", "partition": 0, "timestamp": 0, "key": None, "value": {"seq": i}, "headers": []}
                     for i in range(n)], list(faults))


def body(seqs) -> bytes:
    return "".join(json.dumps({"seq": s}, separators=(",", ":")) + "\n" for s in seqs).encode()


def sample(at: int, objects: dict[str, list[int]], uploads=()) -> BucketSample:
    return BucketSample(at, tuple(S3Object(k, len(body(v)), f"{k}:{v}", body(v)) for k, v in objects.items()),
                        tuple(uploads))


CLEAN = {f"{D}/t+0+0000000000.json": [0, 1, 2], f"{D}/t+0+0000000003.json": [3, 4, 5]}


def run(objects=CLEAN, samples=None, offsets=(6,), faults=(), fault_events=(), uploads=(), status="RUNNING", n=8):
    sc = scenario(n, faults)
    cfg = parse_config(CONFIG)
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]
    obs = Observation(
        bucket_samples=list(samples or []) + [sample(10_000, objects, uploads)],
        offset_samples=[OffsetSample(1000 * (i + 1), {"t-0": k}, 1) for i, k in enumerate(offsets)],
        faults=list(fault_events), statuses=[StatusSample(9999, status, (status,))], quiet=True)
    data = RunData(sc, "pysink", obs, claim_for("pysink", CONFIG, sc.faults), cfg, expect(cfg, records), records)
    return {v.property: v for v in run_checks(data)}


def test_a_clean_run_passes_every_property():
    v = run()
    assert {p: x.status for p, x in v.items()} == {p: PASS for p in CHECKS}
    assert v["no-loss"].details["not_yet_visible_count"] == 2  # 6 and 7 sit in the open file
    assert overall(list(v.values())) == PASS


def test_no_loss_fails_when_a_committed_record_is_missing():
    v = run({f"{D}/t+0+0000000000.json": [0, 2], f"{D}/t+0+0000000003.json": [3, 4, 5]})
    assert v["no-loss"].status == FAIL
    assert v["no-loss"].witnesses[0].offsets == ("t-0@1",)


def test_no_duplicates_fails_with_both_keys():
    v = run({**CLEAN, f"{D}/t+0+0000000002.json": [2, 3, 4]})
    assert v["no-duplicates"].status == FAIL
    assert f"{D}/t+0+0000000002.json" in v["no-duplicates"].witnesses[0].keys
    assert v["exact-object-set"].status == FAIL


def test_exact_object_set_and_naming_catch_renumbered_start_offsets():
    v = run({f"{D}/t+0+0000000000.json": [0, 1, 2], f"{D}/t+0+0000000001.json": [3, 4, 5]})
    assert v["exact-object-set"].status == FAIL
    assert v["naming"].status == FAIL and v["naming"].witnesses[0].expected == f"{D}/t+0+0000000003.json"


def test_atomic_visibility_catches_a_partial_object_seen_mid_run():
    v = run(samples=[sample(500, {f"{D}/t+0+0000000000.json": [0, 1]})])
    assert v["atomic-visibility"].status == FAIL
    assert v["atomic-visibility"].witnesses[0].anomaly == "partial-object"


def test_commit_safety_catches_an_offset_committed_before_the_upload():
    v = run(samples=[sample(500, {})], offsets=(3, 6))
    # at 1000 the sink had committed 3 while the first sample after it (10000) ... holds 0-2: safe
    assert v["commit-safety"].status == PASS
    v = run(samples=[sample(1500, {})], offsets=(3, 6))
    assert v["commit-safety"].status == FAIL and v["commit-safety"].witnesses[0].anomaly == "commit-ahead-of-s3"


def test_commit_safety_catches_offsets_going_backwards():
    v = run(offsets=(6, 3, 6))
    assert any(w.anomaly == "commit-backwards" for w in v["commit-safety"].witnesses)


def test_commit_progress_fails_when_commits_stall():
    v = run(offsets=(3,))
    assert v["commit-progress"].status == FAIL and v["commit-progress"].witnesses[0].expected == 6


def test_rotation_catches_an_object_over_flush_size():
    v = run({f"{D}/t+0+0000000000.json": [0, 1, 2, 3], f"{D}/t+0+0000000004.json": [4, 5]})
    assert v["rotation"].status == FAIL


def _rotation_after_update(objects: dict[str, list[int]], fault_events) -> object:
    """The rotation verdict of a run whose flush.size went 3 -> 1 with nothing committed."""
    sc = scenario(6)
    cfg, updated = parse_config(CONFIG), parse_config({**CONFIG, "flush.size": "1"})
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]
    obs = Observation(bucket_samples=[sample(10_000, objects)], faults=list(fault_events),
                      statuses=[StatusSample(9999, "RUNNING", ("RUNNING",))], quiet=True)
    data = RunData(sc, "pysink", obs, claim_for("pysink", CONFIG, sc.faults), cfg, expect(updated, records), records,
                   phases=[(cfg, {}), (updated, {"t-0": 0})], boundaries=False)
    return next(v for v in run_checks(data) if v.property == "rotation")


def test_R3_8_an_object_is_held_to_the_flush_size_of_the_task_that_wrote_it():
    """A task waiting on an S3 answer from before a config update (flush.size 3 -> 1) to after
    it completes a 3-record object under its own config (spec C4 across C3): within flush.size.
    Without such a task, every object after the update is the new config's; and no config
    allows four."""
    update = FaultEvent("update-config", {"config": {"flush.size": "1"}}, True, at_ms=200, restart_from={"t-0": 0})
    held = FaultEvent("s3", {"operation": "CompleteMultipartUpload", "action": "hang"}, True, at_ms=100, until_ms=300)
    three = {f"{D}/t+0+0000000000.json": [0, 1, 2]}
    assert _rotation_after_update(three, [held, update]).status == PASS
    alone = _rotation_after_update(three, [update])
    assert alone.status == FAIL and alone.witnesses[0].expected == "<= 1 records"
    four = _rotation_after_update({f"{D}/t+0+0000000000.json": [0, 1, 2, 3]}, [held, update])
    assert four.status == FAIL and four.witnesses[0].expected == "<= 3 records"


def test_file_count_catches_a_small_file_explosion():
    v = run({f"{D}/t+0+{i:010d}.json": [i] for i in range(6)})
    assert v["file-count"].status == FAIL


def test_multipart_hygiene_and_liveness():
    v = run(uploads=[("x", "u1")], status="FAILED")
    assert v["multipart-hygiene"].status == FAIL and v["liveness"].status == FAIL


def test_a_fault_that_never_fired_makes_a_pass_unknown():
    f = FaultStep(3, "s3", {"operation": "UploadPart", "action": "fail", "part_number": 4})
    v = run(faults=[f], fault_events=[FaultEvent("s3", {}, False)])
    assert v["no-loss"].status == UNKNOWN and "never fired" in v["no-loss"].message


def test_multipart_hygiene_is_not_claimed_when_a_sink_is_killed():
    assert claim_for("pysink", CONFIG, [FaultStep(1, "s3", {"action": "fail"})]).claims("multipart-hygiene")
    assert not claim_for("pysink", CONFIG, [FaultStep(1, "crash")]).claims("multipart-hygiene")
    assert not claim_for("confluent", CONFIG, [FaultStep(1, "s3", {"action": "fail"})]).claims("multipart-hygiene")


def test_a_crashing_checker_is_unknown_and_hides_nothing(monkeypatch):
    import conformance.judging.checks.run as c

    def boom(d):
        raise RuntimeError("kaput")

    monkeypatch.setitem(c.CHECKS, "no-loss", ("P-NOLOSS", boom))
    v = run()
    assert v["no-loss"].status == UNKNOWN and "kaput" in v["no-loss"].message
    assert v["no-duplicates"].status == PASS


def test_claims_follow_section_16():
    assert claim_for("pysink", CONFIG).name == "exactly-once"
    sched = {**CONFIG, "rotate.schedule.interval.ms": "60000", "timezone": "UTC"}
    assert claim_for("pysink", sched).name == "at-least-once"
    assert not claim_for("aiven", CONFIG).claims("no-duplicates")
    field = {**CONFIG, "partitioner.class": "FieldPartitioner", "partition.field.name": "r"}
    c1 = claim_for("pysink", field, [FaultStep(1, "s3", {"action": "fail"})])
    assert c1.name == "at-least-once" and C1 in c1.caveats  # what boundaries_hold reads
    assert C1 not in claim_for("pysink", field).caveats


def test_scenario_round_trips_through_json(tmp_path):
    sc = scenario(3, [FaultStep(1, "crash")])
    assert Scenario.load(sc.save(tmp_path / "s.json")) == sc


def test_exact_object_set_allows_but_never_requires_the_files_a_dying_task_may_have_committed():
    """A null at offset 5 kills the task (R12.1) in a put the run does not know: the files of
    0–4 may each exist; present, they must hold exactly the model's records."""
    sc = scenario(7)
    sc.records[5]["value"] = None
    cfg = parse_config(CONFIG)
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]

    def exact(objects):
        obs = Observation(bucket_samples=[sample(10_000, objects)], offset_samples=[OffsetSample(1000, {"t-0": 3}, 1)],
                          statuses=[StatusSample(9999, "FAILED", ("FAILED",))], quiet=True)
        data = RunData(sc, "pysink", obs, claim_for("pysink", CONFIG, ()), cfg, expect(cfg, records), records)
        return {v.property: v for v in run_checks(data)}["exact-object-set"]

    assert exact({}).status == PASS
    assert exact({f"{D}/t+0+0000000000.json": [0, 1, 2]}).status == PASS
    bad = exact({f"{D}/t+0+0000000000.json": [0, 1]})
    assert bad.status == FAIL and bad.witnesses[0].expected == [0, 1, 2] and bad.witnesses[0].observed == [0, 1]


def test_C4_a_zombie_under_wall_clock_boundaries_loses_no_loss_unless_conditional_writes_guard_it():
    sched = {**CONFIG, "rotate.schedule.interval.ms": "5000", "timezone": "UTC"}
    zombie = [FaultStep(1, "pause"), FaultStep(2, "resume")]
    # Confluent 10.6+ sends If-None-Match on Complete here (R8.1): a late upload gets a 412
    assert claim_for("confluent", sched, zombie, "12.1.9").claims("no-loss")
    # the Python sink too (R8 as the connector's)
    assert claim_for("pysink", sched, zombie).claims("no-loss")
    # before 10.6.0, or with keys stored, it overwrites (C4)
    for target, cfg, version in [("confluent", sched, "10.5.23"),
                                 ("confluent", {**sched, "store.kafka.keys": "true"}, "12.1.9"),
                                 ("pysink", {**sched, "store.kafka.keys": "true"}, None)]:
        c = claim_for(target, cfg, zombie, version)
        assert not c.claims("no-loss") and not c.claims("commit-safety") and any("C4" in r for r in c.reasons)
    # deterministic boundaries: the late upload carries the same records, nothing to lose
    assert claim_for("pysink", CONFIG, zombie).claims("no-loss")


def _other_sink_run(target: str, config: dict, objects: dict[str, bytes], n: int = 4, committed: int = 4):
    sc = Scenario("other", config, {"t": 1},
                  [{"topic": "t", "partition": 0, "timestamp": 0, "key": None, "value": {"seq": i}, "headers": []}
                   for i in range(n)])
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]
    obs = Observation(produced=[ProducedRecord("t", 0, i, 0, None, b"") for i in range(n)],
                      bucket_samples=[BucketSample(10_000, tuple(S3Object(k, len(b), k, b) for k, b in objects.items()))],
                      offset_samples=[OffsetSample(1000, {"t-0": committed}, 1)],
                      statuses=[StatusSample(9999, "RUNNING", ("RUNNING",))], quiet=True)
    data = RunData(sc, f"kafka-connect:{target}", obs, claim_for(target, config), None, None, records)
    return {v.property: v for v in run_checks(data)}


def _aiven_csv(seqs) -> bytes:
    import base64
    import gzip

    return gzip.compress("".join(base64.b64encode(json.dumps({"seq": s}).encode()).decode() + "\n" for s in seqs).encode())


def test_aiven_objects_are_read_with_its_default_layout_and_named_by_its_template():
    """Aiven's defaults: gzip, CSV of the base64 value, `<topic>-<partition>-<start offset>.gz`."""
    v = _other_sink_run("aiven", {}, {"t-0-0.gz": _aiven_csv([0, 1]), "t-0-2.gz": _aiven_csv([2, 3])})
    assert v["no-loss"].status == PASS and v["naming"].status == PASS and v["naming"].claimed
    assert v["no-duplicates"].status == PASS  # measured (at-least-once claims no more)
    v = _other_sink_run("aiven", {}, {"t-0-0.gz": _aiven_csv([0, 1]), "t-0-3.gz": _aiven_csv([2, 3])})
    assert v["naming"].status == FAIL and v["naming"].witnesses[0].expected == "t-0-2.gz"
    lost = _other_sink_run("aiven", {}, {"t-0-0.gz": _aiven_csv([0, 1])})
    assert lost["no-loss"].status == FAIL and lost["no-loss"].witnesses[0].offsets == ("t-0@2",)
    padded = {"file.name.template": "{{topic}}/{{partition:padding=true}}/{{start_offset:padding=true}}",
              "file.compression.type": "none", "format.output.type": "jsonl", "format.output.fields.value.encoding": "none"}
    body = b"".join(json.dumps({"value": {"seq": s}}).encode() + b"\n" for s in range(4))
    v = _other_sink_run("aiven", padded, {"t/0000000000/00000000000000000000": body})
    assert v["no-loss"].status == PASS and v["naming"].status == PASS


def test_camel_objects_hold_one_record_each_and_duplicates_are_measured():
    objs = {f"k-{i}": json.dumps({"seq": i}).encode() for i in range(4)} | {"again": b'{"seq": 3}'}
    v = _other_sink_run("camel", {}, objs)
    assert v["no-loss"].status == PASS and v["no-loss"].claimed
    assert v["no-duplicates"].status == FAIL and not v["no-duplicates"].claimed  # at-least-once
    assert v["naming"].status == UNKNOWN  # random keys: nothing to check
    assert v["commit-progress"].status == PASS


def test_a_sink_without_a_model_still_commits_to_the_log_end():
    objs = {f"k-{i}": json.dumps({"seq": i}).encode() for i in range(2)}
    v = _other_sink_run("camel", {}, objs, committed=2)
    assert v["commit-progress"].status == FAIL
    assert v["commit-progress"].witnesses[0].expected == 4 and v["commit-progress"].witnesses[0].observed == 2


# --- contents: byte for byte, keys and headers beside their value object (R10, R11) ------------

KEYS_HEADERS = {**CONFIG, "store.kafka.keys": "true", "keys.format.class": CONFIG["format.class"],
                "store.kafka.headers": "true", "headers.format.class": CONFIG["format.class"]}


def run_bodies(bodies: dict[str, bytes], config=CONFIG, n: int = 6) -> dict:
    sc = Scenario("unit", config, {"t": 1},
                  [{"topic": "t", "partition": 0, "timestamp": 0, "key": f"k{i}", "value": {"seq": i},
                    "headers": [["h", str(i)], ["g", "x"]]} for i in range(n)])
    cfg = parse_config(config)
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]
    objs = tuple(S3Object(k, len(b), k, b) for k, b in bodies.items())
    obs = Observation(bucket_samples=[BucketSample(10_000, objs)], offset_samples=[OffsetSample(9000, {"t-0": n}, 1)],
                      statuses=[StatusSample(9999, "RUNNING", ("RUNNING",))], quiet=True)
    data = RunData(sc, "pysink", obs, claim_for("pysink", config, ()), cfg, expect(cfg, records), records)
    return {v.property: v for v in run_checks(data)}


def triple(start: int, seqs, keys=None, headers=None) -> dict[str, bytes]:
    stem = f"{D}/t+0+{start:010d}"
    keys = keys if keys is not None else "".join(f'"k{s}"\n' for s in seqs).encode()
    headers = headers if headers is not None else "".join(
        '{"headers":[{"key":"h","value":"%d"},{"key":"g","value":"x"}]}\n' % s for s in seqs).encode()
    return {f"{stem}.json": body(seqs), f"{stem}.keys.json": keys, f"{stem}.headers.json": headers}


def test_contents_pass_for_the_connectors_bytes():
    v = run_bodies({**triple(0, [0, 1, 2]), **triple(3, [3, 4, 5])}, KEYS_HEADERS)
    assert v["contents"].status == PASS and v["contents"].details["checked"] == 6 and v["contents"].claimed


def test_contents_catch_a_missing_last_separator_with_the_first_difference():
    v = run({**CLEAN, f"{D}/t+0+0000000003.json": [3, 4, 5]})
    assert v["contents"].status == PASS
    bodies = {f"{D}/t+0+0000000000.json": body([0, 1, 2]), f"{D}/t+0+0000000003.json": body([3, 4, 5])[:-1]}
    v = run_bodies(bodies)
    w = v["contents"].witnesses[0]
    assert v["contents"].status == FAIL and w.anomaly == "different-bytes"
    assert "at byte 29 (record 2; 30 bytes expected, 29 observed)" in w.explanation
    assert w.expected.endswith("5}\\n'") and w.observed.endswith("5}'")
    assert v["no-loss"].status == v["exact-object-set"].status == PASS  # decoding alone would never see it


def test_contents_catch_empty_headers_and_wrong_keys():
    v = run_bodies({**triple(0, [0, 1, 2], headers=b'{"headers":[]}\n' * 3), **triple(3, [3, 4, 5])}, KEYS_HEADERS)
    assert v["contents"].status == FAIL and v["contents"].witnesses[0].keys == (f"{D}/t+0+0000000000.headers.json",)
    v = run_bodies({**triple(0, [0, 1, 2], keys=b'"k1"\n"k2"\n"k3"\n'), **triple(3, [3, 4, 5])}, KEYS_HEADERS)
    assert v["contents"].witnesses[0].anomaly == "different-bytes" and "keys object" in v["contents"].witnesses[0].explanation


def test_contents_catch_a_missing_and_an_orphan_sibling():
    bodies = {**triple(0, [0, 1, 2]), **triple(3, [3, 4, 5])}
    del bodies[f"{D}/t+0+0000000003.keys.json"]
    bodies[f"{D}/t+0+0000000009.headers.json"] = b'{"headers":[]}\n'
    v = run_bodies(bodies, KEYS_HEADERS)
    assert sorted(w.anomaly for w in v["contents"].witnesses) == ["missing-sibling", "orphan-sibling"]


def test_contents_catch_an_object_that_should_be_gzip():
    import gzip

    config = {**CONFIG, "s3.compression.type": "gzip"}
    v = run_bodies({f"{D}/t+0+0000000000.json.gz": body([0, 1, 2]),
                    f"{D}/t+0+0000000003.json.gz": gzip.compress(body([3, 4, 5]))}, config)
    assert [w.anomaly for w in v["contents"].witnesses] == ["wrong-compression"]


def _lenses_run(objects: dict[str, bytes], offsets: list[tuple[int, int]], faults=()):
    cfg = {"connect.s3.kcql": "INSERT INTO b:out SELECT * FROM `t` STOREAS `JSON` PROPERTIES('flush.count'=2)"}
    sc = Scenario("lenses", cfg, {"t": 1},
                  [{"topic": "t", "partition": 0, "timestamp": 1000 + i, "key": None, "value": {"seq": i}, "headers": []}
                   for i in range(4)])
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]
    obs = Observation(produced=[ProducedRecord("t", 0, i, 0, None, b"") for i in range(4)],
                      bucket_samples=[BucketSample(500, tuple(S3Object(k, len(b), k, b) for k, b in objects.items()))],
                      offset_samples=[OffsetSample(at, {"t-0": k}, 1) for at, k in offsets],
                      statuses=[StatusSample(9999, "RUNNING", ("RUNNING",))], faults=list(faults), quiet=True)
    data = RunData(sc, "kafka-connect:lenses@11.7.2", obs, claim_for("kafka-connect:lenses", cfg), None, None, records)
    return {v.property: v for v in run_checks(data)}


def test_lenses_own_files_are_not_data_and_its_names_are_checked():
    body = lambda seqs: b"".join(json.dumps({"seq": s}).encode() + b"\n" for s in seqs)  # noqa: E731
    objs = {"out/t/0/000000000001_1000_1001.json": body([0, 1]), "out/t/0/000000000003_1002_1003.json": body([2, 3]),
            ".indexes/c/.locks/Topic(t)/0.lock": b'{"committedOffset":3}',
            ".temp-upload/Topic(t)/0/u1out/t/0/000000000001_1000_1001.json": body([0, 1])}  # a fenced zombie's
    v = _lenses_run(objs, [(1000, 4)])
    assert v["no-duplicates"].claimed and v["no-duplicates"].status == PASS
    assert v["naming"].status == PASS and v["no-loss"].status == PASS
    bad = _lenses_run({"out/t/0/000000000000_1000_1001.json": body([0, 1]), "out/t/0/3.json": body([2, 3])}, [(1000, 4)])
    assert bad["naming"].status == FAIL and {w.expected for w in bad["naming"].witnesses} == {
        "out/t/0/000000000001_1000_1001.json", "out/t/0/000000000003_1002_1003.json"}


def test_P_COMMIT_SAFETY_a_rewind_by_the_suites_lost_offset_commit_is_not_the_sinks():
    body = b"".join(json.dumps({"seq": s}).encode() + b"\n" for s in range(4))
    objs = {"out/t/0/000000000003_1000_1003.json": body}
    rewind = FaultEvent("lose-offset-commit", {}, True, 1500, 1600)
    v = _lenses_run(objs, [(1000, 4), (1550, 0), (2000, 4)], faults=[rewind])
    assert v["commit-safety"].status == PASS
    # lenses-lost-offset-commit of --profile ci: read after the fault began, before the offsets went back
    v = _lenses_run(objs, [(1000, 4), (1520, 4), (1550, 0), (2000, 4)], faults=[rewind])
    assert v["commit-safety"].status == PASS
    v = _lenses_run(objs, [(1000, 4), (1550, 0), (2000, 4)])  # the same step back, no fault: the sink's
    assert v["commit-safety"].status == FAIL and v["commit-safety"].witnesses[0].anomaly == "commit-backwards"


def test_R7_4_a_rule_that_never_fired_after_an_error_inside_completes_200_killed_the_task_is_not_missing():
    """Found by `--profile default` on real 10.6.18: an error inside Complete's 200 killed the SDK
    v1 task, so a 503 rule on UploadPart of the same scenario never fired and the run was unknown.
    No request came for it: it is not a fault the run lacks. It still is where the task was
    brought back after (a worker restart), where it did not end FAILED, and on 11.0.0+ (SDK v2
    retries)."""
    e200 = {"operation": "CompleteMultipartUpload", "action": "error-200", "nth": 1, "name": "f0"}
    late = {"operation": "UploadPart", "action": "fail", "status": 503, "nth": 1, "name": "f1"}
    sc = scenario(6, [FaultStep(1, "s3", e200), FaultStep(3, "s3", late)])
    records = [SinkRecord.from_json({**r, "offset": i}) for i, r in enumerate(sc.records)]

    def data(version: str, status: str, *more: FaultEvent) -> RunData:
        events = [FaultEvent("s3", e200, True, 5_000, 5_100), FaultEvent("s3", late, False), *more]
        obs = Observation(faults=events, statuses=[StatusSample(9999, status, (status,))], quiet=True)
        target = f"kafka-connect:confluent@{version}"
        return RunData(sc, target, obs, claim_for(target, CONFIG, sc.faults, version), None, None, records)

    def not_fired(version: str, status: str, *more: FaultEvent) -> list[str]:
        return data(version, status, *more).faults_not_fired()

    assert not_fired("10.6.18", "FAILED") == []
    # no object before the task died (error-inside-200-with-keys on 10.6.18): the run says why
    assert "error inside CompleteMultipartUpload's 200" in untested_reason(data("10.6.18", "FAILED"))
    assert len(not_fired("10.6.18", "FAILED", FaultEvent("crash", {}, True, 6_000, 9_000))) == 1
    assert len(not_fired("10.6.18", "RUNNING")) == 1
    assert len(not_fired("12.1.9", "FAILED")) == 1


def test_a_rule_armed_while_the_task_was_failed_says_the_sinks_failure_left_it_untried():
    """multipart-crash-in-part-four on Lenses 11.7.2 (`--profile default`): a 412 had failed the
    task before the rule on `.temp-upload/*` was armed, and the crash that brought it back came
    after; the rule's note said only "never fired: 0 matching request(s) seen"."""
    from conformance.judging.untested import dead_while_armed

    trace = "org.apache.kafka.connect.errors.ConnectException: Exiting WorkerSinkTask\n\tat x"
    rule = FaultEvent("s3", {"operation": "PutObject", "matched": 0, "armed_ms": 5_000, "retired_ms": 9_500}, False)
    crash = FaultEvent("crash", {}, True, 9_000, 9_400)
    failed = [StatusSample(t, "RUNNING", ("FAILED",), trace) for t in (4_000, 6_000, 8_000)]
    back = StatusSample(9_450, "RUNNING", ("RUNNING",))
    why = dead_while_armed(rule, Observation(faults=[rule, crash], statuses=[*failed, back]))
    assert why and "FAILED from before the rule was armed until it was brought back" in why
    assert "Exiting WorkerSinkTask" in why
    # running at some sample while it was armed: requests could have come, nothing to excuse
    running = [*failed[:1], StatusSample(6_000, "RUNNING", ("RUNNING",)), failed[2]]
    assert dead_while_armed(rule, Observation(faults=[rule, crash], statuses=running)) is None
    # a rule that saw matching requests (it waited for a later one) is not this case
    seen = FaultEvent("s3", {**rule.params, "matched": 2}, False)
    assert dead_while_armed(seen, Observation(faults=[seen, crash], statuses=failed)) is None


def test_a_table_commits_latency_starts_again_at_the_scenarios_restart_of_its_task():
    """Iceberg's liveness: a record's latency runs from its produce to the first table sample
    holding it, but a task the scenario restarts after it FAILED commits nothing while it waits
    for the restart, so the clock starts again at the restart (the operator's wait is the
    scenario's); the same at the release of an S3 call the scenario held. A stand-in for RunData: only what the check reads."""
    from types import SimpleNamespace

    from adapters.observation import FaultEvent, ProducedRecord
    from conformance.judging.checks.liveness import _late_table_commits

    def run(faults):
        produced = [ProducedRecord("events", 0, 0, None, None, b"{}", at_ms=1_000)]
        sample = SimpleNamespace(at_ms=61_000, objects=("d.parquet",))
        obs = SimpleNamespace(produced=produced, faults=faults, bucket_samples=[sample])
        return SimpleNamespace(target="kafka-connect:iceberg", scenario=SimpleNamespace(connector={}),
                               observation=obs, value_objects=lambda s: s.objects,
                               offsets_of=lambda obj: [(("events", 0), 0)])

    late, worst = _late_table_commits(run([]))
    assert [w.anomaly for w in late] == ["late-commit"] and worst == 60.0
    restarted = FaultEvent("restart-task", {"task": 0}, True, 40_000, 42_000)
    assert _late_table_commits(run([restarted])) == ([], 21.0)
    never = FaultEvent("restart-task", {"task": 0}, False, 40_000)
    assert len(_late_table_commits(run([never]))[0]) == 1
    # a data file's PutObject the scenario held from 5 s to 35 s: the clock starts at its release
    held = FaultEvent("s3", {"operation": "PutObject", "action": "hang"}, True, 5_000, 35_000)
    assert _late_table_commits(run([held])) == ([], 26.0)
    failed_fast = FaultEvent("s3", {"operation": "PutObject", "action": "fail", "status": 500}, True, 5_000, 35_000)
    assert len(_late_table_commits(run([failed_fast]))[0]) == 1
