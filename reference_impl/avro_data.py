"""What Confluent's AvroConverter hands the sink: Avro data read from the Schema Registry wire
format (magic byte 0, a 4-byte schema id, the Avro binary of the value) and converted to Connect
data by AvroData.toConnectSchema / toConnectData, as the converter configures it (schema-registry
7.7.x: `connect.meta.data` on, `enhanced.avro.schema.support` off, invalid names not scrubbed,
singleton unions flattened, no generalized sum types).

* A record is a Struct named by its full Avro name (`connect.name` wins; the unnamed
  `io.confluent.connect.avro.ConnectDefault…` names stay unnamed); its doc and field docs go into
  parameters (`io.confluent.connect.avro.record.doc`, `…field.doc.<field>`); a field with an Avro
  default takes it as its Connect default, flagged `io.confluent.connect.avro.field.default`.
* `[null, T]` (either order) is T, optional; any other union is a Struct named
  `io.confluent.connect.avro.Union`, one optional field per branch (named by the branch's type,
  or a named type's short name); an enum is a string named by the enum's full name with its
  symbols in parameters (`io.confluent.connect.avro.Enum`, `…Enum.<symbol>`); a fixed is bytes
  with `connect.fixed.size`; an array of `MapEntry` records (AvroData's own encoding) is a map.
* Logical types: decimal → Decimal (precision in `connect.decimal.precision` unless 64), date →
  Date, time-millis → Time, timestamp-millis → Timestamp; others (timestamp-micros, uuid, …) are
  their underlying type.
* `connect.*` properties restore what AvroData's own writer stored (doc, version, parameters,
  default, int8/int16).
* The top-level schema's version is `connect.version` where the Avro schema has it, else the
  version under which the registry holds the writer schema in the record's subject (the converter
  asks the registry for every schema it has not seen). A schema not registered under that subject
  is a DataException.

The writer schema's parsing and the Avro binary decoder it reads with are
reference_impl.avro_binary.
"""
from __future__ import annotations

import decimal
import json
from typing import Any, Protocol

from reference_impl.avro_binary import AvroDataError, Branch, Named, decode, parse, prop, resolve, type_of
from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema, SchemaError, Struct, as_hashmap

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_NAME = f"{NAMESPACE}.ConnectDefault"
UNION = f"{NAMESPACE}.Union"
ENUM = f"{NAMESPACE}.Enum"
FIELD_DEFAULT_FLAG = f"{NAMESPACE}.field.default"
MAGIC = 0
_NO_DEFAULT = object()  # a record field without an Avro default (Field.defaultVal() is null)


class RegistryView(Protocol):
    """What the converter reads from the Schema Registry: a schema by id (its text and type, as a
    pair or an object with `text` and `schema_type`; None or KeyError where there is none), and
    the version under which a subject holds it (None: not registered there)."""

    def schema(self, schema_id: int) -> Any: ...

    def version_of(self, subject: str, schema_id: int) -> int | None: ...


def _schema_of(registry: RegistryView, schema_id: int) -> tuple[str, str] | None:
    try:
        got = registry.schema(schema_id)
    except KeyError:
        return None
    if got is None:
        return None
    if hasattr(got, "text"):
        return got.text, getattr(got, "schema_type", "AVRO")
    return got[0], got[1]


# --- toConnectSchema ---------------------------------------------------------------------------

def _is_map_entry(node: Any) -> bool:
    return (type_of(node) == "record" and (node.get("fullname") == f"{NAMESPACE}.MapEntry"
                                           or node.get("connect.internal.type") == "MapEntry"))


def _member_field_name(node: Any) -> str:
    t = type_of(node)
    if t in ("record", "enum", "fixed"):
        return node.get("fullname", node.get("name", "")).rpartition(".")[2]
    return t


def to_connect_schema(node: Any, named: Named, version: int | None = None) -> Schema:
    """AvroData.toConnectSchema of the top-level writer schema; `version`: the registry's."""
    return _schema(node, named, False, _NO_DEFAULT, version, None, top=True)


