"""Kafka Connect's data model, as the sink sees it after the converter.

A record value is either schemaless (plain JSON: dict, list, str, int, float, bool, None) or
a value with a Connect `Schema` (a `Struct` for struct schemas). RECORDS.jsonl gives the latter
in JsonConverter's envelope `{"schema": ..., "payload": ...}`; `from_envelope` turns it into
Connect values exactly as JsonConverter with `schemas.enable=true` would.
"""
from __future__ import annotations

import base64
import binascii
import decimal
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from reference_impl.javamap import as_hashmap

PRIMITIVE_TYPES = frozenset(
    {"int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string", "bytes"}
)
# JsonConverter's type names in the envelope (JsonSchema.*_TYPE_NAME) -> Connect's Schema.Type;
# "float32"/"float64" are Connect's enum names, not JsonConverter's, which rejects them
JSON_TYPE_NAMES = {"boolean": "boolean", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
                   "float": "float32", "double": "float64", "bytes": "bytes", "string": "string",
                   "array": "array", "map": "map", "struct": "struct"}
CONNECT_TO_JSON_TYPE = {v: k for k, v in JSON_TYPE_NAMES.items()}
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
    """Parse a JsonConverter schema object (`{"type": "struct", "fields": [...]}`) as
    `JsonConverter.asConnectSchema` does: its type names (`float`, `double`, ...), `optional`
    only when it is the boolean true, `name`/`doc` only when text, `version` only when integral,
    parameters that must be strings, and a `default` converted with the schema."""
    if not isinstance(node, dict):
        raise SchemaError(f"{where}: a schema is an object with a string 'type'")
    type_name = node.get("type")
    if not isinstance(type_name, str):
        raise SchemaError(f"{where}: Schema must contain 'type' field")
    t = JSON_TYPE_NAMES.get(type_name)
    if t is None:
        hint = f" (JsonConverter spells it {CONNECT_TO_JSON_TYPE[type_name]!r})" if type_name in CONNECT_TO_JSON_TYPE else ""
        raise SchemaError(f"{where}: Unknown schema type: {type_name}{hint}")
    params = node.get("parameters")
    parameters = None
    if isinstance(params, dict):
        bad = [k for k, v in params.items() if not isinstance(v, str)]
        if bad:
            raise SchemaError(f"{where}: Schema parameters must have string values ({bad[0]!r})")
        parameters = tuple(sorted(params.items())) or None
    version = node.get("version")
    common = dict(
        optional=node.get("optional") is True,
        name=node.get("name") if isinstance(node.get("name"), str) else None,
        version=version if isinstance(version, int) and not isinstance(version, bool) else None,
        doc=node.get("doc") if isinstance(node.get("doc"), str) else None,
        parameters=parameters,
    )
    if t in PRIMITIVE_TYPES:
        schema = Schema(t, **common)
    elif t == "struct":
        raw_fields = node.get("fields")
        if not isinstance(raw_fields, list):
            raise SchemaError(f"{where}: Struct schema's \"fields\" argument is not an array.")
        fields = []
        for i, f in enumerate(raw_fields):
            if not isinstance(f, dict) or not isinstance(f.get("field"), str):
                raise SchemaError(f"{where}.fields[{i}]: Struct schema's field name not specified properly")
            fields.append(Field(f["field"], parse_schema(f, f"{where}.{f['field']}")))
        schema = Schema(t, fields=tuple(fields), **common)
    elif t == "array":
        if node.get("items") is None:
            raise SchemaError(f"{where}: Array schema did not specify the element type")
        schema = Schema(t, items=parse_schema(node.get("items"), f"{where}.items"), **common)
    else:  # map
        for part in ("keys", "values"):
            if part not in node:
                raise SchemaError(f"{where}: Map schema did not specify the {part[:-1]} type")
        schema = Schema(
            t,
            keys=parse_schema(node.get("keys"), f"{where}.keys"),
            values=parse_schema(node.get("values"), f"{where}.values"),
            **common,
        )
    if "default" in node:
        default = convert_payload(schema, node["default"], f"{where}.default")
        if default is not None:
            schema = Schema(**{**schema.__dict__, "default": default})
    return schema


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """JsonConverter.asJsonSchema: a Connect schema as the envelope's `schema` object."""
    out: dict[str, Any] = {"type": CONNECT_TO_JSON_TYPE[schema.type]}
    if schema.type == "struct":
        out["fields"] = [{**schema_to_json(f.schema), "field": f.name} for f in schema.fields]
    elif schema.type == "array" and schema.items is not None:
        out["items"] = schema_to_json(schema.items)
    elif schema.type == "map" and schema.keys is not None and schema.values is not None:
        out["keys"], out["values"] = schema_to_json(schema.keys), schema_to_json(schema.values)
    out["optional"] = schema.optional
    for attr in ("name", "version", "doc"):
        if getattr(schema, attr) is not None:
            out[attr] = getattr(schema, attr)
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    return out


