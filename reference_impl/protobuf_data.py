"""What Confluent's ProtobufConverter hands the sink: a message read from the Schema Registry
wire format (magic byte 0, a 4-byte schema id, the message indexes, the protobuf binary) and
converted by ProtobufData.toConnectSchema / toConnectData (schema-registry 7.7.x) with the
converter's defaults: enhanced.protobuf.schema.support, generalized.sum.type.support,
int.for.enums, optional.for.nullables, wrapper.for.nullables, generate.struct.for.nulls and
flatten.unions off; generate.index.for.unions and wrapper.for.raw.primitives on.

* A bare wrapper message (google.protobuf.StringValue, …) is its primitive, required, with the
  registry's version (wrapper.for.raw.primitives).
* The message is a Struct named by its short name (enhanced support off), with the version under
  which the record's subject holds the writer schema. Its fields: each real oneof first, as an
  optional Struct `io.confluent.connect.protobuf.Union.<oneof>` in a field `<oneof>_<index>`, then
  the other fields in declaration order.
* Every field's schema is optional (wrapper.for.nullables off) and carries its number in
  `io.confluent.connect.protobuf.Tag`; 32-bit ints other than int32 carry
  `io.confluent.connect.protobuf.Type` (sint32, sfixed32), and so do the 64-bit ones other than
  int64, uint32 and fixed32 among them (int64 in Connect).
* An enum is a string named by the enum's short name, with `io.confluent.connect.protobuf.Enum`
  (its short name) and `…Enum.<symbol>` (its number) parameters; a nested message is an optional
  Struct named by its short name; `repeated T` an optional array of optional T (the field's
  parameters on the array); `map<K, V>` an optional map named after the field (toMapField of its
  entry), key and value optional with Tags 1 and 2.
* google.protobuf.Timestamp → Timestamp, google.type.Date → Date, google.type.TimeOfDay → Time;
  the wrappers (google.protobuf.StringValue, …) are their optional primitive
  (wrapper.for.raw.primitives: DoubleValue float64, FloatValue float32, Int64Value, UInt64Value
  and UInt32Value int64, Int32Value int32, BoolValue boolean, StringValue string, BytesValue
  bytes), null when the field is unset.
* Values: a singular scalar or enum absent from the binary is its proto3 default (0, "", false,
  the first enum symbol), not null, unless declared `optional`; an absent message (a wrapper
  too) is null; an absent repeated field an empty array, an absent map an empty map; a oneof's
  Struct holds only the member that is set, null when none is; uint32 and fixed32 are read
  unsigned, uint64 and fixed64 as Java's signed long.
"""
from __future__ import annotations

import datetime
from typing import Any

from reference_impl.connect_data import DATE, TIME, TIMESTAMP, Field, Schema, Struct, as_hashmap
from reference_impl.proto_schema import (WRAPPERS, ProtoEnum, ProtoField, ProtoMessage, ProtoSchemaError, Reader, decode,
                                         default_of, parse, scalar_kind, zigzag_varint)

NAMESPACE = "io.confluent.connect.protobuf"
ENUM = f"{NAMESPACE}.Enum"
UNION_PREFIX = f"{NAMESPACE}.Union."
TAG = f"{NAMESPACE}.Tag"
TYPE = f"{NAMESPACE}.Type"
MAGIC = 0
_LOGICAL = {"google.protobuf.Timestamp": TIMESTAMP, "google.type.Date": DATE, "google.type.TimeOfDay": TIME}
_INT32 = ("int32", "sint32", "sfixed32")
_INT64 = ("uint32", "fixed32", "int64", "uint64", "sint64", "fixed64", "sfixed64")
_UNWRAPPED = {"google.protobuf.DoubleValue": "float64", "google.protobuf.FloatValue": "float32",
              "google.protobuf.Int64Value": "int64", "google.protobuf.UInt64Value": "int64",
              "google.protobuf.Int32Value": "int32", "google.protobuf.UInt32Value": "int64",
              "google.protobuf.BoolValue": "boolean", "google.protobuf.StringValue": "string",
              "google.protobuf.BytesValue": "bytes"}
_PRIMITIVE = {"float": "float32", "double": "float64", "bool": "boolean", "string": "string", "bytes": "bytes"}


class ProtobufDataError(ValueError):
    """What the converter throws as a DataException / SerializationException for one record."""


# --- toConnectSchema ---------------------------------------------------------------------------

def to_connect_schema(msg: ProtoMessage, version: int | None) -> Schema:
    """ProtobufData.toConnectSchema of the writer's message (`version`: the registry's)."""
    return _message_schema(msg, optional=False, params=(), version=version)