def _schema(node: Any, named: Named, force_optional: bool, field_default: Any, version: int | None,
            ns: str | None, top: bool = False) -> Schema:
    """`field_default`: the record field's Avro default (JSON null for an explicit null, which
    Avro's Field.defaultVal() gives as NULL_VALUE), or _NO_DEFAULT where it has none."""
    node = resolve(node, named, ns)
    t = type_of(node)
    logical = prop(node, "logicalType")
    connect_type = prop(node, "connect.type")
    params: dict[str, str] = {}
    name: str | None = None
    fields: tuple[Field, ...] = ()
    items = keys = values = None
    optional = False
    if t == "boolean":
        kind = "boolean"
    elif t in ("bytes", "fixed"):
        kind = "bytes"
        if isinstance(logical, str) and logical.lower() == "decimal":
            scale = prop(node, "scale")
            scale = int(scale) if isinstance(scale, (int, float)) and not isinstance(scale, bool) else 0
            name, params["scale"] = DECIMAL, str(scale)
            precision = prop(node, "precision")
            if precision is not None:
                if not isinstance(precision, (int, float)) or isinstance(precision, bool):
                    raise AvroDataError("precision property must be a JSON Integer")
                if int(precision) != 64:
                    params["connect.decimal.precision"] = str(int(precision))
        if t == "fixed":
            params["connect.fixed.size"] = str(int(node["size"]))
    elif t == "double":
        kind = "float64"
    elif t == "float":
        kind = "float32"
    elif t == "int":
        if connect_type is None and logical is None:
            kind = "int32"
        elif logical is not None:
            kind = "int32"
            if str(logical).lower() == "date":
                name = DATE
            elif str(logical).lower() == "time-millis":
                name = TIME
        else:
            if connect_type not in ("int8", "int16"):
                raise AvroDataError("Connect type annotation for Avro int field is null")
            kind = connect_type
    elif t == "long":
        kind = "int64"
        if isinstance(logical, str) and logical.lower() == "timestamp-millis":
            name = TIMESTAMP
    elif t == "string":
        kind = "string"
    elif t == "array":
        elem = resolve(node["items"], named, ns)
        if _is_map_entry(elem):
            fs = {f["name"]: f for f in elem["fields"]}
            if len(elem["fields"]) != 2 or "key" not in fs or "value" not in fs:
                raise AvroDataError("Found map encoded as array of key-value pairs, but array elements do not "
                                    "match the expected format.")
            kind = "map"
            inner = elem.get("fullname", "").rpartition(".")[0] or None
            keys = _schema(fs["key"]["type"], named, False, _NO_DEFAULT, None, inner)
            values = _schema(fs["value"]["type"], named, False, _NO_DEFAULT, None, inner)
        else:
            kind = "array"
            items = _schema(node["items"], named, False, _NO_DEFAULT, None, ns)
    elif t == "map":
        kind = "map"
        keys = Schema("string")
        values = _schema(node["values"], named, False, _NO_DEFAULT, None, ns)
    elif t == "record":
        kind = "struct"
        inner = node.get("fullname", "").rpartition(".")[0] or None
        if node.get("doc") is not None:
            params[f"{NAMESPACE}.record.doc"] = node["doc"]
        out = []
        for f in node["fields"]:
            if f.get("doc") is not None:
                params[f"{NAMESPACE}.field.doc.{f['name']}"] = f["doc"]
            out.append(Field(f["name"], _schema(f["type"], named, False, f.get("default", _NO_DEFAULT),
                                                None, f.get("_ns", inner))))
        fields = tuple(out)
    elif t == "enum":
        kind = "string"
        short = node.get("fullname", node["name"]).rpartition(".")[2]
        if node.get("doc") is not None:
            params[f"{NAMESPACE}.enum.doc.{short}"] = node["doc"]
        if node.get("default") is not None:
            params[f"{NAMESPACE}.enum.default.{short}"] = node["default"]
        params[ENUM] = node.get("fullname", node["name"])
        for s in node["symbols"]:
            params[f"{ENUM}.{s}"] = s
    elif t == "union":
        if len(node) == 1:
            return _schema(node[0], named, False, _NO_DEFAULT, None, ns)
        if len(node) == 2 and "null" in [m if isinstance(m, str) else None for m in node]:
            member = next(m for m in node if m != "null")
            return _schema(member, named, True, _NO_DEFAULT, None, ns)
        kind = "struct"
        name = UNION
        out, seen = [], set()
        for m in node:
            rm = resolve(m, named, ns)
            if type_of(rm) == "null":
                optional = True
                continue
            fname = _member_field_name(rm)
            if fname in seen:
                raise AvroDataError("Multiple union schemas map to the Connect union field name")
            seen.add(fname)
            out.append(Field(fname, _schema(rm, named, True, _NO_DEFAULT, None, ns)))
        fields = tuple(out)
    elif t == "null":
        raise AvroDataError("Standalone null schemas are not supported by this converter")
    else:
        raise AvroDataError(f"Couldn't translate unsupported schema type {t}.")

    doc = prop(node, "connect.doc") if isinstance(prop(node, "connect.doc"), str) else None
    # Decimal, Date, Time and Timestamp builders carry version 1 of their own
    builder_version = 1 if name in (DECIMAL, DATE, TIME, TIMESTAMP) else None
    v = prop(node, "connect.version")
    if v is not None:
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise AvroDataError(f"Invalid Connect version found: {v}")
        given: int | None = int(v)
    else:
        given = version
    schema_version = builder_version
    if given is not None and given >= 0:
        if builder_version is not None and given != builder_version:
            raise AvroDataError(f"Mismatched versions: version already added to SchemaBuilder ({builder_version}) "
                                f"differs from version in source schema ({given})")
        schema_version = given
    cparams = prop(node, "connect.parameters")
    if cparams is not None:
        if not isinstance(cparams, dict):
            raise AvroDataError(f"Expected JSON object for schema parameters but found: {cparams}")
        for k, pv in cparams.items():
            if not isinstance(pv, str):
                raise AvroDataError(f"Expected schema parameter values to be strings but found: {pv}")
            params[k] = pv
    if isinstance(node, dict):
        for k, pv in node.items():
            if k.startswith("avro") and k not in ("type",):
                params[k] = pv if isinstance(pv, str) else json.dumps(pv)
    connect_default = prop(node, "connect.default")
    default_json = field_default
    if field_default is _NO_DEFAULT:
        default_json = connect_default if connect_default is not None else _NO_DEFAULT
    elif connect_default is None:
        params[FIELD_DEFAULT_FLAG] = "true"  # an Avro field default (an explicit null one too)
    cname = prop(node, "connect.name")
    if cname is not None:
        if not isinstance(cname, str):
            raise AvroDataError(f"Invalid schema name: {cname}")
        schema_name: str | None = cname
    elif t in ("record", "enum") or (t == "fixed" and name != DECIMAL):
        schema_name = node.get("fullname", node.get("name"))
    else:
        schema_name = None
    if schema_name is not None and not schema_name.startswith(DEFAULT_NAME):
        if name is not None and schema_name != name:
            raise AvroDataError(f"Mismatched names: name already added to SchemaBuilder ({name}) differs from "
                                f"name in source schema ({schema_name})")
        name = schema_name
    schema = Schema(kind, optional=optional or force_optional, name=name, version=schema_version, doc=doc,
                    parameters=tuple(params.items()) or None, fields=fields, items=items, keys=keys,
                    values=values)
    if default_json is not _NO_DEFAULT and default_json is not None:
        try:
            default = _default_value(schema, node, named, default_json, ns)
        except (AvroDataError, SchemaError, TypeError, ValueError):
            default = None  # AvroData logs "Ignoring invalid default" and goes on
        if default is not None:
            schema = Schema(**{**schema.__dict__, "default": default})
    return schema


