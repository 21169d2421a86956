"""Named scenarios for the input production topics carry (issue #35): a dotted topic name, text
every writer must carry as it is, a FieldPartitioner list in the user's (unsorted) order with a
nested path, two-digit partition numbers, records larger than a part, a null header value with
headers stored, and Decimals under the default json.decimal.format (BASE64).

Each is what a deployment produces: the topic names are ones Kafka takes ([a-zA-Z0-9._-]), the
records are within the 10 MiB the broker sinkcheck starts takes (message.max.bytes), and the
configs are ones the connector accepts.
"""
from __future__ import annotations

import base64
import json
from typing import Any, Callable

from conformance.catalog.base import BASE, JSON, PUBLIC_T
from conformance.inputs.scenario import FaultStep, Scenario

FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
BYTEARRAY = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
WITH_SCHEMAS = {"value.converter.schemas.enable": "true"}
KEYS_HEADERS = {"store.kafka.keys": "true", "keys.format.class": JSON,
                "store.kafka.headers": "true", "headers.format.class": JSON}
PART = 5 * 1024 * 1024  # the smallest s3.part.size the connector accepts
LARGE = PART + 512 * 1024  # a record this large spans two parts
# text a JSON writer must write as it is: markup (HTML-escaping writers turn it into \u003c…),
# quotes, backslashes, control characters, U+2028/U+2029, astral characters (surrogate pairs in
# Java), text that reads as a number, a boolean or null, and nothing at all
TEXTS = ("<b>bold</b> & <i>'it'</i>", 'say "hi" \\ bye', "tab\tnl\ncr\r\u0001\u001f\u007f", "line\u2028sep\u2029",
         "clef \U0001d11e smile \U0001f600", "12.50", "null", "true", "", "-0")


def _rec(topic: str, partition: int, seq: int, value: Any, key: Any = None, headers: list | None = None) -> dict:
    return {"topic": topic, "partition": partition, "timestamp": PUBLIC_T + seq * 1000,
            "key": f"k{seq}" if key is None else key, "value": value, "headers": headers or []}


def dotted_topic() -> Scenario:
    """A Debezium-style topic name with dots (`dbserver1.inventory.customers`): object keys,
    keys objects and file names carry it as it is (R5.1), dots and all; values hold markup."""
    topic = "dbserver1.inventory.customers"
    cfg = {**BASE, **KEYS_HEADERS, "flush.size": "3"}
    recs = [_rec(topic, 0, i, {"seq": i, "name": ["Ann <ann@x.io>", "Bob & Co", "Zoë"][i % 3]},
                 headers=[["op", "c"], ["source.db", "inventory"]]) for i in range(8)]
    return Scenario("dotted-topic", cfg, {topic: 1}, recs, notes="R5.1: the topic's name as it is")


TEXT_SCHEMA = {"type": "struct", "name": "com.acme.Customer", "optional": False, "fields": [
    {"field": "seq", "type": "int64", "optional": False},
    {"field": "name", "type": "string", "optional": False},
    {"field": "note", "type": "string", "optional": True},
    {"field": "raw", "type": "bytes", "optional": False},
    {"field": "tags", "type": "map", "keys": {"type": "string", "optional": False},
     "values": {"type": "string", "optional": True}, "optional": False}]}


def text_escaping_stream() -> Scenario:
    """Structs whose strings hold what JSON writers differ on (TEXTS), in values, map keys,
    record keys and header values, and empty strings and byte arrays: the connector's Jackson
    escapes control characters only, writes U+2028 and astral characters raw (UTF-8), never
    escapes markup, and keeps text that reads as a number or null a string (R10.1, R11.3)."""
    topic = "CDC_Customers"
    cfg = {**BASE, **WITH_SCHEMAS, **KEYS_HEADERS, "flush.size": "4"}
    recs = []
    for i in range(len(TEXTS)):
        t = TEXTS[i]
        payload = {"seq": i, "name": t, "note": None if i % 4 == 3 else TEXTS[(i + 3) % len(TEXTS)],
                   "raw": base64.b64encode(t.encode()[: i % 3]).decode(), "tags": {t: t, "k": None}}
        # header texts SimpleHeaderConverter gives back as strings (no number, boolean or null)
        recs.append(_rec(topic, 0, i, {"schema": TEXT_SCHEMA, "payload": payload}, key=t,
                         headers=[["note", TEXTS[i % 2]], ["trace", f"t-{i}"]]))
    return Scenario("text-escaping-stream", cfg, {topic: 1}, recs, notes="R10.1, R11.3: text as it is")


PLACE_SCHEMA = {"type": "struct", "name": "com.acme.Shipment", "optional": False, "fields": [
    {"field": "seq", "type": "int64", "optional": False},
    {"field": "region", "type": "string", "optional": True},
    {"field": "tier", "type": "int32", "optional": True},
    {"field": "vip", "type": "boolean", "optional": False},
    {"field": "origin", "type": "struct", "name": "com.acme.Origin", "optional": False, "fields": [
        {"field": "zone", "type": "string", "optional": False}]}]}


