"""The connector config, parsed and validated as Kafka Connect and the S3 sink do (spec §15).

Input is what a user POSTs to Kafka Connect (`{"name": ..., "config": {...}}`) or the flat
map, with string values as Connect takes them. Each problem names the property, the reason,
and *when* the real connector rejects it:

- `validate`: only connector validation on the REST create/update path (Val, FPV);
- `config`: the config constructor, so validate, connector start and task start alike;
- `task-start`: only when a task configures its partitioner (R6.3), so the connector is
  accepted and its tasks fail.
"""
from __future__ import annotations

import json
import zoneinfo
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from reference_impl.config_keys import (TOPIC_LEGAL_CHARS, TOPIC_MAX_LENGTH, TOPICS_EXCLUSIVE, first_invalid_topic,
                                        unknown_key_warning, unknown_keys)
from reference_impl.converters import UnknownConverter, converter_for
from reference_impl.timeutil import PatternError, compile_pattern
from reference_impl.versions import VersionProfile

S3_SINK_CONNECTOR = "io.confluent.connect.s3.S3SinkConnector"
LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1
MIB = 1024 * 1024

PARTITIONERS = {
    "io.confluent.connect.storage.partitioner.DefaultPartitioner": "default",
    "io.confluent.connect.storage.partitioner.FieldPartitioner": "field",
    "io.confluent.connect.storage.partitioner.TimeBasedPartitioner": "time",
    "io.confluent.connect.storage.partitioner.DailyPartitioner": "daily",
    "io.confluent.connect.storage.partitioner.HourlyPartitioner": "hourly",
}
EXTRACTORS = {"Wallclock": "wallclock", "Record": "record", "RecordField": "recordfield"}
CANNED_ACLS = {
    "private", "public-read", "public-read-write", "authenticated-read", "log-delivery-write",
    "bucket-owner-read", "bucket-owner-full-control", "aws-exec-read",
}
SSE_ALGORITHMS = {"", "AES256", "aws:kms", "aws:kms:dsse"}
AVRO_CODECS = {"null", "deflate", "snappy", "bzip2"}


class ConfigSyntaxError(ValueError):
    """Malformed JSON: says where, by line and column."""

    def __init__(self, msg: str, line: int, column: int, source: str = "config"):
        super().__init__(f"{source}: line {line}, column {column}: {msg}")
        self.line, self.column = line, column


@dataclass(frozen=True)
class ConfigProblem:
    property: str
    value: str | None
    reason: str
    phase: str  # "validate" | "config" | "task-start" | "kafka" | "model"

    def __str__(self) -> str:
        shown = "" if self.value is None else f" = {self.value!r}"
        when = {
            "validate": "rejected by connector validation (REST create/update)",
            "config": "rejected when the config is parsed (validate, connector and task start)",
            "task-start": "accepted by validation, but every task fails at start",
            "kafka": "refused by Kafka: no such topic can exist",
            "model": "outside what the reference model can predict",
        }[self.phase]
        return f"{self.property}{shown}: {self.reason} [{when}]"


class ConfigError(ValueError):
    """The connector would be rejected. Lists every problem found, most urgent phase first."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = problems
        super().__init__("invalid connector config:\n  " + "\n  ".join(map(str, problems)))


# --- reading the raw map -------------------------------------------------------------------

def load_config_text(text: str, source: str = "config") -> tuple[str | None, dict[str, str]]:
    """Parse connector JSON: `{"name":..., "config":{...}}` or a flat map. Returns (name, map).
    A leading UTF-8 byte order mark is skipped, as Connect's Jackson does."""
    text = text[1:] if text.startswith("\ufeff") else text
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigSyntaxError(e.msg, e.lineno, e.colno, source) from None
    return normalise_config(obj, source)


