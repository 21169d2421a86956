"""The generator's production shapes (issue #35): topic names Kafka takes, partitions renamed one
to one (so every file a stream makes is the same file under another name), a record larger than
a part only where its notation can grow, and the input classes a scenario meets."""
from __future__ import annotations

from conformance.generators.input_classes import input_classes
from conformance.generators.large_records import LARGE_VALUE_BYTES, MIN_PART_SIZE, padded
from conformance.generators.topic_shapes import KAFKA_TOPIC, LONG_TOPIC, SECOND_TOPIC, TOPIC_NAMES, renamed
from conformance.inputs.scenario import Scenario


def _stream() -> Scenario:
    recs = [{"topic": "orders", "partition": i % 2, "timestamp": 1 + i, "key": f"k{i}", "value": {"seq": i},
             "headers": []} for i in range(6)]
    return Scenario("s", {"flush.size": "2", "topics": "orders"}, {"orders": 2}, recs)


def _by_tp(sc: Scenario) -> list[list[int]]:
    out: dict[tuple[str, int], list[int]] = {}
    for r in sc.records:
        out.setdefault((r["topic"], r["partition"]), []).append(r["value"]["seq"])
    return sorted(out.values())


def test_R5_1_every_drawn_topic_name_is_one_kafka_takes_with_room_for_a_run_tag_and_a_file_name():
    assert all(KAFKA_TOPIC.fullmatch(t) and len(t) <= 249 - 4 for t in TOPIC_NAMES + (SECOND_TOPIC,))
    # <topic>+<partition>+<20-digit offset>.keys.json within a file name's 255 bytes
    assert len(f"{LONG_TOPIC}+15+{0:020d}.headers.json") <= 255


def test_R6_1_shapes_rename_topic_partitions_one_to_one_and_keep_each_partition_s_records():
    sc = _stream()
    for shape, topics in (("as-drawn", {"com.acme.orders.v2": 2}), ("hot-two-digit", {"com.acme.orders.v2": 12}),
                          ("two-topics", {"com.acme.orders.v2": 2, SECOND_TOPIC: 16})):
        out = renamed(sc, "com.acme.orders.v2", shape)
        assert out.topics == topics and _by_tp(out) == _by_tp(sc), shape
        assert out.connector["topics"] == ",".join(topics) and out.kafka_problem() is None
    assert {r["partition"] for r in renamed(sc, "CDC_Customers", "hot-two-digit").records} == {10, 3}
    assert "topics-several" in input_classes(renamed(sc, "x.y", "two-topics"))
    assert {"partition-two-digit", "topic-dotted"} <= input_classes(renamed(sc, "x.y", "hot-two-digit"))


def test_R7_1_a_large_record_grows_only_a_value_whose_notation_can_grow():
    assert len(padded({"seq": 1}, LARGE_VALUE_BYTES)["pad"]) > MIN_PART_SIZE
    assert padded({"schema": {"type": "struct"}, "payload": {"seq": 1}}, 10) is None
    assert padded(None, 10) is None and padded("seq=1", 3, "string") == "seq=1 xxx"
    # ByteArrayConverter's values are base64: they grow inside, and stay base64 of a JSON object
    import base64
    import json

    grown = padded(base64.b64encode(b'{"seq":3}').decode(), 4, "bytearray")
    assert json.loads(base64.b64decode(grown)) == {"seq": 3, "pad": "xxxx"}
    assert padded("seq=1", 3, "bytearray") is None
