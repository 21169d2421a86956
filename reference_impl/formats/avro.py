"""AvroFormat (R10.3): an Avro container file whose writer schema is the Connect schema of the
file's first record, converted as Confluent's AvroData does (`connect.meta.data` on).

Read from AvroRecordWriterProvider and schema-registry's AvroData (not run against a
connector):

* struct → record named by the Connect schema name, or `ConnectDefault` in namespace
  `io.confluent.connect.avro` when unnamed; optional → union `["null", T]` (`[T, "null"]`
  when the schema has a default); int8/int16 → int with `connect.type`; Decimal → bytes with
  logicalType decimal, precision `connect.decimal.precision` (default 64) and scale;
  Timestamp → long timestamp-millis; Date → int date; Time → int time-millis; map with
  required string keys → map, other maps → array of `MapEntry{key, value}` records;
  primitives unwrapped (a STRING schema gives the writer schema "string"; StringConverter's
  *optional* string gives `["null", "string"]`).
* **Name clashes.** AvroData gives every unnamed struct the same name, so a schema holding two
  *different* unnamed structs (typically a JsonConverter schema with a nested struct) makes
  Avro's schema writer throw `SchemaParseException: Can't redefine:
  io.confluent.connect.avro.ConnectDefault` when the file is created. R13 sends that to the
  DLQ, so `check_writable` raises DataError. Equal structs are written once and referenced.
* **Schemaless values (spec open question 4).** `AvroData.fromConnectSchema(null)` is the
  recursive `io.confluent.connect.avro.Anything` record (one optional field per type:
  boolean, bytes, double, float, int, long, string, array, map), and a schemaless value is
  wrapped in it (JSON integers are Longs → `long`, floats → `double`, maps → arrays of
  `MapEntry{key: Anything, value: Anything}`); a schemaless `byte[]` is a DataException
  ("Unknown Java type for schemaless data"). But the writer opens the file when its
  remembered schema is null, and with a null view schema that stays null: the *second*
  record of the file calls `DataFileWriter.setCodec` on an open writer and gets
  `AvroRuntimeException: already open`, which is not a DataException, so the task dies.
  `check_append` and `encode` raise WriterFailure for that; a one-record file is written.
  `decode` unwraps Anything records back to plain values.

`decode` returns plain values: records as dicts, Decimal as `decimal.Decimal`, Timestamp
as epoch ms, Date as days, Time as ms of day (ints, converted exactly), bytes as bytes.
"""
from __future__ import annotations

import datetime as dt
import decimal
import io
from typing import Any

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Struct
from reference_impl.formats import (DataError, FormatOptions, HEADER_SCHEMA, WriterFailure,
                                    check_headers)

NAMESPACE = "io.confluent.connect.avro"
ANYTHING = f"{NAMESPACE}.Anything"
_PRIMS = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float32": "float",
          "float64": "double", "boolean": "boolean", "string": "string", "bytes": "bytes"}
CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard")

ANYTHING_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "Anything", "namespace": NAMESPACE,
    "fields": [{"name": n, "type": ["null", t], "default": None}
               for n, t in (("boolean", "boolean"), ("bytes", "bytes"), ("double", "double"),
                            ("float", "float"), ("int", "int"), ("long", "long"), ("string", "string"))]
    + [{"name": "array", "type": ["null", {"type": "array", "items": ANYTHING}], "default": None},
       {"name": "map", "type": ["null", {"type": "array", "items": {
           "type": "record", "name": "MapEntry", "namespace": NAMESPACE,
           "fields": [{"name": "key", "type": ANYTHING}, {"name": "value", "type": ANYTHING}]}}],
        "default": None}],
}


def _required(schema: Schema) -> Schema:
    return Schema(**{**schema.__dict__, "optional": False, "default": None})


def _non_optional(schema: Schema) -> Schema:
    """AvroData.nonOptional: the same schema, default kept, not optional."""
    return Schema(**{**schema.__dict__, "optional": False})