def _default_value(schema: Schema, node: Any, named: Named, value: Any, ns: str | None) -> Any:
    """defaultValueFromAvro: an Avro JSON default as the Connect value of `schema`."""
    node = resolve(node, named, ns)
    t = type_of(node)
    if value is None:
        return None
    if t == "union":
        first = resolve(node[0], named, ns)
        if type_of(first) == "null":
            return None
        if schema.name == UNION:
            f = schema.field(_member_field_name(first))
            return Struct(schema, {f.name: _default_value(f.schema, first, named, value, ns)}) if f else None
        return _default_value(schema, first, named, value, ns)
    if t in ("int", "long"):
        v = int(value)
    elif t in ("float", "double"):
        v = float(value)
    elif t == "boolean":
        v = bool(value)
    elif t in ("string", "enum"):
        v = value if isinstance(value, str) else json.dumps(value)
    elif t in ("bytes", "fixed"):
        v = str(value).encode("latin-1")
    elif t == "array":
        if not isinstance(value, list):
            raise AvroDataError("Invalid JSON for array default value")
        assert schema.items is not None
        v = [_default_value(schema.items, node["items"], named, e, ns) for e in value]
    elif t == "map":
        if not isinstance(value, dict):
            raise AvroDataError("Invalid JSON for map default value")
        assert schema.values is not None
        v = {k: _default_value(schema.values, node["values"], named, e, ns) for k, e in value.items()}
    elif t == "record":
        if not isinstance(value, dict):
            raise AvroDataError("Invalid JSON for record default value")
        inner = node.get("fullname", "").rpartition(".")[0] or None
        vals = {}
        for f in node["fields"]:
            cf = schema.field(f["name"])
            assert cf is not None
            vals[f["name"]] = _default_value(cf.schema, f["type"], named, value.get(f["name"]), f.get("_ns", inner))
        return Struct(schema, vals)
    else:
        return None
    return _logical(schema, v)


