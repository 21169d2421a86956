"""The faulty variants of the Python sink (adapters.pysink.VARIANTS): each a bug real sinks have
had, planted by overriding one hook of the correct `Writer` or `SinkTask`. The kill matrix
(conformance/calibration/kill_matrix.py) proves the suite catches every one of them.

`REGISTRY` maps a variant's name to the SinkTask class an instance runs for it; `task_class`
looks one up. A variant of the writer alone runs in a SinkTask whose `writer_class` it is.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import time
from dataclasses import dataclass, field
from typing import Any

from adapters.pysink.encoding import value_key
from adapters.pysink.log import TP, LogRecord
from adapters.pysink.settings import SinkSettings
from adapters.pysink.sink import SinkInstance, SinkTask
from adapters.pysink.timestamps import _local_to_utc, parse_iso_ms, time_bucket, utc_offset_ms
from adapters.pysink.objectformats import ObjectFormat, View
from adapters.pysink.jsonwrite import SizedMap, SizedPairs, capacity_of
from adapters.pysink.projection import UNSET, Compatibility, filtered, parameters, schema_equals
from adapters.pysink.writer import Finished, OpenFile, Writer
from adapters.pysink.targets.answer_variants import ANSWER_VARIANTS
from adapters.pysink.targets.exercised import (Config, all_of, always, clock_changes, dotted_topics, enum_projection,
                                               field_partitioner, headers_stored, json_keys_stored, json_text,
                                               json_values, line_formats, local_bucket_edges, local_zone,
                                               logical_types, numeric_decimals, overwrites_allowed,
                                               partition_change_rotation, parts_outgrown, projection, record_field,
                                               record_time_rotation, record_times, scheduled_rotation,
                                               several_open_files, several_records_a_file, tombstone_partition_change,
                                               topics_dir_set, unsorted_fields, value_schemas, wide_offsets)


# --- naming and partitioning ---------------------------------------------------------------------

class _Renumbering(Writer):
    """Names a file by its start offset less the offset its partition started from in this instance."""

    def object_key(self, ep: str, start: int) -> str:
        return super().object_key(ep, start - self.task.start_offsets.get(self.tp, 0))


class RenumberAfterRestart(SinkTask):
    """Numbers start offsets in object names from 0 again after a restart (R5.1)."""

    unexercised = staticmethod(always)
    writer_class = _Renumbering

    def __init__(self, instance: SinkInstance, settings: SinkSettings, scratch: dict):
        super().__init__(instance, settings, scratch)
        self.start_offsets: dict[TP, int] = {}

    def open(self, tps: list[TP], now: int) -> None:
        super().open(tps, now)
        for tp in tps:
            self.start_offsets.setdefault(tp, self.instance.positions.get(tp, 0))


class IgnoreTopicsDir(Writer):
    """Names objects under topics/ whatever topics.dir says (R5.1)."""

    unexercised = staticmethod(topics_dir_set)

    def object_key(self, ep: str, start: int) -> str:
        return value_key(dataclasses.replace(self.s, topics_dir="topics"), self.tp, ep, start)


class PadCapped(Writer):
    """Takes a filename.offset.zero.pad.width above 10 as 10 (R5.1)."""

    unexercised = staticmethod(wide_offsets)

    def object_key(self, ep: str, start: int) -> str:
        return value_key(dataclasses.replace(self.s, pad=min(self.s.pad, 10)), self.tp, ep, start)


class FieldSlashEscaped(Writer):
    """Escapes a '/' inside a FieldPartitioner value as %2F (the connector writes it as it is, R6.2)."""

    unexercised = staticmethod(field_partitioner)

    def field_partition(self, schema: Any, payload: Any, offset: int) -> str:
        if isinstance(payload, dict):
            payload = {k: v.replace("/", "%2F") if isinstance(v, str) else v for k, v in payload.items()}
        return super().field_partition(schema, payload, offset)


class TopicDotsReplaced(Writer):
    """Writes a topic's dots as underscores in object keys and file names (as Kafka's metrics
    names do), where the connector names objects by the topic as it is (R5.1)."""

    unexercised = staticmethod(dotted_topics)

    def object_key(self, ep: str, start: int) -> str:
        t, p = self.tp
        return value_key(self.s, (t.replace(".", "_"), p), ep, start)


class PartitionFieldsSorted(Writer):
    """Encodes FieldPartitioner's fields in sorted order, where the connector keeps the order
    partition.field.name lists them in (R6.2)."""

    unexercised = staticmethod(unsorted_fields)

    def field_partition(self, schema: Any, payload: Any, offset: int) -> str:
        from adapters.pysink.encoding import field_ep

        return field_ep(schema, payload, tuple(sorted(self.s.field_names)), offset, self.s.dir_delim)


class PartitionZeroPadded(Writer):
    """Zero-pads a partition number to the digits of the topic's highest assigned partition, so
    keys sort by partition (`partition=03`, `<topic>+03+…` on a 12-partition topic), where the
    connector writes the number as it is (R5.1, R6.1)."""

    unexercised = staticmethod(always)

    def padded(self) -> str:
        t, p = self.tp
        highest = max([q for (u, q) in getattr(self.inst, "positions", {}) if u == t] + [p])
        return f"{p:0{len(str(highest))}d}"

    def encode(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool, ts: int | None) -> str:
        ep = super().encode(rec, schema, payload, has_schema, ts)
        return f"partition={self.padded()}" if self.s.partitioner == "default" else ep

    def object_key(self, ep: str, start: int) -> str:
        return value_key(self.s, (self.tp[0], self.padded()), ep, start)  # type: ignore[arg-type]


class UtcBuckets(Writer):
    """Floors time buckets on UTC time instead of the zone's local time (R6.3)."""

    unexercised = staticmethod(local_bucket_edges)

    def time_partition(self, ts: int) -> str:
        s = self.s
        assert s.path is not None
        return s.path(dt.datetime.fromtimestamp(time_bucket(ts, s.duration_ms, dt.timezone.utc) / 1000, s.tz))


