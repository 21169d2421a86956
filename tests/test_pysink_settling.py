"""Failures `--profile default` found on the simulated Python sink, settled: the simulation
settles as a real worker does (work the sink has scheduled for records it holds, a scheduled
rotation or the rewrite of a file whose completion failed, happens before the run is called
quiet), and the model's boundaries do not bind a zombie that outlives a config update."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from adapters.observation import FaultEvent, Observation
from conformance.judging.claims import C1
from reference_impl.engine.expectation import TaskFailure
from reference_impl.engine.model import cut_at_failure
from conformance.playing.runner import run_scenario, zombie_across_update
from conformance.inputs.scenario import FaultStep, Scenario

FIXTURES = Path(__file__).parent / "fixtures" / "pysink"


def test_R1_5_a_value_object_whose_complete_lost_its_answer_gets_its_keys_object_by_quiet(tmp_path):
    """generated-011 of `--profile default --seed 11784167`, shrunk: ByteArrayFormat with keys,
    rotate.schedule.interval.ms=2000, the answer to the value object's CompleteMultipartUpload
    dropped (S3 applied it), then a crash. The retriable error rewinds the writer (R1.5) and the
    restart rewrites the file set at the next scheduled boundary (R3.4), value then keys (R11.1).
    The run used to be called quiet 0.6 s after the restart, with the value object standing alone;
    Kafka Connect's quiet waits 8 s while the committed offsets are behind the log end, and so
    does the simulation."""
    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    r = run_scenario(sc, "pysink", tmp_path)
    keys = sorted(o.key for o in r.observation.final_bucket.objects)
    assert keys == ["topics/orders/partition=0/orders+0+0000000000.bin",
                    "topics/orders/partition=0/orders+0+0000000000.keys.json"]
    assert r.observation.final_offsets == {"orders-0": 4}
    assert [v.property for v in r.verdicts if v.status == "fail"] == []


def test_C3_a_zombie_woken_after_a_config_update_writes_the_old_boundaries_and_the_model_allows_it(tmp_path):
    """A zombie paused inside a Complete wakes after a config update (flush.size 1 -> 6) and
    finishes the put it was in with flush.size=1, over keys the new task wrote with six: each
    version is whole and every record is in S3, but the files are not the model's phases. The
    model's boundaries are then possible, not required (conformance.playing.runner.boundaries_hold)."""
    sc = Scenario.load(FIXTURES / "zombie-across-config-update.json")
    r = run_scenario(sc, "pysink", tmp_path)
    assert zombie_across_update(r.observation)
    one_record = [o for o in r.observation.final_bucket.objects if o.key.endswith("orders+0+0000000001.bin.gz")]
    assert len(one_record) == 1  # the zombie's version of a key the new task wrote with 4 records
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []


def _held_complete_across_update(pause: bool) -> Scenario:
    """flush.size=3: the first Complete (records 0-2) hangs, flush.size becomes 1, and only then
    is the answer released; with `pause`, the new task is paused meanwhile and another member
    takes over (the shape of the generated zombie)."""
    from conformance.catalog.base import BASE, _small

    wait = [FaultStep(3, "wait-fired", {"rule": "held", "seconds": 30})]
    paused = [FaultStep(6, "pause")] if pause else []
    resumed = [FaultStep(6, "resume")] if pause else []
    return Scenario("held-complete-across-update", {**BASE, "flush.size": "3"}, {"events": 1}, _small(6),
                    faults=[FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 1,
                                                "name": "held"}),
                            *wait, FaultStep(3, "update-config", {"config": {"flush.size": "1"}}),
                            *paused, FaultStep(6, "wait", {"seconds": 1.0}), FaultStep(6, "release", {"rule": "held"}),
                            *resumed, FaultStep(6, "wait", {"seconds": 2.5})])


