"""Named scenarios for AvroFormat and ParquetFormat objects (R10.3, R10.4): every Connect type
and logical type JsonConverter carries, the structs AvroData names (a named struct met twice,
unnamed ones at several depths, an optional one), field docs and defaults, and keys and headers
beside the values in the same formats (R11.2: Avro is the default keys and headers format); and
schemaless JSON values written as Avro (AvroData's `Anything` record).

Each is what a deployment writing Avro or Parquet from JSON with schemas produces: the worker's
JsonConverter with `schemas.enable=true`, keys as text (StringConverter).
"""
from __future__ import annotations

import base64
from typing import Any, Callable

from conformance.catalog.base import BASE, PUBLIC_T
from conformance.inputs.scenario import Scenario

AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
PARQUET = "io.confluent.connect.s3.format.parquet.ParquetFormat"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
WITH_SCHEMAS = {"value.converter.schemas.enable": "true"}
TEXTS = ("plain", "<tag a=\"1\"> & 'quoted'", "üñï ©ode \\ back", "tab\tnew\nline", "", "\u2028sep\u2029")


def _field(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"field": name, **schema}


ITEM = {"type": "struct", "name": "com.acme.Item", "optional": False,
        "fields": [_field("sku", {"type": "string", "optional": False}),
                   _field("qty", {"type": "int32", "optional": False})]}
ORDER_SCHEMA: dict[str, Any] = {
    "type": "struct", "name": "com.acme.Order", "version": 2, "doc": "an order as the shop writes it",
    "parameters": {"team": "payments"}, "optional": False,
    "fields": [
        _field("seq", {"type": "int64", "optional": False}),
        _field("tiny", {"type": "int8", "optional": False}),
        _field("small", {"type": "int16", "optional": True}),
        _field("n", {"type": "int32", "optional": False, "doc": "a count"}),
        _field("f32", {"type": "float", "optional": False}),
        _field("f64", {"type": "double", "optional": True, "default": 1.5}),
        _field("ok", {"type": "boolean", "optional": False}),
        _field("note", {"type": "string", "optional": True}),
        _field("blob", {"type": "bytes", "optional": False}),
        _field("price", {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": "2"},
                         "optional": False}),
        _field("rate", {"type": "bytes", "name": DECIMAL, "version": 1,
                        "parameters": {"scale": "3", "connect.decimal.precision": "10"}, "optional": True}),
        _field("day", {"type": "int32", "name": DATE, "version": 1, "optional": False}),
        _field("clock", {"type": "int32", "name": TIME, "version": 1, "optional": True}),
        _field("at", {"type": "int64", "name": TIMESTAMP, "version": 1, "optional": False}),
        _field("scores", {"type": "array", "items": {"type": "int32", "optional": True}, "optional": False}),
        _field("lines", {"type": "array", "optional": False,
                         "items": {"type": "struct", "optional": False,
                                   "fields": [_field("k", {"type": "string", "optional": False}),
                                              _field("v", {"type": "int32", "optional": True})]}}),
        _field("attrs", {"type": "map", "keys": {"type": "string", "optional": False},
                         "values": {"type": "string", "optional": True}, "optional": False}),
        _field("codes", {"type": "map", "keys": {"type": "int32", "optional": False},
                         "values": {"type": "double", "optional": False}, "optional": True}),
        _field("meta", {"type": "struct", "optional": True,
                        "fields": [_field("source", {"type": "string", "optional": False}),
                                   _field("inner", {"type": "struct", "optional": True,
                                                    "fields": [_field("level", {"type": "int64", "optional": False})]})]}),
        _field("item", ITEM),
        _field("spare", {**ITEM, "optional": True}),
    ],
}