class DstFixedOffset(Writer):
    """Keeps the zone's offset at the writer's first record for all its records (R6.3 across a DST change)."""

    unexercised = staticmethod(clock_changes)
    fixed_tz: dt.tzinfo | None = None

    def time_partition(self, ts: int) -> str:
        s = self.s
        assert s.path is not None
        self.fixed_tz = self.fixed_tz or dt.timezone(dt.timedelta(milliseconds=utc_offset_ms(ts, s.tz)))
        return s.path(dt.datetime.fromtimestamp(time_bucket(ts, s.duration_ms, self.fixed_tz) / 1000, self.fixed_tz))


class FloorBuckets(Writer):
    """Floors time buckets with floor division, so an instant before 1970 lands one bucket
    earlier than the connector's Java division, which truncates toward zero (R6.3)."""

    unexercised = staticmethod(record_times)

    def time_partition(self, ts: int) -> str:
        s = self.s
        assert s.path is not None
        local = ts + utc_offset_ms(ts, s.tz)
        start = _local_to_utc(local // s.duration_ms * s.duration_ms, s.tz)
        return s.path(dt.datetime.fromtimestamp(start / 1000, s.tz))


class _ReadsTimeField(Writer):
    """A writer that reads RecordField's time its own way: `reread` gets the correct time and the
    field's raw value (None for a tombstone or another extractor) and returns its own."""

    def extract(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool, tomb: bool, now: int) -> int | None:
        ts = super().extract(rec, schema, payload, has_schema, tomb, now)
        if tomb or self.s.extractor != "RecordField" or ts is None:
            return ts
        raw: Any = payload
        for step in self.s.ts_field.split("."):
            raw = raw.get(step) if isinstance(raw, dict) else None
        return self.reread(ts, raw)

    def reread(self, ts: int, raw: Any) -> int:
        return ts


class NaiveIsoInZone(_ReadsTimeField):
    """Reads a RecordField ISO string without an offset in the connector's `timezone`, where the
    connector reads it in the JVM's default zone (R6.5)."""

    unexercised = staticmethod(all_of(record_field, local_zone))

    def reread(self, ts: int, raw: Any) -> int:
        if isinstance(raw, str) and not raw.lstrip("-").isdigit() and _offsetless(raw):
            return _local_to_utc(ts, self.s.tz)
        return ts


def _offsetless(text: str) -> bool:
    """An ISO date-time that names no offset (a date alone names none either)."""
    if "T" not in text:
        return True
    try:
        parse_iso_ms(text + "Z")
        return True
    except ValueError:
        return False


# --- rotation ------------------------------------------------------------------------------------

class RotateOnWallclock(Writer):
    """Measures rotate.interval.ms on the wall clock since the file's first record, not on record time (R3.2)."""

    unexercised = staticmethod(record_time_rotation)
    first_wall: int | None = None

    def interval_elapsed(self, ts: int | None, now: int) -> bool:
        return self.first_wall is not None and now - self.first_wall >= self.s.rotate_interval_ms

    def record_written(self, rec: LogRecord, now: int) -> None:
        if self.first_wall is None:
            self.first_wall = now

    def commit(self, now: int, timed: bool) -> None:
        super().commit(now, timed)
        self.first_wall = None


class RotateIntervalExclusive(Writer):
    """Rotates when rotate.interval.ms is exceeded, not when it is reached (R3.2 is inclusive)."""

    unexercised = staticmethod(record_time_rotation)

    def interval_elapsed(self, ts: int | None, now: int) -> bool:
        return ts is not None and self.base_ts is not None and ts - self.base_ts > self.s.rotate_interval_ms


class NoPartitionChangeRotation(Writer):
    """Keeps writing the same file when the encoded partition changes (R3.3)."""

    unexercised = staticmethod(partition_change_rotation)

    def partition_changed(self, ep: str | None) -> bool:
        return False


class ScheduleFromFileOpen(Writer):
    """Counts rotate.schedule.interval.ms from when a file opened, where the connector aligns the
    boundaries to local midnight of `timezone` plus k x interval (R3.4)."""

    unexercised = staticmethod(scheduled_rotation)

    def record_written(self, rec: LogRecord, now: int) -> None:
        if self.count == 1 and self.s.schedule_ms > 0:
            self.next_rotation = now + self.s.schedule_ms


class BaseTimeKeptOnSize(Writer):
    """Keeps the rotate.interval.ms base record time across a flush.size rotation, where every
    rotation clears it (R3.1 step 4, R3.2)."""

    unexercised = staticmethod(all_of(record_time_rotation, several_records_a_file))

    def commit(self, now: int, timed: bool) -> None:
        base, by_size = self.base_ts, self.count >= self.s.flush_size
        super().commit(now, timed)
        if by_size:
            self.base_ts = base


class EpochSecondsGuess(_ReadsTimeField):
    """Takes a RecordField number below 10^11 for epoch seconds (a common guess), where the
    connector takes every INT32/INT64 as epoch milliseconds: seconds land in January 1970 (R6.5)."""

    unexercised = staticmethod(record_field)

    def reread(self, ts: int, raw: Any) -> int:
        return ts * 1000 if isinstance(raw, int) and not isinstance(raw, bool) and abs(ts) < 10 ** 11 else ts


class NoIdleScheduleReset(Writer):
    """Leaves a scheduled boundary that passed while no record was written where it was, so the
    first record after an idle spell is flushed alone (R3.5, the fix of issue #359)."""

    unexercised = staticmethod(scheduled_rotation)
    stale = False

    def write(self, now: int) -> None:
        self.stale = self.next_rotation is not None and self.count == 0 and now >= self.next_rotation
        super().write(now)

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int) -> tuple[bool, bool]:
        if self.stale and self.count > 0:
            self.stale = False
            return True, True
        return super().rotate_on_time(ep, ts, now)