ENUM = f"{NAMESPACE}.Enum"
UNION = f"{NAMESPACE}.Union"
FIXED_SIZE = "connect.fixed.size"
FIELD_DEFAULT_FLAG = f"{NAMESPACE}.field.default"


def _meta(schema: Schema) -> dict[str, Any]:
    """connect.* properties (connect.meta.data=true); they do not change the data. The flag a
    converter leaves on a field whose default came from an Avro field default is not a
    parameter here, and such a default is the field's, not connect.default."""
    out: dict[str, Any] = {}
    params = {k: v for k, v in (schema.parameters or ()) if k != FIELD_DEFAULT_FLAG}
    if schema.doc is not None:
        out["connect.doc"] = schema.doc
    if schema.version is not None:
        out["connect.version"] = schema.version
    if params:
        out["connect.parameters"] = params
    if schema.default is not None and FIELD_DEFAULT_FLAG not in schema.params:
        out["connect.default"] = _default_json(schema, schema.default)
    if schema.name is not None:
        out["connect.name"] = schema.name
    return out


def _avro_props(schema: Schema) -> dict[str, Any]:
    """Parameters whose names start with "avro" are copied onto the Avro type as they are."""
    return {k: v for k, v in (schema.parameters or ()) if k.startswith("avro")}


def _split(full: str) -> tuple[str, str]:
    ns, _, short = full.rpartition(".")
    return ns, short


def _key(schema: Schema) -> Any:
    try:
        hash(schema)
        return schema
    except TypeError:  # a default that is a Struct, list or map
        return repr(schema)


class _Names:
    """One file's AvroData.fromConnectSchema context: the count of unnamed structs met so far
    (`ConnectDefault`, `ConnectDefault2`, … from AvroData 7.0.2/6.x back-ports, DGS-2814;
    all `ConnectDefault` before), the Avro types of the non-optional Connect schemas already
    converted (an equal schema again is a reference to the same type), and the full names
    defined (Avro cannot write two different types of one name: SchemaParseException)."""

    def __init__(self, indexed: bool = True):
        self.indexed = indexed
        self.count = 0
        self.by_schema: dict[Any, Any] = {}
        self.defined: dict[str, Any] = {}
        # the namespace of the record whose fields are being written: a named type of no
        # namespace inside it says `"namespace": ""`, as Avro's Schema.toString writes it
        # (Name.writeName: "null within non-null"), or a reader gives it the enclosing one
        self.space: str | None = None

    def namespace_field(self, ns: str) -> dict[str, str]:
        """The `namespace` a named type carries where the enclosing record's is another."""
        if ns:
            return {"namespace": ns}
        return {"namespace": ""} if self.space else {}

    def default_name(self) -> str:
        self.count += 1
        n = self.count if self.indexed else 1
        return f"{NAMESPACE}.ConnectDefault" + (str(n) if n > 1 else "")

    def define(self, full: str, key: Any) -> bool:
        """True where `full` is already defined by an equal type (write a reference)."""
        seen = self.defined.get(full)
        if seen is None:
            self.defined[full] = key
            return False
        if seen == key:
            return True
        raise DataError(f"SchemaParseException: Can't redefine: {full} (two different types get the same Avro "
                        "name" + ("" if self.indexed else "; before AvroData 7.0.2 every unnamed struct is "
                                                            "ConnectDefault") + ")")


def avro_schema(schema: Schema, names: _Names | None = None, indexed: bool = True) -> Any:
    """Connect schema → Avro schema (AvroData.fromConnectSchema, connect.meta.data on), as the
    real 12.1.9 writes it: an optional struct is `["null", record]` whatever its default, any
    other optional schema `[T, "null"]` with a default and `["null", T]` without."""
    names = _Names(indexed) if names is None else names
    if schema.type == "struct" and schema.name == UNION:
        # a converter's Avro union, back as one: its branches, null first where it is optional
        members = [avro_schema(_required(f.schema), names) for f in schema.fields]
        return (["null"] if schema.optional else []) + members
    if schema.type == "struct" and schema.optional:
        return ["null", avro_schema(_non_optional(schema), names)]
    if not schema.optional:
        cached = names.by_schema.get(_key(schema))
        if cached is not None:
            return _reference(cached)
    base = _base(schema, names)
    if not schema.optional:
        names.by_schema[_key(schema)] = base
        return base
    return [base, "null"] if schema.default is not None else ["null", base]


