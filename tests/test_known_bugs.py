"""The known-bug library (conformance.catalog.known_bugs): each entry's scenario replayed offline, from
what the real connector did (tests/fidelity), through the model of the affected and of the fixed
version; the report's section and the gate's wording."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.calibration import fidelity
from conformance.catalog.known_bugs import (BY_ID, KNOWN_BUGS, gate_changes, gate_line, known_bug_line,
    relevant, reproduction)
from conformance.catalog.named import ALL_NAMED
from reference_impl.versions import parse_version
from reports.context import ReportContext
from reports.html import render_html
from reports.results_json import results_document

FIDELITY = Path(__file__).parent / "fidelity"

# (entry, scenario, affected release, fixed release): both runs recorded from the real connector
PAIRS = [
    ("confluent-scheduled-rotation-npe", "rotate-schedule-steady-stream", "11.0.1", "11.0.2"),
    ("confluent-field-partitioner-null", "field-partition-decimals", "11.0.6", "11.0.7"),
    ("confluent-wrapped-partitioner-rotation", "tombstones-with-record-time-rotation", "12.0.7", "12.1.9"),
    ("confluent-error-inside-complete-200", "error-inside-200-not-applied", "10.6.18", "12.1.9"),
]


def test_an_answer_cut_mid_body_is_a_bug_of_the_sdk_v2_releases_only():
    """Recorded: 12.1.9's task FAILED at 'Could not parse XML response', 10.6.18's went on."""
    bug = BY_ID["confluent-cut-xml-answer-kills-task"]
    assert bug.affects("12.1.9") and bug.affects("11.0.0") and not bug.affects("10.6.18")
    v2, v1 = _replay("confluent", "12.1.9", "s3-stalled-complete-answer"), \
        _replay("confluent", "10.6.18", "s3-stalled-complete-answer")
    dead, alive = v2.result.observation.statuses[-1], v1.result.observation.statuses[-1]
    assert "FAILED" in dead.task_states and re.search(bug.signature, dead.trace or "")
    assert "FAILED" not in alive.task_states
    # a task that dies where its release is documented to die fails no claim (R7.4, S3_FATAL)
    assert not v2.disagreements() and not v1.disagreements() and v2.result.status == "pass"


def _replay(kind: str, version: str, scenario: str) -> fidelity.Replay:
    path = FIDELITY / f"{kind}-{version}--{scenario}.json"
    if not path.exists():
        pytest.skip(f"no recorded run {path.name}")
    return fidelity.replay(fidelity.load(path))


def test_every_entry_cites_upstream_names_versions_and_a_scenario_whose_config_meets_it():
    for bug in KNOWN_BUGS:
        assert bug.cite is None and bug.why or re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", bug.cite or ""), bug.id
        for c in bug.also:
            assert re.fullmatch(r"[\w.-]+/[\w.-]+#\d+", c), bug.id
        assert bug.symptom and bug.needs_text and bug.scenarios, bug.id
        for name in bug.scenarios:
            assert bug.needs(dict(ALL_NAMED[name]().connector)), (bug.id, name)
            assert bug.condition_met(ALL_NAMED[name]()), (bug.id, name)
        for v in bug.fixed_in:
            assert bug.affects(v) is False, (bug.id, v)
        for lo, hi in bug.affected:
            if lo:
                assert bug.affects(lo) is True, (bug.id, lo)
            if lo and hi:
                assert parse_version(lo) < parse_version(hi)


@pytest.mark.parametrize("bug_id,scenario,affected,fixed", PAIRS, ids=[p[0] for p in PAIRS])
def test_a_known_bug_fails_on_the_affected_version_with_its_witness_and_passes_on_the_fixed_one(bug_id, scenario,
                                                                                              affected, fixed):
    bug = BY_ID[bug_id]
    assert bug.affects(affected) and not bug.affects(fixed)
    bad, good = _replay(bug.sink, affected, scenario), _replay(bug.sink, fixed, scenario)
    # the model of each version agrees with what that real version did, the bug included
    assert bad.disagreements() == [] and good.disagreements() == []
    assert bad.result.scenario.connector_version == affected and good.result.scenario.connector_version == fixed
    witness = reproduction(bug, bad.result)
    assert witness is not None and reproduction(bug, good.result) is None
    if bug.signature:
        assert bug.matches(bad.fixture["trace"]), bad.fixture["trace"]
    assert good.result.status == "pass"


TOMBSTONE_FILTER = {"transforms": "dropTombstones",
                    "transforms.dropTombstones.type": "org.apache.kafka.connect.transforms.Filter",
                    "transforms.dropTombstones.predicate": "isTombstone",
                    "predicates": "isTombstone",
                    "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"}

# (entry, scenario, release, the workaround's properties): the scenario recorded from the real
# connector as it is (`{sink}-{release}--{scenario}.json`) and with the entry's workaround merged into
# its config (`…--{scenario}--workaround.json`, `sinkcheck replay … --fixtures`): for the sinks whose
# bug no release fixes yet, the workaround is the fixed side
WORKAROUND_PAIRS: list[tuple[str, str, str, dict[str, str | None]]] = [
    # no release fixes it (#950 is after every release here): the eager default assignor, the override left out
    ("confluent-close-drops-kept-writers", "cooperative-worker-joins-then-leaves", "12.1.9",
     {"consumer.override.partition.assignment.strategy": None}),
    # apache/iceberg#18006 is open: the coordinator reads the control topic from earliest
    ("iceberg-first-commit-lost", "iceberg-kill-during-first-commit", "1.12.0",
     {"iceberg.kafka.auto.offset.reset": "earliest"}),
    # the same bug through a zombie: the paused worker's coordinator, resumed, takes the control
    # partition and is stopped; the new one gets it back at the log end (recorded under CPU load)
    ("iceberg-first-commit-lost", "iceberg-zombie-worker", "1.12.0", {"iceberg.kafka.auto.offset.reset": "earliest"}),
    # no upstream issue: the tombstones dropped before the sink (Kafka's Filter under RecordIsTombstone)
    ("iceberg-tombstone-before-table", "iceberg-tombstone-first", "1.12.0", TOMBSTONE_FILTER),
    # apache/camel-kafka-connector#1300 is closed, 4.18.0 still fails: an errant-record reporter skips the exchange
    ("camel-null-value-kills-task", "null-value-stops-the-task", "4.18.0",
     {"errors.tolerance": "all", "errors.log.enable": "true"}),
    # no release fixes it: the compression named, which the default template then reads
    ("aiven-default-name-without-gz", "aiven-default-template-csv", "3.4.2", {"file.compression.type": "gzip"}),
    # no release fixes it: parquet-avro's three-level lists turned on through connect.parquet.*
    ("aiven-parquet-null-in-array-never-flushes", "aiven-parquet-null-in-array", "3.4.2",
     {"connect.parquet.avro.write-old-list-structure": "false"}),
    # Lenses 11.7.2, no release fixes them: the tombstone skipped (behavior.on.null.values=ignore is
    # sent as connect.s3.skip.null.values=true), and the RETRY error policy (Kafka Connect redelivers
    # the batch and the upload is made again from the local file under a new staged name)
    ("lenses-json-null-value-npe", "tombstones-amid-interval-rotation", "11.7.2",
     {"behavior.on.null.values": "ignore"}),
    ("lenses-retried-upload-412-kills-task", "lenses-lost-answer-to-an-upload", "11.7.2",
     {"connect.s3.error.policy": "RETRY"}),
    ("lenses-bytes-null-value-zero-byte-upload", "lenses-tombstone-as-bytes", "11.7.2",
     {"connect.s3.skip.null.values": "true"}),
    # its affected run is the silent-loss interleaving: the task went on (no trace), 3 records lost
    ("lenses-cooperative-rebalance-drops-kept-partitions", "cooperative-worker-joins-then-leaves", "11.7.2",
     {"consumer.override.partition.assignment.strategy": None}),
    # maxAttempts is the retries plus one when set one higher: five 500s on the lock write are retried
    ("lenses-http-max-retries-are-attempts", "lenses-500-on-index-as-many-as-retries", "11.7.2",
     {"connect.s3.http.max.retries": "6"}),
    # no release fixes it, and no property reaches parquet-avro: a core-site.xml setting
    # parquet.avro.write-old-list-structure=false in a jar of the plugin directory (recorded with
    # --plugin-path at such a copy; the connector config is the same)
    ("lenses-parquet-null-in-array-kills-task", "lenses-parquet-null-in-array", "11.7.2", {}),
    # no release fixes it: one task, so no second createNamespace at once (the race lost 4 of 6 runs
    # with four tasks)
    ("iceberg-namespace-create-race", "iceberg-tasks-create-namespace-at-once", "1.12.0", {"tasks.max": "1"}),
    # its affected run is the loss: the records after the join carried the kept partitions' offsets past 0-2
    ("iceberg-revoke-drops-kept-uncommitted-records", "iceberg-cooperative-revoke-before-first-commit", "1.12.0",
     {"consumer.override.partition.assignment.strategy": None}),
]


@pytest.mark.parametrize("bug_id,scenario,version,workaround", WORKAROUND_PAIRS,
                         ids=[f"{p[0]}--{p[1]}" for p in WORKAROUND_PAIRS])
def test_a_known_bug_fails_without_its_workaround_and_passes_with_it(bug_id, scenario, version, workaround):
    bug = BY_ID[bug_id]
    assert bug.affects(version) is not False and bug.workaround
    bad, good = _replay(bug.sink, version, scenario), _replay(bug.sink, version, f"{scenario}--workaround")
    assert bad.disagreements() == [] and good.disagreements() == []
    config = dict(good.result.scenario.connector)
    assert {k: config.get(k) for k in workaround} == workaround, "the workaround run did not carry the workaround"
    assert all(bad.result.scenario.connector.get(k) != v for k, v in workaround.items())
    witness = reproduction(bug, bad.result)
    assert witness is not None and reproduction(bug, good.result) is None
    if bug.signature and bad.fixture["trace"]:  # a bug whose other symptom leaves the task running has none
        assert bug.matches(bad.fixture["trace"]), bad.fixture["trace"]
    assert good.result.status == "pass", [v.message for v in good.verdicts if v.status != "pass"]


def test_aivens_zombie_overwrite_fails_with_its_witness_and_has_no_workaround():
    """aiven-zombie-task recorded on the real Aiven 3.4.2 (`sinkcheck replay … --fixtures`, the fifth
    try: the overwrite needs the first owner's 2 s offset flush not to fall in the 1 s between the
    records and the pause). The new owner wrote <topic>-<p>-0 with offsets 0-99 and committed 100;
    the resumed zombie flushed its buffer (0-49) over it, so 50-99 were committed but not in S3
    until a later flush wrote them again: commit-safety, which the fixture's samples decide
    offline. No workaround: no upload of Aiven's is conditional, and no template variable tells two
    tasks' files of one partition and start offset apart."""
    bug = BY_ID["aiven-zombie-overwrites-newer-object"]
    assert bug.workaround is None and bug.affects("3.4.2") is not False
    bad = _replay("aiven", "3.4.2", "aiven-zombie-task")
    assert "samples" in bad.fixture and bad.disagreements() == []
    failed = {v.property for v in bad.verdicts if v.status == "fail"}
    assert "commit-safety" in failed and bad.result.status == "fail"
    witness = reproduction(bug, bad.result)
    assert witness is not None and "was committed to 100 but offset 50 was not in S3" in witness
    # the final state alone is whole again: without the samples the run replays as a pass
    final_only = fidelity.replay({k: v for k, v in bad.fixture.items() if k != "samples"})
    assert final_only.result.status == "pass" and reproduction(bug, final_only.result) is None


