"""One topic-partition's writer in the model, record by record through R2.2: extract the time,
encode the partition, rotate (§3), write, and the fast path over a run of records no rule but
the size rule can split (reference_impl.engine.fold drives it put by put)."""
from __future__ import annotations

import numpy as np

from reference_impl.config import SinkConfig
from reference_impl.connect_data import Schema, SinkRecord
from reference_impl.errors import ConnectorError, DataError, FatalError, PartitionError
from reference_impl.engine.expectation import OpenFile, SkippedRecord, TaskFailure
from reference_impl.formats import DataError as FormatDataError
from reference_impl.formats import WriterFailure, format_for, view_of
from reference_impl.naming import format_options, object_key
from reference_impl.partitioning import Partitioner
from reference_impl.schema_evolution import ProjectionError, incompatibility, project_record
from reference_impl.timeutil import next_scheduled_rotation, zone
from reference_impl.engine.fold_data import (CommittedFile, FoldResult, Put, RecordColumns, SchemaCodes,
    TaskDeath, WriteConflict)


# --- the writer -----------------------------------------------------------------------------

class TopicPartitionWriter:
    """The state of one TopicPartitionWriter (TPW)."""

    def __init__(self, cfg: SinkConfig, partitioner: Partitioner, topic: str, partition: int,
                 existing: set[str], schema_codes: SchemaCodes, out: FoldResult | None = None,
                 fast: bool = True):
        self.cfg = cfg
        self.p = partitioner
        self.topic, self.partition = topic, partition
        self.existing = existing  # keys already in the bucket (shared across writer generations)
        self.codes = schema_codes
        self.checks = cfg.version.schema_checks
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
        raise WriteConflict(min(starts))

    # --- errant records (§13) --------------------------------------------------------------
    def errant(self, record: SinkRecord, err: ConnectorError) -> None:
        if isinstance(err, FatalError) or not self.cfg.skips_errant_records:
            raise TaskDeath(TaskFailure(record.offset, err.rule, err.message, self.topic, self.partition,
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
                fmt.check_writable(value, schema, view, format_options(cfg))
                fmt.check_append(in_file, value, schema, view, format_options(cfg))
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
        remembered = self.codes.schemas[self.schemas[ep]]
        try:
            change = incompatibility(self.cfg.schema_compatibility, record.value_schema, remembered, self.checks)
        except ProjectionError as e:
            self.errant(record, DataError("R14.5", f"offset {record.offset}: {e}"))
            return True
        if change is not None and self.record_count > 0:
            self.schemas[ep] = schema
            self.commit(f"R14 schema change ({change})")
            return False
        # 7. max open files (R3.6)
        if self.max_open > 0 and ep not in self.files and len(self.files) >= self.max_open:
            self.commit("R3.6 partitioner.max.open.files")
            return False
        # 8. write the record projected onto the file's schema (R14.7)
        if (self.cfg.schema_compatibility != "NONE" and remembered is not None and record.value_schema is not None
                and record.value_schema != remembered):
            try:
                record = project_record(record, remembered, self.checks)
            except ProjectionError as e:
                self.errant(record, DataError("R14.7", f"offset {record.offset}: {e}"))
                return True
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

    def snapshot_open(self) -> list[OpenFile]:
        return [OpenFile(self.topic, self.partition, ep, tuple(np.concatenate(chunks).tolist()))
                for ep, chunks in self.files.items()]