def _reference(avro: Any) -> Any:
    """A type converted before: a named type by its full name, any other as it is."""
    if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
        ns = avro.get("namespace")
        return f"{ns}.{avro['name']}" if ns else avro["name"]
    return avro


def _base(schema: Schema, names: _Names) -> Any:
    meta = _meta(schema)
    if schema.name == DECIMAL and FIXED_SIZE not in schema.params:
        scale = int(schema.params.get("scale", "0"))
        prec = int(schema.params.get("connect.decimal.precision", "64"))
        # the logical type where the scale fits the precision, the legacy property otherwise:
        # logicalType decimal either way
        return {"type": "bytes", "scale": scale, "precision": prec, **meta, "logicalType": "decimal"}
    if schema.name == TIMESTAMP:
        return {"type": "long", **meta, "logicalType": "timestamp-millis"}
    if schema.name == DATE:
        return {"type": "int", **meta, "logicalType": "date"}
    if schema.name == TIME:
        return {"type": "int", **meta, "logicalType": "time-millis"}
    t = schema.type
    if t == "bytes" and FIXED_SIZE in schema.params:
        # a converter's fixed is a fixed again, named as AvroData names it (ConnectDefault… unnamed)
        full = schema.name or names.default_name()
        if names.define(full, _key(_required(schema))):
            return full
        ns, short = _split(full)
        fixed: dict[str, Any] = {"type": "fixed", "name": short, **names.namespace_field(ns),
                                 "size": int(schema.params[FIXED_SIZE]), **meta}
        if schema.name == DECIMAL:
            fixed.update(scale=int(schema.params.get("scale", "0")),
                         precision=int(schema.params.get("connect.decimal.precision", "64")), logicalType="decimal")
        return {**fixed, **_avro_props(schema)}
    if t == "string" and ENUM in schema.params:
        # enhanced.avro.schema.support (the S3 sink's default): a converter's enum is an enum again
        short = (schema.name or names.default_name()).rpartition(".")[2]
        params = schema.params
        enum: dict[str, Any] = {"type": "enum", "name": params[ENUM],
                                **(names.namespace_field("") if "." not in params[ENUM] else {}),
                                "symbols": [k[len(ENUM) + 1:] for k, _ in (schema.parameters or ()) if k.startswith(ENUM + ".")]}
        doc, default = params.get(f"{NAMESPACE}.enum.doc.{short}"), params.get(f"{NAMESPACE}.enum.default.{short}")
        if doc is not None:
            enum["doc"] = doc
        if default is not None:
            enum["default"] = default
        if names.define(params[ENUM], _key(_required(schema))):
            return params[ENUM]
        return {**enum, **meta, **_avro_props(schema)}
    if t in _PRIMS:
        extra = {"connect.type": t} if t in ("int8", "int16") else {}
        props = {**meta, **extra, **_avro_props(schema)}
        return {"type": _PRIMS[t], **props} if props else _PRIMS[t]
    if t == "array":
        assert schema.items is not None
        return {"type": "array", "items": avro_schema(schema.items, names), **meta}
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        if schema.keys.type == "string" and not schema.keys.optional:
            return {"type": "map", "values": avro_schema(schema.values, names), **meta}
        full = schema.name or f"{NAMESPACE}.MapEntry"
        ns, short = _split(full)
        entry: dict[str, Any] = {"type": "record", "name": short, **names.namespace_field(ns)}
        outer, names.space = names.space, ns or None
        entry["fields"] = [_field("key", schema.keys, names), _field("value", schema.values, names)]
        names.space = outer
        if schema.name:
            entry["connect.internal.type"] = "MapEntry"
        # an entry type equal to one written before is written as its name (Avro's own rule)
        same = names.define(full, repr(entry))
        return {"type": "array", "items": full if same else entry, **meta}
    if t == "struct":
        full = schema.name or names.default_name()
        ns, short = _split(full)
        if names.define(full, _key(_required(schema))):
            return full
        rec: dict[str, Any] = {"type": "record", "name": short, **names.namespace_field(ns)}
        outer, names.space = names.space, ns or None
        rec["fields"] = [_field(f.name, f.schema, names) for f in schema.fields]
        names.space = outer
        rec.update(meta)
        return rec
    raise DataError(f"unsupported Connect type {t}")


