"""The Python sink's Avro: the writer schema and datum Confluent's AvroData makes from Connect data
(R10.3), which AvroFormat writes in a container file and ParquetFormat hands to parquet-avro
(R10.4).

Written from the connector's AvroRecordWriterProvider and schema-registry's AvroData (7.7.x, as
the S3 sink configures it: `connect.meta.data` and `enhanced.avro.schema.support` on by default,
invalid names not scrubbed), independently of the reference model. The sink's data is in
JsonConverter's shape (adapters/pysink/converters.py): a schema is a JsonConverter schema object
(`{"type": "struct", "fields": [{"field": …, …}], "optional": …, "name": …}`), a payload is JSON.

* A struct is a record named by its Connect name, else `io.confluent.connect.avro.ConnectDefault`,
  `ConnectDefault2`, … for the unnamed ones in the order they are met; a struct equal to one met
  before (Connect's `Schema.equals`) is the same type again, written as a reference.
* An optional schema is a union with null: `[T, "null"]` when it has a default, else
  `["null", T]`; an optional struct is always `["null", record]`.
* int8 and int16 are ints with `connect.type`; Decimal is bytes with `logicalType` decimal
  (precision `connect.decimal.precision`, 64 when absent); Date, Time and Timestamp are int, int
  and long with their logical types; a map with required string keys is an Avro map, any other
  map an array of `MapEntry{key, value}` records.
* `connect.meta.data` adds `connect.doc`, `connect.version`, `connect.parameters`,
  `connect.default` and `connect.name` to a type that is not a union.
* No schema (a schemaless value) is the recursive `io.confluent.connect.avro.Anything` record.

A value that does not fit its schema, a null for a required schema, two different types of one
name, or a name Avro does not allow is a DataException: `AvroWriteError`.
"""
from __future__ import annotations

import base64
import binascii
import copy
import decimal
import json
import re
from typing import Any

from adapters.pysink.encoding import schema_key
from adapters.pysink.jsonwrite import DATE, DECIMAL, TIME, TIMESTAMP, capacity_of, hashmap_entries, java_unscaled_bytes

NAMESPACE = "io.confluent.connect.avro"
ENUM = f"{NAMESPACE}.Enum"
UNION = f"{NAMESPACE}.Union"
FIELD_DEFAULT_FLAG = f"{NAMESPACE}.field.default"
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LOGICAL = {DATE: ("int", "date"), TIME: ("int", "time-millis"), TIMESTAMP: ("long", "timestamp-millis")}


class AvroWriteError(ValueError):
    """AvroData or Avro refuses the record (DataException, SchemaParseException): the task dies."""


def _anything() -> dict[str, Any]:
    full = f"{NAMESPACE}.Anything"
    prims = [(n, n) for n in ("boolean", "bytes", "double", "float", "int", "long", "string")]
    entry = {"type": "record", "name": "MapEntry", "namespace": NAMESPACE,
             "fields": [{"name": "key", "type": full}, {"name": "value", "type": full}]}
    return {"type": "record", "name": "Anything", "namespace": NAMESPACE,
            "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in prims]
            + [{"name": "array", "type": ["null", {"type": "array", "items": full}], "default": None},
               {"name": "map", "type": ["null", {"type": "array", "items": entry}], "default": None}]}


ANYTHING = _anything()


# --- the schema ----------------------------------------------------------------------------------

def _connect_key(schema: dict | None, optional: bool | None = None) -> str:
    """Connect's Schema.equals as a hashable text (`optional` overriding the schema's own)."""
    if schema is None:
        return "null"
    if optional is not None:
        schema = {**schema, "optional": optional}
    return repr(schema_key(schema))


def _split(full: str) -> tuple[str | None, str]:
    ns, dot, short = full.rpartition(".")
    return (ns if dot else None), short


def _check_name(name: str, what: str) -> None:
    for part in name.split("."):
        if not _AVRO_NAME.fullmatch(part):
            raise AvroWriteError(f"SchemaParseException: Illegal character in {what} {name!r}")


