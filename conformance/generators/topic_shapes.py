"""Topics as production has them, for the generator: names with dots, underscores, dashes, upper
case and digits (up to 200 characters), a topic of many partitions whose records go to a few hot
ones with two-digit numbers, and two topics of different partition counts in one connector.

The shapes are drawn after everything else of a generated scenario (as the rebalance shapes
are), so a seed's other draws stay as they were, and they only rename: each topic-partition
that gets records becomes another one, one to one. What the sink must write per partition
(R2-R5) is then the same files under other names, and what made the stream testable (a file
closed, a fatal record after a commit) still holds.
"""
from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import strategies as st

from conformance.inputs.scenario import Scenario, converter_kind

# Kafka's topic names: [a-zA-Z0-9._-], at most 249 characters. The longest drawn leaves room for
# the run tag a warm stack appends (`-r21`) and keeps `<topic>+<partition>+<offset>.keys.json`
# with a 20-digit offset within the 255 bytes of a file name where a store keeps objects as files
LONG_TOPIC = ("com.acme.payments.settlements.eu-west-1.v3." + "ledger_entries." * 10 + "X" * 200)[:200]
TOPIC_NAMES = ("orders", "com.acme.orders.v2", "CDC_Customers", "dbserver1.inventory.customers",
               "Orders-2024_eu.v10", LONG_TOPIC)
KAFKA_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}")
# the second topic of a connector reading two, and its partition count (the first keeps its own)
SECOND_TOPIC, SECOND_PARTITIONS = "audit.events_v1", 16
# a topic of many partitions of which a few are hot: where a topic's partitions 0 and 1 go
MANY_PARTITIONS, HOT = 12, (10, 3)
PARTITION_SHAPES = ("as-drawn", "two-topics", "hot-two-digit")


def renamed(sc: Scenario, topic: str, shape: str) -> Scenario:
    """`sc` (one topic of 1 or 2 partitions) on `topic`, its partitions placed by `shape`:
    `hot-two-digit` puts partitions 0 and 1 on partitions 10 and 3 of a 12-partition topic;
    `two-topics` moves partition 1 to partition 10 of a second, 16-partition topic."""
    (old, n), = sc.topics.items()
    if not KAFKA_TOPIC.fullmatch(topic) or topic == SECOND_TOPIC:
        raise ValueError(f"{topic!r} is no topic name Kafka takes here")
    where = {p: (topic, p) for p in range(n)}
    topics = {topic: n}
    if shape == "hot-two-digit":
        where = {p: (topic, HOT[p]) for p in range(n)}
        topics = {topic: MANY_PARTITIONS}
    elif shape == "two-topics":
        where = {0: (topic, 0), 1: (SECOND_TOPIC, 10)}
        topics = {topic: n, SECOND_TOPIC: SECOND_PARTITIONS}
    records = []
    for r in sc.records:
        t, p = where[int(r["partition"])] if r["topic"] == old else (r["topic"], r["partition"])
        records.append({**r, "topic": t, "partition": p})
    connector = dict(sc.connector)
    if "topics" in connector:
        connector["topics"] = ",".join(topics)
    return replace(sc, topics=topics, records=records, connector=connector)


def with_topic_shapes(draw: st.DrawFn, sc: Scenario, generated_config: bool) -> Scenario:
    """A generated scenario on a production-like topic name (one draw in two keeps `orders`)
    and, where one task reads one or two partitions, its partitions on two-digit numbers or
    split over two topics in one draw in three each. A user's connector keeps its own topics."""
    if not generated_config or len(sc.topics) != 1:
        return sc
    topic = draw(st.sampled_from(TOPIC_NAMES)) if draw(st.booleans()) else TOPIC_NAMES[0]
    (_, n), = sc.topics.items()
    shapes = PARTITION_SHAPES if sc.connector.get("tasks.max", "1") == "1" else PARTITION_SHAPES[:1]
    shape = draw(st.sampled_from(shapes))
    # a registry's subject is a topic's (TopicNameStrategy): a producer's schema versions split
    # over two topics would come to one subject out of the order the registry accepts them in
    if shape == "two-topics" and (n == 1 or converter_kind(sc.connector) == "avro"):
        shape = "hot-two-digit"
    return renamed(sc, topic, shape)
