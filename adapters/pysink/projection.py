"""schema.compatibility in the Python sink (R14): whether a record's value schema may go into the
file its encoded partition has open, and the value as that file's schema holds it.

Written from kafka-connect-storage-common 12.0.12, which Confluent's S3 sink 12.1.9 bundles
(core/.../storage/schema/StorageSchemaCompatibility.java and SchemaProjector.java), independently
of the reference model. Schemas are in JsonConverter's shape (adapters/pysink/converters.py):
dicts with type, optional, default, name, version, doc, parameters, and fields (each with its
"field" name), items, keys, values; read here as JsonConverter.asConnectSchema reads them.

* `mode_of`: getCompatibility looks the name up exactly; anything else is NONE, silently (R14.6).
* `Compatibility.incompatibility(record, file)`: validateAndCheck, what shouldChangeSchema asks
  TopicPartitionWriter for each record: None where the record may go into the file, else the
  SchemaIncompatibilityType that rotates it (R14.2: NONE, Schema.equals; R14.3-R14.5: the other
  modes, a structural check and then the versions).
* `Compatibility.project(value, record, file)`: StorageSchemaCompatibility.project, the schema
  and value the record is written with (the file's, through SchemaProjector, outside NONE).

Both raise ProjectionError where Java throws SchemaProjectorException: TopicPartitionWriter.write
hands it to the errant-record reporter, and the Python sink has none, so the task dies.
The methods a faulty variant overrides (adapters/pysink/targets/variants.py) each carry one of
the Java methods; their bodies here are the correct behaviour.
"""
from __future__ import annotations

import decimal
from typing import Any

from adapters.pysink.encoding import schema_key
from adapters.pysink.jsonwrite import capacity_of, hashmap_entries

MODES = ("NONE", "BACKWARD", "FORWARD", "FULL")
# SchemaProjector.isEnumSchema: AvroData.GENERALIZED_TYPE_ENUM, AvroData.AVRO_TYPE_ENUM and
# ProtobufData.PROTOBUF_TYPE_ENUM (the constants javac inlined into the 12.0.12 jar)
ENUM_KEYS = ("org.apache.kafka.connect.data.Enum", "io.confluent.connect.avro.Enum",
             "io.confluent.connect.protobuf.Enum")
# SchemaProjector.filterMetadataParameters: documentation, not shape
METADATA_KEYS = ("connect.record.doc", "connect.record.aliases", "connect.record.namespace")
FIELD_DOC_PREFIX = "io.confluent.connect.avro.field.doc."
# the promotable types in order: a record's type may be promoted to any at or after it
NUMERIC = ("int8", "int16", "int32", "int64", "float", "double")
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
# logical types whose Java value is a java.util.Date, not a Number: projectPrimitive keeps them
_DATES = ("org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time",
          "org.apache.kafka.connect.data.Timestamp")


class ProjectionError(Exception):
    """SchemaProjectorException: with no errant-record reporter the task dies."""


def mode_of(name: str) -> str:
    """StorageSchemaCompatibility.getCompatibility: REVERSE.get(name), else NONE (R14.6). The
    config value arrives trimmed (ConfigDef trims strings), and `backward` is NONE."""
    name = name.strip()
    return name if name in MODES else "NONE"


# --- a schema as Connect holds it (JsonConverter.asConnectSchema) ---------------------------------

def _type(s: dict) -> Any:
    return s.get("type")


def _optional(s: dict) -> bool:
    return s.get("optional") is True  # only a JSON true makes the builder optional


def _default(s: dict) -> Any:
    return s.get("default")  # None: defaultValue() == null


def _name(s: dict) -> str | None:
    n = s.get("name")
    return n if isinstance(n, str) else None


def _version(s: dict) -> int | None:
    v = s.get("version")  # only an integral number is a version
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def parameters(s: dict) -> dict[str, str | None] | None:
    """parameters(): null unless the builder got one (a non-empty object); a value that is not
    text reads as null (JsonNode.textValue)."""
    p = s.get("parameters")
    if not isinstance(p, dict) or not p:
        return None
    return {str(k): v if isinstance(v, str) else None for k, v in p.items()}


def _fields(s: dict) -> list[dict]:
    return [f for f in s.get("fields") or [] if isinstance(f, dict)]


def _field(s: dict, name: Any) -> dict | None:
    """Schema.field(name): the struct's field of that name, or null."""
    return next((f for f in reversed(_fields(s)) if f.get("field") == name), None)