class IntervalAbsDifference(Writer):
    """Measures rotate.interval.ms as the distance from the base record time either way, so a
    late record rotates too (R3.2: an older record gives a negative difference and never does)."""

    unexercised = staticmethod(record_time_rotation)

    def interval_elapsed(self, ts: int | None, now: int) -> bool:
        return ts is not None and self.base_ts is not None and abs(ts - self.base_ts) >= self.s.rotate_interval_ms


class PartBoundedFiles(Writer):
    """Starts a new file before a record the part being filled has no room left for, so no
    file spans more than a part's worth and a record larger than a part lands in a file of its
    own: one flush.size window split across files, where the connector uploads parts within
    one file (R7.1: parts are not files)."""

    unexercised = staticmethod(parts_outgrown)

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int) -> tuple[bool, bool]:
        rotate, timed = super().rotate_on_time(ep, ts, now)
        fs = self.files.get(ep or "")
        if rotate or fs is None or not fs.streams or not fs.streams[0].records:
            return rotate, timed
        return len(fs.streams[0].buf) + len(self.buffer[0].value or b"") > self.s.part_size, False


class FlushSizePerFile(Writer):
    """Counts flush.size per open file, not per topic-partition (R2.4: recordCount sums every
    file of the TP)."""

    unexercised = staticmethod(several_open_files)

    def record_written(self, rec: LogRecord, now: int) -> None:
        fs = self.files.get(self.current_ep or "")
        if fs is not None and fs.streams:
            self.count = fs.streams[0].records


