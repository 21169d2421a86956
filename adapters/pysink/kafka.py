"""The Python sink over a real Kafka broker: a member of the consumer group `connect-<name>`
(confluent-kafka, `enable.auto.commit=false`), put() with each poll's batch (empty ones too),
offsets committed explicitly with what the task's pre_commit hands back.

A rebalance closes the writers of the revoked partitions (their uploads aborted, nothing
committed, R1.8): every writer under the eager assignor the group uses by default, only those of
the partitions that move under `consumer.override.partition.assignment.strategy`
=CooperativeStickyAssignor (librdkafka's cooperative-sticky). The new owner resumes from the
group's committed offsets (R1.2). A paused instance stops polling; the
broker evicts it after `max.poll.interval.ms` and another member takes the partitions. When
it is resumed it finishes what it was doing, its commit is refused (or its partitions are
reported lost) and it stops: a zombie, fenced by the group.
"""
from __future__ import annotations

import time
import uuid
from typing import Any

from adapters.pysink.log import TP, LogRecord
from adapters.pysink.sink import Fenced, Killed, SinkInstance, SinkSettings

# commit errors that mean "this member is not (or no longer) in the current generation"
_FENCING = ("UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID", "REBALANCE_IN_PROGRESS")


def consumer_timeouts(own_broker: bool) -> dict[str, Any]:
    """Small group timeouts. A broker we start allows 1 s sessions; a shared one keeps the
    broker default minimum (group.min.session.timeout.ms=6000)."""
    if own_broker:
        return {"session.timeout.ms": 2000, "heartbeat.interval.ms": 500, "max.poll.interval.ms": 4000}
    return {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "max.poll.interval.ms": 8000}


# Kafka Connect's assignor classes (a sink connector's `consumer.override.partition.assignment.
# strategy`) as librdkafka names them
ASSIGNORS = {"RangeAssignor": "range", "RoundRobinAssignor": "roundrobin",
             "CooperativeStickyAssignor": "cooperative-sticky"}


def assignment_strategy(config: dict[str, str]) -> dict[str, Any]:
    """The consumer's assignor as the connector config overrides it (the first of the list that
    librdkafka knows); nothing where the config names none (the group's default: eager range)."""
    named = [c.strip().rsplit(".", 1)[-1]
             for c in str(config.get("consumer.override.partition.assignment.strategy", "")).split(",")]
    known = [ASSIGNORS[c] for c in named if c in ASSIGNORS]
    return {"partition.assignment.strategy": known[0]} if known else {}


