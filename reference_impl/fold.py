"""The per-topic-partition rotation fold: one TopicPartitionWriter, record by record (§2–§4).

`fold_topic_partition` is a pure function of (config, one topic-partition's puts). The local
engine calls it once per topic-partition; the Spark engine calls the same function inside
`applyInPandas`. There is no other implementation of these rules.

Not modelled here (they need S3 faults, which the suite injects): retriable errors and the
writer rewind (R1.5), conditional-write conflicts (R8.2), `max.write.duration.ms` (R9.1).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.errors import ConnectorError, DataError, FatalError, PartitionError
from reference_impl.expectation import ExpectedObject, OpenFile, SkippedRecord, TaskFailure
from reference_impl.formats import DataError as FormatDataError
from reference_impl.formats import format_for, view_of
from reference_impl.naming import object_key
from reference_impl.partitioning import Partitioner
from reference_impl.timeutil import next_scheduled_rotation, zone


@dataclass(frozen=True)
class Put:
    """One put() as this topic-partition's writer sees it: when, and its records."""

    index: int | None
    at_ms: int | None
    records: Sequence[SinkRecord]


@dataclass
class FoldResult:
    topic: str
    partition: int
    objects: list[ExpectedObject] = field(default_factory=list)
    committed_offset: int | None = None
    open: list[OpenFile] = field(default_factory=list)
    failure: TaskFailure | None = None
    skipped: list[SkippedRecord] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)  # R8.2: 412 on commit, skipped ahead
    overwritten: list[str] = field(default_factory=list)  # R8.1 off: an existing key replaced


class _Conflict(Exception):
    """FileExistsException (R8.2): retriable, caught by put() (R1.5)."""

    def __init__(self, rewind_to: int):
        self.rewind_to = rewind_to


class _Death(Exception):
    def __init__(self, failure: TaskFailure):
        self.failure = failure