class TombstoneChangeRotates(Writer):
    """Rotates on a change to or from the tombstone partition like any partition change (R3.3:
    from 12.1.0 such a change does not rotate)."""

    unexercised = staticmethod(tombstone_partition_change)

    def tombstone_change(self, ep: str) -> bool:
        return False


class UnstableBoundaries(Writer):
    """Keeps its flush counter in local state across a restart, so file boundaries move on replay (R1.2)."""

    # required where files hold several records. Under flush.size=1 a carried count moves no
    # boundary; it shows only where a commit failed before a crash (a lost Complete answer) and a
    # scheduled boundary passes before the next record: the fresh writer then commits its empty
    # file, the offset going back (generated-039 under default-topics-orders; no run under
    # avro-registry-scheduled, of the same flush.size and schedule, has that)
    unexercised = staticmethod(several_records_a_file)

    def __init__(self, task: SinkTask, tp: TP, now: int):
        super().__init__(task, tp, now)
        self.count = task.scratch.get(("count", tp), 0)

    def record_written(self, rec: LogRecord, now: int) -> None:
        self.task.scratch[("count", self.tp)] = self.count

    def commit(self, now: int, timed: bool) -> None:
        super().commit(now, timed)
        self.task.scratch[("count", self.tp)] = 0


# --- what a record writes ------------------------------------------------------------------------

class HeadersFirstOnly(Writer):
    """Writes only the first header of each record (R11.3), in every headers format: the JSON
    line and the Avro or Parquet row alike."""

    unexercised = staticmethod(headers_stored)

    def headers_bytes(self, rec: LogRecord) -> bytes:
        return super().headers_bytes(_first_header_only(rec))

    def headers_view(self, rec: LogRecord) -> View:
        return super().headers_view(_first_header_only(rec))


def _first_header_only(rec: LogRecord) -> LogRecord:
    return dataclasses.replace(rec, headers=rec.headers[:1]) if rec.headers else rec


class KeysUnquoted(Writer):
    """Writes a string key as its bare text, not as JSON (R11.3)."""

    unexercised = staticmethod(json_keys_stored)

    def key_bytes(self, rec: LogRecord) -> bytes:
        line = super().key_bytes(rec)
        return json.loads(line).encode() + b"\n" if line.startswith(b'"') else line


class JsonAsReceived(Writer):
    """Re-serializes a JSON value as it arrived (document order, Python's numbers), not from the Connect data (R10.1)."""

    unexercised = staticmethod(json_values)

    def value_bytes(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool) -> bytes:
        if self.s.value_format == "bytearray" or payload is None:
            return super().value_bytes(rec, schema, payload, has_schema)
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=str).encode() + b"\n"


def _html_escaped(line: bytes) -> bytes:
    """A JSON line with < > & ' = written as \\u escapes (Gson's HTML-safe default): in JSON they
    appear only inside strings, so the line still parses, to the same text."""
    for c in "<>&'=":
        line = line.replace(c.encode(), f"\\u{ord(c):04x}".encode())
    return line


