"""Named scenarios whose records are written in the Schema Registry's wire format, read by
Confluent's AvroConverter: what most production S3 sinks run. A producer application registers
its own Avro schema (an .avsc with a namespace, docs, nested records, an enum, unions, logical
types, a fixed, maps and arrays of records) under `<topic>-value` and writes its records; the
connector's converter reads each record's schema from the registry by id and the version it has
under its subject, and hands the sink Connect data (AvroData).

Each names the registry as a deployment does (`value.converter.schema.registry.url`); sinkcheck
runs its own registry and points the converter at it.
"""
from __future__ import annotations

from typing import Any, Callable

from conformance.catalog.base import BASE, PUBLIC_T
from conformance.inputs.scenario import Scenario

AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
REGISTRY_URL = "http://schema-registry:8081"  # a deployment's; the run's own registry stands in for it
AVRO_VALUES = {"value.converter": AVRO_CONVERTER, "value.converter.schema.registry.url": REGISTRY_URL}
BASE_AVRO = {k: v for k, v in BASE.items() if k != "value.converter.schemas.enable"}  # JsonConverter's own
AVRO_FORMAT = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET_FORMAT = "io.confluent.connect.s3.format.parquet.ParquetFormat"
TOPIC = "com.acme.orders.v2"
TEXTS = ("plain", "<b>bold</b> & \"quoted\"", "üñï ©ode \\ back", "tab\tand\nnewline", "", "12.50", "null")
# header values SimpleHeaderConverter gives back as they are (it parses "12.50" into a number, "null" into null)
HEADER_TEXTS = TEXTS[:5]