def test_C4_an_object_a_task_held_across_a_config_update_completes_is_judged_by_its_own_flush_size(tmp_path):
    """generated-392 of `--profile default --seed 2`, rebuilt by hand: a task waiting on its first
    CompleteMultipartUpload (flush.size=3, records 0-2) when flush.size becomes 1 outlives the
    update (Connect abandons a task's thread it cannot stop, spec C4), and completes its
    3-record object once S3 answers. The rotation check judged that object by flush.size=1 (the
    phase its first offset falls in) and failed the correct sink; the task that wrote it ran
    with flush.size=3. A 4-record object would still be oversized for both configs."""
    for pause in (False, True):
        sc = _held_complete_across_update(pause)
        r = run_scenario(sc, "pysink", tmp_path / f"pause-{pause}")
        three = [o for o in r.observation.final_bucket.objects if o.key.endswith("events+0+0000000000.json")]
        assert len(three) == 1 and three[0].body is not None and len(three[0].body.splitlines()) == 3, pause
        rotation = next(v for v in r.verdicts if v.property == "rotation")
        assert rotation.status == "pass", (pause, rotation.message, rotation.witnesses)
        assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == [], pause
        assert zombie_across_update(r.observation)  # so the model's phases do not bind its files either


def test_a_held_answer_is_a_zombie_across_an_update_only_if_it_spans_the_update():
    """The task instance waiting on a held S3 answer outlives an update that comes between the
    answer's hold and its release; its phase is the one the hold began in."""
    from conformance.judging.checks.base import outliving_phases

    def held(at: int, until: int | None) -> FaultEvent:
        return FaultEvent("s3", {"action": "hang"}, True, at_ms=at, until_ms=until)

    update = FaultEvent("update-config", {}, True, at_ms=200, restart_from={})
    second = FaultEvent("update-config", {}, True, at_ms=400, restart_from={})
    assert outliving_phases([held(100, 300), update]) == {0}
    assert outliving_phases([held(100, None), update]) == {0}  # never answered: still waiting
    assert outliving_phases([held(100, 150), update]) == frozenset()  # answered before the update
    assert outliving_phases([update, held(300, 500), second]) == {1}  # held from the second config's task
    assert outliving_phases([FaultEvent("s3", {"action": "fail"}, True, at_ms=100, until_ms=300), update]) == frozenset()


