"""Claims: which properties a (target, config, fault schedule) promises.

Confluent's S3 sink (and sinkcheck's Python sink, which follows the same semantics) claims
exactly-once under the conditions of spec §16: a deterministic partitioner, rotation by
record time or size (not `rotate.schedule.interval.ms`, not the Wallclock extractor), and no
configuration change mid-stream (C3). Caveat C1: with several encoded partitions open at once
(FieldPartitioner, or no partition-change rotation) a retriable S3 error can duplicate.
Aiven and Camel claim at-least-once with their own naming. Apache Iceberg's sink claims
exactly-once through the table: a reader of its current snapshot (view "log") sees every record
up to the committed source offsets once. Spark Structured Streaming makes two
claims, each with its reader's view of the bucket: exactly-once for a reader that follows the
`_spark_metadata` log (view "log"), at-least-once for a raw listing (view "listing").
Unclaimed properties are still measured and reported; they never fail a run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from conformance.inputs.connector_config import tombstones_dropped
from conformance.inputs.scenario import FaultStep
from conformance.judging.startup import is_startup_rule

PROPERTIES = (
    "no-loss", "no-duplicates", "exact-object-set", "atomic-visibility", "contents", "commit-safety",
    "commit-progress", "naming", "rotation", "file-count", "multipart-hygiene", "liveness",
)
AT_LEAST_ONCE = frozenset({"no-loss", "atomic-visibility", "commit-safety", "commit-progress", "liveness"})
CONFLUENT_NAMING = frozenset({"naming", "rotation", "contents"})
EXACTLY_ONCE = frozenset({"no-duplicates", "exact-object-set", "file-count"})

# targets whose objects follow the Confluent S3 sink's semantics and naming
CONFLUENT_SEMANTICS = ("confluent", "pysink")


@dataclass(frozen=True)
class Claim:
    name: str  # "exactly-once" | "at-least-once"
    properties: frozenset[str]
    naming: str  # "confluent" | "aiven" | "camel" | "iceberg" | "own"
    reasons: tuple[str, ...] = ()
    # what the claim's reader sees: "listing" (every object of a raw listing of the bucket) or
    # "log" (only the files the sink's own commit log lists: BucketSample.committed_keys), or
    # "latest-per-key" (a listing where only each key's last record must be: a compacting sink)
    view: str = "listing"
    # the spec's caveats in force (C1, SDK_V1_COMPLETE, ...): what the runner reads, where
    # `reasons` is what a person reads
    caveats: frozenset[str] = frozenset()

    def claims(self, prop: str) -> bool:
        return prop in self.properties


def _kind(target: str) -> str:
    from conformance.inputs.targets import target_kind

    t = target_kind(target) if target.startswith(("kafka-connect:", "pysink")) else target
    return t if t in ("confluent", "aiven", "camel", "iceberg", "lenses", "pysink", "spark-streaming") else "own"


def claims_for(target: str, config: dict[str, str], faults: Iterable[FaultStep] = (),
               version: str | None = None, null_values: bool = False, bytes_values: bool = False) -> list[Claim]:
    """Every claim the target makes for this config, the primary one (`claim_for`) first; each
    is checked on the same observation. `null_values`: some record reaches the sink with a null
    value (a tombstone); `bytes_values`: some with a bytes value."""
    if _kind(target) == "spark-streaming":
        return spark_claims(faults)
    return [claim_for(target, config, faults, version, null_values, bytes_values)]


def claims_for_values(target: str, config: dict[str, str], faults: Iterable[FaultStep], version: str | None,
                      values: Sequence[Any]) -> list[Claim]:
    """`claims_for`, told what the sink receives by the values its put() gets (a null: a tombstone;
    bytes): the runner and the offline replay of a recorded run both ask here, so a run and its
    replay are held to one claim."""
    return claims_for(target, config, faults, version, any(v is None for v in values),
                      any(isinstance(v, (bytes, bytearray)) for v in values))


def errant_records_tolerated(config: dict[str, str]) -> bool:
    """Does the task get an errant-record reporter that skips what put() reports (KIP-610)? The
    worker gives one only where errors.log.enable=true or a dead-letter topic is set, and it
    tolerates only with errors.tolerance=all."""
    reporter = (config.get("errors.log.enable", "false").strip().lower() == "true"
                or bool(config.get("errors.deadletterqueue.topic.name", "").strip()))
    return reporter and config.get("errors.tolerance", "none").strip().lower() == "all"


def null_stops_task(kind: str, config: dict[str, str]) -> bool:
    """Does a null value stop this target's task, so that nothing after it is written? Camel's:
    its exchange has no body, and only a tolerated errant record lets the task go on."""
    return kind == "camel" and not errant_records_tolerated(config) and not tombstones_dropped(config)


def bytes_stop_task(kind: str, config: dict[str, str]) -> bool:
    """Does a bytes value stop this target's task? Lenses' JSON store: its ToJsonDataConverter
    throws "Cannot currently write byte array as json" for a bytes value (stream-reactor 11.7.2),
    out of put(), which no errors.tolerance covers; BYTES, AVRO and PARQUET store bytes."""
    from conformance.judging.objects import lenses_format

    return kind == "lenses" and lenses_format(config) == "JSON"


def task_stops_at(kind: str, config: dict[str, str], values: list[Any]) -> int | None:
    """The index of the first record whose value (as the connector's converter reads it) stops
    this target's task, which then writes nothing after it: a null value for Camel without an
    errant-record reporter, a bytes value for Lenses' JSON store; None where none does."""
    stops = [i for i, v in enumerate(values)
             if (v is None and null_stops_task(kind, config))
             or (isinstance(v, (bytes, bytearray)) and bytes_stop_task(kind, config))]
    return stops[0] if stops else None


def camel_claim(config: dict[str, str], null_values: bool = False, faults: Iterable[FaultStep] = ()) -> Claim:
    """Camel's aws-s3-sink: put() sends each record through the kamelet to S3 (one PutObject,
    keyed by the `file`/`ce-file` header, `keyName`, else the exchange id) and returns only once
    it is written, so the offsets the worker commits after put() are durable: at-least-once.
    A failed exchange goes to the errant-record reporter where there is one, else fails the task
    (CamelSinkTask.put, 4.18.0: "Exchange delivery has failed!")."""
    props = set(AT_LEAST_ONCE)
    reasons = ["put() writes each record synchronously before the worker commits its offset: at-least-once",
               "keys are the Camel exchange id unless a header or keyName names them: no naming to hold it to"]
    if config.get(CAMEL_KEY_NAME, "").strip():
        props -= {"no-loss"}
        reasons.append(f"{CAMEL_KEY_NAME} gives every record the same key: each object replaces the last "
                       "(no-loss measured, not claimed)")
    if null_values and not tombstones_dropped(config):  # a Filter of tombstones: none reaches put()
        if errant_records_tolerated(config):
            reasons.append("a null value fails its exchange (no body to write); errors.tolerance=all with an "
                           "errant-record reporter skips it and the task goes on")
        else:
            props -= {"liveness", "commit-progress"}
            reasons.append("a null value fails its exchange (no body to write) and, without errors.tolerance=all "
                           "and an errant-record reporter (errors.log.enable=true or a dead-letter topic), the "
                           "task with it: liveness and commit-progress measured, not claimed")
    fatal = sdk_v2_fatal_s3_answers(faults)
    if fatal and errant_records_tolerated(config):
        props -= {"no-loss"}
        reasons.append(f"{S3_FATAL}: {fatal[0]}: the aws2-s3 producer's AWS SDK v2 client does not retry it and the "
                       "exchange fails; with errors.tolerance=all and an errant-record reporter its record goes to the "
                       "reporter, not to S3 (CamelSinkTask.put: 'Sending record to the DLQ'): no-loss measured, not "
                       "claimed")
    elif fatal:
        props -= {"liveness", "commit-progress"}
        reasons.append(f"{S3_FATAL}: {fatal[0]}: the aws2-s3 producer's AWS SDK v2 client does not retry it, the "
                       "exchange fails and, without an errant-record reporter that tolerates it, put() throws "
                       "('Exchange delivery has failed!') and Kafka Connect fails the task: liveness and commit "
                       "progress measured, not claimed")
    return Claim("at-least-once", frozenset(props), "camel", tuple(reasons))


CAMEL_KEY_NAME = "camel.kamelet.aws-s3-sink.keyName"


def aiven_claim(config: dict[str, str]) -> Claim:
    """Aiven's S3 sink 3.4.2 (its README): records are grouped until Kafka Connect's flush
    (each `offset.flush.interval.ms`, and on rebalance or stop), which uploads them before the
    worker commits the offsets: at-least-once, no exactly-once claim. Objects are named by
    `file.name.template` (or `aws.s3.prefix`'s legacy names), hold at most `file.max.records`
    records of one flush, and carry `format.output.fields`. With a `{{key}}` template each key's
    object is overwritten by every flush ("compact" grouping): a reader sees the latest value
    per key (view "latest-per-key"), a superseded record may be gone."""
    from conformance.judging.objects import aiven_groups_by_key, aiven_key

    props = set(AT_LEAST_ONCE) | {"file-count", "contents"}
    reasons = ["the upload happens in SinkTask.flush(), before Kafka Connect commits the offsets: at-least-once "
               "(no exactly-once claim)",
               "nothing is written before a flush: object boundaries follow offset.flush.interval.ms, so there is "
               "no exact object set (measured, not claimed)",
               "file.max.records bounds every object's records; format.output.fields are written per record",
               "incomplete multipart uploads after a crash or a failed upload: measured, not claimed"]
    if aiven_key(config, "t", 0, 0, "k") is not None:
        props.add("naming")
        reasons.append("objects are named by file.name.template (default {{topic}}-{{partition}}-{{start_offset}} "
                       "plus the compression's extension), or aws.s3.prefix's legacy names")
    else:
        reasons.append("file.name.template names objects by a timestamp: naming measured, not claimed")
    view = "listing"
    if aiven_groups_by_key(config):
        view = "latest-per-key"
        reasons.append("a {{key}} template keeps one object per key that each flush overwrites: the latest value per "
                       "key must be there, a superseded one may be gone")
    return Claim("at-least-once", frozenset(props), "aiven", tuple(reasons), view=view)

def sdk_v2_fatal_s3_answers(faults: Iterable[FaultStep], conditional: bool = False) -> list[str]:
    """The S3 error answers of the schedule an AWS SDK v2 client with its default retry condition
    does not retry (reference_impl.s3_errors.client_retries: 5xx, throttling, RequestTimeout and
    the definite clock skews are retried). A 412 only where the sink's requests carry a condition
    (`conditional`; elsewhere none is played) and S3 refused the write (a conflicting one, no object
    at the key): a 412 to an upload S3 applied (state "applied") is not here, for the write is
    there, and a sink that dies of that has a bug of its own (Lenses':
    lenses-retried-upload-412-kills-task)."""
    from reference_impl.s3_errors import client_retries

    out = []
    for f in faults:
        p = f.params
        if f.kind != "s3" or p.get("action") != "fail":
            continue
        status, code = int(p.get("status") or 0), str(p.get("code") or "")
        if status == 412 or code == "PreconditionFailed":
            if conditional and p.get("state") != "applied":
                out.append(f"{status} {code}".strip())
            continue
        if client_retries(status, code, True):
            continue
        out.append(f"{status} {code}".strip())
    return out


def lenses_fatal_s3_answers(config: dict[str, str], faults: Iterable[FaultStep]) -> list[str]:
    """The S3 error answers of the schedule that Lenses' task dies on by its documentation: one
    its AWS SDK v2 client does not retry, under connect.s3.error.policy=THROW, the default (NOOP
    drops the error, RETRY hands Kafka Connect a RetriableException). Its uploads put with
    If-None-Match: *, so a 412 S3 gives them for a write it refused is one of these."""
    if config.get("connect.s3.error.policy", "THROW").strip().upper() != "THROW":
        return []
    return sdk_v2_fatal_s3_answers(faults, conditional=True)


def lenses_claim(config: dict[str, str], faults: Iterable[FaultStep] = (), bytes_values: bool = False) -> Claim:
    """Lenses' S3 sink (stream-reactor 11.7.2): with `connect.s3.exactly.once.enable` (on by
    default) each file is written once and its offset kept in `.indexes/` lock objects in the
    same bucket, from which a restarted task resumes: exactly-once in the data objects (outside
    `.indexes/`), named by the offset of their last record and their records' timestamps. Off,
    the default Kafka offset tracking gives at-least-once."""
    exactly = config.get("connect.s3.exactly.once.enable", "true").strip().lower() != "false"
    props = set(AT_LEAST_ONCE) | {"naming"}
    reasons = ["files are named <prefix>/<topic>/<partition>/<last offset, 12 digits>_<earliest ts>_<latest ts>.<ext>",
               "the .indexes/ lock objects are the sink's own, never data"]
    if exactly:
        props.add("no-duplicates")
        reasons.insert(0, "connect.s3.exactly.once.enable (default true): each record in the data objects once, the "
                          "offsets kept in .indexes/ and resumed from after a crash")
    else:
        reasons.insert(0, "connect.s3.exactly.once.enable=false: Kafka's offset tracking, at-least-once")
    fatal = lenses_fatal_s3_answers(config, faults)
    if fatal:
        # a task that dies where its documentation says it does breaks no claim; records lost or
        # written twice on the way still do
        props -= {"liveness", "commit-progress"}
        reasons.append(f"{S3_FATAL}: {fatal[0]}: its AWS SDK v2 client does not retry it, and "
                       "connect.s3.error.policy=THROW (the default) fails the task (CloudSinkTask.handleErrors); "
                       "liveness and commit progress measured, not claimed")
    if bytes_values and bytes_stop_task("lenses", config):
        props -= {"liveness", "commit-progress"}
        reasons.append("STOREAS `JSON` cannot write a bytes value (ToJsonDataConverter: \"Cannot currently write byte "
                       "array as json\"): the task dies at the first one, so liveness and commit-progress are "
                       "measured, not claimed (Lenses stores bytes with BYTES, AVRO or PARQUET)")
    return Claim("exactly-once" if exactly else "at-least-once", frozenset(props), "lenses", tuple(reasons))


# Iceberg's liveness bound beyond its commit interval and commit timeout (a round that misses a
# task's answer ends there): a worker's restart and the group's rebalance after a crash
ICEBERG_COMMIT_BOUND_S = 30.0


def iceberg_claim(config: dict[str, str], faults: Iterable[FaultStep] = ()) -> Claim:
    """Apache Iceberg's sink documents "exactly-once delivery semantics" (KIP-447 transactions)
    and "commit coordination for centralized Iceberg commits": a reader of the table (its
    current snapshot, view "log") sees every record once, rows appear only through commits, a
    commit comes each `iceberg.control.commit.interval-ms`. Its documentation says nothing of
    when the source offsets are committed, or of the files of failed attempts."""
    from adapters.connect.profiles import iceberg_commit_timing_s

    interval, timeout = iceberg_commit_timing_s(config)
    faults = list(faults)
    props = {"no-loss", "no-duplicates", "atomic-visibility", "commit-progress", "liveness"}
    lost: tuple[str, ...] = ()
    fatal = sdk_v2_fatal_s3_answers(faults)
    if fatal:
        props -= {"liveness", "commit-progress"}
        lost += (f"{S3_FATAL}: {fatal[0]}: S3FileIO's AWS SDK v2 client does not retry it (its retry condition is "
                 "the SDK's default and XMLStreamException, iceberg-aws 1.12.0), the IOException leaves the task's "
                 "put() and Kafka Connect fails the task: liveness and commit progress measured, not claimed",)
    if any(f.kind == "lose-offset-commit" for f in faults):
        props.discard("no-duplicates")
        lost += ("exactly-once rests on the Connect group's committed offsets (the task seeks to them, "
                "KafkaUtils.seekToLastCommittedOffsets; snapshots store only the control topic's): an offset "
                "commit lost outside the sink re-delivers records the table holds, so no-duplicates is "
                "measured, not claimed",)
    return Claim("exactly-once", frozenset(props), "iceberg",
                 lost + ("exactly-once delivery through the table: a reader of the current snapshot sees each record once",
                  f"liveness: a table commit within iceberg.control.commit.interval-ms ({interval:g} s) plus "
                  f"its commit timeout ({timeout:g} s) plus {ICEBERG_COMMIT_BOUND_S:.0f} s (from the scenario's "
                  "restart of a task, or release of an S3 call it held, where one came between: the wait for it "
                  "is the scenario's)",
                  "a task commits its source offsets with the files it sends the coordinator, before the table "
                  "commit: the offsets run ahead of the table until the commit (the control topic holds the "
                  "files meanwhile), so commit-safety is measured, not claimed",
                  "data files of failed attempts stay in the bucket, never referenced by the table: measured "
                  "(the raw listing), not claimed"),
                 view="log")


def spark_claims(faults: Iterable[FaultStep] = ()) -> list[Claim]:
    """Spark Structured Streaming's file sink: a batch's files, then its entry in
    `_spark_metadata`, then the checkpoint's commit. A reader of the log sees each batch once
    (exactly-once); a raw listing also shows the files of attempts that died or were repeated
    (at-least-once). S3A leaves a multipart upload open when a writer dies mid-file."""
    multipart = "incomplete multipart uploads of a killed writer stay open (S3A): measured, not claimed"
    log = Claim("exactly-once", frozenset(AT_LEAST_ONCE | {"no-duplicates"}), "own",
                ("a reader that follows the _spark_metadata log sees each committed batch's files once", multipart),
                view="log")
    listing = Claim("at-least-once", AT_LEAST_ONCE, "own",
                    ("a raw listing also shows files of batch attempts that died or were re-run", multipart),
                    view="listing")
    return [log, listing]


SDK_V1_COMPLETE = "R7.4 with SDK v1"
C1 = "C1"  # several open files and a retriable S3 error: committed records written again (spec §16)
C4 = "C4"  # a zombie's late upload replaces a newer object: its siblings may be its successor's (spec §16)
# faults after which a task no longer owns its partitions, while a request it sent may still be
# held by S3 (or by the network) and applied later
EVICTIONS = ("crash", "pause", "rebalance", "kill-worker", "pause-worker", "add-worker", "remove-worker")


def fatal_error_inside_complete(faults: Iterable[FaultStep], version: str | None) -> bool:
    """Does an error-200 rule on CompleteMultipartUpload kill this connector version's task?"""
    from reference_impl.versions import VersionError, VersionProfile

    try:
        retried = VersionProfile.of(version).retries_error_inside_complete
    except VersionError:
        return False
    return not retried and any(f.kind == "s3" and f.params.get("action") == "error-200"
                               and f.params.get("operation") in ("CompleteMultipartUpload", "*") for f in faults)


S3_FATAL = "R7.4 fatal S3 answer"  # a faulty answer the release documents as killing the task


def s3_answers(faults: Iterable[FaultStep], config: dict[str, str], version: str | None) -> list[tuple[FaultStep, Any]]:
    """Each S3 rule of the schedule with the release's handling of one answer it gives
    (reference_impl.s3_errors): retried by the client, rewound, a file that exists, ignored,
    or the task killed."""
    from reference_impl.s3_errors import one_answer
    from reference_impl.versions import VersionError, VersionProfile

    try:
        v = VersionProfile.of(version).version if version else None
    except VersionError:
        v = None
    conditional = conditional_writes(config, version)
    faults = list(faults)
    # R8.2: a HEAD refused with 403 after a 412 counts as the key there (S3OutputStream.fileExists)
    head_refused = any(f.kind == "s3" and f.params.get("operation") == "HeadObject"
                       and int(f.params.get("status", 0) or 0) == 403 for f in faults)
    out = []
    for f in faults:
        if f.kind != "s3":
            continue
        p = f.params
        status = int(p.get("status", 503) or 0)
        code = str(p.get("code") or "")
        if not code and p.get("action") == "fail":
            from adapters.s3.rules import ERROR_CODES
            code = ERROR_CODES.get(status, "InternalError")
        out.append((f, one_answer(v, str(p.get("operation", "*")), str(p.get("action", "")), status, code,
                                  conditional=conditional, object_there=p.get("state") == "applied" or head_refused,
                                  answer_cut=p.get("action") == "stall" or (p.get("action") == "reset"
                                                                            and p.get("forward", True)))))
    return out


def fatal_s3_answers(faults: Iterable[FaultStep], config: dict[str, str], version: str | None) -> list[str]:
    """Why an S3 rule of the schedule kills the task where it fires (error-200 aside: SDK_V1_COMPLETE)."""
    return [f"{f.params.get('operation')} {f.params.get('status', '')} {f.params.get('code') or ''}: {h.why}".replace("  ", " ")
            for f, h in s3_answers(faults, config, version)
            if h.kills_task and f.params.get("action") not in ("error-200", "drop-response")]


def conditional_writes(config: dict[str, str], version: str | None) -> bool:
    """R8.1 as the model reads it: does CompleteMultipartUpload carry If-None-Match here?"""
    from conformance.inputs.connector_config import sink_config
    from reference_impl.config import ConfigError
    from reference_impl.versions import VersionError

    try:
        return sink_config(config, version).conditional_writes_active
    except (ConfigError, VersionError):
        return False


def late_completion(faults: Iterable[FaultStep]) -> bool:
    """Whether a held CompleteMultipartUpload or PutObject is released after its task was evicted
    (C4): a worker abandons a task stuck in an S3 call when it stops it (Connect waits
    task.shutdown.graceful.timeout.ms and goes on), and a killed process's request already sent
    is applied when S3 answers it, so the evicted task's object lands after its successor's."""
    held: set[str] = set()
    evicted: set[str] = set()
    for f in faults:
        if f.kind == "s3" and f.params.get("action") == "hang" and f.params.get("operation") in (
                "CompleteMultipartUpload", "PutObject", "*"):
            held.add(str(f.params.get("name")))
        elif f.kind in EVICTIONS:
            evicted |= held
        elif f.kind == "release" and str(f.params.get("rule")) in evicted:
            return True
    return False


def several_open_files(config: dict[str, str]) -> bool:
    """R3.10: several files of a topic-partition open at once: FieldPartitioner, a time-based one
    without rotate.interval.ms (no partition-change rotation then) or with it turned off, and a
    tombstone file beside a value file (R3.3: a change to or from it does not rotate)."""
    part = config.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
    time_based = part in ("TimeBasedPartitioner", "DailyPartitioner", "HourlyPartitioner")
    return (part == "FieldPartitioner" or config.get("rotate.file.on.partition.change", "true") == "false"
            or (time_based and int(config.get("rotate.interval.ms", "-1") or -1) <= 0)
            or config.get("behavior.on.null.values", "fail").lower() == "write")


def claim_for(target: str, config: dict[str, str], faults: Iterable[FaultStep] = (),
              version: str | None = None, null_values: bool = False, bytes_values: bool = False) -> Claim:
    kind = _kind(target)
    faults = list(faults)
    if kind == "spark-streaming":
        return spark_claims(faults)[0]
    if kind == "camel":
        return camel_claim(config, null_values, faults)
    if kind == "iceberg":
        return iceberg_claim(config, faults)
    if kind == "aiven":
        return aiven_claim(config)
    if kind == "lenses":
        return lenses_claim(config, faults, bytes_values)
    if kind not in CONFLUENT_SEMANTICS:
        return Claim("at-least-once", AT_LEAST_ONCE, kind,
                     (f"{kind} makes no exactly-once claim; upload-then-commit gives at-least-once",))
    # a rule on the start-up bucket check touches no upload: whether the task starts is the model's
    # (R1.3, conformance.judging.startup); it neither kills a writing task nor makes a retry
    faults = [f for f in faults if not is_startup_rule(f)]
    props = set(AT_LEAST_ONCE | CONFLUENT_NAMING)
    reasons: list[str] = []
    caveats: set[str] = set()
    exactly = True
    part = config.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
    scheduled = int(config.get("rotate.schedule.interval.ms", "-1") or -1) > 0
    wallclock = part in ("TimeBasedPartitioner", "DailyPartitioner", "HourlyPartitioner") and \
        config.get("timestamp.extractor", "Wallclock") == "Wallclock"
    if scheduled:
        exactly = False
        reasons.append("rotate.schedule.interval.ms rotates on wall-clock time: at-least-once only (§16)")
    if wallclock:
        exactly = False
        reasons.append("the Wallclock extractor is not deterministic: at-least-once only (§16)")
    if any(f.kind == "update-config" for f in faults):
        exactly = False
        reasons.append("a config change mid-stream moves file boundaries (C3)")
    several_open = several_open_files(config)
    # a dropped Complete response is an error to the sink too (a broken connection), so it retries
    retriable = any(f.kind == "s3" and f.params.get("action") in ("fail", "error-200", "drop-response", "reset",
                                                                   "stall") for f in faults)
    # the Python sink is its own client: the SDK generation is Confluent's connector's
    if kind == "confluent" and fatal_error_inside_complete(faults, version):
        props -= {"liveness", "commit-progress"}
        caveats.add(SDK_V1_COMPLETE)
        reasons.append(f"{SDK_V1_COMPLETE}: an error inside CompleteMultipartUpload's 200 is not retried by the AWS "
                       "SDK v1 client (before 11.0.0) and kills the task; liveness and commit progress measured, "
                       "not claimed, and the model's files possible, not required")
    fatal = fatal_s3_answers(faults, config, version if kind == "confluent" else None)
    if fatal:
        # a task that dies where its release says it dies breaks no claim; losing or duplicating
        # records on the way does (no-loss, commit-safety and, where claimed, exactly-once stay)
        props -= {"liveness", "commit-progress"}
        caveats.add(S3_FATAL)
        reasons.append(f"{S3_FATAL}: {fatal[0]}; liveness and commit progress measured, not claimed, and the "
                       "model's files possible, not required")
    if several_open and retriable:
        exactly = False
        caveats.add(C1)
        reasons.append("several open files plus a retriable S3 error re-write committed records (C1)")
    if exactly:
        props |= EXACTLY_ONCE
        reasons.append("deterministic partitioner and rotation: exactly-once (§16)")
    zombie = any(f.kind in ("pause", "pause-worker") for f in faults) or late_completion(faults)
    # the Python sink sends If-None-Match where the connector does (R8.1)
    guarded = conditional_writes(config, version)
    if zombie and (scheduled or wallclock) and not guarded:
        props -= {"no-loss", "commit-safety"}
        caveats.add(C4)
        reasons.append("C4: a zombie's late upload can overwrite a newer object of the same key with other records "
                       "(boundaries follow the wall clock, and conditional writes (R8) are off here): no-loss and "
                       "commit-safety measured, not claimed, and a keys or headers object may be its successor's")
    process_faults = any(f.kind in EVICTIONS for f in faults)
    s3_faults = any(f.kind == "s3" for f in faults)
    # a CreateMultipartUpload whose answer never came makes an upload the sink never heard of
    unknown_upload = any(f.kind == "s3" and (f.params.get("action") in ("drop-response", "stall")
                                             or (f.params.get("action") == "reset" and f.params.get("forward", True)))
                         and f.params.get("operation") in ("CreateMultipartUpload", "*") for f in faults)
    # an abort S3 refused leaves its upload: Confluent's connector ignores the failure (R7.5)
    refused_abort = any(f.kind == "s3" and f.params.get("operation") == "AbortMultipartUpload" for f in faults)
    if refused_abort:
        reasons.append("an AbortMultipartUpload S3 refused leaves its upload (R7.5: ignored): multipart hygiene "
                       "measured, not claimed")
    elif not process_faults and not unknown_upload and (kind == "pysink" or not s3_faults):
        # the Python sink aborts every upload it gives up; Confluent's leaks after a failed
        # Complete and on discarded writers (R7.6), and any sink leaks when it is killed
        props.add("multipart-hygiene")
    elif unknown_upload:
        reasons.append("an upload created by a CreateMultipartUpload whose answer was lost is one no sink can "
                       "abort: multipart hygiene measured, not claimed")
    else:
        reasons.append("incomplete multipart uploads may be left by crashes and failed completes (R7.5, R7.6): measured, not claimed")
    return Claim("exactly-once" if exactly else "at-least-once", frozenset(props), "confluent", tuple(reasons),
                 caveats=frozenset(caveats))