def test_the_scheduled_rotation_npe_is_the_task_failing_with_the_rotation_log_lines_trace():
    bad = _replay("confluent", "11.0.1", "rotate-schedule-steady-stream")
    liveness = next(v for v in bad.verdicts if v.property == "liveness")
    assert liveness.status == "fail"
    assert '"this.currentTimestamp" is null' in liveness.witnesses[0].explanation
    # found by `--no-named --profile default` on 11.0.1 (seed 11): a cooperative config's task
    # died of this NPE, whose trace runs through S3SinkTask.put, and close()'s bug was named
    # reproduced with it; only an NPE thrown in put itself is that bug's
    assert not BY_ID["confluent-close-drops-kept-writers"].matches(bad.fixture["trace"])
    assert BY_ID["confluent-close-drops-kept-writers"].matches(
        "java.lang.NullPointerException\n\tat io.confluent.connect.s3.S3SinkTask.put(S3SinkTask.java:209)")


def test_the_field_partitioner_bug_leaves_the_models_null_directory_missing():
    bad = _replay("confluent", "11.0.6", "field-partition-decimals")
    good = _replay("confluent", "11.0.7", "field-partition-decimals")
    expected = {o.key for o in bad.result.expectation.objects}
    assert any("tier=null" in k for k in expected)
    assert not any("tier=null" in o.key for o in bad.result.observation.final_bucket.objects)
    assert any("tier=null" in o.key for o in good.result.observation.final_bucket.objects)


