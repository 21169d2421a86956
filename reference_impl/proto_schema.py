"""A Protobuf schema as the registry holds it (proto3 text), parsed into the descriptors
Confluent's ProtobufSchema builds from it (schema-registry 7.7.x, `ProtobufSchema.toDynamicMessage`),
and the protobuf binary read with them.

What the descriptors keep is what ProtobufData reads: each message's real oneofs (in order,
their fields first in the descriptor), then its other fields in declaration order (a proto3
`optional` field in place, in a synthetic oneof that is not a real one), nested messages and
enums, and a `map<K, V>` field as a repeated entry message named by `toMapEntry`. Type names
resolve as protoc resolves them (innermost scope outwards, a leading dot fully qualified). The
well-known types a schema may import without references (ProtobufSchema.KNOWN_DEPENDENCIES) are
built in: google/protobuf/timestamp.proto, wrappers.proto, google/type/date.proto and
timeofday.proto. Options, reserved ranges and comments are read and ignored.
"""
from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field
from typing import Any

SCALARS = ("double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
           "sfixed32", "sfixed64", "bool", "string", "bytes")


class ProtoSchemaError(ValueError):
    """Text that is not a proto schema the model reads, or binary that does not fit it."""


@dataclass
class ProtoField:
    name: str
    number: int
    type_name: str  # a scalar, or a message/enum name as written (resolved into `resolved`)
    label: str | None = None  # None, "optional" or "repeated"
    oneof: str | None = None  # the real oneof it belongs to
    resolved: Any = None  # ProtoMessage or ProtoEnum for a named type

    @property
    def repeated(self) -> bool:
        return self.label == "repeated"

    @property
    def proto3_optional(self) -> bool:
        return self.label == "optional" and self.oneof is None


@dataclass
class ProtoEnum:
    full_name: str
    name: str
    values: list[tuple[str, int]]

    def symbol(self, number: int) -> str:
        for name, n in self.values:
            if n == number:
                return name
        return f"UNKNOWN_ENUM_VALUE_{self.name}_{number}"  # Descriptors' unknown value of an open enum


@dataclass
class ProtoMessage:
    full_name: str
    name: str
    fields: list[ProtoField] = field(default_factory=list)  # descriptor order: real oneofs' first
    oneofs: list[tuple[str, list[ProtoField]]] = field(default_factory=list)
    messages: list["ProtoMessage"] = field(default_factory=list)
    enums: list[ProtoEnum] = field(default_factory=list)
    map_entry: bool = False

    def by_number(self) -> dict[int, ProtoField]:
        return {f.number: f for f in self.fields}


@dataclass
class ProtoFile:
    package: str | None
    imports: list[str]
    messages: list[ProtoMessage]
    enums: list[ProtoEnum]

    def message_at(self, indexes: list[int]) -> ProtoMessage:
        """The message a producer's message indexes name (ProtobufSchema.toMessageName)."""
        if not indexes:
            raise ProtoSchemaError("no message indexes")
        level = self.messages
        msg = None
        for i in indexes:
            if not 0 <= i < len(level):
                raise ProtoSchemaError(f"message index {i} is not in the schema ({len(level)} messages there)")
            msg = level[i]
            level = msg.messages
        assert msg is not None
        return msg


# --- the well-known types ----------------------------------------------------------------------

def _builtin(full: str, fields: list[tuple[str, str, int]]) -> ProtoMessage:
    return ProtoMessage(full, full.rpartition(".")[2], [ProtoField(n, num, t) for n, t, num in fields])


WRAPPERS = {"google.protobuf.DoubleValue": "double", "google.protobuf.FloatValue": "float",
            "google.protobuf.Int64Value": "int64", "google.protobuf.UInt64Value": "uint64",
            "google.protobuf.Int32Value": "int32", "google.protobuf.UInt32Value": "uint32",
            "google.protobuf.BoolValue": "bool", "google.protobuf.StringValue": "string",
            "google.protobuf.BytesValue": "bytes"}
WELL_KNOWN: dict[str, tuple[str, ...]] = {
    "google/protobuf/timestamp.proto": ("google.protobuf.Timestamp",),
    "google/protobuf/wrappers.proto": tuple(WRAPPERS),
    "google/type/date.proto": ("google.type.Date",),
    "google/type/timeofday.proto": ("google.type.TimeOfDay",),
}


