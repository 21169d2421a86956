"""Which connector configs use the rule a faulty variant breaks: each variant class says it beside
its hook (`unexercised = staticmethod(<rule>)`), with one of the rules below. A rule reads the
config as the Python sink does (SinkSettings) and returns why the config never exercises the
variant's rule, in one line, the property first, or None where it does.

These are statements about the Python sink's own hooks (when a hook's result can differ from
the correct one's), not the model's rules: the kill matrix under a user's config
(conformance/calibration/user_kill_matrix.py) requires a variant to be killed only where its
rule says the config exercises it, and lists the others with the reason.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable, Mapping

from adapters.pysink.settings import SinkSettings


@dataclass(frozen=True)
class Config:
    """A connector config as the variants' rules read it: the Python sink's settings, the
    partitioner's class name (for the reasons), and the topics it names (the sink is handed
    its topic-partitions, so its settings hold none)."""

    s: SinkSettings
    partitioner: str  # the short class name: DefaultPartitioner, FieldPartitioner, ...
    topics: tuple[str, ...]  # `topics`; empty where the config reads `topics.regex`

    @classmethod
    def of(cls, config: Mapping[str, str]) -> "Config":
        """SinkConfigError where the Python sink refuses the config (as `sinkcheck run` does first)."""
        cfg = {str(k): str(v) for k, v in config.items()}
        settings = SinkSettings.from_config({"s3.bucket.name": "sinkcheck", "flush.size": "1", **cfg})
        topics = tuple(t.strip() for t in cfg.get("topics", "").split(",") if t.strip())
        return cls(settings, cfg.get("partitioner.class", "DefaultPartitioner").strip().rsplit(".", 1)[-1], topics)


Rule = Callable[[Config], "str | None"]


def all_of(*rules: Rule) -> Rule:
    """A variant whose rule needs every one of `rules`: the first reason found."""
    def rule(c: Config) -> str | None:
        return next((why for why in (r(c) for r in rules) if why), None)
    return rule


def always(c: Config) -> str | None:
    """Rules every config uses: offsets and commits (R4.1), object names (R5.1), S3's answers
    (R7), a task's restart and fencing (R1): the faults decide, and every config meets them."""
    return None


def several_records_a_file(c: Config) -> str | None:
    if c.s.flush_size > 1:
        return None
    return "flush.size=1: every file holds one record"


def parts_outgrown(c: Config) -> str | None:
    """R7.1: a record larger than what is left of a part, which a record larger than a part
    always is: s3.part.size no larger than the largest record a topic takes (the broker
    sinkcheck starts takes 10 MiB, message.max.bytes; Kafka's default is 1 MiB)."""
    from adapters.kafka.produce import MAX_MESSAGE_BYTES

    why = several_records_a_file(c)
    if why:
        return why
    if c.s.part_size <= MAX_MESSAGE_BYTES:
        return None
    return (f"s3.part.size={c.s.part_size}: larger than any record a topic takes ({MAX_MESSAGE_BYTES // 2**20} MiB, "
            "message.max.bytes), so no record outgrows a part")


def _time_partitioner(c: Config) -> str | None:
    if c.s.partitioner == "time":
        return None
    return f"partitioner is {c.partitioner}: no time bucket"


def record_time_rotation(c: Config) -> str | None:
    """R3.2: rotate.interval.ms is read under a time-based partitioner only (the writer's
    rotate_on_time), on the records' time."""
    if c.s.rotate_interval_ms <= 0:
        return "rotate.interval.ms is not set: no file rotates on record time"
    if c.s.partitioner != "time":
        return f"partitioner is {c.partitioner}: rotate.interval.ms rotates under a time-based partitioner only"
    return None


def partition_change_rotation(c: Config) -> str | None:
    """R3.3: asked only where rotate.interval.ms is (rotate_on_time), of a file with records."""
    if not c.s.partition_change:
        return "rotate.file.on.partition.change=false: a change of encoded partition rotates nothing"
    return record_time_rotation(c) or several_records_a_file(c)


def scheduled_rotation(c: Config) -> str | None:
    """R3.4, R3.5: a scheduled boundary closes a file with records in it (rotate_on_time asks
    only then), which flush.size=1 never leaves open."""
    if c.s.schedule_ms <= 0:
        return "rotate.schedule.interval.ms is not set: no file rotates on the wall clock"
    if c.s.flush_size == 1:
        return "flush.size=1: every file closes at its one record, before any scheduled boundary"
    return None


