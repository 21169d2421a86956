"""Generated fault schedules only hold S3 rules that can fire: the model says how many uploads
come after a rule is armed, so a rule waiting for more is made to wait for the last of them,
and one with none to wait for is dropped with its steps (a crash it staged stays)."""
from __future__ import annotations

from hypothesis import given

from conformance.catalog.base import BASE, _small
from conformance.inputs.scenario import FaultStep
from conformance.generators.configs import CONFLUENT_FORMATS
from conformance.generators.faults import may_stop_the_task, that_can_fire, uploads_after
from conformance.generators.strategies import scenarios
from conformance.generators.testable import fatal_after_a_commit


def _steps(kinds):
    return [f.kind for f in kinds]


def test_uploads_after_counts_the_objects_the_model_commits_from_each_point():
    cfg = {**BASE, "flush.size": "4"}
    recs = _small(10)  # files [0..3] and [4..7] close at records 3 and 7; 8, 9 stay open
    assert uploads_after(cfg, recs) == [2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0]
    keys = {**cfg, "store.kafka.keys": "true", "keys.format.class": BASE["format.class"]}
    assert uploads_after(keys, recs)[0] == 4  # a keys object beside each value object
    scheduled = uploads_after({**cfg, "rotate.schedule.interval.ms": "2000", "timezone": "UTC"}, recs)
    assert scheduled[0] == 2 and scheduled[8] == 1 and scheduled[10] == 0  # 8, 9 are committed at a boundary
    wallclock = {**cfg, "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                 "locale": "en-US", "timezone": "UTC", "flush.size": "7"}
    assert uploads_after(wallclock, recs) == [1] * 7 + [0] * 4  # only flush.size closes a file


def test_a_rule_waiting_for_more_uploads_than_come_waits_for_the_last():
    cfg, recs = {**BASE, "flush.size": "4"}, _small(10)
    rule = FaultStep(2, "s3", {"operation": "UploadPart", "action": "hang", "nth": 3, "name": "f0-crash-mid-upload"})
    [fixed] = that_can_fire(cfg, recs, [rule])
    assert fixed.params["nth"] == 2 and fixed.params["operation"] == "UploadPart"


def test_a_rule_something_waits_for_counts_only_the_uploads_before_that_wait():
    cfg, recs = {**BASE, "flush.size": "4"}, _small(10)
    name = "f0-crash-mid-upload"
    steps = [FaultStep(2, "s3", {"operation": "UploadPart", "action": "hang", "nth": 2, "name": name}),
             FaultStep(5, "wait-fired", {"rule": name, "seconds": 30})]  # only file [0..3] closes before 5
    assert that_can_fire(cfg, recs, steps)[0].params["nth"] == 1
    steps[1] = FaultStep(3, "wait-fired", {"rule": name, "seconds": 30})  # record 3 is not produced yet
    assert that_can_fire(cfg, recs, steps) == []


def test_a_rule_with_nothing_to_wait_for_is_dropped_with_its_steps_but_the_crash_stays():
    cfg, recs = {**BASE, "flush.size": "4"}, _small(10)
    name = "f0-crash-mid-upload"
    steps = [FaultStep(8, "s3", {"operation": "UploadPart", "action": "hang", "nth": 1, "name": name}),
             FaultStep(9, "wait-fired", {"rule": name, "seconds": 6}), FaultStep(9, "crash"),
             FaultStep(9, "release", {"rule": name})]
    assert _steps(that_can_fire(cfg, recs, steps)) == ["crash"]


def test_a_zombie_without_its_hung_complete_is_dropped_whole():
    cfg, recs = {**BASE, "flush.size": "4"}, _small(10)
    name = "f1-zombie"
    steps = [FaultStep(8, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 1, "name": name}),
             FaultStep(9, "wait-fired", {"rule": name, "seconds": 6}), FaultStep(9, "pause"),
             FaultStep(10, "wait", {"seconds": 1}), FaultStep(10, "release", {"rule": name}), FaultStep(10, "resume")]
    assert _steps(that_can_fire(cfg, recs, steps)) == ["wait"]