def test_R11_4_a_zombie_hang_before_a_task_killing_null_key_waits_for_a_whole_upload(tmp_path):
    """The run of `--profile default --seed 2` that tested nothing (generated-645 at 7385fd5, before
    1d458d0): a zombie's hang on the first CompleteMultipartUpload (AvroFormat, keys stored, two
    topics), and the tasks after it die at a null key in their first put (R11.4), so no object
    lands and the run is unknown. The generator's last step (that_can_fire) moves such a hang to
    the second Complete: the first upload lands before the task dies, and the run tests it."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "zombie-hang-before-a-null-key.json")
    drawn = run_scenario(sc, "pysink", tmp_path / "drawn")
    assert drawn.status == "unknown" and "R11.4" in (drawn.untested or "")
    faults = that_can_fire(sc.connector, sc.records, sc.faults)
    assert faults[0].params["nth"] == 2 and faults[1:] == sc.faults[1:]
    kept = run_scenario(dataclasses.replace(sc, faults=faults), "pysink", tmp_path / "kept")
    assert kept.untested is None and kept.status == "pass"
    assert any(o.key.endswith(".avro") for o in kept.observation.final_bucket.objects)


def test_a_config_update_after_the_zombie_resumed_leaves_the_boundaries_binding():
    faults = [FaultEvent("pause", {}, True), FaultEvent("update-config", {}, True)]
    assert zombie_across_update(Observation(faults=faults))
    assert not zombie_across_update(Observation(faults=[FaultEvent("pause", {}, True), FaultEvent("resume", {}, True),
                                                        FaultEvent("update-config", {}, True)]))
    assert not zombie_across_update(Observation(faults=[FaultEvent("pause", {}, False),
                                                        FaultEvent("update-config", {}, True)]))


def test_C1_a_record_behind_a_broken_off_commit_of_several_files_is_pending_not_lost(tmp_path):
    """FieldPartitioner: a rotation commits three files of orders-1 one after another; the answer
    to the second Complete is lost (S3 applied it), so orders-1@3 is visible while orders-1@2's
    file is rewound to (C1) and, after a crash and flush.size 4 -> 5, still waits for a fifth
    record. Nothing is committed past it: it is not yet visible, not lost."""
    sc = Scenario.load(FIXTURES / "field-partition-broken-off-commit.json")
    r = run_scenario(sc, "pysink", tmp_path)
    no_loss = next(v for v in r.verdicts if v.property == "no-loss")
    assert C1 in r.claim.caveats
    assert no_loss.status == "pass" and "orders-1@2" in no_loss.details["not_yet_visible"]


def test_C3_a_key_the_first_config_made_visible_is_rewritten_whole_after_the_update(tmp_path):
    """flush.size=1 completes orders+0+0000000001 with one record; nothing is committed before
    a crash, then flush.size becomes 6 and the new task writes the same key with two records.
    The first version is a whole object of the first config (the model keeps it as superseded),
    not a partial one."""
    sc = Scenario.load(FIXTURES / "crash-then-config-update-rewrites-a-key.json")
    r = run_scenario(sc, "pysink", tmp_path)
    key = "topics/orders/year=2024/month=05/day=01/hour=10/orders+0+0000000001.bin.gz"
    assert [len(o.offsets) for o in r.expectation.superseded if o.key == key] == [1]
    assert [len(o.offsets) for o in r.expectation.objects if o.key == key] == [2]
    etags = {o.etag for s in r.observation.bucket_samples for o in s.objects if o.key == key}
    assert len(etags) == 2  # both versions were seen
    visibility = next(v for v in r.verdicts if v.property == "atomic-visibility")
    assert visibility.status == "pass", visibility.witnesses


def test_R1_4_two_writers_failing_in_one_put_leave_neither_writers_part_of_it_certain():
    """Writers run in a shuffled order (R1.4): when orders-0 and orders-2 both meet a record that
    kills the task in the same put, whichever runs first dies before the other writes, so even
    the writer the model names first may have written nothing of that put (generated-016 of
    `--profile ci` with four partitions: the sink died at orders-2@0 before orders-0's file)."""
    f0 = TaskFailure(1, "R11.4", "null key", "orders", 0, None)
    f2 = TaskFailure(0, "R11.4", "null key", "orders", 2, None)
    tps = [("orders", p) for p in range(4)]
    cut = cut_at_failure([f0, f2], tps, None)
    assert cut.failure == f0 and cut.contested
    assert not cut.certain("orders", 0, None)
    alone = cut_at_failure([f0], tps, None)
    assert alone.certain("orders", 0, None) and not alone.certain("orders", 2, None)


def test_R12_1_another_partitions_records_produced_after_a_fatal_null_may_be_written_before_it():
    """A null value with behavior.on.null.values=fail kills the task (R12.1) in a put the model
    cannot place. The consumer's fetches do not follow the produce order across partitions, so
    t-1's record produced after the null may have been put, and its file committed, first:
    real Confluent 12.1.9 did so (`--profile default --seed 13085452`, generated-003: orders-1's
    file of offsets 8-9). The model's files bound that partition from below only."""
    from adapters.observation import BucketSample, Observation, S3Object, StatusSample
    from conformance.judging.checks.base import RunData
    from conformance.judging.checks.run import run_checks
    from conformance.judging.claims import claim_for
    from reference_impl.config import parse_config
    from reference_impl.connect_data import SinkRecord
    from reference_impl.engine.model import expect

    config = {"format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "1",
              "storage.class": "io.confluent.connect.s3.storage.S3Storage", "s3.bucket.name": "b",
              "behavior.on.null.values": "fail", "key.converter": "org.apache.kafka.connect.storage.StringConverter",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    rows = [(0, 0, {"seq": 0}), (0, 1, None), (1, 0, {"seq": 2})]
    sc = Scenario("unit", config, {"t": 2}, [{"topic": "t", "partition": p, "timestamp": 0, "key": None, "value": v,
                                              "headers": []} for p, _, v in rows])
    records = [SinkRecord.from_json({"topic": "t", "partition": p, "offset": o, "timestamp": 0, "key": None,
                                     "value": v, "headers": []}) for p, o, v in rows]
    cfg = parse_config(config)
    exp = expect(cfg, records)
    assert exp.task_failure.rule == "R12.1" and not [o for o in exp.objects if o.partition == 1]
    objects = {"topics/t/partition=0/t+0+0000000000.json": b'{"seq":0}\n',
               "topics/t/partition=1/t+1+0000000000.json": b'{"seq":2}\n'}
    obs = Observation(bucket_samples=[BucketSample(1, tuple(S3Object(k, len(b), k, b) for k, b in objects.items()), ())],
                      statuses=[StatusSample(1, "RUNNING", ("FAILED",))], quiet=True)
    verdicts = {v.property: v for v in run_checks(RunData(sc, "pysink", obs, claim_for("pysink", config, []), cfg,
                                                          exp, records))}
    assert verdicts["exact-object-set"].status == "pass", verdicts["exact-object-set"].witnesses
    assert verdicts["file-count"].status == "pass"


def test_R3_3_a_time_based_partitioner_without_rotate_interval_keeps_several_files_open_so_C1_applies():
    """Partition-change rotation needs rotate.interval.ms (R3.3): without it an HourlyPartitioner
    holds a file per hour open, and a retriable error in their commit rewrites committed records
    (C1), as FieldPartitioner does (`--profile default --seed 3`, generated-090: a late record's
    file waited to be written again while the next hour's file was visible)."""
    from conformance.judging.claims import claim_for
    from conformance.inputs.scenario import FaultStep

    hourly = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "flush.size": "5",
              "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
              "timestamp.extractor": "Record", "locale": "en-US", "timezone": "UTC"}
    lost = [FaultStep(8, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response"})]
    assert C1 in claim_for("confluent", hourly, lost, None).caveats
    assert C1 not in claim_for("confluent", {**hourly, "rotate.interval.ms": "60000"}, lost, None).caveats


def test_R12_3_a_tombstone_keys_file_at_another_offset_is_no_orphan_where_boundaries_do_not_bind(tmp_path):
    """Tombstone files hold keys only (R12.3). Under C1 (FieldPartitioner, a retriable error) the
    rewrite starts a tombstone file at another offset than the model's; with no value object to
    stand beside, it is not an orphan (`--profile default --seed 4`, generated-068)."""
    sc = Scenario.load(FIXTURES / "tombstone-keys-file-rewritten-at-another-offset.json")
    r = run_scenario(sc, "pysink", tmp_path)
    assert any("/tombstone/" in o.key and ".keys." in o.key for o in r.observation.final_bucket.objects)
    contents = next(v for v in r.verdicts if v.property == "contents")
    assert contents.status == "pass", contents.witnesses


def test_R1_4_a_rule_armed_in_the_batch_of_a_fatal_null_is_left_out_of_the_schedule():
    """A null value with behavior.on.null.values=fail fails the put it arrives in before any
    writer runs (R1.4, R12.1): a rule on an upload armed with the records produced in one go
    with the null has nothing to fire on, and the run would end unknown (`--profile default
    --seed 2`, generated-202: rotate.schedule.interval.ms, the null at offset 10)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    recs = [dict(r) for r in sc.records] + [{**sc.records[0], "value": None}]
    cfg = {**sc.connector, "behavior.on.null.values": "fail"}
    rule = FaultStep(1, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response", "nth": 1,
                               "name": "f0"})
    assert [f.kind for f in that_can_fire(cfg, recs, [rule, FaultStep(5, "crash")])] == ["crash"]


def test_C3_a_rule_armed_before_a_config_update_counts_the_uploads_of_the_new_config_too():
    """The records before a config update may be read only after it (no poll came between) and
    are then written under the new config: with flush.size 1 -> 3 and one record, the second
    Complete never comes (`--profile ci`, generated-013 with four partitions, left unknown)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    cfg = {k: v for k, v in sc.connector.items() if k != "rotate.schedule.interval.ms"}
    cfg["flush.size"] = "1"
    rule = FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "error-200", "nth": 2, "name": "f0"})
    update = FaultStep(1, "update-config", {"config": {"flush.size": "3"}})
    assert [f.kind for f in that_can_fire(cfg, sc.records[:1], [rule, update])] == ["update-config"]
    assert [f.kind for f in that_can_fire(cfg, sc.records[:1], [rule])] == ["s3"]


def test_R3_4_no_scheduled_rotation_is_counted_for_a_batch_the_task_dies_in():
    """Scheduled rotation commits at a put after the boundary (R3.4): records held in the batch
    a null key kills the task in (R11.4) are never committed by it, so a rule that waits for
    their upload cannot fire (`--profile default --seed 16`, generated-126, left unknown)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    recs = [dict(r) for r in sc.records]
    recs[2] = {**recs[2], "key": None}
    rule = FaultStep(1, "s3", {"operation": "UploadPart", "action": "hang", "nth": 2, "name": "f0"})
    steps = [rule, FaultStep(4, "wait-fired", {"rule": "f0", "seconds": 30}), FaultStep(4, "crash")]
    assert [f.kind for f in that_can_fire(sc.connector, recs, steps)] == ["crash"]


def test_R1_4_a_restart_right_after_records_does_not_cut_their_batch_from_the_fatal_nulls():
    """A rebalance right after records are produced may come before the sink read any of them:
    its successor reads them with what follows, up to a fatal null, in one put that fails before
    any write (R1.4). Only a step that lets the sink poll (quiet, wait, wait-fired, pause) cuts
    the stream (`--profile default --seed 12`, generated-128, left unknown)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    recs = [dict(r) for r in sc.records] + [{**sc.records[0], "value": None}]
    cfg = {**sc.connector, "behavior.on.null.values": "fail"}
    rule = FaultStep(0, "s3", {"operation": "UploadPart", "action": "fail", "status": 500, "nth": 2, "name": "f0"})
    assert [f.kind for f in that_can_fire(cfg, recs, [rule, FaultStep(2, "rebalance")])] == ["rebalance"]
    polled = [rule, FaultStep(2, "quiet", {"seconds": 30}), FaultStep(2, "rebalance")]
    assert [f.kind for f in that_can_fire(cfg, recs, polled)] == ["s3", "quiet", "rebalance"]


def test_R1_4_a_rule_left_for_after_a_restart_that_dies_in_its_first_put_is_left_out_of_the_schedule():
    """A crash mid-upload: the restarted task re-reads from the committed offsets all that was
    produced before it first polls, a null under behavior.on.null.values=fail among it, and dies
    before any write (R1.4, R12.1). A lost Complete armed before the crash and waited for after it
    has only the uploads before the crash, where the hang held the sink: it never fired
    (`--profile default --seed 11784167`, generated-202, left unknown). The hang the crash waits
    for stays."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-before-a-restart-that-dies.json")
    kept = that_can_fire(sc.connector, sc.records, sc.faults)
    assert [(f.kind, f.params.get("name") or f.params.get("rule")) for f in kept] == [
        ("s3", "f0-crash-mid-upload"), ("wait-fired", "f0-crash-mid-upload"), ("crash", None),
        ("release", "f0-crash-mid-upload"), ("wait", None), ("crash", None), ("wait", None)]
    # the restart polls before the null is produced: it writes again, and the rule stays
    polled = sc.faults[:5] + [FaultStep(8, "quiet", {"seconds": 30})] + sc.faults[5:]
    assert "f1-lost-commit" in [f.params.get("name") for f in that_can_fire(sc.connector, sc.records, polled)]


def test_R3_1_R3_10_a_commit_of_several_files_cut_by_a_crash_leaves_its_records_pending_when_the_task_dies(tmp_path):
    """FieldPartitioner: orders-1's rotation completes vip=null's file (offsets 0 and 5) and hangs
    in the next; the sink crashes, and its restart dies at once at a null under
    behavior.on.null.values=fail. Offsets 1-4 were never committed: pending, not lost, although
    a later offset is visible (`--profile default --seed 11784167`, generated-203)."""
    sc = Scenario.load(FIXTURES / "commit-cut-by-a-crash-then-a-fatal-null.json")
    r = run_scenario(sc, "pysink", tmp_path)
    no_loss = next(v for v in r.verdicts if v.property == "no-loss")
    assert no_loss.status == "pass", no_loss.witnesses
    assert {"orders-1@1", "orders-1@4"} <= set(no_loss.details["not_yet_visible"])
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []


def test_a_hang_armed_while_another_holds_the_sink_is_left_out_of_the_schedule():
    """Two crash-mid-upload faults armed together: the first hang parks the sink, so the second
    waits for requests that never come while it is parked, and its run would end unknown
    (`--profile default --seed 15`, generated-054)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    cfg = {k: v for k, v in sc.connector.items() if k != "rotate.schedule.interval.ms"}
    cfg["flush.size"] = "1"

    def hang(name: str, nth: int) -> FaultStep:
        return FaultStep(0, "s3", {"operation": "UploadPart", "action": "hang", "nth": nth, "name": name})

    steps = [hang("a", 2), hang("b", 1), FaultStep(3, "wait-fired", {"rule": "a", "seconds": 30}),
             FaultStep(3, "crash"), FaultStep(3, "release", {"rule": "a"}),
             FaultStep(4, "wait-fired", {"rule": "b", "seconds": 30}), FaultStep(4, "crash"),
             FaultStep(4, "release", {"rule": "b"})]
    kept = that_can_fire(cfg, sc.records, steps)
    assert [(f.kind, f.params.get("name") or f.params.get("rule")) for f in kept] == [
        ("s3", "a"), ("wait-fired", "a"), ("crash", None), ("release", "a"), ("crash", None)]


def test_R1_4_the_batch_the_task_dies_in_is_the_first_with_any_writers_failing_record():
    """The model names one failing writer (the first by topic-partition), but writers run in a
    shuffled order (R1.4): the task dies in the first batch holding any writer's failing record,
    and no scheduled rotation commits what that batch holds (`--profile default --seed 19`,
    generated-100: orders-1@0 had no headers, the model named orders-0@1)."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    recs = [{**sc.records[0], "partition": 1, "key": None}] + [dict(r) for r in sc.records]
    recs[4] = {**recs[4], "key": None}  # orders-0's own failure comes later in the stream
    rule = FaultStep(1, "s3", {"operation": "UploadPart", "action": "fail", "status": 500, "nth": 1, "name": "f0"})
    steps = [rule, FaultStep(2, "wait", {"seconds": 1.0}), FaultStep(5, "crash")]
    assert [f.kind for f in that_can_fire(sc.connector, recs, steps)] == ["wait", "crash"]


def test_C1_R12_3_a_tombstone_keys_file_cut_short_by_a_retriable_error_holds_a_run_of_its_tombstones(tmp_path):
    """`--profile default --seed 10`, shrunk: behavior.on.null.values=write with keys stored,
    flush.size=2, a 503 on the second CreateMultipartUpload. The retriable error rewinds the
    writer (R1.5), which then cuts the tombstone file at another record than the model's: its keys
    object starts at the offset its key names and holds fewer tombstones. Under C1 the model's
    boundaries do not bind, so contents compares it with the tombstones from that offset on, as
    many as it holds (it used to be held to the model's file and failed)."""
    sc = Scenario.load(FIXTURES / "tombstone-keys-file-cut-by-a-503.json")
    r = run_scenario(sc, "pysink", tmp_path)
    assert C1 in r.claim.caveats
    keys = [o for o in r.observation.final_bucket.objects if o.key.endswith("tombstone/orders+0+0000000002.keys.json")]
    assert len(keys) == 1 and keys[0].body.count(b"\n") == 1
    contents = next(v for v in r.verdicts if v.property == "contents")
    assert contents.status == "pass" and contents.details["checked"] > 0


def test_R3_1_a_rule_under_the_wallclock_extractor_counts_only_the_uploads_flush_size_makes_sure_of(tmp_path):
    """Wallclock extractor, rotate.interval.ms=1000, flush.size=7 (`--profile default --seed 3`,
    generated-158): pauses early on rotated files of 2 and 3 records, so every later flush.size
    boundary moved (R3.1: each rotation starts a new count), and the lost-Complete rule armed
    at record 29 waited for an upload the model's one-instant count put among records 29-31,
    which three records on one partition never make: the run ended unknown. Only floor(m /
    flush.size) of the m records after the rule are sure to close a file; here none, so the
    rule goes (the crash it staged stays), and the run is judged."""
    from conformance.generators.faults import that_can_fire

    sc = Scenario.load(FIXTURES / "wallclock-lost-commit-after-shifted-boundaries.json")
    kept = that_can_fire(sc.connector, sc.records, sc.faults)
    assert [f.kind for f in kept] == ["wait", "wait", "wait", "crash"]
    r = run_scenario(dataclasses.replace(sc, faults=kept), "pysink", tmp_path)
    assert r.status == "pass", [(v.property, v.status) for v in r.verdicts if v.status != "pass"]


def _hang_across_update(operation: str) -> Scenario:
    """flush.size=3 on Record time; the first file's `operation` hangs; flush.size becomes 6 (a
    graceful restart that cannot wait for the hung instance), the new task writes and commits
    offsets 0-5 as one file; then the hang is released."""
    config = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "s3.bucket.name": "sinkcheck",
              "storage.class": "io.confluent.connect.s3.storage.S3Storage", "flush.size": "3",
              "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
              "key.converter": "org.apache.kafka.connect.storage.StringConverter",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
    recs = [{"topic": "t", "partition": 0, "timestamp": 1714557600000 + i, "key": None, "value": {"seq": i},
             "headers": []} for i in range(9)]
    return Scenario("hang-across-update", config, {"t": 1}, recs, [
        FaultStep(0, "s3", {"operation": operation, "action": "hang", "nth": 1, "name": "hung"}),
        FaultStep(3, "wait-fired", {"rule": "hung", "seconds": 10.0}),
        FaultStep(3, "update-config", {"config": {"flush.size": "6"}}),
        FaultStep(9, "wait", {"seconds": 1.0}),
        FaultStep(9, "release", {"rule": "hung"}),
        FaultStep(9, "wait", {"seconds": 1.0})])


def test_R1_8_an_instance_stopped_inside_a_hung_upload_completes_nothing_over_the_new_tasks_object(tmp_path):
    """The instance the update stopped was parked in the UploadPart of t+0+0 (offsets 0-2); the
    restart went ahead without it and the new task committed t+0+0 with offsets 0-5. Released,
    the old instance used to complete its stale 3-record upload over that key: offsets 3-5
    gone, committed (no-loss, commit-safety). Asked to stop, it now completes nothing: it
    aborts its upload and exits, committing nothing."""
    r = run_scenario(_hang_across_update("UploadPart"), "pysink", tmp_path)
    assert [(f.kind, f.fired) for f in r.observation.faults if f.kind == "s3"] == [("s3", True)]
    final = r.observation.final_bucket
    assert [(o.key, o.body.count(b"\n")) for o in final.objects] == [("topics/t/partition=0/t+0+0000000000.json", 6)]
    assert final.open_uploads == ()
    assert r.observation.final_offsets == {"t-0": 6}
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []


def test_R1_8_a_hung_upload_across_a_config_update_under_scheduled_rotation_loses_nothing(tmp_path):
    """`sinkcheck run --target pysink` generated-521, shrunk: ByteArrayFormat with keys and
    headers, HourlyPartitioner on Wallclock, rotate.schedule.interval.ms=2000, flush.size 3 -> 6.
    The first instance hangs in the UploadPart of orders+0+3 (offsets 3-5); after the update the
    second writes orders+0+3 with offsets 3-8, commits 15 and dies at offset 19 (no headers,
    R11.4); a crash, then the release: the first instance's Complete replaced the 6-record object
    with its 3 records, and orders-0@6-8 were lost behind committed offset 15."""
    sc = Scenario.load(FIXTURES / "hang-across-config-update-wallclock.json")
    r = run_scenario(sc, "pysink", tmp_path)
    key = "topics/orders/year=2026/month=01/day=01/hour=00/orders+0+0000000003.bin"
    assert [o.body.count(b"\n") for o in r.observation.final_bucket.objects if o.key == key] == [6]
    assert r.observation.final_bucket.open_uploads == ()
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []


def test_C4_a_complete_held_past_the_tasks_eviction_lands_late_and_is_a_zombie(tmp_path):
    """generated-152 of `--profile default --seed 7`, shrunk: ByteArrayFormat with keys,
    rotate.schedule.interval.ms=3000, flush.size=3. A task's CompleteMultipartUpload hangs; the
    task is evicted (a crash, a worker leaving) and its successor commits orders+0+0 with two
    records and the keys beside it; then S3 answers the held Complete and the evicted task's
    one-record value object replaces the successor's. That is C4 (a zombie), though no task was
    paused: no-loss and commit-safety are measured, not claimed, and the successor's keys
    object beside the zombie's value object is compared with nothing."""
    from conformance.judging.claims import C4, late_completion

    sc = Scenario.load(FIXTURES / "complete-held-past-a-worker-removal.json")
    assert late_completion(sc.faults)
    r = run_scenario(sc, "pysink", tmp_path)
    claim = next(v for v in r.verdicts if v.property == "contents")
    assert claim.claimed
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []
    # the overwrite happened: the model's loss is measured, and the run says why it is allowed
    assert {v.property for v in r.verdicts if v.status == "fail"} == {"no-loss", "commit-safety"}
    assert C4 in r.claim.caveats


def test_C4_a_held_complete_released_before_any_eviction_is_no_zombie():
    hang = FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 1, "name": "h"})
    release = FaultStep(2, "release", {"rule": "h"})
    from conformance.judging.claims import late_completion

    assert not late_completion([hang, release, FaultStep(3, "crash")])
    assert late_completion([hang, FaultStep(1, "remove-worker"), release])
    assert not late_completion([FaultStep(0, "s3", {"operation": "UploadPart", "action": "hang", "name": "h"}),
                                FaultStep(1, "crash"), release])
