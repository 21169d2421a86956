"""The per-topic-partition rotation fold: one TopicPartitionWriter, record by record (§2–§4).

`fold_topic_partition` is a pure function of (config, one topic-partition's puts). The local
engine calls it once per topic-partition; the Spark engine calls the same writer inside
`applyInPandas` or `mapInPandas`. There is no other implementation of these rules.

Each put's records arrive as a `RecordColumns` batch: offsets, the timestamp the writer
extracts and the encoded partition per record, computed by the partitioner's own rules
(vectorised where a rule is plain arithmetic). The writer steps record by record through
R2.2; where no rule but the size rule can fire for a run of records (same encoded
partition, same schema, inside the time window, nothing to report) it writes the run in one
step. `fast=False` turns that off; a test holds both ways to the same result.

Not modelled here (they need S3 faults, which the suite injects): retriable S3 errors and
the writer rewind (R1.5) other than the conditional-write conflict (R8.2), and
`max.write.duration.ms` (R9.1).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from reference_impl.config import SinkConfig
from reference_impl.connect_data import Schema, SinkRecord
from reference_impl.errors import ConnectorError, DataError, FatalError, PartitionError
from reference_impl.engine.expectation import ExpectedObject, OpenFile, SkippedRecord, TaskFailure
from reference_impl.formats import DataError as FormatDataError
from reference_impl.formats import WriterFailure, format_for, view_of
from reference_impl.naming import object_key
from reference_impl.partitioning import Partitioner
from reference_impl.timeutil import next_scheduled_rotation, zone

NO_CODE = -1  # the record needs the step-by-step path (an error, a null, a clock-dependent ep)


class SchemaCodes:
    """Small integers for value schemas: equal codes ⇔ `Schema.equals` (R14.2). Code 0 is
    "no schema" (schemaless values and nulls)."""

    def __init__(self) -> None:
        self._codes: dict[Any, int] = {None: 0}
        self.schemas: list[Schema | None] = [None]

    def code(self, schema: Schema | None) -> int:
        key: Any = schema
        try:
            hash(key)
        except TypeError:
            key = repr(schema)
        c = self._codes.get(key)
        if c is None:
            c = self._codes[key] = len(self.schemas)
            self.schemas.append(schema)
        return c


@dataclass
class RecordColumns:
    """One put's records for one topic-partition, as columns.

    `ep_codes[i]` indexes `eps` (NO_CODE: compute it step by step); `ts[i]` is the timestamp
    the writer would extract (valid where `ts_valid`); `simple[i]` says the record can be
    written without any check failing (not null, writable in every format stored)."""

    offsets: np.ndarray
    ts: np.ndarray
    ts_valid: np.ndarray
    ep_codes: np.ndarray
    eps: list[str]
    schema_codes: np.ndarray
    simple: np.ndarray
    record: Callable[[int], SinkRecord]

    def __len__(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True)
class Put:
    """One put() as this topic-partition's writer sees it: when, and its records."""

    index: int | None
    at_ms: int | None
    records: Sequence[SinkRecord] | None = None
    columns: RecordColumns | None = None


@dataclass(frozen=True)
class CommittedFile:
    """A file as its rotation committed it (R3.1); `offsets` in write order."""

    ep: str
    offsets: np.ndarray
    rotation: str
    committed_offset: int
    put_index: int | None
    at_ms: int | None


@dataclass
class FoldResult:
    topic: str
    partition: int
    files: list[CommittedFile] = field(default_factory=list)
    committed_offset: int | None = None
    open: list[OpenFile] = field(default_factory=list)
    failure: TaskFailure | None = None
    skipped: list[SkippedRecord] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)  # R8.2: 412 on commit, skipped ahead
    overwritten: list[str] = field(default_factory=list)  # R8.1 off: an existing key replaced
    cfg: SinkConfig | None = None

    @functools.cached_property
    def objects(self) -> list[ExpectedObject]:
        assert self.cfg is not None
        return [expected_object(self.cfg, self.topic, self.partition, f) for f in self.files]


