"""Avro as the converter's deserializer reads it, before AvroData sees it: the writer schema
parsed with its named types resolvable, and the Avro binary decoded with it (GenericDatumReader
with the writer schema). A union's branch is kept (`Branch`), which AvroData needs to pick the
field of a Union struct (reference_impl.avro_data)."""
from __future__ import annotations

import io
import copy
import json
import struct as _struct
from dataclasses import dataclass
from typing import Any

from reference_impl.connect_data import SchemaError

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")


class AvroDataError(SchemaError):
    """What the converter throws as a DataException (SerializationException wrapped)."""


# --- the writer schema, parsed ---------------------------------------------------------------------

class Named:
    """The named types of one schema, by full name (a name may be used before its type is done:
    recursive records)."""

    def __init__(self) -> None:
        self.types: dict[str, dict[str, Any]] = {}


def parse(text_or_json: Any) -> tuple[Any, Named]:
    """An Avro schema (JSON text or already parsed) with every named type resolvable: returns
    the schema and its named types; each named type gets its full name in `fullname`."""
    # the index writes `fullname` and `_ns` into the nodes: a schema handed in parsed is copied,
    # or the caller's (a scenario's record, a cached schema) would change under it
    node = json.loads(text_or_json) if isinstance(text_or_json, str) else copy.deepcopy(text_or_json)
    named = Named()
    _index(node, None, named)
    return node, named


def _full(name: str, ns: str | None) -> str:
    return name if "." in name or not ns else f"{ns}.{name}"


def _index(node: Any, ns: str | None, named: Named) -> None:
    if isinstance(node, list):
        for m in node:
            _index(m, ns, named)
        return
    if not isinstance(node, dict):
        return
    t = node.get("type")
    if isinstance(t, (dict, list)):
        _index(t, ns, named)
        return
    if t in ("record", "error", "enum", "fixed"):
        full = _full(node["name"], node.get("namespace", ns))
        node["fullname"] = full
        named.types[full] = node
        ns = full.rpartition(".")[0] or None
        for f in node.get("fields", []):
            f.setdefault("_ns", ns)
            _index(f["type"], ns, named)
    elif t == "array":
        _index(node["items"], ns, named)
    elif t == "map":
        _index(node["values"], ns, named)


def resolve(node: Any, named: Named, ns: str | None = None) -> Any:
    """A type by reference (a name) → its definition; anything else as it is."""
    if isinstance(node, str) and node not in PRIMITIVES:
        found = named.types.get(node) or named.types.get(_full(node, ns))
        if found is None:
            raise AvroDataError(f"undefined Avro name {node!r}")
        return found
    if isinstance(node, dict) and isinstance(node.get("type"), (dict, list)) and not node.get("logicalType"):
        return resolve(node["type"], named, ns)
    if isinstance(node, dict) and isinstance(node.get("type"), str) and node["type"] not in PRIMITIVES + (
            "record", "error", "enum", "fixed", "array", "map"):
        return resolve(node["type"], named, ns)
    return node


def type_of(node: Any) -> str:
    if isinstance(node, list):
        return "union"
    if isinstance(node, str):
        return node
    t = node.get("type")
    return "record" if t == "error" else t


def prop(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, dict) else None


# --- Avro binary (GenericDatumReader with the writer schema) ---------------------------------------

@dataclass(frozen=True)
class Branch:
    """A union's value with the index of the branch it was written with."""

    index: int
    value: Any


class _Reader:
    def __init__(self, data: bytes):
        self.buf = io.BytesIO(data)

    def read(self, n: int) -> bytes:
        b = self.buf.read(n)
        if len(b) != n:
            raise AvroDataError("the Avro data ends early (EOFException)")
        return b

    def long(self) -> int:
        shift, out = 0, 0
        while True:
            b = self.read(1)[0]
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise AvroDataError("an Avro varint is longer than 10 bytes")
        return (out >> 1) ^ -(out & 1)


def decode(node: Any, named: Named, data: bytes) -> Any:
    """The Avro binary `data` of one datum written with `node`; the whole of it must be read."""
    r = _Reader(data)
    value = _read(node, named, r, None)
    return value


def _read(node: Any, named: Named, r: _Reader, ns: str | None) -> Any:
    node = resolve(node, named, ns)
    t = type_of(node)
    if t == "null":
        return None
    if t == "boolean":
        return r.read(1) != b"\x00"
    if t in ("int", "long"):
        return r.long()
    if t == "float":
        return _struct.unpack("<f", r.read(4))[0]
    if t == "double":
        return _struct.unpack("<d", r.read(8))[0]
    if t == "bytes":
        return r.read(r.long())
    if t == "string":
        try:
            return r.read(r.long()).decode("utf-8")
        except UnicodeDecodeError as e:
            raise AvroDataError(f"an Avro string is not UTF-8: {e}") from None
    if t == "fixed":
        return r.read(int(node["size"]))
    if t == "enum":
        i = r.long()
        symbols = node["symbols"]
        if not 0 <= i < len(symbols):
            raise AvroDataError(f"enum index {i} out of range for {node.get('fullname')}")
        return symbols[i]
    if t == "union":
        i = r.long()
        if not 0 <= i < len(node):
            raise AvroDataError(f"union index {i} out of range")
        return Branch(i, _read(node[i], named, r, ns))
    if t == "array":
        out = []
        for _ in _blocks(r):
            out.append(_read(node["items"], named, r, ns))
        return out
    if t == "map":
        pairs = []
        for _ in _blocks(r):
            k = r.read(r.long()).decode("utf-8")
            pairs.append((k, _read(node["values"], named, r, ns)))
        return pairs
    if t == "record":
        inner = node.get("fullname", "").rpartition(".")[0] or None
        return {f["name"]: _read(f["type"], named, r, f.get("_ns", inner)) for f in node["fields"]}
    raise AvroDataError(f"unknown Avro type {t!r}")


def _blocks(r: _Reader):
    while True:
        n = r.long()
        if n == 0:
            return
        if n < 0:
            r.long()  # the block's size in bytes
            n = -n
        for _ in range(n):
            yield None