@given(scenarios(max_records=16, formats=CONFLUENT_FORMATS))
def test_every_generated_rule_on_an_upload_has_uploads_to_fire_on(sc):
    # counted as the generator counts them: the puts cut where a step lets the sink poll
    cuts = sorted({min(f.after, len(sc.records)) for f in sc.faults if f.kind in ("quiet", "wait", "wait-fired", "pause")})
    counts = uploads_after(sc.connector, sc.records, cuts)
    updated = {**sc.connector, **{k: v for f in sc.faults if f.kind == "update-config" for k, v in f.params["config"].items()}}
    if counts and updated != sc.connector:  # the records before an update may be written under the new config
        counts = [min(a, b) for a, b in zip(counts, uploads_after(updated, sc.records, cuts) or counts)]
    waits = {f.params["rule"]: f.after for f in sc.faults if f.kind == "wait-fired"}
    for f in sc.faults:
        if counts and f.kind == "s3":
            before_wait = counts[waits[f.params["name"]]] if f.params["name"] in waits else 0
            assert 1 <= int(f.params.get("nth", 1)) <= counts[min(f.after, len(sc.records))] - before_wait, (f, counts)
        if may_stop_the_task(f) and f.params.get("operation") != "AbortMultipartUpload" and f.params.get("state") != "applied":
            assert int(f.params["nth"]) >= 2, f  # the first upload after it is armed lands


def test_an_s3_answer_a_sink_dies_on_leaves_the_first_upload_after_it_is_armed_to_land():
    """--profile ci on pysink had generated-017 end `unknown`, tested nothing: a 403 AccessDenied on
    the first CompleteMultipartUpload after it was armed killed the task before any object. Such
    an answer now takes the second Create or Complete (the first upload then lands, and its value
    object with it, R11.1), the UploadPart after a whole upload's parts, or is dropped where the
    model counts no second upload; what every client retries stays where it was drawn."""
    cfg, recs = {**BASE, "flush.size": "4"}, _small(10)  # two files close, at records 3 and 7

    def status(op, code, status=403, nth=1, at=0):
        return FaultStep(at, "s3", {"operation": op, "action": "fail", "status": status, "code": code, "nth": nth,
                                    "name": "f0-s3-status"})

    [fatal] = that_can_fire(cfg, recs, [status("CompleteMultipartUpload", "AccessDenied")])
    assert fatal.params["nth"] == 2
    assert that_can_fire(cfg, recs, [status("CreateMultipartUpload", "NoSuchBucket", 404)])[0].params["nth"] == 2
    assert that_can_fire(cfg, recs, [status("CompleteMultipartUpload", "AccessDenied", at=4)]) == []  # one file after 4
    [retried] = that_can_fire(cfg, recs, [status("CompleteMultipartUpload", "", 503)])
    assert retried.params["nth"] == 1
    from conformance.generators.large_records import LARGE_VALUE_BYTES, MIN_PART_SIZE, padded

    big = [{**r, "value": padded(r["value"], LARGE_VALUE_BYTES)} if i == 0 else r for i, r in enumerate(recs)]
    parted = {**cfg, "s3.part.size": str(MIN_PART_SIZE)}  # the first file's upload takes two parts
    assert that_can_fire(parted, big, [status("UploadPart", "AccessDenied")]) == []  # two uploads: no third part counted
    assert that_can_fire(cfg, recs, [status("UploadPart", "AccessDenied")])[0].params["nth"] == 2


def test_a_seed_draws_the_same_scenarios_whatever_the_process_imported(monkeypatch):
    """Hypothesis draws now and then from the literals of the project's modules imported so far
    (hypothesis.internal.conjecture.providers._get_local_constants): `sinkcheck run --profile ci`
    drew 40 of its 88 generated scenarios otherwise once the named runs had imported the model
    and the adapters, and bench/coverage.py's generated-only run played a scenario (a 403 on the
    first Complete) that ./dev main never did. Under seed_only_draws another pool of literals
    changes nothing (without it these ten scenarios change). The pool is swapped here
    rather than grown by an import: a grown one would stay for every later test of the process."""
    import pytest

    providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
    constants_ast = pytest.importorskip("hypothesis.internal.constants_ast")
    if not hasattr(providers, "_get_local_constants"):
        pytest.skip("this Hypothesis draws from no local constants")
    from conformance.playing.generated import generated_scenarios

    before = [sc.dumps() for sc in generated_scenarios(10, None, True, 30, kinds=("pysink",))]
    literals = constants_ast.Constants(integers=set(range(-3, 200, 7)), strings={f"w{i}" for i in range(40)})
    monkeypatch.setattr(providers, "_get_local_constants", lambda: literals)
    monkeypatch.setattr(providers, "CONSTANTS_CACHE", type(providers.CONSTANTS_CACHE)(1024))
    assert [sc.dumps() for sc in generated_scenarios(10, None, True, 30, kinds=("pysink",))] == before