def _sub(s: dict, key: str) -> dict:
    sub = s.get(key)
    return sub if isinstance(sub, dict) else {}


def filtered(params: dict[str, str | None] | None) -> dict[str, str | None]:
    """SchemaProjector.filterMetadataParameters: a copy without the documentation parameters."""
    return {k: v for k, v in (params or {}).items() if k not in METADATA_KEYS and not k.startswith(FIELD_DOC_PREFIX)}


def is_enum(s: dict) -> bool:
    """SchemaProjector.isEnumSchema: on the parameters as they are (not filtered)."""
    p = parameters(s)
    return p is not None and any(k in p for k in ENUM_KEYS)


def promotable(source: Any, target: Any) -> bool:
    """PROMOTABLES: INT8 < INT16 < INT32 < INT64 < FLOAT32 < FLOAT64, each to itself or later."""
    return source in NUMERIC and target in NUMERIC and NUMERIC.index(source) <= NUMERIC.index(target)


def _node(x: Any) -> Any:
    """A JSON value as Jackson's JsonNode.equals compares it: objects without their key order,
    and numbers by their node class (1, 1.0 and 1.00 are three different nodes)."""
    if isinstance(x, dict):
        return ("o", frozenset((k, _node(v)) for k, v in x.items()))
    if isinstance(x, list):
        return ("a", tuple(_node(v) for v in x))
    if isinstance(x, bool):
        return ("b", x)
    if isinstance(x, int):
        return ("i", x)
    if isinstance(x, (float, decimal.Decimal)):
        return ("d", str(x))
    return (type(x).__name__, x)


def identical(a: Any, b: Any) -> bool:
    """validateAndCheck's `currentSchema == valueSchema`, a reference comparison. The converters
    cache the Schema they build (JsonConverter's toConnectSchemaCache, keyed on the schema's
    JsonNode; AvroData's, on the Avro schema and its version), so a record whose schema arrives
    exactly as the file's first record's did holds the very same object: that is the JSON
    schema here, compared as its JsonNode. Schema.equals is looser (`optional: false` spelled
    out, say), and a schema equal but not identical goes on to the version check."""
    if a is None or b is None:
        return a is b
    return a is b or _node(a) == _node(b)


def schema_equals(a: Any, b: Any) -> bool:
    """Schema.equals (Objects.equals for nulls)."""
    if a is None or b is None:
        return a is b
    return schema_key(a) == schema_key(b)


# --- numbers as Java promotes them (projectPrimitive) ---------------------------------------------

