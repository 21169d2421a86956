"""Named scenarios whose records are written by Confluent's Protobuf serializer and read by its
ProtobufConverter: a producer registers its proto3 schema (a package, a nested message, a repeated
message, an enum, a oneof, a map, a proto3 `optional` field, a google.protobuf.Timestamp and a
StringValue wrapper, sint32/uint32/bytes/double/bool scalars) under `<topic>-value` and writes its
messages; the converter reads each record's schema from the registry by id and the version its
subject holds it under, and hands the sink Connect data (ProtobufData, the converter's defaults).

Played on Confluent's connector and the Python sink (the sinks that read ProtobufConverter's data).
"""
from __future__ import annotations

import base64
from typing import Any, Callable

from conformance.catalog.base import BASE, PUBLIC_T
from conformance.inputs.scenario import Scenario

PROTOBUF_CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
REGISTRY_URL = "http://schema-registry:8081"  # a deployment's; the run's own registry stands in for it
PROTOBUF_VALUES = {"value.converter": PROTOBUF_CONVERTER, "value.converter.schema.registry.url": REGISTRY_URL}
BASE_PROTOBUF = {k: v for k, v in BASE.items() if k != "value.converter.schemas.enable"}  # JsonConverter's own
AVRO_FORMAT = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET_FORMAT = "io.confluent.connect.s3.format.parquet.ParquetFormat"
TOPIC = "com.acme.orders.proto"

# written as Confluent's ProtobufSchema.canonicalString() writes a schema: what its serializer
# registers, and what its converter sends the registry again to learn the version
_FIELDS_V1 = """\
  int64 seq = 1;
  optional string region = 2;
  Status status = 3;
  Customer customer = 4;
  repeated Line lines = 5;
  google.protobuf.Timestamp placed_at = 6;
  map<string, string> attributes = 7;
  google.protobuf.StringValue note = 8;
  sint32 delta = 9;
  uint32 units = 10;
  bytes checksum = 11;
  double amount = 12;
  bool gift = 13;
  repeated string tags = 14;
"""
_TAIL = """
  oneof coupon {
    string code = 15;
    int64 cents = 16;
  }

  message Customer {
    string id = 1;
    int32 tier = 2;
  }
  message Line {
    string sku = 1;
    int32 qty = 2;
  }
  enum Status {
    NEW = 0;
    PAID = 1;
    SHIPPED = 2;
  }
}
"""
_HEAD = """\
syntax = "proto3";
package com.acme.orders;

import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

message Order {
"""
ORDER_V1 = _HEAD + _FIELDS_V1 + _TAIL
# v2: two fields added (a producer's backward compatible change): a plain string and a proto3
# optional int32
ORDER_V2 = _HEAD + _FIELDS_V1 + "  string channel = 17;\n  optional int32 priority = 18;\n" + _TAIL
TEXTS = ("plain", "<b>bold</b> & \"quoted\"", "üñï ©ode \\ back", "tab\tand\nnewline", "")


def order(i: int) -> dict[str, Any]:
    """The i-th order, in the notation of conformance.inputs.protobuf_wire: defaults (0, "", false,
    the first enum symbol) now and then, which proto3 does not write and the converter reads back."""
    text = TEXTS[i % len(TEXTS)]
    out: dict[str, Any] = {
        "seq": i, "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "lines": [{"sku": f"sku-{j}", "qty": j + i % 2} for j in range(i % 3)],
        "placed_at": PUBLIC_T + i * 1000 + i % 4, "delta": (i % 5) - 2, "units": [0, 7, 4_000_000_000][i % 3],
        "checksum": base64.b64encode(bytes([i, 255 - i, 7])).decode() if i % 4 else "",
        "amount": [0.0, 12.5, -3.25, 1e-7][i % 4], "gift": i % 5 == 0, "tags": [t for t in ("a", "b/c") if i % 2][: i % 3],
        "attributes": {"channel": ["web", "app"][i % 2], "note": text} if i % 3 else {},
    }
    out["region"] = [None, "eu", "us", "", "eu/west"][i % 5]  # None: not set ("" is set, and written)
    if i % 3 != 2:
        out["customer"] = {"id": f"c-{i % 5}", "tier": i % 3}
    if i % 2:
        out["note"] = text
    if i % 3 == 1:
        out["code"] = "SPRING"
    elif i % 3 == 2:
        out["cents"] = 0 if i % 4 == 2 else 1234567890123
    return {k: v for k, v in out.items() if v is not None}


def order_v2(i: int) -> dict[str, Any]:
    return {**order(i), "channel": ["web", "", "app"][i % 3], **({"priority": i % 4} if i % 2 else {})}


