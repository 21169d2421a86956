"""Schema compatibility (R14): whether a record's value schema forces a rotation, and how a
record the writer keeps is projected onto the schema its file was opened with.

Read from kafka-connect-storage-common's `StorageSchemaCompatibility` and `SchemaProjector`
(core/src/main/java/io/confluent/connect/storage/schema/) at the tags each S3 release bundles,
and from TopicPartitionWriter.checkRotationOrAppend (storage-cloud v12.1.9, lines 362-506). The
rules changed three times; `VersionProfile.schema_checks` says which a release has:

    KAFKA    before storage-common 11.2.21: Kafka's own SchemaProjector; the check compares the
             top-level type, name and parameters exactly, then the versions
    ENUMS    #416 (11.2.21): an enum's symbols may be a subset of the file's, in the check and in
             storage-common's own projector, which replaces Kafka's
    METADATA #440 (11.2.28, 12.0.0): the projector ignores documentation parameters
             (connect.record.doc, .aliases, .namespace, io.confluent.connect.avro.field.doc.*)
    NESTED   #463 (11.2.31, 12.0.6): the check recurses into fields, elements, keys and values,
             ignores documentation parameters too, and finds an optional record field whose file
             field is required without a default, and a file field the record lacks that is
             required without a default, so such records rotate where they used to fail
"""
from __future__ import annotations

import dataclasses
import struct as _struct
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Sequence

from reference_impl.connect_data import Schema, SinkRecord, Struct
from reference_impl.javamap import as_hashmap

MODES = ("NONE", "BACKWARD", "FORWARD", "FULL")
_NUMERIC = ("int8", "int16", "int32", "int64", "float32", "float64")  # Connect's promotion order
_METADATA = ("connect.record.doc", "connect.record.aliases", "connect.record.namespace")
_FIELD_DOC = "io.confluent.connect.avro.field.doc."
# SchemaProjector.isEnumSchema: AvroData.GENERALIZED_TYPE_ENUM, AVRO_TYPE_ENUM, ProtobufData.PROTOBUF_TYPE_ENUM
_ENUM_MARKERS = ("org.apache.kafka.connect.data.Enum", "io.confluent.connect.avro.Enum", "io.confluent.connect.protobuf.Enum")


class SchemaChecks(IntEnum):
    KAFKA = 0
    ENUMS = 1
    METADATA = 2
    NESTED = 3


class ProjectionError(Exception):
    """A SchemaProjectorException: the task dies, or the record goes to the DLQ when the task
    has an errant-record reporter (TopicPartitionWriter.write, v12.1.9 lines 303-309)."""


@dataclass(frozen=True)
class Incompatibility:
    """Why a record's schema rotates its file: SchemaIncompatibilityType's name."""

    kind: str  # DIFFERENT_SCHEMA, DIFFERENT_TYPE, DIFFERENT_NAME, DIFFERENT_PARAMS, INCOMPATIBLE_OPTIONALITY, …
    where: str = ""  # the nested path it was found at ("" for the top level)

    def __str__(self) -> str:
        return self.kind + (f" at {self.where}" if self.where else "")


def compatibility_mode(name: str | None) -> str:
    """StorageSchemaCompatibility.getCompatibility: the exact name, anything else NONE (R14.6)."""
    return name if name in MODES else "NONE"


def _promotable(source: str, target: str) -> bool:
    return source in _NUMERIC and target in _NUMERIC and _NUMERIC.index(source) <= _NUMERIC.index(target)


def _without_metadata(params: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in params.items() if k not in _METADATA and not k.startswith(_FIELD_DOC)}


def _is_enum(schema: Schema) -> bool:
    return any(k in schema.params for k in _ENUM_MARKERS)


def _params_differ(record: Schema, current: Schema, checks: SchemaChecks, filtered: bool) -> bool:
    mine, theirs = record.params, current.params
    if filtered:
        mine, theirs = _without_metadata(mine), _without_metadata(theirs)
    if checks >= SchemaChecks.ENUMS and _is_enum(record) and _is_enum(current):
        return not set(mine.items()) <= set(theirs.items())
    return mine != theirs


