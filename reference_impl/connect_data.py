"""Kafka Connect's data model, as the sink sees it after the converter.

A record value is either schemaless (plain JSON: dict, list, str, int, float, bool, None) or
a value with a Connect `Schema` (a `Struct` for struct schemas). RECORDS.jsonl gives the latter
in JsonConverter's envelope `{"schema": ..., "payload": ...}`; `from_envelope` turns it into
Connect values exactly as JsonConverter with `schemas.enable=true` would.
"""
from __future__ import annotations

import base64
import decimal
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

PRIMITIVE_TYPES = frozenset(
    {"int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes"}
)
INTEGER_TYPES = frozenset({"int8", "int16", "int32", "int64"})

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"


class SchemaError(ValueError):
    """A schema or payload in the JsonConverter envelope that Connect would reject."""


@dataclass(frozen=True)
class Field:
    name: str
    schema: "Schema"


@dataclass(frozen=True)
class Schema:
    """A Connect schema. Equality is Connect's `Schema.equals` (type, optionality, name,
    version, doc, parameters, default and nested schemas), which R14.2 compares."""

    type: str
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: tuple[tuple[str, str], ...] | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()
    items: "Schema | None" = None  # array element schema
    keys: "Schema | None" = None  # map key schema
    values: "Schema | None" = None  # map value schema

    def field(self, name: str) -> Field | None:
        for f in self.fields:
            if f.name == name:
                return f
        return None

    @property
    def params(self) -> dict[str, str]:
        return dict(self.parameters or ())


