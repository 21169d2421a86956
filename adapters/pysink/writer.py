"""One topic-partition's writer: R2.2's loop over its records, and the multipart upload of each
object it writes (R7.1).

The faulty variants (adapters/pysink/targets/variants.py) are subclasses of `Writer`: the methods they
override each carry one rule of the spec, and their bodies here are the correct behaviour.
"""
from __future__ import annotations

import datetime as dt
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol

from adapters.pysink.avrowrite import AvroWriteError
from adapters.pysink.encoding import (bytes_value, convert, field_ep, header_strings, headers_line, json_line, key_line,
                                      value_key)
from adapters.pysink.errors import Fenced, FileExists, Killed, Retriable, TaskFailed, precondition_failed
from adapters.pysink.log import TP, LogRecord
from adapters.pysink.objectformats import Avro, Lines, ObjectFormat, Parquet, View, headers_view
from adapters.pysink.projection import Compatibility, ProjectionError
from adapters.pysink.settings import SinkSettings
from adapters.pysink.timestamps import next_boundary, record_field_ts, time_bucket


class WriterTask(Protocol):
    """The SinkTask a writer serves (adapters/pysink/sink.py), as the writer sees it: the
    sink's settings and the SinkInstance it runs in (its clock and S3 client). A protocol, not an
    import: the task module imports this one."""

    settings: SinkSettings
    instance: Any


class Finished(ObjectFormat):
    """The format of an object whose whole body is in its buffer already (a variant rewrote it)."""

    def close(self) -> bytes:
        return b""