def _well_known(full: str) -> ProtoMessage:
    if full in WRAPPERS:
        return _builtin(full, [("value", WRAPPERS[full], 1)])
    return {
        "google.protobuf.Timestamp": lambda: _builtin(full, [("seconds", "int64", 1), ("nanos", "int32", 2)]),
        "google.type.Date": lambda: _builtin(full, [("year", "int32", 1), ("month", "int32", 2), ("day", "int32", 3)]),
        "google.type.TimeOfDay": lambda: _builtin(full, [("hours", "int32", 1), ("minutes", "int32", 2),
                                                         ("seconds", "int32", 3), ("nanos", "int32", 4)]),
    }[full]()


# --- the text ----------------------------------------------------------------------------------

_TOKEN = re.compile(r"""\s+|//[^\n]*|/\*.*?\*/|(?P<tok>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[A-Za-z_.][A-Za-z0-9_.]*|-?[0-9][A-Za-z0-9_.+-]*|[{}=;<>,\[\]()])""",
                    re.S)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ProtoSchemaError(f"unexpected character {text[pos]!r} at offset {pos}")
        if m.group("tok"):
            out.append(m.group("tok"))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.toks, self.i = _tokens(text), 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        t = self.peek()
        if t is None or (want is not None and t != want):
            raise ProtoSchemaError(f"expected {want or 'more'}, found {t!r}")
        self.i += 1
        return t

    def skip_statement(self) -> None:
        depth = 0
        while True:
            t = self.take()
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    return
            elif t == ";" and depth == 0:
                return

    def skip_options(self) -> None:
        if self.peek() == "[":
            while self.take() != "]":
                pass


@functools.lru_cache(maxsize=1024)
def parse(text: str) -> ProtoFile:
    """The schema text → its descriptors, names resolved. ProtoSchemaError where protoc would refuse
    it or the model does not read it (proto2, groups, extensions).

    Parsed once per text: a stream writes and reads every record of a topic with the same few
    schemas, and the descriptors are only read after this (a refused text raises each time)."""
    p = _Parser(text)
    package, imports, messages, enums = None, [], [], []
    syntax = "proto2"
    while p.peek() is not None:
        t = p.take()
        if t == "syntax":
            p.take("=")
            syntax = p.take().strip("\"'")
            p.take(";")
        elif t == "package":
            package = p.take()
            p.take(";")
        elif t == "import":
            name = p.take()
            if name in ("public", "weak"):
                name = p.take()
            imports.append(name.strip("\"'"))
            p.take(";")
        elif t == "option":
            p.skip_statement()
        elif t == "message":
            messages.append(_message(p, package))
        elif t == "enum":
            enums.append(_enum(p, package))
        elif t == ";":
            continue
        else:
            raise ProtoSchemaError(f"the model reads messages and enums of a proto file, not {t!r}")
    if syntax != "proto3":
        raise ProtoSchemaError(f'the model reads proto3 schemas, not syntax "{syntax}"')
    f = ProtoFile(package, imports, messages, enums)
    _resolve(f)
    return f


def _scoped(scope: str | None, name: str) -> str:
    return f"{scope}.{name}" if scope else name


def _enum(p: _Parser, scope: str | None) -> ProtoEnum:
    name = p.take()
    p.take("{")
    values = []
    while p.peek() != "}":
        t = p.take()
        if t in ("option", "reserved"):
            p.skip_statement()
            continue
        if t == ";":
            continue
        p.take("=")
        number = int(p.take(), 0)
        p.skip_options()
        p.take(";")
        values.append((t, number))
    p.take("}")
    return ProtoEnum(_scoped(scope, name), name, values)


def to_map_entry(field_name: str) -> str:
    """ProtobufSchema.toMapEntry: the entry message of a map field (Guava LOWER_UNDERSCORE → UPPER_CAMEL
    only where the name has an underscore)."""
    if "_" in field_name:
        field_name = "".join(w[:1].upper() + w[1:].lower() for w in field_name.split("_"))
    return field_name + "Entry"