class SchemaBuilder:
    """AvroData.fromConnectSchema for one file's first record: its own name counter and the
    types already defined, so repeated types become references."""

    def __init__(self, meta: bool = True, enhanced: bool = True, optional_map_keys: bool = False):
        self.meta, self.enhanced, self.optional_map_keys = meta, enhanced, optional_map_keys
        self.index = 0
        self.by_connect: dict[str, Any] = {}  # non-optional Connect schema → its Avro type
        self.named: dict[str, str] = {}  # full name → the Connect schema that defined it
        self.enclosing: str | None = None  # namespace of the record whose fields are being built

    def _namespace(self, ns: str | None) -> dict[str, str]:
        # Java's Schema.toString writes `"namespace": ""` for a named type without one inside a
        # record that has one; leaving it out would make readers put it in the outer namespace
        if ns:
            return {"namespace": ns}
        return {"namespace": ""} if self.enclosing else {}

    def build(self, schema: dict | None) -> Any:
        if schema is None:
            return copy.deepcopy(ANYTHING)
        return self._schema(schema, ignore_optional=False)

    def _default_name(self, name: str | None) -> tuple[str | None, str]:
        if name is not None:
            return _split(name)
        self.index += 1
        return NAMESPACE, "ConnectDefault" + (str(self.index) if self.index > 1 else "")

    def _define(self, full: str, key: str) -> str | None:
        """The reference to use where `full` is defined already by an equal type (`key`), else
        None (and `full` is now defined): Avro cannot write two types of one name."""
        seen = self.named.get(full)
        if seen is None:
            self.named[full] = key
            return None
        if seen == key:
            return full
        raise AvroWriteError(f"SchemaParseException: Can't redefine: {full}")

    def _schema(self, schema: dict, ignore_optional: bool) -> Any:
        key = _connect_key(schema)
        union = schema.get("type") == "struct" and schema.get("name") == UNION
        if not union and not schema.get("optional"):
            cached = self.by_connect.get(key)
            if cached is not None:
                return _reference(cached)
        t, name = schema.get("type"), schema.get("name")
        params: dict[str, str] = {str(k): str(v) for k, v in (schema.get("parameters") or {}).items()}
        connect_type = None
        if t in ("int8", "int16"):
            base: Any = {"type": "int"}
            connect_type = t
        elif t == "bytes" and "connect.fixed.size" in params:
            # the converter's Avro fixed (connect.fixed.size) is a fixed again
            ns, short = self._default_name(name)
            full = f"{ns}.{short}" if ns else short
            ref = self._define(full, _connect_key(schema, optional=False))
            if ref is not None:
                return self._optional(schema, ref, ignore_optional)
            base = {"type": "fixed", "name": short, **self._namespace(ns),
                    "size": int(params["connect.fixed.size"])}
            if name == DECIMAL:
                base["scale"] = int(params.get("scale", "0"))
                base["precision"] = int(params.get("connect.decimal.precision", "64"))
        elif t in ("int32", "int64", "float", "double", "boolean", "bytes"):
            base = {"type": {"int32": "int", "int64": "long", "float": "float", "double": "double"}.get(t, t)}
            if t == "bytes" and name == DECIMAL:
                base["scale"] = int(params.get("scale", "0"))
                base["precision"] = int(params.get("connect.decimal.precision", "64"))
        elif t == "string":
            if self.enhanced and ENUM in params:
                symbols = [k[len(ENUM) + 1:] for k in params if k.startswith(ENUM + ".")]
                _, short = self._default_name(name)
                enum_name = params[ENUM]
                _check_name(enum_name, "enum name")
                base = {"type": "enum", "name": enum_name,
                        **(self._namespace(None) if "." not in enum_name else {}), "symbols": symbols}
                doc = params.get(f"{NAMESPACE}.enum.doc.{short}")
                if doc is not None:
                    base["doc"] = doc
                default = params.get(f"{NAMESPACE}.enum.default.{short}")
                if default is not None:
                    base["default"] = default
                ref = self._define(enum_name, _connect_key(schema, optional=False))
                if ref is not None:
                    return self._optional(schema, ref, ignore_optional)
            else:
                base = {"type": "string"}
        elif t == "array":
            base = {"type": "array", "items": self._schema(schema.get("items") or {}, False)}
        elif t == "map":
            keys = schema.get("keys") or {}
            if keys.get("type") == "string" and (not keys.get("optional") or self.optional_map_keys):
                base = {"type": "map", "values": self._schema(schema.get("values") or {}, False)}
            else:
                ns, short = (NAMESPACE, "MapEntry") if name is None else _split(name)
                full = f"{ns}.{short}" if ns else short
                entry: Any = {"type": "record", "name": short, **self._namespace(ns)}
                outer, self.enclosing = self.enclosing, ns or None
                entry["fields"] = [self._field("key", keys, None),
                                   self._field("value", schema.get("values") or {}, None)]
                self.enclosing = outer
                if name is not None:
                    entry["connect.internal.type"] = "MapEntry"
                # an entry type equal to one written before is written as its name (Avro's own rule)
                ref = self._define(full, schema_text(entry))
                base = {"type": "array", "items": ref if ref is not None else entry}
        elif t == "struct":
            if union:
                members = (["null"] if schema.get("optional") else []) + [
                    self._schema({**f, "optional": False}, True) for f in schema.get("fields") or []]
                return members
            if schema.get("optional"):
                inner = {**schema, "optional": False}
                return ["null", self._schema(inner, False)]
            ns, short = self._default_name(name)
            full = f"{ns}.{short}" if ns else short
            _check_name(full, "record name")
            ref = self._define(full, _connect_key(schema, optional=False))
            if ref is not None:
                return ref
            base = {"type": "record", "name": short, **self._namespace(ns)}
            doc = params.get(f"{NAMESPACE}.record.doc")
            if doc is not None:
                base["doc"] = doc
            fields = []
            outer, self.enclosing = self.enclosing, ns or None
            for f in schema.get("fields") or []:
                fname = str(f.get("field"))
                _check_name(fname, "field name")
                fields.append(self._field(fname, f, params.get(f"{NAMESPACE}.field.doc.{fname}")))
            self.enclosing = outer
            base["fields"] = fields
        else:
            raise AvroWriteError(f"DataException: Unknown schema type: {t}")
        self._annotate(base, schema, params, connect_type)
        if set(base) == {"type"} and isinstance(base["type"], str) and base["type"] not in ("array", "map"):
            base = base["type"]  # a primitive without properties is written as its name
        out = self._optional(schema, base, ignore_optional)
        if not schema.get("optional"):
            self.by_connect[key] = out
        return out

    def _annotate(self, base: dict, schema: dict, params: dict[str, str], connect_type: str | None) -> None:
        name = schema.get("name")
        if self.meta:
            if schema.get("doc") is not None:
                base["connect.doc"] = schema["doc"]
            if schema.get("version") is not None:
                base["connect.version"] = int(schema["version"])
            shown = {k: v for k, v in params.items() if k != FIELD_DEFAULT_FLAG}
            if shown:
                base["connect.parameters"] = shown
            if schema.get("default") is not None and FIELD_DEFAULT_FLAG not in params:
                base["connect.default"] = default_json(schema, schema["default"])
            if name is not None:
                base["connect.name"] = name
            if connect_type is not None:
                base["connect.type"] = connect_type
        if name == DECIMAL:
            # the logical type (a valid scale) or the legacy property (any scale): decimal either way
            base["logicalType"] = "decimal"
        elif name in _LOGICAL:
            base["logicalType"] = _LOGICAL[name][1]
        for k, v in params.items():
            if k.startswith("avro"):
                base[k] = v

    def _optional(self, schema: dict, base: Any, ignore_optional: bool) -> Any:
        if ignore_optional or not schema.get("optional"):
            return base
        return [base, "null"] if schema.get("default") is not None else ["null", base]

    def _field(self, name: str, schema: dict, doc: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": name, "type": self._schema(schema, False)}
        if doc is not None:
            out["doc"] = doc
        if schema.get("default") is not None:
            out["default"] = default_json(schema, schema["default"])
        elif schema.get("optional"):
            out["default"] = None
        return out


def _reference(avro: Any) -> Any:
    """A type met again: a named type by its name, any other as it is."""
    if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
        ns = avro.get("namespace")
        return f"{ns}.{avro['name']}" if ns else avro["name"]
    if isinstance(avro, list):
        return [_reference(m) for m in avro]
    return copy.deepcopy(avro)


def default_json(schema: dict, value: Any) -> Any:
    """A Connect default as the JSON AvroData writes for it (bytes as ISO-8859-1 text)."""
    if value is None:
        return None
    if schema.get("name") == DECIMAL:
        return decimal_bytes(schema, value).decode("latin-1")
    t = schema.get("type")
    if t == "bytes":
        try:
            return base64.b64decode(value).decode("latin-1") if isinstance(value, str) else None
        except (binascii.Error, ValueError):
            return None
    if t == "struct" and isinstance(value, dict):
        return {str(f.get("field")): default_json(f, value.get(f.get("field"))) for f in schema.get("fields") or []}
    if t == "array" and isinstance(value, list):
        return [default_json(schema.get("items") or {}, v) for v in value]
    if t == "map" and isinstance(value, dict):
        return {k: default_json(schema.get("values") or {}, v) for k, v in value.items()}
    if t in ("float", "double"):
        return float(value)
    return value


def schema_text(avro: Any) -> str:
    return json.dumps(avro, separators=(",", ":"))


# --- the datum -------------------------------------------------------------------------------------

def decimal_bytes(schema: dict, payload: Any) -> bytes:
    """A Decimal as its unscaled value's two's-complement bytes (BigInteger.toByteArray), from
    JsonConverter's base64 text or a number of the schema's scale."""
    scale = int((schema.get("parameters") or {}).get("scale", "0"))
    if isinstance(payload, str):
        try:
            raw = base64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError):
            raise AvroWriteError("DataException: a Decimal's bytes are not base64") from None
        unscaled = int.from_bytes(raw, "big", signed=True)
    elif isinstance(payload, (int, float, decimal.Decimal)) and not isinstance(payload, bool):
        d = decimal.Decimal(str(payload))
        if -d.as_tuple().exponent != scale:
            raise AvroWriteError(f"DataException: BigDecimal has mismatching scale value for given Decimal "
                                 f"schema ({payload})")
        unscaled = int(d.scaleb(scale))
    else:
        raise AvroWriteError(f"DataException: Invalid type for Decimal: {type(payload).__name__}")
    return java_unscaled_bytes(unscaled)