def _logical(schema: Schema, v: Any) -> Any:
    """The logical-type conversions of TO_CONNECT_LOGICAL_CONVERTERS: a Decimal's bytes as a
    BigDecimal; Date, Time and Timestamp stay numbers in the model (days, ms of day, epoch ms)."""
    if v is None:
        return None
    if schema.name == DECIMAL and isinstance(v, (bytes, bytearray)):
        scale = int(schema.params.get("scale", "0"))
        return decimal.Decimal(int.from_bytes(bytes(v), "big", signed=True)).scaleb(-scale)
    return v


# --- toConnectData ------------------------------------------------------------------------------

def to_connect_value(schema: Schema, node: Any, named: Named, datum: Any, ns: str | None = None,
                     where: str = "value") -> Any:
    """AvroData.toConnectData(schema, value): the Connect value of a datum read with `node`."""
    if isinstance(datum, Branch):
        rnode = resolve(node, named, ns)
        member = rnode[datum.index] if isinstance(rnode, list) else rnode
        if schema.name == UNION and schema.type == "struct":
            if datum.value is None:
                if not schema.optional:
                    raise AvroDataError(f"{where}: Found null value for non-optional schema")
                return None
            rm = resolve(member, named, ns)
            f = schema.field(_member_field_name(rm))
            if f is None:
                raise AvroDataError(f"{where}: Did not find matching union field for data")
            return Struct(schema, {f.name: to_connect_value(f.schema, rm, named, datum.value, ns, where)})
        return to_connect_value(schema, member, named, datum.value, ns, where)
    if datum is None:
        if not schema.optional:
            raise AvroDataError(f"{where}: Found null value for non-optional schema")
        return None
    node = resolve(node, named, ns)
    t = schema.type
    if t == "struct":
        inner = node.get("fullname", "").rpartition(".")[0] or None
        by_name = {f["name"]: f for f in node["fields"]}
        vals = {}
        for f in schema.fields:
            af = by_name[f.name]
            vals[f.name] = to_connect_value(f.schema, af["type"], named, datum.get(f.name),
                                            af.get("_ns", inner), f"{where}.{f.name}")
        return Struct(schema, vals)
    if t == "array":
        assert schema.items is not None
        return [to_connect_value(schema.items, node["items"], named, v, ns, f"{where}[{i}]")
                for i, v in enumerate(datum)]
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        # AvroData fills `new HashMap<>(original.size())`: its iteration order is of that capacity
        if type_of(node) == "map":
            return as_hashmap({k: to_connect_value(schema.values, node["values"], named, v, ns, f"{where}.{k}")
                               for k, v in datum}, "string", len(datum))
        entry = resolve(node["items"], named, ns)
        fs = {f["name"]: f for f in entry["fields"]}
        inner = entry.get("fullname", "").rpartition(".")[0] or None
        out = {}
        for e in datum:
            k = to_connect_value(schema.keys, fs["key"]["type"], named, e["key"], inner, where)
            out[k] = to_connect_value(schema.values, fs["value"]["type"], named, e["value"], inner, f"{where}.{k}")
        return as_hashmap(out, schema.keys.type, len(datum))
    if t == "int8":
        v = ((int(datum) + 128) & 0xFF) - 128
    elif t == "int16":
        v = ((int(datum) + 32768) & 0xFFFF) - 32768
    elif t == "bytes":
        v = bytes(datum)
    else:
        v = datum
    return _logical(schema, v)