def _message(p: _Parser, scope: str | None) -> ProtoMessage:
    name = p.take()
    full = _scoped(scope, name)
    msg = ProtoMessage(full, name)
    plain: list[ProtoField] = []
    p.take("{")
    while p.peek() != "}":
        t = p.take()
        if t == ";":
            continue
        if t in ("option", "reserved", "extensions"):
            p.skip_statement()
        elif t == "message":
            msg.messages.append(_message(p, full))
        elif t == "enum":
            msg.enums.append(_enum(p, full))
        elif t == "oneof":
            oneof = p.take()
            p.take("{")
            members = []
            while p.peek() != "}":
                u = p.take()
                if u == "option":
                    p.skip_statement()
                    continue
                members.append(_field(p, u, None, oneof))
            p.take("}")
            msg.oneofs.append((oneof, members))
        elif t in ("extend", "group", "required"):
            raise ProtoSchemaError(f"the model does not read {t!r} in a proto3 message")
        else:
            label = t if t in ("optional", "repeated") else None
            f = _field(p, p.take() if label else t, label, None)
            if f.type_name.startswith("map<"):
                key, value = f.type_name[4:-1].split(",")
                entry = ProtoMessage(_scoped(full, to_map_entry(f.name)), to_map_entry(f.name),
                                     [ProtoField("key", 1, key.strip()), ProtoField("value", 2, value.strip())],
                                     map_entry=True)
                msg.messages.append(entry)
                f = ProtoField(f.name, f.number, entry.full_name, "repeated")
            plain.append(f)
    p.take("}")
    msg.fields = [f for _, members in msg.oneofs for f in members] + plain
    return msg


def _field(p: _Parser, type_name: str, label: str | None, oneof: str | None) -> ProtoField:
    if type_name == "map":
        parts = [p.take("<"), p.take(), p.take(","), p.take(), p.take(">")]
        type_name = f"map<{parts[1]},{parts[3]}>"
    name = p.take()
    p.take("=")
    number = int(p.take(), 0)
    p.skip_options()
    p.take(";")
    return ProtoField(name, number, type_name, label, oneof)


def _resolve(f: ProtoFile) -> None:
    known: dict[str, Any] = {}

    def index(msgs: list[ProtoMessage], enums: list[ProtoEnum]) -> None:
        for e in enums:
            known[e.full_name] = e
        for m in msgs:
            known[m.full_name] = m
            index(m.messages, m.enums)

    index(f.messages, f.enums)
    for imp in f.imports:
        if imp not in WELL_KNOWN:
            raise ProtoSchemaError(f'import "{imp}": the model reads the well-known imports '
                                   f"{', '.join(sorted(WELL_KNOWN))} only (no schema references)")
        for full in WELL_KNOWN[imp]:
            known[full] = _well_known(full)

    def lookup(name: str, scope: str) -> Any:
        if name.startswith("."):
            return known.get(name[1:])
        parts = scope.split(".") if scope else []
        while True:
            found = known.get(".".join(parts + [name]))
            if found is not None:
                return found
            if not parts:
                return None
            parts.pop()

    def walk(m: ProtoMessage) -> None:
        for fd in m.fields:
            if fd.type_name in SCALARS:
                continue
            fd.resolved = lookup(fd.type_name, m.full_name)
            if fd.resolved is None:
                raise ProtoSchemaError(f"{m.full_name}.{fd.name}: no type {fd.type_name!r} (imports: {f.imports})")
        for n in m.messages:
            walk(n)

    for m in f.messages:
        walk(m)


# --- the binary --------------------------------------------------------------------------------