class KafkaSink(SinkInstance):
    def __init__(self, bootstrap: str, s3: Any, settings: SinkSettings, *, group: str, topics: list[str],
                 consumer_config: dict[str, Any] | None = None, max_batch: int = 500, **kw: Any):
        super().__init__(s3, settings, **kw)
        self.bootstrap, self.group, self.topics, self.max_batch = bootstrap, group, list(topics), max_batch
        self.conf = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", "enable.partition.eof": False,
                     "partition.assignment.strategy": "range", "log_level": 3,
                     **consumer_timeouts(False), **(consumer_config or {})}
        self.consumer: Any = None
        self.paused_ever = False
        self.leaving = False  # unsubscribed before close(): rebalance callbacks touch nothing
        self.lost: str | None = None
        self._retry: dict[TP, int] = {}  # offsets whose commit hit a rebalance: retried next poll
        self._callback_error: BaseException | None = None

    # -- assignment --
    def _guarded(self, callback: Any) -> Any:
        """A rebalance callback that never lets an exception reach librdkafka's binding. On
        Python < 3.12, confluent-kafka re-raises a callback's C-raised KafkaException from
        consume() as the bare KafkaError inside it, which is no Exception: it escaped the task's
        handlers and killed the thread. The error is kept and raised by poll_once instead."""
        def run(consumer: Any, partitions: list) -> None:
            try:
                callback(consumer, partitions)
            except BaseException as e:  # noqa: BLE001 - re-raised from poll_once
                self._callback_error = self._callback_error or e
        return run

    def _on_assign(self, consumer: Any, partitions: list) -> None:
        from confluent_kafka import KafkaException

        if self.leaving:
            return
        tps = [(p.topic, p.partition) for p in partitions]
        deadline = time.monotonic() + 30
        while True:  # the group coordinator may still be loading the offsets topic: retry, bounded
            try:
                committed = consumer.committed(partitions, timeout=15)
                break
            except KafkaException as e:
                err = e.args[0] if e.args else None
                if not (err is not None and err.retriable()) or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        for p in committed:
            self.positions[(p.topic, p.partition)] = p.offset if p.offset >= 0 else 0
        self.task.open(tps, self.clock())
        self.journal_event("assigned", {f"{t}-{q}": self.positions.get((t, q), 0) for t, q in tps})

    def _on_revoke(self, consumer: Any, partitions: list, lost: bool = False) -> None:
        if self.killed.is_set() or self.leaving:
            return  # a crash closes nothing; a leaving instance has closed its task already
        self.journal_event("lost" if lost else "revoked", [f"{p.topic}-{p.partition}" for p in partitions])
        if self.paused_ever:
            # a resumed zombie: the group moved on while it slept; _on_fenced deals with it
            self.lost = "partitions revoked after a pause"
            return
        # eager revocation names every partition; a cooperative one only those that move, and the
        # kept ones go on writing into their open files
        self.task.close([(p.topic, p.partition) for p in partitions])
        for p in partitions:
            self.positions.pop((p.topic, p.partition), None)
            self._retry.pop((p.topic, p.partition), None)

    def _connect(self) -> None:
        from confluent_kafka import Consumer

        self.consumer = Consumer(self.conf)
        self.consumer.subscribe(self.topics, on_assign=self._guarded(self._on_assign),
                                on_revoke=self._guarded(self._on_revoke),
                                on_lost=self._guarded(lambda c, ps: self._on_revoke(c, ps, lost=True)))

    # -- the poll --
    def pause(self) -> None:
        self.paused_ever = True
        super().pause()

    def poll_once(self) -> None:
        from confluent_kafka import TopicPartition

        self.start_task()
        if self.consumer is None:
            self._connect()
        self.was_paused = False
        msgs = self.consumer.consume(num_messages=self.max_batch, timeout=0.1)
        if self._callback_error is not None:
            e, self._callback_error = self._callback_error, None
            if isinstance(e, Exception):
                raise e
            raise RuntimeError(f"rebalance callback failed: {e!r}")
        if self.lost:
            raise Fenced(self.lost)
        batch: list[LogRecord] = []
        for m in msgs:
            if m.error():
                if self.paused_ever and "MAX_POLL" in m.error().name():
                    raise Fenced("evicted: max.poll.interval.ms exceeded while paused")
                continue
            ts_type, ts = m.timestamp()
            batch.append(LogRecord(m.topic(), m.partition(), m.offset(), ts if ts_type and ts >= 0 else None,
                                   m.key(), m.value(), tuple(m.headers() or ())))
        self.busy = True
        try:
            for r in batch:
                self.positions[r.tp] = r.offset + 1
            rewinds = self.task.put(batch, self.clock())
            for (t, p), off in rewinds.items():
                self.consumer.seek(TopicPartition(t, p, off))
                self.positions[(t, p)] = off
            offsets = {**self._retry, **self.task.pre_commit()}
            self._retry = {}
            if offsets:
                self.commit_offsets(offsets)
        finally:
            self.busy = False

    def commit_offsets(self, offsets: dict[TP, int]) -> None:
        from confluent_kafka import KafkaException, TopicPartition

        if self.killed.is_set():
            raise Killed()
        tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
        deadline = time.monotonic() + 20
        while True:
            try:
                self.consumer.commit(offsets=tps, asynchronous=False)
                self.journal_event("commit", {f"{t}-{p}": o for (t, p), o in offsets.items()})
                return
            except KafkaException as e:
                err = e.args[0] if e.args else None
                name = err.name() if err is not None and hasattr(err, "name") else str(e)
                if any(code in name for code in _FENCING):
                    if self.paused_ever:
                        raise Fenced(f"commit refused: {name}") from None
                    self._retry.update(offsets)  # a rebalance: the next poll retries (or revokes)
                    return
                if err is not None and getattr(err, "retriable", lambda: False)() and time.monotonic() < deadline:
                    time.sleep(0.2)
                    continue
                raise

    def prefetched(self, tp: TP, offset: int) -> LogRecord | None:
        """The record after `offset`, as a prefetching consumer would have held it."""
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": f"pysink-peek-{uuid.uuid4().hex[:8]}",
                      "enable.auto.commit": False, "log_level": 3})
        try:
            c.assign([TopicPartition(tp[0], tp[1], offset)])
            for m in c.consume(num_messages=1, timeout=5):
                if not m.error():
                    ts_type, ts = m.timestamp()
                    return LogRecord(m.topic(), m.partition(), m.offset(), ts if ts_type else None, m.key(), m.value(),
                                     tuple(m.headers() or ()))
            return None
        finally:
            c.close()

    def _finally(self) -> None:
        if self.consumer is not None:
            try:
                self._leave_group()
                self.consumer.close()  # auto-commit is off: closing commits nothing
            except Exception:
                pass
            self.consumer = None

    def _leave_group(self, timeout_s: float = 10.0, served_s: float = 0.3) -> None:
        """Unsubscribe and serve the rebalance events that follow before close(). A rebalance
        event that close() serves itself can hang it for good: the fallback rd_kafka_assign that
        confluent-kafka makes after the callback never returns once the group is terminating
        (librdkafka #4884, open), and it is made holding the GIL, so every thread of the process
        stops. A resumed zombie hung the default test run that way (pysink:broker, zombie-task:
        its pause outlasted max.poll.interval.ms, and it was closed with the group's events
        unserved). Bounded: after `timeout_s` close() is left to it."""
        self.leaving = True
        self.consumer.unsubscribe()
        started = time.monotonic()
        while time.monotonic() - started < timeout_s:
            self.consumer.poll(0.1)
            if time.monotonic() - started >= served_s and not self.consumer.assignment():
                return