class Struct:
    """A Connect Struct: values by field name, in schema field order."""

    __slots__ = ("schema", "values")

    def __init__(self, schema: Schema, values: Mapping[str, Any]):
        if schema.type != "struct":
            raise SchemaError(f"a Struct needs a struct schema, got {schema.type}")
        self.schema = schema
        self.values = {f.name: values.get(f.name) for f in schema.fields}

    def get(self, name: str) -> Any:
        if self.schema.field(name) is None:
            raise KeyError(name)
        return self.values[name]

    def items(self) -> Iterator[tuple[str, Any]]:
        return iter(self.values.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self.values == other.values

    def __hash__(self) -> int:
        return hash((self.schema, tuple(sorted(self.values))))

    def __repr__(self) -> str:
        return f"Struct({self.values!r})"


def is_envelope(value: Any) -> bool:
    """JsonConverter with schemas.enable=true: exactly the two fields schema and payload."""
    return isinstance(value, dict) and set(value) == {"schema", "payload"}


def parse_schema(node: Any, where: str = "schema") -> Schema:
    """Parse a JsonConverter schema object (`{"type": "struct", "fields": [...]}`)."""
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise SchemaError(f"{where}: a schema is an object with a string 'type'")
    t = node["type"]
    params = node.get("parameters")
    common = dict(
        optional=bool(node.get("optional", False)),
        name=node.get("name"),
        version=node.get("version"),
        doc=node.get("doc"),
        parameters=tuple(sorted((str(k), str(v)) for k, v in params.items())) if params else None,
    )
    if t in PRIMITIVE_TYPES:
        schema = Schema(t, **common)
    elif t == "struct":
        fields = []
        for i, f in enumerate(node.get("fields") or []):
            if not isinstance(f, dict) or not isinstance(f.get("field"), str):
                raise SchemaError(f"{where}.fields[{i}]: each field needs a string 'field' name")
            fields.append(Field(f["field"], parse_schema(f, f"{where}.{f['field']}")))
        schema = Schema(t, fields=tuple(fields), **common)
    elif t == "array":
        schema = Schema(t, items=parse_schema(node.get("items"), f"{where}.items"), **common)
    elif t == "map":
        schema = Schema(
            t,
            keys=parse_schema(node.get("keys"), f"{where}.keys"),
            values=parse_schema(node.get("values"), f"{where}.values"),
            **common,
        )
    else:
        raise SchemaError(f"{where}: unknown schema type {t!r}")
    if "default" in node and node["default"] is not None:
        schema = Schema(**{**schema.__dict__, "default": convert_payload(schema, node["default"], where)})
    return schema


def convert_payload(schema: Schema, payload: Any, where: str = "payload") -> Any:
    """Convert a JSON payload to the Connect value its schema describes."""
    if payload is None:
        if schema.default is not None:
            return schema.default
        if schema.optional:
            return None
        raise SchemaError(f"{where}: null for a required {schema.type} field")
    if schema.name == DECIMAL:
        scale = int(schema.params.get("scale", "0"))
        if isinstance(payload, str):
            unscaled = int.from_bytes(base64.b64decode(payload), "big", signed=True)
            return decimal.Decimal(unscaled).scaleb(-scale)
        if isinstance(payload, (int, float)):
            return decimal.Decimal(str(payload)).quantize(decimal.Decimal(1).scaleb(-scale))
        raise SchemaError(f"{where}: a Decimal is a base64 string or a number")
    t = schema.type
    if t in INTEGER_TYPES:
        if isinstance(payload, bool) or not isinstance(payload, int):
            raise SchemaError(f"{where}: expected an integer for {t}, got {payload!r}")
        return payload
    if t in ("float32", "float64"):
        if isinstance(payload, bool) or not isinstance(payload, (int, float)):
            raise SchemaError(f"{where}: expected a number for {t}")
        return float(payload)
    if t == "boolean":
        if not isinstance(payload, bool):
            raise SchemaError(f"{where}: expected a boolean")
        return payload
    if t == "string":
        if not isinstance(payload, str):
            raise SchemaError(f"{where}: expected a string")
        return payload
    if t == "bytes":
        if not isinstance(payload, str):
            raise SchemaError(f"{where}: bytes are a base64 string")
        return base64.b64decode(payload)
    if t == "array":
        if not isinstance(payload, list):
            raise SchemaError(f"{where}: expected an array")
        return [convert_payload(schema.items, v, f"{where}[{i}]") for i, v in enumerate(payload)]  # type: ignore[arg-type]
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        if isinstance(payload, dict):
            return {k: convert_payload(schema.values, v, f"{where}.{k}") for k, v in payload.items()}
        if isinstance(payload, list):
            return {
                convert_payload(schema.keys, kv[0], where): convert_payload(schema.values, kv[1], where)
                for kv in payload
            }
        raise SchemaError(f"{where}: expected a map")
    if t == "struct":
        if not isinstance(payload, dict):
            raise SchemaError(f"{where}: expected an object for a struct")
        unknown = set(payload) - {f.name for f in schema.fields}
        if unknown:
            # JsonConverter ignores payload fields the schema does not declare.
            payload = {k: v for k, v in payload.items() if k not in unknown}
        return Struct(
            schema,
            {f.name: convert_payload(f.schema, payload.get(f.name), f"{where}.{f.name}") for f in schema.fields},
        )
    raise SchemaError(f"{where}: unsupported type {t}")


@dataclass(frozen=True)
class ConnectValue:
    value: Any
    schema: Schema | None


def from_json(value: Any) -> ConnectValue:
    """A RECORDS.jsonl key or value: an envelope becomes a schema'd value, anything else is
    schemaless (what JsonConverter with schemas.enable=false hands the sink)."""
    if is_envelope(value):
        if value["schema"] is None:
            return ConnectValue(value["payload"], None)
        schema = parse_schema(value["schema"])
        return ConnectValue(convert_payload(schema, value["payload"]), schema)
    return ConnectValue(value, None)


@dataclass(frozen=True)
class SinkRecord:
    """One Kafka record as the connector's put() receives it."""

    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: Any = None
    key_schema: Schema | None = None
    value: Any = None
    value_schema: Schema | None = None
    headers: tuple[tuple[str, str | None], ...] | None = ()

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], where: str = "record") -> "SinkRecord":
        """Parse one RECORDS.jsonl line (already JSON-decoded)."""
        if not isinstance(obj, dict):
            raise SchemaError(f"{where}: a record is a JSON object")
        for req in ("topic", "partition", "offset"):
            if req not in obj:
                raise SchemaError(f"{where}: missing '{req}'")
        if not isinstance(obj["topic"], str) or not obj["topic"]:
            raise SchemaError(f"{where}: 'topic' must be a non-empty string")
        for num in ("partition", "offset"):
            if isinstance(obj[num], bool) or not isinstance(obj[num], int) or obj[num] < 0:
                raise SchemaError(f"{where}: '{num}' must be a non-negative integer")
        ts = obj.get("timestamp")
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, int)):
            raise SchemaError(f"{where}: 'timestamp' must be an integer (ms) or null")
        try:
            key = from_json(obj.get("key"))
            value = from_json(obj.get("value"))
        except SchemaError as e:
            raise SchemaError(f"{where}: {e}") from None
        raw_headers = obj.get("headers", [])
        headers: tuple[tuple[str, str | None], ...] | None
        if raw_headers is None:
            headers = None
        else:
            if not isinstance(raw_headers, list) or not all(
                isinstance(h, list) and len(h) == 2 and isinstance(h[0], str) for h in raw_headers
            ):
                raise SchemaError(f"{where}: 'headers' is a list of [name, value] pairs")
            headers = tuple((h[0], None if h[1] is None else str(h[1])) for h in raw_headers)
        return cls(
            topic=obj["topic"],
            partition=obj["partition"],
            offset=obj["offset"],
            timestamp=ts,
            key=key.value,
            key_schema=key.schema,
            value=value.value,
            value_schema=value.schema,
            headers=headers,
        )
