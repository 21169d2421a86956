"""Named scenarios for Apache Iceberg's Kafka Connect sink, each about one way its exactly-once
claim could break: a worker killed while the coordinator commits, or between writing a data
file and sending it to the coordinator; S3 errors on data files and on the table's metadata;
a zombie worker; a rebalance; a lost consumer-group offset commit; a tombstone first; several
tasks auto-creating the table's namespace at once. Their connector configs are Iceberg's own (used as given: sinkcheck
fills in only the catalog, the endpoint and the credentials), and they play on the Iceberg
target only (conformance.catalog.named.CONNECTOR_OWN).

Where the sink writes what, on S3FileIO: a task's records go to a Parquet data file
(`warehouse/<namespace>/<table>/data/*.parquet`) when the coordinator asks for them (each
`iceberg.control.commit.interval-ms`); the coordinator then writes a manifest, a manifest list
and a new table metadata file (`metadata/<n>-<uuid>.metadata.json`; the sink's auto-create
writes the first, n = 00000) and swaps the catalog's pointer to it: that swap is the commit.
"""
from __future__ import annotations

from typing import Callable

from conformance.generators.rebalance_shapes import ASSIGNOR_OVERRIDE, COOPERATIVE_ASSIGNOR
from conformance.inputs.scenario import FaultStep, Scenario

PUBLIC_T = 1706713200000  # 2024-01-31T15:00:00Z
ICEBERG = {
    "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
    "tasks.max": "1",
    "iceberg.tables": "sinkcheck.events",
    "iceberg.tables.auto-create-enabled": "true",
    "iceberg.tables.evolve-schema-enabled": "true",
    "iceberg.control.commit.interval-ms": "2000",
    # a commit round that misses an answer (a task restarted with no new record never answers)
    # ends after this; the default is 30 s
    "iceberg.control.commit.timeout-ms": "10000",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
# the first table commit's metadata file (the auto-create wrote the 1st matching PutObject)
COMMIT_METADATA = {"operation": "PutObject", "key": "*/metadata/*.metadata.json", "nth": 2}
DATA_FILE = {"operation": "PutObject", "key": "*/data/*.parquet", "nth": 1}


def _records(n: int, partitions: int = 3, region_every: int = 0) -> list[dict]:
    out = []
    for i in range(n):
        value: dict = {"seq": i, "ts": PUBLIC_T + i * 1000}
        if region_every and i % region_every == 0:
            value["region"] = ("eu", "us", "ap")[i % 3]  # a field the first record lacks: the table widens
        out.append({"topic": "events", "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000,
                    "key": f"k{i}", "value": value, "headers": []})
    return out


def exactly_once_1000() -> Scenario:
    """1000 JSON records across 3 partitions, no fault: each lands in the table once, and the
    committed offsets reach every partition's end."""
    return Scenario("iceberg-1000-records-3-partitions", dict(ICEBERG), {"events": 3}, _records(1000),
                    notes="Iceberg's documentation: exactly-once delivery semantics")


def kill_during_first_commit() -> Scenario:
    """SIGKILL of the worker whose task holds the coordinator while the coordinator writes the
    table's metadata file for its first commit (the PutObject hangs). The task has already
    committed its source offsets with the files it sent (one transaction with its DATA_WRITTEN
    event); the files must reach the table through the restarted coordinator."""
    return Scenario("iceberg-kill-during-first-commit", dict(ICEBERG), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {**COMMIT_METADATA, "action": "hang", "name": "the first commit"}),
                            FaultStep(300, "wait-fired", {"rule": "the first commit", "seconds": 60}),
                            FaultStep(300, "crash"), FaultStep(300, "release")],
                    notes="the coordinator dies between the data files and the catalog's pointer swap, before its "
                          "control-topic consumer group has committed any offset")


def kill_during_commit() -> Scenario:
    """The same kill in a later commit: 150 records committed and quiet first, then the next
    commit's metadata PutObject hangs and the worker dies. The restarted coordinator reads the
    control topic from its group's offsets and commits the dead one's files once."""
    return Scenario("iceberg-kill-during-commit", dict(ICEBERG), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "quiet", {"seconds": 60}),
                            FaultStep(150, "s3", {**COMMIT_METADATA, "nth": 1, "action": "hang", "name": "a commit"}),
                            FaultStep(300, "wait-fired", {"rule": "a commit", "seconds": 60}),
                            FaultStep(300, "crash"), FaultStep(300, "release")],
                    notes="the coordinator dies between the data files and the catalog's pointer swap")


def kill_after_data_file() -> Scenario:
    """SIGKILL of the worker while its task writes a data file, before it can send the file to
    the coordinator: the file is an orphan (measured), its records are read again and land once."""
    return Scenario("iceberg-kill-after-data-file", dict(ICEBERG), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {**DATA_FILE, "action": "hang", "name": "the first data file"}),
                            FaultStep(300, "wait-fired", {"rule": "the first data file", "seconds": 60}),
                            FaultStep(300, "crash"), FaultStep(300, "release")])


def error_on_data_file() -> Scenario:
    """503 SlowDown on a data file's PutObject: S3FileIO's client retries it."""
    return Scenario("iceberg-503-on-data-file", dict(ICEBERG), {"events": 3}, _records(150),
                    faults=[FaultStep(0, "s3", {**DATA_FILE, "action": "fail", "status": 503})])


