"""Known bugs of real sinks: one entry a bug, each with its upstream citation, the versions that
have it and the first that does not, the configs it needs, what a user sees, the workaround, and
the named scenarios that show it.

The model never imitates a bug (it holds every version to what the documentation promises), so
a scenario of an entry fails on an affected version with the bug's own witness and passes on a
fixed one. `relevant` answers "which known bugs touch this run's config and version, and did the
run reproduce them?" for the report, results.json and the gate.

To add an entry: append a `KnownBug` to `KNOWN_BUGS` with a citation you have read (the issue,
PR or commit as `owner/repo#N`), the affected versions read from the tags, a predicate over the
connector config as the user gives it, and a named scenario (conformance.catalog.named) that shows it;
tests/test_known_bugs.py replays the scenario through the model of both versions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from conformance.judging.claims import errant_records_tolerated
from conformance.inputs.connector_config import tombstones_dropped
from conformance.inputs.targets import target_kind
from reference_impl.versions import Version, VersionError, parse_version

TIME_PARTITIONERS = ("HourlyPartitioner", "DailyPartitioner", "TimeBasedPartitioner")
DEFAULT_PARTITIONER = "io.confluent.connect.storage.partitioner.DefaultPartitioner"


@dataclass(frozen=True)
class KnownBug:
    id: str
    sink: str  # the claim family it belongs to (conformance.inputs.targets.target_kind)
    title: str
    cite: str | None  # owner/repo#N: the fix, or the report when there is no fix
    also: tuple[str, ...]  # further citations (the introducing change, backports, reports)
    affected: tuple[tuple[str | None, str | None], ...]  # [from, to) version ranges: to is the fix; None: open
    fixed_in: tuple[str, ...]  # the first release without it, per release line
    needs: Callable[[dict[str, str]], bool]  # does a connector config meet the bug's condition?
    needs_text: str
    symptom: str  # what a user sees
    workaround: str | None
    scenarios: tuple[str, ...]  # named scenarios that show it
    signature: str | None = None  # regex over the failed task's trace that only this bug leaves
    # for a bug that leaves no trace: the witness a run's verdicts give of it, or None (so that a
    # generated run of the bug's shape is named too, not only its scenario)
    shown_by: Callable[[Any], str | None] | None = None
    why: str = ""  # why it is a bug when upstream has no issue for it

    def url(self, cite: str | None = None) -> str | None:
        c = cite or self.cite
        m = re.fullmatch(r"([\w.-]+)/([\w.-]+)#(\d+)", c or "")
        # GitHub sends /issues/N on to the pull request when N is one
        return f"https://github.com/{m[1]}/{m[2]}/issues/{m[3]}" if m else None

    def affects(self, version: str | None) -> bool | None:
        """Does this release have it? None when the version is not known."""
        if not version:
            return None
        try:
            v = parse_version(version)
        except VersionError:
            return None
        return any(_in(v, lo, hi) for lo, hi in self.affected)

    def matches(self, trace: str | None) -> bool:
        return bool(self.signature and trace and re.search(self.signature, trace))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "sink": self.sink, "title": self.title, "cite": self.cite, "url": self.url(),
                "also": [{"cite": c, "url": self.url(c)} for c in self.also], "affected": [_range_text(lo, hi) for lo, hi in self.affected],
                "fixed_in": list(self.fixed_in), "needs": self.needs_text, "symptom": self.symptom,
                "workaround": self.workaround, "scenarios": list(self.scenarios), "why": self.why or None}


def _in(v: Version, lo: str | None, hi: str | None) -> bool:
    return (lo is None or v >= parse_version(lo)) and (hi is None or v < parse_version(hi))


def _range_text(lo: str | None, hi: str | None) -> str:
    if lo and hi:
        return f"{lo} up to {hi} (excluded)"
    if lo:
        return f"{lo} and later (no release fixes it)"
    return f"every release before {hi}" if hi else "every release (no release fixes it)"


def _is(cfg: dict[str, str], key: str, value: str, default: str = "") -> bool:
    return str(cfg.get(key, default)).strip().lower() == value


def _partitioner(cfg: dict[str, str]) -> str:
    return str(cfg.get("partitioner.class") or DEFAULT_PARTITIONER).strip()


def _wrapped(cfg: dict[str, str]) -> bool:
    """R3.9: the schema-affix or tombstone wrapper around the configured partitioner."""
    return not _is(cfg, "s3.schema.partition.affix.type", "none", "NONE") or _is(cfg, "behavior.on.null.values", "write")


def _time_based(cfg: dict[str, str]) -> bool:
    return _partitioner(cfg).rsplit(".", 1)[-1] in TIME_PARTITIONERS


def _positive(cfg: dict[str, str], key: str) -> bool:
    try:
        return int(str(cfg.get(key, "-1")).strip()) > 0
    except ValueError:
        return False


def _scheduled_without_extractor(cfg: dict[str, str]) -> bool:
    # the writer has no timestamp extractor unless it sees a bare time-based partitioner
    return _positive(cfg, "rotate.schedule.interval.ms") and (not _time_based(cfg) or _wrapped(cfg))


def _field_partitioner(cfg: dict[str, str]) -> bool:
    return _partitioner(cfg).rsplit(".", 1)[-1] == "FieldPartitioner"


def _wrapped_time_rotation(cfg: dict[str, str]) -> bool:
    return _time_based(cfg) and _wrapped(cfg) and _positive(cfg, "rotate.interval.ms")


def _reads_control_topic_from_latest(cfg: dict[str, str]) -> bool:
    return not _is(cfg, "iceberg.kafka.auto.offset.reset", "earliest", "latest")


def _auto_creates(cfg: dict[str, str]) -> bool:
    # a Filter of tombstones before the sink (the workaround) leaves none to create the table from
    return _is(cfg, "iceberg.tables.auto-create-enabled", "true", "false") and not tombstones_dropped(cfg)


def _tasks_auto_create_together(cfg: dict[str, str]) -> bool:
    # more than one task instance may reach the table's auto-create (and its namespace's) at once
    from conformance.generators.rebalance_shapes import tasks_max

    return _is(cfg, "iceberg.tables.auto-create-enabled", "true", "false") and tasks_max(cfg) > 1


def _no_errant_record_reporter(cfg: dict[str, str]) -> bool:
    return not errant_records_tolerated(cfg)


def _cooperative(cfg: dict[str, str]) -> bool:
    from conformance.generators.rebalance_shapes import cooperative

    return cooperative(cfg)


def _aiven_default_name_default_compression(cfg: dict[str, str]) -> bool:
    return not any(cfg.get(k) for k in ("file.name.template", "aws.s3.prefix", "file.compression.type"))


def _lenses_skips_nulls(cfg: dict[str, str]) -> bool:
    if cfg.get("connect.s3.kcql"):
        return _is(cfg, "connect.s3.skip.null.values", "true", "false")
    # a Confluent-shaped config as sinkcheck sends it (adapters.connect.profiles: ignore as skip)
    return _is(cfg, "behavior.on.null.values", "ignore", "fail")


def _lenses_json_writes_nulls(cfg: dict[str, str]) -> bool:
    return _lenses_stores(cfg, "JSON") and not _lenses_skips_nulls(cfg)


_LENSES_STOREAS = re.compile(r"STOREAS\s+`?(\w+)`?", re.IGNORECASE)


def _lenses_stores(cfg: dict[str, str], *stores: str) -> bool:
    """Does the Lenses config store values as one of `stores` (JSON, AVRO, PARQUET, BYTES)? Its
    KCQL's STOREAS (any statement), or a Confluent-shaped config's format.class as sinkcheck
    translates it (adapters.connect.profiles.LENSES_FORMATS)."""
    from adapters.connect.profiles import LENSES_FORMATS

    kcql = str(cfg.get("connect.s3.kcql", ""))
    if kcql:
        return any(s.upper() in stores for s in _LENSES_STOREAS.findall(kcql))
    return LENSES_FORMATS.get(str(cfg.get("format.class", "JsonFormat")).strip().rsplit(".", 1)[-1]) in stores


def _lenses_avro_or_parquet(cfg: dict[str, str]) -> bool:
    # both writers convert each record with ToAvroDataConverter.convertToGenericRecordWithSchema
    return _lenses_stores(cfg, "AVRO", "PARQUET")


def _lenses_avro(cfg: dict[str, str]) -> bool:
    # parquet-avro writes the date's Long as an int32 (Number.intValue()): only Avro's union resolution refuses it
    return _lenses_stores(cfg, "AVRO")


def _lenses_parquet(cfg: dict[str, str]) -> bool:
    # no KCQL property or connector property reaches the AvroParquetWriter's Configuration
    return _lenses_stores(cfg, "PARQUET")


def _lenses_bytes_writes_nulls(cfg: dict[str, str]) -> bool:
    kcql = str(cfg.get("connect.s3.kcql", ""))
    skip = _is(cfg, "connect.s3.skip.null.values", "true", "false")
    if kcql:
        return bool(re.search(r"STOREAS\s+`?BYTES`?", kcql, re.IGNORECASE)) and not skip
    # a Confluent-shaped config as sinkcheck sends it (adapters.connect.profiles: ByteArrayFormat, or
    # ByteArrayConverter values under JsonFormat, as BYTES)
    fmt = str(cfg.get("format.class", "JsonFormat")).rsplit(".", 1)[-1]
    bytes_only = str(cfg.get("value.converter", "")).rsplit(".", 1)[-1] == "ByteArrayConverter"
    return (fmt == "ByteArrayFormat" or (fmt == "JsonFormat" and bytes_only)) and not skip and not _is(
        cfg, "behavior.on.null.values", "ignore", "fail")


def _stuck_commits(result: Any) -> list[Any]:
    """The witnesses of the run's failed commit-progress when each is a partition's commit stuck
    short of its end (what a bug that leaves no trace shows), else none."""
    v = next((v for v in result.verdicts if v.property == "commit-progress" and v.status == "fail"), None)
    witnesses = list(v.witnesses) if v is not None else []
    return witnesses if witnesses and all(w.anomaly == "commit-stuck" and w.offsets for w in witnesses) else []


def _commit_stopped_at_tombstones(result: Any) -> str | None:
    """Each partition whose commit stopped short of its end stopped at a run of tombstones only:
    what the run's commit-progress witnesses and its produced records say, or None."""
    stuck = _stuck_commits(result)
    if not stuck:
        return None
    said = []
    for w in stuck:
        if not isinstance(w.expected, int):
            return None
        name, committed = w.offsets[0], w.observed or 0
        tail = [p for p in result.observation.produced
                if f"{p.topic}-{p.partition}" == name and committed <= p.offset < w.expected]
        if not tail or any(p.value is not None for p in tail):
            return None
        said.append(f"{name} committed to {w.observed} of {w.expected}, the rest {len(tail)} tombstone(s)")
    return "commit-progress: " + "; ".join(said)


