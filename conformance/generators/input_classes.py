"""The classes of input production topics carry (issue #35), and which of them a scenario meets:
what bench/coverage.py counts per profile and tests/test_evolution_generator.py asserts the
generated scenarios of `--profile ci` meet. A class is met by a scenario whose topics, config or
records hold at least one such input; a record shape is the one the connector sees (the Connect
schema its value converter makes).
"""
from __future__ import annotations

import functools
import json
import re
from typing import Any, Iterator

from conformance.inputs.scenario import converter_kind
from conformance.inputs.wire import with_worker_converters

DECIMAL = "org.apache.kafka.connect.data.Decimal"
FIELD_PARTITIONER = "FieldPartitioner"

# class -> what a scenario holds to meet it
INPUT_CLASSES: dict[str, str] = {
    "topic-dotted": "a topic name with dots (com.acme.orders.v2)",
    "topic-underscore-upper": "a topic name with underscores or upper case (CDC_Customers)",
    "topic-long": "a topic name over 100 characters",
    "partition-two-digit": "a record on a partition numbered 10 or above",
    "topics-several": "two topics of different partition counts, both with records",
    "text-markup": "text with < > & (HTML-escaping writers change it)",
    "text-quote-backslash": "text with a quote or a backslash",
    "text-control": "text with a control character",
    "text-line-separator": "text with U+2028",
    "text-astral": "text with a character outside the BMP (a surrogate pair in Java)",
    "text-number-or-null": "text that reads as a number, a boolean or null",
    "text-empty": "an empty string",
    "bytes-empty": "an empty byte array",
    "fields-unsorted": "a partition.field.name list not in sorted order",
    "fields-nested-path": "a dotted partition.field.name",
    "fields-boolean": "a boolean field FieldPartitioner encodes",
    "fields-value-needs-escaping": "a FieldPartitioner value with '/', '=' or a space",
    "decimal-base64": "a Decimal written as JSON under the default json.decimal.format (BASE64)",
    "record-larger-than-part": "a value larger than s3.part.size",
    "struct-deep": "Structs nested four levels",
    "array-of-structs": "an array of Structs",
    "map-of-structs": "a map whose values are Structs",
    "map-non-string-keys": "a map with keys other than strings",
    "headers-many": "a record with eight headers or more",
    "headers-repeated-key": "a record with a header key twice",
    "headers-bytes": "a header holding bytes",
    "header-null-stored": "a null header value with store.kafka.headers=true (R11.4: the task stops)",
}
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# searched, not read a character at a time in Python: a record larger than a part holds 5.5 MiB
# of text (the classes of the suite's named scenarios took 26.3 s read so, 1.4 s searched)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ASTRAL = re.compile(r"[\U00010000-\U0010ffff]")