def expected_object(cfg: SinkConfig, topic: str, partition: int, f: CommittedFile) -> ExpectedObject:
    start = int(f.offsets[0])
    key = object_key(cfg, topic, partition, f.ep, start)
    views = [v for v, on in (("keys", cfg.store_kafka_keys), ("headers", cfg.store_kafka_headers)) if on]
    return ExpectedObject(
        key=key, topic=topic, partition=partition, encoded_partition=f.ep,
        offsets=tuple(f.offsets.tolist()), rotation=f.rotation, committed_offset=f.committed_offset,
        put_index=f.put_index, at_ms=f.at_ms,
        sibling_keys=tuple((v, object_key(cfg, topic, partition, f.ep, start, v)) for v in views),
        value_object=cfg.tombstone_encoded_partition not in key,
    )


class _Death(Exception):
    def __init__(self, failure: TaskFailure):
        self.failure = failure


class _Conflict(Exception):
    """FileExistsException (R8.2): retriable, caught by put() (R1.5)."""

    def __init__(self, rewind_to: int):
        self.rewind_to = rewind_to


# --- columns from records -------------------------------------------------------------------

def columns_from_records(
    cfg: SinkConfig, partitioner: Partitioner, records: Sequence[SinkRecord], now: int | None,
    schema_codes: SchemaCodes,
) -> RecordColumns:
    """The per-record columns, by the partitioner's and formats' own rules."""
    n = len(records)
    offsets = np.fromiter((r.offset for r in records), dtype=np.int64, count=n)
    ts = np.zeros(n, dtype=np.int64)
    ts_valid = np.ones(n, dtype=bool)
    ep_codes = np.full(n, NO_CODE, dtype=np.int64)
    schemas = np.zeros(n, dtype=np.int64)
    simple = np.zeros(n, dtype=bool)
    eps: list[str] = []
    ep_index: dict[str, int] = {}
    timed = partitioner.time_based and partitioner.extractor is not None
    checks = _writability(cfg)
    for i, r in enumerate(records):
        schemas[i] = schema_codes.code(r.value_schema)
        try:
            t = partitioner.timestamp_for_rotation(r, now) if timed else None
            if timed:
                if t is None:
                    ts_valid[i] = False
                else:
                    ts[i] = t
            ep = partitioner.encode(r, now, t if timed else None)
        except ConnectorError:
            continue
        code = ep_index.get(ep)
        if code is None:
            code = ep_index[ep] = len(eps)
            eps.append(ep)
        ep_codes[i] = code
        simple[i] = r.value is not None and checks(r)
    return RecordColumns(offsets, ts, ts_valid, ep_codes, eps, schemas, simple, records.__getitem__)


def _writability(cfg: SinkConfig) -> Callable[[SinkRecord], bool]:
    """True when no writer check (R11.4, the formats' DataExceptions) can fail for a record."""
    fmts = [(v, format_for(c)) for v, c, on in (
        ("value", cfg.format_class, True),
        ("keys", cfg.keys_format_class, cfg.store_kafka_keys),
        ("headers", cfg.headers_format_class, cfg.store_kafka_headers)) if on]

    def ok(r: SinkRecord) -> bool:
        if cfg.store_kafka_keys and r.key is None:
            return False
        if cfg.store_kafka_headers and not r.headers:
            return False
        for view, fmt in fmts:
            value, schema = view_of(r, view)
            try:
                fmt.check_writable(value, schema, view)
                fmt.check_append(1, value, schema, view)  # a run appends to a file already started
            except (FormatDataError, WriterFailure):
                return False
        return True

    return ok


# --- the writer -----------------------------------------------------------------------------