def error_on_metadata() -> Scenario:
    """InternalError on every attempt at a commit's metadata file, more times than the client
    retries (after a first commit went through): the commit fails, and at the default
    iceberg.control.commit.max-consecutive-failures (1) the coordinator terminates and its task
    with it, as documented. The task is restarted (Kafka Connect does not restart a failed task
    by itself): its coordinator reads the control topic from its group's offsets and commits the
    files of the failed round once."""
    return Scenario("iceberg-500-on-commit-metadata", dict(ICEBERG), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "quiet", {"seconds": 60}),
                            FaultStep(150, "s3", {**COMMIT_METADATA, "nth": 1, "action": "fail", "status": 500,
                                                  "times": 8, "name": "a commit's metadata"}),
                            FaultStep(300, "wait-fired", {"rule": "a commit's metadata", "seconds": 60}),
                            FaultStep(300, "quiet", {"seconds": 60}), FaultStep(300, "restart-task")])


def zombie_worker() -> Scenario:
    """The worker running the task is stopped (SIGSTOP) until another worker runs it, then
    resumed: the zombie's late control-topic events and commits must not add rows twice."""
    return Scenario("iceberg-zombie-worker", dict(ICEBERG), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "wait", {"seconds": 1.0}), FaultStep(150, "pause"),
                            FaultStep(300, "wait", {"seconds": 4.0}), FaultStep(300, "resume")])


def rebalance() -> Scenario:
    """A second worker joins and leaves mid-stream: every task is revoked and reassigned twice,
    the coordinator with them."""
    return Scenario("iceberg-rebalance-mid-stream", dict(ICEBERG), {"events": 3}, _records(300, region_every=7),
                    faults=[FaultStep(150, "rebalance")])


def lost_offset_commit() -> Scenario:
    """The Connect group's last offset commit is lost (the connector stopped, its offsets set
    back through Kafka Connect's REST API, resumed): the task reads the committed records again.
    The sink's documentation does not say what then: the table is measured for duplicates."""
    return Scenario("iceberg-lost-offset-commit", dict(ICEBERG), {"events": 3}, _records(200),
                    faults=[FaultStep(100, "quiet", {"seconds": 60}), FaultStep(100, "lose-offset-commit")],
                    notes="Confluent's sink re-writes the same objects in this case (deterministic names)")


def tombstone_first() -> Scenario:
    """A tombstone (a key with a null value: a delete on a compacted topic) comes before any
    record with a value, and the table does not exist yet. The sink's writer ignores tombstones,
    but the table is auto-created from the first record that reaches a table's writer, the
    tombstone too."""
    recs = _records(30, partitions=1)  # one partition: the tombstone is the first record the task gets
    recs[0] = {**recs[0], "value": None}
    return Scenario("iceberg-tombstone-first", dict(ICEBERG), {"events": 1}, recs,
                    notes="IcebergWriterFactory.autoCreateTable: 'Unable to create table from empty object'")


def tasks_create_namespace_at_once() -> Scenario:
    """Four tasks (tasks.max=4) on a topic of 8 partitions, the table and its namespace not yet in
    the catalog, records on every partition produced at once after the tasks started (their
    consumers wait in a fetch): each task's first put reaches IcebergWriterFactory.autoCreateTable
    together, and each creates the namespace
    (createNamespaceIfNotExist) before the table. JdbcCatalog.createNamespace checks that the
    namespace exists, then inserts its row, in two statements; the sink ignores only
    AlreadyExistsException, so a task whose insert comes second fails on the key. A deployment's
    first start with several tasks and a backlog is this shape."""
    return Scenario("iceberg-tasks-create-namespace-at-once", {**ICEBERG, "tasks.max": "4"}, {"events": 8},
                    _records(400, partitions=8),
                    notes="JdbcCatalog.createNamespace: namespaceExists, then insertProperties (a check, then an "
                          "INSERT): two tasks may both pass the check")


def cooperative_revoke_before_first_commit() -> Scenario:
    """tasks.max=2 on 4 partitions under CooperativeStickyAssignor. Both tasks read 12 records,
    and before the first commit round (iceberg.control.commit.interval-ms=10000) a worker joins:
    one task moves to it, and when it starts there the other task is revoked only its two
    partitions. Kafka Connect then calls close with the revoked partitions alone, and the sink's
    close stops the task's commit worker, dropping the unsent records of the partitions it keeps
    too; it seeks back only partitions with a committed offset, and these have none yet. The 12
    records after the join go on from where the consumer was. The first record comes alone, a
    moment before the others, so that one task auto-creates the table's namespace (two at once
    is iceberg-namespace-create-race). The control topic is read from
    earliest (iceberg.kafka.auto.offset.reset) so that a coordinator moving before its first
    commit loses nothing (iceberg-first-commit-lost's workaround): a loss here is this close's."""
    cfg = {**ICEBERG, "tasks.max": "2", ASSIGNOR_OVERRIDE: COOPERATIVE_ASSIGNOR,
           "iceberg.control.commit.interval-ms": "10000", "iceberg.kafka.auto.offset.reset": "earliest"}
    return Scenario("iceberg-cooperative-revoke-before-first-commit", cfg, {"events": 4}, _records(24, partitions=4),
                    faults=[FaultStep(1, "wait", {"seconds": 3.0}),
                            FaultStep(12, "wait", {"seconds": 2.0}), FaultStep(12, "add-worker"),
                            FaultStep(12, "wait", {"seconds": 6.0})],
                    notes="CommitterImpl.close stops the worker on any close; KafkaUtils.seekToLastCommittedOffsets "
                          "skips a partition whose committed offset is null")


ICEBERG_OWN: dict[str, Callable[[], Scenario]] = {s().name: s for s in (
    exactly_once_1000, kill_during_first_commit, kill_during_commit, kill_after_data_file, error_on_data_file, error_on_metadata,
    zombie_worker, rebalance, lost_offset_commit, tombstone_first, tasks_create_namespace_at_once,
    cooperative_revoke_before_first_commit)}
