"""The Python sink: a Kafka-to-S3 sink following the Confluent S3 sink's semantics, written from
the spec (it never imports `reference_impl`, which checks it).

Layers, as in Kafka Connect, one module each:
* `Writer` (adapters/pysink/writer.py): one topic-partition's writer (R2.2 order: extract time,
  encode partition, schema null-ness (R3.7), time rotation, schema change under
  schema.compatibility (R14, adapters/pysink/projection.py), the record projected onto its
  file's schema, append, flush.size). Open files stream multipart parts of `s3.part.size` to
  S3 (R7.1); a rotation uploads and completes every open file of the TP (R3.1) and only then
  sets the offset to commit (R4.1).
* What a file holds and its name (adapters/pysink/encoding.py): JsonFormat or ByteArrayFormat
  values (R10.1, R10.2), plus JsonFormat keys and headers objects beside each value object
  (R11); tombstones written as keys (and headers) objects under `tombstone.encoded.partition`
  (R12.3, R6.7). Time-based partitioners take Wallclock, Record or RecordField time (R6.5,
  adapters/pysink/timestamps.py). There is no DLQ: every DataException stops the task (R13
  without a reporter).
* `SinkTask` (here): `start` (the bucket check, R1.3), `open`/`put`/`pre_commit`/`close` over
  writers; the null policy (R12); a retriable S3 error drops the writer and rewinds to the first
  uncommitted record (R1.5).
* `SinkInstance` (here): the consumer side that calls `put` with each poll's batch (empty
  batches too, so scheduled rotation fires) and commits what `pre_commit` hands back. Two
  sources: `InProcessSink` here (an `InProcessLog`), `KafkaSink` in adapters/pysink/kafka.py (a
  real consumer group). Every S3 call goes through the instance, which can be paused (a
  zombie), killed (a crash: nothing closed, nothing committed) and journals what it did.

The configuration is adapters/pysink/settings.py, the exceptions adapters/pysink/errors.py.
The clock (`clock() -> epoch ms`) is injectable; `ManualClock` drives put() times in tests.
An instance runs the `SinkTask` class it is given: the faulty variants (adapters.pysink.VARIANTS)
are subclasses of SinkTask and Writer in adapters/pysink/targets/variants.py.
"""
from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable

from adapters.pysink.encoding import convert
from adapters.pysink.errors import (Fenced, Killed, Retriable, SinkConfigError, Stopped, TaskFailed, is_retriable,
                                    s3_status)
from adapters.pysink.log import TP, InProcessLog, LogRecord
from adapters.pysink.settings import MIN_PART, SinkSettings
from adapters.pysink.writer import Writer

# the sink's names, those of the modules it was split into included
__all__ = ["Clock", "wall_clock", "ManualClock", "SinkTask", "SinkInstance", "InProcessSink", "PySink", "Writer",
           "SinkSettings", "MIN_PART", "Killed", "Fenced", "Stopped", "SinkConfigError", "TaskFailed", "Retriable",
           "is_retriable"]

Clock = Callable[[], int]

# the attempts the bucket check gets where S3's answer is one an S3 client retries (a 5xx, a
# throttle, a broken connection): the AWS SDK v2's three (s3.part.retries' default)
START_ATTEMPTS = 3


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