def _decimal(unscaled: int) -> str:
    return base64.b64encode(unscaled.to_bytes(max(1, (unscaled.bit_length() + 8) // 8), "big", signed=True)).decode()


def order_payload(i: int) -> dict[str, Any]:
    """The i-th order: every field drawn from i, optional ones null now and then."""
    text = TEXTS[i % len(TEXTS)]
    return {
        "seq": i, "tiny": [-128, 0, 127][i % 3], "small": None if i % 4 == 1 else -300 * i,
        "n": i * 7, "f32": [0.5, 0.1, -1.25][i % 3], "f64": None if i % 3 == 2 else [3.75, 1e-05, 6.02e23][i % 3],
        "ok": i % 2 == 0, "note": None if i % 5 == 3 else text, "blob": base64.b64encode(bytes([i, 0, 255])).decode(),
        "price": _decimal(-12345 + i * 1000), "rate": None if i % 2 else _decimal(1234567 + i),
        "day": 19_000 + i, "clock": None if i % 6 == 5 else 45_296_789 + i, "at": PUBLIC_T + i * 1000,
        "scores": [i, None, -i] if i % 2 else [], "lines": [{"k": text, "v": i}, {"k": "b", "v": None}][: 1 + i % 2],
        "attrs": {"lang": "en", "x": None if i % 2 else "y"}, "codes": None if i % 4 == 2 else [[7, 0.5], [-3, 1.5], [1000, 2.0]],
        "meta": None if i % 3 == 0 else {"source": text, "inner": None if i % 2 else {"level": i}},
        "item": {"sku": f"sku-{i}", "qty": i}, "spare": None if i % 2 else {"sku": "s", "qty": -i},
    }


def _orders(n: int, topic: str = "shop.orders.v2", partitions: int = 2) -> list[dict[str, Any]]:
    return [{"topic": topic, "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000, "key": f"order-{i % 5}",
             "value": {"schema": ORDER_SCHEMA, "payload": order_payload(i)},
             "headers": [["source", "shop"], ["trace", f"t-{i}"], ["note", TEXTS[i % len(TEXTS)]]][: 1 + i % 3]}
            for i in range(n)]


def avro_connect_types() -> Scenario:
    """AvroFormat values from JsonConverter with schemas, every Connect type and logical type in
    one struct (AvroData: int8/int16 with connect.type, Decimal as bytes with precision 64 where
    none is given, an unnamed struct in an array, an optional unnamed struct holding another, a
    named struct met twice, a map with int keys as MapEntry records), keys and headers stored in
    the default keys and headers format (Avro, R11.2) beside them."""
    cfg = {**BASE, **WITH_SCHEMAS, "format.class": AVRO, "flush.size": "3", "store.kafka.keys": "true",
           "store.kafka.headers": "true"}
    return Scenario("avro-connect-types", cfg, {"shop.orders.v2": 2}, _orders(14),
                    notes="R10.3, R11.2: Avro values, keys and headers")


def parquet_connect_types() -> Scenario:
    """The same records as ParquetFormat (parquet-avro over AvroData's schema, gzip codec), keys
    and headers as Parquet too (RecordKey{key}, RecordHeaders{headers}); an array of optional
    items switches parquet-avro to the three-level list layout (R10.4)."""
    cfg = {**BASE, **WITH_SCHEMAS, "format.class": PARQUET, "parquet.codec": "gzip", "flush.size": "4",
           "store.kafka.keys": "true", "keys.format.class": PARQUET, "store.kafka.headers": "true",
           "headers.format.class": PARQUET}
    return Scenario("parquet-connect-types", cfg, {"shop.orders.v2": 2}, _orders(14),
                    notes="R10.4, R11.2: Parquet values, keys and headers")


def avro_schemaless_values() -> Scenario:
    """Schemaless JSON values (JsonConverter without schemas) written as AvroFormat: AvroData
    wraps each value in its recursive `Anything` record (objects as arrays of MapEntry records,
    whole numbers as longs, others as doubles), three records a file (spec open question 4)."""
    cfg = {**BASE, "format.class": AVRO, "flush.size": "3", "avro.codec": "deflate"}
    values = [{"seq": i, "name": TEXTS[i % len(TEXTS)], "ratio": [0.5, 1e21, -7.0][i % 3],
               "tags": ["a", None, i], "nested": {"ok": i % 2 == 0, "deep": {"n": i}}, "none": None}
              for i in range(8)]
    values[4] = "seq=4"  # a JSON string value: the seq in its text
    values[6] = {"seq": 6, "list": [1, "two", 3.5, [True]]}
    recs = [{"topic": "events", "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"k{i}", "value": v,
             "headers": []} for i, v in enumerate(values)]
    return Scenario("avro-schemaless-values", cfg, {"events": 1}, recs,
                    notes="R10.3 with a null value schema: AvroData's Anything record")


FORMAT_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "avro-connect-types": avro_connect_types,
    "parquet-connect-types": parquet_connect_types,
}
# Confluent's own: Aiven's and Lenses' documentation asks a Connect schema of an Avro or Parquet value
SCHEMALESS_AVRO: dict[str, Callable[[], Scenario]] = {"avro-schemaless-values": avro_schemaless_values}