def field_partition_unsorted() -> Scenario:
    """FieldPartitioner on `tier,region,origin.zone,vip`: the fields in the order the user wrote
    them, not sorted (R6.2), a nested path printed whole, a boolean, values with a space, '=' and
    '/' written as they are; on partitions 2 and 11 of a dotted 12-partition topic."""
    topic = "com.acme.shipments.v2"
    cfg = {**BASE, **WITH_SCHEMAS, "flush.size": "2", "partitioner.class": FIELD,
           "partition.field.name": "tier,region,origin.zone,vip", "s3.part.size": str(PART)}
    recs = []
    for i in range(12):
        payload = {"seq": i, "region": ["eu central", "us", None][i % 3], "tier": i % 2, "vip": i % 4 == 1,
                   "origin": {"zone": ["k=v", "DE", "x/y"][i % 3 if i < 6 else 0]}}
        recs.append(_rec(topic, (2, 11)[i % 2], i, {"schema": PLACE_SCHEMA, "payload": payload}))
    return Scenario("field-partition-unsorted", cfg, {topic: 12}, recs, notes="R6.2: the user's field order")


def two_digit_partition() -> Scenario:
    """A 12-partition topic whose records go to partitions 10, 11 and 3 (a few hot ones):
    `partition=10` and `<topic>+10+…` as the number is, not padded to the widest (R5.1, R6.1)."""
    topic = "com.acme.orders.v2"
    cfg = {**BASE, "flush.size": "2"}
    recs = [_rec(topic, (10, 11, 3)[i % 3], i, {"seq": i}) for i in range(12)]
    return Scenario("two-digit-partition", cfg, {topic: 12}, recs, notes="R5.1, R6.1")


def record_larger_than_part() -> Scenario:
    """A record of 5.5 MiB between small ones, s3.part.size 5 MiB (R7.1): the upload sends a part
    in the middle of the record and the rest at the commit; the file is the flush.size records
    it would be with small records, in one object. The last file stays open with another such
    record in it: its upload is in progress at the end, a part up, nothing visible."""
    cfg = {**BASE, "flush.size": "3", "s3.part.size": str(PART)}
    recs = [_rec("events", 0, i, {"seq": i, "pad": "x" * (LARGE if i in (1, 4) else 8)}) for i in range(5)]
    return Scenario("record-larger-than-part", cfg, {"events": 1}, recs, notes="R7.1: parts are not files")


def bytearray_record_larger_than_part() -> Scenario:
    """The same with ByteArrayFormat: a 5.5 MiB byte array after a small one; the file holds
    both, the separator after each (R10.2, R7.1); the third record stays open."""
    cfg = {**BASE, "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
           "format.class": BYTEARRAY, "flush.size": "2", "s3.part.size": str(PART)}
    recs = []
    for i in range(3):
        raw = json.dumps({"seq": i, "pad": "y" * (LARGE if i == 1 else 4)}, separators=(",", ":")).encode()
        recs.append(_rec("events", 0, i, base64.b64encode(raw).decode()))
    return Scenario("bytearray-record-larger-than-part", cfg, {"events": 1}, recs, notes="R7.1, R10.2")


def null_header_stored() -> Scenario:
    """store.kafka.headers=true and a record whose header value is null after five written ones
    (R11.4): the task stops at it; the files committed before it stay, nothing after it is
    written. The stream settles first so the commit is seen."""
    cfg = {**BASE, **KEYS_HEADERS, "flush.size": "2"}
    recs = [_rec("events", 0, i, {"seq": i}, headers=[["trace", f"t-{i}"], ["tenant", "acme"]]) for i in range(8)]
    recs[5] = {**recs[5], "headers": [["trace", "t-5"], ["tenant", None]]}
    return Scenario("null-header-stored", cfg, {"events": 1}, recs,
                    faults=[FaultStep(5, "quiet", {"seconds": 30})], notes="R11.4: a null header value stops the task")


DEC_SCHEMA = {"type": "struct", "name": "com.acme.Payment", "optional": False, "fields": [
    {"field": "seq", "type": "int64", "optional": False},
    {"field": "region", "type": "string", "optional": False},
    {"field": "tier", "type": "int32", "optional": False},
    {"field": "amount", "type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": "2"}, "optional": False},
    {"field": "fee", "type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": "0"}, "optional": True}]}


def _unscaled(n: int) -> str:
    return base64.b64encode(n.to_bytes(max(1, (n.bit_length() + 8) // 8), "big", signed=True)).decode()


def decimal_base64() -> Scenario:
    """Decimals under the default json.decimal.format (BASE64): the unscaled value's two's
    complement bytes in base64, negative, zero and past a long (R10.1); FieldPartitioner on
    `tier,region` (the user's order, R6.2)."""
    cfg = {**BASE, **WITH_SCHEMAS, "flush.size": "3", "partitioner.class": FIELD, "partition.field.name": "tier,region",
           "s3.part.size": str(PART)}
    amounts = (1999, -1, 0, 10**20 + 7, -(2**63), 127, 128, -129)
    recs = [_rec("events", 0, i, {"schema": DEC_SCHEMA, "payload": {
        "seq": i, "region": "eu", "tier": i % 2, "amount": _unscaled(a), "fee": None if i % 3 == 0 else _unscaled(i * 5)}})
        for i, a in enumerate(amounts)]
    return Scenario("decimal-base64", cfg, {"events": 1}, recs, notes="R10.1 BASE64, R6.2")


INPUT_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "dotted-topic": dotted_topic,
    "text-escaping-stream": text_escaping_stream,
    "field-partition-unsorted": field_partition_unsorted,
    "two-digit-partition": two_digit_partition,
    "record-larger-than-part": record_larger_than_part,
    "bytearray-record-larger-than-part": bytearray_record_larger_than_part,
    "null-header-stored": null_header_stored,
    "decimal-base64": decimal_base64,
}