def _kept_partitions_never_committed(result: Any) -> str | None:
    """The cooperative bug's quiet way (it leaves no trace): after a member joined or left, every
    record is in S3 (no-loss holds) and partitions' commits are stuck where they were, since
    close() dropped the writers getOffsetAndMeta reads; or None."""
    if not {f.kind for f in result.scenario.faults} & {"add-worker", "remove-worker", "rebalance"}:
        return None
    stuck = _stuck_commits(result)
    if not stuck or not any(v.property == "no-loss" and v.status == "pass" for v in result.verdicts):
        return None
    return ("commit-progress, every record written: " + "; ".join(
        f"{w.offsets[0]} committed to {w.observed} of {w.expected}" for w in stuck)
        + " after a member joined or left under the cooperative assignor")


def _aiven_parquet_without_new_lists(cfg: dict[str, str]) -> bool:
    """Aiven's parquet output (its format.output.type, or a Confluent-shaped config's format.class
    as sinkcheck translates it: adapters.connect.profiles.AIVEN_FORMATS), parquet-avro's old list
    structure not turned off."""
    from adapters.connect.profiles import AIVEN_FORMATS

    fmt = cfg.get("format.output.type") or AIVEN_FORMATS.get(str(cfg.get("format.class", "")).strip().rsplit(".", 1)[-1], "")
    return (fmt.strip().lower() == "parquet"
            and cfg.get("connect.parquet.avro.write-old-list-structure", "true").strip().lower() != "false")


def _null_inside_an_array(value: Any) -> bool:
    if isinstance(value, list):
        return any(v is None or _null_inside_an_array(v) for v in value)
    if isinstance(value, dict):
        return any(_null_inside_an_array(v) for v in value.values())
    return False


def _flush_stuck_on_a_null_in_an_array(result: Any) -> str | None:
    """Aiven's parquet flush failing on a null inside an array (it leaves no task trace: the
    worker logs the flush's NullPointerException and rewinds): partitions' commits stuck while a
    record put() received holds an array with a null in it; or None."""
    stuck = _stuck_commits(result)
    if not stuck or not _aiven_parquet_without_new_lists(dict(result.scenario.connector)):
        return None
    import json as _json

    holding = []
    for p in result.observation.produced:
        try:
            value = _json.loads(p.value) if p.value is not None else None
        except ValueError:
            continue
        payload = value.get("payload") if isinstance(value, dict) and "payload" in value else value
        if _null_inside_an_array(payload):
            holding.append(f"{p.topic}-{p.partition}@{p.offset}")
    if not holding:
        return None
    return ("commit-progress: " + "; ".join(f"{w.offsets[0]} committed to {w.observed} of {w.expected}" for w in stuck)
            + f", records with a null inside an array at {', '.join(holding[:3])}")


# 5110b8130 ("fix: ArrayIndexOutOfBoundsException when writing records with different schema
# versions", 2026-01-29) replaced AvroData.fromConnectData with ToAvroDataConverter's own
# conversion in both writers; `git tag --contains 5110b8130`: 10.0.5 and 11.5.0 onwards (10.0.4,
# 11.4.0 and earlier convert with AvroData); ToAvroDataConverter.scala is the same in 10.0.5 and 11.7.2
_SINCE_OWN_AVRO_CONVERSION = (("10.0.5", "11.0.0"), ("11.5.0", None))