def normalise_config(obj: Any, source: str = "config") -> tuple[str | None, dict[str, str]]:
    if not isinstance(obj, dict):
        raise ConfigError([ConfigProblem("(config)", None, f"{source} must be a JSON object", "validate")])
    name = None
    if "config" in obj and isinstance(obj["config"], dict):
        extra = set(obj) - {"name", "config", "tasks", "type"}
        if extra:
            raise ConfigError([ConfigProblem(sorted(extra)[0], None,
                "unexpected top-level field next to 'config'; Connect takes {\"name\": ..., \"config\": {...}}",
                "validate")])
        name = obj.get("name")
        raw = obj["config"]
    else:
        raw = obj
    out: dict[str, str] = {}
    for k, v in raw.items():
        if isinstance(v, (dict, list)):
            raise ConfigError([ConfigProblem(k, json.dumps(v), "Connect config values are strings, not JSON objects or arrays", "validate")])
        out[k] = "" if v is None else (str(v).lower() if isinstance(v, bool) else str(v))
    if name is None:
        name = out.get("name")
    return name, out


# --- typed values --------------------------------------------------------------------------

def _parse_int(key: str, raw: str, lo: int, hi: int, type_name: str) -> int:
    try:
        v = int(raw.strip())
    except ValueError:
        raise _Bad(f"Not a number of type {type_name}") from None
    if not lo <= v <= hi:
        raise _Bad(f"Not a number of type {type_name}")
    return v


class _Bad(Exception):
    pass


def _bool(raw: str) -> bool:
    s = raw.strip().lower()
    if s not in ("true", "false"):
        raise _Bad("Expected value to be either true or false")
    return s == "true"


@dataclass(frozen=True)
class SinkConfig:
    """The typed connector config the model folds with. Field names follow the property names."""

    raw: Mapping[str, str]
    name: str | None
    format_class: str
    flush_size: int
    bucket: str
    topics_dir: str = "topics"
    directory_delim: str = "/"
    file_delim: str = "+"
    zero_pad_width: int = 10
    rotate_interval_ms: int = -1
    rotate_schedule_interval_ms: int = -1
    rotate_file_on_partition_change: bool = True
    partitioner: str = "default"
    partition_field_names: tuple[str, ...] = ()
    partition_duration_ms: int = -1
    path_format: str = ""
    locale: str = ""
    timezone: str = ""
    timestamp_extractor: str = "wallclock"
    timestamp_field: str = "timestamp"
    schema_compatibility: str = "NONE"
    behavior_on_null_values: str = "fail"
    report_null_values_to_dlq: bool = True
    tombstone_encoded_partition: str = "tombstone"
    store_kafka_keys: bool = False
    store_kafka_headers: bool = False
    keys_format_class: str = "io.confluent.connect.s3.format.avro.AvroFormat"
    headers_format_class: str = "io.confluent.connect.s3.format.avro.AvroFormat"
    compression_type: str = "none"
    compression_level: int = -1
    avro_codec: str = "null"
    parquet_codec: str = "snappy"
    json_decimal_format: str = "BASE64"
    bytearray_extension: str = ".bin"
    bytearray_separator: bytes = b"\n"
    enable_conditional_writes: bool = True
    max_files_scan_limit: int = 100
    partitioner_max_open_files: int = -1
    max_write_duration_ms: int = LONG_MAX
    schema_affix: str = "NONE"
    errors_tolerance: str = "none"
    dlq_topic: str = ""
    errors_log_enable: bool = False
    part_size: int = 26214400
    retry_backoff_ms: int = 5000
    version: VersionProfile = field(default_factory=lambda: VersionProfile.of(None))
    # problems the real connector would only raise when a task starts (R6.3)
    task_start_problems: tuple[ConfigProblem, ...] = ()

    @property
    def time_based(self) -> bool:
        return self.partitioner in ("time", "daily", "hourly")

    @property
    def has_errant_record_reporter(self) -> bool:
        """Connect builds a reporter when a DLQ topic or the error log is configured."""
        return bool(self.dlq_topic) or self.errors_log_enable

    @property
    def skips_errant_records(self) -> bool:
        """A reported record is skipped only under errors.tolerance=all; with `none` the report
        itself throws "Tolerance exceeded" and the task dies (R12.2, inference)."""
        return self.has_errant_record_reporter and self.errors_tolerance == "all"

    @property
    def conditional_writes_active(self) -> bool:
        """R8.1."""
        return (
            self.version.conditional_writes
            and self.enable_conditional_writes
            and self.rotate_schedule_interval_ms != -1
            and not self.store_kafka_keys
            and not self.store_kafka_headers
        )

    @property
    def wallclock_dependent(self) -> bool:
        """The outcome depends on when puts happen, not only on the records."""
        return self.rotate_schedule_interval_ms > 0 or (
            self.time_based and self.timestamp_extractor == "wallclock"
        )


