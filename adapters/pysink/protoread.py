"""How the Python sink reads ProtobufConverter's records: the Schema Registry wire format (magic
byte 0, a 4-byte schema id, the message indexes as zigzag varints, the protobuf binary) turned
into the sink's own shape of Connect data, JsonConverter's: a schema object and a JSON payload.

Written from Confluent's ProtobufConverter, ProtobufSchema and ProtobufData (schema-registry
7.7.x, the converter's defaults), independently of the reference model:

* the message is a struct named by its short name with the subject's version; its real oneofs
  come first, each an optional struct `io.confluent.connect.protobuf.Union.<name>` in the field
  `<name>_<index>` (generate.index.for.unions), then the other fields as declared;
* every field is optional and carries `io.confluent.connect.protobuf.Tag`; sint32/sfixed32 and
  the 64-bit kinds other than int64 carry `io.confluent.connect.protobuf.Type`; uint32 and
  fixed32 are int64;
* enums are strings named by the enum with its symbols' numbers in parameters; nested messages
  are optional structs; the google.protobuf wrappers their optional primitive
  (wrapper.for.raw.primitives); `repeated` is an optional array;
  `map<K, V>` an optional map named after its field; Timestamp, google.type.Date and TimeOfDay
  are Connect's Timestamp, Date and Time;
* a proto3 scalar that is absent reads as its default unless declared `optional`; an absent
  message is null; an absent repeated field or map is empty.
"""
from __future__ import annotations

import base64
import re
import struct
from typing import Any

from adapters.pysink.jsonwrite import SizedMap, SizedPairs

NS = "io.confluent.connect.protobuf"
_TS, _DATE, _TIME = ("org.apache.kafka.connect.data.Timestamp", "org.apache.kafka.connect.data.Date",
                     "org.apache.kafka.connect.data.Time")
_WRAPPED = {"DoubleValue": "double", "FloatValue": "float", "Int64Value": "int64", "UInt64Value": "uint64",
            "Int32Value": "int32", "UInt32Value": "uint32", "BoolValue": "bool", "StringValue": "string",
            "BytesValue": "bytes"}
_BUILTIN_FIELDS = {
    "google.protobuf.Timestamp": [("seconds", "int64", 1), ("nanos", "int32", 2)],
    "google.type.Date": [("year", "int32", 1), ("month", "int32", 2), ("day", "int32", 3)],
    "google.type.TimeOfDay": [("hours", "int32", 1), ("minutes", "int32", 2), ("seconds", "int32", 3),
                              ("nanos", "int32", 4)],
    **{f"google.protobuf.{k}": [("value", v, 1)] for k, v in _WRAPPED.items()},
}
_IMPORTS = {"google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto", "google/type/date.proto",
            "google/type/timeofday.proto"}
_SCALAR = {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
           "sfixed32", "sfixed64", "bool", "string", "bytes"}
_CONNECT = {"double": "double", "float": "float", "bool": "boolean", "string": "string", "bytes": "bytes",
            "int32": "int32", "sint32": "int32", "sfixed32": "int32"}


class ProtoReadError(ValueError):
    """The converter cannot read the record (a DataException: the task dies)."""


# --- the schema text: nested dicts ---------------------------------------------------------------

