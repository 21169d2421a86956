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

A later version that no longer has a field an earlier version of its subject had reserves the
field's number and name (`reserved 9;` and `reserved "audit";`, protobuf's guidance for a dropped
field), in every message, nested ones too; a nested message that is gone entirely stays as a
message of its reservations alone. A registry checking Protobuf evolutions (Apicurio's checker)
refuses a version that drops a field without them, and Confluent's accepts it either way.
Reserved numbers and names are no fields: the Connect schema ProtobufData reads is the same.
"""
from __future__ import annotations

import base64
import datetime
import decimal
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

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

# a message's place in the file: the names of the messages from the top one down to it
MessagePath = tuple[str, ...]
# each message's fields, name to number, as producer_schema numbers them
Layout = dict[MessagePath, dict[str, int]]


@dataclass(frozen=True)
class Reserved:
    """The field numbers and names a message reserves: earlier versions' fields it no longer has."""
    numbers: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """The reserved statements as ProtobufSchema.canonicalString() writes them back (one
        statement a kind, its values as written), so the converter finds the version again."""
        quoted = [f'"{n}"' for n in self.names]
        return [f"reserved {', '.join(values)};" for values in ([str(n) for n in self.numbers], quoted) if values]


def _message_name(name: str) -> str:
    """A message name from a Connect name or a field name (its last dotted part, CamelCase)."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name.rsplit(".", 1)[-1])
    out = "".join(w[:1].upper() + w[1:] for w in base.split("_") if w) or "M"
    return out if out[0].isalpha() else "M" + out


def _type(schema: dict[str, Any], field: str, nested: list[str], imports: set[str], path: MessagePath,
          layout: Layout, reserved: Mapping[MessagePath, Reserved]) -> str | None:
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
        nested.append(_message(path + (msg,), schema, imports, layout, reserved))
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


def _message(path: MessagePath, schema: dict[str, Any], imports: set[str], layout: Layout,
             reserved: Mapping[MessagePath, Reserved]) -> str:
    """The message at `path` for a struct schema, its fields numbered by their place in the
    struct, recording them in `layout`; `reserved`: what each message reserves."""
    lines: list[str] = []
    nested: list[str] = []
    fields = layout.setdefault(path, {})
    for number, f in enumerate(schema["fields"], start=1):
        if not _kept(f):
            continue
        field, t = f["field"], f["type"]
        fields[field] = number
        if t == "array":
            item = _type(f["items"], field, nested, imports, path, layout, reserved)
            lines.append(f"repeated {item} {field} = {number};")
        elif t == "map":
            value = _type(f["values"], f"{field}_value", nested, imports, path, layout, reserved)
            lines.append(f"map<{_MAP_KEYS[f['keys']['type']]}, {value}> {field} = {number};")
        else:
            proto = _type(f, field, nested, imports, path, layout, reserved)
            scalar = proto in _SCALARS.values()
            lines.append(f"{'optional ' if scalar and f.get('optional') else ''}{proto} {field} = {number};")
    # nested messages an earlier version had and this one has not: their reservations alone
    nested += [_gone(p, reserved) for p in _children(path, reserved) if p not in layout]
    return _body(path[-1], reserved.get(path, Reserved()), lines, nested)


def _children(path: MessagePath, reserved: Mapping[MessagePath, Reserved]) -> list[MessagePath]:
    """The messages directly inside `path` that reserve something, or hold one that does."""
    return list(dict.fromkeys(p[:len(path) + 1] for p in reserved if len(p) > len(path) and p[:len(path)] == path))


def _gone(path: MessagePath, reserved: Mapping[MessagePath, Reserved]) -> str:
    return _body(path[-1], reserved.get(path, Reserved()), [], [_gone(p, reserved) for p in _children(path, reserved)])


def _body(name: str, reserved: Reserved, lines: list[str], nested: list[str]) -> str:
    """A message as canonicalString() writes one: its reservations, a blank line, its fields, a
    blank line, its nested messages (a blank line only between two parts that are there)."""
    parts = [part for part in ("".join(f"  {line}\n" for line in reserved.lines()),
                               "".join(f"  {line}\n" for line in lines),
                               # as ProtobufSchemaUtils indents a nested type: every line, blank ones too
                               "".join(f"  {line}\n" for m in nested for line in m.splitlines())) if part]
    return f"message {name} {{\n" + "\n".join(parts) + "}\n"


def _top(schema: dict[str, Any]) -> MessagePath:
    return (_message_name(schema.get("name") or "order"),)


def producer_schema(schema: dict[str, Any], reserved: Mapping[MessagePath, Reserved] | None = None) -> str:
    """The proto3 text a producer registers for a Connect struct schema; `reserved`: what each
    message reserves (dropped_fields), by its path from the top message."""
    imports: set[str] = set()
    top = _message(_top(schema), schema, imports, {}, reserved or {})
    head = f'syntax = "proto3";\npackage {PACKAGE};\n'
    if imports:
        head += "\n" + "".join(f'import "{i}";\n' for i in sorted(imports))
    return head + "\n" + top


def message_full_name(schema: dict[str, Any]) -> str:
    """The full name of the producer's message for a Connect struct schema (what a
    RecordNameStrategy names its subject after)."""
    return f"{PACKAGE}.{_top(schema)[0]}"


def message_layout(schema: dict[str, Any]) -> Layout:
    """Each message of the producer's text for a Connect struct schema, with its fields' numbers."""
    layout: Layout = {}
    _message(_top(schema), schema, set(), layout, {})
    return layout


def dropped_fields(earlier: Iterable[Layout], now: Layout) -> dict[MessagePath, Reserved]:
    """What each message of a version (`now`) reserves: the numbers and names of fields that
    earlier versions of its subject had in that message and it has no more (a number still in
    use by another field is not reserved; a message gone entirely reserves all it had)."""
    numbers: dict[MessagePath, set[int]] = {}
    names: dict[MessagePath, dict[str, int]] = {}
    for before in earlier:
        for path, fields in before.items():
            have = now.get(path, {})
            used = set(have.values())
            numbers.setdefault(path, set()).update(n for n in fields.values() if n not in used)
            names.setdefault(path, {}).update((name, n) for name, n in fields.items() if name not in have)
    out = {}
    for path in numbers:
        kept = Reserved(tuple(sorted(numbers[path])), tuple(sorted(names[path], key=lambda x: (names[path][x], x))))
        if kept.numbers or kept.names:
            out[path] = kept
    return out


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