class HtmlEscapingJson(Writer):
    """Writes JSON values, keys and headers with < > & ' = escaped as \\u003c and so on (an
    HTML-safe JSON writer), where the connector's Jackson writes them as they are (R10.1, R11.3)."""

    unexercised = staticmethod(json_text)

    def value_bytes(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool) -> bytes:
        line = super().value_bytes(rec, schema, payload, has_schema)
        return line if self.s.value_format == "bytearray" else _html_escaped(line)

    def key_bytes(self, rec: LogRecord) -> bytes:
        return _html_escaped(super().key_bytes(rec))

    def headers_bytes(self, rec: LogRecord) -> bytes:
        return _html_escaped(super().headers_bytes(rec))


class DecimalAlwaysBase64(Writer):
    """Writes Decimals as base64 whatever json.decimal.format says (R10.1)."""

    unexercised = staticmethod(numeric_decimals)

    def decimal_format(self) -> str:
        return "BASE64"


class LogicalTypesPlain(Writer):
    """Writes Avro and Parquet objects with Timestamp, Date and Time as plain longs and ints, without
    their logical types: the numbers read back the same, as numbers, not times (R10.3, R10.4)."""

    unexercised = staticmethod(logical_types)

    def object_format(self, view: str) -> ObjectFormat:
        fmt = super().object_format(view)
        if fmt.kind in ("avro", "parquet"):
            prepare = fmt.prepare

            def plain_prepare(item: Any) -> Any:
                schema, avro, datum = prepare(item)
                return schema, _without_logical_types(avro), datum

            fmt.prepare = plain_prepare  # type: ignore[method-assign]
        return fmt


def _without_logical_types(avro: Any) -> Any:
    if isinstance(avro, list):
        return [_without_logical_types(t) for t in avro]
    if not isinstance(avro, dict):
        return avro
    times = avro.get("logicalType") in ("timestamp-millis", "date", "time-millis")
    out = {k: _without_logical_types(v) for k, v in avro.items() if not (times and k == "logicalType")}
    if "fields" in out:
        out["fields"] = [{**f, "type": _without_logical_types(f["type"])} for f in avro["fields"]]
    return out


# --- schema evolution (issue 33) -----------------------------------------------------------------

class NoRotationOnIncompatible(Writer):
    """Never rotates on an incompatible value schema: the record goes into the open file as it
    came, under NONE and the other modes alike (R14.2-R14.4); a missing version still kills (R14.5)."""

    unexercised = staticmethod(value_schemas)

    def schema_incompatible(self, rec: LogRecord, record_schema: Any, file_schema: Any) -> bool:
        super().schema_incompatible(rec, record_schema, file_schema)
        return False

    def project(self, rec: LogRecord, payload: Any, record_schema: Any, file_schema: Any) -> tuple[Any, Any]:
        if super().schema_incompatible(rec, record_schema, file_schema):
            return record_schema, payload
        return super().project(rec, payload, record_schema, file_schema)


class _DefaultsDropped(Compatibility):
    """Projects as SchemaProjector does, then leaves a top-level field the record lacks null
    where it has a default: the schema written with loses that default (a JsonFormat line says
    null; an Avro or Parquet file, whose schema is its first record's, refuses the record)."""

    def project(self, value: Any, record: Any, file: Any) -> tuple[Any, Any]:
        schema, out = super().project(value, record, file)
        if schema is record or not isinstance(out, dict) or (file or {}).get("type") != "struct":
            return schema, out
        have = {f.get("field") for f in record.get("fields") or []}
        dropped = {f.get("field") for f in file.get("fields") or []
                   if f.get("field") not in have and f.get("default") is not None}
        if not dropped:
            return schema, out
        fields = [{**{k: v for k, v in f.items() if k != "default"}, "optional": True} if f.get("field") in dropped
                  else f for f in file.get("fields") or []]
        return {**file, "fields": fields}, {k: v for k, v in out.items() if k not in dropped}


class ProjectionDropsDefault(Writer):
    """Leaves a file field the record lacks null even where it has a default (R14.3:
    SchemaProjector.projectStruct puts the default)."""

    unexercised = staticmethod(projection)
    compatibility_class = _DefaultsDropped