class _Writer:
    """The state of one TopicPartitionWriter (TPW)."""

    def __init__(self, cfg: SinkConfig, partitioner: Partitioner, topic: str, partition: int,
                 existing: set[str], out: FoldResult | None = None):
        self.cfg = cfg
        self.existing = existing  # keys already in the bucket (shared across writer generations)
        self.seen: dict[int, str] = {}  # R2.2 step 3: offset -> ep, at most max.files.scan.limit
        self.failure_time: int | None = None
        self._tomb_cache: dict[str, bool] = {}
        self.p = partitioner
        self.topic, self.partition = topic, partition
        self.files: dict[str, list[SinkRecord]] = {}  # ep -> records, in open order
        self.schemas: dict[str, object] = {}  # ep -> remembered value schema (None allowed)
        self.record_count = 0
        self.current_offset = -1
        self.current_ep: str | None = None
        self.current_ts: int | None = None
        self.base_ts: int | None = None
        self.offset_to_commit: int | None = None
        self.next_sched: int | None = None
        self.out = out or FoldResult(topic, partition)
        self.put: Put | None = None
        v = cfg.version
        self.flush_size = cfg.flush_size
        self.periodic = cfg.rotate_interval_ms > 0 and partitioner.extractor is not None and partitioner.time_based
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

    def rotate_on_time(self, ep: str | None, ts: int | None, now: int | None) -> str | None:
        """R3.2–R3.4: the reason a time rotation fires, or None."""
        if self.record_count <= 0:
            return None
        if self.periodic:
            if ts is not None and self.base_ts is not None and ts - self.base_ts >= self.cfg.rotate_interval_ms:
                return "R3.2 rotate.interval.ms"
            if self.partition_change and ep != self.current_ep and not self._tombstone_exempt(ep):
                return "R3.3 partition change"
        if self.sched > 0 and now is not None and self.next_sched is not None and now >= self.next_sched:
            return "R3.4 rotate.schedule.interval.ms"
        return None

    def _tombstone_exempt(self, ep: str | None) -> bool:
        cfg = self.cfg
        if cfg.behavior_on_null_values != "write" or not cfg.version.tombstone_partition_change_exemption:
            return False
        t = cfg.tombstone_encoded_partition
        return (ep is not None and t in ep) or (self.current_ep is not None and t in self.current_ep)

    # --- the rotation (R3.1) ---------------------------------------------------------------
    def commit(self, reason: str) -> None:
        put = self.put
        tomb = self.cfg.tombstone_encoded_partition
        for ep in list(self.files):
            recs = self.files[ep]
            start = recs[0].offset
            key = object_key(self.cfg, self.topic, self.partition, ep, start)
            if key in self.existing:
                if self.cfg.conditional_writes_active:
                    self._conflict(ep, key, start)  # raises
                self.out.overwritten.append(key)
            siblings = tuple(
                (view, object_key(self.cfg, self.topic, self.partition, ep, start, view))
                for view in ("keys", "headers")
                if self.formats[view] is not None
            )
            self.out.objects.append(ExpectedObject(
                key=key,
                topic=self.topic,
                partition=self.partition,
                encoded_partition=ep,
                offsets=tuple(r.offset for r in recs),
                rotation=reason,
                committed_offset=self.current_offset + 1,
                put_index=put.index if put else None,
                at_ms=put.at_ms if put else None,
                sibling_keys=siblings,
                value_object=tomb not in key,
            ))
            self.existing.add(key)
            del self.files[ep]  # committed files are not re-checked (R8.3)
        self.offset_to_commit = self.current_offset + 1
        self.out.committed_offset = self.offset_to_commit
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
        starts = [nxt if e == ep else recs[0].offset for e, recs in self.files.items()]
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
            if view == "value":
                if self._names_tombstone(ep, record.offset):
                    if record.value is not None:  # R11.5: no value writer for such keys
                        raise FatalError("R11.5", f"object key {key!r} contains {tomb!r}: no value writer, the record fails")
                    continue
            value, schema = view_of(record, view)
            try:
                fmt.check_writable(value, schema, view)
            except FormatDataError as e:
                raise DataError("R10", f"offset {record.offset} ({view}): {e}") from None

    # --- write() (R2.2, R2.3) --------------------------------------------------------------
    def write(self, put: Put, buffer: list[SinkRecord]) -> None:
        """Process `buffer` (consumed from its head); R1.5's backoff returns at once."""
        self.put = put
        now = put.at_ms
        if self.failure_time is not None and now is not None and now - self.failure_time < self.cfg.retry_backoff_ms:
            return
        if self.sched > 0 and self.record_count == 0 and self.cfg.version.idle_schedule_reset:
            if now is not None and self.next_sched is not None and now >= self.next_sched:
                self.set_next_scheduled(now)  # R3.5
        while buffer:
            record = buffer[0]
            ts: int | None = None
            # 1. timestamp (outside the PartitionException handler)
            if self.p.time_based and self.p.extractor is not None:
                try:
                    ts = self.p.timestamp_for_rotation(record, now)
                except FatalError as e:
                    self.errant(record, e)
                except (PartitionError, DataError) as e:
                    # a PartitionException from the extractor itself is not caught either
                    self.errant(record, FatalError(e.rule, e.message))
                self.current_ts = ts
                if self.base_ts is None:
                    self.base_ts = ts
            # 2. encoded partition
            try:
                ep = self.p.encode(record, now, ts if self.p.time_based else None)
            except PartitionError as e:
                self.errant(record, e)
                buffer.pop(0)
                continue
            except DataError as e:  # FieldPartitioner missing field: not a PartitionException
                self.errant(record, FatalError(e.rule, e.message))
            # 3. the offset-to-filename cache that R8.2 scans
            if len(self.seen) < self.cfg.max_files_scan_limit:
                self.seen.setdefault(record.offset, ep)
            # 4. null-ness of the value schema per ep (R3.7)
            rec_schema = record.value_schema
            if ep in self.schemas and (self.schemas[ep] is None) != (rec_schema is None):
                self.commit("R3.7 schema null-ness change")
                continue
            if self.schemas.get(ep) is None or rec_schema is None:
                self.schemas[ep] = rec_schema
            # 5. time rotation
            reason = self.rotate_on_time(ep, ts, now)
            if reason:
                self.set_next_scheduled(now) if self.sched > 0 else None
                self.commit(reason)
                continue
            # 6. schema compatibility (R14)
            remembered = self.schemas.get(ep)
            if self.record_count > 0 and self._schema_changes(record, remembered):
                self.schemas[ep] = rec_schema
                self.commit("R14 schema change")
                continue
            # 7. max open files (R3.6)
            if self.max_open > 0 and ep not in self.files and len(self.files) >= self.max_open:
                self.commit("R3.6 partitioner.max.open.files")
                continue
            # 8. write
            try:
                self.check_writable(record, ep)
            except DataError as e:
                self.errant(record, e)
                buffer.pop(0)
                continue
            self.files.setdefault(ep, []).append(record)
            self.record_count += 1
            self.current_ep = ep
            self.current_offset = record.offset
            buffer.pop(0)
            # 9. size
            if self.record_count >= self.flush_size:
                self.commit("R3.8 flush.size")
        # R2.3: commit on time with no new data
        if self.record_count > 0:
            reason = self.rotate_on_time(self.current_ep, self.current_ts, now)
            if reason:
                self.set_next_scheduled(now) if self.sched > 0 else None
                self.commit(reason + " (no new data)")

    def _schema_changes(self, record: SinkRecord, remembered: object) -> bool:
        mode = self.cfg.schema_compatibility
        new = record.value_schema
        if mode == "NONE":
            return new != remembered  # R14.2: Schema.equals
        # R14.3–R14.5: versions decide; a missing version cannot be projected
        if new is None or remembered is None:
            return new is not remembered
        rv, nv = getattr(remembered, "version", None), new.version
        if rv is None or nv is None:
            raise _Death(TaskFailure(record.offset, "R14.5",
                f"schema.compatibility={mode} needs schema versions; JSON-converter schemas have none",
                self.topic, self.partition, self.put.index if self.put else None))
        if mode == "FORWARD":
            return nv < rv
        structural = getattr(remembered, "type", None) != new.type or getattr(remembered, "name", None) != new.name
        return structural or nv > rv

    def snapshot_open(self) -> list[OpenFile]:
        return [OpenFile(self.topic, self.partition, ep, tuple(r.offset for r in recs)) for ep, recs in self.files.items()]