def _java_int(payload: Any, bits: int) -> int:
    """JsonNode.intValue()/longValue() and Java's narrowing cast: a non-number is 0, a fraction
    is cut toward zero, and int8/int16/int32 wrap around."""
    if isinstance(payload, bool) or not isinstance(payload, (int, float, decimal.Decimal)):
        return 0
    n = int(payload)
    if bits == 64 and isinstance(payload, int):
        n &= (1 << 64) - 1
    else:
        n &= (1 << 32) - 1  # intValue() first (a 32-bit int), then the cast
        n = n - (1 << 32) if n >= 1 << 31 else n
        n &= (1 << bits) - 1
    return n - (1 << bits) if n >= 1 << (bits - 1) else n


def _check_required(schema: Schema, value: Any, where: str) -> None:
    """ConnectSchema.validateValue, as Struct.put runs it: no null in a required field (also
    inside arrays and maps, whose elements it checks too)."""
    if value is None:
        if not schema.optional:
            raise SchemaError(f"{where}: Invalid value: null used for required field, schema type: {schema.type.upper()}")
        return
    if schema.type == "array" and schema.items is not None and isinstance(value, list):
        for i, v in enumerate(value):
            _check_required(schema.items, v, f"{where}[{i}]")
    elif schema.type == "map" and schema.values is not None and isinstance(value, dict):
        for k, v in value.items():
            _check_required(schema.values, v, f"{where}.{k}")