def test_the_wrapped_partitioner_bug_is_rotation_the_model_expects_and_12_0_7_does_not_do():
    bad = _replay("confluent", "12.0.7", "tombstones-with-record-time-rotation")
    failed = {v.property for v in bad.verdicts if v.status == "fail"}
    assert failed & {"exact-object-set", "rotation", "file-count"}
    assert len(bad.result.observation.final_bucket.objects) < len(bad.result.expectation.objects)


def test_the_error_inside_complete_200_is_a_bug_of_the_sdk_v1_releases_only():
    bug = BY_ID["confluent-error-inside-complete-200"]
    assert bug.affects("10.6.18") and not bug.affects("11.0.0") and not bug.affects("12.1.9")
    # the fixed side, recorded on 12.1.9: the retried Complete leaves nothing of the bug
    good = _replay("confluent", "12.1.9", "error-inside-200-not-applied").result
    assert good.status == "pass" and reproduction(bug, good) is None


def test_camels_null_value_bug_is_outside_its_workarounds_config():
    bug = BY_ID["camel-null-value-kills-task"]
    assert bug.needs(dict(ALL_NAMED["null-value-stops-the-task"]().connector))
    assert not bug.needs(dict(ALL_NAMED["null-value-tolerated"]().connector))
    assert bug.matches("org.apache.kafka.connect.errors.ConnectException: Exchange delivery has failed!")


def test_aiven_and_lenses_findings_of_the_default_runs_are_known_bugs_outside_their_workarounds():
    """The real findings of `--profile default` on Aiven 3.4.2 and Lenses 11.7.2: the report names
    each with its cause in the connector's source."""
    gz = BY_ID["aiven-default-name-without-gz"]
    cfg = dict(ALL_NAMED["aiven-default-template-csv"]().connector)
    assert gz.needs(cfg) and not gz.needs({**cfg, "file.compression.type": "gzip"})
    npe = BY_ID["lenses-json-null-value-npe"]
    cfg = dict(ALL_NAMED["tombstones-amid-interval-rotation"]().connector)
    assert npe.needs(cfg) and not npe.needs({**cfg, "behavior.on.null.values": "ignore"})
    kcql = {"connect.s3.kcql": "INSERT INTO b:out SELECT * FROM `t` STOREAS `JSON`"}
    assert npe.needs(kcql) and not npe.needs({**kcql, "connect.s3.skip.null.values": "true"})
    assert not npe.needs({**cfg, "format.class": "io.confluent.connect.s3.format.avro.AvroFormat"})
    # the task's trace as Kafka Connect's status gave it (tombstones-amid-interval-rotation on 11.7.2)
    assert npe.matches('java.lang.NullPointerException: Cannot read the array length because "b" is null')
    # a bytes value under JSON dies in JsonFormatWriter too: its documented limitation, not this bug
    assert not npe.matches("org.apache.kafka.connect.errors.ConnectException: Cannot currently write byte array as "
                           "json\n\tat io.lenses.streamreactor.connect.cloud.common.formats.writer.JsonFormatWriter"
                           ".write(JsonFormatWriter.scala:64)")
    retried = BY_ID["lenses-retried-upload-412-kills-task"]
    cfg = dict(ALL_NAMED["multipart-lost-commit"]().connector)
    assert retried.needs(cfg) and not retried.needs({**cfg, "connect.s3.error.policy": "RETRY"})
    assert retried.matches("software.amazon.awssdk.services.s3.model.S3Exception: At least one of the "
                           "pre-conditions you specified did not hold (Service: S3, Status Code: 412")
    # a 412 to an upload that landed sets it off as a lost answer does; one S3 gives with no object
    # there is the THROW policy's documented death (the claim measures liveness)
    assert retried.triggered_by(ALL_NAMED["s3-412-with-the-object"]())
    assert not retried.triggered_by(ALL_NAMED["s3-412-without-the-object"]())


def test_lenses_cooperative_rebalance_bug_needs_the_cooperative_assignor_and_leaves_the_missing_lock_etag():
    """Lenses 11.7.2 under CooperativeStickyAssignor: IndexManagerV2.open takes the added partitions
    for the whole assignment and drops the kept ones' lock eTags (cooperative-worker-joins-then-leaves)."""
    bug = BY_ID["lenses-cooperative-rebalance-drops-kept-partitions"]
    cfg = dict(ALL_NAMED["cooperative-worker-joins-then-leaves"]().connector)
    assert bug.needs(cfg) and not bug.needs(dict(ALL_NAMED["worker-joins-then-leaves"]().connector))
    # the failed task's trace as Kafka Connect's status gave it (worker-1's log of the real run)
    assert bug.matches("io.lenses.streamreactor.common.errors.FatalConnectException: fatal:\nGranular lock eTag for "
                       "TopicPartition(Topic(events-r1),3)/partition=3_topic=events-r1 not in cache. This may indicate "
                       "a zombie task whose cache entry was evicted. Failing to preserve fencing.")
    # five 500s on one index write fail the task with another FatalConnectException: not this bug
    assert not bug.matches("io.lenses.streamreactor.common.errors.FatalConnectException: fatal:\nerror writing file "
                           "({...}) We encountered an internal error. Please try again.")


