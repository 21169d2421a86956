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

from typing import Any, Callable, Iterable, Sequence

from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.errors import ConnectorError
from reference_impl.engine.expectation import TaskFailure
from reference_impl.partitioning import Partitioner
from reference_impl.engine.fold_data import (FoldResult, Put, RecordColumns, SchemaCodes, TaskDeath,
    WriteConflict, columns_from_records)
from reference_impl.engine.fold_writer import TopicPartitionWriter


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
        self.w = TopicPartitionWriter(cfg, partitioner, topic, partition, self.existing, self.codes, fast=fast)
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
        except WriteConflict as c:
            self._rewind(put, c)
        except TaskDeath as d:
            self.w.out.failure = d.failure
            self.dead = True
        except ConnectorError as e:  # a rule raised outside a handled step: the task dies
            self.w.out.failure = TaskFailure(None, e.rule, e.message, self.topic, self.partition, put.index)
            self.dead = True

    def _rewind(self, put: Put, c: WriteConflict) -> None:
        # R1.5: rewind the consumer, drop the writer (its uploads are not aborted) and start a
        # fresh one that backs off for retry.backoff.ms.
        out = self.w.out
        self.w = TopicPartitionWriter(self.cfg, self.p, self.topic, self.partition, self.existing, self.codes, out, self.fast)
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