class SinkTask:
    """put/preCommit/open/close over one writer per assigned TP."""

    writer_class: type[Writer] = Writer

    def __init__(self, instance: "SinkInstance", settings: SinkSettings, scratch: dict):
        # scratch: the sink's local state, kept across its restarts (the correct sink keeps none)
        self.instance, self.settings, self.scratch = instance, settings, scratch
        self.writers: dict[TP, Writer] = {}
        self.rng = random.Random(0)

    def start(self) -> None:
        """R1.3: before its first record the task checks its bucket with a HeadBucket. The answer
        decides (`bucket_answer`): the bucket there, missing (the start fails, "Non-existent S3
        bucket"), or an error the start fails on, after the attempts an S3 client gives an answer
        it retries."""
        bucket = self.settings.bucket
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                self.instance.s3("head_bucket", Bucket=bucket)
                return
            except (Killed, Fenced):
                raise
            except Exception as e:  # noqa: BLE001 - S3's answer, read below
                answer = self.bucket_answer(s3_status(e))
                if answer == "there":
                    self.instance.journal_event("start-up", f"bucket {bucket} taken as there: {str(e)[:160]}")
                    return
                if answer == "missing":
                    raise TaskFailed(f"Non-existent S3 bucket: {bucket}") from e
                if is_retriable(e) and attempt < START_ATTEMPTS:
                    continue
                raise TaskFailed(f"checking bucket {bucket}: {type(e).__name__}: {e}") from e

    def bucket_answer(self, status: int) -> str:
        """What an error answer to the bucket check says: "there" for a 301 (the bucket is in
        another region, the writes go where they go) or a 403 (credentials that may write but not
        head it), "missing" for a 404, else "error"."""
        if status in (301, 403):
            return "there"
        return "missing" if status == 404 else "error"

    def open(self, tps: list[TP], now: int) -> None:
        for tp in tps:
            self.writers[tp] = self.writer_class(self, tp, now)  # R1.1: replaced, not closed

    def close(self, tps: list[TP] | None = None) -> None:
        """Close the writers of `tps` (every writer when None), aborting their open uploads
        (R1.8). A cooperative rebalance revokes only the partitions that move: the kept ones keep
        their writers and open files (what R1.7's close-all breaks, #649)."""
        for tp in list(self.writers) if tps is None else [tp for tp in tps if tp in self.writers]:
            self.writers.pop(tp).close()

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
                if not self.retriable(e):
                    raise TaskFailed(f"{type(e).__name__} writing {tp[0]}-{tp[1]}: {e}") from e
                self.instance.journal_event("retriable", f"{tp[0]}-{tp[1]}", str(e)[:200])
                rewind = self.recover(tp, w, now)
                if rewind is not None:
                    rewinds[tp] = rewind
        return rewinds

    def retriable(self, error: Exception) -> bool:
        """R7.4: whether an error writing a topic-partition is retriable (the writer is dropped
        and its records written again, R1.5) or kills the task."""
        return is_retriable(error)

    def recover(self, tp: TP, w: Writer, now: int) -> int | None:
        """R1.5: after a retriable S3 error the writer is dropped (its uploads aborted) and the
        consumer rewound to its first record not in S3, for a fresh writer to write again after
        retry.backoff.ms: nothing is lost, and nothing is committed that is not in S3. Returns
        the offset to rewind to (None: nothing to write again)."""
        starts = [f.start for f in w.files.values()] + [r.offset for r in w.buffer]
        w.abort_all()
        fresh = self.writer_class(self, tp, now)
        fresh.failure_time = now
        fresh.offset_to_commit = w.offset_to_commit
        self.writers[tp] = fresh
        return min(starts) if starts else None

    def pre_commit(self) -> dict[TP, int]:
        out = {}
        for tp, w in self.writers.items():
            if w.offset_to_commit is not None:
                out[tp] = w.offset_to_commit
                w.offset_to_commit = None
        return out

    def evicted(self) -> None:
        """The group moved on: another member owns the partitions and writes their files. This
        task writes nothing more (a file of its own would land over the new owner's object of
        the same key): it closes, aborting its own uploads and committing nothing (R1.7/R1.8)."""
        self.close()


# --- instances: the consumer side ---------------------------------------------------------------

class SinkInstance:
    """One member of the sink's consumer group, running a SinkTask on its own thread (or
    stepped by hand with `poll_once`)."""

    def __init__(self, s3: Any, settings: SinkSettings, *, task_class: type[SinkTask] = SinkTask,
                 clock: Clock = wall_clock, scratch: dict | None = None, journal: list | None = None,
                 name: str = "pysink", poll_interval_s: float = 0.05,
                 on_put: Callable[[str, int, list[LogRecord]], None] | None = None):
        self.s3_client, self.settings, self.clock = s3, settings, clock
        self.on_put = on_put  # the consumer side's record of each put (a simulation's put schedule)
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
        self.task = task_class(self, settings, self.scratch)
        self.thread: threading.Thread | None = None
        self.turns: Any = None  # a simulation's scheduler pacing the loop (start)
        self.task_started = False  # the task's start() ran (start_task)
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
        if op == "complete_multipart_upload" and self.stopping.is_set():
            # A stop is graceful only while the instance ends before the task runs again. One
            # still inside a put when asked to stop (an S3 call of it hung) may outlive the stop:
            # the restart goes ahead without it (stop()'s timeout; a simulation's parked
            # instance), and the new instance writes the same keys, under the new config's
            # boundaries too. A Complete now would land this instance's stale file over the new
            # object of the same key: records the new instance committed would be gone (P-NOLOSS,
            # seen: a hung UploadPart across update-config). So it completes nothing more: its
            # files are aborted on the way out and nothing is committed, as a stop asks (R1.7,
            # R1.8); the records are the new instance's to write.
            raise Stopped(f"asked to stop: {kw.get('Key')} is not completed")
        out = getattr(self.s3_client, op)(**kw)
        self._gate()  # a pause during the call freezes the instance right after it
        return out

    # -- faults --
    def kill(self) -> None:
        self.killed.set()
        self.running.set()

    def stop(self, timeout_s: float = 10) -> None:
        """Stop gracefully: finish the current poll without completing a file (s3), close every
        writer, commit nothing."""
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

    def start_task(self) -> None:
        """The task's start() (its bucket check, R1.3), once, before the instance's first poll:
        Connect starts a task before it polls for it. A start that fails fails the instance."""
        if not self.task_started:
            self.task_started = True
            self.task.start()

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
        except Stopped as e:  # a stop overtook its put: close (abort its uploads), commit nothing
            self.exited = "stopped"
            self.journal_event("stopped", str(e))
            try:
                self.task.close()
            except (Killed, Exception):
                pass
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
        """The group moved on: the task is told, and the instance stops."""
        self.journal_event("fenced", self.exited)
        try:
            self.task.evicted()
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
        self.task.open(tps, self.clock())
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
        self.start_task()
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
                    self.task.open([tp], self.clock())
                batch += self.log.read(tp, self.positions[tp], self.max_batch)
            for r in batch:
                self.positions[r.tp] = r.offset + 1
            now = self.clock()
            if self.on_put is not None:
                self.on_put(self.name, now, batch)
            rewinds = self.task.put(batch, now)
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
