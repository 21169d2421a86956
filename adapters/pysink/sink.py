"""The Python sink: a Kafka-to-S3 sink following the Confluent S3 sink's semantics, written from
the spec (it never imports `reference_impl`, which checks it).

Layers, as in Kafka Connect:
* `Writer`: one topic-partition's writer (R2.2 order: extract time, encode partition, time
  rotation, append, flush.size). Open files stream multipart parts of `s3.part.size` to S3
  (R7.1); a rotation uploads and completes every open file of the TP (R3.1) and only then
  sets the offset to commit (R4.1).
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

import datetime as dt
import json
import random
import threading
import time
import zlib
import zoneinfo
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

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

_JODA = {"YYYY": "%Y", "yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M"}


def joda_formatter(pattern: str) -> Callable[[dt.datetime], str]:
    """A Joda path.format subset: 'quoted literals' ('' is a quote), YYYY/yyyy, MM, dd, HH, mm."""
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
                                  f"YYYY, yyyy, MM, dd, HH and mm, not {tok!r}")
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
        fmt = c.get("format.class", "JsonFormat").rsplit(".", 1)[-1]
        if fmt != "JsonFormat":
            raise SinkConfigError(f"format.class={fmt}: the Python sink writes JsonFormat only")
        for flag in ("store.kafka.keys", "store.kafka.headers"):
            if c.get(flag, "false").lower() == "true":
                raise SinkConfigError(f"{flag}=true: the Python sink writes value files only")
        comp = c.get("s3.compression.type", "none").lower()
        if comp not in ("none", "gzip"):
            raise SinkConfigError(f"s3.compression.type={comp}: the Python sink supports none and gzip")
        part = num("s3.part.size", 26_214_400)
        if part < min_part_size:
            raise SinkConfigError(f"s3.part.size={part} is below the minimum {min_part_size}")
        s = cls(bucket=c["s3.bucket.name"], flush_size=max(num("flush.size", 1), 1),
                topics_dir=c.get("topics.dir", "topics"), partitioner=kinds[cls_name],
                rotate_interval_ms=num("rotate.interval.ms", -1), schedule_ms=num("rotate.schedule.interval.ms", -1),
                partition_change=c.get("rotate.file.on.partition.change", "true").lower() == "true",
                gzip=comp == "gzip", gzip_level=num("s3.compression.level", -1), part_size=part,
                nulls=c.get("behavior.on.null.values", "fail").lower(),
                retry_backoff_ms=num("retry.backoff.ms", 200),
                pad=num("filename.offset.zero.pad.width", 10))
        if s.nulls not in ("ignore", "fail"):
            raise SinkConfigError(f"behavior.on.null.values={s.nulls}: the Python sink supports ignore and fail")
        if s.partitioner == "field":
            s.field_names = tuple(f.strip() for f in c.get("partition.field.name", "").split(",") if f.strip())
            if not s.field_names:
                raise SinkConfigError("partition.field.name is required with FieldPartitioner")
        if s.partitioner == "time":
            extractor = c.get("timestamp.extractor", "Wallclock")
            if extractor != "Record":
                raise SinkConfigError(f"timestamp.extractor={extractor}: the Python sink supports Record only")
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

def decode_value(raw: bytes) -> tuple[Any, Any, bool]:
    """JsonConverter input: (schema, payload, has_schema). A `{schema, payload}` envelope is a
    value with a schema; anything else is schemaless."""
    v = json.loads(raw)
    if isinstance(v, dict) and set(v) == {"schema", "payload"}:
        return v["schema"], v["payload"], True
    return None, v, False


_FIELD_TYPES = {"int8", "int16", "int32", "int64", "string", "boolean"}


def field_ep(schema: Any, payload: Any, names: tuple[str, ...], offset: int) -> str:
    """R6.2: `name=value` per field (dotted names reach nested structs), joined by `/`.
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
    return "/".join(parts)