# --- the converter ------------------------------------------------------------------------------

def subject_for(topic: str, which: str, strategy: str, record_name: str | None) -> str:
    """The subject a (de)serializer reads a schema under: TopicNameStrategy `<topic>-key|value`,
    RecordNameStrategy the record's full name, TopicRecordNameStrategy `<topic>-<record>`."""
    short = strategy.rsplit(".", 1)[-1]
    if short == "TopicNameStrategy":
        return f"{topic}-{which}"
    if record_name is None:
        raise AvroDataError(f"{short} needs a record schema (this one is not a record)")
    if short == "RecordNameStrategy":
        return record_name
    if short == "TopicRecordNameStrategy":
        return f"{topic}-{record_name}"
    raise AvroDataError(f"subject name strategy {strategy} is not one of TopicNameStrategy, RecordNameStrategy, "
                        "TopicRecordNameStrategy")


TOPIC_NAME_STRATEGY = "io.confluent.kafka.serializers.subject.TopicNameStrategy"


def avro_to_connect(data: bytes, registry: RegistryView, topic: str, which: str,
                    strategy: str = TOPIC_NAME_STRATEGY) -> tuple[Any, Schema | None]:
    """AvroConverter.toConnectData for non-null bytes: (value, schema)."""
    if len(data) < 5:
        raise AvroDataError("Unknown magic byte!" if data[:1] != b"\x00" else "the record is shorter than "
                            "the wire format's 5-byte header (BufferUnderflowException)")
    if data[0] != MAGIC:
        raise AvroDataError("Unknown magic byte!")
    schema_id = int.from_bytes(data[1:5], "big", signed=True)
    found = _schema_of(registry, schema_id)
    if found is None:
        raise AvroDataError(f"Error retrieving Avro {which} schema for id {schema_id}: Schema not found")
    text, schema_type = found
    if schema_type.upper() != "AVRO":
        raise AvroDataError(f"schema id {schema_id} is a {schema_type} schema, not Avro")
    node, named = parse(text)
    root = resolve(node, named)
    record_name = root.get("fullname") if type_of(root) == "record" else None
    subject = subject_for(topic, which, strategy, record_name)
    version = registry.version_of(subject, schema_id)
    if version is None:
        raise AvroDataError(f"Error retrieving schema version for id {schema_id}: the subject {subject} does not "
                            "hold it (Subject Not Found / Schema not found)")
    datum = decode(node, named, data[5:])
    if type_of(root) == "record" and root.get("fullname") == f"{NAMESPACE}.Anything":
        return _anything(datum), None
    schema = to_connect_schema(node, named, version)
    return to_connect_value(schema, node, named, datum), schema


def _anything(rec: Any) -> Any:
    """AvroData's schemaless Anything record → the plain value it wraps."""
    if isinstance(rec, Branch):
        return _anything(rec.value)
    if not isinstance(rec, dict):
        return rec
    for k in ("boolean", "bytes", "double", "float", "int", "long", "string"):
        v = rec.get(k)
        if isinstance(v, Branch):
            v = v.value
        if v is not None:
            return v
    arr = rec.get("array")
    arr = arr.value if isinstance(arr, Branch) else arr
    if arr is not None:
        return [_anything(x) for x in arr]
    entries = rec.get("map")
    entries = entries.value if isinstance(entries, Branch) else entries
    if entries is not None:
        return as_hashmap({_anything(e["key"]): _anything(e["value"]) for e in entries}, None, len(entries))
    return None
