"""An in-process Kafka-like log: topic-partitions with offsets, a committed-offset store for a
consumer group, and partition ownership by generation (for zombie fencing). It lets the
embedded default run with no JVM."""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class LogRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


class InProcessLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: dict[tuple[str, int], list[LogRecord]] = {}
        self._committed: dict[tuple[str, int], int] = {}
        self._owner = 0  # generation that owns every partition
        self.carry: dict[tuple[str, int], int] = {}  # state a faulty sink wrongly keeps across restarts

    def create(self, topics: dict[str, int]) -> None:
        with self._lock:
            for t, n in topics.items():
                for p in range(n):
                    self._parts.setdefault((t, p), [])

    def append(self, topic: str, partition: int, timestamp: int | None, key: bytes | None, value: bytes | None,
               headers: tuple[tuple[str, bytes | None], ...] = ()) -> int:
        with self._lock:
            part = self._parts.setdefault((topic, partition), [])
            rec = LogRecord(topic, partition, len(part), timestamp if timestamp is not None else int(time.time() * 1000),
                            key, value, headers)
            part.append(rec)
            return rec.offset

    def partitions(self) -> list[tuple[str, int]]:
        with self._lock:
            return sorted(self._parts)

    def read(self, tp: tuple[str, int], offset: int, limit: int) -> list[LogRecord]:
        with self._lock:
            return list(self._parts.get(tp, [])[offset:offset + limit])

    def end(self, tp: tuple[str, int]) -> int:
        with self._lock:
            return len(self._parts.get(tp, []))

    def committed(self) -> dict[tuple[str, int], int]:
        with self._lock:
            return dict(self._committed)

    def commit(self, generation: int, offsets: dict[tuple[str, int], int]) -> bool:
        """Commit for a generation; a fenced (older) generation is refused, like a consumer
        whose group moved on."""
        with self._lock:
            if generation != self._owner:
                return False
            self._committed.update(offsets)
            return True

    def take_over(self) -> int:
        with self._lock:
            self._owner += 1
            return self._owner

    def owner(self) -> int:
        with self._lock:
            return self._owner