KNOWN_BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="confluent-scheduled-rotation-npe",
        sink="confluent",
        title="Scheduled rotation without a bare time-based partitioner kills the task (NPE in the rotation log line)",
        cite="confluentinc/kafka-connect-storage-cloud#871",
        also=("confluentinc/kafka-connect-storage-cloud#867",),
        affected=(("11.0.1", "11.0.2"),),  # #867 came with 11.0.1; 10.6.8 got #867 and #871 together
        fixed_in=("11.0.2",),
        needs=_scheduled_without_extractor,
        needs_text="rotate.schedule.interval.ms > 0 with a partitioner that is not time-based, or a wrapped one "
                   "(s3.schema.partition.affix.type, behavior.on.null.values=write)",
        symptom="the first record that arrives after a schedule boundary while a file is open fails the task with "
                "a NullPointerException in TopicPartitionWriter.checkRotationOrAppend (the log line's "
                "currentTimestamp - baseRecordTimestamp, both null); nothing after the open file is written",
        workaround="take 11.0.2 or later (or stay on 11.0.0); on 11.0.1 a bare time-based partitioner with "
                   "timestamp.extractor avoids it",
        scenarios=("rotate-schedule-steady-stream",),
        signature=r"NullPointerException[\s\S]*checkRotationOrAppend",
    ),
    KnownBug(
        id="confluent-field-partitioner-null",
        sink="confluent",
        title="FieldPartitioner on an optional INT or BOOLEAN field that is null kills the task",
        cite="confluentinc/kafka-connect-storage-common#438",
        also=("confluentinc/kafka-connect-storage-common#439",),
        # storage-common 11.2.23 and earlier on these lines; 11.2.27 (in 11.0.7) and 11.2.32 (in 10.6.12) have #438
        affected=(("10.6.0", "10.6.12"), ("11.0.0", "11.0.7")),
        fixed_in=("10.6.12", "11.0.7", "12.0.0"),
        needs=_field_partitioner,
        needs_text="partitioner.class=FieldPartitioner (and an optional INT8-64 or BOOLEAN partition field whose value is null)",
        symptom="NullPointerException in FieldPartitioner.encodePartition (\"Cannot invoke Object.toString() because "
                "record is null\"); the task FAILED even with errors.tolerance=all and a dead-letter queue, and the "
                "records the fixed version writes under <field>=null/ are missing",
        workaround="take 11.0.7 (10.6.12 on the 10.6 line) or later; or make the field non-null (an SMT that sets a "
                   "default) before the sink",
        scenarios=("field-partition-decimals",),
        signature=r"NullPointerException[\s\S]*FieldPartitioner",
    ),
    KnownBug(
        id="confluent-wrapped-partitioner-rotation",
        sink="confluent",
        title="rotate.interval.ms and partition-change rotation silently ignored when the partitioner is wrapped",
        cite="confluentinc/kafka-connect-storage-cloud#904",
        also=(),
        affected=(("10.4.0", "12.1.0"),),  # the wrappers came with 10.4.0 (affix, tombstone writing)
        fixed_in=("12.1.0",),
        needs=_wrapped_time_rotation,
        needs_text="a time-based partitioner with rotate.interval.ms, wrapped by s3.schema.partition.affix.type or "
                   "behavior.on.null.values=write",
        symptom="files rotate only on flush.size (or scheduled rotation): fewer, larger objects than documented, "
                "records of one time window held open until flush.size is reached; no error anywhere",
        workaround="take 12.1.0 or later; or use rotate.schedule.interval.ms, which the wrapper does not hide",
        # the two tombstone scenarios of the time suite meet it too (behavior.on.null.values=write):
        # on 11.0.1 record 7 of the record-field windows joins the file at 5 and the interval
        # rotation's file is never closed
        scenarios=("tombstones-with-record-time-rotation", "tombstones-amid-interval-rotation",
                   "tombstones-amid-record-field-windows"),
    ),
    KnownBug(
        id="confluent-error-inside-complete-200",
        sink="confluent",
        title="An error inside CompleteMultipartUpload's 200 answer kills the task (AWS SDK v1)",
        cite="confluentinc/kafka-connect-storage-cloud#858",
        also=(),
        affected=((None, "11.0.0"),),  # every release bundling the AWS SDK v1
        fixed_in=("11.0.0",),
        needs=lambda cfg: True,  # every file is a multipart upload (R7.1)
        needs_text="any config: every file is completed by CompleteMultipartUpload",
        symptom="S3 answers 200 with an InternalError inside; the SDK v1 throws it at once without retrying and "
                "the task FAILED until restarted (no data lost: the offsets were not committed)",
        workaround="take 11.0.0 or later (AWS SDK v2 retries it, R7.4); or restart the failed task",
        scenarios=("error-inside-200-not-applied", "error-inside-200-with-keys", "error-inside-200-applied"),
        signature=r"(?=[\s\S]*InternalError)[\s\S]*[Cc]ompleteMultipartUpload",
    ),
    KnownBug(
        id="confluent-close-drops-kept-writers",
        sink="confluent",
        title="A cooperative rebalance kills the task that keeps partitions: close() drops every writer (R1.7)",
        cite="confluentinc/kafka-connect-storage-cloud#950",
        also=("confluentinc/kafka-connect-storage-cloud#649", "confluentinc/kafka-connect-storage-cloud#648",
              "confluentinc/kafka-connect-storage-cloud#954"),
        # 10.0.37 closes only the revoked writers (commit ad113d8b), lost again in the merges into
        # 10.1+; #950 (12.1.x) and #954 (10.6.x backport) came after every release here
        affected=((None, "10.0.37"), ("10.1.0", None)),
        fixed_in=("10.0.37",),
        needs=_cooperative,
        needs_text="consumer.override.partition.assignment.strategy=CooperativeStickyAssignor (cooperative "
                   "rebalancing), with partitions moving while a task keeps others (tasks.max above one; a task "
                   "or worker leaving or joining)",
        symptom="the next record of a partition the task kept fails it: ConnectException \"No writer found for "
                "topic partition ...\" (a NullPointerException in S3SinkTask.put before 10.6.11/11.0.8/12.0.0); "
                "the task FAILED, nothing after is written until it is restarted",
        workaround="keep the eager default assignor (no partition.assignment.strategy override); restart the "
                   "failed task",
        scenarios=("cooperative-worker-joins-then-leaves",),
        # the NullPointerException thrown in put itself (its first frame), not one thrown below it
        signature=r"No writer found for topic partition|NullPointerException[^\n]*\n\s*at io\.confluent\.connect\.s3\.S3SinkTask\.put",
    ),
    KnownBug(
        id="iceberg-first-commit-lost",
        sink="iceberg",
        title="A coordinator that stops or moves before its first commit loses the files announced to it",
        cite="apache/iceberg#18006",
        also=("apache/iceberg#17376",),
        affected=((None, None),),  # no release reads the control topic from earliest by default (the PR is open)
        fixed_in=(),
        needs=_reads_control_topic_from_latest,
        needs_text="iceberg.kafka.auto.offset.reset left at its default (latest)",
        # the control consumer of group <connect group>-coord commits its offsets only after a
        # table commit (Coordinator.doCommit), and reads with auto.offset.reset=latest
        # (KafkaClientFactory.createConsumer): whichever consumer of that group takes the control
        # partition before the first table commit starts at its end
        symptom="the records of the data files announced before the first table commit never reach the table, "
                "while the task's source offsets have moved past them: silent loss. Any move of the control "
                "topic's partition in the coordinator's group before then does it: the coordinator's worker "
                "killed mid-commit, or a paused worker resumed (its zombie coordinator rejoins the group, takes the "
                "partition and is stopped; the new coordinator gets it back at the log end, past the DATA_WRITTEN "
                "events the task sent with its source offsets)",
        workaround="iceberg.kafka.auto.offset.reset=earliest",
        # the zombie's loss needs the pause to come before the first table commit: measured under
        # CPU load (two busy loops beside the stack), not alone
        scenarios=("iceberg-kill-during-first-commit", "iceberg-zombie-worker"),
    ),
    KnownBug(
        id="iceberg-tombstone-before-table",
        sink="iceberg",
        title="A tombstone that reaches a table's writer before the table exists kills the task",
        cite=None,
        also=(),
        affected=((None, None),),
        fixed_in=(),
        needs=_auto_creates,
        needs_text="iceberg.tables.auto-create-enabled=true and no Filter of tombstones before the sink (and a null "
                   "value first in a partition)",
        symptom="DataException \"Unable to create table from empty object\" from the table auto-create; the task "
                "FAILED and nothing is written until the tombstone is skipped by hand",
        workaround="create the table before the first record, or drop tombstones with an SMT "
                   "(Filter with the RecordIsTombstone predicate)",
        scenarios=("iceberg-tombstone-first",),
        signature=r"Unable to create table from empty object",
        why="no upstream issue found (apache/iceberg's issues and pull requests searched for tombstones, null "
            "values and this message); the sink's writer skips a null value once the table exists, so the same "
            "record is ignored or kills the task depending only on whether the table was created yet",
    ),
    KnownBug(
        id="iceberg-namespace-create-race",
        sink="iceberg",
        title="Two tasks auto-creating the table's namespace at once: the second dies on the JDBC catalog's key",
        cite=None,
        # the namespace auto-create it runs through; the JDBC catalog's start-up race of the same kind;
        # the same check-then-insert in JdbcCatalog.createNamespace lost by a Paimon committer
        also=("apache/iceberg#10186", "apache/iceberg#13343", "apache/paimon#8470"),
        affected=(("1.6.0", None),),  # the namespace auto-create (#10186) shipped in 1.6.0; no release fixes it
        fixed_in=(),
        needs=_tasks_auto_create_together,
        needs_text="iceberg.tables.auto-create-enabled=true and tasks.max>1 (the table's namespace not yet in a "
                   "JDBC catalog when the tasks' first records arrive)",
        # IcebergWriterFactory.autoCreateTable calls createNamespaceIfNotExist (1.12.0 jar, line 99), which
        # ignores only AlreadyExistsException and ForbiddenException (141-142); JdbcCatalog.createNamespace
        # checks namespaceExists (415) and then inserts (430, insertProperties 848), and execute wraps the
        # SQLException in UncheckedSQLException (780): the task whose insert comes second fails
        symptom="UncheckedSQLException \"Failed to execute: INSERT INTO iceberg_namespace_properties\" (SQLite: "
                "SQLITE_CONSTRAINT_PRIMARYKEY) from the namespace auto-create; the task FAILED until restarted "
                "(its records are read again then, the namespace exists by then)",
        # tasks.max=1 recorded (the scenario with one task: PASS); the namespace created beforehand is
        # read from the source, not recorded: a namespace that exists makes createNamespace throw
        # AlreadyExistsException (JdbcCatalog 415-416), which the sink ignores
        workaround="create the table's namespace before the connector starts (createNamespace then throws "
                   "AlreadyExistsException, which the sink ignores), or tasks.max=1",
        scenarios=("iceberg-tasks-create-namespace-at-once",),
        signature=r"Failed to execute: INSERT INTO iceberg_namespace_properties",
        why="no upstream issue found for the sink (apache/iceberg's issues and pull requests searched for the "
            "namespace auto-create, JdbcCatalog.createNamespace and this message); the sink's own "
            "createNamespaceIfNotExist means to tolerate a namespace that exists, and a concurrent creator "
            "makes it exist between the catalog's check and its insert",
    ),
    KnownBug(
        id="camel-null-value-kills-task",
        sink="camel",
        title="A null value (tombstone) kills the task when no errant-record reporter is configured",
        cite="apache/camel-kafka-connector#1300",
        also=(),
        affected=((None, None),),  # closed upstream; 4.18.0 still fails (measured)
        fixed_in=(),
        needs=_no_errant_record_reporter,
        needs_text="errors.tolerance left at none (no errant-record reporter)",
        symptom="\"Exchange delivery has failed!\" (InvalidPayloadException: no body) and the task FAILED; no "
                "record after the tombstone is written",
        workaround="errors.tolerance=all with errors.log.enable=true or a dead-letter queue (the failed exchange is "
                   "reported and skipped), or drop tombstones with an SMT",
        scenarios=("null-value-stops-the-task",),
        signature=r"Exchange delivery has failed|InvalidPayloadException",
    ),
    KnownBug(
        id="aiven-default-name-without-gz",
        sink="aiven",
        title="The default object name lacks .gz when file.compression.type is left unset, though the object is gzip",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 3.4.2; the code is unchanged on the main branch read
        fixed_in=(),
        needs=_aiven_default_name_default_compression,
        needs_text="no file.name.template, no aws.s3.prefix and file.compression.type left unset (gzip by default)",
        symptom="objects named <topic>-<partition>-<start offset> with no .gz while their bytes are gzip: a reader "
                "that goes by the extension takes them for plain text",
        workaround="set file.compression.type=gzip (or none) explicitly, or give a file.name.template",
        scenarios=("aiven-default-template-csv",),
        why="no upstream issue found (one search of Aiven-Open/cloud-storage-connectors-for-apache-kafka's issues; "
            "#547 is about the sink's gzip default against the source's none). S3SinkConfig.getCompressionType "
            "defaults to GZIP, as documented, but FileNameFragment.getFilename builds the default template from "
            "FileNameFragment.getCompressionType, which is NONE when the key is unset",
    ),
    KnownBug(
        id="aiven-zombie-overwrites-newer-object",
        sink="aiven",
        title="A zombie task's late flush overwrites the new owner's object: committed records go missing",
        cite=None,
        also=(),
        affected=((None, None),),
        fixed_in=(),
        needs=lambda cfg: True,  # every config: no upload of its is conditional
        needs_text="any config (a task paused past the consumer's session while its partitions move)",
        symptom="records the new owner committed are missing from S3 (no-loss) or missing for a while "
                "(commit-safety): both tasks name their first object <topic>-<partition>-<last committed offset>, "
                "and the resumed zombie flushes its smaller buffer over the new owner's object",
        workaround=None,
        scenarios=("aiven-zombie-task",),
        why="no upstream issue found (one search of the connector's issues); S3OutputStream uploads without a "
            "conditional write and the resumed WorkerSinkTask commits on its timer before its next poll() "
            "learns that the partitions are gone, so flush() runs in the zombie",
    ),
    KnownBug(
        id="aiven-parquet-null-in-array-never-flushes",
        sink="aiven",
        title="Parquet output of a record with a null inside an array fails every flush: nothing is committed again",
        cite=None,
        also=("confluentinc/kafka-connect-storage-cloud#339",),
        affected=((None, None),),  # measured on 3.4.2
        fixed_in=(),
        needs=_aiven_parquet_without_new_lists,
        needs_text="format.output.type=parquet and values with an array of optional items (a null inside one), "
                   "connect.parquet.avro.write-old-list-structure not set to false",
        symptom="every flush throws NullPointerException \"Array contains a null element at N. Set "
                "parquet.avro.write-old-list-structure=false\" (the worker logs it and rewinds; the task stays "
                "RUNNING): no offset is committed again on any partition of the task, and an object of 4 bytes "
                "(Parquet's magic number, the file begun before the failure) stands under the data name",
        workaround="connect.parquet.avro.write-old-list-structure=false (ParquetConfig hands the connect.parquet.* "
                   "properties to parquet-avro's Configuration)",
        scenarios=("aiven-parquet-null-in-array",),
        shown_by=_flush_stuck_on_a_null_in_an_array,
        why="no upstream issue found (one search of the connector's issues); in 3.4.2 (97e9e17c) "
            "ParquetOutputWriter.writeRecords builds its AvroParquetWriter without "
            "AvroWriteSupport.WRITE_OLD_LIST_STRUCTURE=false (ParquetOutputWriter.java:62-68), so parquet-avro's "
            "two-level list writer takes an array of optional items and throws on a null element, the fix "
            "Confluent's connector made for the same trace (kafka-connect-storage-cloud#339, PR #485: "
            "schemaHasArrayOfOptionalItems); ParquetConfig.parquetConfiguration passes connect.parquet.* on, "
            "which is the workaround (measured: the same scenario passes with it)",
    ),
    KnownBug(
        id="lenses-json-null-value-npe",
        sink="lenses",
        title="A null value (tombstone) under STOREAS `JSON` kills the task unless null values are skipped",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_json_writes_nulls,
        needs_text="STOREAS `JSON` (Confluent's JsonFormat) and connect.s3.skip.null.values left false "
                   "(behavior.on.null.values other than ignore)",
        symptom="NullPointerException \"Cannot read the array length because \"b\" is null\" from "
                "JsonFormatWriter.write (JsonFormatWriter.scala:64) and the task FAILED; nothing after the tombstone "
                "is written",
        workaround="connect.s3.skip.null.values=true (the tombstone is then not written)",
        scenarios=("tombstones-amid-interval-rotation", "tombstones-amid-record-field-windows"),
        # the NPE's own message: JsonFormatWriter is also on the trace of a bytes value it cannot write
        # ("Cannot currently write byte array as json", its documented limitation: --profile ci generated-018)
        signature=r"Cannot read the array length because \"b\" is null",
        why="no upstream issue found (lensesio/stream-reactor#938 and #991 are about other null paths: Avro and "
            "the envelope); ToJsonDataConverter hands JsonConverter's null bytes for a null value to "
            "JsonFormatWriter.write, which writes them to the stream unchecked",
    ),
    KnownBug(
        id="lenses-cooperative-rebalance-drops-kept-partitions",
        sink="lenses",
        title="A cooperative rebalance kills the task that keeps partitions: open() clears their lock state as if "
              "revoked, close() drops every writer",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=_cooperative,
        needs_text="consumer.override.partition.assignment.strategy=CooperativeStickyAssignor (cooperative "
                   "rebalancing), with partitions added to a task that keeps others (tasks.max above one; a task "
                   "or worker leaving or joining)",
        symptom="the task given partitions while it keeps others logs \"Clearing stale state for N revoked "
                "partition(s)\" naming the kept ones and \"Master lock update failed ... Master index not found\"; "
                "at their next commit FatalConnectException \"Granular lock eTag for <partition> not in cache ... "
                "Failing to preserve fencing\" (or, in another interleaving, a failed conditional index write, "
                "\"error writing file\"); the task FAILED, nothing after written until it is restarted. Or the task "
                "goes on and records are silently lost: close() deleted a kept partition's staging file, the consumer "
                "does not rewind a kept partition, and its next file holds only later records (3 records lost, "
                "commit stuck at 3 of 8). Or every record is written and the kept partitions' commits never move: "
                "WriterManager.getOffsetAndMeta returns no offset for a partition without a writer, and close() "
                "dropped theirs (--profile ci generated-002: committed to None of 7 and of 2 records)",
        workaround="keep the eager default assignor (no partition.assignment.strategy override); restart the "
                   "failed task",
        scenarios=("cooperative-worker-joins-then-leaves",),
        signature=r"Granular lock eTag for [^\n]* not in cache|Master index not found",
        shown_by=_kept_partitions_never_committed,
        why="no upstream issue found (one search of the connector's issues); under incremental cooperative "
            "rebalancing (KIP-429) Kafka Connect's WorkerSinkTask calls SinkTask.open with the newly assigned "
            "partitions only and close with the revoked ones only, but IndexManagerV2.open takes its argument for "
            "the whole assignment: every partition it has a seeked offset for and that is not in it is 'stale', "
            "and evictAllGranularLocks/clearTopicPartitionState drop the kept partitions' lock eTags "
            "(IndexManagerV2.scala:240-255), so their next lock write has no eTag to fence on "
            "(IndexManagerV2.scala:589, 795); CloudSinkTask.close ignores its argument and WriterManager.close "
            "closes every writer, whose Writer.close deletes its staging file (WriterManager.scala:96-119, "
            "Writer.scala:205-215), while the consumer does not rewind kept partitions",
    ),
    KnownBug(
        id="lenses-bytes-null-value-zero-byte-upload",
        sink="lenses",
        title="A null value (tombstone) under STOREAS `BYTES` kills the task unless null values are skipped",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_bytes_writes_nulls,
        needs_text="STOREAS `BYTES` (Confluent's ByteArrayFormat, or ByteArrayConverter values) and "
                   "connect.s3.skip.null.values left false (behavior.on.null.values other than ignore)",
        symptom="ConnectException \"fatal: nonFatal: zero byte upload prevented (<staging file>)\" and the task "
                "FAILED at the tombstone's file; nothing after it is written",
        workaround="connect.s3.skip.null.values=true (the tombstone is then not written)",
        scenarios=("lenses-tombstone-as-bytes",),
        signature=r"zero byte upload prevented",
        why="no upstream issue found; BytesFormatWriter.convertToBytes writes a null value as an empty byte array "
            "(BYTES holds one record a file), UploadableFile.validate then refuses the empty staged file "
            "(ZeroByteFileError), which PendingOperationsProcessors returns as a NonFatalCloudSinkError and "
            "CloudSinkTask.handleErrors throws as a ConnectException under the default THROW policy, on every "
            "redelivery alike (--profile ci generated-003: ByteArrayFormat with behavior.on.null.values=write)",
    ),
    KnownBug(
        id="lenses-avro-fixed-not-converted",
        sink="lenses",
        title="An Avro fixed (AvroConverter) under STOREAS `AVRO` or `PARQUET` kills the task: the ByteBuffer is "
              "written where a GenericFixed is expected",
        cite=None,
        also=(),
        affected=_SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_avro_or_parquet,
        needs_text="STOREAS `AVRO` or `PARQUET` (Confluent's AvroFormat or ParquetFormat), with values holding an Avro "
                   "fixed (AvroConverter: Connect bytes named after the fixed, with parameter connect.fixed.size)",
        symptom="ClassCastException \"value java.nio.HeapByteBuffer[...] cannot be cast to expected type <Fixed> at "
                "<Record>.<field>\" (\"class java.nio.HeapByteBuffer cannot be cast to class "
                "org.apache.avro.generic.GenericFixed\" from parquet-avro's AvroWriteSupport under PARQUET; "
                "UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"fixed\",...}]: java.nio.HeapByteBuffer\" "
                "for an optional fixed under AVRO) and the task FAILED at the first record with a fixed; nothing after "
                "it is written",
        workaround=None,
        scenarios=("lenses-avro-fixed-field",),
        # the cast of the value itself (a ByteBuffer from AvroConverter, a byte[] from JsonConverter), or the
        # union that holds the fixed refusing it; not a map or struct that merely holds a ByteBuffer
        signature=r"(?:java\.nio\.\w*ByteBuffer(?:\[[^\]\n]*\])?|\[B(?:@\w+)?)(?: \(a (?:java\.nio\.\w*ByteBuffer|\[B)\))? "
                  r"cannot be cast to (?:class org\.apache\.avro\.generic\.GenericFixed|expected type)"
                  r"|Not in union \[[^\n]*\"type\":\"fixed\"[^\n]*\]: (?:java\.nio\.\w*ByteBuffer|\[B)",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for the ClassCastException, fixed "
            "and GenericFixed; #204 is the 2017 HBase sink's bytes); in 11.7.2 (c7218e6e) both writers build the file's "
            "Avro schema with AvroData.fromConnectSchema (ToAvroDataConverter.scala:68; AvroFormatWriter.scala:96, "
            "ParquetFormatWriter.scala:93), which makes Connect bytes carrying connect.fixed.size a `fixed` again "
            "(AvroData.java:867-876 in avro-data 8.1.0; AvroConverter always sets the parameter and the name, "
            "AvroData.java:1802-1804, 2071-2075, connect.meta.data=false included: measured), and then convert each "
            "record with ToAvroDataConverter.convertToGenericRecordWithSchema (AvroFormatWriter.scala:106, "
            "ParquetFormatWriter.scala:81), whose convertBySchemaType has no FIXED case and hands the ByteBuffer on "
            "unchanged (ToAvroDataConverter.scala:177-227, `case _ => value` at 226), where AvroData.fromConnectData "
            "wrapped it in GenericData.Fixed (AvroData.java:493-516). The writers used AvroData.fromConnectData "
            "until commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or converter property avoids it",
    ),
    KnownBug(
        id="lenses-avro-optional-date",
        sink="lenses",
        title="An optional Date under STOREAS `AVRO` kills the task: its days are converted to a Long, which the union "
              "[\"null\", int] does not take",
        cite=None,
        also=(),
        affected=_SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_avro,
        needs_text="STOREAS `AVRO` (Confluent's AvroFormat), with values holding an optional Connect Date that is not "
                   "null (AvroConverter: [\"null\", {\"type\": \"int\", \"logicalType\": \"date\"}]; JsonConverter: an "
                   "optional org.apache.kafka.connect.data.Date)",
        symptom="UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"int\",...,\"logicalType\":\"date\"}]: "
                "19754 (field=ship_day)\" from Avro's DataFileWriter.append and the task FAILED at the first record whose "
                "optional date is set; nothing after it is written (a required date, and the same field under "
                "STOREAS `PARQUET`, are written: measured)",
        workaround=None,
        scenarios=("lenses-avro-optional-date",),
        signature=r"Not in union \[[^\]\n]*\"logicalType\":\"date\"[^\]\n]*\]: -?\d+",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for UnresolvedUnionException and "
            "optional dates; #429 is the 2018 'support null values in avro unions'); in 11.7.2 (c7218e6e) "
            "ToAvroDataConverter.convertFieldValue resolves the union to its non-null branch (ToAvroDataConverter.scala:"
            "200-213) and converts the Date with convertDateToDaysFromEpoch (137-141), which returns "
            "ChronoUnit.DAYS.between's Long (284-285), where AvroData.fromConnectData gave Date.fromLogical's int "
            "(AvroData.java:293-300); Avro's GenericData.resolveUnion takes only an Integer for the int branch. A "
            "required date is written (GenericDatumWriter writes an int as ((Number) datum).intValue()), as is an "
            "optional one under PARQUET (AvroWriteSupport writes the union's non-null type the same way). Came with "
            "commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or converter property avoids it. "
            "(Read, not measured: convertDateToDaysFromEpoch counts days in the worker's ZoneId.systemDefault(), so "
            "a worker west of UTC writes every Date one day early)",
    ),
    KnownBug(
        id="lenses-avro-map-with-non-string-keys",
        sink="lenses",
        title="A map with non-string keys under STOREAS `AVRO` or `PARQUET` kills the task: the Connect map is written "
              "where AvroData's array of MapEntry records is expected",
        cite=None,
        also=(),
        affected=_SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_avro_or_parquet,
        needs_text="STOREAS `AVRO` or `PARQUET` (Confluent's AvroFormat or ParquetFormat), with values holding a Connect "
                   "map whose keys are not strings (JsonConverter with schemas: \"keys\" int32 and the like; "
                   "AvroConverter: an array of io.confluent.connect.avro.MapEntry records)",
        symptom="under AVRO, UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"array\",\"items\":{\"type\":"
                "\"record\",\"name\":\"MapEntry\",...}}]: {-3=1.5, 7=0.5} (field=codes)\" for an optional map, "
                "ClassCastException \"value {} (a java.util.HashMap) cannot be cast to expected type List<MapEntry>\" "
                "for a required one (even empty); under PARQUET, IllegalArgumentException \"Cannot write unless "
                "collection or array: java.util.HashMap\": the task FAILED at the first such map; nothing after it is "
                "written",
        workaround=None,
        scenarios=("lenses-avro-optional-int-key-map",),
        signature=r"Cannot write unless collection or array: java\.util\.\w*Map"
                  r"|\(a java\.util\.\w*Map\) cannot be cast to expected type List<"
                  r"|Not in union \[[^\n]*\"type\":\"array\"[^\n]*\]: \{(?:\}|[^\"\n]*?=)",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for maps with non-string keys and "
            "MapEntry); Avro maps have string keys only, so AvroData.fromConnectSchema gives a Connect map with other "
            "keys the schema of an array of MapEntry {key, value} records (AvroData.java:897-937 in avro-data 8.1.0) and "
            "AvroData.fromConnectData fills it with one record per entry (550-593); in 11.7.2 (c7218e6e) "
            "ToAvroDataConverter.convertBySchemaType's ARRAY case converts only a java.util.List and hands anything else "
            "on unchanged (ToAvroDataConverter.scala:184-190), so the Connect map reaches Avro's writer, or "
            "parquet-avro's, where an array is expected (the MAP case, 191-199, is only for the string-keyed maps "
            "AvroData leaves maps). Came with commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or "
            "converter property avoids it (AvroConverter's allow.optional.map.keys is about optional string keys)",
    ),
    KnownBug(
        id="lenses-parquet-null-in-array-kills-task",
        sink="lenses",
        title="A null inside an array of optional items under STOREAS `PARQUET` kills the task: parquet-avro's "
              "two-level lists are left on",
        cite=None,
        also=("confluentinc/kafka-connect-storage-cloud#339", "confluentinc/kafka-connect-storage-cloud#485"),
        affected=((None, None),),  # measured on 11.7.2; ParquetFormatWriter never sets a Configuration
        fixed_in=(),
        needs=_lenses_parquet,
        needs_text="STOREAS `PARQUET` (Confluent's ParquetFormat), with values holding an array of optional items with a "
                   "null among them",
        symptom="NullPointerException \"Array contains a null element at 1. Set parquet.avro.write-old-list-structure="
                "false to turn on support for arrays with null elements.\" from parquet-avro's "
                "TwoLevelListWriter.writeCollection and the task FAILED at the first record with such a null; nothing "
                "after it is written",
        workaround="no connector or KCQL property reaches parquet-avro: put a jar holding a core-site.xml that sets "
                   "parquet.avro.write-old-list-structure=false into the connector's plugin directory (every Parquet "
                   "list is then written in the three-level list/element layout)",
        scenarios=("lenses-parquet-null-in-array",),
        signature=r"Array contains a null element at \d+",
        why="no upstream issue found for Lenses (lensesio/stream-reactor's issues searched for this message and "
            "write-old-list-structure); in 11.7.2 (c7218e6e) ParquetFormatWriter.init builds its AvroParquetWriter "
            "with no withConf or config (ParquetFormatWriter.scala:99-105), so ParquetWriter.Builder.build makes a "
            "HadoopParquetConfiguration() (new Configuration(true): Hadoop's default resources) and AvroWriteSupport "
            "keeps parquet.avro.write-old-list-structure at its default, true: the two-level list writer refuses a null "
            "element. Confluent's connector fixed the same trace by setting it to false for schemas with an array of "
            "optional items (kafka-connect-storage-cloud#339, PR #485). The default resources are read through the "
            "task's context class loader, the plugin's, so a core-site.xml in a jar of the plugin directory sets it "
            "(measured: lenses-parquet-null-in-array passes with it, the null written in a three-level list)",
    ),
    KnownBug(
        id="lenses-http-max-retries-are-attempts",
        sink="lenses",
        title="connect.s3.http.max.retries counts attempts, not retries: as many S3 errors on a lock write as it "
              "documents retrying kill the task for good",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lambda cfg: True,  # any config: the default 5 is five attempts in all
        needs_text="any config (connect.s3.http.max.retries, default 5, is the S3 client's maxAttempts), when an "
                   "index lock write meets as many S3 errors in a row",
        symptom="FatalConnectException \"error writing file ({\"owner\":...}) We encountered an internal error\" "
                "(status 500) and the task FAILED until restarted by hand, under every connect.s3.error.policy",
        workaround="set connect.s3.http.max.retries one above the retries wanted (6 for the documented 5); a failed "
                   "lock write still needs a task restart",
        scenarios=("lenses-500-on-index-as-many-as-retries",),
        # a server error on a lock write (a 412 there is fencing: another task wrote the lock)
        signature=r"FatalConnectException: error writing file \(\{\"owner\"[^\n]*Status Code: 5\d\d",
        why="no upstream issue found; the key is documented as \"Number of times to retry the http request\" "
            "(S3ConfigSettings.HTTP_NBR_OF_RETRIES_DOC) but AwsS3ClientCreator.customiseRetryStrategy passes it "
            "to the SDK as maxAttempts, the first attempt included; IndexManagerV2.update and "
            "createNewIndexFileNoOverwrite make a failed lock write a FatalCloudSinkError, which "
            "CloudSinkTask.handleErrors throws as FatalConnectException under every error policy",
    ),
    KnownBug(
        id="lenses-retried-upload-412-kills-task",
        sink="lenses",
        title="An upload its S3 client retries after the first attempt landed gets 412 and fails the task for good",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lambda cfg: _is(cfg, "connect.s3.error.policy", "throw", "throw"),
        needs_text="connect.s3.error.policy left at THROW (the default)",
        symptom="S3Exception 412 \"At least one of the pre-conditions you specified did not hold\" on the PutObject "
                "of a staged .temp-upload/ file, and the task FAILED until restarted by hand (liveness, "
                "commit-progress); the restarted task uploads the file again and goes on",
        workaround="connect.s3.error.policy=RETRY (Kafka Connect redelivers and the pending upload is retried "
                   "from the local file)",
        # (multipart-lost-commit loses the same answer, but its crash step restarts the failed task: it passes)
        scenarios=("lenses-lost-answer-to-an-upload",),
        signature=r"pre-conditions you specified did not hold",
        why="no upstream issue found; AwsS3StorageInterface.uploadFile puts with If-None-Match: *, so when the "
            "SDK retries a PutObject whose first attempt landed (a lost answer: multipart-lost-commit's dropped "
            "response) S3 answers 412; PendingOperationsProcessors calls it a transient failure "
            "(NonFatalCloudSinkError, 'deferring to recommitPending') but CloudSinkTask.handleErrors throws a "
            "ConnectException for it, which under the default THROW policy kills the task. (Its one sighting without "
            "a lost answer, an 18 MB file of multipart-crash-in-part-four retried 80 ms after S3's 200, was moto's: "
            "moto 5.2.5 computed the ETag unlocked, the SDK found it unlike the MD5 it sent and retried; sinkcheck's "
            "S3 server now locks it, adapters.processes.moto_server)",
    ),
    KnownBug(
        id="lenses-skipped-tombstones-never-committed",
        sink="lenses",
        title="Tombstones skipped at the end of a partition are never committed: a consumer lag that never "
              "reaches 0",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=_lenses_skips_nulls,
        needs_text="connect.s3.skip.null.values=true (behavior.on.null.values=ignore), and a partition whose last "
                   "records are tombstones",
        symptom="no error and no data lost, but the partition's committed offset stops at its last written record "
                "+ 1 and never reaches the log end: the Connect group's lag stays at the number of trailing "
                "tombstones (commit-progress: committed 20 of 21), and a partition of tombstones only is never "
                "committed; the next record with a value written on the partition carries the commit past them",
        workaround=None,
        scenarios=("lenses-trailing-tombstones-skipped",),
        shown_by=_commit_stopped_at_tombstones,
        why="no upstream issue found (searched the connector's issues; lensesio/stream-reactor#938 asked for "
            "skipping tombstones, not their offsets); in 11.7.2 (c7218e6e) CloudSinkTask.put skips a null value "
            "with a debug line and nothing else (CloudSinkTask.scala:196-203), and preCommit returns what "
            "WriterManager.getOffsetAndMeta computes from the partition's writers only: None without a writer, "
            "else the first buffered offset or the last committed written offset + 1 (WriterManager.scala:264-281), "
            "so no offset past the last written record is handed to Kafka Connect. No config found avoids it: writing "
            "the tombstones instead (skip.null.values=false) kills the task under STOREAS JSON "
            "(lenses-json-null-value-npe) and BYTES (lenses-bytes-null-value-zero-byte-upload), and a Filter of "
            "tombstones before the sink leaves the same offsets out of preCommit (read, not measured); --profile "
            "default generated-005-shrunk and generated-051 (committed 20 of 21, 10 of 12)",
    ),
)

