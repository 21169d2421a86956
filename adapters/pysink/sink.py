"""The Python sink: per topic-partition writers with the Confluent S3 sink's rotation rules,
multipart uploads with boto3, offsets committed only after the files are in S3.

Supported: DefaultPartitioner, FieldPartitioner (field of a JSON object value),
Hourly/Daily/TimeBasedPartitioner with the Record extractor; flush.size per topic-partition;
rotate.interval.ms on record time with partition-change rotation; rotate.schedule.interval.ms
aligned to midnight of `timezone`, with the idle reset; JsonFormat (gzip optional);
behavior.on.null.values ignore|fail. Written from the spec, independently of the model.
"""
from __future__ import annotations

import datetime as dt
import gzip
import json
import threading
import time
import zoneinfo
from dataclasses import dataclass, field
from typing import Any, Callable

from adapters.pysink.log import InProcessLog, LogRecord

MIN_PART = 5 * 1024 * 1024


class Killed(Exception):
    """The sink was killed: it stops where it is, closing and committing nothing."""


class SinkConfigError(ValueError):
    pass


def _pattern_to_strftime(pattern: str) -> Callable[[dt.datetime], str]:
    """A Joda path.format subset: 'quoted literals', YYYY/yyyy, MM, dd, HH, mm."""
    out: list[Any] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.index("'", i + 1)
            out.append(pattern[i + 1:j])
            i = j + 1
            continue
        j = i
        while j < len(pattern) and pattern[j] == c:
            j += 1
        tok = pattern[i:j]
        fmt = {"YYYY": "%Y", "yyyy": "%Y", "MM": "%m", "dd": "%d", "HH": "%H", "mm": "%M"}.get(tok)
        out.append((fmt,) if fmt else tok)
        i = j
    return lambda t: "".join(p if isinstance(p, str) else t.strftime(p[0]) for p in out)


@dataclass
class SinkSettings:
    bucket: str
    flush_size: int
    topics_dir: str = "topics"
    partitioner: str = "default"
    field_names: tuple[str, ...] = ()
    duration_ms: int = 3_600_000
    path: Callable[[dt.datetime], str] | None = None
    tz: dt.tzinfo = dt.timezone.utc
    rotate_interval_ms: int = -1
    schedule_ms: int = -1
    partition_change: bool = True
    gzip: bool = False
    part_size: int = MIN_PART
    nulls: str = "fail"

    @classmethod
    def from_config(cls, c: dict[str, str]) -> "SinkSettings":
        def num(key: str, default: int) -> int:
            try:
                return int(c.get(key, default))
            except ValueError:
                raise SinkConfigError(f"{key}={c[key]!r} is not a number") from None

        if "flush.size" not in c:
            raise SinkConfigError("flush.size is required")
        if "s3.bucket.name" not in c:
            raise SinkConfigError("s3.bucket.name is required")
        cls_name = c.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
        kinds = {"DefaultPartitioner": "default", "FieldPartitioner": "field", "TimeBasedPartitioner": "time",
                 "HourlyPartitioner": "time", "DailyPartitioner": "time"}
        if cls_name not in kinds:
            raise SinkConfigError(f"partitioner.class={cls_name}: the Python sink supports {', '.join(kinds)}")
        s = cls(bucket=c["s3.bucket.name"], flush_size=max(num("flush.size", 1), 1),
                topics_dir=c.get("topics.dir", "topics"), partitioner=kinds[cls_name],
                rotate_interval_ms=num("rotate.interval.ms", -1), schedule_ms=num("rotate.schedule.interval.ms", -1),
                partition_change=c.get("rotate.file.on.partition.change", "true").lower() == "true",
                gzip=c.get("s3.compression.type", "none") == "gzip",
                part_size=max(num("s3.part.size", 26_214_400), MIN_PART),
                nulls=c.get("behavior.on.null.values", "fail").lower())
        fmt = c.get("format.class", "JsonFormat").rsplit(".", 1)[-1]
        if fmt != "JsonFormat":
            raise SinkConfigError(f"format.class={fmt}: the Python sink writes JsonFormat only")
        if s.partitioner == "field":
            s.field_names = tuple(f.strip() for f in c.get("partition.field.name", "").split(",") if f.strip())
            if not s.field_names:
                raise SinkConfigError("partition.field.name is required with FieldPartitioner")
        if s.partitioner == "time":
            if c.get("timestamp.extractor", "Wallclock") != "Record":
                raise SinkConfigError("timestamp.extractor: the Python sink supports Record only")
            tzname = c.get("timezone", "")
            if not tzname:
                raise SinkConfigError("timezone is required with a time-based partitioner")
            s.tz = dt.timezone.utc if tzname == "UTC" else zoneinfo.ZoneInfo(tzname)
            if cls_name == "HourlyPartitioner":
                s.duration_ms, pattern = 3_600_000, "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
            elif cls_name == "DailyPartitioner":
                s.duration_ms, pattern = 86_400_000, "'year'=YYYY/'month'=MM/'day'=dd"
            else:
                s.duration_ms, pattern = num("partition.duration.ms", -1), c.get("path.format", "")
                if s.duration_ms <= 0 or not pattern:
                    raise SinkConfigError("partition.duration.ms and path.format are required with TimeBasedPartitioner")
            s.path = _pattern_to_strftime(pattern.rstrip("/"))
        if s.schedule_ms > 0:
            tzname = c.get("timezone", "")
            if not tzname:
                raise SinkConfigError("timezone is required with rotate.schedule.interval.ms")
            s.tz = dt.timezone.utc if tzname == "UTC" else zoneinfo.ZoneInfo(tzname)
        if s.nulls not in ("ignore", "fail"):
            raise SinkConfigError(f"behavior.on.null.values={s.nulls}: the Python sink supports ignore and fail")
        return s


