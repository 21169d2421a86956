"""Values a producer application writes in Protobuf (read by ProtobufConverter): the proto3 schema
it registers, written as Confluent's ProtobufSchema.canonicalString() writes one, and its messages
in the notation of conformance.inputs.protobuf_wire.

The schema is the drawn value schema (conformance.generators.values) as a producer spells it in
proto3: int8/int16/int32 as int32, int64, float, double, bool, string, bytes; an optional scalar
as a proto3 `optional` field (a struct is a message, nullable as it is); Date, Time and Timestamp
as google.type.Date, google.type.TimeOfDay and google.protobuf.Timestamp; a Decimal as its text
(a string: the model reads no confluent.type.Decimal); an array as a repeated field (its nulls
left out: a repeated field holds none); a map as a map field (its null values left out); structs
as messages nested in the top one, named after their fields.
"""
from __future__ import annotations

import base64
import datetime
import decimal
from typing import Any

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
PACKAGE = "com.acme.orders"
_SCALARS = {"int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64", "float": "float",
            "double": "double", "boolean": "bool", "string": "string", "bytes": "bytes"}
_IMPORTS = {TIMESTAMP: "google/protobuf/timestamp.proto", DATE: "google/type/date.proto",
            TIME: "google/type/timeofday.proto"}
_WELL_KNOWN = {TIMESTAMP: "google.protobuf.Timestamp", DATE: "google.type.Date", TIME: "google.type.TimeOfDay"}


def _message_name(field: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in field.split("_")) or "M"


def _type(schema: dict[str, Any], field: str, nested: list[str], imports: set[str]) -> str | None:
    """The proto3 type of one value of `schema` (None: proto has no such field)."""
    name, t = schema.get("name"), schema["type"]
    if name == DECIMAL:
        return "string"
    if name in _WELL_KNOWN:
        imports.add(_IMPORTS[name])
        return _WELL_KNOWN[name]
    if t in _SCALARS:
        return _SCALARS[t]
    if t == "struct":
        msg = _message_name(field)
        nested.append(_message(msg, schema, imports))
        return msg
    return None


def _indent(text: str) -> str:
    return "".join(f"  {line}\n" for line in text.splitlines())


def _fields(schema: dict[str, Any], imports: set[str]) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    nested: list[str] = []
    for number, f in enumerate(schema["fields"], start=1):
        name, t = f["field"], f["type"]
        if t == "array":
            item = _type(f["items"], name, nested, imports)
            if item is not None:
                lines.append(f"repeated {item} {name} = {number};")
        elif t == "map":
            key = {"string": "string", "int8": "int32", "int16": "int32", "int32": "int32",
                   "int64": "int64", "boolean": "bool"}.get(f["keys"]["type"])
            value = _type(f["values"], f"{name}_value", nested, imports)
            if key is not None and value is not None:
                lines.append(f"map<{key}, {value}> {name} = {number};")
        else:
            proto = _type(f, name, nested, imports)
            if proto is None:
                continue
            scalar = proto in _SCALARS.values()
            lines.append(f"{'optional ' if scalar and f.get('optional') else ''}{proto} {name} = {number};")
    return lines, nested


def _message(name: str, schema: dict[str, Any], imports: set[str]) -> str:
    lines, nested = _fields(schema, imports)
    body = "".join(f"  {line}\n" for line in lines)
    if nested:
        body += "\n" + "".join(_indent(m) for m in nested)
    return f"message {name} {{\n{body}}}\n"


def producer_schema(schema: dict[str, Any]) -> str:
    """The proto3 text a producer registers for the drawn Connect struct schema."""
    imports: set[str] = set()
    top = _message(_message_name(schema.get("name") or "order"), schema, imports)
    head = f'syntax = "proto3";\npackage {PACKAGE};\n'
    if imports:
        head += "\n" + "".join(f'import "{i}";\n' for i in sorted(imports))
    return head + "\n" + top


def producer_payload(schema: dict[str, Any], payload: Any) -> Any:
    """A JsonConverter payload of `schema` as the producer's message in protobuf_wire's notation."""
    if payload is None:
        return None
    name, t = schema.get("name"), schema["type"]
    if name == DECIMAL:
        scale = int((schema.get("parameters") or {}).get("scale", "0"))
        unscaled = int.from_bytes(base64.b64decode(payload), "big", signed=True)
        return str(decimal.Decimal(unscaled).scaleb(-scale))
    if name == DATE:
        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(payload))).isoformat()
    if t == "struct":
        out = {}
        for f in schema["fields"]:
            v = producer_payload(f, payload.get(f["field"]))
            if v is not None and (f["type"] != "array" or _type_ok(f["items"])) and (
                    f["type"] != "map" or _type_ok(f["values"])):
                out[f["field"]] = v
        return out
    if t == "array":
        return [producer_payload(schema["items"], v) for v in payload if v is not None]
    if t == "map":
        pairs = payload.items() if isinstance(payload, dict) else payload
        return {str(k): producer_payload(schema["values"], v) for k, v in pairs if v is not None}
    return payload


def _type_ok(schema: dict[str, Any]) -> bool:
    return schema["type"] not in ("array", "map")
