"""The conditions known bugs read: over a connector config as the user gives it (an entry's
`needs`: does this config meet the bug's condition?), over a scenario's fault schedule for bugs a
fault sets off (an entry's `triggered_by`: does the scenario carry that fault?) and, for bugs that
leave no trace in a task's trace, over a run's verdicts and produced records (an entry's
`shown_by`: the witness a run gives)."""
from __future__ import annotations

import re
from typing import Any

from conformance.inputs.connector_config import tombstones_dropped
from conformance.judging.claims import errant_records_tolerated

TIME_PARTITIONERS = ("HourlyPartitioner", "DailyPartitioner", "TimeBasedPartitioner")
DEFAULT_PARTITIONER = "io.confluent.connect.storage.partitioner.DefaultPartitioner"


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


def scheduled_without_extractor(cfg: dict[str, str]) -> bool:
    # the writer has no timestamp extractor unless it sees a bare time-based partitioner
    return _positive(cfg, "rotate.schedule.interval.ms") and (not _time_based(cfg) or _wrapped(cfg))


def field_partitioner(cfg: dict[str, str]) -> bool:
    return _partitioner(cfg).rsplit(".", 1)[-1] == "FieldPartitioner"


def wrapped_time_rotation(cfg: dict[str, str]) -> bool:
    return _time_based(cfg) and _wrapped(cfg) and _positive(cfg, "rotate.interval.ms")


def reads_control_topic_from_latest(cfg: dict[str, str]) -> bool:
    return not _is(cfg, "iceberg.kafka.auto.offset.reset", "earliest", "latest")


def auto_creates(cfg: dict[str, str]) -> bool:
    # a Filter of tombstones before the sink (the workaround) leaves none to create the table from
    return _is(cfg, "iceberg.tables.auto-create-enabled", "true", "false") and not tombstones_dropped(cfg)


def tasks_auto_create_together(cfg: dict[str, str]) -> bool:
    # more than one task instance may reach the table's auto-create (and its namespace's) at once
    from conformance.generators.rebalance_shapes import tasks_max

    return _is(cfg, "iceberg.tables.auto-create-enabled", "true", "false") and tasks_max(cfg) > 1


def no_errant_record_reporter(cfg: dict[str, str]) -> bool:
    return not errant_records_tolerated(cfg)


def cooperative_assignor(cfg: dict[str, str]) -> bool:
    from conformance.generators.rebalance_shapes import cooperative

    return cooperative(cfg)


def cooperative_tasks(cfg: dict[str, str]) -> bool:
    """The cooperative assignor with more than one task: a rebalance may revoke some of a task's
    partitions while it keeps others."""
    from conformance.generators.rebalance_shapes import tasks_max

    return cooperative_assignor(cfg) and tasks_max(cfg) > 1


def aiven_default_name_default_compression(cfg: dict[str, str]) -> bool:
    return not any(cfg.get(k) for k in ("file.name.template", "aws.s3.prefix", "file.compression.type"))


def lenses_skips_nulls(cfg: dict[str, str]) -> bool:
    if cfg.get("connect.s3.kcql"):
        return _is(cfg, "connect.s3.skip.null.values", "true", "false")
    # a Confluent-shaped config as sinkcheck sends it (adapters.connect.profiles: ignore as skip)
    return _is(cfg, "behavior.on.null.values", "ignore", "fail")


def lenses_json_writes_nulls(cfg: dict[str, str]) -> bool:
    return _lenses_stores(cfg, "JSON") and not lenses_skips_nulls(cfg)


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


def lenses_avro_or_parquet(cfg: dict[str, str]) -> bool:
    # both writers convert each record with ToAvroDataConverter.convertToGenericRecordWithSchema
    return _lenses_stores(cfg, "AVRO", "PARQUET")


def lenses_avro(cfg: dict[str, str]) -> bool:
    # parquet-avro writes the date's Long as an int32 (Number.intValue()): only Avro's union resolution refuses it
    return _lenses_stores(cfg, "AVRO")


def lenses_parquet(cfg: dict[str, str]) -> bool:
    # no KCQL property or connector property reaches the AvroParquetWriter's Configuration
    return _lenses_stores(cfg, "PARQUET")


def lenses_error_policy_throws(cfg: dict[str, str]) -> bool:
    return _is(cfg, "connect.s3.error.policy", "throw", "throw")


def lenses_bytes_writes_nulls(cfg: dict[str, str]) -> bool:
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