def test_lenses_lock_write_failing_as_many_times_as_its_documented_retries_is_the_attempts_bug():
    bug = BY_ID["lenses-http-max-retries-are-attempts"]
    # the failed task's trace (worker-1 of `--profile ci` on 11.7.2, lenses-500-on-index-as-many-as-retries)
    assert bug.matches('io.lenses.streamreactor.common.errors.FatalConnectException: error writing file '
                       '({"owner":"206dfb29-274d-4892-a739-38e0dc9a99ad","committedOffset":null,"pendingState":null}) '
                       'We encountered an internal error. Please try again. (Service: S3, Status Code: 500')
    # the cooperative rebalance's FatalConnectException and the tombstones' are other bugs
    assert not bug.matches("io.lenses.streamreactor.common.errors.FatalConnectException: fatal:\nGranular lock eTag")
    assert not bug.matches("ConnectException: fatal:\n\nnonFatal:\nzero byte upload prevented (/tmp/x)")
    assert not bug.matches('FatalConnectException: error writing file ({"owner":"x"}) At least one of the '
                           'pre-conditions you specified did not hold (Service: S3, Status Code: 412')


def test_lenses_skipped_tombstones_at_a_partitions_end_are_never_committed_and_named_without_a_trace():
    """lenses-trailing-tombstones-skipped recorded on the real Lenses 11.7.2 (`sinkcheck run
    --scenario … --fixtures`): every value written, partitions 0 and 1 committed to their last
    value + 1 and never to their end (CloudSinkTask.put skips a tombstone without its offset),
    partition 2's tombstone covered by the value after it. No trace, no workaround: the entry names
    a run by its verdicts, so a generated run of that shape (--profile default generated-005-shrunk,
    committed 20 of 21) is named too, and the cooperative bug's stuck commit (values lost) is not."""
    from dataclasses import replace

    bug = BY_ID["lenses-skipped-tombstones-never-committed"]
    cfg = dict(ALL_NAMED["lenses-trailing-tombstones-skipped"]().connector)
    assert bug.needs(cfg) and not bug.needs({**cfg, "connect.s3.skip.null.values": "false"})
    assert bug.needs({"behavior.on.null.values": "ignore"}) and not bug.needs({"behavior.on.null.values": "write"})
    assert bug.workaround is None and bug.signature is None
    bad = _replay("lenses", "11.7.2", "lenses-trailing-tombstones-skipped")
    assert bad.disagreements() == [] and bad.fixture["trace"] is None
    assert sorted(bad.fixture["committed"].values()) == [6, 6, 8]
    assert {v.property for v in bad.verdicts if v.status == "fail"} == {"commit-progress"}
    witness = reproduction(bug, bad.result)
    assert witness is not None and witness.startswith("lenses-trailing-tombstones-skipped failed: commit-progress")
    assert "committed to 6 of 8, the rest 2 tombstone(s)" in (bug.shown_by(bad.result) or "")
    generated = replace(bad.result, scenario=replace(bad.result.scenario, name="generated-005-shrunk"))
    assert "committed to 6 of 7, the rest 1 tombstone(s)" in (reproduction(bug, generated) or "")
    unskipped = replace(generated, scenario=replace(generated.scenario, connector={
        **generated.scenario.connector, "connect.s3.skip.null.values": "false"}))
    assert reproduction(bug, unskipped) is None
    coop = _replay("lenses", "11.7.2", "cooperative-worker-joins-then-leaves").result
    assert coop.status == "fail" and bug.shown_by(coop) is None


def test_lenses_cooperative_rebalance_is_named_where_it_leaves_no_trace():
    """`--profile ci` generated-002 on the real Lenses 11.7.2 (recorded with --fixtures): two tasks
    under CooperativeStickyAssignor, a worker joined and left; every record is in S3, both tasks
    RUNNING, no trace, and neither partition's commit ever moved (close() dropped the writers
    getOffsetAndMeta reads). The cooperative bug is named there by its verdicts; without the
    membership change, with the eager assignor, or with a record lost, it is not."""
    from dataclasses import replace

    bug = BY_ID["lenses-cooperative-rebalance-drops-kept-partitions"]
    run = fidelity.replay(fidelity.load(FIDELITY / "lenses-11.7.2--cooperative-generated-002.json"))
    assert run.disagreements() == [] and run.fixture["trace"] is None and run.fixture["committed"] == {}
    assert {v.property for v in run.verdicts if v.status == "fail"} == {"commit-progress"}
    witness = reproduction(bug, run.result)
    assert witness is not None and "orders-r51-0 committed to None of 7" in witness, witness
    assert reproduction(BY_ID["lenses-skipped-tombstones-never-committed"], run.result) is None
    sc = run.result.scenario
    eager = {k: v for k, v in sc.connector.items() if k != "consumer.override.partition.assignment.strategy"}
    assert reproduction(bug, replace(run.result, scenario=replace(sc, connector=eager))) is None
    assert reproduction(bug, replace(run.result, scenario=replace(sc, faults=[]))) is None
    lost = [replace(v, status="fail") if v.property == "no-loss" else v for v in run.result.verdicts]
    assert bug.shown_by(replace(run.result, verdicts=lost)) is None