class Reader:
    def __init__(self, data: bytes, pos: int = 0, end: int | None = None):
        self.data, self.pos, self.end = data, pos, len(data) if end is None else end

    def at_end(self) -> bool:
        return self.pos >= self.end

    def varint(self) -> int:
        """An unsigned varint, up to 64 bits."""
        n = shift = 0
        while True:
            if self.pos >= self.end:
                raise ProtoSchemaError("the protobuf data ends inside a varint")
            b = self.data[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if b < 0x80:
                return n & 0xFFFFFFFFFFFFFFFF
            shift += 7
            if shift >= 70:
                raise ProtoSchemaError("a malformed varint")

    def take(self, n: int) -> bytes:
        if self.pos + n > self.end:
            raise ProtoSchemaError("the protobuf data ends early")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out


def zigzag_varint(r: Reader) -> int:
    """Confluent's ByteUtils.readVarint: a zigzag-encoded int (the message indexes)."""
    n = r.varint()
    return (n >> 1) ^ -(n & 1)


def _signed(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


_VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool", "enum"}
_FIXED32 = {"fixed32": "<I", "sfixed32": "<i", "float": "<f"}
_FIXED64 = {"fixed64": "<Q", "sfixed64": "<q", "double": "<d"}


def scalar_kind(fd: ProtoField) -> str:
    if fd.type_name in SCALARS:
        return fd.type_name
    return "enum" if isinstance(fd.resolved, ProtoEnum) else "message"


def _from_varint(kind: str, n: int) -> Any:
    """A varint as the Java value DynamicMessage holds (ints as their Java int/long bits)."""
    if kind in ("int32", "uint32", "enum"):
        return _signed(n, 32)
    if kind in ("int64", "uint64"):
        return _signed(n, 64)
    if kind == "sint32":
        n &= 0xFFFFFFFF
        return (n >> 1) ^ -(n & 1)
    if kind == "sint64":
        return (n >> 1) ^ -(n & 1)
    return n != 0  # bool


def decode(msg: ProtoMessage, data: bytes, start: int = 0, end: int | None = None) -> dict[int, Any]:
    """The fields present in a message's binary: field number → value (a repeated field's list; a
    message's own dict; an enum's number; a uint32/fixed32 as Java's signed int). Unknown fields
    are skipped, as DynamicMessage keeps them aside."""
    r = Reader(data, start, end)
    by_number = msg.by_number()
    out: dict[int, Any] = {}
    while not r.at_end():
        key = r.varint()
        number, wire = key >> 3, key & 7
        fd = by_number.get(number)
        if fd is None:
            _skip(r, wire)
            continue
        kind = scalar_kind(fd)
        if fd.repeated and wire == 2 and kind not in ("string", "bytes", "message"):
            n = r.varint()
            sub = Reader(data, r.pos, r.pos + n)
            r.pos += n
            values = out.setdefault(number, [])
            while not sub.at_end():
                values.append(_one(kind, fd, sub, _packed_wire(kind)))
            continue
        value = _one(kind, fd, r, wire)
        if fd.repeated:
            out.setdefault(number, []).append(value)
        else:
            if fd.oneof is not None:  # a oneof holds its last member set
                for other in msg.fields:
                    if other.oneof == fd.oneof:
                        out.pop(other.number, None)
            out[number] = value
    return out


def _packed_wire(kind: str) -> int:
    if kind in _FIXED32:
        return 5
    if kind in _FIXED64:
        return 1
    return 0


def _one(kind: str, fd: ProtoField, r: Reader, wire: int) -> Any:
    if kind in _VARINT_TYPES and wire == 0:
        return _from_varint(kind, r.varint())
    if kind in _FIXED32 and wire == 5:
        v = struct.unpack(_FIXED32[kind], r.take(4))[0]
        return _signed(v, 32) if kind == "fixed32" else v
    if kind in _FIXED64 and wire == 1:
        v = struct.unpack(_FIXED64[kind], r.take(8))[0]
        return _signed(v, 64) if kind == "fixed64" else v
    if wire == 2 and kind in ("string", "bytes", "message"):
        n = r.varint()
        if kind == "message":
            start = r.pos
            r.take(n)
            return decode(fd.resolved, r.data, start, start + n)
        raw = r.take(n)
        if kind == "string":
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ProtoSchemaError(f"field {fd.name}: a string that is not UTF-8") from None
        return bytes(raw)
    raise ProtoSchemaError(f"field {fd.name} ({kind}) written with wire type {wire}")


def _skip(r: Reader, wire: int) -> None:
    if wire == 0:
        r.varint()
    elif wire == 1:
        r.take(8)
    elif wire == 2:
        r.take(r.varint())
    elif wire == 5:
        r.take(4)
    else:
        raise ProtoSchemaError(f"wire type {wire} (groups) is not read")


def default_of(fd: ProtoField) -> Any:
    """proto3's default of a field not present (getField of an unset singular field)."""
    kind = scalar_kind(fd)
    if kind == "string":
        return ""
    if kind == "bytes":
        return b""
    if kind == "bool":
        return False
    if kind in ("float", "double"):
        return 0.0
    if kind == "enum":
        return fd.resolved.values[0][1]
    if kind == "message":
        return None
    return 0

