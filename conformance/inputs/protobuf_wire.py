"""Records in the Schema Registry's wire format as Confluent's Protobuf serializer writes them:
the producer registers its proto3 schema under its subject, then writes magic byte 0, the id
the registry gave (4 bytes, big-endian), the message indexes (zigzag varints; a single 0 for the
file's first message) and the protobuf binary of the value.

A scenario whose converter is ProtobufConverter writes each key and value as
`{"schema": <proto3 text>, "payload": <the message in JSON>}`: the text as Confluent's
ProtobufSchema.canonicalString() writes it (what its serializer registers, and what the converter
asks the registry about again), and the first message of the file as the value, its fields by
name: numbers and bools as JSON, `bytes` in base64, an enum by its symbol, a nested message as an
object, a repeated field as a list, a map as an object, a oneof by the member that is set,
google.protobuf.Timestamp as epoch milliseconds, google.type.Date as ISO text ("2024-02-29"),
google.type.TimeOfDay as milliseconds of the day, a wrapper (google.protobuf.StringValue, ...) as
its value. `"message": <full name>` picks another top-level message than the first (a bare
google.protobuf.StringValue, say, in WRAPPERS_PROTO: the message indexes then name it). A field left out (or null) is not written; a singular field without `optional` that
holds its type's default is not written either, as protobuf's proto3 serializers do.
"""
from __future__ import annotations

import base64
import binascii
import datetime
import json
import struct
from typing import Any

from reference_impl.avro_data import subject_for
from reference_impl.proto_schema import (WRAPPERS, ProtoEnum, ProtoField, ProtoMessage, ProtoSchemaError, parse,
                                         scalar_kind)


class ProtobufNotation(ValueError):
    """A key or value that is not `{"schema": <proto3 text>, "payload": …}`, or a payload its
    message does not take: no producer could have written it."""


def _varint(n: int) -> bytes:
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zigzag(n: int, bits: int = 64) -> int:
    return ((n << 1) ^ (n >> (bits - 1))) & ((1 << bits) - 1)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ProtobufNotation(f"{what}: an integer, not {v!r}")
    return v


_RANGES = {"int32": (-2**31, 2**31 - 1), "sint32": (-2**31, 2**31 - 1), "sfixed32": (-2**31, 2**31 - 1),
           "uint32": (0, 2**32 - 1), "fixed32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1),
           "sint64": (-2**63, 2**63 - 1), "sfixed64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1),
           "fixed64": (0, 2**64 - 1)}


def _scalar(kind: str, fd: ProtoField, v: Any) -> tuple[int, bytes]:
    """(wire type, bytes) of one scalar or enum value."""
    what = fd.name
    if kind in _RANGES:
        n = _int(v, what)
        lo, hi = _RANGES[kind]
        if not lo <= n <= hi:
            raise ProtobufNotation(f"{what}: {n} is out of {kind}'s range")
        if kind in ("sint32", "sint64"):
            return 0, _varint(_zigzag(n, 32 if kind == "sint32" else 64))
        if kind in ("fixed32", "sfixed32"):
            return 5, struct.pack("<I" if kind == "fixed32" else "<i", n)
        if kind in ("fixed64", "sfixed64"):
            return 1, struct.pack("<Q" if kind == "fixed64" else "<q", n)
        return 0, _varint(n)
    if kind == "bool":
        if not isinstance(v, bool):
            raise ProtobufNotation(f"{what}: true or false, not {v!r}")
        return 0, _varint(int(v))
    if kind in ("float", "double"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ProtobufNotation(f"{what}: a number, not {v!r}")
        return (5, struct.pack("<f", float(v))) if kind == "float" else (1, struct.pack("<d", float(v)))
    if kind == "string":
        if not isinstance(v, str):
            raise ProtobufNotation(f"{what}: a string, not {v!r}")
        raw = v.encode("utf-8")
        return 2, _varint(len(raw)) + raw
    if kind == "bytes":
        if not isinstance(v, str):
            raise ProtobufNotation(f"{what}: bytes are written in base64 text, not {v!r}")
        try:
            raw = base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError):
            raise ProtobufNotation(f"{what}: {v[:40]!r} is not base64") from None
        return 2, _varint(len(raw)) + raw
    if kind == "enum":
        e: ProtoEnum = fd.resolved
        numbers = dict(e.values)
        if isinstance(v, str):
            if v not in numbers:
                raise ProtobufNotation(f"{what}: {v!r} is not a symbol of {e.name} ({', '.join(numbers)})")
            return 0, _varint(numbers[v])
        return 0, _varint(_int(v, what))
    raise ProtobufNotation(f"{what}: a {kind} is not a scalar")