def _message_schema(msg: ProtoMessage, optional: bool, params: tuple[tuple[str, str], ...],
                    version: int | None = None) -> Schema:
    fields = []
    for i, (oneof, members) in enumerate(msg.oneofs):
        union = Schema("struct", optional=True, name=UNION_PREFIX + oneof,
                       fields=tuple(Field(m.name, _field_schema(m)) for m in members))
        fields.append(Field(f"{oneof}_{i}", union))
    fields += [Field(f.name, _field_schema(f)) for f in msg.fields if f.oneof is None]
    return Schema("struct", optional=optional, name=msg.name, version=version, parameters=params or None,
                  fields=tuple(fields))


def _element_schema(fd: ProtoField) -> tuple[Schema, tuple[tuple[str, str], ...]]:
    """The schema of one value of the field (before repetition), and the parameters it built."""
    kind = scalar_kind(fd)
    params: list[tuple[str, str]] = []
    if kind in _INT32:
        if kind != "int32":
            params.append((TYPE, kind))
        return Schema("int32", optional=True, parameters=tuple(params) or None), tuple(params)
    if kind in _INT64:
        if kind != "int64":
            params.append((TYPE, kind))
        return Schema("int64", optional=True, parameters=tuple(params) or None), tuple(params)
    if kind in _PRIMITIVE:
        return Schema(_PRIMITIVE[kind], optional=True), ()
    if kind == "enum":
        e: ProtoEnum = fd.resolved
        params = [(ENUM, e.name)] + [(f"{ENUM}.{sym}", str(n)) for sym, n in e.values]
        return Schema("string", optional=True, name=e.name, parameters=tuple(params)), tuple(params)
    m: ProtoMessage = fd.resolved
    if m.full_name in _LOGICAL:
        return Schema("int64" if m.full_name == "google.protobuf.Timestamp" else "int32", optional=True,
                      name=_LOGICAL[m.full_name], version=1), ()
    if m.full_name in WRAPPERS:
        # wrapper.for.raw.primitives (on by default): toConnectSchema(ctx, Descriptor) unwraps a
        # wrapper message wherever it is, so a StringValue field is an optional string
        return Schema(_UNWRAPPED[m.full_name], optional=True), ()
    if m.map_entry:
        key, value = m.fields
        return Schema("map", optional=True, name=to_map_field(m.name), keys=_field_schema(key),
                      values=_field_schema(value)), ()
    return _message_schema(m, True, ()), ()


def _field_schema(fd: ProtoField) -> Schema:
    """toConnectSchema(ctx, FieldDescriptor): optional, with the field's Tag."""
    element, params = _element_schema(fd)
    tag = ((TAG, str(fd.number)),)
    if fd.repeated and element.type != "map":
        return Schema("array", optional=True, parameters=tag, items=element)
    return Schema(**{**element.__dict__, "optional": True, "parameters": params + tag})


def to_map_field(entry_name: str) -> str:
    """ProtobufSchema.toMapField: an entry message's name less `Entry`, UPPER_CAMEL to lower_underscore."""
    if not entry_name.endswith("Entry"):
        return entry_name
    base = entry_name[:-len("Entry")]
    out = ""
    for i, ch in enumerate(base):
        out += ("_" if i and ch.isupper() else "") + ch.lower()
    return out


# --- toConnectData -----------------------------------------------------------------------------

def to_connect_value(schema: Schema, msg: ProtoMessage, present: dict[int, Any]) -> Struct:
    """ProtobufData.toConnectData of a message's decoded fields."""
    values: dict[str, Any] = {}
    for i, (oneof, members) in enumerate(msg.oneofs):
        union_field = schema.field(f"{oneof}_{i}")
        assert union_field is not None
        chosen = next((m for m in members if m.number in present), None)
        if chosen is not None:
            inner = union_field.schema.field(chosen.name)
            assert inner is not None
            values[union_field.name] = Struct(union_field.schema,
                                              {chosen.name: _value(inner.schema, chosen, present[chosen.number])})
    for fd in msg.fields:
        if fd.oneof is not None:
            continue
        f = schema.field(fd.name)
        assert f is not None
        kind = scalar_kind(fd)
        if fd.number in present:
            values[fd.name] = _value(f.schema, fd, present[fd.number])
        elif fd.repeated:
            values[fd.name] = as_hashmap({}, None) if f.schema.type == "map" else []
        elif kind != "message" and not fd.proto3_optional:
            values[fd.name] = _scalar(f.schema, fd, default_of(fd))
    return Struct(schema, values)


def _value(schema: Schema, fd: ProtoField, raw: Any) -> Any:
    if fd.repeated:
        if schema.type == "map":
            entry: ProtoMessage = fd.resolved
            key_fd, value_fd = entry.fields
            out = {}
            for e in raw:
                assert schema.keys is not None and schema.values is not None
                out[_single(schema.keys, key_fd, e.get(1, default_of(key_fd)))] = _single(
                    schema.values, value_fd, e.get(2, default_of(value_fd)))
            # ProtobufData fills `new HashMap<>()`: the sink iterates it in that table's order
            return as_hashmap(out, schema.keys.type if schema.keys else None)
        assert schema.items is not None
        return [_single(schema.items, fd, v) for v in raw]
    return _single(schema, fd, raw)


