"""How the Python sink reads AvroConverter's records: the Schema Registry wire format (magic byte
0, a 4-byte schema id, the Avro binary of the value) turned into the sink's own shape of Connect
data, JsonConverter's (adapters/pysink/converters.py): a schema object and a JSON payload.

Written from Confluent's AvroConverter and AvroData (schema-registry 7.7.x, the converter's
defaults: connect.meta.data on, enhanced Avro schema support off), independently of the
reference model. The registry is asked what the converter asks it: the schema by id, then the
version under which the record's subject holds that schema.

* Records are structs named by their full name (unless AvroData named them ConnectDefault…, or a
  `connect.name` says otherwise), docs kept in parameters; `[null, T]` is an optional T; other
  unions are a struct `io.confluent.connect.avro.Union` with an optional field per branch; an
  enum is a string named after it with its symbols in parameters; a fixed is bytes with
  `connect.fixed.size`; AvroData's MapEntry arrays are maps again.
* decimal → Decimal (the payload as base64 of the unscaled value, as JsonConverter carries it),
  date → Date (days), time-millis → Time, timestamp-millis → Timestamp (epoch ms); every other
  logical type is its underlying type.
* A record field's Avro default is the Connect default, flagged
  `io.confluent.connect.avro.field.default` (unless `connect.default` stored it).
"""
from __future__ import annotations

import base64
import json
import struct
from typing import Any, Protocol

from adapters.pysink.jsonwrite import SizedMap, SizedPairs

NS = "io.confluent.connect.avro"
_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_LOGICAL = {"date": ("int32", "org.apache.kafka.connect.data.Date"),
            "time-millis": ("int32", "org.apache.kafka.connect.data.Time"),
            "timestamp-millis": ("int64", "org.apache.kafka.connect.data.Timestamp")}
_SIMPLE = {"boolean": "boolean", "int": "int32", "long": "int64", "float": "float", "double": "double",
           "string": "string", "bytes": "bytes"}
TOPIC_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"