def fold_topic_partition(
    cfg: SinkConfig,
    partitioner: Partitioner,
    topic: str,
    partition: int,
    puts: Iterable[Put],
    existing_keys: Iterable[str] = (),
) -> FoldResult:
    """Run one writer over its puts. The writer is created at the first put (R1.1).
    `existing_keys` are already in the bucket (a previous run): with conditional writes they
    conflict (R8.2), without they are overwritten."""
    existing = set(existing_keys)
    w = _Writer(cfg, partitioner, topic, partition, existing)
    buffer: list[SinkRecord] = []
    delivered: list[SinkRecord] = []  # what the consumer has handed over, for rewinds
    for n, put in enumerate(puts):
        if n == 0 and w.sched > 0:
            w.set_next_scheduled(put.at_ms)
        buffer.extend(put.records)
        delivered.extend(put.records)
        try:
            w.write(put, buffer)
        except _Conflict as c:
            # R1.5: rewind the consumer, drop the writer (its uploads are not aborted) and
            # start a fresh one that backs off for retry.backoff.ms.
            out = w.out
            w = _Writer(cfg, partitioner, topic, partition, existing, out)
            w.failure_time = put.at_ms
            if w.sched > 0:
                w.set_next_scheduled(put.at_ms)
            buffer[:] = [r for r in delivered if r.offset >= c.rewind_to]
        except _Death as d:
            w.out.failure = d.failure
            break
        except ConnectorError as e:  # a rule raised outside a handled step: the task dies
            w.out.failure = TaskFailure(None, e.rule, e.message, topic, partition, put.index)
            break
    w.out.open = w.snapshot_open()
    return w.out