def test_R1_4_R12_1_a_fatal_null_comes_in_a_put_after_records_that_commit_an_object():
    """A null value under behavior.on.null.values=fail fails its whole put before any writer
    runs (R1.4, R12.1): drawn amid the records of one put it left nothing to compare (14-17% of
    generated runs tested nothing). The fewest records that commit an object go first, the sink
    settles on them, and the null comes after."""
    cfg = {**BASE, "flush.size": "2", "behavior.on.null.values": "fail"}
    recs = _small(4)
    null = {**recs[1], "value": None}
    stream, put = fatal_after_a_commit(cfg, [recs[0], null, recs[2], recs[3]])
    assert stream == [recs[0], recs[2], null, recs[3]] and put == 2
    # the model on that schedule: the first put's records are committed before the task dies
    from conformance.inputs.connector_config import sink_config
    from conformance.generators.testable import placed_offsets
    from conformance.inputs.wire import sink_records
    from reference_impl.engine.model import PutSpec, expect

    exp = expect(sink_config(cfg), sink_records(cfg, stream, placed_offsets(stream)), [PutSpec(0, 2), PutSpec(1, 2)])
    assert exp.task_failure is not None and [list(o.offsets) for o in exp.objects if o.certain] == [[0, 1]]
    # a null key with keys stored (R11.4) too; under scheduled rotation one record is enough (the
    # boundary commits it while the sink settles)
    keys = {**cfg, "store.kafka.keys": "true", "keys.format.class": BASE["format.class"],
            "behavior.on.null.values": "ignore"}
    nokey = {**recs[1], "key": None}
    assert fatal_after_a_commit(keys, [nokey, recs[0], recs[2]]) == ([recs[0], recs[2], nokey], 2)
    headers = {**cfg, "store.kafka.headers": "true", "headers.format.class": BASE["format.class"],
               "behavior.on.null.values": "ignore"}
    bare = {**recs[1], "headers": []}  # no headers at all (R11.4)
    assert fatal_after_a_commit(headers, [bare] + [{**r, "headers": [["h", "1"]]} for r in recs[2:]])[1] == 2
    sched = {**cfg, "flush.size": "5", "rotate.schedule.interval.ms": "2000", "timezone": "UTC"}
    assert fatal_after_a_commit(sched, [null, recs[0], recs[2]]) == ([recs[0], null, recs[2]], 1)
    # nothing the other records commit: the stream stays as drawn
    assert fatal_after_a_commit({**cfg, "flush.size": "5"}, [null, recs[0]]) == ([null, recs[0]], None)
    assert fatal_after_a_commit(cfg, recs) == (recs, None)


def test_R7_a_generated_field_partitioner_config_keeps_its_open_files_buffers_within_a_worker_heap():
    """Found by --profile default on real 10.6.18: FieldPartitioner on `tier` with 19 values in a
    put, keys and headers stored: 57 open files of a 25 MiB part buffer each, the Connect worker
    (768 MiB) died with OutOfMemoryError and the run failed no-loss. Generated FieldPartitioner
    configs take the smallest part size S3 allows."""
    from conformance.playing.generated import generated_scenarios
    from conformance.playing.session import PROFILES, SIMULATED_EXAMPLES

    _, derandomize, max_records = PROFILES["ci"]
    field = [sc for sc in generated_scenarios(SIMULATED_EXAMPLES["ci"], None, derandomize, max_records)
             if sc.connector.get("partitioner.class", "").endswith("FieldPartitioner")]
    assert field
    for sc in field:
        # an open file per encoded partition of each topic-partition, and its keys and headers files
        fields = [f.strip() for f in sc.connector["partition.field.name"].split(",")]
        open_files = {(r["topic"], r["partition"], tuple(str(r["value"].get("payload", r["value"]).get(f)) for f in fields))
                      for r in sc.records if isinstance(r["value"], dict)}
        files = 1 + (sc.connector.get("store.kafka.keys") == "true") + (sc.connector.get("store.kafka.headers") == "true")
        buffers = len(open_files) * files * int(sc.connector.get("s3.part.size", 26_214_400))
        assert buffers < 768 * 2 ** 20, (sc.connector, len(open_files))