# what #904 breaks: the files rotate.interval.ms would close stay open (confluent.py's `breaks`)
HIDDEN_ROTATION_BREAKS = ("exact-object-set", "rotation", "file-count", "commit-progress", "no-loss")


def files_left_open_by_a_hidden_rotate_interval(result: Any) -> str | None:
    """#904 leaves no trace: under a wrapped time-based partitioner rotate.interval.ms is never
    read, so a file it would close stays open (a file the model commits missing, its records not
    written, the partition's commit short of the model's) while the task runs on without an
    error. A run that failed only that way (the properties #904 breaks, with a missing file or a
    stuck commit among its witnesses, no task trace), on a release before 12.1.0; or None."""
    from conformance.catalog.known_bugs.matching import version_of
    from reference_impl.versions import parse_version

    failed = [v for v in result.verdicts if v.status == "fail"]
    statuses = getattr(result.observation, "statuses", None) or []
    if (not failed or any(v.property not in HIDDEN_ROTATION_BREAKS for v in failed)
            or any(getattr(s, "trace", None) for s in statuses)):
        return None
    version = version_of(result)
    if version and parse_version(version) >= (12, 1, 0):
        return None  # fixed there: a file left open on 12.1.0 on is something else
    held = [w for v in failed for w in v.witnesses if w.anomaly in ("commit-stuck", "missing-object")]
    if not held:
        return None
    said = [f"{w.offsets[0]} committed to {w.observed} of {w.expected}" if w.anomaly == "commit-stuck"
            else f"{(w.keys or ('?',))[0]} never written" for w in held[:3]]
    return "; ".join(said) + ", the task running without an error: the file rotate.interval.ms would close left open"


def commit_stopped_at_tombstones(result: Any) -> str | None:
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


def kept_partitions_never_committed(result: Any) -> str | None:
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


def kept_partitions_never_rewound(result: Any) -> str | None:
    """Iceberg's cooperative bug, which leaves no trace: a task revoked some partitions (at start,
    when the second task's consumer joins after the first read records, or when a member joins,
    leaves or stalls) drops what it read of the others and seeks back only committed partitions.
    With no records after, those partitions are never committed (no-loss holds); with records
    after, the first ones are lost from their partition's first offset, shown only where no fault
    stopped or moved a task (a coordinator moving before its first commit loses records too:
    iceberg-first-commit-lost). The witness, or None."""
    stuck = _stuck_commits(result)
    no_loss = next((v for v in result.verdicts if v.property == "no-loss"), None)
    if no_loss is None:
        return None
    if stuck and all(w.observed is None for w in stuck) and no_loss.status == "pass":
        return ("commit-progress, never committed: " + "; ".join(
            f"{w.offsets[0]} committed to None of {w.expected}" for w in stuck) + " under the cooperative assignor")
    lost = [o for w in no_loss.witnesses for o in w.offsets]
    if (no_loss.status == "fail" and lost and all(w.anomaly == "lost" for w in no_loss.witnesses)
            and any(o.endswith("@0") for o in lost) and not task_stops_or_moves(result.scenario)):
        return (f"no-loss: {', '.join(lost[:4])} lost from their partitions' first offset, with no task stopped or "
                "moved, under the cooperative assignor")
    return None


def aiven_parquet_without_new_lists(cfg: dict[str, str]) -> bool:
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


def flush_stuck_on_a_null_in_an_array(result: Any) -> str | None:
    """Aiven's parquet flush failing on a null inside an array (it leaves no task trace: the
    worker logs the flush's NullPointerException and rewinds): partitions' commits stuck while a
    record put() received holds an array with a null in it; or None."""
    stuck = _stuck_commits(result)
    if not stuck or not aiven_parquet_without_new_lists(dict(result.scenario.connector)):
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


def conditional_complete(cfg: dict[str, str]) -> bool:
    """R8.1: CompleteMultipartUpload carries If-None-Match under this config."""
    from conformance.generators.faults import conditional_complete as conditional

    return conditional(cfg)


# --- the faults that set a bug off (an entry's `triggered_by`, over a scenario's fault steps) ---