def _default_json(schema: Schema, value: Any) -> Any:
    """A Connect default as AvroData writes it into a schema (bytes as ISO-8859-1 text)."""
    if value is None:
        return None
    try:
        datum = to_avro(value, _required(schema))
    except (DataError, WriterFailure):
        return None
    return _jsonish(datum)


def _jsonish(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("latin-1")
    if isinstance(v, dict):
        return {k: _jsonish(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonish(x) for x in v]
    return v


def _field(name: str, schema: Schema, names: _Names) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "type": avro_schema(schema, names)}
    if schema.default is not None:
        f["default"] = _default_json(schema, schema.default)
    elif schema.optional:
        f["default"] = None
    return f


def to_avro(value: Any, schema: Schema, where: str = "value") -> Any:
    """Connect value → the datum fastavro writes (AvroData.fromConnectData)."""
    if value is None:
        if schema.optional:
            return None
        if schema.default is not None:
            # validateSchemaValue lets it through, then Avro cannot write null here
            raise WriterFailure(f"{where}: null for a required {schema.type} with a default: Avro append fails")
        raise DataError(f"{where}: null value for a required {schema.type}")
    if schema.name == DECIMAL:
        if isinstance(value, bool) or not isinstance(value, (decimal.Decimal, int)):
            raise DataError(f"{where}: Invalid type for Decimal: {type(value).__name__}")
        from reference_impl.formats.json_format import _scaled

        return _scaled(value, int(schema.params.get("scale", "0")))
    if schema.name in (TIMESTAMP, DATE, TIME):
        from reference_impl.formats.json_format import logical_int

        return logical_int(value, schema.name)
    t = schema.type
    ok = {"int8": int, "int16": int, "int32": int, "int64": int, "float32": (int, float), "float64": (int, float),
          "boolean": bool, "string": str, "bytes": (bytes, bytearray, memoryview)}.get(t)
    if ok is not None:
        if not isinstance(value, ok) or (isinstance(value, bool) and t != "boolean"):
            raise DataError(f"{where}: Invalid type for {t.upper()}: {type(value).__name__}")
        if t in ("float32", "float64"):
            return float(value)
        return bytes(value) if t == "bytes" else value
    if t == "array":
        if not isinstance(value, (list, tuple)):
            raise DataError(f"{where}: Invalid type for ARRAY: {type(value).__name__}")
        return [to_avro(v, schema.items, f"{where}[{i}]") for i, v in enumerate(value)]  # type: ignore[arg-type]
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        if not isinstance(value, dict):
            raise DataError(f"{where}: Invalid type for MAP: {type(value).__name__}")
        if schema.keys.type == "string" and not schema.keys.optional:
            return {k: to_avro(v, schema.values, f"{where}.{k}") for k, v in value.items()}
        return [{"key": to_avro(k, schema.keys, where), "value": to_avro(v, schema.values, f"{where}.{k}")}
                for k, v in value.items()]
    if t == "struct" and schema.name == UNION:
        if not isinstance(value, Struct):
            raise DataError(f"{where}: Invalid type for STRUCT: {type(value).__name__}")
        for f in schema.fields:
            if value.values.get(f.name) is not None:
                return to_avro(value.values[f.name], f.schema, f"{where}.{f.name}")
        return None
    if t == "struct":
        if not isinstance(value, Struct):
            raise DataError(f"{where}: Invalid type for STRUCT: {type(value).__name__}")
        if value.schema != schema and _required(value.schema) != _required(schema):
            raise DataError(f"{where}: Mismatching struct schema")
        return {f.name: to_avro(value.values[f.name], f.schema, f"{where}.{f.name}") for f in schema.fields}
    raise DataError(f"{where}: unsupported type {t}")


_EMPTY_ANYTHING = {f["name"]: None for f in ANYTHING_SCHEMA["fields"]}


def to_anything(value: Any, where: str = "value") -> Any:
    """A schemaless Connect value wrapped in the Anything record."""
    rec = dict(_EMPTY_ANYTHING)
    if value is None:
        return rec
    if isinstance(value, bool):
        rec["boolean"] = value
    elif isinstance(value, int):
        rec["long"] = value  # JsonConverter gives schemaless integers as Long
    elif isinstance(value, float):
        rec["double"] = value
    elif isinstance(value, str):
        rec["string"] = value
    elif isinstance(value, (list, tuple)):
        rec["array"] = [to_anything(v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif isinstance(value, dict):
        rec["map"] = [{"key": to_anything(k, where), "value": to_anything(v, f"{where}.{k}")} for k, v in value.items()]
    else:
        raise DataError(f"{where}: Unknown Java type for schemaless data: {type(value).__name__}")
    return rec


def from_anything(rec: Any) -> Any:
    if not isinstance(rec, dict):
        return rec
    if rec.get("array") is not None:
        return [from_anything(v) for v in rec["array"]]
    if rec.get("map") is not None:
        pairs = [(from_anything(e["key"]), from_anything(e["value"])) for e in rec["map"]]
        try:
            return dict(pairs)
        except TypeError:
            return pairs
    for k in ("boolean", "bytes", "double", "float", "int", "long", "string"):
        if rec.get(k) is not None:
            return rec[k]
    return None


def plain(v: Any) -> Any:
    """Decoded Avro values in one comparable shape (exact ints for logical times)."""
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dt.datetime):
        v = v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)
        return (v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(milliseconds=1)
    if isinstance(v, dt.date):
        return (v - dt.date(1970, 1, 1)).days
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return v


_SHAPE_PROPS = ("logicalType", "precision", "scale", "connect.type", "size")


def schema_shape(avro: Any) -> Any:
    """What of an Avro writer schema decides how a reader reads the data: types, logical types
    (with precision and scale), Connect's int8/int16 annotation, record, enum and fixed names
    and their fields, symbols and sizes, union branches in order; a named type met again is its
    name. Docs, defaults, aliases and the other connect.* properties are left out."""
    seen: set[str] = set()

    def full(name: str, ns: str | None) -> str:
        return name if "." in name or not ns else f"{ns}.{name}"

    def walk(t: Any, ns: str | None) -> Any:
        if isinstance(t, list):
            return ["union", [walk(m, ns) for m in t]]
        if isinstance(t, str):
            if t in _PRIMS.values() or t == "null":
                return t
            return ["ref", t if "." in t or full(t, ns) not in seen else full(t, ns)]
        kind = t.get("type")
        if isinstance(kind, (list, dict)):
            return walk(kind, ns)
        if kind in ("record", "enum", "fixed"):
            name = full(t["name"], t.get("namespace", ns))
            if name in seen:
                return ["ref", name]
            seen.add(name)
            inner_ns = name.rpartition(".")[0] or None
            if kind == "record":
                return ["record", name, [[f["name"], walk(f["type"], inner_ns)] for f in t.get("fields", [])]]
            if kind == "enum":
                return ["enum", name, list(t.get("symbols", []))]
            return ["fixed", name, t.get("size"), t.get("logicalType")]
        if kind == "array":
            return ["array", walk(t["items"], ns)]
        if kind == "map":
            return ["map", walk(t["values"], ns)]
        props = {k: t[k] for k in _SHAPE_PROPS if k in t}
        return [kind, props] if props else kind

    return walk(avro, None)


def writer_schema(data: bytes) -> Any:
    """The writer schema an Avro container file declares (its `avro.schema` header), as JSON."""
    import fastavro
    import json

    if not data:
        return None
    return json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"])


def _codec_error(codec: str, e: Exception) -> ValueError:
    hint = " (fastavro needs the cramjam package for snappy)" if codec == "snappy" else ""
    return ValueError(f"avro.codec={codec!r} is not available here{hint}: {e}")


class AvroFormat:
    name = "avro"
    supports_compression = False

    def extension(self, opts: FormatOptions) -> str:
        return ".avro"  # whatever avro.codec is

    def _prepare(self, value: Any, schema: Schema | None, view: str) -> tuple[Any, Schema | None]:
        if view == "headers":
            check_headers(value)
            schema = schema or HEADER_SCHEMA
            from reference_impl.connect_data import Struct as _S
            from reference_impl.formats import SINGLE_HEADER_SCHEMA

            value = [h if isinstance(h, _S) else _S(SINGLE_HEADER_SCHEMA, h) for h in value or ()]
        return value, schema

    def check_writable(self, value: Any, schema: Schema | None, view: str,
                       opts: FormatOptions | None = None) -> None:
        value, schema = self._prepare(value, schema, view)
        if schema is None:
            to_anything(value)
            return
        avro_schema(schema, indexed=(opts or FormatOptions()).avro_default_names_indexed)
        to_avro(value, schema)

    def check_append(self, records_in_file: int, value: Any, schema: Schema | None, view: str,
                     opts: FormatOptions | None = None) -> None:
        if (opts or FormatOptions()).avro_writer_opens_once:
            return
        if view != "headers" and schema is None and records_in_file >= 1:
            raise WriterFailure("AvroFormat with a null view schema: the second record of a file re-opens the "
                                "open DataFileWriter (AvroRuntimeException: already open); the task dies")

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        import fastavro

        if opts.compression != "none":
            raise ValueError("s3.compression.type=gzip is not allowed with AvroFormat (R10.5)")
        if opts.avro_codec not in CODECS:
            raise ValueError(f"avro.codec={opts.avro_codec!r} is not one of {', '.join(CODECS)}")
        if not items:
            return b""
        prepared = [self._prepare(v, s, view) for v, s in items]
        schema = prepared[0][1]
        if schema is None:
            for i, (v, s) in enumerate(prepared):
                self.check_append(i, v, s, view, opts)
            writer_schema: Any = ANYTHING_SCHEMA
            data = [to_anything(v) for v, _ in prepared]
        else:
            writer_schema = avro_schema(schema, indexed=opts.avro_default_names_indexed)
            data = [to_avro(v, schema) for v, _ in prepared]
        buf = io.BytesIO()
        try:
            fastavro.writer(buf, fastavro.parse_schema(writer_schema), data, codec=opts.avro_codec)
        except ValueError as e:
            if "codec" in str(e).lower() or "cramjam" in str(e).lower():
                raise _codec_error(opts.avro_codec, e) from None
            raise
        return buf.getvalue()

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        import fastavro

        if not data:
            return []
        try:
            reader = fastavro.reader(io.BytesIO(data))
            ws = reader.writer_schema
            anything = isinstance(ws, dict) and ws.get("type") == "record" and (
                ws.get("name") == ANYTHING or (ws.get("name") == "Anything" and ws.get("namespace") == NAMESPACE))
            rows = list(reader)
        except ValueError as e:
            if "codec" in str(e).lower() or "cramjam" in str(e).lower():
                raise _codec_error(str(getattr(e, "codec", "?")), e) from None
            raise
        if anything:
            return [plain(from_anything(r)) for r in rows]
        return [plain(r) for r in rows]


FORMAT = AvroFormat()