def _is_class(raw: str, short: str) -> bool:
    return raw == short or raw.endswith("." + short)


def parse_config(
    raw_in: Mapping[str, Any] | str,
    version: str | None = None,
    name: str | None = None,
) -> SinkConfig:
    """Validate and type a connector config. Raises `ConfigError` for what Connect would reject
    at validate or config time; task-start problems are kept on the result (the connector is
    accepted, its tasks fail)."""
    if isinstance(raw_in, str):
        name, raw = load_config_text(raw_in)
    else:
        n, raw = normalise_config(dict(raw_in))
        name = name or n
    profile = VersionProfile.of(version)
    problems: list[ConfigProblem] = []
    values: dict[str, Any] = {}

    def get(key: str, default: str | None = None) -> str | None:
        return raw.get(key, default)

    def typed(key: str, attr: str, conv: Callable[[str], Any], phase: str = "config", default: str | None = None) -> None:
        s = get(key, default)
        if s is None:
            return
        try:
            values[attr] = conv(s)
        except _Bad as e:
            problems.append(ConfigProblem(key, s, f"Invalid value {s} for configuration {key}: {e}", phase))

    def choice(options: set[str], case_sensitive: bool = True) -> Callable[[str], str]:
        def conv(s: str) -> str:
            v = s.strip()
            if case_sensitive:
                if v not in options:
                    raise _Bad(f"String must be one of: {', '.join(sorted(options))}")
                return v
            lowered = {o.lower(): o for o in options}
            if v.lower() not in lowered:
                raise _Bad(f"String must be one of: {', '.join(sorted(options))}")
            return lowered[v.lower()]
        return conv

    def ranged(lo: int, hi: int, type_name: str = "INT") -> Callable[[str], int]:
        def conv(s: str) -> int:
            try:
                v = int(s.strip())
            except ValueError:
                raise _Bad(f"Not a number of type {type_name}") from None
            limit = INT_MAX if type_name == "INT" else LONG_MAX
            if not -limit - 1 <= v <= limit:
                raise _Bad(f"Not a number of type {type_name}")
            if not lo <= v <= hi:
                raise _Bad(f"Value must be in [{lo}, {hi}]" if hi < limit else f"Value must be at least {lo}")
            return v
        return conv

    anyint = ranged(-INT_MAX - 1, INT_MAX)
    anylong = ranged(-LONG_MAX - 1, LONG_MAX, "LONG")

    cls = get("connector.class")
    if cls is not None and not _is_class(cls, "S3SinkConnector"):
        problems.append(ConfigProblem("connector.class", cls,
            f"the reference model describes {S3_SINK_CONNECTOR}; other sinks declare their own claims", "validate"))

    problems += connect_problems(raw)

    for req in ("format.class", "flush.size", "storage.class", "s3.bucket.name"):
        if not (get(req) or "").strip():
            problems.append(ConfigProblem(req, None, "Missing required configuration \"%s\" which has no default value." % req, "config"))

    fmt = (get("format.class") or "").strip()
    if fmt and not any(_is_class(fmt, f) for f in ("JsonFormat", "ByteArrayFormat", "AvroFormat", "ParquetFormat")):
        problems.append(ConfigProblem("format.class", fmt, "Class not found or not a known S3 format (JsonFormat, ByteArrayFormat, AvroFormat, ParquetFormat)", "config"))
    values["format_class"] = fmt
    storage = (get("storage.class") or "").strip()
    if storage and not _is_class(storage, "S3Storage"):
        problems.append(ConfigProblem("storage.class", storage, "must be io.confluent.connect.s3.storage.S3Storage", "config"))
    values["bucket"] = (get("s3.bucket.name") or "").strip()
    typed("flush.size", "flush_size", anyint)  # R3.8: no sign check

    typed("topics.dir", "topics_dir", lambda s: s)
    typed("directory.delim", "directory_delim", lambda s: s)
    typed("file.delim", "file_delim", lambda s: s)
    typed("filename.offset.zero.pad.width", "zero_pad_width", ranged(0, INT_MAX))
    typed("rotate.interval.ms", "rotate_interval_ms", anylong)
    typed("rotate.schedule.interval.ms", "rotate_schedule_interval_ms", anylong)
    typed("rotate.file.on.partition.change", "rotate_file_on_partition_change", _bool)
    typed("partition.duration.ms", "partition_duration_ms", anylong)
    typed("path.format", "path_format", lambda s: s)
    typed("locale", "locale", lambda s: s)
    typed("timestamp.field", "timestamp_field", lambda s: s)
    typed("report.null.values.to.dlq", "report_null_values_to_dlq", _bool)
    typed("tombstone.encoded.partition", "tombstone_encoded_partition", lambda s: s)
    typed("store.kafka.keys", "store_kafka_keys", _bool)
    typed("store.kafka.headers", "store_kafka_headers", _bool)
    typed("keys.format.class", "keys_format_class", lambda s: s.strip())
    typed("headers.format.class", "headers_format_class", lambda s: s.strip())
    typed("s3.compression.type", "compression_type", choice({"none", "gzip"}))
    typed("s3.compression.level", "compression_level", ranged(-1, 9))
    typed("avro.codec", "avro_codec", choice(AVRO_CODECS))
    typed("parquet.codec", "parquet_codec", lambda s: s.strip().lower())
    typed("json.decimal.format", "json_decimal_format", choice({"BASE64", "NUMERIC"}, case_sensitive=False))
    typed("format.bytearray.extension", "bytearray_extension", lambda s: s)
    typed("format.bytearray.separator", "bytearray_separator", lambda s: s.encode("utf-8"))
    typed("enable.conditional.writes", "enable_conditional_writes", _bool)
    typed("max.files.scan.limit", "max_files_scan_limit", anyint)
    typed("partitioner.max.open.files", "partitioner_max_open_files", anyint)
    typed("max.write.duration.ms", "max_write_duration_ms", anylong)
    typed("s3.schema.partition.affix.type", "schema_affix", choice({"NONE", "PREFIX", "SUFFIX"}))
    typed("s3.part.size", "part_size", ranged(5 * MIB, INT_MAX))
    typed("retry.backoff.ms", "retry_backoff_ms", anylong)
    typed("errors.tolerance", "errors_tolerance", choice({"none", "all"}, case_sensitive=False))
    typed("errors.deadletterqueue.topic.name", "dlq_topic", lambda s: s.strip())
    typed("errors.log.enable", "errors_log_enable", _bool)
    for key, conv in (
        ("s3.part.retries", anyint),
        ("s3.retry.backoff.ms", anylong),
        ("s3.path.style.access.enabled", _bool),
        ("s3.wan.mode", _bool),
        ("s3.object.tagging", _bool),
        ("s3.elastic.buffer.enable", _bool),
        ("s3.acl.canned", choice(CANNED_ACLS)),
        ("s3.ssea.name", choice(SSE_ALGORITHMS)),
        ("s3.object.behavior.on.tagging.error", choice({"ignore", "fail"}, case_sensitive=False)),
        ("tasks.max", ranged(1, INT_MAX)),
    ):
        typed(key, "_" + key, conv)

    # behavior.on.null.values: case-insensitive choice; `write` only exists from 10.4.0
    nulls = get("behavior.on.null.values")
    if nulls is not None:
        allowed = {"ignore", "fail", "write"} if profile.null_write_policy else {"ignore", "fail"}
        typed("behavior.on.null.values", "behavior_on_null_values", choice(allowed, case_sensitive=False))
        if "behavior_on_null_values" in values:
            values["behavior_on_null_values"] = values["behavior_on_null_values"].lower()

    # schema.compatibility: exact-name lookup, silent fallback to NONE (R14.6)
    compat = get("schema.compatibility")
    values["schema_compatibility"] = compat if compat in ("NONE", "BACKWARD", "FORWARD", "FULL") else "NONE"

    tz = get("timezone")
    if tz is not None:
        values["timezone"] = tz
        if tz.strip() and not _valid_zone(tz.strip()):
            problems.append(ConfigProblem("timezone", tz, "Invalid timezone: not a known time-zone ID", "config"))

    part_cls = (get("partitioner.class") or "io.confluent.connect.storage.partitioner.DefaultPartitioner").strip()
    kind = next((v for k, v in PARTITIONERS.items() if part_cls == k or part_cls == k.rsplit(".", 1)[1]), None)
    if kind is None:
        problems.append(ConfigProblem("partitioner.class", part_cls,
            "not one of the partitioners the model knows (Default, Field, TimeBased, Daily, Hourly)", "config"))
        kind = "default"
    values["partitioner"] = kind

    fields_raw = get("partition.field.name", "") or ""
    values["partition_field_names"] = tuple(f.strip() for f in fields_raw.split(",") if f.strip())

    ext_raw = (get("timestamp.extractor") or "Wallclock").strip()
    if ext_raw not in EXTRACTORS:
        problems.append(ConfigProblem("timestamp.extractor", ext_raw,
            "the model knows Wallclock, Record and RecordField; a custom extractor class cannot be modelled", "config"))
    values["timestamp_extractor"] = EXTRACTORS.get(ext_raw, "wallclock")

    merged = {**{f: getattr(SinkConfig, f) for f in SinkConfig.__dataclass_fields__ if hasattr(SinkConfig, f)}, **values}

    # --- cross-field rules in the config constructor --------------------------------------
    if merged["rotate_schedule_interval_ms"] > 0 and not merged["timezone"].strip():
        problems.append(ConfigProblem("timezone", merged["timezone"] or None,
            "Timezone cannot be empty when using scheduled file rotation (rotate.schedule.interval.ms > 0); "
            "it defines the midnight the schedule is aligned to, even with DefaultPartitioner", "config"))

    # --- connector validate() only (Val, FPV) ---------------------------------------------
    fmt_kind = {"JsonFormat": "json", "ByteArrayFormat": "bytearray"}
    def compressible(c: str) -> bool:
        return any(_is_class(c, k) for k in fmt_kind)
    if merged["compression_type"] == "gzip":
        if fmt and not compressible(fmt):
            problems.append(ConfigProblem("s3.compression.type", "gzip",
                f"compression is only supported for JsonFormat and ByteArrayFormat, not {fmt.rsplit('.', 1)[-1]}", "validate"))
        if merged["store_kafka_keys"] and not compressible(merged["keys_format_class"]):
            problems.append(ConfigProblem("keys.format.class", merged["keys_format_class"],
                "s3.compression.type=gzip with store.kafka.keys needs keys.format.class JsonFormat or ByteArrayFormat (the default is AvroFormat)", "validate"))
        if merged["store_kafka_headers"] and not compressible(merged["headers_format_class"]):
            problems.append(ConfigProblem("headers.format.class", merged["headers_format_class"],
                "s3.compression.type=gzip with store.kafka.headers needs headers.format.class JsonFormat or ByteArrayFormat (the default is AvroFormat)", "validate"))
    if merged["behavior_on_null_values"] == "write" and not merged["store_kafka_keys"]:
        problems.append(ConfigProblem("behavior.on.null.values", "write",
            "writing tombstones needs store.kafka.keys=true (only the key of a tombstone is stored)", "validate"))
    if values.get("_s3.wan.mode") and values.get("_s3.path.style.access.enabled", True):
        problems.append(ConfigProblem("s3.wan.mode", "true",
            "WAN mode needs s3.path.style.access.enabled=false (the default is true)", "validate"))
    if kind == "field" and not merged["partition_field_names"]:
        problems.append(ConfigProblem("partition.field.name", fields_raw or None,
            "FieldPartitioner needs at least one field name", "validate"))
    if (merged["store_kafka_keys"] or merged["store_kafka_headers"]) and not profile.keys_and_headers:
        problems.append(ConfigProblem("store.kafka.keys" if merged["store_kafka_keys"] else "store.kafka.headers", "true",
            f"keys and headers objects exist from connector 10.0.0, not in {profile.text}", "validate"))

    if problems:
        order = {"config": 0, "validate": 1, "kafka": 1, "model": 1, "task-start": 2}
        raise ConfigError(sorted(problems, key=lambda p: order[p.phase]))

    # --- task start only: the TimeBasedPartitioner's own configure() (R6.3) ----------------
    task_problems: list[ConfigProblem] = []
    if kind in ("time", "daily", "hourly"):
        if kind == "time":
            if merged["partition_duration_ms"] < 0:
                task_problems.append(ConfigProblem("partition.duration.ms", str(merged["partition_duration_ms"]),
                    "TimeBasedPartitioner needs partition.duration.ms >= 0 (the default -1 is rejected)", "task-start"))
            if not merged["path_format"].strip():
                task_problems.append(ConfigProblem("path.format", merged["path_format"] or None,
                    "TimeBasedPartitioner needs a path.format such as 'year'=YYYY/'month'=MM", "task-start"))
        if not merged["locale"].strip():
            task_problems.append(ConfigProblem("locale", merged["locale"] or None,
                "time-based partitioners need a locale such as en-US", "task-start"))
        if not merged["timezone"].strip():
            task_problems.append(ConfigProblem("timezone", merged["timezone"] or None,
                "time-based partitioners need a timezone such as UTC", "task-start"))
        try:
            compile_pattern(merged["path_format"])
        except PatternError as e:  # Joda's forPattern throws it in the partitioner's configure()
            task_problems.append(ConfigProblem("path.format", merged["path_format"], str(e), "task-start"))

    if kind == "daily":
        merged["partition_duration_ms"] = 86_400_000
    elif kind == "hourly":
        merged["partition_duration_ms"] = 3_600_000

    return SinkConfig(
        raw=dict(raw), name=name, version=profile, task_start_problems=tuple(task_problems),
        **{k: v for k, v in merged.items() if k in SinkConfig.__dataclass_fields__ and k not in ("raw", "name", "version", "task_start_problems")},
    )