def test_icebergs_cooperative_revoke_is_named_where_it_leaves_no_trace_and_accepted_for_a_generated_run():
    """iceberg-cooperative-revoke-before-first-commit without the 12 records after the join, on the
    real Iceberg 1.12.0 (replayed with --fixtures): both tasks RUNNING, no trace, no-loss holds,
    and the two partitions the revoked task kept were never committed (its close dropped their
    records and sought back only committed partitions). `--profile ci` generated-009 failed the
    same way. The bug is named by its verdicts, under any scenario name, and explains every
    claimed property the run failed, so a generated run of this shape is not shrunk; with the
    eager assignor, with one task, or with a partition committed part of the way, it is not
    named."""
    from dataclasses import replace

    from conformance.catalog.known_bugs.matching import acceptance

    bug = BY_ID["iceberg-revoke-drops-kept-uncommitted-records"]
    run = fidelity.replay(fidelity.load(FIDELITY / "iceberg-1.12.0--cooperative-revoke-nothing-after.json"))
    assert run.disagreements() == [] and run.fixture["trace"] is None
    assert {v.property for v in run.verdicts if v.status == "fail" and v.claimed} == {"commit-progress"}
    generated = replace(run.result, scenario=replace(run.result.scenario, name="generated-009"))
    witness = reproduction(bug, generated)
    assert witness is not None and "events-0 committed to None of 3" in witness, witness
    accepted = acceptance(generated)
    assert accepted is not None and accepted["id"] == bug.id, accepted
    sc = generated.scenario
    eager = {k: v for k, v in sc.connector.items() if k != "consumer.override.partition.assignment.strategy"}
    assert reproduction(bug, replace(generated, scenario=replace(sc, connector=eager))) is None
    assert reproduction(bug, replace(generated, scenario=replace(sc, connector={**sc.connector, "tasks.max": "1"}))) is None
    progress = next(v for v in generated.verdicts if v.property == "commit-progress")
    part_way = replace(progress, witnesses=[replace(w, observed=1) for w in progress.witnesses])
    assert bug.shown_by(replace(generated, verdicts=[part_way if v is progress else v
                                                     for v in generated.verdicts])) is None


def test_icebergs_cooperative_revoke_loss_is_named_by_its_verdicts_only_where_no_task_stopped_or_moved():
    """The loss way: records after the revoke carry the kept partitions' offsets past the dropped
    ones (iceberg-cooperative-revoke-before-first-commit on the real 1.12.0: 6 records lost from
    offset 0). At start the tasks' own joins set it off with no fault at all (--profile ci
    generated-003, its worker log: revoked two partitions 1.2 s after its commit worker started,
    sought back with no committed offset, the first record of two partitions lost), so a run of
    that shape is named by its verdicts. Where a task stopped or moved (the named scenario's
    worker joining), a coordinator moving before its first commit loses records too
    (iceberg-first-commit-lost): the verdicts alone do not say which, and the run is not named
    by them."""
    from dataclasses import replace

    from conformance.catalog.known_bugs.matching import acceptance

    bug = BY_ID["iceberg-revoke-drops-kept-uncommitted-records"]
    run = _replay("iceberg", "1.12.0", "iceberg-cooperative-revoke-before-first-commit").result
    assert {v.property for v in run.verdicts if v.status == "fail" and v.claimed} == {"no-loss"}
    assert bug.shown_by(run) is None  # a worker joined: the first-commit loss is as likely
    at_start = replace(run, scenario=replace(run.scenario, name="generated-003",
                                             faults=[f for f in run.scenario.faults if f.kind == "wait"]))
    witness = reproduction(bug, at_start)
    assert witness is not None and "events-r1-0@0" in witness and "first offset" in witness, witness
    assert (acceptance(at_start) or {}).get("id") == bug.id
    no_loss = next(v for v in at_start.verdicts if v.property == "no-loss")
    later = replace(no_loss, witnesses=[replace(w, offsets=tuple(o.replace("@0", "@9") for o in w.offsets))
                                        for w in no_loss.witnesses])
    assert bug.shown_by(replace(at_start, verdicts=[later if v is no_loss else v for v in at_start.verdicts])) is None


def test_the_iceberg_first_commit_loss_applies_unless_the_control_topic_is_read_from_earliest():
    bug = BY_ID["iceberg-first-commit-lost"]
    cfg = dict(ALL_NAMED["iceberg-kill-during-first-commit"]().connector)
    assert bug.needs(cfg)
    assert not bug.needs({**cfg, "iceberg.kafka.auto.offset.reset": "earliest"})


def test_the_report_names_each_known_bug_that_applies_with_link_versions_workaround_and_witness():
    bad = _replay("confluent", "11.0.1", "rotate-schedule-steady-stream").result
    doc = results_document([bad], ReportContext())
    (npe,) = [b for b in doc["known_bugs"] if b["id"] == "confluent-scheduled-rotation-npe"]
    assert npe["reproduced"] and npe["version"] == "11.0.1" and npe["version_affected"] is True
    assert npe["fixed_in"] == ["11.0.2"] and npe["cite"] == "confluentinc/kafka-connect-storage-cloud#871"
    assert "NullPointerException" in npe["witnesses"][0]["witness"]
    html = render_html([bad], ReportContext())
    section = html[html.index('id="known-bugs"'):html.index('id="compliance"')]
    assert "<code>https://github.com/confluentinc/kafka-connect-storage-cloud/issues/871</code>" in section
    assert "take 11.0.2 or later" in section and "reproduced" in section
    line = known_bug_line(npe)
    assert line.startswith("KNOWN BUG confluent-scheduled-rotation-npe") and "fixed in 11.0.2" in line


def test_a_config_that_meets_a_bug_on_a_fixed_version_is_not_reported():
    good = _replay("confluent", "11.0.2", "rotate-schedule-steady-stream").result
    # the bug fixed in 11.0.2 is not named; nor are those of S3's answers on every release since (an
    # answer cut mid-body, a 412 with the HEAD refused): the run carried no such answer
    named = relevant([good])
    assert "confluent-scheduled-rotation-npe" not in [b["id"] for b in named]
    assert not [b["id"] for b in named if b["reproduced"]]
    assert not {"confluent-cut-xml-answer-kills-task", "confluent-412-head-403-skips-record"} & {b["id"] for b in named}


# the entries a fault sets off: their condition is met only by a scenario that carries the fault
TRIGGERED = [b.id for b in KNOWN_BUGS if b.triggered_by is not None]


def test_the_entries_a_fault_sets_off_are_those_of_s3_answers_and_of_members_stopping_or_moving():
    assert set(TRIGGERED) == {
        "confluent-error-inside-complete-200", "confluent-cut-xml-answer-kills-task", "confluent-412-head-403-skips-record",
        "confluent-close-drops-kept-writers", "iceberg-first-commit-lost", "aiven-zombie-overwrites-newer-object",
        "lenses-cooperative-rebalance-drops-kept-partitions", "lenses-http-max-retries-are-attempts",
        "lenses-retried-upload-412-kills-task"}


