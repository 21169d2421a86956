"""A sink's consumer-group offsets and its topics' log ends, read from outside the group.

Reads go through a plain Consumer that carries the group's id but never subscribes, so it never
joins the group. The admin client's ListConsumerGroupOffsets is avoided on purpose: librdkafka
dereferences a null consumer-group handle when that request meets NOT_COORDINATOR (the
coordinator of a new group is still loading) and the whole process dies with SIGSEGV
(librdkafka #5040, confluent-kafka-python #1982; seen here in the sampler of pysink:broker).
"""
from __future__ import annotations

import threading
from typing import Any, Mapping

TP = tuple[str, int]


class GroupOffsets:
    def __init__(self, bootstrap: str, group: str):
        from confluent_kafka import Consumer

        self.group = group
        self._bootstrap = bootstrap
        self._admin: Any = None
        self._consumer: Any = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                        "enable.auto.commit": False, "log_level": 3})
        self._lock = threading.Lock()  # the sampler thread and the caller's thread share it

    def committed(self, topics: Mapping[str, int], timeout_s: float = 15) -> dict[TP, int]:
        """Committed offsets of every partition of `topics` (name -> partition count) that has one."""
        from confluent_kafka import TopicPartition

        tps = [TopicPartition(t, p) for t, n in sorted(topics.items()) for p in range(n)]
        if not tps:
            return {}
        with self._lock:
            got = self._consumer.committed(tps, timeout=timeout_s)
        return {(tp.topic, tp.partition): tp.offset for tp in got if tp.error is None and tp.offset >= 0}

    def log_ends(self, topics: Mapping[str, int], timeout_s: float = 15) -> dict[TP, int]:
        """The next offset to be written, per partition of `topics`."""
        from confluent_kafka import TopicPartition

        out = {}
        with self._lock:
            for t, n in sorted(topics.items()):
                for p in range(n):
                    _, high = self._consumer.get_watermark_offsets(TopicPartition(t, p), timeout=timeout_s)
                    out[(t, p)] = high
        return out

    def _describe(self, timeout_s: float) -> Any:
        from confluent_kafka.admin import AdminClient

        with self._lock:
            if self._admin is None:
                self._admin = AdminClient({"bootstrap.servers": self._bootstrap, "log_level": 3})
            admin = self._admin
        return admin.describe_consumer_groups([self.group], request_timeout=timeout_s)[self.group].result(timeout=timeout_s + 5)

    def members(self, timeout_s: float = 10) -> frozenset[str]:
        """The member ids in the group now (each consumer instance of a sink task has its own)."""
        return frozenset(self.member_clients(timeout_s))

    def member_clients(self, timeout_s: float = 10) -> dict[str, str]:
        """Member id -> client id of each member in the group now: the client id says which
        task a member consumes for, the member id which instance of it."""
        return {m.member_id: m.client_id for m in self._describe(timeout_s).members}

    def settled(self, topics: Mapping[str, int], timeout_s: float = 10) -> frozenset[str] | None:
        """The member ids when the group is Stable and its members' assignments hold every
        partition of `topics` (no rebalance under way, every partition owned); else None."""
        from confluent_kafka import ConsumerGroupState

        desc = self._describe(timeout_s)
        if desc.state != ConsumerGroupState.STABLE or not desc.members:
            return None
        owned = {(tp.topic, tp.partition) for m in desc.members if m.assignment
                 for tp in m.assignment.topic_partitions}
        if any((t, p) not in owned for t, n in topics.items() for p in range(n)):
            return None
        return frozenset(m.member_id for m in desc.members)

    def close(self) -> None:
        with self._lock:
            if self._consumer is not None:
                self._consumer.close()  # never subscribed, auto-commit off: leaves the group as it was
                self._consumer = None
            self._admin = None