def connect_problems(raw: Mapping[str, str]) -> list[ConfigProblem]:
    """What Kafka Connect and Kafka refuse before the sink sees the config (both topic
    properties, topic names no topic can have), and converters the model cannot read records
    through (the same refusal a scenario gets: conformance.inputs.wire)."""
    problems = []
    topics = [t.strip() for t in (raw.get("topics") or "").split(",")]
    if (raw.get("topics") or "").strip() and (raw.get("topics.regex") or "").strip():
        problems.append(ConfigProblem("topics.regex", raw["topics.regex"],
            f"{TOPICS_EXCLUSIVE} (Kafka Connect's SinkConnectorConfig.validate); keep one of them", "validate"))
    reason = first_invalid_topic(t for t in topics if t) if (raw.get("topics") or "").strip() else None
    if reason:
        problems.append(ConfigProblem("topics", raw["topics"], f"{reason}; a Kafka topic name is 1 to "
                                      f"{TOPIC_MAX_LENGTH} of {TOPIC_LEGAL_CHARS}, not '.' or '..'", "kafka"))
    for which in ("key", "value"):
        if str(raw.get(f"{which}.converter", "")).strip():
            try:
                converter_for(raw, which)
            except UnknownConverter as e:
                problems.append(ConfigProblem(f"{which}.converter", raw[f"{which}.converter"],
                                              str(e).split(": ", 1)[-1], "model"))
    return problems


def config_warnings(raw: Mapping[str, str]) -> list[str]:
    """What a user should hear about a config Connect accepts as it is: keys nobody defines (as
    Connect logs them), a path.format whose quote never closes (Joda takes the rest as text)."""
    out = [unknown_key_warning(k) for k in unknown_keys(raw)]
    fmt = raw.get("path.format") or ""
    if fmt.replace("''", "").count("'") % 2:
        out.append(f"path.format {fmt!r} has a quote that is never closed: Joda reads everything after it as "
                   "literal text, so no date field after it is filled in")
    return out


def _valid_zone(tz: str) -> bool:
    if tz == "UTC" or tz == "Z":
        return True
    try:
        zoneinfo.ZoneInfo(tz)
        return True
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