def _is_default(kind: str, v: Any, fd: ProtoField) -> bool:
    if kind == "enum":
        first_name, first_number = fd.resolved.values[0]
        return v in (first_name, first_number)
    if kind == "bytes":
        return v == ""
    if kind == "bool":
        return v is False
    if kind in ("float", "double"):
        # a float field is written unless its bits are 0: -0.0 is written (protobuf-java's check)
        return isinstance(v, (int, float)) and not isinstance(v, bool) and struct.pack("<d", float(v)) == bytes(8)
    return v in (0, "") and not isinstance(v, bool)


def _well_known(m: ProtoMessage, v: Any, what: str) -> dict[str, Any]:
    """A well-known type's notation as the message's own fields."""
    if m.full_name in WRAPPERS:
        return {"value": v}
    if m.full_name == "google.protobuf.Timestamp":
        ms = _int(v, what)
        return {"seconds": ms // 1000, "nanos": (ms % 1000) * 1_000_000}
    if m.full_name == "google.type.Date":
        try:
            d = datetime.date.fromisoformat(v)
        except (TypeError, ValueError):
            raise ProtobufNotation(f"{what}: a google.type.Date is ISO text (2024-02-29), not {v!r}") from None
        return {"year": d.year, "month": d.month, "day": d.day}
    ms = _int(v, what)
    if not 0 <= ms < 86_400_000:
        raise ProtobufNotation(f"{what}: a TimeOfDay is milliseconds of a day, not {ms}")
    return {"hours": ms // 3_600_000, "minutes": ms // 60_000 % 60, "seconds": ms // 1000 % 60,
            "nanos": ms % 1000 * 1_000_000}


def encode(msg: ProtoMessage, payload: Any, where: str = "value") -> bytes:
    """The protobuf binary of one message in the scenario's JSON notation (fields by number)."""
    if msg.full_name in WRAPPERS or msg.full_name in ("google.protobuf.Timestamp", "google.type.Date",
                                                      "google.type.TimeOfDay"):
        payload = _well_known(msg, payload, where)
    if not isinstance(payload, dict):
        raise ProtobufNotation(f"{where}: a message is a JSON object, not {json.dumps(payload)[:60]}")
    names = {f.name for f in msg.fields}
    unknown = sorted(set(payload) - names)
    if unknown:
        raise ProtobufNotation(f"{where}: {msg.name} has no field {unknown[0]!r}")
    set_oneofs: dict[str, str] = {}
    out = bytearray()
    for fd in sorted(msg.fields, key=lambda f: f.number):
        v = payload.get(fd.name)
        if v is None:
            continue
        if fd.oneof is not None:
            if fd.oneof in set_oneofs:
                raise ProtobufNotation(f"{where}: oneof {fd.oneof} has {set_oneofs[fd.oneof]} and {fd.name} set")
            set_oneofs[fd.oneof] = fd.name
        out += _field(fd, v, f"{where}.{fd.name}")
    return bytes(out)


def _field(fd: ProtoField, v: Any, what: str) -> bytes:
    kind = scalar_kind(fd)
    if fd.repeated and kind == "message" and fd.resolved.map_entry:
        if not isinstance(v, dict):
            raise ProtobufNotation(f"{what}: a map is a JSON object, not {v!r}")
        key_fd, value_fd = fd.resolved.fields
        out = bytearray()
        for k, item in v.items():
            key = _map_key(scalar_kind(key_fd), k, what)
            entry = _field(key_fd, key, what) + (b"" if item is None else _field(value_fd, item, f"{what}.{k}"))
            out += _varint(fd.number << 3 | 2) + _varint(len(entry)) + entry
        return bytes(out)
    if fd.repeated:
        if not isinstance(v, list):
            raise ProtobufNotation(f"{what}: a repeated field is a JSON list, not {v!r}")
        if kind in ("string", "bytes", "message"):
            return b"".join(_one(fd, kind, x, f"{what}[{i}]") for i, x in enumerate(v))
        packed = b"".join(_scalar(kind, fd, x)[1] for x in v)  # proto3 packs repeated numbers
        return _varint(fd.number << 3 | 2) + _varint(len(packed)) + packed if v else b""
    if kind != "message" and fd.label != "optional" and fd.oneof is None and _is_default(kind, v, fd):
        return b""
    return _one(fd, kind, v, what)


def _one(fd: ProtoField, kind: str, v: Any, what: str) -> bytes:
    if kind == "message":
        body = encode(fd.resolved, v, what)
        return _varint(fd.number << 3 | 2) + _varint(len(body)) + body
    wire, raw = _scalar(kind, fd, v)
    return _varint(fd.number << 3 | wire) + raw


def _map_key(kind: str, k: str, what: str) -> Any:
    if kind == "string":
        return k
    if kind == "bool":
        return k == "true"
    try:
        return int(k)
    except ValueError:
        raise ProtobufNotation(f"{what}: map key {k!r} is not a {kind}") from None


def protobuf_bytes(item: Any, topic: str, which: str, registry: Any, strategy: str) -> bytes:
    """One key or value in the scenario's notation → the bytes Confluent's Protobuf serializer
    writes (registering its schema under its subject first, as auto.register.schemas does)."""
    if not isinstance(item, dict) or set(item) - {"message"} != {"schema", "payload"}:
        raise ProtobufNotation('with ProtobufConverter a scenario gives {"schema": <proto3 text>, "payload": <value>} '
                               f'(and "message": <a top-level message\'s full name>), not {json.dumps(item)[:80]}')
    text = item["schema"]
    if not isinstance(text, str):
        raise ProtobufNotation("the schema of a ProtobufConverter record is proto3 text")
    try:
        proto = parse(text)
    except ProtoSchemaError as e:
        raise ProtobufNotation(f"not a proto3 schema the model reads: {e}") from None
    if not proto.messages:
        raise ProtobufNotation("the schema defines no message")
    names = [m.full_name for m in proto.messages]
    index = names.index(item["message"]) if item.get("message") in names else 0
    if "message" in item and item["message"] not in names:
        raise ProtobufNotation(f"the schema has no top-level message {item['message']!r} ({', '.join(names)})")
    msg = proto.messages[index]
    body = encode(msg, item["payload"], which)
    subject = subject_for(topic, which, strategy, msg.full_name)
    schema_id = registry.register(subject, text, "PROTOBUF")
    # MessageIndexes: [0] as a single 0, else the count and each index, zigzag varints
    indexes = b"\x00" if index == 0 else _varint(_zigzag(1)) + _varint(_zigzag(index))
    return b"\x00" + int(schema_id).to_bytes(4, "big", signed=True) + indexes + body


# google/protobuf/wrappers.proto as a producer of a bare wrapper registers it (its messages in the
# file's order, which the message index counts; its options left out)
WRAPPERS_PROTO = 'syntax = "proto3";\npackage google.protobuf;\n\n' + "".join(
    f"message {full.rpartition('.')[2]} {{\n  {kind} value = 1;\n}}\n" for full, kind in WRAPPERS.items())