def _records(n: int, schema: str = ORDER_V1, partitions: int = 2, start: int = 0,
             payload: Callable[[int], dict[str, Any]] = order) -> list[dict[str, Any]]:
    return [{"topic": TOPIC, "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000, "key": f"order-{i % 7}",
             "value": {"schema": schema, "payload": payload(i)}, "headers": [["source", "shop"]]}
            for i in range(start, start + n)]


def _evolving(versions: str) -> list[dict[str, Any]]:
    recs = []
    for i, v in enumerate(versions):
        schema, payload = (ORDER_V1, order) if v == "1" else (ORDER_V2, order_v2)
        recs += _records(1, schema, partitions=1, start=i, payload=payload)
    return recs


def protobuf_converter_to_json() -> Scenario:
    """ProtobufConverter values written as JsonFormat lines (R10.1): proto3's defaults as values, an
    unset `optional` field, message and wrapper as null, the oneof a struct of its members, the enum a
    string, the Timestamp epoch milliseconds, uint32 above 2^31 as a long."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "flush.size": "3"}
    return Scenario("protobuf-converter-to-json", cfg, {TOPIC: 2}, _records(12),
                    notes="ProtobufConverter + JsonFormat")


def protobuf_converter_to_avro() -> Scenario:
    """ProtobufConverter values written as AvroFormat (R10.3): the Connect schema ProtobufData
    makes (its Tag and Enum parameters among connect.parameters) as the file's Avro schema."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "format.class": AVRO_FORMAT, "flush.size": "3"}
    return Scenario("protobuf-converter-to-avro", cfg, {TOPIC: 2}, _records(12),
                    notes="ProtobufConverter + AvroFormat")


def protobuf_converter_to_parquet() -> Scenario:
    """ProtobufConverter values written as ParquetFormat (R10.4), FieldPartitioner on the proto3
    `optional` region (unset: null; "" and a '/' among its values, R6.2)."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "format.class": PARQUET_FORMAT, "flush.size": "2",
           "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
           "partition.field.name": "region", "s3.part.size": str(5 * 1024 * 1024)}
    return Scenario("protobuf-converter-to-parquet", cfg, {TOPIC: 1}, _records(10, partitions=1),
                    notes="ProtobufConverter + ParquetFormat + FieldPartitioner")


def protobuf_evolution_backward() -> Scenario:
    """BACKWARD with ProtobufConverter and AvroFormat: the producer moves to version 2 (two fields
    added, which the registry accepts) while another still writes version 1: a newer version
    rotates, an older record is projected onto the file's version 2 (its new fields null), R14.3."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "format.class": AVRO_FORMAT, "flush.size": "4",
           "schema.compatibility": "BACKWARD"}
    return Scenario("protobuf-evolution-backward", cfg, {TOPIC: 1}, _evolving("111221112211"),
                    notes="R14.3 through ProtobufConverter: newer rotates, older projected")


def protobuf_evolution_forward() -> Scenario:
    """FORWARD with ProtobufConverter and JsonFormat: an older version rotates, a newer record is
    projected onto the file's older version (its added fields dropped), R14.3."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "flush.size": "4", "schema.compatibility": "FORWARD"}
    return Scenario("protobuf-evolution-forward", cfg, {TOPIC: 1}, _evolving("112221221112"),
                    notes="R14.3 through ProtobufConverter: older rotates, newer projected")


def protobuf_evolution_full() -> Scenario:
    """FULL with ProtobufConverter and ParquetFormat: as BACKWARD, a newer version rotates and an
    older record is projected onto the file's newer version, R14.3."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "format.class": PARQUET_FORMAT, "flush.size": "4",
           "schema.compatibility": "FULL", "s3.part.size": str(5 * 1024 * 1024)}
    return Scenario("protobuf-evolution-full", cfg, {TOPIC: 1}, _evolving("121122211212"),
                    notes="R14.3 through ProtobufConverter under FULL")


def protobuf_evolution_none() -> Scenario:
    """NONE with ProtobufConverter and AvroFormat: any change of version rotates, whichever way
    (R14.2): no record is projected."""
    cfg = {**BASE_PROTOBUF, **PROTOBUF_VALUES, "format.class": AVRO_FORMAT, "flush.size": "3",
           "schema.compatibility": "NONE"}
    return Scenario("protobuf-evolution-none", cfg, {TOPIC: 1}, _evolving("1121122211"),
                    notes="R14.2 through ProtobufConverter: every change rotates")


PROTOBUF_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "protobuf-converter-to-json": protobuf_converter_to_json,
    "protobuf-converter-to-avro": protobuf_converter_to_avro,
    "protobuf-converter-to-parquet": protobuf_converter_to_parquet,
    "protobuf-evolution-backward": protobuf_evolution_backward,
    "protobuf-evolution-forward": protobuf_evolution_forward,
    "protobuf-evolution-full": protobuf_evolution_full,
    "protobuf-evolution-none": protobuf_evolution_none,
}