def _texts(value: Any) -> Iterator[str]:
    """Every string inside a value in its notation (keys of maps included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k != "schema":
                yield str(k)
                yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


def _schemas(schema: Any, depth: int = 1) -> Iterator[tuple[dict[str, Any], int]]:
    """Every (schema, struct depth) inside a JsonConverter schema."""
    if not isinstance(schema, dict):
        return
    yield schema, depth
    t = schema.get("type")
    if t == "struct":
        for f in schema.get("fields") or []:
            yield from _schemas(f, depth + (f.get("type") == "struct"))
    elif t == "array":
        yield from _schemas(schema.get("items"), depth)
    elif t == "map":
        yield from _schemas(schema.get("keys"), depth)
        yield from _schemas(schema.get("values"), depth)


def connect_schema(value: Any, converter: str) -> dict[str, Any] | None:
    """The Connect schema a record's value has to the connector, in JsonConverter's notation: the
    envelope's own under JsonConverter, what AvroData or ProtobufData make of a producer's Avro
    or proto3 schema (the model's reading of each converter: a producer's optional Avro field is
    a union, its map with other than string keys an array of records, which the connector sees as
    an array of Structs). None for a value without a schema, or one the model cannot read."""
    if not isinstance(value, dict) or "schema" not in value:
        return None
    schema = value["schema"]
    if converter == "avro":
        return _converted(converter, json.dumps(schema) if isinstance(schema, dict) else str(schema), None)
    if converter == "protobuf":
        return _converted(converter, str(schema), value.get("message"))
    return schema if isinstance(schema, dict) else None


@functools.lru_cache(maxsize=512)
def _converted(converter: str, text: str, message: str | None) -> dict[str, Any] | None:
    """connect_schema of an Avro or proto3 schema text (a stream repeats a few: read once each)."""
    from reference_impl.connect_data import schema_to_json

    try:
        if converter == "avro":
            from reference_impl.avro_binary import parse
            from reference_impl.avro_data import to_connect_schema

            return schema_to_json(to_connect_schema(*parse(text)))
        from reference_impl.proto_schema import parse as parse_proto
        from reference_impl.protobuf_data import to_connect_schema as proto_connect_schema

        proto = parse_proto(text)
        names = [m.full_name for m in proto.messages]
        return schema_to_json(proto_connect_schema(proto.messages[names.index(message) if message in names else 0], None))
    except (ValueError, KeyError, IndexError):  # the model's readers refuse it: no shape to count
        return None


def _empty_bytes(schema: Any, payload: Any) -> bool:
    if not isinstance(schema, dict) or payload is None:
        return False
    t = schema.get("type")
    if t == "bytes" and not schema.get("name"):
        return payload == ""
    if t == "struct" and isinstance(payload, dict):
        return any(_empty_bytes(f, payload.get(f.get("field"))) for f in schema.get("fields") or [])
    if t == "array" and isinstance(payload, list):
        return any(_empty_bytes(schema.get("items"), v) for v in payload)
    return False


def _field_value(payload: Any, path: str) -> Any:
    for step in path.split("."):
        payload = payload.get(step) if isinstance(payload, dict) else None
    return payload


def input_classes(sc: Any) -> set[str]:
    """The INPUT_CLASSES a scenario meets."""
    cfg = sc.connector
    met: set[str] = set()
    if any("." in t for t in sc.topics):
        met.add("topic-dotted")
    if any("_" in t or t != t.lower() for t in sc.topics):
        met.add("topic-underscore-upper")
    if any(len(t) > 100 for t in sc.topics):
        met.add("topic-long")
    if any(int(r["partition"]) >= 10 for r in sc.records):
        met.add("partition-two-digit")
    if len({sc.topics[r["topic"]] for r in sc.records}) > 1:
        met.add("topics-several")
    texts: list[str] = []
    for r in sc.records:
        texts += list(_texts(r["value"])) + list(_texts(r["key"]))
        texts += [h[1] for h in r["headers"] or [] if isinstance(h[1], str)]
    for t in texts:
        if any(c in t for c in "<>&"):
            met.add("text-markup")
        if '"' in t or "\\" in t:
            met.add("text-quote-backslash")
        if _CONTROL.search(t):
            met.add("text-control")
        if "\u2028" in t:
            met.add("text-line-separator")
        if _ASTRAL.search(t):
            met.add("text-astral")
        if t in ("null", "true", "false") or _NUMBER.fullmatch(t):
            met.add("text-number-or-null")
        if t == "":
            met.add("text-empty")
    json_decimals = (cfg.get("format.class", "").endswith("JsonFormat")
                     and cfg.get("json.decimal.format", "BASE64").upper() == "BASE64")
    part = int(cfg.get("s3.part.size", "26214400") or 26214400)
    converter = converter_kind(with_worker_converters(cfg))  # the worker's where the config names none
    for r in sc.records:
        v = r["value"]
        schema = connect_schema(v, converter)
        if schema is not None:
            payload = v.get("payload")
            if _empty_bytes(schema, payload):
                met.add("bytes-empty")
            for s, depth in _schemas(schema):
                if depth >= 4:
                    met.add("struct-deep")
                if s.get("name") == DECIMAL and json_decimals:
                    met.add("decimal-base64")
                if s.get("type") == "array" and (s.get("items") or {}).get("type") in ("struct", "record"):
                    met.add("array-of-structs")
                if s.get("type") == "map":
                    if (s.get("values") or {}).get("type") in ("struct", "record"):
                        met.add("map-of-structs")
                    if (s.get("keys") or {}).get("type") != "string":
                        met.add("map-non-string-keys")
        if v is not None and len(str(v)) > part:
            met.add("record-larger-than-part")
        names = [h[0] for h in r["headers"] or []]
        if len(names) >= 8:
            met.add("headers-many")
        if len(set(names)) < len(names):
            met.add("headers-repeated-key")
        if any(isinstance(h[1], dict) and "base64" in h[1] for h in r["headers"] or []):
            met.add("headers-bytes")
        if cfg.get("store.kafka.headers", "false").lower() == "true" and any(h[1] is None for h in r["headers"] or []):
            met.add("header-null-stored")
    if cfg.get("partitioner.class", "").endswith(FIELD_PARTITIONER):
        fields = [x.strip() for x in cfg.get("partition.field.name", "").split(",") if x.strip()]
        if fields != sorted(fields):
            met.add("fields-unsorted")
        if any("." in f for f in fields):
            met.add("fields-nested-path")
        for r in sc.records:
            v = r["value"]
            schema = connect_schema(v, converter)
            if schema is None or not isinstance(v.get("payload"), dict):
                continue
            types = {f.get("field"): f.get("type") for f in schema.get("fields") or []}
            for f in fields:
                if types.get(f) == "boolean":
                    met.add("fields-boolean")
                x = _field_value(v["payload"], f)
                if isinstance(x, str) and any(c in x for c in "/= "):
                    met.add("fields-value-needs-escaping")
    return met
