"""The Python sink: a Kafka-to-S3 sink following the Confluent S3 sink's semantics, written from
the spec (it never imports `reference_impl`, which checks it).

Layers, as in Kafka Connect:
* `Writer`: one topic-partition's writer (R2.2 order: extract time, encode partition, schema
  null-ness (R3.7), time rotation, schema change (R14.2, NONE), append, flush.size). Open files stream multipart parts of `s3.part.size` to S3
  (R7.1); a rotation uploads and completes every open file of the TP (R3.1) and only then
  sets the offset to commit (R4.1).
* What a file holds: JsonFormat or ByteArrayFormat values (R10.1, R10.2), plus JsonFormat
  keys and headers objects beside each value object (R11); tombstones written as keys (and
  headers) objects under `tombstone.encoded.partition` (R12.3, R6.7). Time-based partitioners
  take Wallclock, Record or RecordField time (R6.5). There is no DLQ: every DataException
  stops the task (R13 without a reporter).
* `SinkTask`: `open`/`put`/`pre_commit`/`close` over writers; the null policy (R12); a
  retriable S3 error drops the writer and rewinds to the first uncommitted record (R1.5).
* `SinkInstance`: the consumer side that calls `put` with each poll's batch (empty batches
  too, so scheduled rotation fires) and commits what `pre_commit` hands back. Two sources:
  `InProcessSink` here (an `InProcessLog`), `KafkaSink` in adapters/pysink/kafka.py (a real
  consumer group). Every S3 call goes through the instance, which can be paused (a zombie),
  killed (a crash: nothing closed, nothing committed) and journals what it did.

The clock (`clock() -> epoch ms`) is injectable; `ManualClock` drives put() times in tests.
Faulty variants (adapters.pysink.VARIANTS) are switches marked `BUG(<name>)` below.
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import json
import random
import re
import threading
import time
import zlib
import zoneinfo
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from adapters.pysink.converters import ConversionError, RecordConverter
from adapters.pysink.jsonwrite import WriteError, headers_record_line, json_record_line
from adapters.pysink.log import TP, InProcessLog, LogRecord

MIN_PART = 5 * 1024 * 1024
Clock = Callable[[], int]


def wall_clock() -> int:
    return int(time.time() * 1000)


class ManualClock:
    """A clock tests move by hand: `set(ms)`, `advance(ms)`; calling it returns the time."""

    def __init__(self, start_ms: int):
        self._now = int(start_ms)
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return self._now

    def set(self, ms: int) -> None:
        with self._lock:
            self._now = int(ms)

    def advance(self, ms: int) -> int:
        with self._lock:
            self._now += int(ms)
            return self._now


class Killed(Exception):
    """The instance was killed: it stops where it is, closing and committing nothing."""


class Fenced(Exception):
    """The group has moved on: this instance no longer owns its partitions."""


class SinkConfigError(ValueError):
    """The connector config asks for something the Python sink does not do (names the property)."""


class TaskFailed(RuntimeError):
    """A non-retriable error: the task dies (Connect kills a sink task for these)."""


class Retriable(RuntimeError):
    """A retriable S3 error (5xx, throttling, a network error): R1.5."""


# --- configuration ----------------------------------------------------------------------------

JSON_FORMAT_CLASS = "io.confluent.connect.s3.format.json.JsonFormat"
BYTEARRAY_FORMAT_CLASS = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
AVRO_FORMAT_CLASS = "io.confluent.connect.s3.format.avro.AvroFormat"
_TBP = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"
_EXTRACTORS = {f"{_TBP}{n}TimestampExtractor": n for n in ("Wallclock", "Record", "RecordField")}

_JODA = {"YYYY": "%Y", "yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M", "ww": "%V"}


def joda_formatter(pattern: str) -> Callable[[dt.datetime], str]:
    """A Joda path.format subset: 'quoted literals' ('' is a quote), YYYY/yyyy, MM, dd, HH, mm, and
    ww (ISO week of the week-based year, beside YYYY's year of era: R6.3)."""
    out: list[str | tuple[str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            if j < 0:
                raise SinkConfigError(f"path.format={pattern!r}: unterminated quote")
            out.append(pattern[i + 1:j] if j > i + 1 else "'")
            i = j + 1
            continue
        if not c.isalpha():
            out.append(c)
            i += 1
            continue
        j = i
        while j < len(pattern) and pattern[j] == c:
            j += 1
        tok = pattern[i:j]
        if tok not in _JODA:
            raise SinkConfigError(f"path.format={pattern!r}: the Python sink supports 'literals', "
                                  f"YYYY, yyyy, MM, dd, HH, mm and ww, not {tok!r}")
        out.append((_JODA[tok],))
        i = j
    return lambda t: "".join(p if isinstance(p, str) else t.strftime(p[0]) for p in out)


def _zone(name: str, prop: str) -> dt.tzinfo:
    if name.upper() == "UTC":
        return dt.timezone.utc
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise SinkConfigError(f"{prop}={name!r} is not a time zone") from None


@dataclass
class SinkSettings:
    bucket: str
    flush_size: int
    topics_dir: str = "topics"
    dir_delim: str = "/"  # directory.delim (R5.1, R5.2)
    file_delim: str = "+"  # file.delim (R5.1)
    partitioner: str = "default"  # default | field | time
    field_names: tuple[str, ...] = ()
    duration_ms: int = 3_600_000
    path: Callable[[dt.datetime], str] | None = None
    tz: dt.tzinfo = dt.timezone.utc
    rotate_interval_ms: int = -1
    schedule_ms: int = -1
    partition_change: bool = True
    gzip: bool = False
    gzip_level: int = -1
    part_size: int = 26_214_400
    nulls: str = "fail"
    retry_backoff_ms: int = 200
    pad: int = 10
    value_format: str = "json"  # json | bytearray (R10.1, R10.2)
    bytearray_ext: str = ".bin"
    bytearray_sep: bytes = b"\n"  # the JVM line separator on Linux
    keys: bool = False  # store.kafka.keys, JsonFormat (R11)
    headers: bool = False  # store.kafka.headers, JsonFormat (R11)
    extractor: str = "Wallclock"  # Wallclock | Record | RecordField (R6.5)
    ts_field: str = "timestamp"
    tombstone_ep: str = "tombstone"
    decimal_format: str = "BASE64"  # json.decimal.format (R10.1)
    key_conv: RecordConverter = field(default_factory=lambda: RecordConverter("json"))
    value_conv: RecordConverter = field(default_factory=lambda: RecordConverter("json"))

    @property
    def value_ext(self) -> str:
        """R5.3: the value object's extension, `.gz` included."""
        base = ".json" if self.value_format == "json" else self.bytearray_ext
        return base + (".gz" if self.gzip else "")

    @classmethod
    def from_config(cls, c: dict[str, str], *, min_part_size: int = MIN_PART) -> "SinkSettings":
        def num(key: str, default: int) -> int:
            try:
                return int(str(c.get(key, default)).strip())
            except ValueError:
                raise SinkConfigError(f"{key}={c[key]!r} is not a number") from None

        for req in ("flush.size", "s3.bucket.name"):
            if not str(c.get(req, "")).strip():
                raise SinkConfigError(f"{req} is required")
        cls_name = c.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
        kinds = {"DefaultPartitioner": "default", "FieldPartitioner": "field", "TimeBasedPartitioner": "time",
                 "HourlyPartitioner": "time", "DailyPartitioner": "time"}
        if cls_name not in kinds:
            raise SinkConfigError(f"partitioner.class={cls_name}: the Python sink supports {', '.join(kinds)}")

        def flag(key: str, default: bool) -> bool:
            v = str(c.get(key, "true" if default else "false")).strip().lower()
            if v not in ("true", "false"):
                raise SinkConfigError(f"{key}={c[key]!r} is not a boolean: use true or false")
            return v == "true"

        fmt = c.get("format.class", "JsonFormat").strip().rsplit(".", 1)[-1]
        formats = {"JsonFormat": "json", "ByteArrayFormat": "bytearray"}
        if fmt not in formats:
            raise SinkConfigError(f"format.class={fmt}: the Python sink writes JsonFormat and ByteArrayFormat "
                                  f"values only, not Avro or Parquet; set format.class to "
                                  f"{JSON_FORMAT_CLASS} or {BYTEARRAY_FORMAT_CLASS}")
        keys, headers = flag("store.kafka.keys", False), flag("store.kafka.headers", False)
        for on, what, prop in ((keys, "store.kafka.keys", "keys.format.class"),
                               (headers, "store.kafka.headers", "headers.format.class")):
            if not on:
                continue
            given = prop in c
            kf = c.get(prop, AVRO_FORMAT_CLASS).strip().rsplit(".", 1)[-1]
            if kf != "JsonFormat":
                raise SinkConfigError(f"{prop}={kf}{'' if given else ' (the default)'} with {what}=true: the Python "
                                      f"sink writes JsonFormat keys/headers only; set {prop}={JSON_FORMAT_CLASS}")
        compat = c.get("schema.compatibility", "NONE").strip()
        if compat in ("BACKWARD", "FORWARD", "FULL"):  # R14.6: any other name is NONE in the connector too
            raise SinkConfigError(f"schema.compatibility={compat}: the Python sink does not project records to "
                                  "an older or newer schema (R14.3/R14.4); it supports NONE only, so remove the "
                                  "property or set it to NONE")
        tolerance = c.get("errors.tolerance", "none").strip().lower()
        if tolerance != "none":
            raise SinkConfigError(f"errors.tolerance={tolerance}: the Python sink has no dead letter queue or "
                                  "errant-record reporter, so a record it cannot write stops the task; remove "
                                  "the property or set errors.tolerance=none")
        if c.get("errors.deadletterqueue.topic.name", "").strip():
            raise SinkConfigError(f"errors.deadletterqueue.topic.name={c['errors.deadletterqueue.topic.name'].strip()}"
                                  ": the Python sink has no dead letter queue (records it cannot write stop the "
                                  "task); remove the property")
        if flag("errors.log.enable", False):
            raise SinkConfigError("errors.log.enable=true: the Python sink has no errant-record reporter (with one, "
                                  "R12.2 makes an ignored null stop the task); remove the property or set it to false")
        # settings of the connector the Python sink does not implement: refused, never ignored,
        # so a run never claims behaviour the sink did not have
        unsupported = {
            "s3.schema.partition.affix.type": ("NONE", "it has no schema-name affix in encoded partitions (R6.6)"),
            "partitioner.max.open.files": ("-1", "it has no max-open-files rotation (R3.6)"),
            "max.write.duration.ms": (str(2**63 - 1), "it has no write deadline (R9.1)"),
            "s3.object.tagging": ("false", "it does not tag objects (R9.4)"),
        }
        for prop, (default, why) in unsupported.items():
            given = str(c.get(prop, default)).strip()
            if given.upper() != default.upper():
                raise SinkConfigError(f"{prop}={given}: the Python sink does not support this ({why}); remove the "
                                      f"property or set it to {default}")
        comp = c.get("s3.compression.type", "none").lower()
        if comp not in ("none", "gzip"):
            raise SinkConfigError(f"s3.compression.type={comp}: the Python sink supports none and gzip")
        part = num("s3.part.size", 26_214_400)
        if part < min_part_size:
            raise SinkConfigError(f"s3.part.size={part} is below the minimum {min_part_size}")
        s = cls(bucket=c["s3.bucket.name"], flush_size=max(num("flush.size", 1), 1),
                topics_dir=c.get("topics.dir", "topics"), partitioner=kinds[cls_name],
                dir_delim=c.get("directory.delim", "/"), file_delim=c.get("file.delim", "+"),
                rotate_interval_ms=num("rotate.interval.ms", -1), schedule_ms=num("rotate.schedule.interval.ms", -1),
                partition_change=c.get("rotate.file.on.partition.change", "true").lower() == "true",
                gzip=comp == "gzip", gzip_level=num("s3.compression.level", -1), part_size=part,
                nulls=c.get("behavior.on.null.values", "fail").lower(),
                retry_backoff_ms=num("retry.backoff.ms", 200),
                pad=num("filename.offset.zero.pad.width", 10),
                value_format=formats[fmt], keys=keys, headers=headers,
                tombstone_ep=c.get("tombstone.encoded.partition", "tombstone").strip(),
                decimal_format=c.get("json.decimal.format", "BASE64").strip().upper())
        if s.pad < 1:
            raise SinkConfigError(f"filename.offset.zero.pad.width={s.pad}: the Python sink needs a width of at least "
                                  "1 (the connector's validator rejects negative widths, and 0 builds Java's "
                                  "format %00d, which fails at the first file: R5.1)")
        if s.decimal_format not in ("BASE64", "NUMERIC"):
            raise SinkConfigError(f"json.decimal.format={s.decimal_format}: must be BASE64 or NUMERIC")
        try:
            s.key_conv = RecordConverter.from_config(c, "key")
            s.value_conv = RecordConverter.from_config(c, "value")
        except ValueError as e:
            raise SinkConfigError(str(e)) from None
        if s.nulls not in ("ignore", "fail", "write"):
            raise SinkConfigError(f"behavior.on.null.values={s.nulls}: the Python sink supports ignore, fail "
                                  "and write (the connector's values)")
        if s.nulls == "write" and not keys:
            raise SinkConfigError("behavior.on.null.values=write needs store.kafka.keys=true (R12.3: a tombstone is "
                                  "written as a keys object only, and the connector's validator requires it); "
                                  "set store.kafka.keys=true and keys.format.class, or use ignore or fail")
        if s.value_format == "bytearray":
            s.bytearray_ext = c.get("format.bytearray.extension", ".bin").strip()
            # R10.2: read untrimmed from the original config; default: the JVM line separator
            s.bytearray_sep = c.get("format.bytearray.separator", "\n").encode("utf-8")
        if s.partitioner == "field":
            s.field_names = tuple(f.strip() for f in c.get("partition.field.name", "").split(",") if f.strip())
            if not s.field_names:
                raise SinkConfigError("partition.field.name is required with FieldPartitioner")
        if s.partitioner == "time":
            extractor = c.get("timestamp.extractor", "Wallclock").strip()
            extractor = _EXTRACTORS.get(extractor, extractor)
            if extractor not in ("Wallclock", "Record", "RecordField"):
                raise SinkConfigError(f"timestamp.extractor={extractor}: the Python sink supports Wallclock, Record "
                                      "and RecordField (custom extractor classes are not loaded); use one of those")
            s.extractor = extractor
            s.ts_field = c.get("timestamp.field", "timestamp").strip()
            if not c.get("timezone", "").strip():
                raise SinkConfigError("timezone is required with a time-based partitioner")
            s.tz = _zone(c["timezone"].strip(), "timezone")
            d = c.get("directory.delim", "/")
            if cls_name == "HourlyPartitioner":
                s.duration_ms, pattern = 3_600_000, f"'year'=YYYY{d}'month'=MM{d}'day'=dd{d}'hour'=HH"
            elif cls_name == "DailyPartitioner":
                s.duration_ms, pattern = 86_400_000, f"'year'=YYYY{d}'month'=MM{d}'day'=dd"
            else:
                s.duration_ms, pattern = num("partition.duration.ms", -1), c.get("path.format", "")
                if s.duration_ms <= 0:
                    raise SinkConfigError("partition.duration.ms must be > 0 with TimeBasedPartitioner")
                if not pattern.strip():
                    raise SinkConfigError("path.format is required with TimeBasedPartitioner")
            if pattern.endswith(d):
                pattern = pattern[: -len(d)]  # R6.3: one trailing delimiter is stripped
            s.path = joda_formatter(pattern)
        if s.schedule_ms > 0:
            if not c.get("timezone", "").strip():
                raise SinkConfigError("timezone is required with rotate.schedule.interval.ms")
            s.tz = _zone(c["timezone"].strip(), "timezone")
        return s


# --- time ---------------------------------------------------------------------------------------

def _offset_at(utc_ms: int, tz: dt.tzinfo) -> int:
    off = dt.datetime.fromtimestamp(utc_ms / 1000, tz).utcoffset()
    return int(off.total_seconds() * 1000) if off else 0


def _local_to_utc(local_ms: int, tz: dt.tzinfo) -> int:
    """Joda's convertLocalToUTC(local, strict=false)."""
    probe = local_ms - _offset_at(local_ms, tz)
    return local_ms - _offset_at(probe, tz)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q  # Java's integer division rounds toward zero


def time_bucket(ts: int, duration_ms: int, tz: dt.tzinfo) -> int:
    """R6.3: toUTC(floor(toLocal(ts) / d) * d)."""
    local = ts + _offset_at(ts, tz)
    return _local_to_utc(_trunc_div(local, duration_ms) * duration_ms, tz)


def next_boundary(now: int, interval: int, tz: dt.tzinfo) -> int:
    """R3.4: the first boundary strictly after `now`: local midnight + k * interval, the last
    slot of a day cut at the next local midnight."""
    local_day = _trunc_div(now + _offset_at(now, tz), 86_400_000) * 86_400_000
    start = _local_to_utc(local_day, tz)
    nxt = start + ((now - start) // interval + 1) * interval
    tomorrow = int((dt.datetime.fromtimestamp(start / 1000, tz) + dt.timedelta(days=1)).timestamp() * 1000)
    return min(nxt, tomorrow)


# --- values ---------------------------------------------------------------------------------------

def convert(conv: RecordConverter, raw: bytes | None, rec: LogRecord, what: str) -> tuple[Any, Any, bool]:
    """(schema, payload, has_schema) of a record's key or value through its converter; a value
    the converter refuses stops the task (Connect's errors.tolerance=none)."""
    try:
        return conv.read(raw)
    except ConversionError as e:
        raise TaskFailed(f"offset {rec.offset}: {rec.topic}-{rec.partition}: the {what} converter refused the "
                         f"record: {e}") from None


_FIELD_TYPES = {"int8", "int16", "int32", "int64", "string", "boolean"}


def field_ep(schema: Any, payload: Any, names: tuple[str, ...], offset: int, delim: str = "/") -> str:
    """R6.2: `name=value` per field (dotted names reach nested structs), joined by directory.delim.
    Values must be Structs; unsupported types or missing fields stop the task."""
    if not isinstance(schema, dict) or schema.get("type") != "struct" or not isinstance(payload, dict):
        raise TaskFailed(f"offset {offset}: FieldPartitioner needs a Struct value (a value with a schema)")
    parts = []
    for name in names:
        sch, val = schema, payload
        for step in name.split("."):
            fields = {f.get("field"): f for f in (sch or {}).get("fields", [])}
            if step not in fields:
                raise TaskFailed(f"offset {offset}: field {name!r} is not in the value's schema")
            sch = fields[step]
            val = val.get(step) if isinstance(val, dict) else None
        typ = sch.get("type")
        if typ not in _FIELD_TYPES or sch.get("name"):  # logical types are not partitionable here
            raise TaskFailed(f"offset {offset}: field {name!r} has type {sch.get('name') or typ}, "
                             "which FieldPartitioner cannot encode")
        text = "null" if val is None else ("true" if val is True else "false" if val is False else str(val))
        parts.append(f"{name}={text}")
    return delim.join(parts)


def schema_key(schema: Any) -> tuple:
    """A JsonConverter schema as Connect compares it (`Schema.equals`): type, optional,
    default, name, version, doc, parameters, and the field/item/key/value schemas in order."""
    if not isinstance(schema, dict):
        return ("?", json.dumps(schema, sort_keys=True, default=str))
    t = schema.get("type")
    if t == "struct":
        sub: tuple = tuple((f.get("field"), schema_key(f)) for f in schema.get("fields") or [])
    elif t == "array":
        sub = (schema_key(schema.get("items")),)
    elif t == "map":
        sub = (schema_key(schema.get("keys")), schema_key(schema.get("values")))
    else:
        sub = ()
    params = tuple(sorted((str(k), str(v)) for k, v in (schema.get("parameters") or {}).items()))
    return (t, bool(schema.get("optional", False)), json.dumps(schema.get("default"), sort_keys=True, default=str),
            schema.get("name"), schema.get("version"), schema.get("doc"), params, sub)


def json_line(schema: Any, payload: Any, has_schema: bool, decimal_format: str, offset: int) -> bytes:
    """R10.1: the JsonFormat line the connector writes for this view value."""
    try:
        return json_record_line(schema, payload, has_schema, decimal_format)
    except WriteError as e:
        raise TaskFailed(f"offset {offset}: JsonFormat cannot write the record: {e} (the task dies)") from None


DECIMAL = "org.apache.kafka.connect.data.Decimal"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"


def bytes_value(schema: Any, payload: Any, has_schema: bool, offset: int) -> bytes:
    """R10.2: ByteArrayFormat takes a `byte[]` with a BYTES schema (JsonConverter: an envelope
    `{"schema":{"type":"bytes"},"payload":"<base64>"}`); anything else is a DataException."""
    if (not has_schema or not isinstance(schema, dict) or schema.get("type") != "bytes"
            or schema.get("name") == DECIMAL or not isinstance(payload, str)):
        what = (f"a {schema.get('name') or schema.get('type')} value" if has_schema and isinstance(schema, dict)
                else f"a schemaless {type(payload).__name__} value")
        raise TaskFailed(f"offset {offset}: ByteArrayFormat needs a bytes value (a BYTES schema), got {what}: "
                         "DataException, and the Python sink has no DLQ (R10.2, R13)")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise TaskFailed(f"offset {offset}: the bytes payload is not base64 (JsonConverter cannot read it)") from None


# --- RecordField timestamps (R6.5) -----------------------------------------------------------------

_DIGITS = re.compile(r"-?[0-9]{1,19}")
_FRAC = r"(?:[.,]([0-9]+))?"
_ISO_TIME = re.compile(r"([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})" + _FRAC + r"|" + _FRAC + r")|" + _FRAC + r")")
_ISO_OFFSET = re.compile(r"(Z)|([+-])([0-9]{2})(?::?([0-9]{2})(?::?([0-9]{2})(?:[.,]([0-9]{3}))?)?)?")
_ISO_DATE = re.compile(r"([+-]?[0-9]{4,9})(?:-W([0-9]{2})(?:-([1-7]))?|-([0-9]{3})(?![0-9])|-([0-9]{2})(?:-([0-9]{2}))?)?")


def parse_iso_ms(text: str) -> int:
    """Joda's ISODateTimeFormat.dateTimeParser(): `date-opt-time | 'T' time`, a date being
    yyyy[-MM[-dd]], yyyy-DDD or xxxx-Www[-e]; a time HH[:mm[:ss]] with a fraction on its last
    element; an offset Z or +-HH[:mm]. Without an offset the string is read in UTC (the
    worker's zone; R6.5 says the JVM default zone). Raises ValueError."""
    pos, date = 0, dt.date(1970, 1, 1)
    time_only = text.startswith("T")
    if not time_only:
        m = _ISO_DATE.match(text)
        if not m:
            raise ValueError("no ISO date")
        year = int(m.group(1))
        if m.group(2):  # week date; a missing day keeps the base's (1970-01-01, a Thursday; inference)
            date = dt.date.fromisocalendar(year, int(m.group(2)), int(m.group(3) or 4))
        elif m.group(4):
            date = dt.date(year, 1, 1) + dt.timedelta(days=int(m.group(4)) - 1)
            if date.year != year:
                raise ValueError("day of year out of range")
        else:
            date = dt.date(year, int(m.group(5) or 1), int(m.group(6) or 1))
        pos = m.end()
        if pos == len(text):
            return _iso_ms(date, 0, None)
        if text[pos] != "T":
            raise ValueError(f"unexpected {text[pos:]!r}")
    pos += 1  # the 'T'
    micros = 0
    m = _ISO_TIME.match(text, pos)
    if m:
        hh, mm, ss, sf, mf, hf = m.groups()
        if int(hh) > 23 or (mm and int(mm) > 59) or (ss and int(ss) > 59):
            raise ValueError("time field out of range")
        unit = 3_600_000_000 if mm is None else 60_000_000 if ss is None else 1_000_000  # micros
        frac = sf or mf or hf
        micros = int(hh) * 3_600_000_000 + int(mm or 0) * 60_000_000 + int(ss or 0) * 1_000_000
        if frac:
            micros += int(frac[:9].ljust(9, "0")) * unit // 1_000_000_000
        micros -= micros % 1000  # Joda keeps milliseconds
        pos = m.end()
    elif time_only:
        raise ValueError("no time after 'T'")
    offset_ms = None
    if pos < len(text):
        o = _ISO_OFFSET.fullmatch(text, pos)
        if not o:
            raise ValueError(f"unexpected {text[pos:]!r}")
        if o.group(1):
            offset_ms = 0
        else:
            h, mi, se = int(o.group(3)), int(o.group(4) or 0), int(o.group(5) or 0)
            offset_ms = (h * 3600 + mi * 60 + se) * 1000 + int(o.group(6) or 0)
            offset_ms = -offset_ms if o.group(2) == "-" else offset_ms
    return _iso_ms(date, micros // 1000, offset_ms)


def _iso_ms(date: dt.date, ms_of_day: int, offset_ms: int | None) -> int:
    days = (date - dt.date(1970, 1, 1)).days
    return days * 86_400_000 + ms_of_day - (offset_ms or 0)


def _timestamp_of(value: Any, where: str) -> int:
    """A Map value's field: Number → ms (truncated), String → digits or ISO; else it dies."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TaskFailed(f"{where} is {'null' if value is None else type(value).__name__}, not a number or a string")
    if isinstance(value, (int, float)):
        return int(value)
    return _parse_ts_string(value, where)


def _parse_ts_string(text: str, where: str) -> int:
    if _DIGITS.fullmatch(text):
        n = int(text)
        if not -(2 ** 63) <= n < 2 ** 63:
            raise TaskFailed(f"{where} = {text!r} does not fit in a long")
        return n  # epoch milliseconds
    try:
        return parse_iso_ms(text)
    except ValueError as e:
        raise TaskFailed(f"{where} = {text!r} is neither epoch milliseconds nor an ISO-8601 date-time ({e})") from None


def record_field_ts(schema: Any, payload: Any, has_schema: bool, path: str, offset: int) -> int:
    """R6.5 RecordField: the value field `path` (dotted) as epoch ms. A missing or null field, or
    a type it cannot read, is an error outside the PartitionException handler: the task dies."""
    where = f"offset {offset}: timestamp.field {path!r}"
    rule = " (R6.5 RecordField: the task dies, even with a DLQ)"
    stype = schema.get("type") if has_schema and isinstance(schema, dict) else None
    if stype == "struct" and isinstance(payload, dict):
        sch, val = schema, payload
        for step in path.split("."):
            fields = {f.get("field"): f for f in (sch.get("fields") or [])} if isinstance(sch, dict) else {}
            if step not in fields:
                raise TaskFailed(f"{where} is not in the value's schema{rule}")
            if not isinstance(val, dict):
                raise TaskFailed(f"{where}: {step!r} is inside a null struct{rule}")
            sch, val = fields[step], val.get(step)
        if val is None:
            raise TaskFailed(f"{where} is null{rule}")
        if sch.get("name") == TIMESTAMP:
            return int(val)
        if sch.get("name") or sch.get("type") not in ("int32", "int64", "string"):
            raise TaskFailed(f"{where} has type {sch.get('name') or sch.get('type')}, which RecordField cannot "
                             f"read (INT32, INT64, STRING or Timestamp){rule}")
        try:
            return int(val) if sch.get("type") != "string" else _parse_ts_string(str(val), where)
        except TaskFailed as e:
            raise TaskFailed(f"{e}{rule}") from None
    if stype == "map" and isinstance(payload, list):  # JsonConverter's map with non-string keys: pairs
        payload = {str(p[0]): p[1] for p in payload if isinstance(p, list) and len(p) == 2}
    if stype in (None, "map") and isinstance(payload, dict):
        val: Any = payload
        for step in path.split("."):
            if not isinstance(val, dict) or val.get(step) is None:
                raise TaskFailed(f"{where} is missing or null{rule}")
            val = val[step]
        try:
            return _timestamp_of(val, where)
        except TaskFailed as e:
            raise TaskFailed(f"{e}{rule}") from None
    raise TaskFailed(f"offset {offset}: RecordField needs a Struct or Map value, got "
                     f"{'a ' + str(stype) if stype else 'a schemaless ' + type(payload).__name__} value{rule}")


# --- keys and headers (R11) -----------------------------------------------------------------------

def key_line(rec: LogRecord, conv: RecordConverter, decimal_format: str = "BASE64") -> bytes:
    """R11.3: the key as its converter reads it, written by JsonFormat. R11.4: a null key is a
    DataException (the Python sink has no DLQ: the task dies)."""
    schema, payload, has_schema = convert(conv, rec.key, rec, "key")
    if payload is None:
        raise TaskFailed(f"offset {rec.offset}: Key cannot be null with store.kafka.keys=true (R11.4 DataException; "
                         "the Python sink has no DLQ, so the task dies)")
    return json_line(schema, payload, has_schema, decimal_format, rec.offset)


def headers_line(rec: LogRecord) -> bytes:
    """R11.3: `{"headers":[{"key":k,"value":v}, …]}`, values stringified (their UTF-8 text).
    R11.4: a record without headers is a DataException; so is a null header value (the value
    field of a header struct is a required string; spec open question 11)."""
    if not rec.headers:
        raise TaskFailed(f"offset {rec.offset}: Headers cannot be null with store.kafka.headers=true (R11.4 "
                         "DataException; the Python sink has no DLQ, so the task dies)")
    out = []
    for k, v in rec.headers:
        if v is None:
            raise TaskFailed(f"offset {rec.offset}: header {k!r} has a null value, which the headers struct cannot "
                             "hold (a required string): DataException, the task dies")
        out.append((k, v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)))
    return headers_record_line(out)


# --- S3 errors ------------------------------------------------------------------------------------

def is_retriable(e: BaseException) -> bool:
    """R7.4: what the AWS SDK's default retry condition would retry: 5xx, throttling, network."""
    try:
        from botocore.exceptions import (ClientError, ConnectionClosedError, ConnectTimeoutError,
                                         EndpointConnectionError, ReadTimeoutError)
    except ImportError:  # pragma: no cover
        return False
    if isinstance(e, (ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError)):
        return True
    if isinstance(e, ClientError):
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0
        code = e.response.get("Error", {}).get("Code", "")
        return status >= 500 or status == 429 or code in (
            "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError", "ServiceUnavailable")
    return isinstance(e, (ConnectionError, TimeoutError))


# --- files and writers ----------------------------------------------------------------------------

@dataclass
class OpenFile:
    """An object under construction for one (TP, ep): invisible until completed."""

    ep: str
    start: int
    key: str
    records: int = 0
    lines: list[bytes] = field(default_factory=list)  # kept for the faulty variants only
    buf: bytearray = field(default_factory=bytearray)
    upload_id: str | None = None
    parts: list[dict] = field(default_factory=list)
    gz: Any = None


@dataclass
class FileSet:
    """One data file of a (TP, ep): its objects in commit order (R11.1): the value object
    (absent for a key containing the tombstone string, R11.5), then keys, then headers; each its
    own multipart upload."""

    ep: str
    start: int
    key: str  # the value object's key (R5.1); keys/headers names derive from it (R11.2)
    streams: list[OpenFile] = field(default_factory=list)
    has_value: bool = True


class Writer:
    """One topic-partition's writer."""

    def __init__(self, task: "SinkTask", tp: TP, now: int):
        self.task, self.s, self.tp = task, task.settings, tp
        self.inst = task.instance
        self.buffer: deque[LogRecord] = deque()
        self.files: dict[str, FileSet] = {}
        self.schemas: dict[str, tuple | None] = {}  # the value schema remembered per ep (R2.2 steps 4, 6)
        # BUG(unstable-boundaries): the flush counter is kept in local state and survives a
        # restart, so after a replay files are cut at other offsets.
        self.count = task.scratch.get(("count", tp), 0) if task.variant == "unstable-boundaries" else 0
        self.current_ep: str | None = None
        self.current_offset = -1
        self.base_ts: int | None = None
        self.first_wall: int | None = None
        self.offset_to_commit: int | None = None
        self.failure_time: int | None = None
        self.next_rotation = next_boundary(now, self.s.schedule_ms, self.s.tz) if self.s.schedule_ms > 0 else None

    # -- partitioning and rotation --
    def extract(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool, tomb: bool, now: int) -> int | None:
        """R2.2 step 1 / R6.5: the record's time for a time-based partitioner."""
        s = self.s
        if tomb or s.extractor == "Record":
            return rec.timestamp  # R6.7: a tombstone's time is its record timestamp
        if s.extractor == "Wallclock":
            # R2.1: the `now` of this write(). Under the tombstone wrapper (nulls=write) the
            # extractor is called without `now` and reads the system clock (R6.5).
            return self.inst.clock() if s.nulls == "write" else now
        return record_field_ts(schema, payload, has_schema, s.ts_field, rec.offset)

    def encode(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool, ts: int | None) -> str:
        s = self.s
        if s.partitioner == "default":
            return f"partition={rec.partition}"
        if s.partitioner == "field":
            if self.task.variant == "field-slash-escaped" and isinstance(payload, dict):
                # BUG(field-slash-escaped): a '/' in a field value is escaped as %2F (the
                # connector writes values as they are: a '/' makes a directory level, R6.2)
                payload = {k: v.replace("/", "%2F") if isinstance(v, str) else v for k, v in payload.items()}
            return field_ep(schema if has_schema else None, payload, s.field_names, rec.offset, s.dir_delim)
        if ts is None:
            raise TaskFailed(f"offset {rec.offset}: the Record extractor needs a record timestamp")
        assert s.path is not None
        tz = s.tz
        if self.task.variant == "utc-buckets":
            tz = dt.timezone.utc  # BUG(utc-buckets): buckets floored on UTC, not local, time (R6.3)
        elif self.task.variant == "dst-fixed-offset":
            # BUG(dst-fixed-offset): the zone's offset at the writer's first record, for every record
            self.fixed_tz = getattr(self, "fixed_tz", None) or dt.timezone(
                dt.timedelta(milliseconds=_offset_at(ts, s.tz)))
            return s.path(dt.datetime.fromtimestamp(time_bucket(ts, s.duration_ms, self.fixed_tz) / 1000,
                                                    self.fixed_tz))
        return s.path(dt.datetime.fromtimestamp(time_bucket(ts, s.duration_ms, tz) / 1000, s.tz))

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int) -> tuple[bool, bool]:
        """(rotate?, periodic-or-scheduled?) for R3.2/R3.3/R3.4."""
        if self.count <= 0:
            return False, False
        s, variant = self.s, self.task.variant
        if s.rotate_interval_ms > 0 and s.partitioner == "time":
            if variant == "rotate-on-wallclock":
                # BUG(rotate-on-wallclock): measured on the wall clock since the file's first
                # record, not on record timestamps.
                if self.first_wall is not None and now - self.first_wall >= s.rotate_interval_ms:
                    return True, True
            elif ts is not None and self.base_ts is not None and ts - self.base_ts >= s.rotate_interval_ms + (
                    1 if variant == "rotate-interval-exclusive" else 0):  # BUG(rotate-interval-exclusive): > not >=
                return True, True
            # BUG(no-partition-change-rotation): the R3.3 check is skipped.
            if (ep is not None and s.partition_change and variant != "no-partition-change-rotation"
                    and ep != self.current_ep and not self.tombstone_change(ep)):
                return True, True
        if self.next_rotation is not None and now >= self.next_rotation:
            return True, True
        return False, False

    def tombstone_change(self, ep: str) -> bool:
        """R3.3 (12.1.0+): with nulls=write, a change to or from an ep containing the tombstone
        partition string does not rotate."""
        t = self.s.tombstone_ep
        return self.s.nulls == "write" and (t in ep or t in (self.current_ep or ""))

    # -- R2.2 --
    def write(self, now: int) -> None:
        s = self.s
        if self.failure_time is not None:
            if now - self.failure_time < s.retry_backoff_ms:
                return  # R1.5.4: records pile up in the buffer during the backoff
            self.failure_time = None
        if self.next_rotation is not None and self.count == 0 and now >= self.next_rotation:
            self.next_rotation = next_boundary(now, s.schedule_ms, s.tz)  # R3.5 idle reset
        while self.buffer:
            rec = self.buffer[0]
            schema, payload, has_schema = convert(s.value_conv, rec.value, rec, "value")
            tomb = payload is None and s.nulls == "write"  # only `write` lets a null reach a writer (R12.3)
            if tomb:
                schema, has_schema = None, False
            ts = self.extract(rec, schema, payload, has_schema, tomb, now) if s.partitioner == "time" else None
            if ts is not None and self.base_ts is None:
                self.base_ts = ts
            ep = s.tombstone_ep if tomb else self.encode(rec, schema, payload, has_schema, ts)  # R6.7
            sch = schema_key(schema) if has_schema else None
            if ep in self.schemas and (self.schemas[ep] is None) != (sch is None):
                self.commit(now, False)  # R3.7: a schemaless/schema'd switch within an ep
                continue
            if self.schemas.get(ep) is None:
                self.schemas[ep] = sch
            rotate, timed = self.rotate_on_time(ep, ts, now)
            if rotate:
                self.commit(now, timed)
                continue
            if self.count > 0 and sch is not None and sch != self.schemas[ep]:
                self.commit(now, False)  # R14.2 NONE: any other value schema rotates
                continue
            fs = self.files.get(ep)
            if fs is None:
                fs = self.files[ep] = self.open_set(ep, rec.offset)
            lines = self.record_lines(fs, rec, tomb, schema, payload, has_schema)
            for f, line in zip(fs.streams, lines):
                self.append(f, rec.offset, line)
            if self.first_wall is None:
                self.first_wall = now
            self.count += 1
            self.current_ep, self.current_offset = ep, rec.offset
            self.buffer.popleft()
            if self.task.variant == "unstable-boundaries":
                self.task.scratch[("count", self.tp)] = self.count
            if self.count >= s.flush_size:
                self.commit(now, False)
        # R2.3: commit on time with no new data (only the scheduled rule can fire here)
        if self.count > 0 and self.next_rotation is not None and now >= self.next_rotation:
            self.commit(now, True)

    def key(self, ep: str, start: int) -> str:
        """R5.1: the value object's key."""
        t, p = self.tp
        if self.task.variant == "renumber-after-restart":
            # BUG(renumber-after-restart): offsets in names count from where this instance
            # started, so a restarted sink numbers its files from 0 again.
            start -= self.task.start_offsets.get(self.tp, 0)
        d, f, pad, topics_dir = self.s.dir_delim, self.s.file_delim, self.s.pad, self.s.topics_dir
        if self.task.variant == "ignore-topics-dir":
            topics_dir = "topics"  # BUG(ignore-topics-dir): the default directory, whatever topics.dir says
        if self.task.variant == "pad-capped":
            pad = min(pad, 10)  # BUG(pad-capped): widths above 10 are taken as 10
        prefix = f"{topics_dir}{d}" if topics_dir.strip() else ""
        return f"{prefix}{t}{d}{ep}{d}{t}{f}{p}{f}{start:0{pad}d}" + self.s.value_ext

    def open_set(self, ep: str, start: int) -> FileSet:
        """The objects of a new data file (nothing is sent to S3 until a part fills or it is
        committed). R11.2: `.keys`/`.headers` go before their own format's extension, in place
        of the value's; R11.5: no value object when the key contains the tombstone string."""
        s = self.s
        key = self.key(ep, start)
        fs = FileSet(ep, start, key, has_value=s.tombstone_ep not in key)
        stem = key[: -len(s.value_ext)] if s.value_ext and key.endswith(s.value_ext) else key
        json_ext = ".json" + (".gz" if s.gzip else "")
        if fs.has_value:
            fs.streams.append(OpenFile(ep, start, key))
        if s.keys:
            fs.streams.append(OpenFile(ep, start, f"{stem}.keys{json_ext}"))
        if s.headers:
            fs.streams.append(OpenFile(ep, start, f"{stem}.headers{json_ext}"))
        return fs

    def record_lines(self, fs: FileSet, rec: LogRecord, tomb: bool, schema: Any, payload: Any,
                     has_schema: bool) -> list[bytes]:
        """One record's bytes for each object of `fs`, in stream order. Every check runs before
        anything is appended, so the objects of a file stay aligned (R11.4)."""
        s, variant = self.s, self.task.variant
        decimals = "BASE64" if variant == "decimal-always-base64" else s.decimal_format  # BUG(decimal-always-base64)
        key = key_line(rec, s.key_conv, decimals) if s.keys else None  # R11.4: a null key
        if key is not None and variant == "keys-unquoted" and key.startswith(b'"'):
            key = json.loads(key).encode() + b"\n"  # BUG(keys-unquoted): a string key written as its bare text
        if s.headers and variant == "headers-first-only" and rec.headers:
            rec = dataclasses.replace(rec, headers=rec.headers[:1])  # BUG(headers-first-only): later headers dropped
        headers = headers_line(rec) if s.headers else None  # R11.4: no headers
        out: list[bytes] = []
        if fs.has_value:
            if s.value_format == "bytearray":
                out.append(bytes_value(schema, payload, has_schema, rec.offset) + s.bytearray_sep)  # R10.2
            else:
                if variant == "json-as-received" and payload is not None:
                    # BUG(json-as-received): the payload re-serialized as it arrived (document order,
                    # Python's number spelling) instead of written from the Connect data
                    out.append(json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str).encode()
                               + b"\n")
                else:
                    out.append(json_line(schema, payload, has_schema, decimals, rec.offset))  # R10.1
        elif not tomb:
            raise TaskFailed(f"offset {rec.offset}: Value writer not configured: the object key {fs.key!r} contains "
                             f"the tombstone.encoded.partition string {s.tombstone_ep!r}, so it gets no value "
                             "object (R11.5); the task dies")
        if key is not None:
            out.append(key)
        if headers is not None:
            out.append(headers)
        return out

    # -- the multipart stream of one file (R7.1) --
    def append(self, f: OpenFile, offset: int, line: bytes) -> None:
        f.records += 1
        if self.task.variant in ("partial-visible", "last-record-missing", "no-trailing-separator"):
            f.lines.append(line)  # those variants rebuild bodies from the lines
        if self.s.gzip:
            if f.gz is None:
                f.gz = zlib.compressobj(6 if self.s.gzip_level < 0 else self.s.gzip_level, zlib.DEFLATED, 31)
            f.buf += f.gz.compress(line)
        else:
            f.buf += line
        while len(f.buf) >= self.s.part_size:
            self.upload_part(f, bytes(f.buf[: self.s.part_size]))
            del f.buf[: self.s.part_size]

    def upload_part(self, f: OpenFile, body: bytes) -> None:
        inst, b = self.inst, self.s.bucket
        if f.upload_id is None:
            f.upload_id = inst.s3("create_multipart_upload", Bucket=b, Key=f.key)["UploadId"]
        n = len(f.parts) + 1
        try:
            etag = inst.s3("upload_part", Bucket=b, Key=f.key, UploadId=f.upload_id, PartNumber=n, Body=body)["ETag"]
        except (Killed, Fenced):
            raise
        except Exception:
            self.abort(f)  # R7.5: a failed part aborts its upload
            raise
        f.parts.append({"PartNumber": n, "ETag": etag})

    def abort_all(self) -> None:
        for fs in self.files.values():
            for f in fs.streams:
                self.abort(f)

    def abort(self, f: OpenFile) -> None:
        if f.upload_id is None:
            return
        if self.task.variant == "leak-multipart":
            return  # BUG(leak-multipart): an abandoned file's multipart upload stays open
        try:
            self.inst.s3("abort_multipart_upload", Bucket=self.s.bucket, Key=f.key, UploadId=f.upload_id)
        except (Killed, Fenced):
            raise
        except Exception:
            pass  # best effort
        f.upload_id = None

    def finish(self, f: OpenFile) -> None:
        """Upload the remainder as the last part and complete: the object becomes visible."""
        inst, s = self.inst, self.s
        variant = self.task.variant
        if variant == "last-record-missing" and f.records > 0 and f.ep == self.current_ep:
            # BUG(last-record-missing): the TP's latest file is flushed without its last record
            # (an off-by-one on the end of the buffer), while the offset still moves past it.
            body = b"".join(f.lines[:-1])
            if f.upload_id is not None:
                self.abort(f)
            f.upload_id, f.parts, f.gz = None, [], None
            f.buf = bytearray(self._gz(body) if s.gzip else body)
        if variant == "no-trailing-separator" and f.lines and f.records > 0:
            # BUG(no-trailing-separator): a separator between records, none after the last
            sep = s.bytearray_sep if s.value_format == "bytearray" and f.key.endswith(s.value_ext) else b"\n"
            body = b"".join(f.lines)
            body = body[: -len(sep)] if sep and body.endswith(sep) else body
            if f.upload_id is not None:
                self.abort(f)
            f.upload_id, f.parts, f.gz = None, [], None
            f.buf = bytearray(self._gz(body) if s.gzip else body)
        if variant == "partial-visible" and len(f.lines) > 1:
            # BUG(partial-visible): the first half goes up as a complete object under the final
            # key, and stays visible while the rest is written.
            half = b"".join(f.lines[: len(f.lines) // 2])
            inst.s3("put_object", Bucket=s.bucket, Key=f.key, Body=self._gz(half) if s.gzip else half)
            inst.journal_event("visible-partial", f.key, len(f.lines) // 2)
            time.sleep(inst.partial_visible_s)
        if f.gz is not None:
            f.buf += f.gz.flush()
            f.gz = None
        self.upload_part(f, bytes(f.buf))
        f.buf = bytearray()
        try:
            inst.s3("complete_multipart_upload", Bucket=s.bucket, Key=f.key, UploadId=f.upload_id,
                    MultipartUpload={"Parts": f.parts})
        except (Killed, Fenced):
            raise
        except Exception as e:
            if variant == "error-200-ignored" and "InternalError" in str(e):
                # BUG(error-200-ignored): an error inside Complete's 200 answer read as success
                f.upload_id = None
                inst.journal_event("complete", f.key, f.records)
                return
            self.abort(f)  # the Python sink aborts here too (Confluent leaks it, R7.6)
            raise
        f.upload_id = None
        inst.journal_event("complete", f.key, f.records)

    def _gz(self, data: bytes) -> bytes:
        c = zlib.compressobj(6 if self.s.gzip_level < 0 else self.s.gzip_level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()

    # -- R3.1 --
    def commit(self, now: int, timed: bool) -> None:
        upto = self.current_offset + 1
        if self.task.variant == "commit-before-upload":
            # BUG(commit-before-upload): the offset is committed before the files are in S3.
            self.inst.commit_offsets({self.tp: upto})
        for ep in list(self.files):
            for f in self.files[ep].streams:  # R11.1: value, then keys, then headers
                self.finish(f)
            del self.files[ep]
        self.offset_to_commit = upto
        self.count = 0
        self.base_ts = None
        self.schemas.clear()
        self.first_wall = None
        if self.task.variant == "unstable-boundaries":
            self.task.scratch[("count", self.tp)] = 0
        if timed and self.next_rotation is not None:
            self.next_rotation = next_boundary(now, self.s.schedule_ms, self.s.tz)

    def close(self) -> None:
        """R1.7/R1.8: abort what is open, commit nothing."""
        self.abort_all()
        self.files.clear()
        self.buffer.clear()


class SinkTask:
    """put/preCommit/open/close over one writer per assigned TP."""

    def __init__(self, instance: "SinkInstance", settings: SinkSettings, variant: str | None,
                 scratch: dict, start_offsets: dict[TP, int] | None = None):
        self.instance, self.settings, self.variant, self.scratch = instance, settings, variant, scratch
        self.writers: dict[TP, Writer] = {}
        self.start_offsets: dict[TP, int] = dict(start_offsets or {})
        self.rng = random.Random(0)

    def open(self, tps: list[TP], now: int, positions: dict[TP, int] | None = None) -> None:
        for tp in tps:
            self.writers[tp] = Writer(self, tp, now)  # R1.1: replaced, not closed
            if positions is not None and tp not in self.start_offsets:
                self.start_offsets[tp] = positions.get(tp, 0)

    def close(self) -> None:
        for w in self.writers.values():
            w.close()
        self.writers.clear()

    def pending(self) -> bool:
        return any(w.buffer or w.offset_to_commit is not None for w in self.writers.values())

    def put(self, records: list[LogRecord], now: int) -> dict[TP, int]:
        """One put(): returns {tp: offset to rewind the consumer to} after retriable errors."""
        s = self.settings
        # Connect converts a whole batch before put(): a record its converters refuse fails it
        nulls = []
        for r in records:
            convert(s.key_conv, r.key, r, "key")
            nulls.append(convert(s.value_conv, r.value, r, "value")[1] is None)
        for r, null in zip(records, nulls):
            if null:
                if self.settings.nulls == "fail":
                    raise TaskFailed(f"null value at {r.topic}-{r.partition}@{r.offset} "
                                     "with behavior.on.null.values=fail")
                if self.settings.nulls == "ignore":
                    continue  # dropped before the writer (R12.2)
                # write: buffered; the writer sends it to the tombstone ep (R12.3, R6.7)
            w = self.writers.get(r.tp)
            if w is None:
                raise TaskFailed(f"No writer found for {r.topic}-{r.partition}")
            w.buffer.append(r)
        rewinds: dict[TP, int] = {}
        order = sorted(self.writers)
        self.rng.shuffle(order)  # R1.4.3: writers run in a shuffled order
        for tp in order:
            w = self.writers[tp]
            try:
                w.write(now)
            except (Killed, Fenced, TaskFailed):
                raise
            except Exception as e:
                if not is_retriable(e):
                    raise TaskFailed(f"{type(e).__name__} writing {tp[0]}-{tp[1]}: {e}") from e
                self.instance.journal_event("retriable", f"{tp[0]}-{tp[1]}", str(e)[:200])
                if self.variant == "drop-after-retriable":
                    # BUG(drop-after-retriable): the buffered and open records are thrown away,
                    # and the offset moves on past them anyway.
                    last = max([w.current_offset, *(r.offset for r in w.buffer)])
                    w.files.clear()
                    w.buffer.clear()
                    w.count = 0
                    w.offset_to_commit = last + 1
                    continue
                # R1.5: rewind to the first uncommitted record, drop the writer, back off
                starts = [f.start for f in w.files.values()] + [r.offset for r in w.buffer]
                w.abort_all()
                fresh = Writer(self, tp, now)
                fresh.failure_time = now
                fresh.offset_to_commit = w.offset_to_commit
                self.writers[tp] = fresh
                if starts:
                    rewinds[tp] = min(starts)
        return rewinds

    def pre_commit(self) -> dict[TP, int]:
        out = {}
        for tp, w in self.writers.items():
            if w.offset_to_commit is not None:
                out[tp] = w.offset_to_commit
                w.offset_to_commit = None
        return out


# --- instances: the consumer side ---------------------------------------------------------------

class SinkInstance:
    """One member of the sink's consumer group, running a SinkTask on its own thread (or
    stepped by hand with `poll_once`)."""

    partial_visible_s = 0.5

    def __init__(self, s3: Any, settings: SinkSettings, *, variant: str | None = None,
                 clock: Clock = wall_clock, scratch: dict | None = None, journal: list | None = None,
                 name: str = "pysink", poll_interval_s: float = 0.05):
        self.s3_client, self.settings, self.variant, self.clock = s3, settings, variant, clock
        self.scratch = scratch if scratch is not None else {}
        self.journal = journal if journal is not None else []
        self.name = name
        self.poll_interval_s = poll_interval_s
        self.killed = threading.Event()
        self.stopping = threading.Event()  # a graceful stop: close (abort, commit nothing) and exit
        self.running = threading.Event()  # cleared while paused
        self.running.set()
        self.was_paused = False
        self.busy = False
        self.error: str | None = None
        self.exited: str | None = None
        self.positions: dict[TP, int] = {}
        self.task = SinkTask(self, settings, variant, self.scratch)
        self.thread: threading.Thread | None = None
        self.turns: Any = None  # a simulation's scheduler pacing the loop (start)
        self._jlock = threading.Lock()

    # -- journal (tests and reports read it) --
    def journal_event(self, what: str, *args: Any) -> None:
        with self._jlock:
            self.journal.append((wall_clock(), self.name, what, *args))

    # -- every S3 call: the kill switch and the pause gate around it --
    def _gate(self) -> None:
        if self.killed.is_set():
            raise Killed()
        if not self.running.is_set():
            self.was_paused = True
            while not self.running.wait(0.05):
                if self.killed.is_set():
                    raise Killed()
        if self.killed.is_set():
            raise Killed()

    def s3(self, op: str, **kw: Any) -> Any:
        self._gate()
        out = getattr(self.s3_client, op)(**kw)
        self._gate()  # a pause during the call freezes the instance right after it
        return out

    # -- faults --
    def kill(self) -> None:
        self.killed.set()
        self.running.set()

    def stop(self, timeout_s: float = 10) -> None:
        """Stop gracefully: finish the current poll, close every writer, commit nothing."""
        self.stopping.set()
        if self.thread is not None and self.thread.is_alive():
            self.thread.join(timeout_s)
            if self.thread.is_alive():
                self.kill()
        elif self.thread is None:
            self.task.close()

    def pause(self) -> None:
        self.running.clear()

    def resume(self) -> None:
        self.running.set()

    # -- to implement --
    def commit_offsets(self, offsets: dict[TP, int]) -> None:
        raise NotImplementedError

    def poll_once(self) -> None:
        raise NotImplementedError

    def start(self, turns: Any = None) -> "SinkInstance":
        """Run the poll loop on a thread of its own. `turns`, when given, paces it instead of the
        poll interval: `turns.wait()` before each poll (a simulation's scheduler hands out the
        turns), `turns.exit()` when the loop ends."""
        self.turns = turns
        self.thread = threading.Thread(target=self._loop, name=f"pysink-{self.name}", daemon=True)
        self.thread.start()
        return self

    def _loop(self) -> None:
        turns = self.turns
        try:
            while not self.killed.is_set():
                if turns is not None:
                    turns.wait()
                    if self.killed.is_set():
                        raise Killed()
                self._gate()
                if self.stopping.is_set():
                    self.task.close()
                    self.exited = "stopped"
                    return
                self.poll_once()
                if self.exited:
                    return
                if turns is None:
                    self.stopping.wait(self.poll_interval_s)
        except Killed:
            self.exited = "killed"
        except Fenced as e:
            self.exited = f"fenced: {e}"
            self._on_fenced()
        except Exception as e:  # the task dies
            self.error = f"{type(e).__name__}: {e}"
            self.journal_event("failed", self.error)
            try:
                self.task.close()
            except Exception:
                pass
        finally:
            self.busy = False
            self._finally()
            if turns is not None:
                turns.exit()

    def _on_fenced(self) -> None:
        """The group moved on. The correct sink closes (aborting its own uploads) and stops."""
        self.journal_event("fenced", self.exited)
        if self.variant == "zombie-overwrite":
            self._zombie_flush()
        try:
            self.task.close()
        except (Killed, Exception):
            pass

    def _zombie_flush(self) -> None:
        """BUG(zombie-overwrite): the evicted instance writes the record it had prefetched and
        flushes its open files on the way out, without checking it still owns the partition:
        an older, shorter file lands over the newer object of the same key."""
        try:
            now = self.clock()
            for tp, w in list(self.task.writers.items()):
                nxt = self.prefetched(tp, self.positions.get(tp, 0))
                if nxt is not None:
                    w.buffer.append(nxt)
                    w.write(now)
                if w.count > 0:
                    w.commit(now, False)
                    self.journal_event("zombie-flush", f"{tp[0]}-{tp[1]}", w.current_offset)
        except (Killed, Exception):
            pass

    def prefetched(self, tp: TP, offset: int) -> LogRecord | None:
        return None

    def _finally(self) -> None:
        pass

    def pending(self) -> bool:
        return self.busy or self.task.pending()


class InProcessSink(SinkInstance):
    """A member of `group` on an InProcessLog. Creating one takes every partition over (the
    older members are fenced)."""

    def __init__(self, log: InProcessLog, s3: Any, settings: SinkSettings, *, group: str = "connect-pysink",
                 max_batch: int = 500, **kw: Any):
        super().__init__(s3, settings, **kw)
        self.log, self.group, self.max_batch = log, group, max_batch
        self.generation = log.take_over(group)
        self.name = f"{kw.get('name', 'pysink')}-{self.generation}"
        committed = log.committed(group)
        tps = log.partitions()
        self.positions = {tp: committed.get(tp, 0) for tp in tps}
        self.task.open(tps, self.clock(), self.positions)
        self.journal_event("assigned", {f"{t}-{p}": o for (t, p), o in self.positions.items()})

    def fenced(self) -> bool:
        return self.log.owner(self.group) != self.generation

    def commit_offsets(self, offsets: dict[TP, int]) -> None:
        if self.killed.is_set():
            raise Killed()
        if not self.log.commit(self.group, self.generation, offsets):
            raise Fenced(f"generation {self.generation} < {self.log.owner(self.group)}")
        self.journal_event("commit", {f"{t}-{p}": o for (t, p), o in offsets.items()})

    def poll_once(self) -> None:
        """One poll: read a batch from every partition (maybe empty), put() it at clock(),
        rewind after retriable errors, then commit what pre_commit hands back."""
        if self.was_paused:
            self.was_paused = False
            if self.fenced():
                raise Fenced("woke up after the group moved on")
        self.busy = True
        try:
            batch: list[LogRecord] = []
            for tp in self.log.partitions():
                if tp not in self.positions:  # a partition created later: assign it
                    self.positions[tp] = self.log.committed(self.group).get(tp, 0)
                    self.task.open([tp], self.clock(), self.positions)
                batch += self.log.read(tp, self.positions[tp], self.max_batch)
            for r in batch:
                self.positions[r.tp] = r.offset + 1
            rewinds = self.task.put(batch, self.clock())
            for tp, off in rewinds.items():
                self.positions[tp] = off
            offsets = self.task.pre_commit()
            if offsets:
                self.commit_offsets(offsets)
        finally:
            self.busy = False

    def prefetched(self, tp: TP, offset: int) -> LogRecord | None:
        got = self.log.read(tp, offset, 1)
        return got[0] if got else None

    def at_end(self) -> bool:
        return all(self.positions.get(tp, 0) >= end for tp, end in self.log.ends().items())


# Backwards-compatible name: the in-process sink.
PySink = InProcessSink
