"""A scenario's topics and records on a real broker: topics created, records produced with
explicit partitions, timestamps, keys and headers, and the offset each record landed at
(targets record it in their Observation)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from adapters.observation import RecordToProduce
from adapters.target import TargetError

# The broker sinkcheck starts accepts messages this large (adapters.processes.broker.KafkaBroker): a
# scenario's large records (the multipart stories' 200 KiB) go through.
MAX_MESSAGE_BYTES = 10 * 1024 * 1024


def create_topics(bootstrap: str, topics: Mapping[str, int]) -> None:
    """Create each topic (name -> partition count) with one replica; an existing one is kept.
    No retention: scenarios carry record timestamps from the past, which time-based retention
    would delete within its first check, also on a broker sinkcheck did not start."""
    from confluent_kafka.admin import AdminClient, NewTopic

    if not topics:
        return
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    futures = admin.create_topics([NewTopic(t, num_partitions=n, replication_factor=1, config={"retention.ms": "-1"})
                                   for t, n in topics.items()], operation_timeout=30)
    for t, f in futures.items():
        try:
            f.result(timeout=40)
        except Exception as e:  # noqa: BLE001
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise TargetError(f"could not create topic {t!r}: {e}") from None
    await_leaders(admin, topics)


def await_leaders(admin: Any, topics: Mapping[str, int], timeout_s: float = 60) -> None:
    """Until every partition of `topics` has a leader in the broker's metadata. The controller
    answers CreateTopics before the partitions have leaders (and before every broker's metadata
    cache knows them): a producer started at once is told UNKNOWN_TOPIC_OR_PART and fails its
    records with `Local: Unknown partition`."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        meta = admin.list_topics(timeout=15).topics
        waiting = [t for t, n in topics.items()
                   if t not in meta or meta[t].error is not None or len(meta[t].partitions) < n
                   or any(p.leader < 0 or p.error is not None for p in meta[t].partitions.values())]
        if not waiting:
            return
        if time.monotonic() > deadline:
            raise TargetError(f"timed out after {timeout_s:.0f}s waiting for leaders of the partitions of topics "
                              f"{sorted(waiting)}")
        time.sleep(0.1)


def fresh_topics(bootstrap: str, topics: Mapping[str, int], timeout_s: float = 60) -> None:
    """Topics as `create_topics` makes them, but empty: an earlier scenario's topic of the same
    name on a broker that stays up (a warm stack) is deleted first, and its deletion awaited."""
    import time

    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 3})
    existing = set(admin.list_topics(timeout=15).topics) & set(topics)
    if existing:
        for t, f in admin.delete_topics(sorted(existing), operation_timeout=30).items():
            try:
                f.result(timeout=40)
            except Exception as e:  # noqa: BLE001
                if "UNKNOWN_TOPIC" not in str(e):
                    raise TargetError(f"could not delete topic {t!r} left by an earlier run: {e}") from None
        deadline = time.monotonic() + timeout_s
        while set(admin.list_topics(timeout=15).topics) & existing:
            if time.monotonic() > deadline:
                raise TargetError(f"timed out after {timeout_s:.0f}s waiting for the deletion of topics "
                                  f"{sorted(existing)} (left by an earlier run on this broker)")
            time.sleep(0.2)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            create_topics(bootstrap, topics)
            return
        except TargetError as e:  # a deleted topic's name is taken again once the controller is done
            if "marked for deletion" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def new_producer(bootstrap: str) -> Any:
    """An idempotent producer that waits for every replica: each record lands exactly once."""
    from confluent_kafka import Producer

    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                     "linger.ms": 5, "message.timeout.ms": 60000, "message.max.bytes": MAX_MESSAGE_BYTES,
                     "log_level": 3})


def produce_records(producer: Any, records: Sequence[RecordToProduce], timeout_s: float = 60) -> list[int]:
    """Produce `records` in order and return the offset of each, or raise TargetError naming
    the first record that was not delivered."""
    results: dict[int, tuple[int | None, str | None]] = {}

    def delivered(i: int):
        def done(err: Any, msg: Any) -> None:
            results[i] = (None, str(err)) if err else (msg.offset(), None)
        return done

    for i, r in enumerate(records):
        if r.timestamp == 0:  # librdkafka sends a timestamp of 0 as the time of sending
            raise TargetError(f"record #{i} ({r.topic}-{r.partition}) has timestamp 0, which librdkafka, sinkcheck's "
                              "producer, replaces with the current time: give it a timestamp of 1 or later")
    for i, r in enumerate(records):
        kw = {"timestamp": r.timestamp} if r.timestamp is not None else {}
        while True:
            try:
                producer.produce(r.topic, value=r.value, key=r.key, partition=r.partition,
                                 headers=list(r.headers) or None, on_delivery=delivered(i), **kw)
                break
            except BufferError:  # the local queue is full: let deliveries drain
                producer.poll(0.1)
        producer.poll(0)
    remaining = producer.flush(timeout_s)
    if remaining:
        raise TargetError(f"{remaining} record(s) not delivered within {timeout_s:.0f}s")
    failed = [(i, e) for i, (_, e) in sorted(results.items()) if e]
    if failed:
        raise TargetError(f"{len(failed)} record(s) failed delivery; first: record #{failed[0][0]} "
                          f"({records[failed[0][0]].topic}-{records[failed[0][0]].partition}): {failed[0][1]}")
    if len(results) != len(records):
        raise TargetError(f"{len(records) - len(results)} record(s) have no delivery report")
    return [results[i][0] for i in range(len(records))]  # type: ignore[misc]