@pytest.mark.parametrize("bug_id", TRIGGERED)
def test_a_bug_a_fault_sets_off_is_not_met_by_its_scenario_without_its_faults(bug_id):
    from dataclasses import replace

    bug = BY_ID[bug_id]
    for name in bug.scenarios:
        sc = ALL_NAMED[name]()
        assert bug.condition_met(sc) and not bug.condition_met(replace(sc, faults=[])), name


def test_a_run_without_a_cut_answer_to_complete_does_not_list_the_cut_xml_bug_and_one_with_it_does():
    """Every Confluent run on 11.0.0 or later used to be told "KNOWN BUG
    confluent-cut-xml-answer-kills-task ... its condition is met": `needs` holds for every config.
    Its condition is a Complete's answer cut, which a scenario's fault schedule says."""
    from dataclasses import replace

    from conformance.inputs.scenario import FaultStep

    bug = BY_ID["confluent-cut-xml-answer-kills-task"]
    run = _replay("confluent", "12.1.9", "crash-mid-stream").result
    assert bug.affects("12.1.9") and bug.needs(dict(run.scenario.connector))
    assert bug.id not in {b["id"] for b in relevant([run])}
    stalled = replace(run, scenario=replace(run.scenario, faults=ALL_NAMED["s3-stalled-complete-answer"]().faults))
    (met,) = [b for b in relevant([stalled]) if b["id"] == bug.id]
    assert not met["reproduced"] and met["configs"] == ["crash-mid-stream"]
    assert "its condition is met (crash-mid-stream), not reproduced by this run" in known_bug_line(met)

    def with_rule(**rule):
        return replace(run.scenario, faults=[FaultStep(3, "s3", {"operation": "CompleteMultipartUpload", **rule})])

    # the answer reset in its middle (S3 applied the Complete) is cut too; a reset of the request, an
    # answer dropped whole (no XML to parse: the client retries) or another call's answer is not
    assert bug.condition_met(with_rule(action="reset", forward=True)) and bug.condition_met(with_rule(action="reset"))
    assert not bug.condition_met(with_rule(action="reset", forward=False))
    assert not bug.condition_met(with_rule(action="drop-response"))
    assert not bug.condition_met(replace(run.scenario, faults=[FaultStep(3, "s3", {"operation": "UploadPart",
                                                                                   "action": "stall"})]))


def test_a_412_s3_applied_with_the_head_refused_does_not_meet_the_skipped_record_bug():
    """The generated HeadObject rule follows a 412 S3 applied (the object is there, so a HEAD taken
    for it is right): only a 412 without the object, its HEAD refused, loses a record."""
    from dataclasses import replace

    from conformance.generators.faults import status_params
    from conformance.inputs.scenario import FaultStep

    bug = BY_ID["confluent-412-head-403-skips-record"]
    sc = ALL_NAMED["s3-412-without-the-object-head-403"]()
    applied = [FaultStep(3, "s3", status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "f", 1, "applied")),
               FaultStep(3, "s3", status_params(403, "AccessDenied", "HeadObject", "f-then"))]
    assert bug.condition_met(sc) and not bug.condition_met(replace(sc, faults=applied))
    assert not bug.condition_met(replace(sc, faults=sc.faults[:2]))  # the 412 alone: the HEAD tells


def test_the_gate_says_a_known_bug_is_fixed_or_introduced_with_the_witness():
    bad = _replay("confluent", "11.0.1", "rotate-schedule-steady-stream").result
    good = _replay("confluent", "11.0.2", "rotate-schedule-steady-stream").result
    (fixed,) = gate_changes([bad], [good])
    assert fixed["change"] == "fixed" and fixed["id"] == "confluent-scheduled-rotation-npe"
    assert gate_line(fixed).startswith("known bug confluent-scheduled-rotation-npe "
                                       "(confluentinc/kafka-connect-storage-cloud#871) fixed: rotate-schedule-steady-stream")
    ctx = ReportContext(command="gate", known_bug_changes=[fixed])
    assert "known bug <b>confluent-scheduled-rotation-npe</b>" in render_html([bad, good], ctx)
    assert results_document([bad, good], ctx)["known_bug_changes"] == [fixed]
    (introduced,) = gate_changes([good], [bad])
    assert introduced["change"] == "introduced"
    assert gate_changes([good], [good]) == []


def test_a_filter_of_tombstones_is_the_workaround_of_the_bugs_a_tombstone_sets_off():
    """Kafka's Filter under RecordIsTombstone before the sink: Iceberg's table is then created from
    the first record with a value, and Camel's task never gets an exchange without a body, so
    neither entry touches such a config, and Camel's claim keeps liveness for it."""
    from conformance.judging.claims import camel_claim, null_stops_task

    iceberg = dict(ALL_NAMED["iceberg-tombstone-first"]().connector)
    assert BY_ID["iceberg-tombstone-before-table"].needs(iceberg)
    assert not BY_ID["iceberg-tombstone-before-table"].needs({**iceberg, **TOMBSTONE_FILTER})
    camel = dict(ALL_NAMED["null-value-stops-the-task"]().connector)
    assert null_stops_task("camel", camel) and not null_stops_task("camel", {**camel, **TOMBSTONE_FILTER})
    assert "liveness" not in camel_claim(camel, null_values=True).properties
    assert "liveness" in camel_claim({**camel, **TOMBSTONE_FILTER}, null_values=True).properties
    negated = {**camel, **TOMBSTONE_FILTER, "transforms.dropTombstones.negate": "true"}
    assert null_stops_task("camel", negated)