def _structural(record: Schema, current: Schema, checks: SchemaChecks, path: str) -> Incompatibility | None:
    """checkSchemaCompatibility (#463) or, before it, the top-level part of check()."""
    if record.type != current.type and not _promotable(record.type, current.type):
        return Incompatibility("DIFFERENT_TYPE", path)
    if record.name != current.name:
        return Incompatibility("DIFFERENT_NAME", path)
    if _params_differ(record, current, checks, filtered=checks >= SchemaChecks.NESTED):
        return Incompatibility("DIFFERENT_PARAMS", path)
    if checks < SchemaChecks.NESTED:
        return None
    if record.optional and not current.optional and current.default is None:
        return Incompatibility("INCOMPATIBLE_OPTIONALITY", path)
    if record.type == "struct":
        for f in record.fields:
            theirs = current.field(f.name)
            if theirs is not None:
                found = _structural(f.schema, theirs.schema, checks, _join(path, f.name))
                if found:
                    return found
        for f in current.fields:
            if record.field(f.name) is None and not f.schema.optional and f.schema.default is None:
                return Incompatibility("MISSING_REQUIRED_FIELD", _join(path, f.name))
    elif record.type == "array" and record.items is not None and current.items is not None:
        return _structural(record.items, current.items, checks, _join(path, "[]"))
    elif record.type == "map" and record.keys is not None and current.keys is not None:
        return (_structural(record.keys, current.keys, checks, _join(path, "{key}"))
                or _structural(record.values, current.values, checks, _join(path, "{value}")))  # type: ignore[arg-type]
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def incompatibility(mode: str, record: Schema | None, current: Schema | None,
                    checks: SchemaChecks = SchemaChecks.NESTED) -> Incompatibility | None:
    """StorageSchemaCompatibility.shouldChangeSchema(record, null, current): None when the
    record can be projected onto the file's schema. Raises ProjectionError where the connector
    throws SchemaProjectorException (R14.5): a switch between schema'd and schemaless values, a
    missing version under BACKWARD, FORWARD or FULL."""
    mode = compatibility_mode(mode)
    if record == current:
        # the connector compares identity here, and its converters hand out one Schema object per
        # distinct schema they read (JsonConverter's and AvroData's schema caches): equal is same
        return None
    if record is None or current is None:
        raise ProjectionError("Switch between schema-based and schema-less data is not supported")
    if mode == "NONE":
        return Incompatibility("DIFFERENT_SCHEMA")
    if record.version is None or current.version is None:
        raise ProjectionError(f"Schema version required for {mode} compatibility")
    found = _structural(record, current, checks, "")
    if found:
        return found
    older = record.version < current.version
    newer = record.version > current.version
    # FORWARD overrides checkVersions alone: a record older than the file rotates, a newer one
    # is projected back onto the file's schema (its new fields dropped)
    if (mode == "FORWARD" and older) or (mode != "FORWARD" and newer):
        return Incompatibility("DIFFERENT_VERSION")
    return None


# --- projection -----------------------------------------------------------------------------------

def project(source: Schema, value: Any, target: Schema, checks: SchemaChecks = SchemaChecks.NESTED) -> Any:
    """SchemaProjector.project (storage-common's from #416, Kafka's before): `value` of schema
    `source` as a value of `target`. Equal schemas give the value itself
    (StorageSchemaCompatibility.projectInternal)."""
    if source == target:
        return value
    return _project(source, value, target, checks)


def _project(source: Schema, value: Any, target: Schema, checks: SchemaChecks) -> Any:
    _check_maybe_compatible(source, target, checks)
    if source.optional and not target.optional:
        if target.default is None:
            raise ProjectionError("Writer schema is optional, however, target schema does not provide a default value.")
        return target.default if value is None else _project_required(source, value, target, checks)
    return None if value is None else _project_required(source, value, target, checks)


def _check_maybe_compatible(source: Schema, target: Schema, checks: SchemaChecks) -> None:
    if source.type != target.type and not _promotable(source.type, target.type):
        raise ProjectionError(f"Schema type mismatch. source type: {_java_type(source)} and target type: "
                              f"{_java_type(target)}")
    if source.name != target.name:
        raise ProjectionError(f"Schema name mismatch. source name: {source.name} and target name: {target.name}")
    # storage-common's projector (#416 on) compares parameters only where both schemas have
    # some; Kafka's compares them always, a schema without any against one with some too
    both = source.parameters is not None and target.parameters is not None
    if (both or checks == SchemaChecks.KAFKA) and _params_differ(source, target, checks,
                                                                   filtered=checks >= SchemaChecks.METADATA):
        raise ProjectionError(f"Schema parameters not equal. source parameters: {source.params} and target "
                              f"parameters: {target.params}")