def test_a_hang_held_past_a_restart_that_dies_at_once_leaves_the_first_upload_after_it_is_armed_to_land():
    """Issue 38: generated-068 of --profile ci on pysink under default-topics-orders (flush.size=1)
    hung the first UploadPart after record 3 and crashed the task at 10; its successor read the
    tombstone at 9 in its first put and died before any write (R1.4), so no object had landed and
    the run tested nothing. Such a hang now takes the UploadPart after a whole upload; without a
    restart that dies it stays on the first."""
    # the config: flush.size=1 and scheduled rotation (the model counts the uploads of a
    # stream with a fatal tombstone by its boundaries)
    cfg = {**BASE, "topics": "events", "flush.size": "1", "rotate.schedule.interval.ms": "60000",
           "timezone": "Asia/Seoul"}
    # on two partitions, as generated-068's: the model counts a sure upload for each under the schedule
    recs = [{**r, "partition": i % 2, "value": None if i == 9 else r["value"]} for i, r in enumerate(_small(12))]
    hang = FaultStep(3, "s3", {"operation": "UploadPart", "action": "hang", "nth": 1, "name": "f1-crash-mid-upload"})
    # the generator's settle before the tombstone (fatal_after_a_commit), then the crash-mid-upload
    crash = [FaultStep(9, "quiet", {"seconds": 30}), FaultStep(10, "wait-fired", {"rule": "f1-crash-mid-upload", "seconds": 30.0}), FaultStep(10, "crash", {}),
             FaultStep(10, "release", {"rule": "f1-crash-mid-upload"}), FaultStep(11, "wait", {"seconds": 1.0})]
    assert that_can_fire(cfg, recs, [hang] + crash)[0].params["nth"] == 2
    alive = [{**r, "value": r["value"] if r["value"] is not None else {"seq": 9, "ts": r["timestamp"]}} for r in recs]
    assert that_can_fire(cfg, alive, [hang] + crash)[0].params["nth"] == 1


def test_R8_1_a_412_on_complete_is_drawn_only_where_the_complete_is_conditional():
    """S3 answers 412 only to a request with a condition: under a config whose Complete carries
    none (no scheduled rotation, or keys stored) a drawn 412, and the HeadObject answer that
    follows it, are not played (seen on real 12.1.9: a 412 on an unconditional Complete, which
    no S3 sends, drew a duplicate)."""
    from conformance.generators.faults import FOLLOWS, status_params

    recs = _small(10)
    steps = [FaultStep(0, "s3", status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "f0", 1, "applied")),
             FaultStep(0, "s3", status_params(403, "AccessDenied", "HeadObject", "f0" + FOLLOWS)),
             FaultStep(4, "s3", status_params(503, "SlowDown", "UploadPart", "f1"))]
    plain = {**BASE, "flush.size": "4"}
    assert [f.params["name"] for f in that_can_fire(plain, recs, steps)] == ["f1"]
    conditional = {**plain, "rotate.schedule.interval.ms": "3600000", "timezone": "UTC"}
    assert [f.params["name"] for f in that_can_fire(conditional, recs, steps)] == ["f0", "f0" + FOLLOWS, "f1"]
    keys = {**conditional, "store.kafka.keys": "true", "keys.format.class": BASE["format.class"]}
    assert [f.params["name"] for f in that_can_fire(keys, recs, steps)] == ["f1"]


def _keys(cfg: dict) -> dict:
    return {**cfg, "store.kafka.keys": "true", "keys.format.class": BASE["format.class"]}


def test_R11_4_a_null_key_comes_after_records_that_commit_under_the_config_an_update_sets_before_it():
    """--profile thorough (seed 1) drew generated-316: keys stored, flush.size=5, five records of
    one partition ahead of a null key, and an update to flush.size=6 after record 4. The settle came
    after the five, which the restarted task read again under flush.size=6 and left open; the
    sixth record, appended for the updated config (closing_a_file), came after the null key, which
    killed the task with no object written. The records that go first now commit an object under
    every config the faults update to before the fatal put, the appended ones included."""
    from conformance.generators.testable import closing_a_file, settled_before_the_fatal_put
    from conformance.inputs.scenario import Scenario

    cfg = _keys({**BASE, "flush.size": "5"})
    recs = _small(5)
    nokey = {**recs[1], "key": None, "value": {"seq": 5, "ts": recs[1]["timestamp"]}}
    update = FaultStep(4, "update-config", {"config": {"flush.size": "6"}})
    drawn = Scenario("generated", cfg, {"events": 1}, recs + [nokey], [update])
    closed = closing_a_file({**cfg, "flush.size": "6"}, drawn.records)  # as the strategy appends for the update
    assert len(closed) == 7 and closed[:6] == drawn.records
    sc = settled_before_the_fatal_put(cfg, Scenario("generated", cfg, {"events": 1}, closed, [update]))
    assert sc.records == closed[:5] + [closed[6], nokey]
    assert [(f.after, f.kind) for f in sc.faults] == [(4, "update-config"), (6, "quiet")]
    # without the update the drawn config's five go first, as before
    plain = settled_before_the_fatal_put(cfg, Scenario("generated", cfg, {"events": 1}, closed, []))
    assert plain.records == closed and [(f.after, f.kind) for f in plain.faults] == [(5, "quiet")]
    # an update with the fatal put or after it: the settle before it commits the five
    later = FaultStep(5, "update-config", {"config": {"flush.size": "6"}})
    assert settled_before_the_fatal_put(cfg, Scenario("generated", cfg, {"events": 1}, closed, [later])).records == closed
    # an update no head commits under: the drawn config's head still goes first
    huge = FaultStep(4, "update-config", {"config": {"flush.size": "9"}})
    assert fatal_after_a_commit(cfg, closed, [huge]) == (closed, 5)