BY_ID: dict[str, KnownBug] = {b.id: b for b in KNOWN_BUGS}


def version_of(result: Any) -> str | None:
    """The connector version a run ran: what the target said of itself, else its spec's `@VERSION`."""
    info = getattr(result, "target_info", None)
    if info is not None and getattr(info, "connector_version", None):
        return info.connector_version
    spec = result.target
    if spec.startswith("model@"):
        return spec.split("@", 1)[1]
    return spec.partition("@")[2] or None


def sink_of(spec: str) -> str:
    return "confluent" if spec.startswith("model@") or spec == "model" else target_kind(spec)


def _trace(result: Any) -> str | None:
    sts = getattr(result.observation, "statuses", None) or []
    return next((s.trace for s in reversed(sts) if getattr(s, "trace", None)), None)


def _signature_line(bug: KnownBug, trace: str | None) -> str | None:
    """The line of the trace where the bug's signature starts (its exception)."""
    if not bug.matches(trace):
        return None
    m = re.search(bug.signature or "", trace or "")
    start = (trace or "").rfind("\n", 0, m.start() if m else 0) + 1
    return (trace or "")[start:].splitlines()[0].strip()[:240]


def _witness(bug: KnownBug, result: Any) -> str:
    parts = [f"the task FAILED with {line}"] if (line := _signature_line(bug, _trace(result))) else []
    parts += [f"{v.property}: {v.message}" + (f" ({v.witnesses[0].explanation})" if v.witnesses else "")
              for v in result.verdicts if v.status == "fail" and v.property != "liveness"][:2]
    return "; ".join(parts) or next((f"{v.property}: {v.message}" for v in result.verdicts if v.status == "fail"), "")


