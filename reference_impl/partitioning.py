"""Timestamp extractors (R6.5) and partitioners (R6.1–R6.4, R6.6, R6.7): record → encoded partition."""
from __future__ import annotations

import datetime as dt
import re

import numpy as np
from dataclasses import dataclass
from typing import Any, Callable

from reference_impl.config import SinkConfig
from reference_impl.connect_data import DATE, TIME, TIMESTAMP, Schema, SinkRecord, Struct
from reference_impl.errors import DataError, FatalError, PartitionError
from reference_impl.timeutil import bucket_start, format_instant, local_to_utc, zone

_DIGITS = re.compile(r"-?\d{1,19}")
_ISO = re.compile(
    r"(?P<date>[+-]?\d{4,}-\d{2}-\d{2}|\d{4}-\d{2}|\d{4})"
    r"(?:T(?P<time>\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?)?)?"
    r"(?P<off>Z|[+-]\d{2}(?::?\d{2})?)?"
)


def parse_timestamp_string(text: str, jvm_zone: dt.tzinfo) -> int:
    """R6.5 strings: 1–19 digits are epoch ms; otherwise Joda's ISO dateTimeParser, with a
    zone-less string read in the JVM default zone."""
    s = text.strip()
    if _DIGITS.fullmatch(s):
        return int(s)
    m = _ISO.fullmatch(s)
    if not m:
        raise DataError("R6.5", f"Invalid format: {text!r} is not an ISO-8601 date-time")
    date_parts = [int(p) for p in m["date"].split("-") if p] if not m["date"].startswith("-") else None
    if date_parts is None:
        raise DataError("R6.5", f"negative years are not supported: {text!r}")
    y, mo, d = (date_parts + [1, 1])[:3]
    hh = mi = ss = us = 0
    if m["time"]:
        t = m["time"].replace(":", "")
        frac = ""
        if "." in t or "," in t:
            t, frac = re.split(r"[.,]", t, maxsplit=1)
        hh = int(t[0:2])
        mi = int(t[2:4]) if len(t) >= 4 else 0
        ss = int(t[4:6]) if len(t) >= 6 else 0
        us = int((frac + "000000")[:6]) if frac else 0
    try:
        naive = dt.datetime(y, mo, d, hh, mi, ss, us)
    except ValueError as e:
        raise DataError("R6.5", f"Invalid date-time {text!r}: {e}") from None
    local_ms = int((naive - dt.datetime(1970, 1, 1)).total_seconds() * 1000) if False else (
        (naive - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
    )
    if m["off"]:
        off = m["off"]
        if off == "Z":
            return local_ms
        sign = 1 if off[0] == "+" else -1
        digits = off[1:].replace(":", "")
        minutes = int(digits[0:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
        return local_ms - sign * minutes * 60_000
    return local_to_utc(local_ms, jvm_zone)


def _field_path(value: Any, schema: Schema | None, path: str, rule: str) -> tuple[Any, Schema | None]:
    """Walk a dotted field path through Structs or Maps. A missing level is a DataException."""
    cur, cur_schema = value, schema
    for name in path.split("."):
        if isinstance(cur, Struct):
            f = cur.schema.field(name)
            if f is None:
                raise DataError(rule, f"field {name!r} of {path!r} does not exist in the value schema")
            cur, cur_schema = cur.values[name], f.schema
        elif isinstance(cur, dict):
            if name not in cur:
                raise DataError(rule, f"field {name!r} of {path!r} is missing from the value")
            cur, cur_schema = cur[name], None
        elif cur is None:
            raise DataError(rule, f"{path!r}: an intermediate level is null (NullPointerException)")
        else:
            raise PartitionError(rule, f"{path!r}: the value is neither a Struct nor a Map")
    return cur, cur_schema


class TimestampExtractor:
    """R6.5. `extract` returns epoch ms, or None (Record extractor with a null timestamp)."""

    def __init__(self, cfg: SinkConfig, jvm_zone: dt.tzinfo):
        self.kind = cfg.timestamp_extractor
        self.field = cfg.timestamp_field
        self.jvm_zone = jvm_zone

    def extract(self, record: SinkRecord, now: int | None) -> int | None:
        if self.kind == "wallclock":
            if now is None:
                raise FatalError("R6.5", "the Wallclock extractor needs the time of the put")
            return now
        if self.kind == "record":
            return record.timestamp
        return self._from_field(record)

    def _from_field(self, record: SinkRecord) -> int:
        value = record.value
        if isinstance(value, Struct):
            try:
                v, schema = _field_path(value, record.value_schema, self.field, "R6.5")
            except (DataError, PartitionError) as e:
                raise FatalError("R6.5", f"RecordField: {e.message}; the extractor runs outside the "
                                 "PartitionException handler, so the task dies even with a DLQ") from None
            if v is None:
                raise FatalError("R6.5", f"RecordField: field {self.field!r} is null; the task dies even with a DLQ")
            assert schema is not None
            if schema.name == TIMESTAMP:
                return int(v)
            if schema.type in ("int32", "int64"):
                return int(v)  # taken as epoch ms, even when it holds seconds (E9)
            if schema.type == "string":
                return self._parse(v)
            raise PartitionError("R6.5", f"RecordField: field {self.field!r} has unsupported type {schema.type}")
        if isinstance(value, dict):
            try:
                v, _ = _field_path(value, None, self.field, "R6.5")
            except (DataError, PartitionError) as e:
                raise FatalError("R6.5", f"RecordField: {e.message}; the task dies even with a DLQ") from None
            if v is None:
                raise FatalError("R6.5", f"RecordField: field {self.field!r} is null; the task dies even with a DLQ")
            if isinstance(v, bool):
                raise PartitionError("R6.5", f"RecordField: field {self.field!r} is a boolean")
            if isinstance(v, (int, float)):
                return int(v)
            if isinstance(v, str):
                return self._parse(v)
            raise PartitionError("R6.5", f"RecordField: field {self.field!r} is neither a number nor a string")
        raise PartitionError("R6.5", "RecordField needs a Struct or Map value")

    def _parse(self, s: str) -> int:
        try:
            return parse_timestamp_string(s, self.jvm_zone)
        except DataError as e:
            raise FatalError("R6.5", f"RecordField: {e.message}") from None


@dataclass(frozen=True)
class Partitioner:
    """Encodes a record's partition (ep). `time_based` says whether the writer sees a
    TimeBasedPartitioner for rotation purposes (R3.2, R3.9).

    `encode_many` is the same rule over a column of Kafka record timestamps, for the
    partitioners where the ep is a function of the topic-partition and that timestamp alone
    (DefaultPartitioner; time-based with the Record extractor in a fixed-offset zone); it
    returns None where it does not apply, and callers then encode record by record."""

    cfg: SinkConfig
    extractor: TimestampExtractor | None
    encode_inner: Callable[[SinkRecord, int | None, int | None], str]
    time_based: bool
    wrapped: bool
    encode_many: Callable[[int, "np.ndarray"], "tuple[np.ndarray, list[str]] | None"] = lambda p, ts: None
    encodes_many: bool = False  # encode_many applies to every record of a schemaless topic

    def encode(self, record: SinkRecord, now: int | None, extracted_ts: int | None) -> str:
        cfg = self.cfg
        # R6.7: a tombstone skips the inner and affix partitioners
        if cfg.behavior_on_null_values == "write" and record.value is None:
            return cfg.tombstone_encoded_partition
        ep = self.encode_inner(record, now, extracted_ts)
        if cfg.schema_affix != "NONE":  # R6.6
            name = record.value_schema.name if record.value_schema is not None else None
            affix = f"schema_name={name if name is not None else 'null'}"
            d = cfg.directory_delim
            ep = f"{affix}{d}{ep}" if cfg.schema_affix == "PREFIX" else f"{ep}{d}{affix}"
        return ep

    def timestamp_for_rotation(self, record: SinkRecord, now: int | None) -> int | None:
        """R2.2 step 1; a tombstone under `write` uses its Kafka timestamp (R6.7, 12.1.0+)."""
        assert self.extractor is not None
        if self.cfg.behavior_on_null_values == "write" and record.value is None:
            return record.timestamp
        return self.extractor.extract(record, now)


def _field_value_text(record: SinkRecord, name: str, nested: bool = True) -> str:
    """R6.2: the natural string form of a Struct field."""
    if not isinstance(record.value, Struct):
        raise PartitionError("R6.2", "FieldPartitioner needs Struct values; schemaless values cannot be partitioned by field")
    if nested or "." not in name:
        v, schema = _field_path(record.value, record.value_schema, name, "R6.2")
    else:
        # before storage-common 12.0.0 (#454) a dotted name is one field's name: Struct.get throws a
        # DataException for a name the schema lacks, outside the PartitionException handler
        f = record.value.schema.field(name)
        if f is None:
            raise DataError("R6.2", f"{name!r} is not a valid field name (nested field names need 12.0.0+)")
        v, schema = record.value.values[name], f.schema
    assert schema is not None
    if schema.name in (DATE, TIME, TIMESTAMP):
        raise FatalError("R6.2", f"field {name!r} is a logical {schema.name.rsplit('.', 1)[-1]} (ClassCastException kills the task)")
    if v is None:
        return f"{name}=null"
    if schema.type in ("int8", "int16", "int32", "int64", "string"):
        return f"{name}={v}"
    if schema.type == "boolean":
        return f"{name}={'true' if v else 'false'}"
    raise PartitionError("R6.2", f"field {name!r} has type {schema.type}, which FieldPartitioner cannot encode")


def build_partitioner(cfg: SinkConfig, jvm_zone_id: str = "UTC") -> Partitioner:
    jvm_zone = zone(jvm_zone_id)
    wrapped = cfg.schema_affix != "NONE" or cfg.behavior_on_null_values == "write"
    kind = cfg.partitioner
    if kind == "default":
        def default_many(partition: int, ts: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
            if wrapped:
                return None
            return np.zeros(len(ts), dtype=np.int64), [f"partition={partition}"]

        return Partitioner(cfg, None, lambda r, now, ts: f"partition={r.partition}", False, wrapped, default_many,
                           not wrapped)
    if kind == "field":
        names = cfg.partition_field_names
        d = cfg.directory_delim
        nested = cfg.version.nested_partition_fields
        return Partitioner(cfg, None, lambda r, now, ts: d.join(_field_value_text(r, n, nested) for n in names), False,
                           wrapped)

    extractor = TimestampExtractor(cfg, jvm_zone)
    tz = zone(cfg.timezone.strip())
    d = cfg.directory_delim
    if kind == "daily":
        pattern = f"'year'=YYYY{d}'month'=MM{d}'day'=dd"
    elif kind == "hourly":
        pattern = f"'year'=YYYY{d}'month'=MM{d}'day'=dd{d}'hour'=HH"
    else:
        pattern = cfg.path_format
        if pattern.endswith(d):  # one trailing delimiter is stripped (R6.3)
            pattern = pattern[: -len(d)]
    duration = cfg.partition_duration_ms
    fixed_zone = tz is dt.timezone.utc  # no offset changes: buckets are plain arithmetic
    formatted: dict[int, str] = {}

    def encode_time(record: SinkRecord, now: int | None, ts: int | None) -> str:
        if ts is None:
            ts = extractor.extract(record, now)
        if ts is None:
            raise PartitionError("R6.5", f"record at offset {record.offset} has no timestamp (Record extractor)")
        if duration == 0:
            raise FatalError("R6.3", "partition.duration.ms=0: division by zero at the first record")
        if fixed_zone:
            q = abs(ts) // duration  # Java division truncates toward zero (R6.3)
            bucket = (q if ts >= 0 else -q) * duration
        else:
            bucket = bucket_start(ts, duration, tz)
        ep = formatted.get(bucket)
        if ep is None:
            if len(formatted) > 4096:
                formatted.clear()
            ep = formatted[bucket] = format_instant(bucket, pattern, tz)
        return ep

    def time_many(partition: int, ts: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
        if wrapped or not fixed_zone or extractor.kind != "record" or duration == 0:
            return None
        q = np.abs(ts) // duration  # truncation toward zero, as encode_time
        buckets = np.where(ts >= 0, q, -q) * duration
        uniq, codes = np.unique(buckets, return_inverse=True)
        names = [format_instant(int(b), pattern, tz) for b in uniq]
        # two buckets that format alike are one ep (R6.3)
        first: dict[str, int] = {}
        remap = np.array([first.setdefault(n, len(first)) for n in names], dtype=np.int64)
        return remap[codes], list(first)

    many_ok = not wrapped and fixed_zone and extractor.kind == "record" and duration != 0
    # R3.9: the writer sees through the schema-affix and tombstone wrappers (before 12.1.0 it did
    # not: a known bug, confluent-wrapped-partitioner-rotation, that the model does not imitate)
    return Partitioner(cfg, extractor, encode_time, True, wrapped, time_many, many_ok)