def convert_payload(schema: Schema, payload: Any, where: str = "payload") -> Any:
    """JsonConverter.convertToConnect: the Connect value a JSON payload is for its schema.

    Lenient where JsonConverter is (a number read where a string belongs gives null, a string
    where a number belongs gives 0), strict where it is (null for a required value without a
    default, a struct that is not an object, logical types of the wrong representation);
    `Struct.put` then refuses nulls in required fields."""
    if payload is None:
        if schema.default is not None:  # replace.null.with.default (true by default)
            return schema.default
        if schema.optional:
            return None
        raise SchemaError(f"{where}: Invalid null value for required {schema.type.upper()} field")
    name = schema.name
    if name == DECIMAL:
        scale = int(schema.params.get("scale", "0"))
        if isinstance(payload, bool):
            raise SchemaError(f"{where}: Invalid type for Decimal, underlying representation should be numeric or bytes but was BOOLEAN")
        if isinstance(payload, (int, float, decimal.Decimal)):
            return decimal.Decimal(str(payload))  # JsonNode.decimalValue(): the number as written
        if isinstance(payload, str):
            try:
                unscaled = int.from_bytes(base64.b64decode(payload, validate=True), "big", signed=True)
            except (ValueError, binascii.Error):
                raise SchemaError(f"{where}: Invalid bytes for Decimal field") from None
            return decimal.Decimal(unscaled).scaleb(-scale)
        raise SchemaError(f"{where}: Invalid type for Decimal, underlying representation should be numeric or bytes")
    if name in (DATE, TIME):
        if isinstance(payload, bool) or not isinstance(payload, int) or not -(1 << 31) <= payload < 1 << 31:
            raise SchemaError(f"{where}: Invalid type for {name.rsplit('.', 1)[-1]}, underlying representation should be integer")
        return payload
    if name == TIMESTAMP:
        if isinstance(payload, bool) or not isinstance(payload, int):
            raise SchemaError(f"{where}: Invalid type for Timestamp, underlying representation should be integral")
        return _java_int(payload, 64)
    t = schema.type
    if t in INTEGER_TYPES:
        return _java_int(payload, {"int8": 8, "int16": 16, "int32": 32, "int64": 64}[t])
    if t in ("float32", "float64"):
        return 0.0 if isinstance(payload, bool) or not isinstance(payload, (int, float, decimal.Decimal)) else _double(payload)
    if t == "boolean":
        return payload if isinstance(payload, bool) else False
    if t == "string":
        return payload if isinstance(payload, str) else None  # textValue(): null for a non-text node
    if t == "bytes":
        if not isinstance(payload, str):
            return None  # binaryValue(): null for a non-text node
        try:
            return base64.b64decode(payload, validate=True)
        except (ValueError, binascii.Error):
            raise SchemaError(f"{where}: Invalid bytes field") from None
    if t == "array":
        assert schema.items is not None
        if not isinstance(payload, list):
            return []  # iterating a non-container node yields nothing
        return [convert_payload(schema.items, v, f"{where}[{i}]") for i, v in enumerate(payload)]
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        if schema.keys.type == "string":
            if not isinstance(payload, dict):
                raise SchemaError(f"{where}: Maps with string fields should be encoded as JSON objects")
            return as_hashmap({k: convert_payload(schema.values, v, f"{where}.{k}") for k, v in payload.items()}, "string")
        if not isinstance(payload, list):
            raise SchemaError(f"{where}: Maps with non-string fields should be encoded as JSON array of tuples")
        out = {}
        for kv in payload:
            if not isinstance(kv, list) or len(kv) != 2:
                raise SchemaError(f"{where}: Found invalid map entry, expected an array of length 2")
            out[convert_payload(schema.keys, kv[0], where)] = convert_payload(schema.values, kv[1], where)
        return as_hashmap(out, schema.keys.type)
    if t == "struct":
        if not isinstance(payload, dict):
            raise SchemaError(f"{where}: Structs should be encoded as JSON objects")
        # fields the schema does not declare are ignored
        values = {}
        for f in schema.fields:
            v = convert_payload(f.schema, payload.get(f.name), f"{where}.{f.name}")
            _check_required(f.schema, v, f"{where}.{f.name}")
            values[f.name] = v
        return Struct(schema, values)
    raise SchemaError(f"{where}: unsupported type {t}")


def _double(number: Any) -> float:
    """A JSON number as JsonConverter hands it on: read as a BigDecimal (no negative zero:
    `-0.0` is 0.0), then its doubleValue."""
    return float(number) + 0.0


def schemaless(value: Any) -> Any:
    """JsonConverter's schemaless reading (schemas.enable=false, or an envelope whose schema
    is null): integral numbers as INT64 (Java long, wrapping), others as FLOAT64."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return _java_int(value, 64)
    if isinstance(value, (float, decimal.Decimal)):
        return _double(value)
    if isinstance(value, list):
        return [schemaless(v) for v in value]
    if isinstance(value, dict):
        # a JSON object becomes a java.util.HashMap: its entries iterate in hash order
        return as_hashmap({k: schemaless(v) for k, v in value.items()})
    return value


@dataclass(frozen=True)
class ConnectValue:
    value: Any
    schema: Schema | None


def from_json(value: Any) -> ConnectValue:
    """A RECORDS.jsonl key or value: an envelope becomes a schema'd value, anything else is
    schemaless (what JsonConverter with schemas.enable=false hands the sink)."""
    if is_envelope(value):
        if value["schema"] is None:
            return ConnectValue(schemaless(value["payload"]), None)
        schema = parse_schema(value["schema"])
        return ConnectValue(convert_payload(schema, value["payload"]), schema)
    return ConnectValue(schemaless(value), None)


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