ORDER_V1: dict[str, Any] = {
    "type": "record", "name": "Order", "namespace": "com.acme.orders.v2", "doc": "An order as the shop emits it",
    "fields": [
        {"name": "seq", "type": "long", "doc": "the order's sequence number"},
        {"name": "region", "type": ["null", "string"], "default": None},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"],
                                    "default": "NEW"}},
        {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
            {"name": "id", "type": "string"},
            {"name": "tier", "type": ["null", "int"], "default": None}]}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"},
            {"name": "qty", "type": "int"},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}}]}}},
        {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "placed_at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "ship_day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {"name": "slot", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "attributes", "type": {"type": "map", "values": "string"}, "default": {}},
        {"name": "coupon", "type": ["null", "string", "long"], "default": None},
        {"name": "checksum", "type": {"type": "fixed", "name": "Md5", "size": 4}},
        {"name": "gift", "type": "boolean", "default": False},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def _decimal(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def order(i: int) -> dict[str, Any]:
    """The i-th order, in the notation of conformance.inputs.registry_wire."""
    import base64

    text = TEXTS[i % len(TEXTS)]
    return {
        "seq": i, "region": [None, "eu", "us", "eu/west"][i % 4], "status": ["NEW", "PAID", "SHIPPED"][i % 3],
        "customer": {"id": f"c-{i % 5}", "tier": None if i % 3 == 0 else i % 3},
        "lines": [{"sku": f"sku-{j}", "qty": j + 1, "price": _decimal(199 * (j + 1) + i)} for j in range(i % 3)],
        "total": _decimal(-5 if i == 4 else 1999 * i + 7), "placed_at": PUBLIC_T + i * 1000,
        "ship_day": None if i % 4 == 1 else 19_754 + i, "slot": 36_000_000 + i * 60_000,
        "attributes": {"channel": ["web", "app"][i % 2], "note": text} if i % 3 else {},
        "coupon": [None, "SPRING", 1234567890123][i % 3],
        "checksum": base64.b64encode(bytes([i, 255 - i, 7, 0])).decode(), "gift": i % 5 == 0,
        "note": None if i % 2 else text,
    }


def _records(n: int, schema: dict[str, Any] = ORDER_V1, partitions: int = 2, start: int = 0,
             payload: Callable[[int], dict[str, Any]] = order) -> list[dict[str, Any]]:
    return [{"topic": TOPIC, "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000, "key": f"order-{i % 7}",
             "value": {"schema": schema, "payload": payload(i)},
             "headers": [["source", "shop"], ["trace", f"t-{i}"], ["note", HEADER_TEXTS[i % len(HEADER_TEXTS)]]][: 1 + i % 3]}
            for i in range(start, start + n)]


def avro_converter_to_avro() -> Scenario:
    """AvroConverter values written as AvroFormat (the pairing Confluent's documentation shows),
    with keys and headers stored beside them in the default keys and headers format (Avro): the
    producer's enum back as an enum (enhanced Avro support), its unions, logical types, fixed and
    nested records through Connect and back (R10.3, R11.2)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": AVRO_FORMAT, "flush.size": "3", "store.kafka.keys": "true",
           "store.kafka.headers": "true"}
    return Scenario("avro-converter-to-avro", cfg, {TOPIC: 2}, _records(14),
                    notes="AvroConverter + AvroFormat: Confluent's documented pairing")


def avro_converter_to_parquet_by_field() -> Scenario:
    """AvroConverter values written as ParquetFormat, FieldPartitioner on the producer's
    optional `region` (null and a '/' inside among its values, R6.2), flush.size 2: each region's
    file a Parquet file of the record schema parquet-avro derives (R10.4)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": PARQUET_FORMAT, "flush.size": "2",
           "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
           "partition.field.name": "region", "s3.part.size": str(5 * 1024 * 1024)}
    return Scenario("avro-converter-to-parquet-by-field", cfg, {TOPIC: 2}, _records(12),
                    notes="AvroConverter + ParquetFormat + FieldPartitioner")


def avro_converter_to_json_hourly() -> Scenario:
    """AvroConverter values written as JsonFormat lines, HourlyPartitioner on the producer's
    `placed_at` (a timestamp-millis: a Connect Timestamp RecordField reads, R6.5), rotate.interval.ms
    on record time: the enum a string, the union a struct of its branches, decimals base64 (R10.1)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "flush.size": "100", "rotate.interval.ms": "3000",
           "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en-US",
           "timezone": "UTC", "timestamp.extractor": "RecordField", "timestamp.field": "placed_at"}
    return Scenario("avro-converter-to-json-hourly", cfg, {TOPIC: 1}, _records(10, partitions=1),
                    notes="AvroConverter + JsonFormat + HourlyPartitioner on a timestamp-millis field")


ORDER_V2 = {**ORDER_V1, "fields": ORDER_V1["fields"] + [
    {"name": "channel", "type": ["null", "string"], "default": None, "doc": "added in v2"}]}


def avro_converter_schema_versions() -> Scenario:
    """The producer moves from version 1 of its schema to version 2 (a new optional field, a
    backward compatible change the registry accepts) and a second producer still writes version 1:
    the converter gives each record the version its subject holds its schema under, and with
    schema.compatibility NONE every change of version rotates the file (R14.2, issue #66)."""
    cfg = {**BASE_AVRO, **AVRO_VALUES, "format.class": AVRO_FORMAT, "flush.size": "10"}
    v2 = lambda i: {**order(i), "channel": ["web", "app"][i % 2]}  # noqa: E731
    recs = (_records(3, partitions=1) + _records(3, ORDER_V2, partitions=1, start=3, payload=v2)
            + _records(2, partitions=1, start=6) + _records(3, ORDER_V2, partitions=1, start=8, payload=v2))
    return Scenario("avro-converter-schema-versions", cfg, {TOPIC: 1}, recs,
                    notes="R14.2: versions from the registry; NONE rotates on each change")


REGISTRY_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "avro-converter-to-avro": avro_converter_to_avro,
    "avro-converter-to-parquet-by-field": avro_converter_to_parquet_by_field,
    "avro-converter-to-json-hourly": avro_converter_to_json_hourly,
    "avro-converter-schema-versions": avro_converter_schema_versions,
}
