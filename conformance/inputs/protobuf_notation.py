"""Connect data as a producer application writes it in Protobuf (read by ProtobufConverter): the
proto3 schema it registers, written as Confluent's ProtobufSchema.canonicalString() writes one,
and its messages in the notation of conformance.inputs.protobuf_wire. Used for the generator's
values and for a named scenario re-expressed for a user's ProtobufConverter.

A struct schema (JsonConverter's schema object) is spelled in proto3: int8/int16/int32 as int32,
int64, float, double, bool, string, bytes; an optional scalar as a proto3 `optional` field (a
struct is a message, nullable as it is); Date, Time and Timestamp as google.type.Date,
google.type.TimeOfDay and google.protobuf.Timestamp; a Decimal as its text (a string: the model
reads no confluent.type.Decimal); an array as a repeated field (its nulls left out: a repeated
field holds none; an array of arrays or maps is left out, proto has none); a map as a map field
(its null values left out; keys that are not strings, ints or bools leave it out); structs as
messages nested in the top one, named after their fields. Schemaless JSON objects (a named
scenario's, re-expressed) get one struct schema per topic, inferred from every value, each field
optional.
"""
from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
from typing import Any

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
PACKAGE = "com.acme.orders"
_SCALARS = {"int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64", "float": "float",
            "double": "double", "boolean": "bool", "string": "string", "bytes": "bytes"}
_MAP_KEYS = {"string": "string", "int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64",
             "boolean": "bool"}
_IMPORTS = {TIMESTAMP: "google/protobuf/timestamp.proto", DATE: "google/type/date.proto",
            TIME: "google/type/timeofday.proto"}
_WELL_KNOWN = {TIMESTAMP: "google.protobuf.Timestamp", DATE: "google.type.Date", TIME: "google.type.TimeOfDay"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _message_name(name: str) -> str:
    """A message name from a Connect name or a field name (its last dotted part, CamelCase)."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name.rsplit(".", 1)[-1])
    out = "".join(w[:1].upper() + w[1:] for w in base.split("_") if w) or "M"
    return out if out[0].isalpha() else "M" + out


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


def _kept(f: dict[str, Any]) -> bool:
    """Whether a field of a struct schema has a proto3 spelling (else it is left out)."""
    if not _IDENT.fullmatch(f["field"]):
        return False
    if f["type"] == "array":
        return f["items"]["type"] not in ("array", "map")
    if f["type"] == "map":
        return f["keys"]["type"] in _MAP_KEYS and f["values"]["type"] not in ("array", "map")
    return True


def _message(name: str, schema: dict[str, Any], imports: set[str]) -> str:
    lines: list[str] = []
    nested: list[str] = []
    for number, f in enumerate(schema["fields"], start=1):
        if not _kept(f):
            continue
        field, t = f["field"], f["type"]
        if t == "array":
            lines.append(f"repeated {_type(f['items'], field, nested, imports)} {field} = {number};")
        elif t == "map":
            value = _type(f["values"], f"{field}_value", nested, imports)
            lines.append(f"map<{_MAP_KEYS[f['keys']['type']]}, {value}> {field} = {number};")
        else:
            proto = _type(f, field, nested, imports)
            scalar = proto in _SCALARS.values()
            lines.append(f"{'optional ' if scalar and f.get('optional') else ''}{proto} {field} = {number};")
    body = "".join(f"  {line}\n" for line in lines)
    if nested:
        # as ProtobufSchemaUtils indents a nested type: every line, blank ones too
        body += "\n" + "".join(f"  {line}\n" for m in nested for line in m.splitlines())
    return f"message {name} {{\n{body}}}\n"


def producer_schema(schema: dict[str, Any]) -> str:
    """The proto3 text a producer registers for a Connect struct schema."""
    imports: set[str] = set()
    top = _message(_message_name(schema.get("name") or "order"), schema, imports)
    head = f'syntax = "proto3";\npackage {PACKAGE};\n'
    if imports:
        head += "\n" + "".join(f'import "{i}";\n' for i in sorted(imports))
    return head + "\n" + top


def producer_payload(schema: dict[str, Any], payload: Any) -> Any:
    """A JsonConverter payload of `schema` as the producer's message in protobuf_wire's notation
    (bytes and decimals in base64, as JsonConverter carries them)."""
    if payload is None:
        return None
    name, t = schema.get("name"), schema["type"]
    if name == DECIMAL:
        scale = int((schema.get("parameters") or {}).get("scale", "0"))
        if isinstance(payload, (int, float, decimal.Decimal)) and not isinstance(payload, bool):
            return str(decimal.Decimal(str(payload)).quantize(decimal.Decimal(1).scaleb(-scale)))
        unscaled = int.from_bytes(base64.b64decode(payload), "big", signed=True)
        return str(decimal.Decimal(unscaled).scaleb(-scale))
    if name == DATE:
        return (datetime.date(1970, 1, 1) + datetime.timedelta(days=int(payload))).isoformat()
    if t == "struct":
        out = {}
        for f in schema["fields"]:
            v = producer_payload(f, payload.get(f["field"])) if _kept(f) else None
            if v is not None:
                out[f["field"]] = v
        return out
    if t == "array":
        return [producer_payload(schema["items"], v) for v in payload if v is not None]
    if t == "map":
        pairs = payload.items() if isinstance(payload, dict) else payload
        return {_key_text(k): producer_payload(schema["values"], v) for k, v in pairs if v is not None}
    return payload


def _key_text(k: Any) -> str:
    return ("true" if k else "false") if isinstance(k, bool) else str(k)


# --- schemaless values, one schema a topic -------------------------------------------------------

def _kind(v: Any) -> str | None:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "int64"
    if isinstance(v, (float, decimal.Decimal)):
        return "double"
    if isinstance(v, str):
        return "string"
    return None


def inferred_schema(samples: list[Any], name: str = "value") -> dict[str, Any]:
    """One optional Connect schema that takes every sample (schemaless JSON of one topic):
    objects are structs of their fields in order of first appearance, lists arrays, mixed or
    other values their JSON text."""
    present = [s for s in samples if s is not None]
    if present and all(isinstance(s, dict) for s in present):
        order: list[str] = []
        for s in present:
            order += [k for k in s if k not in order]
        fields = [{**inferred_schema([s.get(k) for s in present], k), "field": k} for k in order]
        return {"type": "struct", "name": name, "optional": True, "fields": fields}
    if present and all(isinstance(s, list) for s in present):
        return {"type": "array", "items": inferred_schema([x for s in present for x in s], f"{name}_item"),
                "optional": True}
    kinds = {_kind(s) for s in present}
    if kinds == {"int64", "double"}:
        return {"type": "double", "optional": True}
    return {"type": kinds.pop() if len(kinds) == 1 and None not in kinds else "string", "optional": True}


def fitted_payload(schema: dict[str, Any], value: Any) -> Any:
    """A schemaless value as a payload of its inferred schema."""
    if value is None:
        return None
    t = schema["type"]
    if t == "struct":
        return {f["field"]: fitted_payload(f, value.get(f["field"])) for f in schema["fields"]}
    if t == "array":
        return [fitted_payload(schema["items"], v) for v in value]
    if t == "string" and not isinstance(value, str):
        return json.dumps(value, separators=(",", ":"), default=str)
    if t == "double":
        return float(value)
    return value