def _single(schema: Schema, fd: ProtoField, raw: Any) -> Any:
    if raw is None:
        return None
    if scalar_kind(fd) != "message":
        return _scalar(schema, fd, raw)
    m: ProtoMessage = fd.resolved
    if m.full_name in _LOGICAL:
        return _logical(m.full_name, m, raw)
    if m.full_name in WRAPPERS:  # getWrappedValue: the message's `value`, its default where unset
        inner = m.fields[0]
        return _scalar(schema, inner, raw.get(1, default_of(inner)))
    return to_connect_value(schema, m, raw)


def _scalar(schema: Schema, fd: ProtoField, raw: Any) -> Any:
    kind = scalar_kind(fd)
    if kind == "enum":
        return fd.resolved.symbol(raw)
    if schema.type == "int64" and kind in ("uint32", "fixed32"):
        return raw & 0xFFFFFFFF  # Integer.toUnsignedLong
    if kind == "bytes":
        return bytes(raw)
    return raw


def _field_values(m: ProtoMessage, raw: dict[int, Any]) -> dict[str, Any]:
    return {f.name: raw.get(f.number, default_of(f)) for f in m.fields}


def _logical(full: str, m: ProtoMessage, raw: dict[int, Any]) -> int:
    v = _field_values(m, raw)
    if full == "google.protobuf.Timestamp":
        seconds, nanos = v["seconds"], v["nanos"]
        if not (-62135596800 <= seconds <= 253402300799 and 0 <= nanos <= 999_999_999):
            raise ProtobufDataError(f"Timestamp is not valid (seconds {seconds}, nanos {nanos}): "
                                    "Timestamps.toMillis refuses it")
        return seconds * 1000 + nanos // 1_000_000
    if full == "google.type.Date":
        try:
            day = datetime.date(v["year"], v["month"], v["day"])
        except ValueError as e:  # a non-lenient Calendar refuses it
            raise ProtobufDataError(f"Date {v}: {e}") from None
        if day.year < 1583:
            raise ProtobufDataError("dates before the Gregorian calendar are not modelled (Java's Calendar is Julian)")
        return (day - datetime.date(1970, 1, 1)).days
    try:
        t = datetime.time(v["hours"], v["minutes"], v["seconds"], v["nanos"] // 1000)
    except ValueError as e:
        raise ProtobufDataError(f"TimeOfDay {v}: {e}") from None
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1000 + v["nanos"] // 1_000_000


# --- the converter ------------------------------------------------------------------------------

def read_message_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """MessageIndexes.readFrom: a zigzag varint count, then each index; a count of 0 is [0]."""
    r = Reader(data, pos)
    count = zigzag_varint(r)
    if count == 0:
        return [0], r.pos
    if count < 0:
        raise ProtobufDataError(f"a negative count of message indexes ({count})")
    return [zigzag_varint(r) for _ in range(count)], r.pos


def protobuf_to_connect(data: bytes, registry: Any, topic: str, which: str,
                        strategy: str) -> tuple[Any, Schema | None]:
    """ProtobufConverter.toConnectData for non-null bytes: (value, schema)."""
    from reference_impl.avro_data import _schema_of, subject_for

    if len(data) < 5 or data[0] != MAGIC:
        raise ProtobufDataError("Unknown magic byte!")
    schema_id = int.from_bytes(data[1:5], "big", signed=True)
    found = _schema_of(registry, schema_id)
    if found is None:
        raise ProtobufDataError(f"Error retrieving Protobuf schema for id {schema_id}: Schema not found")
    text, schema_type = found
    if schema_type.upper() != "PROTOBUF":
        raise ProtobufDataError(f"schema id {schema_id} is a {schema_type} schema, not Protobuf")
    try:
        proto = parse(text)
        indexes, pos = read_message_indexes(data, 5)
        msg = proto.message_at(indexes)
    except ProtoSchemaError as e:
        raise ProtobufDataError(f"Error deserializing Protobuf message for id {schema_id}: {e}") from None
    record_name = msg.full_name
    subject = subject_for(topic, which, strategy, record_name)
    version = registry.version_of(subject, schema_id)
    if version is None:
        raise ProtobufDataError(f"Error retrieving schema version for id {schema_id}: the subject {subject} "
                                "does not hold it")
    try:
        present = decode(msg, data, pos)
    except ProtoSchemaError as e:
        raise ProtobufDataError(f"Error deserializing Protobuf message for id {schema_id}: {e}") from None
    if msg.full_name in WRAPPERS:
        # wrapper.for.raw.primitives: the message itself is a wrapper, its primitive the value
        inner = msg.fields[0]
        schema = Schema(_UNWRAPPED[msg.full_name], version=version)
        return _scalar(schema, inner, present.get(inner.number, default_of(inner))), schema
    schema = to_connect_schema(msg, version)
    return to_connect_value(schema, msg, present), schema