def _wrap(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


def _f32(x: float) -> float:
    import struct

    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def _int_to_f32(n: int) -> float:
    """Number.floatValue() of an Integer or a Long: rounded once, to nearest-even at 24 bits
    (through a double first would round twice)."""
    a = abs(n)
    if a < 1 << 24:
        return float(n)
    shift = a.bit_length() - 24
    q, r = divmod(a, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    x = float(q << shift)
    return x if n > 0 else -x


def promote(value: Any, source: str, target: str) -> Any:
    """projectPrimitive on a Number: the source's Java value (an integer at its width, a float
    at its precision) as the target's byteValue()..doubleValue()."""
    if source in _BITS:
        n = _wrap(int(value), _BITS[source])
        if target in _BITS:
            return _wrap(n, _BITS[target])
        return _int_to_f32(n) if target == "float" else float(n)
    x = float(value)
    if source == "float":
        x = _f32(x)
    return _f32(x) if target == "float" else x


def _is_number(value: Any, schema: dict) -> bool:
    """`record instanceof Number`: not a Boolean, nor a java.util.Date (Date, Time, Timestamp)."""
    return (isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)
            and _name(schema) not in _DATES)


UNSET = object()  # a struct field the projection leaves unset (written as its default, or null)


class Compatibility:
    """One schema.compatibility mode: StorageSchemaCompatibility's check and SchemaProjector's
    projection, one overridable method per Java method."""

    def __init__(self, mode: str):
        self.mode = mode_of(mode)

    # -- shouldChangeSchema ------------------------------------------------------------------
    def incompatibility(self, record: Any, file: Any) -> str | None:
        """validateAndCheck(valueSchema, currentSchema): None (compatible) or the
        SchemaIncompatibilityType; ProjectionError where Java throws."""
        if record is None and file is None:
            return None
        if identical(record, file):
            return None
        if record is None or file is None:
            # unreachable from TopicPartitionWriter, whose null-schema rotation (R3.7) comes first
            raise ProjectionError("Switch between schema-based and schema-less data is not supported")
        # before any comparison, and on the top level only: two unversioned schemas that are
        # not identical stop the task even where they are equal (R14.5)
        if self.mode != "NONE" and (_version(record) is None or _version(file) is None):
            raise ProjectionError(f"Schema version required for {self.mode} compatibility")
        return self.check(record, file)

    def check(self, record: dict, file: dict) -> str | None:
        """NONE.check: incompatible unless Schema.equals (R14.2). The others (check): the
        structure at every level, then the versions at the top."""
        if self.mode == "NONE":
            return None if schema_equals(record, file) else "DIFFERENT_SCHEMA"
        return self.structure(record, file) or self.versions(record, file)

    def versions(self, record: dict, file: dict) -> str | None:
        """checkVersions: BACKWARD and FULL take no record newer than the file; FORWARD, which
        overrides this method alone (so it checks the structure too), none older (R14.3, R14.4)."""
        r, f = _version(record), _version(file)
        assert r is not None and f is not None
        newer_or_older = r < f if self.mode == "FORWARD" else r > f
        return "DIFFERENT_VERSION" if newer_or_older else None

    def structure(self, record: dict, file: dict) -> str | None:
        """checkSchemaCompatibility (#463, 12.0.10 on): types, names, parameters and optionality
        at this level, then into struct fields, array elements, map keys and values; the checks
        SchemaProjector.project would fail, caught before the record is projected."""
        if self.types_differ(record, file):
            return "DIFFERENT_TYPE"
        if self.names_differ(record, file):
            return "DIFFERENT_NAME"
        if self.params_differ(record, file):
            return "DIFFERENT_PARAMS"
        if _optional(record) and not _optional(file) and _default(file) is None:
            return "INCOMPATIBLE_OPTIONALITY"
        t = _type(record)
        if t == "struct":
            return self.struct_fields(record, file)
        if t == "array":
            return self.structure(_sub(record, "items"), _sub(file, "items"))
        if t == "map":
            return (self.structure(_sub(record, "keys"), _sub(file, "keys"))
                    or self.structure(_sub(record, "values"), _sub(file, "values")))
        return None

    def struct_fields(self, record: dict, file: dict) -> str | None:
        """checkStructFieldsCompatibility: the fields both have, recursively; a record's extra
        field is dropped by the projection; a file field the record lacks must be optional or
        have a default, which the projection fills."""
        for f in _fields(record):
            current = _field(file, f.get("field"))
            if current is not None:
                found = self.structure(f, current)
                if found:
                    return found
        for f in _fields(file):
            if _field(record, f.get("field")) is None and not _optional(f) and _default(f) is None:
                return "MISSING_REQUIRED_FIELD"
        return None

    def types_differ(self, record: dict, file: dict) -> bool:
        """checkSchemaTypes: another type, unless the record's promotes to the file's."""
        return _type(record) != _type(file) and not promotable(_type(record), _type(file))

    def names_differ(self, record: dict, file: dict) -> bool:
        """checkSchemaNames."""
        return _name(record) != _name(file)

    def params_differ(self, record: dict, file: dict) -> bool:
        """checkSchemaParameters: the parameters without documentation must be equal, absent
        ones read as empty; an enum's symbols need only be a subset of the file's (a symbol
        removed projects, one added rotates)."""
        r, f = filtered(parameters(record)), filtered(parameters(file))
        if is_enum(record) and is_enum(file):
            return not r.items() <= f.items()
        return r != f

    # -- project ---------------------------------------------------------------------------
    def project(self, value: Any, record: Any, file: Any) -> tuple[Any, Any]:
        """StorageSchemaCompatibility.project: the (schema, value) the record is written with.
        NONE writes it as it is; the others too where Schema.equals, else the value projected
        onto the file's schema, which the record then carries (record.newRecord)."""
        if self.mode == "NONE" or schema_equals(record, file):
            return record, value
        return file, self.project_value(record, value, file)

    def project_value(self, source: dict, value: Any, target: dict) -> Any:
        """SchemaProjector.project. A null takes the source's default first: the converter put
        it there (JsonConverter's replace.null.with.default; Struct.get for a field)."""
        if value is None and _default(source) is not None:
            value = _default(source)
        self.maybe_compatible(source, target)
        if _optional(source) and not _optional(target):
            if _default(target) is None:
                raise ProjectionError("Writer schema is optional, however, target schema does not provide a "
                                      "default value.")
            return _default(target) if value is None else self.project_required(source, value, target)
        return None if value is None else self.project_required(source, value, target)

    def maybe_compatible(self, source: dict, target: dict) -> None:
        """checkMaybeCompatible: the parameters are compared only where both schemas have some
        (checkSchemaParameters, which decides rotation, reads a missing map as empty)."""
        s, t = _type(source), _type(target)
        if s != t and not promotable(s, t):
            raise ProjectionError(f"Schema type mismatch. source type: {s} and target type: {t}")
        if _name(source) != _name(target):
            raise ProjectionError(f"Schema name mismatch. source name: {_name(source)} and target name: "
                                  f"{_name(target)}")
        sp, tp = parameters(source), parameters(target)
        if sp is not None and tp is not None:
            fs, ft = filtered(sp), filtered(tp)
            if is_enum(source) and is_enum(target):
                if not fs.items() <= ft.items():
                    raise ProjectionError(f"Schema parameters mismatch. Source parameter: {sp} is not a subset of "
                                          f"target parameters: {tp}")
            elif fs != ft:
                raise ProjectionError(f"Schema parameters not equal. source parameters: {sp} and target "
                                      f"parameters: {tp}")

    def project_required(self, source: dict, value: Any, target: dict) -> Any:
        """projectRequiredSchema: by the target's type."""
        t = _type(target)
        if t == "struct":
            return self.project_struct(source, value, target)
        if t == "array":
            items, target_items = _sub(source, "items"), _sub(target, "items")
            return [self.project_value(items, v, target_items) for v in (value if isinstance(value, list) else [])]
        if t == "map":
            return self.project_map(source, value, target)
        if t in NUMERIC or t in ("boolean", "bytes", "string"):
            if promotable(_type(source), t) and _is_number(value, source):
                return promote(value, _type(source), t)
            return value
        return None

    def project_struct(self, source: dict, value: Any, target: dict) -> dict:
        """projectStruct: a Struct of the target's schema, each target field from the source's
        field of that name; a field the source lacks comes from `missing_field`."""
        given = value if isinstance(value, dict) else {}
        out: dict[str, Any] = {}
        for tf in _fields(target):
            name = tf.get("field")
            sf = _field(source, name)
            if sf is not None:
                try:
                    out[name] = self.project_value(sf, given.get(name), tf)
                except ProjectionError as e:
                    raise ProjectionError(f"Error projecting {name}: {e}") from None
                continue
            filled = self.missing_field(tf, source)
            if filled is not UNSET:
                out[name] = filled
        return out

    def missing_field(self, field: dict, source: dict) -> Any:
        """A target field the source lacks: optional, it stays unset (written as its default if
        it has one, else null: Struct.get); required, its default; else the projection fails."""
        if _optional(field):
            return UNSET
        if _default(field) is not None:
            return _default(field)
        raise ProjectionError(f"Required field `{field.get('field')}` is missing from source schema: "
                              f"{schema_text(source)}")

    def project_map(self, source: dict, value: Any, target: dict) -> Any:
        """projectMap: every entry, key and value, into a new HashMap, filled as the source map
        iterates (the order JsonFormat writes it in follows from that)."""
        ks, vs = _sub(source, "keys"), _sub(source, "values")
        tks, tvs = _sub(target, "keys"), _sub(target, "values")
        if isinstance(value, dict):
            pairs = list(value.items())
        else:
            pairs = [(p[0], p[1]) for p in value or [] if isinstance(p, (list, tuple)) and len(p) == 2]
        key_type = _type(ks) if _name(ks) is None else None
        java = [(_java_key(ks, k), v) for k, v in pairs]
        entries = [(self.project_value(ks, k, tks), self.project_value(vs, v, tvs))
                   for k, v in hashmap_entries(java, key_type, capacity_of(value))]
        if _type(tks) == "string":
            return dict(entries)
        return [[k, v] for k, v in entries]


def _java_key(schema: dict, key: Any) -> Any:
    """A map key as the Java object the converter made (an integer at its width), for its hash."""
    t = _type(schema)
    if t in _BITS and isinstance(key, (int, decimal.Decimal)) and not isinstance(key, bool):
        return _wrap(int(key), _BITS[t])
    if t in ("float", "double") and isinstance(key, (int, float, decimal.Decimal)) and not isinstance(key, bool):
        return float(key)
    return key


def schema_text(schema: dict) -> str:
    """A schema named in an error message (ConnectSchema's toString is its name or its type)."""
    return str(_name(schema) or f"Schema{{{str(_type(schema)).upper()}}}")