def _offset(t: dt.datetime) -> int:
    off = t.utcoffset()
    return int(off.total_seconds() * 1000) if off else 0


def _at(ms: int, tz: dt.tzinfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz)


def next_boundary(now: int, interval: int, tz: dt.tzinfo) -> int:
    """Midnight-aligned slots of `interval`, the last one cut at the next midnight."""
    local = _at(now, tz)
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    start = int(midnight.timestamp() * 1000)
    nxt = start + ((now - start) // interval + 1) * interval
    tomorrow = int((midnight + dt.timedelta(days=1)).timestamp() * 1000)
    return min(nxt, tomorrow)


@dataclass
class OpenFile:
    ep: str
    start: int
    lines: list[bytes] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)


class Writer:
    """One topic-partition's writer."""

    def __init__(self, sink: "PySink", tp: tuple[str, int], now: int):
        self.sink, self.s, self.tp = sink, sink.settings, tp
        self.files: dict[str, OpenFile] = {}
        carried = sink.log.carry.get(tp, 0) if sink.variant == "unstable-boundaries" else 0
        self.count = carried  # BUG(unstable-boundaries): a counter that survives the restart
        self.current_ep: str | None = None
        self.current_offset = -1
        self.base: int | None = None
        self.first_wall: int | None = None
        self.to_commit: int | None = None
        self.next_rotation = next_boundary(now, self.s.schedule_ms, self.s.tz) if self.s.schedule_ms > 0 else None

    def encode_partition(self, rec: LogRecord, value: Any) -> str:
        s = self.s
        if s.partitioner == "default":
            return f"partition={rec.partition}"
        if s.partitioner == "field":
            if not isinstance(value, dict):
                raise SinkConfigError(f"offset {rec.offset}: FieldPartitioner needs an object value")
            return "/".join(f"{f}={value.get(f) if value.get(f) is not None else 'null'}" for f in s.field_names)
        ts = rec.timestamp or 0
        local = ts + _offset(_at(ts, s.tz))
        bucket_local = (local // s.duration_ms) * s.duration_ms
        probe = bucket_local - _offset(_at(bucket_local, s.tz))
        utc = bucket_local - _offset(_at(probe, s.tz))
        assert s.path is not None
        return s.path(_at(utc, s.tz))

    def time_rotation(self, ep: str | None, ts: int | None, now: int) -> bool:
        if self.count <= 0:
            return False
        s = self.s
        if s.rotate_interval_ms > 0 and s.partitioner == "time":
            if self.sink.variant == "rotate-on-wallclock":
                # BUG: wall-clock time since the file's first record, not record time
                if self.first_wall is not None and now - self.first_wall >= s.rotate_interval_ms:
                    return True
            elif ts is not None and self.base is not None and ts - self.base >= s.rotate_interval_ms:
                return True
            if s.partition_change and self.sink.variant != "no-partition-change-rotation" and ep != self.current_ep:
                return True
        return self.next_rotation is not None and now >= self.next_rotation

    def write(self, records: list[LogRecord], now: int) -> None:
        s = self.s
        if self.next_rotation is not None and self.count == 0 and now >= self.next_rotation:
            self.next_rotation = next_boundary(now, s.schedule_ms, s.tz)
        i = 0
        while i < len(records):
            rec = records[i]
            value = json.loads(rec.value) if rec.value is not None else None
            structured = isinstance(value, dict) and set(value) == {"schema", "payload"}
            if structured:
                value = value["payload"]
            elif s.partitioner == "field":
                # FieldPartitioner reads Struct fields only: a schemaless value stops the task
                raise SinkConfigError(f"offset {rec.offset}: FieldPartitioner needs a value with a schema (a Struct)")
            ts = rec.timestamp if s.partitioner == "time" else None
            if ts is not None and self.base is None:
                self.base = ts
            ep = self.encode_partition(rec, value)
            if self.time_rotation(ep, ts, now):
                if self.next_rotation is not None:
                    self.next_rotation = next_boundary(now, s.schedule_ms, s.tz)
                self.commit()
                continue
            f = self.files.get(ep)
            if f is None:
                f = self.files[ep] = OpenFile(ep, rec.offset)
            f.lines.append(json.dumps(value, separators=(",", ":")).encode() + b"\n")
            f.offsets.append(rec.offset)
            if self.first_wall is None:
                self.first_wall = now
            self.count += 1
            self.current_ep, self.current_offset = ep, rec.offset
            i += 1
            if self.count >= s.flush_size:
                self.commit()
        if self.count > 0 and self.time_rotation(self.current_ep, None, now):
            if self.next_rotation is not None:
                self.next_rotation = next_boundary(now, s.schedule_ms, s.tz)
            self.commit()

    def key(self, f: OpenFile) -> str:
        start = f.start
        if self.sink.variant == "renumber-after-restart" and self.sink.generation > 1:
            start = f.start - self.sink.first_offsets.get(self.tp, 0)  # BUG: counts from the restart
        t, p = self.tp
        prefix = f"{self.s.topics_dir}/" if self.s.topics_dir else ""
        return f"{prefix}{t}/{f.ep}/{t}+{p}+{start:010d}.json" + (".gz" if self.s.gzip else "")

    def commit(self) -> None:
        """Upload every open file, then let the offset be committed (R3.1, R4.1)."""
        upto = self.current_offset + 1
        if self.sink.variant == "commit-before-upload":
            self.sink.commit_now({self.tp: upto})  # BUG: the offset moves before the data is in S3
        for ep in list(self.files):
            f = self.files[ep]
            lines = f.lines[:-1] if self.sink.variant == "last-record-missing" else f.lines
            self.sink.upload(self.key(f), b"".join(lines))
            del self.files[ep]
        self.to_commit = upto
        self.count = 0
        self.base = None
        self.first_wall = None


class PySink:
    """A sink instance (one consumer of the group). `generation` fences zombies."""

    def __init__(self, log: InProcessLog, s3: Any, settings: SinkSettings, *, variant: str | None = None,
                 poll_interval_s: float = 0.05, max_batch: int = 50, retry_backoff_s: float = 0.2):
        self.log, self.s3, self.settings, self.variant = log, s3, settings, variant
        self.poll_interval_s, self.max_batch, self.retry_backoff_s = poll_interval_s, max_batch, retry_backoff_s
        self.generation = log.take_over()
        self.killed = threading.Event()
        self.resumed = threading.Event()
        self.resumed.set()
        self.was_paused = False
        self.busy = False
        self.error: str | None = None
        self.writers: dict[tuple[str, int], Writer] = {}
        committed = log.committed()
        self.positions = {tp: committed.get(tp, 0) for tp in log.partitions()}
        self.first_offsets = dict(self.positions)
        self.thread = threading.Thread(target=self._loop, name=f"pysink-{self.generation}", daemon=True)

    # --- S3, with the kill switch in front of every call ----------------------------------
    def _call(self, fn: Callable[..., Any], **kw: Any) -> Any:
        if self.killed.is_set():
            raise Killed()
        out = fn(**kw)
        if self.killed.is_set():
            raise Killed()
        return out

    def upload(self, key: str, data: bytes) -> None:
        body = gzip.compress(data, mtime=0) if self.settings.gzip else data
        b = self.settings.bucket
        if self.variant == "partial-visible" and len(data.splitlines()) > 1:
            half = b"".join(data.splitlines(keepends=True)[: len(data.splitlines()) // 2])
            self._call(self.s3.put_object, Bucket=b, Key=key, Body=gzip.compress(half, mtime=0) if self.settings.gzip else half)
            time.sleep(0.5)  # BUG: the half-written object is visible meanwhile
        upload_id = self._call(self.s3.create_multipart_upload, Bucket=b, Key=key)["UploadId"]
        try:
            parts = []
            size = self.settings.part_size
            chunks = [body[i:i + size] for i in range(0, len(body), size)] or [b""]
            for n, chunk in enumerate(chunks, 1):
                etag = self._call(self.s3.upload_part, Bucket=b, Key=key, UploadId=upload_id, PartNumber=n, Body=chunk)["ETag"]
                parts.append({"PartNumber": n, "ETag": etag})
            self._call(self.s3.complete_multipart_upload, Bucket=b, Key=key, UploadId=upload_id,
                       MultipartUpload={"Parts": parts})
        except Killed:
            raise
        except Exception:
            if self.variant != "leak-multipart":  # BUG(leak-multipart): the upload stays open
                try:
                    self.s3.abort_multipart_upload(Bucket=b, Key=key, UploadId=upload_id)
                except Exception:
                    pass
            raise

    def commit_now(self, offsets: dict[tuple[str, int], int]) -> None:
        if self.killed.is_set():
            raise Killed()
        self.log.commit(self.generation, offsets)

    # --- the poll loop ---------------------------------------------------------------------
    def start(self) -> "PySink":
        self.thread.start()
        return self

    def _fenced(self) -> bool:
        return self.log.owner() != self.generation

    def _loop(self) -> None:
        try:
            while not self.killed.is_set():
                if not self.resumed.wait(0.05):
                    continue
                if self.was_paused:
                    self.was_paused = False
                    if self.variant == "zombie-overwrite":
                        self._zombie_flush()
                    if self._fenced():
                        return  # another instance owns the partitions now
                self.busy = True
                try:
                    self._poll_once()
                finally:
                    self.busy = False
                time.sleep(self.poll_interval_s)
        except Killed:
            return
        except Exception as e:  # the task dies
            self.error = f"{type(e).__name__}: {e}"

    def _poll_once(self) -> None:
        now = int(time.time() * 1000)
        for tp in self.log.partitions():
            self.positions.setdefault(tp, self.log.committed().get(tp, 0))
            batch = self.log.read(tp, self.positions[tp], self.max_batch)
            kept = []
            for r in batch:
                if r.value is None or r.value == b"null":
                    if self.settings.nulls == "fail":
                        raise SinkConfigError(f"null value at {tp[0]}-{tp[1]}@{r.offset} with behavior.on.null.values=fail")
                    continue
                kept.append(r)
            w = self.writers.get(tp)
            if w is None:
                w = self.writers[tp] = Writer(self, tp, now)
            try:
                w.write(kept, now)
                self.positions[tp] += len(batch)
            except (Killed, SinkConfigError):
                raise  # killed, or a record the task cannot write: the task dies
            except Exception:
                if self.variant == "drop-after-retriable":
                    # BUG: the buffered records are gone, and the offset moves on regardless
                    w.files.clear()
                    w.count = 0
                    w.to_commit = self.positions[tp] + len(batch)
                    self.positions[tp] += len(batch)
                else:
                    # R1.5: drop the writer, rewind to the first record not yet committed, back off
                    rewind = self.log.committed().get(tp, 0) if w.to_commit is None else w.to_commit
                    self.writers[tp] = Writer(self, tp, now)
                    self.writers[tp].to_commit = w.to_commit
                    self.positions[tp] = rewind
                    time.sleep(self.retry_backoff_s)
            if self.variant == "unstable-boundaries":
                self.log.carry[tp] = w.count
        if self._fenced():
            return
        offsets = {tp: w.to_commit for tp, w in self.writers.items() if w.to_commit is not None}
        if offsets:
            self.commit_now(offsets)
            for w in self.writers.values():
                w.to_commit = None

    def _zombie_flush(self) -> None:
        """BUG(zombie-overwrite): a stale instance wakes up and flushes what it holds, or the
        file it last wrote, under a key the new owner has since written with more records."""
        for tp, w in self.writers.items():
            pos = self.positions.get(tp, 0)
            rec = self.log.read(tp, pos, 1)
            if rec:
                w.write(rec, int(time.time() * 1000))
            if w.count > 0:
                w.commit()

    # --- faults --------------------------------------------------------------------------
    def kill(self) -> None:
        self.killed.set()
        self.resumed.set()

    def pause(self) -> None:
        self.resumed.clear()
        self.was_paused = True

    def resume(self) -> None:
        self.resumed.set()