# the S3 calls that upload an object: a multipart upload's three, or one PutObject (a "put"
# connector's rules on the multipart calls go on its PutObject: conformance.playing.runner)
UPLOAD_OPERATIONS = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload", "PutObject")
# faults after which a consumer group's members change: a worker dies, stalls past its session,
# joins or leaves, so partitions move while other members keep theirs
MEMBERSHIP_CHANGES = ("crash", "kill-worker", "pause", "pause-worker", "add-worker", "remove-worker", "rebalance")
# faults that stop a running task or move it: the membership changes, and a restart of the task,
# the connector or its config, or the connector stopped to set its offsets back
TASK_STOPS_OR_MOVES = MEMBERSHIP_CHANGES + ("restart", "restart-task", "restart-connector", "update-config",
                                            "lose-offset-commit")


def _s3_rules(scenario: Any, operations: tuple[str, ...]) -> list[dict[str, Any]]:
    """The params of the scenario's S3 rules on one of `operations` (or on any: "*")."""
    return [f.params for f in scenario.faults
            if f.kind == "s3" and str(f.params.get("operation", "*")) in (*operations, "*")]


def _answer_cut(rule: dict[str, Any]) -> bool:
    """S3 applied the request and its answer breaks off: stalled mid-body, or reset in the middle
    of it (a reset without `forward` comes before S3 has the request: no answer to cut)."""
    action = rule.get("action")
    return action == "stall" or (action == "reset" and bool(rule.get("forward", True)))


def complete_answer_cut(scenario: Any) -> bool:
    """An answer to a CompleteMultipartUpload S3 applied, cut mid-body."""
    return any(_answer_cut(r) for r in _s3_rules(scenario, ("CompleteMultipartUpload",)))


def error_inside_complete_200(scenario: Any) -> bool:
    """A CompleteMultipartUpload answered 200 with an error inside (applied or not)."""
    return any(r.get("action") == "error-200" for r in _s3_rules(scenario, ("CompleteMultipartUpload",)))


def complete_412_head_403(scenario: Any) -> bool:
    """A 412 on a Complete with no object at the key (a 412 S3 applied leaves the object there,
    so a HEAD taken for it is right), and the HEAD that checks it refused with 403."""
    rules = _s3_rules(scenario, ("CompleteMultipartUpload", "HeadObject"))
    return (any(r.get("operation") != "HeadObject" and r.get("action") == "fail" and int(r.get("status") or 0) == 412
                and r.get("state") != "applied" for r in rules)
            and any(r.get("operation") in ("HeadObject", "*") and r.get("action") == "fail"
                    and int(r.get("status") or 0) == 403 for r in rules))


def member_joins_or_leaves(scenario: Any) -> bool:
    return any(f.kind in MEMBERSHIP_CHANGES for f in scenario.faults)


def task_stops_or_moves(scenario: Any) -> bool:
    return any(f.kind in TASK_STOPS_OR_MOVES for f in scenario.faults)


def task_paused(scenario: Any) -> bool:
    """A task's worker stopped (SIGSTOP) and later resumed: a zombie."""
    return any(f.kind in ("pause", "pause-worker") for f in scenario.faults)


def upload_answer_lost(scenario: Any) -> bool:
    """An upload S3 applied whose answer never reaches the sink whole (dropped or cut), so its
    client sends it again."""
    return any(r.get("action") == "drop-response" or _answer_cut(r) for r in _s3_rules(scenario, UPLOAD_OPERATIONS))


def upload_landed_unacknowledged(scenario: Any) -> bool:
    """An upload S3 applied that the sink is not told landed: its answer lost (it sends it again
    and meets a 412), or a 412 S3 gives it with the object there (a write that landed before)."""
    return upload_answer_lost(scenario) or any(
        r.get("action") == "fail" and int(r.get("status") or 0) == 412 and r.get("state") == "applied"
        for r in _s3_rules(scenario, UPLOAD_OPERATIONS))


def lock_write_fails_as_often_as_attempts(scenario: Any) -> bool:
    """Lenses: an S3 error every client retries, on PutObjects of the .indexes/ lock objects, as
    many times in a row as connect.s3.http.max.retries (default 5) says (which is the S3 client's
    attempts, the first included)."""
    from conformance.generators.faults import RETRIED_CODES, RETRIED_STATUSES

    try:
        attempts = int(str(scenario.connector.get("connect.s3.http.max.retries", "5")).strip())
    except ValueError:
        return False
    return any(r.get("action") == "fail" and (int(r.get("status") or 0) in RETRIED_STATUSES
                                              or r.get("code") in RETRIED_CODES)
               and (int(r.get("times", 1)) == 0 or int(r.get("times", 1)) >= attempts)
               and (r.get("key") is None or ".indexes" in str(r.get("key")))
               for r in _s3_rules(scenario, ("PutObject",)))