class _TopLevelOnly(Compatibility):
    """The check before #463 (storage-common to 12.0.9): types, names and parameters of the top
    level only, then the versions; and a projection that maps the top-level fields only, a
    nested value written as the record has it, in the record's schema."""

    def structure(self, record: dict, file: dict) -> str | None:
        return ("DIFFERENT_TYPE" if self.types_differ(record, file) else
                "DIFFERENT_NAME" if self.names_differ(record, file) else
                "DIFFERENT_PARAMS" if self.params_differ(record, file) else None)

    def project(self, value: Any, record: Any, file: Any) -> tuple[Any, Any]:
        if self.mode == "NONE" or schema_equals(record, file) or (record or {}).get("type") != "struct":
            return super().project(value, record, file)
        own = {f.get("field"): f for f in record.get("fields") or []}
        given = value if isinstance(value, dict) else {}
        fields, out = [], {}
        for f in file.get("fields") or []:
            name = f.get("field")
            fields.append(own.get(name, f))
            filled = given.get(name) if name in own else self.missing_field(f, record)
            if filled is not UNSET:
                out[name] = filled
        return {**file, "fields": fields}, out


class NestedIncompatibleCompatible(Writer):
    """Checks schema compatibility on the top level only, taking a nested change (a nested
    field's type) for compatible, and writes nested values unprojected into the open file (R14:
    the check recurses into struct fields, array elements and map entries since #463)."""

    unexercised = staticmethod(projection)
    compatibility_class = _TopLevelOnly


class _EnumSymbolsExact(Compatibility):
    """An enum's parameters compared for equality, like any other schema's."""

    def params_differ(self, record: dict, file: dict) -> bool:
        return filtered(parameters(record)) != filtered(parameters(file))


class EnumChangeIncompatible(Writer):
    """Rotates on any change of an enum's symbols, where the connector projects a record whose
    symbols are a subset of the file's (R14: checkSchemaParameters' subset rule for enums)."""

    unexercised = staticmethod(enum_projection)
    compatibility_class = _EnumSymbolsExact


class _MapsInSourceOrder(Compatibility):
    """Projects a map entry by entry as SchemaProjector does, but keeps the table of the map it
    came from (AvroData's, sized to its entries) instead of filling a new HashMap."""

    def project_map(self, source: dict, value: Any, target: dict) -> Any:
        out = super().project_map(source, value, target)
        capacity = capacity_of(value)
        if capacity is None:
            return out
        sized: Any = SizedMap(out) if isinstance(out, dict) else SizedPairs(out)
        sized.capacity = capacity
        return sized


class ProjectedMapKeepsOrder(Writer):
    """Writes a projected map's entries in the order the converter's map held them, where
    projectMap's `new HashMap<>()` (16 buckets) reorders them (R14: SchemaProjector.projectMap)."""

    unexercised = staticmethod(projection)
    compatibility_class = _MapsInSourceOrder


# --- bodies rebuilt from their lines -------------------------------------------------------------

@dataclass
class LinedFile(OpenFile):
    """An object under construction that also keeps what each record appended to it (a line,
    or an Avro or Parquet record), so its body can be rebuilt from some of them."""

    lines: list[Any] = field(default_factory=list)


class _KeepsLines(Writer):
    """A writer whose files keep their records, for the variants that rebuild a body from them."""

    object_type = LinedFile

    def append(self, f: OpenFile, offset: int, item: Any) -> None:
        assert isinstance(f, LinedFile)
        f.lines.append(item)
        super().append(f, offset, item)

    def rewrite(self, f: OpenFile, body: bytes) -> None:
        """Throws away what the file streamed so far: `body` (its whole content) is all it holds."""
        if f.upload_id is not None:
            self.abort(f)
        f.upload_id, f.parts = None, []
        f.buf = bytearray(body)
        f.fmt = Finished()

    def stored(self, f: OpenFile, items: list[Any]) -> bytes:
        """An object of `f`'s format holding `items` (gzipped with s3.compression.type=gzip)."""
        return f.fmt.rebuild(items)