def _wrap(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def datum(schema: dict | None, payload: Any, where: str = "value") -> Any:
    """AvroData.fromConnectData(schema, value), primitives unwrapped: what DataFileWriter
    appends for one record of a file whose writer schema is `schema`'s."""
    if schema is None:
        return anything(payload)
    return _datum(schema, payload, where)


def _datum(schema: dict, payload: Any, where: str) -> Any:
    if payload is None:
        if schema.get("default") is not None:
            payload = schema["default"]  # Struct.get gives a field's default for a null
        elif schema.get("optional"):
            return None
        else:
            raise AvroWriteError(f"DataException: {where}: Found null value for non-optional schema")
    name, t = schema.get("name"), schema.get("type")
    if name == DECIMAL:
        return decimal_bytes(schema, payload)
    try:
        if t in _BITS:
            if isinstance(payload, bool) or not isinstance(payload, (int, decimal.Decimal, float)):
                raise TypeError
            return _wrap(int(payload), _BITS[t])
        if t in ("float", "double"):
            if isinstance(payload, bool) or not isinstance(payload, (int, float, decimal.Decimal)):
                raise TypeError
            return float(payload)
        if t == "boolean":
            if not isinstance(payload, bool):
                raise TypeError
            return payload
        if t == "string":
            if not isinstance(payload, str):
                raise TypeError
            return payload
        if t == "bytes":
            if not isinstance(payload, str):
                raise TypeError
            return base64.b64decode(payload)
        if t == "array":
            if not isinstance(payload, list):
                raise TypeError
            items = schema.get("items") or {}
            return [_datum(items, v, f"{where}[{i}]") for i, v in enumerate(payload)]
        if t == "map":
            ks, vs = schema.get("keys") or {}, schema.get("values") or {}
            if ks.get("type") == "string":
                if not isinstance(payload, dict):
                    raise TypeError
                pairs = list(payload.items())
            else:  # JsonConverter carries such a map as [[key, value], …]
                if not isinstance(payload, list):
                    raise TypeError
                pairs = [(p[0], p[1]) for p in payload]
            # JsonConverter fills a HashMap, and AvroData writes the entries as it iterates them
            key_type = ks.get("type") if ks.get("name") is None else None
            pairs = hashmap_entries([(_map_key(ks, k), v) for k, v in pairs], key_type, capacity_of(payload))
            if ks.get("type") == "string" and not ks.get("optional"):
                return {k: _datum(vs, v, f"{where}.{k}") for k, v in pairs}
            return [{"key": _datum(ks, k, where), "value": _datum(vs, v, f"{where}.{k}")} for k, v in pairs]
        if t == "struct":
            if not isinstance(payload, dict):
                raise TypeError
            if name == UNION:
                for f in schema.get("fields") or []:
                    if payload.get(f.get("field")) is not None:
                        return _datum({**f, "optional": False}, payload[f["field"]], where)
                return None
            return {str(f.get("field")): _datum(f, payload.get(f.get("field")), f"{where}.{f.get('field')}")
                    for f in schema.get("fields") or []}
    except TypeError:
        raise AvroWriteError(f"DataException: {where}: Invalid type for {str(t).upper()}: "
                             f"{type(payload).__name__}") from None
    except (binascii.Error, ValueError) as e:
        raise AvroWriteError(f"DataException: {where}: {e}") from None
    raise AvroWriteError(f"DataException: Unknown schema type: {t}")


def _map_key(schema: dict, key: Any) -> Any:
    """A map key as the Java object it is (ints at their width), so equal keys collide as in Java."""
    t = schema.get("type")
    if t in _BITS and not isinstance(key, bool) and isinstance(key, (int, float, decimal.Decimal)):
        return _wrap(int(key), _BITS[t])
    if t in ("float", "double") and isinstance(key, (int, float, decimal.Decimal)) and not isinstance(key, bool):
        return float(key)
    return key


def anything(payload: Any) -> dict[str, Any]:
    """A schemaless value (JsonConverter without schemas: objects are maps, whole numbers longs,
    other numbers doubles) in the Anything record."""
    rec: dict[str, Any] = {f["name"]: None for f in ANYTHING["fields"]}
    if payload is None:
        return rec
    if isinstance(payload, bool):
        rec["boolean"] = payload
    elif isinstance(payload, int):
        rec["long"] = _wrap(payload, 64)
    elif isinstance(payload, (float, decimal.Decimal)):
        rec["double"] = float(payload)
    elif isinstance(payload, str):
        rec["string"] = payload
    elif isinstance(payload, list):
        rec["array"] = [anything(v) for v in payload]
    elif isinstance(payload, dict):
        rec["map"] = [{"key": anything(k), "value": anything(v)} for k, v in hashmap_entries(list(payload.items()))]
    else:
        raise AvroWriteError(f"DataException: Unknown Java type for schemaless data: {type(payload).__name__}")
    return rec