@dataclass
class OpenFile:
    """An object under construction for one (TP, ep): invisible until completed."""

    ep: str
    start: int
    key: str
    view: str = "value"  # value | keys | headers (R11)
    fmt: ObjectFormat = field(default_factory=lambda: Lines(False, -1))
    records: int = 0
    buf: bytearray = field(default_factory=bytearray)
    upload_id: str | None = None
    parts: list[dict] = field(default_factory=list)


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

    object_type: type[OpenFile] = OpenFile
    compatibility_class: type[Compatibility] = Compatibility  # schema.compatibility's rules (R14)

    def __init__(self, task: WriterTask, tp: TP, now: int):
        self.task, self.s, self.tp = task, task.settings, tp
        self.inst = task.instance
        self.buffer: deque[LogRecord] = deque()
        self.files: dict[str, FileSet] = {}
        # the value schema remembered per ep (R2.2 steps 4, 6): the first record's, which its
        # file is written in (TopicPartitionWriter.currentSchemas)
        self.schemas: dict[str, Any] = {}
        self.compat = self.compatibility_class(self.s.compatibility)
        # a new writer counts flush.size from nothing (R1.2: fresh writers), so a replay after
        # a restart cuts its files at the same offsets whatever the writer before it had counted
        self.count = 0
        self.current_ep: str | None = None
        self.current_offset = -1
        self.base_ts: int | None = None
        self.offset_to_commit: int | None = None
        self.failure_time: int | None = None
        # R2.2 step 3: the key each record would get if it started a file, for R8.2's scan
        self.start_keys: dict[int, str] = {}
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
            return self.field_partition(schema if has_schema else None, payload, rec.offset)
        if ts is None:
            raise TaskFailed(f"offset {rec.offset}: the Record extractor needs a record timestamp")
        return self.time_partition(ts)

    def field_partition(self, schema: Any, payload: Any, offset: int) -> str:
        """R6.2: field values go into the path as they are (a '/' in one makes a directory level)."""
        return field_ep(schema, payload, self.s.field_names, offset, self.s.dir_delim)

    def time_partition(self, ts: int) -> str:
        """R6.3: buckets are floored on the zone's local time (its offset at each record, DST
        included) and named in that zone."""
        s = self.s
        assert s.path is not None
        return s.path(dt.datetime.fromtimestamp(time_bucket(ts, s.duration_ms, s.tz) / 1000, s.tz))

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int) -> tuple[bool, bool]:
        """(rotate?, periodic-or-scheduled?) for R3.2/R3.3/R3.4."""
        if self.count <= 0:
            return False, False
        s = self.s
        if s.rotate_interval_ms > 0 and s.partitioner == "time":
            if self.interval_elapsed(ts, now) or self.partition_changed(ep):
                return True, True
        if self.next_rotation is not None and now >= self.next_rotation:
            return True, True
        return False, False

    def interval_elapsed(self, ts: int | None, now: int) -> bool:
        """R3.2: rotate.interval.ms is measured on record time, from the file's first record, and
        reached (not only exceeded) rotates: replaying the same records cuts the same files."""
        return ts is not None and self.base_ts is not None and ts - self.base_ts >= self.s.rotate_interval_ms

    def partition_changed(self, ep: str | None) -> bool:
        """R3.3: with rotate.file.on.partition.change, a record of another encoded partition
        rotates (so a file never spans two time buckets)."""
        return (ep is not None and self.s.partition_change and ep != self.current_ep
                and not self.tombstone_change(ep))

    def tombstone_change(self, ep: str) -> bool:
        """R3.3 (12.1.0+): with nulls=write, a change to or from an ep containing the tombstone
        partition string does not rotate."""
        t = self.s.tombstone_ep
        return self.s.nulls == "write" and (t in ep or t in (self.current_ep or ""))

    # -- R14: schema.compatibility --
    def schema_incompatible(self, rec: LogRecord, record_schema: Any, file_schema: Any) -> bool:
        """Whether the record's value schema rotates the ep's file (StorageSchemaCompatibility.
        shouldChangeSchema): NONE, any schema not equal to the file's (R14.2); BACKWARD, FORWARD
        and FULL, one the file's cannot hold (R14.3-R14.5). A SchemaProjectorException there
        (a missing version) kills the task: the Python sink has no errant-record reporter."""
        try:
            return self.compat.incompatibility(record_schema, file_schema) is not None
        except ProjectionError as e:
            raise TaskFailed(f"offset {rec.offset}: SchemaProjectorException: {e} (no errant-record reporter: "
                             "the task dies)") from None

    def project(self, rec: LogRecord, payload: Any, record_schema: Any, file_schema: Any) -> tuple[Any, Any]:
        """The (schema, payload) the record is written with (StorageSchemaCompatibility.project):
        under NONE as it came; otherwise its value projected onto the file's schema, so every
        record of a file is in the file's schema (R14.3, R14.4)."""
        try:
            return self.compat.project(payload, record_schema, file_schema)
        except ProjectionError as e:
            raise TaskFailed(f"offset {rec.offset}: SchemaProjectorException: {e} (no errant-record reporter: "
                             "the task dies)") from None

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
            if len(self.start_keys) < s.scan_limit:
                self.start_keys[rec.offset] = self.object_key(ep, rec.offset)
            # TopicPartitionWriter.executeState / checkRotationOrAppend, in their order
            sch = schema if has_schema else None
            if ep in self.schemas and (self.schemas[ep] is None) != (sch is None):
                self.commit(now, False)  # R3.7: a schemaless/schema'd switch within an ep
                continue
            if self.schemas.get(ep) is None:
                self.schemas[ep] = sch  # the ep's first record (since the last commit) sets it
            rotate, timed = self.rotate_on_time(ep, ts, now)
            if rotate:
                self.commit(now, timed)
                continue
            # R14: asked of every record, so an unversioned schema stops the task even where
            # nothing is open; only a file with records in it rotates
            if self.schema_incompatible(rec, sch, self.schemas[ep]) and self.count > 0:
                self.commit(now, False)  # then the record opens a file of its own schema
                continue
            if has_schema:  # the remembered schema stays the file's: a projected record never sets it
                schema, payload = self.project(rec, payload, sch, self.schemas[ep])
            fs = self.files.get(ep)
            if fs is None:
                fs = self.files[ep] = self.open_set(ep, rec.offset)
            lines = self.record_lines(fs, rec, tomb, schema, payload, has_schema)
            for f, line in zip(fs.streams, lines):
                self.append(f, rec.offset, line)
            self.count += 1
            self.current_ep, self.current_offset = ep, rec.offset
            self.buffer.popleft()
            self.record_written(rec, now)
            if self.count >= s.flush_size:
                self.commit(now, False)
        # R2.3: commit on time with no new data (only the scheduled rule can fire here)
        if self.count > 0 and self.next_rotation is not None and now >= self.next_rotation:
            self.commit(now, True)

    def record_written(self, rec: LogRecord, now: int) -> None:
        """A record is in every object of its file. The correct writer keeps nothing about it
        beyond its files and offsets: what it does next must follow from the records alone."""

    def object_key(self, ep: str, start: int) -> str:
        """R5.1: a file is named by the offset of its first record, so a replay names it again the same."""
        return value_key(self.s, self.tp, ep, start)

    def open_set(self, ep: str, start: int) -> FileSet:
        """The objects of a new data file (nothing is sent to S3 until a part fills or it is
        committed). R11.2: `.keys`/`.headers` go before their own format's extension, in place
        of the value's; R11.5: no value object when the key contains the tombstone string."""
        s = self.s
        key = self.object_key(ep, start)
        fs = FileSet(ep, start, key, has_value=s.tombstone_ep not in key)
        stem = key[: -len(s.value_ext)] if s.value_ext and key.endswith(s.value_ext) else key
        if fs.has_value:
            fs.streams.append(self.object_type(ep, start, key, "value", self.object_format("value")))
        for on, view, fmt in ((s.keys, "keys", s.keys_format), (s.headers, "headers", s.headers_format)):
            if on:
                fs.streams.append(self.object_type(ep, start, f"{stem}.{view}{s.format_ext(fmt)}", view,
                                                   self.object_format(view)))
        return fs

    def object_format(self, view: str) -> ObjectFormat:
        """A fresh writer of one object's format (R10; R11.2: keys and headers have their own)."""
        s = self.s
        fmt = {"value": s.value_format, "keys": s.keys_format, "headers": s.headers_format}[view]
        flags = (s.avro_meta, s.avro_enhanced, s.optional_map_keys)
        if fmt == "avro":
            return Avro(s.avro_codec, *flags)
        if fmt == "parquet":
            return Parquet(s.parquet_codec, view, *flags)
        return Lines(s.gzip, s.gzip_level)

    # -- what a record writes (R10, R11) --
    def record_lines(self, fs: FileSet, rec: LogRecord, tomb: bool, schema: Any, payload: Any,
                     has_schema: bool) -> list[Any]:
        """What one record appends to each object of `fs`, in stream order. Every check runs
        before anything is appended, so the objects of a file stay aligned (R11.4)."""
        by_view = {f.view: f for f in fs.streams}
        out: dict[str, Any] = {}
        if self.s.keys:  # R11.4: a null key
            f = by_view["keys"]
            out["keys"] = self.key_bytes(rec) if f.fmt.kind == "line" else self.prepared(f, self.key_view(rec), rec)
        if self.s.headers:  # R11.4: no headers
            f = by_view["headers"]
            out["headers"] = (self.headers_bytes(rec) if f.fmt.kind == "line"
                              else self.prepared(f, self.headers_view(rec), rec))
        if fs.has_value:
            f = by_view["value"]
            out["value"] = (self.value_bytes(rec, schema, payload, has_schema) if f.fmt.kind == "line"
                            else self.prepared(f, View(schema if has_schema else None, payload), rec))
        elif not tomb:
            raise TaskFailed(f"offset {rec.offset}: Value writer not configured: the object key {fs.key!r} contains "
                             f"the tombstone.encoded.partition string {self.s.tombstone_ep!r}, so it gets no value "
                             "object (R11.5); the task dies")
        return [out[f.view] for f in fs.streams]

    def key_view(self, rec: LogRecord) -> View:
        """R11.3: the key as its converter reads it; R11.4: a null key is a DataException."""
        schema, payload, has_schema = convert(self.s.key_conv, rec.key, rec, "key")
        if payload is None:
            raise TaskFailed(f"offset {rec.offset}: Key cannot be null with store.kafka.keys=true (R11.4 "
                             "DataException; the Python sink has no DLQ, so the task dies)")
        return View(schema if has_schema else None, payload)

    def prepared(self, f: OpenFile, view: View, rec: LogRecord) -> Any:
        """The record's view checked against the object's format (Avro, Parquet): a record AvroData
        or the writer refuses is a DataException, and the Python sink has no DLQ."""
        try:
            return f.fmt.prepare(view)
        except AvroWriteError as e:
            raise TaskFailed(f"offset {rec.offset}: {f.fmt.kind.capitalize()}Format cannot write the record's "
                             f"{f.view}: {e} (the task dies)") from None

    def decimal_format(self) -> str:
        """R10.1: json.decimal.format decides how JsonFormat writes a Decimal, in values and keys alike."""
        return self.s.decimal_format

    def key_bytes(self, rec: LogRecord) -> bytes:
        """R11.3: a key is written as JSON (a string key quoted), whatever its converter."""
        return key_line(rec, self.s.key_conv, self.decimal_format())

    def headers_bytes(self, rec: LogRecord) -> bytes:
        """R11.3: every header of the record, in its order (JsonFormat's line)."""
        return headers_line(rec)

    def headers_view(self, rec: LogRecord) -> View:
        """R11.3: every header of the record, in its order, as the Avro or Parquet headers row."""
        return headers_view(header_strings(rec))

    def value_bytes(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool) -> bytes:
        """R10.1: JsonFormat writes the Connect data the converter made (schema field order, Java's
        numbers), not the JSON that arrived; R10.2: ByteArrayFormat the bytes and its separator."""
        s = self.s
        if s.value_format == "bytearray":
            return bytes_value(schema, payload, has_schema, rec.offset) + s.bytearray_sep
        return json_line(schema, payload, has_schema, self.decimal_format(), rec.offset)

    # -- the multipart stream of one file (R7.1) --
    def append(self, f: OpenFile, offset: int, item: Any) -> None:
        f.records += 1
        f.buf += f.fmt.add(item)
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
        """R7.5: a file given up is aborted, so no multipart upload outlives its writer."""
        if f.upload_id is None:
            return
        try:
            self.inst.s3("abort_multipart_upload", Bucket=self.s.bucket, Key=f.key, UploadId=f.upload_id)
        except (Killed, Fenced):
            raise
        except Exception:
            pass  # best effort
        f.upload_id = None

    def finish(self, f: OpenFile) -> None:
        """Upload the remainder as the last part and complete: the object becomes visible, whole,
        in one step (R7.1)."""
        inst, s = self.inst, self.s
        f.buf += f.fmt.close()
        f.fmt = Finished()
        while len(f.buf) > s.part_size:  # a format that writes at close (Parquet) fills parts only now
            self.upload_part(f, bytes(f.buf[: s.part_size]))
            del f.buf[: s.part_size]
        self.upload_part(f, bytes(f.buf))
        f.buf = bytearray()
        # R8.1: where conditional writes are on, an object already there is never overwritten
        condition = {"IfNoneMatch": "*"} if s.conditional_writes else {}
        try:
            inst.s3("complete_multipart_upload", Bucket=s.bucket, Key=f.key, UploadId=f.upload_id,
                    MultipartUpload={"Parts": f.parts}, **condition)
        except (Killed, Fenced):
            raise
        except Exception as e:
            if condition and precondition_failed(e):
                self.abort(f)
                # R8.2: a HEAD confirms the key; S3 contradicting itself is fatal
                taken = self.key_taken(f.key)
                if taken is None:
                    # the HEAD was refused (403): the connector counts that as the key there and
                    # skips the file's first record when it is not (seen on 12.1.9: lost); not
                    # knowing, this sink writes the file again
                    raise Retriable(f"CompleteMultipartUpload of {f.key} failed its If-None-Match and a HEAD on it "
                                    "was refused: written again") from e
                if not taken:
                    raise TaskFailed(f"CompleteMultipartUpload of {f.key} failed its If-None-Match but HEAD finds "
                                     "no such key: contradicting answers from S3 (R8.2)") from e
                raise FileExists(f"{f.key} already exists") from e
            if self.completion_failed(e):
                self.abort(f)  # the Python sink aborts here too (Confluent leaks it, R7.6)
                raise
        f.upload_id = None
        inst.journal_event("complete", f.key, f.records)

    def completion_failed(self, error: Exception) -> bool:
        """Whether an error from CompleteMultipartUpload means the object was not made: always,
        an error inside its 200 answer included (#855), so the file is written again."""
        return True

    def key_taken(self, key: str) -> bool | None:
        """R8.2: after a 412 on a conditional Complete, whether the key is there (a HEAD; None: the
        HEAD was refused with 403). A 412 alone proves nothing: S3 answers one for a conflicting
        write in flight too, and the records would be skipped for an object that never landed."""
        return self.exists(key, forbidden=None)

    def exists(self, key: str, forbidden: bool | None) -> bool | None:
        """A HEAD on `key`; `forbidden`: what a 403 answer counts as."""
        from botocore.exceptions import ClientError

        try:
            self.inst.s3("head_object", Bucket=self.s.bucket, Key=key)
            return True
        except ClientError as e:
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if status == 403:
                return forbidden
            if status == 404 or e.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    def next_free_start(self, start: int) -> int:
        """R8.2: the first offset after `start` whose record would not start a file already in S3
        (or is not known, or a HEAD on it is refused), scanning at most max.files.scan.limit."""
        end = start + 1 + self.s.scan_limit
        for offset in range(start + 1, end):
            key = self.start_keys.get(offset)
            if key is None or not self.exists(key, forbidden=False):
                return offset
        return end

    # -- R3.1 --
    def commit(self, now: int, timed: bool) -> None:
        """R3.1/R4.1: every open file of the TP is completed before the offset moves past it."""
        upto = self.current_offset + 1
        for ep in list(self.files):
            fs = self.files[ep]
            try:
                for f in fs.streams:  # R11.1: value, then keys, then headers
                    self.finish(f)
            except FileExists:
                fs.start = self.next_free_start(fs.start)  # put() rewinds to it (R1.5); files done stay (R8.3)
                raise
            del self.files[ep]
        self.offset_to_commit = upto
        self.count = 0
        self.base_ts = None
        self.schemas.clear()
        self.start_keys.clear()
        if timed and self.next_rotation is not None:
            self.next_rotation = next_boundary(now, self.s.schedule_ms, self.s.tz)

    def close(self) -> None:
        """R1.7/R1.8: abort what is open, commit nothing."""
        self.abort_all()
        self.files.clear()
        self.buffer.clear()
