"""Whether a named scenario's point survives a user's connector config, decided before the run.

A named scenario under `--connector-config` plays under the user's config
(conformance.playing.user_config.fit, conformance.playing.adapt). What it is about is written in
conformance.catalog.points; where the user's config lacks it (no time-based partitioner for a
scenario about local-time buckets, no second part in any file for a crash after a file's first
parts, a zone without a clock change for a DST scenario) the run would pass on a plain stream and
test nothing of its point. Such a scenario is *not applicable*: it is not run, and the report
names it with one line that says why, the property first ("flush.size=1, s3.part.size=26214400:
no file has more than one part"). Not applicable is not unknown: an unknown is a fault that should
have fired and did not.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Sequence
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from conformance.catalog.points import point_of
from conformance.inputs.connector_config import sink_config
from conformance.inputs.scenario import Scenario, ScenarioError, converter_kind
from conformance.inputs.wire import NotRealizable, converters, with_worker_converters
from reference_impl.config import ConfigError, SinkConfig
from reference_impl.versions import VersionError


def _short(value: Any, default: str = "") -> str:
    return str(value or default).strip().rsplit(".", 1)[-1]


def _prop(cfg: dict[str, str], name: str, default: str = "(not set)") -> str:
    return f"{name}={str(cfg.get(name, '')).strip() or default}"


def _value_kind(cfg: dict[str, str]) -> str:
    try:
        return converter_kind(with_worker_converters(cfg))
    except ScenarioError:
        return ""


def _converter_prop(cfg: dict[str, str]) -> str:
    kind = _value_kind(cfg)
    if kind in ("json", "json-schemas"):
        return _prop(cfg, "value.converter.schemas.enable", "true")
    return f"value.converter={_short(cfg.get('value.converter'), '(not set)')}"


# --- the times a config's extractor reads --------------------------------------------------------
def _as_ms(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return int(v)
    if isinstance(v, str):
        try:
            t = dt.datetime.fromisoformat(v.replace("Z", "+00:00"))
        except ValueError:
            return None
        if t.tzinfo is None:
            t = t.replace(tzinfo=dt.timezone.utc)
        return int(t.timestamp() * 1000)
    return None


def _field(value: Any, path: str) -> Any:
    if isinstance(value, dict) and "payload" in value and "schema" in value:
        value = value["payload"]
    for name in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value


def record_times(records: Sequence[dict[str, Any]], cfg: SinkConfig) -> list[int]:
    """The times (epoch ms) the config's timestamp extractor reads of the records it can read:
    the record's own (Record) or its value field (RecordField)."""
    out = []
    for r in records:
        if r.get("value") is None:
            continue
        t = _as_ms(_field(r["value"], cfg.timestamp_field)) if cfg.timestamp_extractor == "recordfield" \
            else _as_ms(r.get("timestamp"))
        if t is not None:
            out.append(t)
    return out


