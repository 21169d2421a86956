"""How long the connector may take to catch up over records whose files are already in S3.

Under conditional writes (R8.1) a task that re-reads records another writer already made files
of (a zombie's late uploads, or a crashed task's files completed before its offsets were
committed) meets each such file with a 412: FileExistsException, retriable (R8.2). put() then
discards the writer and waits `retry.backoff.ms` before writing again (R1.5), and the next start
it resumes from is the failed file's start + 1: TopicPartitionWriter.findNextAvailableFile
returns the first offset not in the writer's offset-to-filename map, and a writer that rotated
at that file (flush.size 1) has seen no other record. So the catch-up advances one record per
backoff, and leaks one upload per step (R7.6). Seen on 12.1.9 under flush.size=1 with
rotate.schedule.interval.ms: ten files the zombie had written cost ten 412s, one every 6.0 s,
before the first new file.
"""
from __future__ import annotations

from reference_impl.config import SinkConfig

# what a step costs beyond the backoff: the put that rewinds, the poll that refetches
STEP_OVERHEAD_S = 1.0
# the most a catch-up is allowed, whatever the record count: a sink still moving after this is
# not catching up
MOST_S = 600.0


def catch_up_allowance_s(cfg: SinkConfig | None, records: int) -> float:
    """Seconds the sink may need, on top of an ordinary settle, to re-read `records` records
    whose files may all exist already: one retry.backoff.ms (and a poll) each under conditional
    writes; nothing without them (an existing object is overwritten in place, R8.1)."""
    if cfg is None or not cfg.conditional_writes_active or records <= 0:
        return 0.0
    per_step = max(cfg.retry_backoff_ms, 0) / 1000 + STEP_OVERHEAD_S
    return min(records * per_step, MOST_S)
