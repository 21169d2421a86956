"""The conditions known bugs read: over a connector config as the user gives it (an entry's
`needs`: does this config meet the bug's condition?) and, for bugs that leave no trace in a task's
trace, over a run's verdicts and produced records (an entry's `shown_by`: the witness a run gives)."""
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