def test_the_zombie_workers_loss_on_iceberg_is_the_first_commit_loss():
    """iceberg-zombie-worker on 1.12.0 under CPU load: worker-1 was stopped before its coordinator's
    first table commit, the task ran on worker-2, worker-1 was resumed. Its worker logs: the
    resumed coordinator rejoined group <connect group>-coord, took the control topic's only
    partition, found no committed offset and reset to the log end; worker-2's task answered a
    START_COMMIT with DATA_WRITTEN and its source offsets (100 a partition); the zombie was
    stopped mid-commit ("sleep interrupted"), and the coordinator that got the partition back
    found no committed offset either and reset to the end, past those events. The data files of
    all 300 records are in the bucket, in no snapshot; with earliest the same run commits them."""
    from conformance.judging.objects import decode_iceberg

    bad = _replay("iceberg", "1.12.0", "iceberg-zombie-worker")
    assert [(f["kind"], f["fired"]) for f in bad.fixture["faults"] if f["kind"] in ("pause", "resume")] == [
        ("pause", True), ("resume", True)]
    assert bad.fixture["table"]["snapshot_id"] is None and bad.fixture["committed_keys"] == []
    assert set(bad.fixture["committed"].values()) == {100}
    objects = {o.key: o.body for o in bad.result.observation.final_bucket.objects}
    seqs = sorted(r["seq"] for k, b in objects.items() if k.endswith(".parquet") for r in decode_iceberg(b, {}))
    # worker-2's file of all 300, and the zombie's of 50 (its writer closed on resume): never committed
    assert set(seqs) == set(range(300)) and len(seqs) == 350
    lost = {v.property: v for v in bad.verdicts}["no-loss"]
    assert lost.status == "fail" and lost.details["count"] == 300 and bad.result.untested is None
    good = _replay("iceberg", "1.12.0", "iceberg-zombie-worker--workaround")
    assert good.fixture["table"]["record_count"] == 300 and good.result.status == "pass"


def test_the_iceberg_namespace_race_is_the_second_tasks_insert_failing_on_the_catalogs_key():
    bug = BY_ID["iceberg-namespace-create-race"]
    bad = _replay("iceberg", "1.12.0", "iceberg-tasks-create-namespace-at-once")
    assert bad.disagreements() == [] and bad.result.status == "fail"
    witness = reproduction(bug, bad.result)
    assert witness and "INSERT INTO iceberg_namespace_properties" in witness
    assert bug.matches(bad.fixture["trace"])
    cfg = dict(ALL_NAMED["iceberg-tasks-create-namespace-at-once"]().connector)
    assert bug.needs(cfg)
    # one task creates the namespace alone; without the auto-create there is no namespace to create
    assert not bug.needs({**cfg, "tasks.max": "1"})
    assert not bug.needs({**cfg, "iceberg.tables.auto-create-enabled": "false"})


def test_aivens_parquet_flush_stuck_on_a_null_inside_an_array_is_named_without_a_trace():
    """aiven-parquet-null-in-array recorded on the real Aiven 3.4.2: every flush throws parquet-avro's
    "Array contains a null element" (the worker logs it and rewinds; the task stays RUNNING), so no
    partition is committed again and a 4-byte object (the Parquet file begun) stands under the data
    name; with connect.parquet.avro.write-old-list-structure=false it passes. No trace: the entry
    names a run by its stuck commits and the put() records holding a null inside an array, so a
    generated run of that shape is named too."""
    from dataclasses import replace

    bug = BY_ID["aiven-parquet-null-in-array-never-flushes"]
    cfg = dict(ALL_NAMED["aiven-parquet-null-in-array"]().connector)
    assert bug.needs(cfg) and not bug.needs({**cfg, "connect.parquet.avro.write-old-list-structure": "false"})
    assert not bug.needs({**cfg, "format.output.type": "avro"})
    # the suite's Confluent-shaped configs as sinkcheck sends them to Aiven (parquet-connect-types
    # failed the same way in --profile ci on the real 3.4.2)
    assert bug.needs(dict(ALL_NAMED["parquet-connect-types"]().connector))
    assert not bug.needs(dict(ALL_NAMED["avro-connect-types"]().connector))
    bad = _replay("aiven", "3.4.2", "aiven-parquet-null-in-array")
    assert bad.disagreements() == [] and bad.fixture["trace"] is None
    assert {v.property for v in bad.verdicts if v.status == "fail"} >= {"commit-progress"}
    witness = bug.shown_by(bad.result) or ""
    assert "committed to None of 6" in witness and "null inside an array" in witness
    generated = replace(bad.result, scenario=replace(bad.result.scenario, name="generated-011"))
    assert (reproduction(bug, generated) or "").startswith("generated-011: commit-progress")
    # where no record holds a null inside an array, a stuck commit is something else
    other = replace(bad.result, observation=replace(bad.result.observation, produced=[
        replace(p, value=b'{"schema": null, "payload": {"samples": [1, 2]}}') for p in bad.result.observation.produced]))
    assert bug.shown_by(other) is None


@pytest.mark.parametrize("bug_id,scenario", [
    ("lenses-avro-fixed-not-converted", "lenses-avro-fixed-field"),
    ("lenses-avro-optional-date", "lenses-avro-optional-date"),
    ("lenses-avro-map-with-non-string-keys", "lenses-avro-optional-int-key-map"),
    ("lenses-parquet-null-in-array-kills-task", "lenses-parquet-null-in-array")])
def test_lenses_schema_value_bugs_kill_the_task_after_the_first_record_with_their_trace(bug_id, scenario):
    """Recorded on the real Lenses 11.7.2: the first record (untouched by the bug) written and
    committed, the second kills the task with the bug's trace, which no other entry's signature
    matches."""
    bug = BY_ID[bug_id]
    bad = _replay("lenses", "11.7.2", scenario)
    assert bad.disagreements() == [] and bug.matches(bad.fixture["trace"])
    assert list(bad.fixture["committed"].values()) == [1]
    assert {v.property for v in bad.verdicts if v.status == "fail"} == {"commit-progress", "liveness"}
    assert (reproduction(bug, bad.result) or "").startswith(f"{scenario} failed: the task FAILED with")
    others = [b.id for b in KNOWN_BUGS if b.id != bug_id and b.sink == "lenses" and b.matches(bad.fixture["trace"])]
    assert others == []
    assert bug.needs(dict(ALL_NAMED[scenario]().connector))
    assert not bug.needs({"connect.s3.kcql": "INSERT INTO b:out SELECT * FROM `t` STOREAS `JSON`"})


