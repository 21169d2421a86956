"""The Python sink's source over a real Kafka broker (confluent-kafka): records read by offset,
offsets committed to the consumer group `connect-<name>`, log ends from the watermarks.

It has the same shape as `InProcessLog`, so the sink runs unchanged on either. Partition
ownership between sink instances of one target (the zombie fence) is kept in-process: the
instances live in this process, and the group's committed offsets are the broker's."""
from __future__ import annotations

import threading
import time

from adapters.pysink.log import LogRecord


class KafkaLog:
    def __init__(self, bootstrap: str, group: str):
        from confluent_kafka import Consumer, Producer

        self.bootstrap, self.group = bootstrap, group
        self._lock = threading.Lock()
        self._tps: list[tuple[str, int]] = []
        self._owner = 0
        self.carry: dict[tuple[str, int], int] = {}
        common = {"bootstrap.servers": bootstrap, "log_level": 0}
        self._producer = Producer({**common, "linger.ms": 0, "enable.idempotence": True})
        self._consumer = Consumer({**common, "group.id": group, "enable.auto.commit": False,
                                   "auto.offset.reset": "earliest", "enable.partition.eof": False})

    def create(self, topics: dict[str, int]) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        futures = admin.create_topics([NewTopic(t, num_partitions=n, replication_factor=1) for t, n in topics.items()],
                                      operation_timeout=30)
        for t, f in futures.items():
            try:
                f.result(timeout=40)
            except Exception as e:  # noqa: BLE001
                if "TOPIC_ALREADY_EXISTS" not in str(e):
                    raise RuntimeError(f"could not create topic {t!r}: {e}") from None
        with self._lock:
            self._tps = sorted({*self._tps, *((t, p) for t, n in topics.items() for p in range(n))})
        self.committed()  # wait for the group coordinator

    def append(self, topic: str, partition: int, timestamp: int | None, key: bytes | None, value: bytes | None,
               headers: tuple[tuple[str, bytes | None], ...] = ()) -> int:
        got: list[int] = []
        err: list[str] = []

        def done(e, msg) -> None:  # noqa: ANN001
            if e is not None:
                err.append(str(e))
            else:
                got.append(msg.offset())

        kw = {"timestamp": timestamp} if timestamp is not None else {}
        with self._lock:
            self._producer.produce(topic, value=value, key=key, partition=partition, headers=list(headers),
                                   on_delivery=done, **kw)
            self._producer.flush(30)
        if err or not got:
            raise RuntimeError(f"produce to {topic}-{partition} failed: {err or 'no delivery report in 30 s'}")
        return got[0]

    def partitions(self) -> list[tuple[str, int]]:
        with self._lock:
            return list(self._tps)

    def read(self, tp: tuple[str, int], offset: int, limit: int) -> list[LogRecord]:
        from confluent_kafka import TopicPartition

        if offset >= self.end(tp):
            return []
        with self._lock:
            self._consumer.assign([TopicPartition(tp[0], tp[1], offset)])
            out: list[LogRecord] = []
            deadline = time.monotonic() + 2.0
            while len(out) < limit and time.monotonic() < deadline:
                for m in self._consumer.consume(num_messages=limit - len(out), timeout=0.2):
                    if m.error() or m.offset() < offset:
                        continue
                    ts_type, ts = m.timestamp()
                    out.append(LogRecord(m.topic(), m.partition(), m.offset(), ts if ts_type else None,
                                         m.key(), m.value(), tuple(m.headers() or ())))
                if out and out[-1].offset + 1 >= self._high(tp):
                    break
            return [r for r in out if r.offset >= offset][:limit]

    def _high(self, tp: tuple[str, int]) -> int:
        from confluent_kafka import TopicPartition

        return self._consumer.get_watermark_offsets(TopicPartition(*tp), timeout=10)[1]

    def end(self, tp: tuple[str, int]) -> int:
        with self._lock:
            return self._high(tp)

    def _retrying(self, what: str, fn):  # noqa: ANN001, ANN202
        """The group coordinator comes up a little after the broker (its offsets topic is
        created on first use): retry its retriable errors, for at most 30 s."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + 30
        while True:
            try:
                return fn()
            except KafkaException as e:
                err = e.args[0] if e.args else None
                retriable = getattr(err, "retriable", lambda: False)() or "COORDINATOR" in str(e)
                if not retriable or time.monotonic() > deadline:
                    raise RuntimeError(f"{what} on group {self.group} at {self.bootstrap} failed for 30 s: {e}") from None
                time.sleep(0.2)

    def committed(self) -> dict[tuple[str, int], int]:
        from confluent_kafka import TopicPartition

        with self._lock:
            tps = [TopicPartition(t, p) for t, p in self._tps]
            if not tps:
                return {}
            res = self._retrying("reading committed offsets", lambda: self._consumer.committed(tps, timeout=10))
        return {(r.topic, r.partition): r.offset for r in res if r.offset >= 0}

    def commit(self, generation: int, offsets: dict[tuple[str, int], int]) -> bool:
        from confluent_kafka import TopicPartition

        with self._lock:
            if generation != self._owner:
                return False
            tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
            self._retrying("committing offsets", lambda: self._consumer.commit(offsets=tps, asynchronous=False))
            return True

    def take_over(self) -> int:
        with self._lock:
            self._owner += 1
            return self._owner

    def owner(self) -> int:
        with self._lock:
            return self._owner

    def close(self) -> None:
        with self._lock:
            self._consumer.close()
            self._producer.flush(5)