def reproduction(bug: KnownBug, result: Any) -> str | None:
    """The witness a run gives of this bug, or None: its scenario failing, the task's trace
    carrying the bug's signature, or (a bug that leaves no trace) its `shown_by` over a run whose
    config meets it."""
    if sink_of(result.target) != bug.sink:
        return None
    trace = _trace(result)
    # a scenario of the bug failing for another reason (another trace) is not this bug
    if result.scenario.name in bug.scenarios and result.status == "fail" and (not trace or not bug.signature
                                                                             or bug.matches(trace)):
        return f"{result.scenario.name} failed: {_witness(bug, result)}"
    if bug.matches(trace):
        return f"{result.scenario.name}: {_witness(bug, result)}"
    if bug.shown_by and bug.needs(dict(result.scenario.connector)) and (w := bug.shown_by(result)):
        return f"{result.scenario.name}: {w}"
    return None


def relevant(results: Sequence[Any]) -> list[dict[str, Any]]:
    """Per target, each known bug that touches a config the run played on a version that has it
    (or whose version is not known), and whether the run reproduced it."""
    out: list[dict[str, Any]] = []
    by_target: dict[str, list[Any]] = {}
    for r in results:
        by_target.setdefault(r.target, []).append(r)
    for target, rs in by_target.items():
        sink = sink_of(target)
        version = next((v for v in (version_of(r) for r in rs) if v), None)
        for bug in KNOWN_BUGS:
            if bug.sink != sink:
                continue
            configs = [r.scenario.name for r in rs if bug.needs(dict(r.scenario.connector))]
            witnesses = [(r.scenario.name, w) for r in rs if (w := reproduction(bug, r))]
            affected = bug.affects(version)
            if not witnesses and (not configs or affected is False):
                continue
            out.append({**bug.to_json(), "target": target, "version": version,
                        "version_affected": affected, "configs": configs,
                        "reproduced": bool(witnesses), "witnesses": [{"scenario": s, "witness": w} for s, w in witnesses]})
    return out


