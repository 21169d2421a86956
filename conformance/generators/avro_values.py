"""Values a producer application writes in Avro (read by AvroConverter): the record schema it
registers, as a hand-written .avsc has it, and the records in the notation of
conformance.inputs.registry_wire.

The schema is the drawn value schema (conformance.generators.values) as a producer spells it in
Avro: int8/int16/int32 as int, int64 as long, Decimal as bytes with a decimal logical type,
Date, Time and Timestamp as their logical types, an optional field as `["null", T]` with default
null, a map whose keys are not strings as an array of key/value records, structs as named records
in the producer's namespace; and beside them, drawn, what only Avro has: an enum with a default
symbol, a union of a string and a long, a fixed, a field with a doc and a non-null default.
"""
from __future__ import annotations

import base64
import decimal
from typing import Any

from hypothesis import strategies as st

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
NAMESPACE = "com.acme.orders"
_PRIMS = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float": "float", "double": "double",
          "boolean": "boolean", "string": "string", "bytes": "bytes"}
STATUSES = ("NEW", "PAID", "SHIPPED", "CANCELLED")

# the fields only Avro has, each drawn or not
AVRO_ONLY: dict[str, dict[str, Any]] = {
    "status": {"type": {"type": "enum", "name": "Status", "symbols": list(STATUSES), "default": "NEW"}},
    "coupon": {"type": ["null", "string", "long"], "default": None},
    "checksum": {"type": {"type": "fixed", "name": "Checksum", "size": 4}},
    "priority": {"type": "int", "default": 3, "doc": "1 is the most urgent"},
}


def _record_name(connect_name: str | None, fallback: str) -> str:
    base = (connect_name or fallback).rsplit(".", 1)[-1]
    return base[:1].upper() + base[1:]


def producer_type(schema: dict[str, Any], fallback: str, seen: set[str]) -> Any:
    """The Avro type a producer writes for a field of Connect schema `schema` (its optionality
    left to the caller)."""
    name, t = schema.get("name"), schema["type"]
    params = schema.get("parameters") or {}
    if name == DECIMAL:
        return {"type": "bytes", "logicalType": "decimal",
                "precision": int(params.get("connect.decimal.precision", "12")), "scale": int(params.get("scale", "0"))}
    if name == DATE:
        return {"type": "int", "logicalType": "date"}
    if name == TIME:
        return {"type": "int", "logicalType": "time-millis"}
    if name == TIMESTAMP:
        return {"type": "long", "logicalType": "timestamp-millis"}
    if t in _PRIMS:
        return _PRIMS[t]
    if t == "array":
        return {"type": "array", "items": _field_type(schema["items"], f"{fallback}Item", seen)}
    if t == "map":
        if schema["keys"]["type"] == "string":
            return {"type": "map", "values": _field_type(schema["values"], f"{fallback}Value", seen)}
        entry = _record_name(None, f"{fallback}Entry")
        if entry in seen:
            return {"type": "array", "items": entry}
        seen.add(entry)
        return {"type": "array", "items": {"type": "record", "name": entry, "fields": [
            {"name": "key", "type": producer_type(schema["keys"], f"{fallback}Key", seen)},
            {"name": "value", "type": _field_type(schema["values"], f"{fallback}Value", seen)}]}}
    if t == "struct":
        rec = _record_name(name, fallback)
        if rec in seen:
            return rec
        seen.add(rec)
        return {"type": "record", "name": rec, "fields": [
            {"name": f["field"], "type": _field_type(f, _record_name(None, f["field"]), seen),
             **({"default": None} if f.get("optional") else {"default": f["default"]} if "default" in f else {})}
            for f in schema["fields"]]}
    raise ValueError(f"no Avro type for {t}")


def _field_type(schema: dict[str, Any], fallback: str, seen: set[str]) -> Any:
    inner = producer_type(schema, fallback, seen)
    return ["null", inner] if schema.get("optional") else inner


def avro_only(name: str, changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The Avro-only field `name` (AVRO_ONLY) as a version of the producer's schema has it:
    `changes` (conformance.generators.evolution) holds the enum's symbols and the union's
    branches where a version changed them."""
    changes = changes or {}
    if name == "status" and "status" in changes:
        return {"type": {**AVRO_ONLY["status"]["type"], "symbols": list(changes["status"])}}
    if name == "coupon" and "coupon" in changes:
        return {"type": list(changes["coupon"]), "default": None}
    return AVRO_ONLY[name]


def producer_schema(connect: dict[str, Any], extras: tuple[str, ...] = (),
                    changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The .avsc a producer registers for values of the Connect struct schema `connect`, with
    the Avro-only `extras` (AVRO_ONLY, as `changes` has them) after its fields. A version that
    moved the record to another namespace names the old full name as an alias, as Avro asks of
    a rename that readers of the old name should follow."""
    changes = changes or {}
    seen: set[str] = set()
    rec = producer_type({**connect, "optional": False}, "Order", seen)
    namespace = changes.get("namespace", NAMESPACE)
    rec = {**rec, "namespace": namespace, "doc": connect.get("doc") or "an order as the shop's producer writes it"}
    if namespace != NAMESPACE:
        rec["aliases"] = [f"{NAMESPACE}.{rec['name']}"]
    rec["fields"] = rec["fields"] + [{"name": n, **avro_only(n, changes)} for n in extras]
    return rec


def producer_payload(connect: dict[str, Any], payload: Any) -> Any:
    """A JsonConverter payload of `connect` in the producer's notation (registry_wire)."""
    if payload is None:
        return None
    name, t = connect.get("name"), connect["type"]
    if name == DECIMAL:
        scale = int((connect.get("parameters") or {}).get("scale", "0"))
        unscaled = int.from_bytes(base64.b64decode(payload), "big", signed=True)
        return str(decimal.Decimal(unscaled).scaleb(-scale))
    if t == "array":
        return [producer_payload(connect["items"], v) for v in payload]
    if t == "map":
        if connect["keys"]["type"] == "string":
            return {k: producer_payload(connect["values"], v) for k, v in payload.items()}
        return [{"key": k, "value": producer_payload(connect["values"], v)} for k, v in payload]
    if t == "struct":
        return {f["field"]: producer_payload(f, payload.get(f["field"])) for f in connect["fields"]}
    return payload


@st.composite
def avro_only_extras(draw: st.DrawFn) -> tuple[str, ...]:
    """Which Avro-only fields a stream's schema has (shrinks toward none)."""
    return tuple(n for n in AVRO_ONLY if draw(st.integers(0, 2)) == 0)


@st.composite
def extra_values(draw: st.DrawFn, extras: tuple[str, ...], seq: int,
                 changes: dict[str, Any] | None = None) -> dict[str, Any]:
    """Values of the Avro-only fields: the enum's symbols of this version; a union's values in
    its first branches (a branch a version added is not written: the serializer takes the first
    branch that holds a value, and these values are all held by string or long)."""
    out: dict[str, Any] = {}
    symbols = tuple((changes or {}).get("status", STATUSES))
    for n in extras:
        if n == "status":
            out[n] = draw(st.sampled_from(symbols))
        elif n == "coupon":
            out[n] = draw(st.sampled_from((None, "SPRING", "<b>&amp;</b>", 9_007_199_254_740_993, -1)))
        elif n == "checksum":
            out[n] = base64.b64encode(bytes([seq % 256, 0, 255, draw(st.integers(0, 255))])).decode()
        elif n == "priority":
            out[n] = draw(st.integers(1, 5))
    return out
