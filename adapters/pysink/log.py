"""An in-process Kafka-like log for the embedded default (no JVM).

Topics with partitions; `append` assigns offsets; `read` from an offset; a committed-offset
store per consumer group, with its history (so an observation can sample it over time), and
group ownership by generation: `take_over(group)` hands every partition to a new member and
fences the older ones (their commits are refused), like a consumer group after a rebalance.
Thread-safe.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass

TP = tuple[str, int]


@dataclass(frozen=True)
class LogRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()

    @property
    def tp(self) -> TP:
        return (self.topic, self.partition)


class InProcessLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: dict[TP, list[LogRecord]] = {}
        self._committed: dict[str, dict[TP, int]] = {}
        self._history: dict[str, list[tuple[int, dict[TP, int]]]] = {}
        self._owner: dict[str, int] = {}

    # --- topics and records ----------------------------------------------------------------
    def create(self, topics: dict[str, int]) -> None:
        with self._lock:
            for t, n in topics.items():
                for p in range(n):
                    self._parts.setdefault((t, p), [])

    def append(self, topic: str, partition: int, timestamp: int | None, key: bytes | None,
               value: bytes | None, headers: tuple[tuple[str, bytes | None], ...] = ()) -> int:
        """Append one record; returns its offset. A missing timestamp gets the append time
        (CreateTime set by the producer, as a Kafka producer does)."""
        with self._lock:
            if (topic, partition) not in self._parts:
                raise KeyError(f"unknown topic-partition {topic}-{partition}")
            part = self._parts[(topic, partition)]
            ts = timestamp if timestamp is not None else int(time.time() * 1000)
            rec = LogRecord(topic, partition, len(part), ts, key, value, tuple(headers))
            part.append(rec)
            return rec.offset

    def partitions(self) -> list[TP]:
        with self._lock:
            return sorted(self._parts)

    def read(self, tp: TP, offset: int, limit: int) -> list[LogRecord]:
        with self._lock:
            return list(self._parts.get(tp, [])[offset:offset + limit])

    def end(self, tp: TP) -> int:
        with self._lock:
            return len(self._parts.get(tp, []))

    def ends(self) -> dict[TP, int]:
        with self._lock:
            return {tp: len(v) for tp, v in self._parts.items()}

    # --- consumer groups -------------------------------------------------------------------
    def committed(self, group: str) -> dict[TP, int]:
        with self._lock:
            return dict(self._committed.get(group, {}))

    def commit_history(self, group: str) -> list[tuple[int, dict[TP, int]]]:
        """(wall ms, offsets committed by that call), every accepted commit in order."""
        with self._lock:
            return list(self._history.get(group, []))

    def commit(self, group: str, generation: int, offsets: dict[TP, int]) -> bool:
        """Commit for a member of `group`; a fenced (older) generation is refused, like a
        consumer whose group has moved on (ILLEGAL_GENERATION)."""
        with self._lock:
            if generation != self._owner.get(group, 0):
                return False
            self._committed.setdefault(group, {}).update(offsets)
            self._history.setdefault(group, []).append((int(time.time() * 1000), dict(offsets)))
            return True

    def take_over(self, group: str) -> int:
        """A new member takes every partition of the group; returns its generation."""
        with self._lock:
            self._owner[group] = self._owner.get(group, 0) + 1
            return self._owner[group]

    def owner(self, group: str) -> int:
        with self._lock:
            return self._owner.get(group, 0)