class SinkRegistry(Protocol):
    """The registry calls the converter makes (RegistryClient or the in-memory registry)."""

    def schema(self, schema_id: int) -> tuple[str, str]: ...

    def lookup(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> tuple[int, int]: ...


class AvroReadError(ValueError):
    """The converter cannot read the record (a DataException: the task dies)."""


class _Types:
    """An Avro schema's named types, by full name."""

    def __init__(self, root: Any):
        self.by_name: dict[str, dict] = {}
        self._walk(root, None)

    def _walk(self, t: Any, ns: str | None) -> None:
        if isinstance(t, list):
            for m in t:
                self._walk(m, ns)
        elif isinstance(t, dict):
            kind = t.get("type")
            if isinstance(kind, (dict, list)):
                self._walk(kind, ns)
                return
            if kind in ("record", "error", "enum", "fixed"):
                name = t["name"]
                space = t.get("namespace", ns)
                full = name if "." in name or not space else f"{space}.{name}"
                t["_full"] = full
                self.by_name[full] = t
                ns = full.rpartition(".")[0] or None
                for f in t.get("fields", []):
                    f["_ns"] = ns
                    self._walk(f["type"], ns)
            elif kind == "array":
                self._walk(t["items"], ns)
            elif kind == "map":
                self._walk(t["values"], ns)

    def get(self, t: Any, ns: str | None) -> Any:
        """A type, references resolved."""
        while True:
            if isinstance(t, str) and t not in _SIMPLE and t != "null":
                found = self.by_name.get(t) or (self.by_name.get(f"{ns}.{t}") if ns else None)
                if found is None:
                    raise AvroReadError(f"the schema names an undefined type {t!r}")
                t = found
            elif isinstance(t, dict) and isinstance(t.get("type"), (dict, list)):
                t = t["type"]
            elif isinstance(t, dict) and isinstance(t.get("type"), str) and t["type"] not in (
                    *_SIMPLE, "null", "record", "error", "enum", "fixed", "array", "map"):
                t = t["type"]
            else:
                return t


def _kind(t: Any) -> str:
    if isinstance(t, list):
        return "union"
    if isinstance(t, str):
        return t
    return "record" if t.get("type") == "error" else t.get("type")


def _p(t: Any, key: str) -> Any:
    return t.get(key) if isinstance(t, dict) else None


# --- the binary ------------------------------------------------------------------------------

class _In:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise AvroReadError("the record's Avro data ends early")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def varint(self) -> int:
        n = shift = 0
        while True:
            b = self.take(1)[0]
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return (n >> 1) ^ -(n & 1)
            if shift > 70:
                raise AvroReadError("a malformed Avro varint")

    def count_blocks(self):
        while (n := self.varint()) != 0:
            if n < 0:
                self.varint()
                n = -n
            yield from range(n)


def _read(t: Any, types: _Types, src: _In, ns: str | None) -> Any:
    """A datum in a tagged form: unions as ("|", index, value), everything else plain."""
    t = types.get(t, ns)
    k = _kind(t)
    if k == "union":
        i = src.varint()
        if not 0 <= i < len(t):
            raise AvroReadError(f"a union branch {i} the schema does not have")
        return ("|", i, _read(t[i], types, src, ns))
    if k == "null":
        return None
    if k == "boolean":
        return src.take(1) == b"\x01"
    if k in ("int", "long"):
        return src.varint()
    if k == "float":
        return struct.unpack("<f", src.take(4))[0]
    if k == "double":
        return struct.unpack("<d", src.take(8))[0]
    if k == "bytes":
        return src.take(src.varint())
    if k == "string":
        return src.take(src.varint()).decode("utf-8")
    if k == "fixed":
        return src.take(int(t["size"]))
    if k == "enum":
        return t["symbols"][src.varint()]
    if k == "array":
        return [_read(t["items"], types, src, ns) for _ in src.count_blocks()]
    if k == "map":
        out = []
        for _ in src.count_blocks():
            key = src.take(src.varint()).decode("utf-8")
            out.append((key, _read(t["values"], types, src, ns)))
        return out
    if k == "record":
        return {f["name"]: _read(f["type"], types, src, f.get("_ns")) for f in t["fields"]}
    raise AvroReadError(f"an Avro type the sink cannot read: {k}")


# --- Connect schemas, in JsonConverter's shape ----------------------------------------------------

def _short(t: dict) -> str:
    return t.get("_full", t.get("name", "")).rpartition(".")[2]


def _branch_name(t: Any) -> str:
    k = _kind(t)
    return _short(t) if k in ("record", "enum", "fixed") else k


def _is_entry(t: Any) -> bool:
    return _kind(t) == "record" and (t.get("_full") == f"{NS}.MapEntry" or t.get("connect.internal.type") == "MapEntry")


_NONE = object()


def connect_schema(t: Any, types: _Types, ns: str | None, optional: bool = False, default: Any = _NONE,
                   version: int | None = None) -> dict:
    """AvroData.toConnectSchema of `t`, as a JsonConverter schema object."""
    t = types.get(t, ns)
    k = _kind(t)
    logical = _p(t, "logicalType")
    params: dict[str, str] = {}
    out: dict[str, Any] = {}
    name = None
    if k == "union":
        members = [m for m in t if m != "null"]
        if len(t) == 1:
            return connect_schema(t[0], types, ns)
        if len(t) == 2 and len(members) == 1:
            return connect_schema(members[0], types, ns, optional=True)
        fields, seen = [], set()
        for m in members:
            rm = types.get(m, ns)
            fname = _branch_name(rm)
            if fname in seen:
                raise AvroReadError("Multiple union schemas map to the Connect union field name")
            seen.add(fname)
            fields.append({**connect_schema(rm, types, ns, optional=True), "field": fname})
        out = {"type": "struct", "fields": fields}
        name = f"{NS}.Union"
        optional = optional or len(members) < len(t)
    elif k in ("bytes", "fixed"):
        out = {"type": "bytes"}
        if isinstance(logical, str) and logical.lower() == "decimal":
            scale = _p(t, "scale")
            params["scale"] = str(int(scale) if isinstance(scale, (int, float)) and not isinstance(scale, bool) else 0)
            precision = _p(t, "precision")
            if precision is not None and int(precision) != 64:
                params["connect.decimal.precision"] = str(int(precision))
            name = _DECIMAL
        if k == "fixed":
            params["connect.fixed.size"] = str(int(t["size"]))
    elif k in ("int", "long") and isinstance(logical, str) and logical.lower() in _LOGICAL and (
            (k == "int") == (logical.lower() != "timestamp-millis")):
        jtype, name = _LOGICAL[logical.lower()]
        out = {"type": jtype}
    elif k == "int" and _p(t, "connect.type") in ("int8", "int16") and logical is None:
        out = {"type": _p(t, "connect.type")}
    elif k in _SIMPLE:
        out = {"type": _SIMPLE[k]}
    elif k == "enum":
        out = {"type": "string"}
        short = _short(t)
        if t.get("doc") is not None:
            params[f"{NS}.enum.doc.{short}"] = t["doc"]
        if t.get("default") is not None:
            params[f"{NS}.enum.default.{short}"] = t["default"]
        params[f"{NS}.Enum"] = t["_full"]
        params.update({f"{NS}.Enum.{s}": s for s in t["symbols"]})
    elif k == "array":
        items = types.get(t["items"], ns)
        if _is_entry(items):
            fs = {f["name"]: f for f in items["fields"]}
            inner = items.get("_full", "").rpartition(".")[0] or None
            out = {"type": "map", "keys": connect_schema(fs["key"]["type"], types, inner),
                   "values": connect_schema(fs["value"]["type"], types, inner)}
        else:
            out = {"type": "array", "items": connect_schema(t["items"], types, ns)}
    elif k == "map":
        out = {"type": "map", "keys": {"type": "string", "optional": False},
               "values": connect_schema(t["values"], types, ns)}
    elif k == "record":
        fields = []
        if t.get("doc") is not None:
            params[f"{NS}.record.doc"] = t["doc"]
        for f in t["fields"]:
            if f.get("doc") is not None:
                params[f"{NS}.field.doc.{f['name']}"] = f["doc"]
            fields.append({**connect_schema(f["type"], types, f.get("_ns"), default=f.get("default", _NONE)),
                           "field": f["name"]})
        out = {"type": "struct", "fields": fields}
    else:
        raise AvroReadError(f"Couldn't translate unsupported schema type {k}.")
    if isinstance(_p(t, "connect.doc"), str):
        out["doc"] = t["connect.doc"]
    own_version = 1 if name in (_DECIMAL, *(n for _, n in _LOGICAL.values())) else None
    given = _p(t, "connect.version")
    given = int(given) if given is not None else version
    if given is not None and own_version is not None and given != own_version:
        raise AvroReadError(f"Mismatched versions: version already added to SchemaBuilder ({own_version}) "
                            f"differs from version in source schema ({given})")
    if given is not None or own_version is not None:
        out["version"] = given if given is not None else own_version
    cp = _p(t, "connect.parameters")
    if isinstance(cp, dict):
        params.update({str(a): str(b) for a, b in cp.items()})
    if isinstance(t, dict):
        params.update({a: b if isinstance(b, str) else json.dumps(b) for a, b in t.items() if a.startswith("avro")})
    connect_default = _p(t, "connect.default")
    if default is _NONE:
        default = connect_default if connect_default is not None else _NONE
    elif connect_default is None:
        params[f"{NS}.field.default"] = "true"
    cname = _p(t, "connect.name")
    if isinstance(cname, str):
        schema_name = cname
    elif k in ("record", "enum") or (k == "fixed" and name != _DECIMAL):
        schema_name = t["_full"]
    else:
        schema_name = None
    if schema_name is not None and not schema_name.startswith(f"{NS}.ConnectDefault"):
        name = schema_name
    if name is not None:
        out["name"] = name
    if params:
        out["parameters"] = params
    out["optional"] = optional
    if default is not _NONE and default is not None:
        try:
            converted = _default(t, types, ns, default, out)
        except (AvroReadError, ValueError, TypeError, KeyError):
            converted = None  # AvroData ignores a default it cannot read
        if converted is not None:
            out["default"] = converted
    return out


def _default(t: Any, types: _Types, ns: str | None, value: Any, schema: dict) -> Any:
    """An Avro JSON default as a payload of the Connect schema `schema`."""
    t = types.get(t, ns)
    k = _kind(t)
    if value is None:
        return None
    if k == "union":
        first = types.get(t[0], ns)
        if _kind(first) == "null":
            return None
        if schema.get("name") == f"{NS}.Union":
            fname = _branch_name(first)
            sub = next(f for f in schema["fields"] if f["field"] == fname)
            return {fname: _default(first, types, ns, value, sub)}
        return _default(first, types, ns, value, schema)
    if k in ("bytes", "fixed"):
        return base64.b64encode(str(value).encode("latin-1")).decode()
    if k == "record":
        return {f["name"]: _default(f["type"], types, f.get("_ns"), value.get(f["name"]),
                                    next(x for x in schema["fields"] if x["field"] == f["name"]))
                for f in t["fields"]}
    if k == "array":
        return [_default(t["items"], types, ns, v, schema["items"]) for v in value]
    if k == "map":
        return {a: _default(t["values"], types, ns, v, schema["values"]) for a, v in value.items()}
    if k in ("float", "double"):
        return float(value)
    return value


def payload(t: Any, types: _Types, ns: str | None, datum: Any, schema: dict) -> Any:
    """AvroData.toConnectData of a datum, as JsonConverter's payload for `schema`."""
    if isinstance(datum, tuple) and datum[:1] == ("|",):
        _, index, inner = datum
        rt = types.get(t, ns)
        member = rt[index] if isinstance(rt, list) else rt
        if schema.get("name") == f"{NS}.Union" and schema.get("type") == "struct":
            if inner is None:
                return None
            rm = types.get(member, ns)
            fname = _branch_name(rm)
            sub = next((f for f in schema["fields"] if f["field"] == fname), None)
            if sub is None:
                raise AvroReadError("Did not find matching union field for data")
            return {fname: payload(rm, types, ns, inner, sub)}
        return payload(member, types, ns, inner, schema)
    if datum is None:
        return None
    t = types.get(t, ns)
    st = schema.get("type")
    if st == "struct":
        return {f["field"]: payload(af["type"], types, af.get("_ns"), datum.get(f["field"]), f)
                for f, af in zip(schema["fields"], t["fields"])}
    if st == "array":
        return [payload(t["items"], types, ns, v, schema["items"]) for v in datum]
    if st == "map":
        # AvroData makes `new HashMap<>(entries)`: what the sink writes iterates in that table's order
        if _kind(t) == "map":
            return _sized(SizedMap({a: payload(t["values"], types, ns, v, schema["values"]) for a, v in datum}),
                          len(datum))
        entry = types.get(t["items"], ns)
        fs = {f["name"]: f for f in entry["fields"]}
        inner = entry.get("_full", "").rpartition(".")[0] or None
        pairs = [[payload(fs["key"]["type"], types, inner, e["key"], schema["keys"]),
                  payload(fs["value"]["type"], types, inner, e["value"], schema["values"])] for e in datum]
        if schema["keys"].get("type") == "string" and not schema["keys"].get("optional"):
            return _sized(SizedMap(dict(pairs)), len(datum))
        return _sized(SizedPairs(pairs), len(datum))
    if st == "bytes":
        return base64.b64encode(bytes(datum)).decode()
    if st == "int8":
        return ((int(datum) + 128) & 0xFF) - 128
    if st == "int16":
        return ((int(datum) + 32768) & 0xFFFF) - 32768
    return datum


def _sized(m: Any, capacity: int) -> Any:
    m.capacity = capacity
    return m


# --- the converter ---------------------------------------------------------------------------

def subject(topic: str, which: str, strategy: str, root: Any) -> str:
    short = strategy.rsplit(".", 1)[-1]
    if short == "TopicNameStrategy":
        return f"{topic}-{which}"
    if _kind(root) != "record":
        raise AvroReadError(f"{short} needs a record schema")
    return root["_full"] if short == "RecordNameStrategy" else f"{topic}-{root['_full']}"


def read(raw: bytes, registry: SinkRegistry, topic: str, which: str,
         strategy: str = TOPIC_STRATEGY) -> tuple[Any, Any]:
    """(schema, payload) of one non-null key or value: AvroConverter.toConnectData."""
    if len(raw) < 5 or raw[0] != 0:
        raise AvroReadError("Unknown magic byte!" if raw[:1] != b"\x00" else "shorter than the 5-byte header")
    schema_id = int.from_bytes(raw[1:5], "big", signed=True)
    try:
        text, kind = registry.schema(schema_id)
    except Exception as e:  # noqa: BLE001 - the registry's error, whatever its class
        raise AvroReadError(f"Error retrieving Avro {which} schema for id {schema_id}: {e}") from None
    if str(kind).upper() != "AVRO":
        raise AvroReadError(f"schema {schema_id} is {kind}, not Avro")
    root = json.loads(text)
    types = _Types(root)
    top = types.get(root, None)
    try:
        version, _ = registry.lookup(subject(topic, which, strategy, top), text, "AVRO")
    except AvroReadError:
        raise
    except Exception as e:  # noqa: BLE001 - the subject does not hold the schema
        raise AvroReadError(f"Error retrieving schema version for id {schema_id}: {e}") from None
    datum = _read(root, types, _In(raw[5:]), None)
    if _kind(top) == "record" and top.get("_full") == f"{NS}.Anything":
        return None, _unwrap_anything(datum)
    schema = connect_schema(root, types, None, version=version)
    return schema, payload(root, types, None, datum, schema)


def _unwrap_anything(rec: Any) -> Any:
    if isinstance(rec, tuple) and rec[:1] == ("|",):
        return _unwrap_anything(rec[2])
    if not isinstance(rec, dict):
        return rec
    for k in ("boolean", "bytes", "double", "float", "int", "long", "string"):
        v = _unwrap_anything(rec.get(k))
        if v is not None:
            return base64.b64encode(v).decode() if isinstance(v, bytes) else v
    arr = _unwrap_anything(rec.get("array"))
    if arr is not None:
        return [_unwrap_anything(x) for x in arr]
    entries = _unwrap_anything(rec.get("map"))
    if entries is not None:
        return _sized(SizedMap({str(_unwrap_anything(e["key"])): _unwrap_anything(e["value"]) for e in entries}),
                      len(entries))
    return None