def _project_required(source: Schema, value: Any, target: Schema, checks: SchemaChecks) -> Any:
    t = target.type
    if t == "struct":
        return _project_struct(source, value, target, checks)
    if t == "array":
        return [_project(source.items, v, target.items, checks) for v in value]  # type: ignore[arg-type]
    if t == "map":
        # projectMap puts the entries, as the source map iterates them, into a `new HashMap<>()`:
        # they come out in the order of its 16 buckets, not the source's (AvroData's map has a
        # table sized to its entries)
        projected = {_project(source.keys, k, target.keys, checks): _project(source.values, v, target.values, checks)  # type: ignore[arg-type]
                     for k, v in value.items()}
        return as_hashmap(projected, target.keys.type)  # type: ignore[union-attr]
    if source.type != t and _promotable(source.type, t) and isinstance(value, (int, float)) \
            and not isinstance(value, bool):
        return _promote(value, source.type, t)
    return value


def _project_struct(source: Schema, value: Struct, target: Schema, checks: SchemaChecks) -> Struct:
    out: dict[str, Any] = {}
    for f in target.fields:
        theirs = source.field(f.name)
        if theirs is not None:
            try:
                out[f.name] = _project(theirs.schema, value.get(f.name), f.schema, checks)
            except ProjectionError as e:
                raise ProjectionError(f"Error projecting {f.name}: {e}") from e
        elif f.schema.optional:
            # left unset; Struct.get then answers the field's default, which is what every
            # format writer reads
            out[f.name] = f.schema.default
        elif f.schema.default is not None:
            out[f.name] = f.schema.default
        else:
            raise ProjectionError(f"Required field `{f.name}` is missing from source schema")
    return Struct(target, out)


def _promote(value: int | float, source: str, target: str) -> int | float:
    """Number.byteValue() … doubleValue() of the Java object the source type holds: a widening,
    so only float32's rounding shows. A float32 value is a Float: widened to float64 it is that
    float's exact double (0.001f -> 0.0010000000474974513), not the decimal it was written as;
    an integer becomes a Float in one rounding (Long.floatValue), not through a double."""
    if target in ("int8", "int16", "int32", "int64"):
        return int(value)
    if isinstance(value, int):
        return _long_to_float(value) if target == "float32" else float(value)
    x = _to_float32(value) if source == "float32" else float(value)
    return _to_float32(x) if target == "float32" else x


def _to_float32(x: float) -> float:
    return _struct.unpack("<f", _struct.pack("<f", float(x)))[0]


def _long_to_float(n: int) -> float:
    """(float) n, rounded to nearest-even at 24 significant bits directly from the integer."""
    a = abs(n)
    if a.bit_length() <= 24:
        return float(n)
    shift = a.bit_length() - 24
    q, r = divmod(a, 1 << shift)
    if r > 1 << (shift - 1) or (r == 1 << (shift - 1) and q & 1):
        q += 1
    return float(q << shift) if n >= 0 else -float(q << shift)


def _java_type(schema: Schema) -> str:
    return schema.type.upper()


def project_record(record: SinkRecord, target: Schema, checks: SchemaChecks = SchemaChecks.NESTED) -> SinkRecord:
    """StorageSchemaCompatibility.project(record, null, target): the value projected, the key
    as it is (only value schemas take part, R14.1)."""
    return dataclasses.replace(record, value=project(record.value_schema, record.value, target, checks),  # type: ignore[arg-type]
                               value_schema=target)


def as_written(mode: str, records: Sequence[SinkRecord], checks: SchemaChecks = SchemaChecks.NESTED) -> list[SinkRecord]:
    """One file's records as its writer received them (R14.7): under BACKWARD, FORWARD and FULL
    each projected onto the value schema of the file's first record, which the writer remembers
    for the file's encoded partition until the rotation that commits it; under NONE as they are
    (a file never holds two value schemas)."""
    records = list(records)
    if compatibility_mode(mode) == "NONE" or not records:
        return records
    first = records[0].value_schema
    if first is None:
        return records
    return [r if r.value_schema is None or r.value_schema == first else project_record(r, first, checks)
            for r in records]