def json_line(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


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


class Writer:
    """One topic-partition's writer."""

    def __init__(self, task: "SinkTask", tp: TP, now: int):
        self.task, self.s, self.tp = task, task.settings, tp
        self.inst = task.instance
        self.buffer: deque[LogRecord] = deque()
        self.files: dict[str, OpenFile] = {}
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
    def encode(self, rec: LogRecord, schema: Any, payload: Any, has_schema: bool) -> str:
        s = self.s
        if s.partitioner == "default":
            return f"partition={rec.partition}"
        if s.partitioner == "field":
            return field_ep(schema if has_schema else None, payload, s.field_names, rec.offset)
        if rec.timestamp is None:
            raise TaskFailed(f"offset {rec.offset}: the Record extractor needs a record timestamp")
        assert s.path is not None
        return s.path(dt.datetime.fromtimestamp(time_bucket(rec.timestamp, s.duration_ms, s.tz) / 1000, s.tz))

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
            elif ts is not None and self.base_ts is not None and ts - self.base_ts >= s.rotate_interval_ms:
                return True, True
            # BUG(no-partition-change-rotation): the R3.3 check is skipped.
            if (ep is not None and s.partition_change and variant != "no-partition-change-rotation"
                    and ep != self.current_ep):
                return True, True
        if self.next_rotation is not None and now >= self.next_rotation:
            return True, True
        return False, False

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
            schema, payload, has_schema = decode_value(rec.value) if rec.value is not None else (None, None, False)
            ts = rec.timestamp if s.partitioner == "time" else None
            ep = self.encode(rec, schema, payload, has_schema)
            if ts is not None and self.base_ts is None:
                self.base_ts = ts
            rotate, timed = self.rotate_on_time(ep, ts, now)
            if rotate:
                self.commit(now, timed)
                continue
            f = self.files.get(ep)
            if f is None:
                f = self.files[ep] = OpenFile(ep, rec.offset, self.key(ep, rec.offset))
            self.append(f, rec.offset, json_line(payload))
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
        t, p = self.tp
        if self.task.variant == "renumber-after-restart":
            # BUG(renumber-after-restart): offsets in names count from where this instance
            # started, so a restarted sink numbers its files from 0 again.
            start -= self.task.start_offsets.get(self.tp, 0)
        prefix = f"{self.s.topics_dir}/" if self.s.topics_dir else ""
        return f"{prefix}{t}/{ep}/{t}+{p}+{start:0{self.s.pad}d}.json" + (".gz" if self.s.gzip else "")

    # -- the multipart stream of one file (R7.1) --
    def append(self, f: OpenFile, offset: int, line: bytes) -> None:
        f.records += 1
        if self.task.variant in ("partial-visible", "last-record-missing"):
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
        except Exception:
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
            self.finish(self.files[ep])
            del self.files[ep]
        self.offset_to_commit = upto
        self.count = 0
        self.base_ts = None
        self.first_wall = None
        if self.task.variant == "unstable-boundaries":
            self.task.scratch[("count", self.tp)] = 0
        if timed and self.next_rotation is not None:
            self.next_rotation = next_boundary(now, self.s.schedule_ms, self.s.tz)

    def close(self) -> None:
        """R1.7/R1.8: abort what is open, commit nothing."""
        for f in self.files.values():
            self.abort(f)
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
        for r in records:
            if r.value is None or r.value == b"null":
                if self.settings.nulls == "fail":
                    raise TaskFailed(f"null value at {r.topic}-{r.partition}@{r.offset} "
                                     "with behavior.on.null.values=fail")
                continue  # ignore: dropped before the writer (R12.2)
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
                for f in w.files.values():
                    w.abort(f)
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

    def start(self) -> "SinkInstance":
        self.thread = threading.Thread(target=self._loop, name=f"pysink-{self.name}", daemon=True)
        self.thread.start()
        return self

    def _loop(self) -> None:
        try:
            while not self.killed.is_set():
                self._gate()
                if self.stopping.is_set():
                    self.task.close()
                    self.exited = "stopped"
                    return
                self.poll_once()
                if self.exited:
                    return
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