def several_open_files(c: Config) -> str | None:
    """R2.4: more than one file of a topic-partition open at once, so a count per file differs
    from the partition's: encoded partitions that interleave (a field's or a time bucket's,
    where no partition change rotates), or the tombstone partition beside the records'."""
    why = several_records_a_file(c)
    if why:
        return why
    if c.s.nulls == "write":
        return None
    if c.s.partitioner == "default":
        return f"partitioner is {c.partitioner}: a topic-partition has one open file at a time"
    if c.s.partitioner == "time" and c.s.partition_change and c.s.rotate_interval_ms > 0:
        return ("rotate.interval.ms is set with rotate.file.on.partition.change=true: a change of time bucket "
                "rotates, so a topic-partition has one open file at a time")
    return None


def tombstone_partition_change(c: Config) -> str | None:
    if c.s.nulls != "write":
        return f"behavior.on.null.values={c.s.nulls}: no tombstone partition (R12.3 writes one only under write)"
    return partition_change_rotation(c)


def _zone_name(c: Config) -> str:
    return getattr(c.s.tz, "key", None) or str(c.s.tz)


# the years the scenarios' records are in: the named ones about DST, and the generated ones
# (conformance.playing.user_config.BASE_T, 2024); a zone's clock changes long past (Seoul's of
# 1987-88) are never met by them
_PLAYED_YEARS = range(2000, 2041)


def _offsets(c: Config, years: range = _PLAYED_YEARS) -> set[int]:
    """The zone's UTC offsets (ms) in `years`, at the solstices and equinoxes."""
    out = set()
    for y in years:
        for month in (1, 4, 7, 10):
            t = dt.datetime(y, month, 1, tzinfo=dt.timezone.utc)
            off = t.astimezone(c.s.tz).utcoffset()
            out.add(int(off.total_seconds() * 1000) if off else 0)
    return out


def local_bucket_edges(c: Config) -> str | None:
    """R6.3: buckets floored on local time start elsewhere than those floored on UTC, where
    the zone's offset is no whole number of partition.duration.ms."""
    why = _time_partitioner(c)
    if why:
        return why
    if all(off % c.s.duration_ms == 0 for off in _offsets(c)):
        return (f"timezone={_zone_name(c)}: its UTC offsets are whole multiples of partition.duration.ms="
                f"{c.s.duration_ms}, so local and UTC buckets start alike")
    return None


def clock_changes(c: Config) -> str | None:
    """R6.3 across a DST change: the zone has more than one offset in the years played."""
    why = _time_partitioner(c)
    if why:
        return why
    if len(_offsets(c)) > 1:
        return None
    return (f"timezone={_zone_name(c)}: one UTC offset from {_PLAYED_YEARS[0]} to {_PLAYED_YEARS[-1]}, so no "
            "clock change")


def record_times(c: Config) -> str | None:
    """R6.3/R6.5: a bucket from the records' own times (Record, RecordField), which reach any
    date; the wall clock is always after 1970."""
    why = _time_partitioner(c)
    if why:
        return why
    if c.s.extractor in ("Record", "RecordField"):
        return None
    return f"timestamp.extractor={c.s.extractor}: buckets follow the wall clock, not the records' times"


def record_field(c: Config) -> str | None:
    why = _time_partitioner(c)
    if why:
        return why
    if c.s.extractor == "RecordField":
        return None
    return f"timestamp.extractor={c.s.extractor}: no time is read from a value field"


def local_zone(c: Config) -> str | None:
    if _offsets(c) != {0}:
        return None
    return f"timezone={_zone_name(c)}: the zone is UTC, the JVM's own"


def field_partitioner(c: Config) -> str | None:
    if c.s.partitioner == "field":
        return None
    return f"partitioner is {c.partitioner}: no partition is named after a field's value"


def unsorted_fields(c: Config) -> str | None:
    why = field_partitioner(c)
    if why:
        return why
    names = c.s.field_names
    if tuple(sorted(names)) != names:
        return None
    return f"partition.field.name={','.join(names)}: its fields are in sorted order already"


def topics_dir_set(c: Config) -> str | None:
    if c.s.topics_dir != "topics":
        return None
    return "topics.dir is topics (the default): the variant names objects where the correct sink does"


def wide_offsets(c: Config) -> str | None:
    if c.s.pad > 10:
        return None
    return f"filename.offset.zero.pad.width={c.s.pad}: not above 10"


def dotted_topics(c: Config) -> str | None:
    if not c.topics or any("." in t for t in c.topics):
        return None
    return f"topics={','.join(c.topics)}: no topic name has a dot"