def test_a_412_with_the_head_refused_loses_the_files_first_record_on_12_1_9():
    """Recorded on 12.1.9: the 403 counted as the key there, events-0@3 behind the committed offset."""
    bug = BY_ID["confluent-412-head-403-skips-record"]
    assert bug.affects("12.1.9") and bug.affects("10.6.18") and not bug.affects("10.6.0")
    run = _replay("confluent", "12.1.9", "s3-412-without-the-object-head-403")
    lost = next(v for v in run.verdicts if v.property == "no-loss")
    assert lost.status == "fail" and any(o.endswith("-0@3") for w in lost.witnesses for o in w.offsets)
    assert reproduction(bug, run.result) is not None and not run.disagreements()


def _recorded_runs_of_affected_versions():
    """(entry, recorded run) for each entry's scenario recorded on a version it affects."""
    for bug in KNOWN_BUGS:
        for name in bug.scenarios:
            for path in sorted(FIDELITY.glob(f"{bug.sink}-*--{name}.json")):
                version = path.name[len(bug.sink) + 1:].split("--")[0]
                if bug.affects(version):
                    yield pytest.param(bug.id, path.name, id=f"{bug.id}--{path.stem}")


@pytest.mark.parametrize("bug_id,fixture", list(_recorded_runs_of_affected_versions()))
def test_each_entry_breaks_what_its_recorded_runs_failed_so_a_team_can_accept_them(bug_id, fixture):
    """`run --accept-known-bugs` accepts a failed run that reproduces a known bug of its release
    explaining every failed claimed property (the entry's `breaks`): each run recorded on the real
    connector is accepted as its own entry, or passed (a task dying where its release documents it)."""
    from conformance.catalog.known_bugs import acceptance

    bug = BY_ID[bug_id]
    assert bug.breaks and set(bug.breaks) <= {"no-loss", "no-duplicates", "exact-object-set", "atomic-visibility",
                                              "contents", "commit-safety", "commit-progress", "naming", "rotation",
                                              "file-count", "multipart-hygiene", "liveness"}
    run = fidelity.replay(fidelity.load(FIDELITY / fixture)).result
    assert reproduction(bug, run) is not None
    failed = {v.property for v in run.failed()}
    assert failed <= set(bug.breaks), failed - set(bug.breaks)
    accepted = acceptance(run)
    assert (accepted is None) if not failed else (accepted is not None and accepted["id"] == bug.id)


def test_a_run_failing_more_than_its_known_bug_breaks_is_not_accepted():
    from dataclasses import replace

    from conformance.catalog.known_bugs import acceptance

    bad = _replay("confluent", "11.0.1", "rotate-schedule-steady-stream").result
    assert acceptance(bad)["id"] == "confluent-scheduled-rotation-npe"
    lost = [replace(v, status="fail", claimed=True) if v.property == "no-loss" else v for v in bad.verdicts]
    assert acceptance(replace(bad, verdicts=lost)) is None
    # on a release the bug does not affect, the same run is no known bug of it
    def on(version):
        return replace(bad, target_info=None, target=f"kafka-connect:confluent@{version}")

    assert acceptance(on("11.0.1"))["version"] == "11.0.1" and acceptance(on("11.0.2")) is None


def test_904_a_generated_run_with_its_files_left_open_and_no_trace_is_named():
    """On real 10.6.18 a generated stream under behavior.on.null.values=write (the partitioner
    wrapped) and rotate.interval.ms=3000 left its last file open: offset 4 never written, the
    commit at 4 where the model commits 5, the task RUNNING without an error; 12.1.9 (#904 fixed)
    passed the same stream. #904 leaves no trace, so the entry names a run by its stuck commits."""
    from types import SimpleNamespace

    bug = BY_ID["confluent-wrapped-partitioner-rotation"]
    stuck = SimpleNamespace(anomaly="commit-stuck", offsets=("orders-10",), observed=4, expected=5, keys=())
    verdicts = [SimpleNamespace(property="commit-progress", status="fail", witnesses=[stuck])]
    running = SimpleNamespace(trace=None)
    result = SimpleNamespace(verdicts=verdicts, observation=SimpleNamespace(statuses=[running]),
                             target="kafka-connect:confluent@10.6.18")
    assert "orders-10 committed to 4 of 5" in (bug.shown_by(result) or "")
    fixed = SimpleNamespace(verdicts=verdicts, observation=result.observation, target="kafka-connect:confluent@12.1.9")
    assert bug.shown_by(fixed) is None  # 12.1.0 fixed it: a stuck commit there is something else
    died = SimpleNamespace(verdicts=verdicts, observation=SimpleNamespace(statuses=[SimpleNamespace(
        trace="org.apache.kafka.connect.errors.ConnectException: boom")]), target=result.target)
    assert bug.shown_by(died) is None  # a task that died with an error is something else
    lost_only = SimpleNamespace(verdicts=[SimpleNamespace(property="no-loss", status="fail", witnesses=[])],
                                observation=SimpleNamespace(statuses=[running]), target=result.target)
    assert bug.shown_by(lost_only) is None
    # the default profile's generated-015 on 10.6.18: the file the model commits never written,
    # its record lost, the commit not asked of (no commit-progress failure)
    missing = SimpleNamespace(anomaly="missing-object", offsets=(), keys=("archive_orders_0_0000000006.avro",),
                              observed=None, expected=[6])
    lost = SimpleNamespace(anomaly="lost", offsets=("orders-0@6",), keys=(), observed=None, expected=None)
    file_open = SimpleNamespace(verdicts=[SimpleNamespace(property="no-loss", status="fail", witnesses=[lost]),
                                          SimpleNamespace(property="exact-object-set", status="fail",
                                                          witnesses=[missing])],
                                observation=SimpleNamespace(statuses=[running]), target=result.target)
    assert "archive_orders_0_0000000006.avro never written" in (bug.shown_by(file_open) or "")
    duplicated = SimpleNamespace(verdicts=file_open.verdicts + [SimpleNamespace(property="no-duplicates",
                                                                                status="fail", witnesses=[])],
                                 observation=file_open.observation, target=result.target)
    assert bug.shown_by(duplicated) is None  # #904 writes nothing twice