def _utc(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def _no_clock_change(cfg: SinkConfig, fitted: Scenario) -> str | None:
    times = record_times(fitted.records, cfg)
    try:
        zone = ZoneInfo(cfg.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return None  # the connector's validator says what is wrong with it
    offsets = {dt.datetime.fromtimestamp(t / 1000, zone).utcoffset() for t in times}
    if len(offsets) > 1 or not times:
        return None
    return (f"timezone={cfg.timezone or 'UTC'}: one UTC offset from {_utc(min(times))} to {_utc(max(times))} (the times "
            "the config's extractor reads), so no clock change to cross")


# --- the aspects of conformance.catalog.points ---------------------------------------------------
Check = Callable[[Scenario, Scenario, SinkConfig], "str | None"]


def _time_partitioner(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.time_based:
        return None
    return (f"partitioner.class={_short(fitted.connector.get('partitioner.class'), 'DefaultPartitioner')}: no "
            "time-based partitioner, so no time bucket to cross")


def _record_time(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if not cfg.time_based:
        return None
    if cfg.timestamp_extractor not in ("record", "recordfield"):
        return (f"{_prop(fitted.connector, 'timestamp.extractor', 'Wallclock')}: time buckets follow the wall clock, "
                "not the records' times")
    return _other_times(own, fitted, cfg)


def _other_times(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    """The times the scenario is about are those its own extractor reads; the user's config
    reads its own field (filled from the record's timestamp where a record lacks it,
    conformance.playing.user_config.with_fields), which may hold other times: then the
    scenario's timeline (a DST night, dates before 1970, a late record) is not what is played."""
    try:
        mine = sink_config(own.connector, own.connector_version)
    except (ConfigError, VersionError):
        return None
    if mine.timestamp_extractor not in ("record", "recordfield"):
        return None
    want = record_times(own.records, mine)
    got = record_times(fitted.records, cfg)[:len(want)]
    if got == want:
        return None
    where = (f"its field {mine.timestamp_field}" if mine.timestamp_extractor == "recordfield"
             else "the records' timestamps")
    reads = (f"timestamp.field={cfg.timestamp_field}" if cfg.timestamp_extractor == "recordfield"
             else "timestamp.extractor=Record")
    return f"{reads}: the times the scenario is about are in {where}, which this config does not read"


def _record_field(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if not cfg.time_based or cfg.timestamp_extractor == "recordfield":
        return None
    return (f"{_prop(fitted.connector, 'timestamp.extractor', 'Wallclock')}: no time is read from a value field "
            "(RecordField)")


def _rotate_interval(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.rotate_interval_ms > 0:
        return None
    return "rotate.interval.ms is not set: no file is rotated on the records' time"


def _scheduled_rotation(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.rotate_schedule_interval_ms > 0:
        return None
    return "rotate.schedule.interval.ms is not set: no file is rotated on the wall clock"


def _conditional_writes(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.conditional_writes_active:
        return None
    c = fitted.connector
    if cfg.rotate_schedule_interval_ms == -1:
        why = "rotate.schedule.interval.ms is not set"
    elif not cfg.enable_conditional_writes:
        why = _prop(c, "enable.conditional.writes")
    elif cfg.store_kafka_keys or cfg.store_kafka_headers:
        why = "store.kafka.keys or store.kafka.headers is set"
    else:
        why = f"connector version {cfg.version.text}"
    return f"{why}: CompleteMultipartUpload is not conditional (R8.1), so S3 never answers it with 412"


def _dst_change(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    return _no_clock_change(cfg, fitted) if cfg.time_based else None


def _bucket_ms(cfg: SinkConfig) -> int:
    return {"daily": 86_400_000, "hourly": 3_600_000}.get(cfg.partitioner, cfg.partition_duration_ms)


def _bucket_edge(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    """The records fall in at least two of the config's time buckets (local time floored on
    partition.duration.ms, R6.3): else no edge is crossed, whatever edge the scenario is about."""
    size = _bucket_ms(cfg)
    times = record_times(fitted.records, cfg)
    if not cfg.time_based or size <= 0 or not times:
        return None
    try:
        zone = ZoneInfo(cfg.timezone or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return None

    def bucket(t: int) -> int:
        off = dt.datetime.fromtimestamp(t / 1000, zone).utcoffset() or dt.timedelta(0)
        return (t + int(off.total_seconds() * 1000)) // size

    if len({bucket(t) for t in times}) > 1:
        return None
    return (f"partition.duration.ms={size}, timezone={cfg.timezone or 'UTC'}: every record falls in one time bucket "
            f"({_utc(min(times))} to {_utc(max(times))}), so no bucket edge is crossed")


def _field_partitioner(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.partitioner != "field":
        return (f"partitioner.class={_short(fitted.connector.get('partitioner.class'), 'DefaultPartitioner')}: "
                "no partition is named after a field's value")
    return None


def _nested_field_names(sc: Scenario, cfg: SinkConfig) -> str | None:
    """R6.2: before storage-common 12.0.0 a dotted partition.field.name is one top-level field's
    name; records written for the nested path have none, so the first record stops the task."""
    dotted = [n for n in cfg.partition_field_names if "." in n] if cfg.partitioner == "field" else []
    if not dotted or cfg.version.nested_partition_fields:
        return None
    return (f"connector version {cfg.version.text}: partition.field.name {dotted[0]} is one top-level "
            "field's name before 12.0.0 (R6.2), which these records lack, so the task stops at the first record")


def _multipart(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    from conformance.playing.adapt import most_parts

    if most_parts(cfg, fitted.records) >= 2:
        return None
    return (f"flush.size={cfg.flush_size}, s3.part.size={cfg.part_size}: no file has more than one part, so no "
            "upload has parts done while another is in flight")


def _keys(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    return None if cfg.store_kafka_keys else "store.kafka.keys=false: no keys object beside a file"


def _keys_or_headers(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if cfg.store_kafka_keys or cfg.store_kafka_headers:
        return None
    return "store.kafka.keys=false, store.kafka.headers=false: no keys or headers object beside a file"


def _schemas(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if _value_kind(fitted.connector) in ("json-schemas", "avro"):
        return None
    return f"{_converter_prop(fitted.connector)}: values carry no schema, so no Connect types or schema versions"


def _schemaless(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if _value_kind(fitted.connector) == "json":
        return None
    return f"{_converter_prop(fitted.connector)}: values carry a schema, so none is inferred from a map"


def _avro_converter(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    if _value_kind(fitted.connector) == "avro":
        return None
    return (f"value.converter={_short(fitted.connector.get('value.converter'), '(not set)')}: no value in the Schema "
            "Registry's wire format (AvroConverter)")


def _tombstones_kept(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
    from conformance.playing.adapt import kills

    if not kills(cfg, {"value": None}):
        return None
    return (f"behavior.on.null.values={cfg.behavior_on_null_values}: the task stops at the first tombstone (R12.1), "
            "so none is written or skipped amid the files")


def _format(name: str) -> Check:
    def check(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
        have = _short(cfg.format_class)
        return None if have == name else f"format.class={have}: the scenario is about {name}'s files"
    return check


def _same(prop: str) -> Check:
    def check(own: Scenario, fitted: Scenario, cfg: SinkConfig) -> str | None:
        mine, theirs = (str(c.get(prop, "")).strip() for c in (own.connector, fitted.connector))
        if mine == theirs:
            return None
        return f"{_prop(fitted.connector, prop)}: the scenario is about {prop}={mine or '(not set)'}"
    return check


ASPECTS: dict[str, Check] = {
    "time-partitioner": _time_partitioner,
    "record-time": _record_time,
    "record-field": _record_field,
    "rotate-interval": _rotate_interval,
    "scheduled-rotation": _scheduled_rotation,
    "conditional-writes": _conditional_writes,
    "dst-change": _dst_change,
    "bucket-edge": _bucket_edge,
    "field-partitioner": _field_partitioner,
    "multipart": _multipart,
    "keys": _keys,
    "keys-or-headers": _keys_or_headers,
    "schemas": _schemas,
    "schemaless": _schemaless,
    "avro-converter": _avro_converter,
    "tombstones-kept": _tombstones_kept,
}


def aspect_check(aspect: str) -> Check:
    if aspect in ASPECTS:
        return ASPECTS[aspect]
    kind, _, arg = aspect.partition(":")
    if kind == "format" and arg:
        return _format(arg)
    if kind == "same" and arg:
        return _same(arg)
    raise KeyError(f"no such aspect of a scenario's point: {aspect}")


def inapplicable(original: Scenario, fitted: Scenario) -> str | None:
    """Why `original`'s point cannot survive the config it is `fitted` to (one line, the
    property first), or None when it can. A config the connector rejects is not judged here:
    its run says so."""
    try:
        cfg = sink_config(fitted.connector, fitted.connector_version)
    except (ConfigError, VersionError):
        return None
    from conformance.playing.adapt import fatal_answer_before_any_object

    for aspect in point_of(original.name):
        why = aspect_check(aspect)(original, fitted, cfg)
        if why:
            return why
    # whatever its point, a scenario whose task can only die before the first object tests nothing
    return (fatal_answer_before_any_object(fitted, cfg) or release_dies_before_any_object(fitted, cfg)
            or _nested_field_names(fitted, cfg))


def release_dies_before_any_object(sc: Scenario, cfg: SinkConfig) -> str | None:
    """Why the release `cfg` holds the sink to dies on an S3 answer of `sc` that only it takes as
    fatal (an error inside Complete's 200 with the SDK v1, R7.4) at the first upload, before any
    object lands, or None. The generator places the answers every release may die on after an
    upload (conformance.generators.faults.first_request_answered); this one is a release's own."""
    from conformance.generators.faults import uploads_after

    if cfg.version.retries_error_inside_complete:
        return None
    first = [f for f in sc.faults if f.kind == "s3" and f.params.get("action") == "error-200"
             and not f.params.get("forward") and int(f.params.get("nth", 1)) == 1]
    if not first:
        return None
    counts = uploads_after(sc.connector, list(sc.records), ())
    for f in first:
        if counts and counts[0] - counts[min(f.after, len(sc.records))] == 0:
            return (f"connector version {cfg.version.text}: the error inside CompleteMultipartUpload's 200 "
                    "answers the first file's upload, and the SDK v1 client throws it at once (R7.4, #858), so the "
                    "task dies before any object")
    return None


def _registry_values(config: dict[str, str]) -> bool:
    """Does the config's value converter read the Schema Registry's wire format (Structs)?"""
    from reference_impl.converters import ConverterError

    try:
        return converters(config)[1].reads_registry
    except (ConverterError, NotRealizable):
        return False  # a converter the run refuses elsewhere, with its own reason


def sink_inapplicable(name: str, spec: str, scenario: Scenario | None = None) -> str | None:
    """Why a named scenario's point is not one the target's sink can meet whatever its config (a
    412 to a sink whose uploads carry no condition: S3 answers none; a NoSuchUpload to a sink that
    writes each object with one PutObject), or None."""
    from conformance.inputs.targets import connector_profile

    from adapters.s3.rules import s3_answers

    profile = connector_profile(spec)
    if profile is None:
        return None
    if profile.no_struct_values and scenario is not None and _registry_values(scenario.connector):
        return f"{profile.name} cannot write the records of a registry converter: {profile.no_struct_values}"
    unconditional = profile.unconditional_under(scenario.connector if scenario is not None else {})
    if unconditional and "conditional-writes" in point_of(name):
        return f"{profile.name}'s uploads carry no condition: {unconditional}, so S3 never answers them 412"
    if profile.name != "confluent" and scenario is not None and any(
            f.kind == "s3" and f.params.get("operation") == "HeadObject" for f in scenario.faults):
        # the rule waits for the HEAD Confluent's S3OutputStream.fileExists asks after a 412 (R8.2)
        return f"{profile.name} asks no HeadObject after a 412 (Confluent's connector does, R8.2)"
    if profile.uploads == "put" and scenario is not None:
        for f in scenario.faults:
            p = f.params
            if (f.kind == "s3" and p.get("action") == "fail" and p.get("code")
                    and p.get("operation") in ("UploadPart", "CompleteMultipartUpload")
                    and not s3_answers(str(p["code"]), "PutObject")):
                return (f"{profile.name} writes each object with one PutObject, which S3 never answers "
                        f"{p.get('status')} {p['code']} (an answer to {p['operation']} only)")
    return None