def headers_stored(c: Config) -> str | None:
    if c.s.headers:
        return None
    return "store.kafka.headers=false: no headers are written"


def json_keys_stored(c: Config) -> str | None:
    if not c.s.keys:
        return "store.kafka.keys=false: no keys are written"
    if c.s.keys_format != "json":
        return f"keys.format.class is {c.s.keys_format.capitalize()}Format: keys are not written as JSON text"
    return None


def json_values(c: Config) -> str | None:
    if c.s.value_format == "json":
        return None
    return f"format.class is {c.s.value_format.capitalize()}Format: values are not written as JSON text"


def json_text(c: Config) -> str | None:
    """JsonFormat lines anywhere: values, keys or headers."""
    if "json" in _line_views(c, ("json",)):
        return None
    return f"format.class is {c.s.value_format.capitalize()}Format, and no keys or headers are written as JSON"


def _line_views(c: Config, formats: tuple[str, ...]) -> set[str]:
    s = c.s
    views = [s.value_format] + ([s.keys_format] if s.keys else []) + ([s.headers_format] if s.headers else [])
    return {f for f in views if f in formats}


def line_formats(c: Config) -> str | None:
    """R10.1, R10.2: objects of lines (JsonFormat, ByteArrayFormat), which end in a separator."""
    if _line_views(c, ("json", "bytearray")):
        return None
    return (f"format.class is {c.s.value_format.capitalize()}Format, and no keys or headers are written as "
            "lines: no object ends in a separator")


def _schemas(c: Config) -> str | None:
    conv = c.s.value_conv
    if conv.kind in ("avro", "protobuf") or (conv.kind == "json" and conv.schemas):
        return None
    what = "value.converter.schemas.enable=false" if conv.kind == "json" else f"value.converter is {conv.kind}"
    return f"{what}: values carry no schema"


def numeric_decimals(c: Config) -> str | None:
    """R10.1: json.decimal.format=NUMERIC changes how JsonFormat writes a Decimal (BASE64 is
    what the variant writes anyway), which only values with a schema carry."""
    if c.s.decimal_format != "NUMERIC":
        return f"json.decimal.format={c.s.decimal_format}: what the variant writes whatever it says"
    if not (c.s.value_format == "json" or (c.s.keys and c.s.keys_format == "json")):
        return f"format.class is {c.s.value_format.capitalize()}Format: no Decimal is written as JSON"
    return _schemas(c)


def logical_types(c: Config) -> str | None:
    """R10.3, R10.4: Avro and Parquet objects of values with a schema (Timestamp, Date, Time)."""
    if c.s.value_format not in ("avro", "parquet"):
        return (f"format.class is {c.s.value_format.capitalize()}Format: no Avro or Parquet schema to carry logical "
                "types")
    return _schemas(c)


def value_schemas(c: Config) -> str | None:
    """R14.2: values with a schema, whose change rotates a file with records in it (every
    schema.compatibility)."""
    return _schemas(c) or several_records_a_file(c)


def projection(c: Config) -> str | None:
    """R14.3, R14.4: a record projected onto its file's schema (another record's, so a file of
    several), under BACKWARD, FORWARD or FULL."""
    why = value_schemas(c)
    if why:
        return why
    if c.s.compatibility == "NONE":
        return "schema.compatibility=NONE: no record is projected onto its file's schema, any change rotates"
    return None


def enum_projection(c: Config) -> str | None:
    """An enum's symbols compared: AvroConverter's and ProtobufConverter's enums, projected."""
    why = projection(c)
    if why:
        return why
    if c.s.value_conv.kind in ("avro", "protobuf"):
        return None
    return "value.converter is JsonConverter: its schemas have no enums"


def conditional_writes(c: Config) -> str | None:
    """R8.1: conditional Completes (If-None-Match), whose 412 R8.2 checks."""
    if c.s.conditional_writes:
        return None
    if c.s.schedule_ms == -1:
        return "rotate.schedule.interval.ms is not set: no conditional write (R8.1), so no 412 to read"
    if c.s.keys or c.s.headers:
        return "keys or headers are stored: no conditional write (R8.1), so no 412 to read"
    return "enable.conditional.writes=false: no conditional write (R8.1), so no 412 to read"


def overwrites_allowed(c: Config) -> str | None:
    """R1.8: a stale file completed over a newer object, which conditional writes refuse (R8.1)."""
    if not c.s.conditional_writes:
        return None
    return ("rotate.schedule.interval.ms is set with no keys or headers stored: conditional writes (R8.1) refuse "
            "every overwrite")