class LastRecordMissing(_KeepsLines):
    """Completes the latest file of a partition without its last record, the offset moving past it (R4.1, P-NOLOSS)."""

    unexercised = staticmethod(always)

    def finish(self, f: OpenFile) -> None:
        assert isinstance(f, LinedFile)
        if f.records > 0 and f.ep == self.current_ep:
            self.rewrite(f, self.stored(f, f.lines[:-1]))
        super().finish(f)


class NoTrailingSeparator(_KeepsLines):
    """Writes a separator between records but none after the last one (R10.1, R10.2)."""

    unexercised = staticmethod(line_formats)

    def finish(self, f: OpenFile) -> None:
        assert isinstance(f, LinedFile)
        s = self.s
        if f.lines and f.records > 0 and f.fmt.kind == "line":  # JSON and ByteArray lines only
            sep = s.bytearray_sep if s.value_format == "bytearray" and f.key.endswith(s.value_ext) else b"\n"
            body = b"".join(f.lines)
            self.rewrite(f, self.stored(f, [body[: -len(sep)] if sep and body.endswith(sep) else body]))
        super().finish(f)


class PartialVisible(_KeepsLines):
    """Makes an object visible (its first half) before all its records are in it (R7.1)."""

    unexercised = staticmethod(several_records_a_file)
    visible_for_s = 0.5  # how long the first half stays visible before the whole object replaces it

    def finish(self, f: OpenFile) -> None:
        assert isinstance(f, LinedFile)
        if len(f.lines) > 1:
            inst, half = self.inst, f.lines[: len(f.lines) // 2]
            inst.s3("put_object", Bucket=self.s.bucket, Key=f.key, Body=self.stored(f, half))
            inst.journal_event("visible-partial", f.key, len(half))
            time.sleep(self.visible_for_s)
        super().finish(f)


# --- the S3 upload path and the offsets ----------------------------------------------------------

class CommitBeforeUpload(Writer):
    """Commits the offset before the files of the commit set are uploaded (R4.1, P-COMMIT-SAFETY)."""

    unexercised = staticmethod(always)

    def commit(self, now: int, timed: bool) -> None:
        self.inst.commit_offsets({self.tp: self.current_offset + 1})
        super().commit(now, timed)


class LeakMultipart(Writer):
    """Leaves a multipart upload open when it gives a file up, on an error or a close (R7.5, R1.8)."""

    unexercised = staticmethod(always)

    def abort(self, f: OpenFile) -> None:
        pass


class Error200Ignored(Writer):
    """Takes an error inside CompleteMultipartUpload's 200 answer as success (#855)."""

    unexercised = staticmethod(always)

    def completion_failed(self, error: Exception) -> bool:
        return "InternalError" not in str(error)


class DropAfterRetriable(SinkTask):
    """Drops the buffered and open records after a retriable S3 error and moves the offset on past them (R1.5)."""

    unexercised = staticmethod(always)

    def recover(self, tp: TP, w: Writer, now: int) -> int | None:
        last = max([w.current_offset, *(r.offset for r in w.buffer)])
        w.files.clear()
        w.buffer.clear()
        w.count = 0
        w.offset_to_commit = last + 1
        return None


class ZombieOverwrite(SinkTask):
    """An evicted instance, resumed, flushes a stale file over the newer object of the same key (R1.8, P-NOLOSS)."""

    unexercised = staticmethod(overwrites_allowed)

    def evicted(self) -> None:
        # it writes the record it had prefetched and completes its open files on the way out,
        # without checking it still owns the partition
        inst = self.instance
        try:
            now = inst.clock()
            for tp, w in list(self.writers.items()):
                nxt = inst.prefetched(tp, inst.positions.get(tp, 0))
                if nxt is not None:
                    w.buffer.append(nxt)
                    w.write(now)
                if w.count > 0:
                    w.commit(now, False)
                    inst.journal_event("zombie-flush", f"{tp[0]}-{tp[1]}", w.current_offset)
        except Exception:  # Killed and Fenced too: it is on its way out
            pass
        super().evicted()


# --- the registry --------------------------------------------------------------------------------

def _writing_with(writer: type[Writer]) -> type[SinkTask]:
    """The correct SinkTask, running the faulty `writer`."""
    return type(f"{writer.__name__}Task", (SinkTask,), {"writer_class": writer, "__doc__": writer.__doc__})


REGISTRY: dict[str, type[SinkTask]] = {
    "commit-before-upload": _writing_with(CommitBeforeUpload),
    "rotate-on-wallclock": _writing_with(RotateOnWallclock),
    "renumber-after-restart": RenumberAfterRestart,
    "no-partition-change-rotation": _writing_with(NoPartitionChangeRotation),
    "partial-visible": _writing_with(PartialVisible),
    "drop-after-retriable": DropAfterRetriable,
    "unstable-boundaries": _writing_with(UnstableBoundaries),
    "leak-multipart": _writing_with(LeakMultipart),
    "zombie-overwrite": ZombieOverwrite,
    "last-record-missing": _writing_with(LastRecordMissing),
    "no-trailing-separator": _writing_with(NoTrailingSeparator),
    "ignore-topics-dir": _writing_with(IgnoreTopicsDir),
    "pad-capped": _writing_with(PadCapped),
    "utc-buckets": _writing_with(UtcBuckets),
    "dst-fixed-offset": _writing_with(DstFixedOffset),
    "rotate-interval-exclusive": _writing_with(RotateIntervalExclusive),
    "headers-first-only": _writing_with(HeadersFirstOnly),
    "keys-unquoted": _writing_with(KeysUnquoted),
    "json-as-received": _writing_with(JsonAsReceived),
    "decimal-always-base64": _writing_with(DecimalAlwaysBase64),
    "error-200-ignored": _writing_with(Error200Ignored),
    "field-slash-escaped": _writing_with(FieldSlashEscaped),
    "floor-buckets": _writing_with(FloorBuckets),
    "naive-iso-in-zone": _writing_with(NaiveIsoInZone),
    "schedule-from-file-open": _writing_with(ScheduleFromFileOpen),
    "base-time-kept-on-size": _writing_with(BaseTimeKeptOnSize),
    "no-idle-schedule-reset": _writing_with(NoIdleScheduleReset),
    "interval-abs-difference": _writing_with(IntervalAbsDifference),
    "flush-size-per-file": _writing_with(FlushSizePerFile),
    "tombstone-change-rotates": _writing_with(TombstoneChangeRotates),
    "epoch-seconds-guess": _writing_with(EpochSecondsGuess),
    "logical-types-plain": _writing_with(LogicalTypesPlain),
    "no-rotation-on-incompatible": _writing_with(NoRotationOnIncompatible),
    "projection-drops-default": _writing_with(ProjectionDropsDefault),
    "nested-incompatible-compatible": _writing_with(NestedIncompatibleCompatible),
    "enum-change-incompatible": _writing_with(EnumChangeIncompatible),
    "projected-map-keeps-order": _writing_with(ProjectedMapKeepsOrder),
    "topic-dots-replaced": _writing_with(TopicDotsReplaced),
    "partition-fields-sorted": _writing_with(PartitionFieldsSorted),
    "html-escaping-json": _writing_with(HtmlEscapingJson),
    "partition-zero-padded": _writing_with(PartitionZeroPadded),
    "part-bounded-files": _writing_with(PartBoundedFiles),
    **ANSWER_VARIANTS,  # S3's error answers and connection faults (issue 34)
}


def task_class(variant: str | None) -> type[SinkTask]:
    """The SinkTask class that runs `variant` (None or "correct": the correct sink)."""
    if variant in (None, "correct"):
        return SinkTask
    if variant not in REGISTRY:
        raise KeyError(f"pysink variant {variant!r} has no class in adapters.pysink.targets.variants.REGISTRY "
                       f"(known: {', '.join(REGISTRY)})")
    return REGISTRY[variant]


def unexercised(variant: str, config: Config) -> str | None:
    """Why `config` never exercises the rule `variant` breaks, in one line (the `unexercised`
    rule its class states beside its hook), or None where it does."""
    cls = task_class(variant)
    rule = getattr(cls, "unexercised", None) or getattr(getattr(cls, "writer_class", None), "unexercised", None)
    if rule is None:
        raise KeyError(f"pysink variant {variant!r} states no `unexercised` rule (adapters.pysink.targets.exercised)")
    return rule(config)