class _Writer:
    """The state of one TopicPartitionWriter (TPW)."""

    def __init__(self, cfg: SinkConfig, partitioner: Partitioner, topic: str, partition: int,
                 existing: set[str], schema_codes: SchemaCodes, out: FoldResult | None = None,
                 fast: bool = True):
        self.cfg = cfg
        self.p = partitioner
        self.topic, self.partition = topic, partition
        self.existing = existing  # keys already in the bucket (shared across writer generations)
        self.codes = schema_codes
        # runs are only taken in one step where R14.2's equality is the whole schema rule
        self.fast = fast and cfg.schema_compatibility == "NONE"
        self.files: dict[str, list[np.ndarray]] = {}  # ep -> offset chunks, in open order
        self.schemas: dict[str, int] = {}  # ep -> remembered value schema code (0: none)
        self.seen: dict[int, str] = {}  # R2.2 step 3: offset -> ep, at most max.files.scan.limit
        self.failure_time: int | None = None
        self._tomb_cache: dict[str, bool] = {}
        self.record_count = 0
        self.current_offset = -1
        self.current_ep: str | None = None
        self.current_ts: int | None = None
        self.base_ts: int | None = None
        self.offset_to_commit: int | None = None
        self.next_sched: int | None = None
        self.out = out or FoldResult(topic, partition, cfg=cfg)
        self.put: Put | None = None
        v = cfg.version
        self.flush_size = max(cfg.flush_size, 1)  # flush.size <= 0 behaves like 1 (R3.8)
        self.timed = partitioner.extractor is not None and partitioner.time_based
        self.periodic = cfg.rotate_interval_ms > 0 and self.timed
        mode = v.partition_change_rotation
        self.partition_change = self.periodic and (
            mode == "always" or (mode == "flag" and cfg.rotate_file_on_partition_change)
        )
        self.sched = cfg.rotate_schedule_interval_ms
        self.tz = zone(cfg.timezone.strip()) if self.sched > 0 else None
        self.max_open = cfg.partitioner_max_open_files if v.max_open_files else -1
        self.formats = {
            "value": format_for(cfg.format_class),
            "keys": format_for(cfg.keys_format_class) if cfg.store_kafka_keys else None,
            "headers": format_for(cfg.headers_format_class) if cfg.store_kafka_headers else None,
        }

    # --- scheduled rotation (R3.4, R3.5) ---------------------------------------------------
    def set_next_scheduled(self, now: int | None) -> None:
        if self.sched > 0:
            if now is None:
                raise AssertionError("scheduled rotation needs put times")
            assert self.tz is not None
            self.next_sched = next_scheduled_rotation(now, self.sched, self.tz)

    def _schedule_due(self, now: int | None) -> bool:
        return self.sched > 0 and now is not None and self.next_sched is not None and now >= self.next_sched

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int | None) -> str | None:
        """R3.2–R3.4: the reason a time rotation fires, or None."""
        if self.record_count <= 0:
            return None
        if self.periodic:
            if ts is not None and self.base_ts is not None and ts - self.base_ts >= self.cfg.rotate_interval_ms:
                return "R3.2 rotate.interval.ms"
            if self.partition_change and ep != self.current_ep and not self._tombstone_exempt(ep):
                return "R3.3 partition change"
        if self._schedule_due(now):
            return "R3.4 rotate.schedule.interval.ms"
        return None

    def _tombstone_exempt(self, ep: str | None) -> bool:
        cfg = self.cfg
        # R3.3, with #904's unwrapping (12.1.0); before, no partition-change rotation happened at all
        if cfg.behavior_on_null_values != "write":
            return False
        t = cfg.tombstone_encoded_partition
        return (ep is not None and t in ep) or (self.current_ep is not None and t in self.current_ep)

    # --- the rotation (R3.1) ---------------------------------------------------------------
    def commit(self, reason: str) -> None:
        put = self.put
        committed = self.current_offset + 1
        for ep in list(self.files):
            chunks = self.files[ep]
            offsets = chunks[0] if len(chunks) == 1 else np.concatenate(chunks)
            start = int(offsets[0])
            key = object_key(self.cfg, self.topic, self.partition, ep, start)
            if key in self.existing:
                if self.cfg.conditional_writes_active:
                    self._conflict(ep, key, start)  # raises
                self.out.overwritten.append(key)
            self.out.files.append(CommittedFile(ep, offsets, reason, committed,
                                                put.index if put else None, put.at_ms if put else None))
            if self.existing or self.cfg.conditional_writes_active:
                self.existing.add(key)
            del self.files[ep]  # committed files are not re-checked (R8.3)
        self.offset_to_commit = committed
        self.out.committed_offset = committed
        self.record_count = 0
        self.base_ts = None
        self.schemas.clear()
        self.seen.clear()

    def _conflict(self, ep: str, key: str, start: int) -> None:
        """R8.2: the HEAD confirms the key; scan forward for the next free start offset, then
        put() rewinds the consumer to the minimum start of the still-open files."""
        limit = self.cfg.max_files_scan_limit
        nxt = start + 1 + limit
        for c in range(start + 1, start + 1 + limit):
            if c not in self.seen or object_key(self.cfg, self.topic, self.partition, self.seen[c], c) not in self.existing:
                nxt = c
                break
        self.out.conflicts.append({"key": key, "rule": "R8.2", "next_start": nxt,
                                   "topic": self.topic, "partition": self.partition})
        starts = [nxt if e == ep else int(chunks[0][0]) for e, chunks in self.files.items()]
        raise _Conflict(min(starts))

    # --- errant records (§13) --------------------------------------------------------------
    def errant(self, record: SinkRecord, err: ConnectorError) -> None:
        if isinstance(err, FatalError) or not self.cfg.skips_errant_records:
            raise _Death(TaskFailure(record.offset, err.rule, err.message, self.topic, self.partition,
                                     self.put.index if self.put else None))
        self.out.skipped.append(SkippedRecord(self.topic, self.partition, record.offset, err.rule, True))

    def _names_tombstone(self, ep: str, offset: int) -> bool:
        """R11.5: the full object key contains the tombstone string. Only digits of the
        offset change between keys of one ep, so the answer is cached per ep unless the
        tombstone string itself holds a digit."""
        tomb = self.cfg.tombstone_encoded_partition
        if any(ch.isdigit() for ch in tomb):
            return tomb in object_key(self.cfg, self.topic, self.partition, ep, offset)
        hit = self._tomb_cache.get(ep)
        if hit is None:
            hit = self._tomb_cache[ep] = tomb in object_key(self.cfg, self.topic, self.partition, ep, offset)
        return hit

    def check_writable(self, record: SinkRecord, ep: str) -> None:
        """R11.4 and the format writers' DataExceptions, before anything is written."""
        cfg = self.cfg
        if cfg.store_kafka_keys and record.key is None:
            raise DataError("R11.4", f"offset {record.offset}: null key while store.kafka.keys=true")
        if cfg.store_kafka_headers and not record.headers:
            raise DataError("R11.4", f"offset {record.offset}: no headers while store.kafka.headers=true")
        for view, fmt in self.formats.items():
            if fmt is None:
                continue
            if view == "value" and self._names_tombstone(ep, record.offset):
                if record.value is not None:  # R11.5: no value writer for such keys
                    raise FatalError("R11.5", f"object key for ep {ep!r} contains "
                                     f"{cfg.tombstone_encoded_partition!r}: no value writer, the record fails")
                continue
            value, schema = view_of(record, view)
            in_file = sum(len(c) for c in self.files.get(ep, ()))
            try:
                fmt.check_writable(value, schema, view)
                fmt.check_append(in_file, value, schema, view)
            except FormatDataError as e:
                raise DataError("R10", f"offset {record.offset} ({view}): {e}") from None
            except WriterFailure as e:
                raise FatalError("R10", f"offset {record.offset} ({view}): {e}; not a DataException, "
                                 "so the task dies even with a DLQ") from None

    def _append(self, ep: str, offsets: np.ndarray) -> None:
        chunks = self.files.get(ep)
        if chunks is None:
            self.files[ep] = [offsets]
        else:
            chunks.append(offsets)
        limit = self.cfg.max_files_scan_limit
        if len(self.seen) < limit:
            for o in offsets[: limit - len(self.seen)].tolist():
                self.seen.setdefault(o, ep)

    # --- write() (R2.2, R2.3) --------------------------------------------------------------
    def backing_off(self, now: int | None) -> bool:
        """R1.5: a writer created after a retriable error waits out retry.backoff.ms."""
        return self.failure_time is not None and now is not None and now - self.failure_time < self.cfg.retry_backoff_ms

    def start_write(self, put: Put) -> None:
        """The start of write(): the idle reset of the schedule (R3.5)."""
        self.put = put
        if self.sched > 0 and self.record_count == 0 and self.cfg.version.idle_schedule_reset:
            if self._schedule_due(put.at_ms):
                self.set_next_scheduled(put.at_ms)

    def write(self, put: Put, cols: RecordColumns) -> None:
        """Process a slice of the put's records (the end-of-write check is `end_of_write`)."""
        self.put = put
        now = put.at_ms
        i, n = 0, len(cols)
        while i < n:
            if self.fast and cols.simple[i]:
                j = self._run_end(cols, i, now)
                if j > i:
                    self._write_run(cols, i, j)
                    i = j
                    continue
            if self._step(cols.record(i), now):
                i += 1

    def end_of_write(self, now: int | None) -> None:
        """R2.3: commit on time with no new data."""
        if self.record_count > 0:
            reason = self.rotate_on_time(self.current_ep, self.current_ts, now)
            if reason:
                if self.sched > 0:
                    self.set_next_scheduled(now)
                self.commit(reason + " (no new data)")

    def _run_end(self, cols: RecordColumns, i: int, now: int | None) -> int:
        """The end of the run from `i` that R2.2 would write without any rule firing before a
        record (steps 4–7) and with no check failing at step 8."""
        code = int(cols.ep_codes[i])
        ep = cols.eps[code]
        if self.record_count > 0:
            if self.partition_change and ep != self.current_ep:
                return i
            if self._schedule_due(now):
                return i
        if self.max_open > 0 and ep not in self.files and len(self.files) >= self.max_open:
            return i
        end = min(len(cols), i + self.flush_size - self.record_count)
        if self._schedule_due(now):
            end = min(end, i + 1)  # the next record would see the schedule fire
        schema = int(cols.schema_codes[i])
        remembered = self.schemas.get(ep)
        if remembered is not None and remembered != schema:
            return i
        if self._names_tombstone(ep, int(cols.offsets[i])):
            return i
        base = None
        if self.periodic:
            base = self.base_ts if self.base_ts is not None else int(cols.ts[i])
        # look at a growing window, so a run cut short costs no more than its own length
        lo, width = i, 256
        while lo < end:
            hi = min(end, lo + width)
            ok = cols.simple[lo:hi] & (cols.ep_codes[lo:hi] == code) & (cols.schema_codes[lo:hi] == schema)
            if self.timed:
                ok &= cols.ts_valid[lo:hi]
                if base is not None:
                    ok &= (cols.ts[lo:hi] - base) < self.cfg.rotate_interval_ms
            bad = np.flatnonzero(~ok)
            if len(bad):
                return lo + int(bad[0])
            lo, width = hi, width * 4
        return end

    def _write_run(self, cols: RecordColumns, i: int, j: int) -> None:
        code = int(cols.ep_codes[i])
        ep = cols.eps[code]
        if self.timed:
            if self.base_ts is None:
                self.base_ts = int(cols.ts[i])
            self.current_ts = int(cols.ts[j - 1])
        self.schemas[ep] = int(cols.schema_codes[i])
        self._append(ep, cols.offsets[i:j])
        self.record_count += j - i
        self.current_ep = ep
        self.current_offset = int(cols.offsets[j - 1])
        if self.record_count >= self.flush_size:
            self.commit("R3.8 flush.size")

    def _step(self, record: SinkRecord, now: int | None) -> bool:
        """R2.2 for the head record. Returns True when the record was consumed (written or
        skipped), False when a rotation came first and the record is processed again."""
        ts: int | None = None
        # 1. timestamp (outside the PartitionException handler)
        if self.timed:
            try:
                ts = self.p.timestamp_for_rotation(record, now)
            except FatalError as e:
                self.errant(record, e)
            except (PartitionError, DataError) as e:
                self.errant(record, FatalError(e.rule, e.message))
            self.current_ts = ts
            if self.base_ts is None:
                self.base_ts = ts
        # 2. encoded partition
        try:
            ep = self.p.encode(record, now, ts if self.timed else None)
        except PartitionError as e:
            self.errant(record, e)
            return True
        except DataError as e:  # FieldPartitioner missing field: not a PartitionException
            self.errant(record, FatalError(e.rule, e.message))
            raise AssertionError("unreachable") from None
        # 3. the offset-to-filename cache that R8.2 scans
        if len(self.seen) < self.cfg.max_files_scan_limit:
            self.seen.setdefault(record.offset, ep)
        # 4. null-ness of the value schema per ep (R3.7)
        schema = self.codes.code(record.value_schema)
        if ep in self.schemas and (self.schemas[ep] == 0) != (schema == 0):
            self.commit("R3.7 schema null-ness change")
            return False
        if self.schemas.get(ep, 0) == 0 or schema == 0:
            self.schemas[ep] = schema
        # 5. time rotation
        reason = self.rotate_on_time(ep, ts, now)
        if reason:
            if self.sched > 0:
                self.set_next_scheduled(now)
            self.commit(reason)
            return False
        # 6. schema compatibility (R14)
        if self.record_count > 0 and self._schema_changes(record, self.codes.schemas[self.schemas[ep]]):
            self.schemas[ep] = schema
            self.commit("R14 schema change")
            return False
        # 7. max open files (R3.6)
        if self.max_open > 0 and ep not in self.files and len(self.files) >= self.max_open:
            self.commit("R3.6 partitioner.max.open.files")
            return False
        # 8. write
        try:
            self.check_writable(record, ep)
        except DataError as e:
            self.errant(record, e)
            return True
        self._append(ep, np.array([record.offset], dtype=np.int64))
        self.record_count += 1
        self.current_ep = ep
        self.current_offset = record.offset
        # 9. size
        if self.record_count >= self.flush_size:
            self.commit("R3.8 flush.size")
        return True

    def _schema_changes(self, record: SinkRecord, remembered: Schema | None) -> bool:
        mode = self.cfg.schema_compatibility
        new = record.value_schema
        if mode == "NONE":
            return new != remembered  # R14.2: Schema.equals
        # R14.3–R14.5: versions decide; a missing version cannot be projected
        if new is None or remembered is None:
            return new is not remembered
        if remembered.version is None or new.version is None:
            raise _Death(TaskFailure(record.offset, "R14.5",
                f"schema.compatibility={mode} needs schema versions; JSON-converter schemas have none",
                self.topic, self.partition, self.put.index if self.put else None))
        if mode == "FORWARD":
            return new.version < remembered.version
        structural = remembered.type != new.type or remembered.name != new.name
        return structural or new.version > remembered.version

    def snapshot_open(self) -> list[OpenFile]:
        return [OpenFile(self.topic, self.partition, ep, tuple(np.concatenate(chunks).tolist()))
                for ep, chunks in self.files.items()]