def gate_changes(baseline: Sequence[Any], candidate: Sequence[Any]) -> list[dict[str, Any]]:
    """Known bugs the upgrade fixes (reproduced on the baseline, not on the candidate although it
    played the same scenario) or introduces (the other way round), with the witness."""
    def seen(rs: Sequence[Any]) -> dict[str, str]:
        found: dict[str, str] = {}
        for bug in KNOWN_BUGS:
            w = next((w for r in rs if (w := reproduction(bug, r))), None)
            if w:
                found[bug.id] = w
        return found

    base, cand = seen(baseline), seen(candidate)
    played_base = {r.scenario.name for r in baseline}
    played_cand = {r.scenario.name for r in candidate}
    changes = []
    for bug in KNOWN_BUGS:
        if bug.id in base and bug.id not in cand and set(bug.scenarios) & played_cand:
            changes.append({"id": bug.id, "change": "fixed", "cite": bug.cite, "url": bug.url(),
                            "witness": base[bug.id], "title": bug.title})
        elif bug.id in cand and bug.id not in base and set(bug.scenarios) & played_base:
            changes.append({"id": bug.id, "change": "introduced", "cite": bug.cite, "url": bug.url(),
                            "witness": cand[bug.id], "title": bug.title})
    return changes


def gate_line(change: dict[str, Any]) -> str:
    cite = f" ({change['cite']})" if change.get("cite") else ""
    return f"known bug {change['id']}{cite} {change['change']}: {change['witness']}"


def known_bug_line(b: dict[str, Any]) -> str:
    """One entry of `relevant` as the terminal says it."""
    cite = f" ({b['cite']})" if b.get("cite") else ""
    fixed = f"fixed in {', '.join(b['fixed_in'])}" if b["fixed_in"] else "no fixed release"
    head = (f"KNOWN BUG {b['id']}{cite} on {b['target']}: "
            + (f"reproduced: {b['witnesses'][0]['witness']}" if b["reproduced"] else
               f"its condition is met ({', '.join(b['configs'][:3])}), not reproduced by this run"))
    return head + f"\n  {fixed}; workaround: {b['workaround'] or 'none known'}"