def _lex(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.findall(r'"[^"]*"|[\w.]+|-?\d+|[{}=;<>,\[\]()]', text)


def _parse(text: str) -> dict:
    """{"package", "messages": [msg], "types": {full name: msg or enum}}; a message is
    {"kind": "message", "full", "name", "fields": [field], "oneofs": [name], "nested": [msg], "entry"},
    a field {"name", "num", "type", "label", "oneof"}; an enum {"kind": "enum", "full", "name", "values"}."""
    toks = _lex(text)
    pos = 0
    doc: dict[str, Any] = {"package": "", "messages": [], "types": {}, "syntax": "proto2", "imports": []}

    def nxt() -> str:
        nonlocal pos
        if pos >= len(toks):
            raise ProtoReadError("the schema text ends early")
        pos += 1
        return toks[pos - 1]

    def skip_to_semicolon() -> None:
        depth = 0
        while True:
            t = nxt()
            depth += t == "{"
            depth -= t == "}"
            if (t == ";" and depth == 0) or (t == "}" and depth == 0):
                return

    def field_rest(ftype: str, label: str | None, oneof: str | None) -> dict:
        if ftype == "map":
            nxt()
            k = nxt()
            nxt()
            v = nxt()
            nxt()
            ftype = f"map<{k},{v}>"
        name = nxt()
        nxt()  # =
        num = int(nxt())
        t = nxt()
        if t == "[":
            while nxt() != "]":
                pass
            t = nxt()
        return {"name": name, "num": num, "type": ftype, "label": label, "oneof": oneof}

    def enum(scope: str) -> dict:
        name = nxt()
        nxt()
        values = []
        while (t := nxt()) != "}":
            if t in ("option", "reserved"):
                skip_to_semicolon()
            elif t != ";":
                nxt()
                values.append((t, int(nxt())))
                u = nxt()
                if u == "[":
                    while nxt() != "]":
                        pass
                    nxt()
        full = f"{scope}.{name}" if scope else name
        e = {"kind": "enum", "full": full, "name": name, "values": values}
        doc["types"][full] = e
        return e

    def message(scope: str) -> dict:
        name = nxt()
        nxt()
        full = f"{scope}.{name}" if scope else name
        m: dict[str, Any] = {"kind": "message", "full": full, "name": name, "fields": [], "oneofs": [],
                             "nested": [], "entry": False}
        doc["types"][full] = m
        while (t := nxt()) != "}":
            if t == ";":
                continue
            if t in ("option", "reserved", "extensions"):
                skip_to_semicolon()
            elif t == "message":
                m["nested"].append(message(full))
            elif t == "enum":
                enum(full)
            elif t == "oneof":
                oname = nxt()
                nxt()
                m["oneofs"].append(oname)
                while (u := nxt()) != "}":
                    if u == "option":
                        skip_to_semicolon()
                    else:
                        m["fields"].append(field_rest(u, None, oname))
            else:
                label = t if t in ("optional", "repeated") else None
                f = field_rest(nxt() if label else t, label, None)
                if f["type"].startswith("map<"):
                    k, v = f["type"][4:-1].split(",")
                    entry_name = ("".join(w.capitalize() for w in f["name"].split("_")) if "_" in f["name"]
                                  else f["name"]) + "Entry"
                    entry = {"kind": "message", "full": f"{full}.{entry_name}", "name": entry_name, "oneofs": [],
                             "nested": [], "entry": True,
                             "fields": [{"name": "key", "num": 1, "type": k, "label": None, "oneof": None},
                                        {"name": "value", "num": 2, "type": v, "label": None, "oneof": None}]}
                    doc["types"][entry["full"]] = entry
                    m["nested"].append(entry)
                    f = {**f, "type": "." + entry["full"], "label": "repeated"}
                m["fields"].append(f)
        return m

    while pos < len(toks):
        t = nxt()
        if t == "syntax":
            nxt()
            doc["syntax"] = nxt().strip('"')
            nxt()
        elif t == "package":
            doc["package"] = nxt()
            nxt()
        elif t == "import":
            i = nxt()
            if i in ("public", "weak"):
                i = nxt()
            doc["imports"].append(i.strip('"'))
            nxt()
        elif t == "option":
            skip_to_semicolon()
        elif t == "message":
            doc["messages"].append(message(doc["package"]))
        elif t == "enum":
            enum(doc["package"])
    if doc["syntax"] != "proto3":
        raise ProtoReadError(f"the Python sink reads proto3 schemas, not {doc['syntax']}")
    for imp in doc["imports"]:
        if imp not in _IMPORTS:
            raise ProtoReadError(f"the schema imports {imp}, which the Python sink does not know")
    for full, fields in _BUILTIN_FIELDS.items():
        doc["types"][full] = {"kind": "message", "full": full, "name": full.rpartition(".")[2], "oneofs": [],
                              "nested": [], "entry": False,
                              "fields": [{"name": n, "num": i, "type": t, "label": None, "oneof": None}
                                         for n, t, i in fields]}
    return doc


def _type_of(doc: dict, msg: dict, type_name: str) -> Any:
    """A field's type: a scalar name, or the message/enum dict it names (protoc's scoping)."""
    if type_name in _SCALAR:
        return type_name
    if type_name.startswith("."):
        found = doc["types"].get(type_name[1:])
    else:
        scope = msg["full"].split(".")
        found = None
        while found is None:
            found = doc["types"].get(".".join(scope + [type_name]))
            if not scope:
                break
            scope = scope[:-1]
    if found is None:
        raise ProtoReadError(f"{msg['full']}: unknown type {type_name}")
    return found


# --- Connect schemas, in JsonConverter's shape ----------------------------------------------------

def _params_of(ftype: Any) -> dict[str, str]:
    if isinstance(ftype, str):
        if ftype in ("sint32", "sfixed32", "uint32", "fixed32", "uint64", "sint64", "fixed64", "sfixed64"):
            return {f"{NS}.Type": ftype}
        return {}
    return {}


def _value_schema(doc: dict, msg: dict, f: dict) -> dict:
    t = _type_of(doc, msg, f["type"])
    if isinstance(t, str):
        out: dict[str, Any] = {"type": _CONNECT.get(t, "int64")}
        if _params_of(t):
            out["parameters"] = _params_of(t)
    elif t["kind"] == "enum":
        out = {"type": "string", "name": t["name"],
               "parameters": {f"{NS}.Enum": t["name"], **{f"{NS}.Enum.{s}": str(n) for s, n in t["values"]}}}
    elif t["full"] == "google.protobuf.Timestamp":
        out = {"type": "int64", "name": _TS, "version": 1}
    elif t["full"] == "google.type.Date":
        out = {"type": "int32", "name": _DATE, "version": 1}
    elif t["full"] == "google.type.TimeOfDay":
        out = {"type": "int32", "name": _TIME, "version": 1}
    elif t["full"].startswith("google.protobuf.") and t["name"] in _WRAPPED:
        # wrapper.for.raw.primitives is on by default: a wrapper is its primitive, not a struct
        out = {"type": _CONNECT.get(_WRAPPED[t["name"]], "int64")}
    elif t["entry"]:
        k, v = t["fields"]
        base = t["name"][:-len("Entry")]
        out = {"type": "map", "name": re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower(),
               "keys": _field_schema(doc, t, k), "values": _field_schema(doc, t, v)}
    else:
        out = message_schema(doc, t)
    out["optional"] = True
    return out


def _field_schema(doc: dict, msg: dict, f: dict) -> dict:
    inner = _value_schema(doc, msg, f)
    tag = {f"{NS}.Tag": str(f["num"])}
    if f["label"] == "repeated" and inner["type"] != "map":
        return {"type": "array", "items": inner, "optional": True, "parameters": tag}
    return {**inner, "parameters": {**inner.get("parameters", {}), **tag}}


def message_schema(doc: dict, msg: dict, version: int | None = None) -> dict:
    fields = []
    for i, oneof in enumerate(msg["oneofs"]):
        members = [{**_field_schema(doc, msg, f), "field": f["name"]} for f in msg["fields"] if f["oneof"] == oneof]
        fields.append({"type": "struct", "name": f"{NS}.Union.{oneof}", "optional": True, "fields": members,
                       "field": f"{oneof}_{i}"})
    fields += [{**_field_schema(doc, msg, f), "field": f["name"]} for f in msg["fields"] if f["oneof"] is None]
    out: dict[str, Any] = {"type": "struct", "name": msg["name"], "fields": fields, "optional": False}
    if version is not None:
        out["version"] = version
    return out


# --- the binary, straight into payloads ----------------------------------------------------------

def _uvarint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if i >= len(data):
            raise ProtoReadError("the protobuf data ends inside a varint")
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n & ((1 << 64) - 1), i
        shift += 7


def _as_java(kind: str, n: int) -> int:
    if kind in ("sint32", "sint64"):
        return (n >> 1) ^ -(n & 1)
    bits = 32 if kind in ("int32", "uint32", "enum") else 64
    n &= (1 << bits) - 1
    if kind == "uint32":
        return n  # int64 in Connect: Integer.toUnsignedLong
    return n - (1 << bits) if n >> (bits - 1) else n


def _fields_of(data: bytes, start: int, end: int) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw) in order: raw is an int, or (start, end) of a length-delimited."""
    out, i = [], start
    while i < end:
        key, i = _uvarint(data, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _uvarint(data, i)
        elif wire == 1:
            v, i = data[i:i + 8], i + 8
        elif wire == 5:
            v, i = data[i:i + 4], i + 4
        elif wire == 2:
            n, i = _uvarint(data, i)
            v, i = (i, i + n), i + n
        else:
            raise ProtoReadError(f"wire type {wire} is not read")
        if i > end:
            raise ProtoReadError("the protobuf data ends early")
        out.append((num, wire, v))
    return out


def _scalars(kind: str, wire: int, v: Any, data: bytes) -> list[Any]:
    """The value(s) of one occurrence of a scalar field (a packed run gives several)."""
    if wire == 2 and kind not in ("string", "bytes"):
        s, e = v
        out = []
        if kind in ("fixed32", "sfixed32", "float"):
            return [_scalars(kind, 5, data[j:j + 4], data)[0] for j in range(s, e, 4)]
        if kind in ("fixed64", "sfixed64", "double"):
            return [_scalars(kind, 1, data[j:j + 8], data)[0] for j in range(s, e, 8)]
        while s < e:
            n, s = _uvarint(data, s)
            out.append(_scalars(kind, 0, n, data)[0])
        return out
    if wire == 0:
        return [bool(v) if kind == "bool" else _as_java(kind, v)]
    if wire == 5:
        fmt = {"fixed32": "<I", "sfixed32": "<i", "float": "<f"}[kind]
        return [struct.unpack(fmt, v)[0]]
    if wire == 1:
        fmt = {"fixed64": "<q", "sfixed64": "<q", "double": "<d"}[kind]
        return [struct.unpack(fmt, v)[0]]
    s, e = v
    raw = data[s:e]
    if kind == "string":
        return [raw.decode("utf-8")]
    return [base64.b64encode(raw).decode()]


_ZERO = {"string": "", "bytes": "", "bool": False, "float": 0.0, "double": 0.0}


def _message_payload(doc: dict, msg: dict, data: bytes, start: int, end: int, schema: dict) -> Any:
    if msg["full"] == "google.protobuf.Timestamp":
        v = _plain(doc, msg, data, start, end)
        return v.get("seconds", 0) * 1000 + v.get("nanos", 0) // 1_000_000
    if msg["full"] == "google.type.Date":
        import datetime

        v = _plain(doc, msg, data, start, end)
        return (datetime.date(v.get("year", 0), v.get("month", 0), v.get("day", 0)) - datetime.date(1970, 1, 1)).days
    if msg["full"] == "google.type.TimeOfDay":
        v = _plain(doc, msg, data, start, end)
        return (v.get("hours", 0) * 3600 + v.get("minutes", 0) * 60 + v.get("seconds", 0)) * 1000 \
            + v.get("nanos", 0) // 1_000_000
    if msg["full"].startswith("google.protobuf.") and msg["name"] in _WRAPPED:
        kind = _WRAPPED[msg["name"]]
        got = [_scalars(kind, w, v, data)[-1] for n, w, v in _fields_of(data, start, end) if n == 1]
        return got[-1] if got else _ZERO.get(kind, 0)
    by_num = {f["num"]: f for f in msg["fields"]}
    seen: dict[str, list] = {}
    for num, wire, v in _fields_of(data, start, end):
        f = by_num.get(num)
        if f is not None:
            seen.setdefault(f["name"], []).append((wire, v))
    schema_fields = {sf["field"]: sf for sf in schema["fields"]}
    out: dict[str, Any] = {}
    for i, oneof in enumerate(msg["oneofs"]):
        members = [f for f in msg["fields"] if f["oneof"] == oneof and f["name"] in seen]
        last = max(members, key=lambda f: _last_index(data, start, end, f["num"]), default=None)
        union = schema_fields[f"{oneof}_{i}"]
        if last is None:
            out[union["field"]] = None
        else:
            member_schema = next(sf for sf in union["fields"] if sf["field"] == last["name"])
            out[union["field"]] = {sf["field"]: (_one_field(doc, msg, last, seen[last["name"]], data, member_schema)
                                                 if sf["field"] == last["name"] else None) for sf in union["fields"]}
    for f in msg["fields"]:
        if f["oneof"] is not None:
            continue
        sf = schema_fields[f["name"]]
        t = _type_of(doc, msg, f["type"])
        if f["name"] in seen:
            out[f["name"]] = _one_field(doc, msg, f, seen[f["name"]], data, sf)
        elif f["label"] == "repeated":
            out[f["name"]] = SizedMap() if sf["type"] == "map" and sf["keys"]["type"] == "string" else (
                SizedPairs() if sf["type"] == "map" else [])
        elif isinstance(t, dict) and t["kind"] == "message" or f["label"] == "optional":
            out[f["name"]] = None
        elif isinstance(t, dict):  # an enum: its first symbol
            out[f["name"]] = t["values"][0][0]
        else:
            out[f["name"]] = _ZERO.get(t, 0)
    return out


def _last_index(data: bytes, start: int, end: int, num: int) -> int:
    return max(i for i, (n, _, _) in enumerate(_fields_of(data, start, end)) if n == num)


def _plain(doc: dict, msg: dict, data: bytes, start: int, end: int) -> dict:
    out = {}
    for num, wire, v in _fields_of(data, start, end):
        f = next((x for x in msg["fields"] if x["num"] == num), None)
        if f is not None:
            out[f["name"]] = _scalars(f["type"], wire, v, data)[-1]
    return out


def _one_field(doc: dict, msg: dict, f: dict, occurrences: list, data: bytes, schema: dict) -> Any:
    t = _type_of(doc, msg, f["type"])
    values: list[Any] = []
    for wire, v in occurrences:
        if isinstance(t, str):
            values += _scalars(t, wire, v, data)
        elif t["kind"] == "enum":
            for n in _scalars("enum", wire, v, data):
                values.append(next((s for s, k in t["values"] if k == n), f"UNKNOWN_ENUM_VALUE_{t['name']}_{n}"))
        else:
            values.append((t, v))
    if schema["type"] == "map":
        k_f, v_f = t["fields"]
        pairs = []
        for entry, (s, e) in values:
            got = {}
            for num, wire, raw in _fields_of(data, s, e):
                got[num] = (wire, raw)
            key = (_one_field(doc, entry, k_f, [got[1]], data, schema["keys"]) if 1 in got
                   else _ZERO.get(k_f["type"], 0))
            if 2 in got:
                val = _one_field(doc, entry, v_f, [got[2]], data, schema["values"])
            else:
                vt = _type_of(doc, entry, v_f["type"])
                val = (_ZERO.get(vt, 0) if isinstance(vt, str)
                       else vt["values"][0][0] if vt["kind"] == "enum" else None)
            pairs.append([key, val])
        # ProtobufData fills `new HashMap<>()`
        return SizedMap(dict(pairs)) if schema["keys"]["type"] == "string" else SizedPairs(pairs)
    item_schema = schema["items"] if schema["type"] == "array" else schema
    conv = [_message_payload(doc, v[0], data, v[1][0], v[1][1], item_schema)
            if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], dict) else v for v in values]
    return conv if schema["type"] == "array" else conv[-1]


# --- the converter ---------------------------------------------------------------------------

def _zigzag_varint(data: bytes, i: int) -> tuple[int, int]:
    n, i = _uvarint(data, i)
    return (n >> 1) ^ -(n & 1), i


def read(raw: bytes, registry: Any, topic: str, which: str, strategy: str) -> tuple[Any, Any]:
    """(schema, payload) of one non-null key or value: ProtobufConverter.toConnectData."""
    if len(raw) < 5 or raw[0] != 0:
        raise ProtoReadError("Unknown magic byte!")
    schema_id = int.from_bytes(raw[1:5], "big", signed=True)
    try:
        text, kind = registry.schema(schema_id)
    except Exception as e:  # noqa: BLE001 - the registry's error, whatever its class
        raise ProtoReadError(f"Error retrieving Protobuf schema for id {schema_id}: {e}") from None
    if str(kind).upper() != "PROTOBUF":
        raise ProtoReadError(f"schema {schema_id} is {kind}, not Protobuf")
    doc = _parse(text)
    count, i = _zigzag_varint(raw, 5)
    path = [0]
    if count:
        path = []
        for _ in range(count):
            n, i = _zigzag_varint(raw, i)
            path.append(n)
    level, msg = doc["messages"], None
    for n in path:
        if not 0 <= n < len(level):
            raise ProtoReadError(f"message index {n} is not in the schema")
        msg = level[n]
        level = msg["nested"]
    assert msg is not None
    short = strategy.rsplit(".", 1)[-1]
    subj = (f"{topic}-{which}" if short == "TopicNameStrategy" else msg["full"] if short == "RecordNameStrategy"
            else f"{topic}-{msg['full']}")
    try:
        version, _ = registry.lookup(subj, text, "PROTOBUF")
    except Exception as e:  # noqa: BLE001 - the subject does not hold the schema
        raise ProtoReadError(f"Error retrieving schema version for id {schema_id}: {e}") from None
    if msg["full"].startswith("google.protobuf.") and msg["name"] in _WRAPPED:
        # a bare wrapper is its primitive (wrapper.for.raw.primitives), required, with the version
        schema = {"type": _CONNECT.get(_WRAPPED[msg["name"]], "int64"), "optional": False, "version": version}
        return schema, _message_payload(doc, msg, raw, i, len(raw), schema)
    schema = message_schema(doc, msg, version)
    return schema, _message_payload(doc, msg, raw, i, len(raw), schema)