class TopicPartitionFold:
    """A writer over successive puts, with put()'s rewind and backoff around it (R1.5).
    `feed` may be called with one put's records in several slices (the Spark engine streams
    them); `end_put` closes the put."""

    def __init__(self, cfg: SinkConfig, partitioner: Partitioner, topic: str, partition: int,
                 existing_keys: Iterable[str] = (), fast: bool = True):
        self.cfg, self.p = cfg, partitioner
        self.topic, self.partition = topic, partition
        self.existing = set(existing_keys)
        self.codes = SchemaCodes()
        self.fast = fast
        self.w = _Writer(cfg, partitioner, topic, partition, self.existing, self.codes, fast=fast)
        self.pending: list[SinkRecord] = []  # rewound records waiting for the next put
        self.delivered: list[SinkRecord] = []  # what the consumer handed over, for rewinds
        self.started = False
        self.dead = False
        self.current_put: Put | None = None

    @property
    def result(self) -> FoldResult:
        return self.w.out

    def columns(self, records: Sequence[SinkRecord], now: int | None) -> RecordColumns:
        return columns_from_records(self.cfg, self.p, records, now, self.codes)

    def feed(self, put: Put, cols: RecordColumns | None) -> None:
        """Hand a put's records (or the next slice of them) to the writer's buffer and run
        the writer over them; `end_put` closes the put."""
        if self.dead:
            return
        if not self.started:
            if self.w.sched > 0:
                self.w.set_next_scheduled(put.at_ms)
            self.started = True
        records_in = cols is not None and len(cols) > 0
        if records_in and self.cfg.conditional_writes_active:
            self.delivered.extend(cols.record(i) for i in range(len(cols)))  # type: ignore[union-attr]
        if self.w.backing_off(put.at_ms):
            if records_in:
                self.pending.extend(cols.record(i) for i in range(len(cols)))  # type: ignore[union-attr]
            return
        self._guard(put, self._write, put, cols)

    def _write(self, put: Put, cols: RecordColumns | None) -> None:
        if self.current_put is not put:
            self.current_put = put
            self.w.start_write(put)
        if self.pending:
            rewound, self.pending = self.pending, []
            self.w.write(put, self.columns(rewound, put.at_ms))
        if cols is not None and len(cols):
            self.w.write(put, cols)

    def end_put(self, put: Put) -> None:
        """The end of write() (R2.3); an empty put still runs write() (R3.4, R3.5)."""
        if self.dead or self.w.backing_off(put.at_ms):
            return
        self._guard(put, self._end, put)

    def _end(self, put: Put) -> None:
        if self.current_put is not put:
            self.current_put = put
            self.w.start_write(put)
            if self.pending:
                rewound, self.pending = self.pending, []
                self.w.write(put, self.columns(rewound, put.at_ms))
        self.w.end_of_write(put.at_ms)

    def _guard(self, put: Put, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except _Conflict as c:
            self._rewind(put, c)
        except _Death as d:
            self.w.out.failure = d.failure
            self.dead = True
        except ConnectorError as e:  # a rule raised outside a handled step: the task dies
            self.w.out.failure = TaskFailure(None, e.rule, e.message, self.topic, self.partition, put.index)
            self.dead = True

    def _rewind(self, put: Put, c: _Conflict) -> None:
        # R1.5: rewind the consumer, drop the writer (its uploads are not aborted) and start a
        # fresh one that backs off for retry.backoff.ms.
        out = self.w.out
        self.w = _Writer(self.cfg, self.p, self.topic, self.partition, self.existing, self.codes, out, self.fast)
        self.w.failure_time = put.at_ms
        if self.w.sched > 0:
            self.w.set_next_scheduled(put.at_ms)
        self.pending = [r for r in self.delivered if r.offset >= c.rewind_to]

    def finish(self) -> FoldResult:
        self.w.out.open = self.w.snapshot_open()
        return self.w.out


def fold_topic_partition(
    cfg: SinkConfig,
    partitioner: Partitioner,
    topic: str,
    partition: int,
    puts: Iterable[Put],
    existing_keys: Iterable[str] = (),
    fast: bool = True,
) -> FoldResult:
    """Run one writer over its puts. The writer is created at the first put (R1.1).
    `existing_keys` are already in the bucket (a previous run): with conditional writes they
    conflict (R8.2), without they are overwritten."""
    fold = TopicPartitionFold(cfg, partitioner, topic, partition, existing_keys, fast)
    for put in puts:
        cols = put.columns
        if cols is None and put.records is not None:
            cols = fold.columns(put.records, put.at_ms)
        fold.feed(put, cols)
        fold.end_put(put)
        if fold.dead:
            break
    return fold.finish()