def test_R11_4_R6_7_a_null_key_comes_after_records_that_commit_at_the_clock_the_run_plays_them_at():
    """--profile thorough (seed 1) drew generated-420: Wallclock with rotate.interval.ms=1000,
    behavior.on.null.values=write, flush.size=4, a tombstone and three records of one partition
    ahead of a null key. Read at a clock of 0 the four made one flush.size file; played, the
    tombstone's time is its record timestamp (2024) and the next record's the clock's (2026), so
    the tombstone's file rotated alone (R3.2, R6.7), the three stayed open and the null key killed
    the task. The head is now read at PLAYED_AT, after every record's timestamp."""
    from conformance.generators.testable import PLAYED_AT

    from adapters.pysink.targets.simulation import SIM_START_MS

    assert PLAYED_AT == SIM_START_MS  # where the embedded sink's clock starts
    cfg = _keys({**BASE, "flush.size": "3", "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
                 "locale": "en-US", "timezone": "UTC", "timestamp.extractor": "Wallclock",
                 "rotate.interval.ms": "1000", "behavior.on.null.values": "write"})
    recs = _small(4)
    tomb, nokey = {**recs[0], "value": None}, {**recs[3], "key": None}
    drawn = [tomb, recs[1], recs[2], nokey, recs[3]]
    stream, put = fatal_after_a_commit(cfg, drawn)
    assert (stream, put) == ([tomb, recs[1], recs[2], recs[3], nokey], 4)
    # the model on the head as the simulation plays it: a value object of the three records
    from conformance.generators.testable import placed_offsets
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.wire import sink_records
    from reference_impl.engine.model import PutSpec, expect

    head = stream[:put]
    exp = expect(sink_config(cfg), sink_records(cfg, head, placed_offsets(head)), [PutSpec(SIM_START_MS, put)])
    assert [list(o.offsets) for o in exp.objects if o.value_object] == [[1, 2, 3]]


def test_R7_4_R12_3_a_fatal_s3_answer_waits_past_a_tombstones_files_for_a_value_object():
    """--profile thorough (seed 1) drew generated-450: flush.size=2, keys and headers stored,
    behavior.on.null.values=write, a tombstone and a record, and a 409 OperationAborted on the
    second CreateMultipartUpload. The first upload was the tombstone's keys file (R12.3: a
    tombstone's file has no value object), the second its headers file: the task died with no
    value object in the bucket. The answer now waits past the uploads that may come before the
    first value object (both of the tombstone's files), then past that value object's."""
    from conformance.generators.faults import status_params, uploads_before_a_value_object

    cfg = {**_keys({**BASE, "flush.size": "2", "behavior.on.null.values": "write"}), "store.kafka.headers": "true",
           "headers.format.class": BASE["format.class"]}
    recs = [{**r, "headers": [["h", str(i)]]} for i, r in enumerate(_small(2))]
    tomb = {**recs[0], "value": None}
    assert uploads_before_a_value_object(cfg, [tomb, recs[1]], 0) == 2
    rule = FaultStep(1, "s3", status_params(409, "OperationAborted", "CreateMultipartUpload", "f0-s3-status"))
    [placed] = that_can_fire(cfg, [tomb, recs[1]], [rule])
    assert placed.params["nth"] == 4  # the tombstone's keys and headers, the value object, then its keys file
    assert that_can_fire(cfg, recs, [rule])[0].params["nth"] == 2  # no tombstone: the second, as before
    # a Complete and an UploadPart wait alike
    complete = FaultStep(1, "s3", status_params(409, "OperationAborted", "CompleteMultipartUpload", "f1"))
    assert that_can_fire(cfg, [tomb, recs[1]], [complete])[0].params["nth"] == 4
