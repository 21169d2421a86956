"""schema.compatibility in the Python sink (R14): the rotation check and the projection of
adapters/pysink/projection.py on JsonConverter-shaped schemas, with the worked cases of
kafka-connect-storage-common 12.0.12's StorageSchemaCompatibilityTest and SchemaProjectorTest
(each named by its Java test method); then the sink end to end (InProcessSink over S3 in memory):
BACKWARD, FORWARD, FULL, NONE, an unknown spelling, a missing version, and the faulty variants
of issue 33 each differing from the correct sink where it should."""
from __future__ import annotations

import base64
import io
import json

import pytest

from adapters.pysink.log import InProcessLog
from adapters.pysink.projection import Compatibility, ProjectionError, identical, mode_of, promote
from adapters.pysink.sink import InProcessSink, ManualClock, SinkSettings, SinkTask, TaskFailed
from adapters.pysink.targets.variants import REGISTRY
from adapters.s3.memory import MemoryS3, MemoryS3Client

AVRO_ENUM = "io.confluent.connect.avro.Enum"  # AvroData.AVRO_TYPE_ENUM
PROTOBUF_ENUM = "io.confluent.connect.protobuf.Enum"  # ProtobufData.PROTOBUF_TYPE_ENUM
NONE, BACKWARD, FORWARD, FULL = (Compatibility(m) for m in ("NONE", "BACKWARD", "FORWARD", "FULL"))
OTHERS = (BACKWARD, FORWARD, FULL)


# --- the Java tests' schemas, in JsonConverter's shape --------------------------------------------

def int_schema(name, version, **kw):
    return {"type": "int32", "name": name, "version": version, **kw}


def string_schema(name, version, **kw):
    return {"type": "string", "name": name, "version": version, **kw}


def enum_schema(key, name, version, *symbols):
    """buildAvroEnumSchema / buildProtobufEnumSchema: a string whose symbols are parameters."""
    return string_schema(name, version, parameters={key: name, **{f"{key}.{s}": s for s in symbols}})


def struct_schema(name, version, *extra, **kw):
    """buildStructSchema: b, i, d, an optional s, and a nested struct x."""
    fields = [{"field": "b", "type": "boolean"}, {"field": "i", "type": "int32"}, {"field": "d", "type": "double"},
              {"field": "s", "type": "string", "optional": True},
              {"field": "x", "type": "struct", "fields": [{"field": "inner1", "type": "boolean"}]}, *extra]
    return {"type": "struct", "name": name, "version": version, "fields": fields, **kw}


def field(name, schema):
    return {**schema, "field": name}


A = int_schema("a", 2)
A_COPY = int_schema("a", 2)
A_RENAMED = int_schema("b", 2)
A_OPTIONAL = int_schema("a", 2, optional=True)
A_OLDER = int_schema("a", 1)
A_NEWER = int_schema("a", 3)
A_PARAMETERED = int_schema("a", 2, parameters={"x": "y"})
A_RETYPED = string_schema("a", 1)
A_WITH_DOC = int_schema("a", 2, doc="doc")
B = struct_schema("b", 2)
B_COPY = struct_schema("b", 2)
B_RENAMED = struct_schema("c", 2)
B_OPTIONAL = struct_schema("b", 2, optional=True)
B_OLDER = struct_schema("b", 1)
B_NEWER = struct_schema("b", 3)
B_PARAMETERED = struct_schema("b", 2, parameters={"x": "y"})
B_RETYPED = string_schema("b", 2)
B_WITH_DOC = struct_schema("b", 2, doc="doc")
B_EXTRA_REQUIRED = struct_schema("b", 2, {"field": "extra", "type": "string"})
B_EXTRA_OPTIONAL = struct_schema("b", 2, {"field": "extra", "type": "string", "optional": True})
B_EXTRA_REQUIRED_WITH_DEFAULT = struct_schema("b", 2, {"field": "extra", "type": "string", "default": "fallback"})
ENUM_A = enum_schema(AVRO_ENUM, "e1", 1, "RED", "GREEN", "BLUE")
ENUM_B = enum_schema(AVRO_ENUM, "e1", 1, "RED", "GREEN")
ENUM_C = enum_schema(PROTOBUF_ENUM, "e1", 1, "RED", "GREEN", "BLUE")
ENUM_D = enum_schema(PROTOBUF_ENUM, "e1", 1, "RED", "GREEN")


def in_struct(name, version, *fields):
    return {"type": "struct", "name": name, "version": version, "fields": list(fields)}


COLOR_RGB = field("color", enum_schema(AVRO_ENUM, "color", 1, "RED", "GREEN", "BLUE"))
COLOR_RG = field("color", enum_schema(AVRO_ENUM, "color", 1, "RED", "GREEN"))
LABEL = {"field": "label", "type": "string"}
STRUCT_ENUM_BLUE = in_struct("sr", 1, LABEL, COLOR_RGB)
STRUCT_ENUM_NO_BLUE = in_struct("sr", 1, LABEL, COLOR_RG)
PB_RGB = field("color", enum_schema(PROTOBUF_ENUM, "color", 1, "RED", "GREEN", "BLUE"))
PB_RG = field("color", enum_schema(PROTOBUF_ENUM, "color", 1, "RED", "GREEN"))
STRUCT_PB_BLUE, STRUCT_PB_NO_BLUE = in_struct("sr", 1, PB_RGB), in_struct("sr", 1, PB_RG)
DEEP_BLUE = in_struct("outer", 1, {"field": "inner", "type": "struct", "name": "inner", "fields": [COLOR_RGB]})
DEEP_NO_BLUE = in_struct("outer", 1, {"field": "inner", "type": "struct", "name": "inner", "fields": [COLOR_RG]})
STRUCT_INT = in_struct("s1", 1, {"field": "count", "type": "int32"})
STRUCT_STRING = in_struct("s1", 1, {"field": "count", "type": "string"})
STRUCT_DOC_PARAM = in_struct("s1", 1, {"field": "name", "type": "string",
                                       "parameters": {"io.confluent.connect.avro.field.doc.name": "The entity name"}})
STRUCT_NO_DOC_PARAM = in_struct("s1", 1, {"field": "name", "type": "string"})
ARRAY_BLUE = {"type": "array", "name": "arr", "version": 1,
              "items": {"type": "struct", "name": "elem", "fields": [COLOR_RGB]}}
ARRAY_NO_BLUE = {"type": "array", "name": "arr", "version": 1,
                 "items": {"type": "struct", "name": "elem", "fields": [COLOR_RG]}}
MAP_BLUE = {"type": "map", "name": "m", "version": 1, "keys": {"type": "string"},
            "values": {"type": "struct", "name": "val", "fields": [COLOR_RGB]}}
MAP_NO_BLUE = {"type": "map", "name": "m", "version": 1, "keys": {"type": "string"},
               "values": {"type": "struct", "name": "val", "fields": [COLOR_RG]}}


def value_for(schema):
    """valueFor: a value of every type, in the converter's shape."""
    t = schema["type"]
    if t == "struct":
        return {f["field"]: value_for(f) for f in schema["fields"]}
    return {"int8": 100, "int16": 100, "int32": 100, "int64": 100, "float": 101.1, "double": 101.2, "array": [],
            "map": {}, "boolean": True, "bytes": base64.b64encode(b"hello").decode(), "string": "hello"}[t]


def assert_unchanged(compat, record, file):
    """assertUnchanged: compatible, and the record projects onto the file's schema."""
    assert compat.incompatibility(record, file) is None
    compat.project(value_for(record), record, file)


def assert_changed(compat, record, file, kind):
    assert compat.incompatibility(record, file) == kind


# --- StorageSchemaCompatibilityTest ---------------------------------------------------------------

def test_none_compares_with_schema_equals():
    # noneCompatibilityShouldConsiderSameVersionsAsUnchanged, ...DifferentVersionsAsChanged,
    # ...AnyDifferencesAsChanged, noneCompatibilityShouldUseSchemaEqualsForNestedSchemas
    for same in ((A, A), (A, A_COPY), (B, B), (B, B_COPY), (STRUCT_ENUM_BLUE, STRUCT_ENUM_BLUE)):
        assert_unchanged(NONE, *same)
    for other in (A_NEWER, A_OLDER, A_RENAMED, A_RETYPED, A_PARAMETERED, A_WITH_DOC, A_OPTIONAL):
        assert_changed(NONE, A, other, "DIFFERENT_SCHEMA")
    for other in (B_OLDER, B_PARAMETERED, B_RENAMED, B_RETYPED, B_WITH_DOC, B_OPTIONAL, B_EXTRA_REQUIRED,
                  B_EXTRA_OPTIONAL):
        assert_changed(NONE, B, other, "DIFFERENT_SCHEMA")
    for record, file in ((STRUCT_ENUM_BLUE, STRUCT_ENUM_NO_BLUE), (STRUCT_INT, STRUCT_STRING),
                         (STRUCT_DOC_PARAM, STRUCT_NO_DOC_PARAM), (DEEP_BLUE, DEEP_NO_BLUE)):
        assert_changed(NONE, record, file, "DIFFERENT_SCHEMA")


def test_versions_backward_and_full_take_no_newer_record_forward_no_older():
    # backwardCompatibilityShouldConsiderOlderSchemaVersionsAsChanged (the *current* schema is
    # older: the record is newer), ...SameOrNewerSchemaVersionsAsUnchanged, and FORWARD's and FULL's
    for compat in (BACKWARD, FULL):
        assert_changed(compat, A, A_OLDER, "DIFFERENT_VERSION")
        assert_changed(compat, B, B_OLDER, "DIFFERENT_VERSION")
        for record, file in ((A, A_COPY), (B, B_COPY), (A, A_NEWER), (B, B_NEWER)):
            assert_unchanged(compat, record, file)
    assert_changed(FORWARD, A, A_NEWER, "DIFFERENT_VERSION")
    assert_changed(FORWARD, B, B_NEWER, "DIFFERENT_VERSION")
    for record, file in ((A, A_COPY), (B, B_COPY), (A, A_OLDER), (B, B_OLDER)):
        assert_unchanged(FORWARD, record, file)


@pytest.mark.parametrize("compat", OTHERS, ids=lambda c: c.mode)
def test_names_types_and_parameters_rotate_docs_and_optionality_do_not(compat):
    # allCompatibilitiesShouldConsiderDifferentSchemaNames/Types/ParametersAsChanged,
    # *CompatibilityShouldConsiderDifferentSchemaDocsAsUnchanged, ...OptionalityAsUnchanged
    assert_changed(compat, A, A_RENAMED, "DIFFERENT_NAME")
    assert_changed(compat, B, B_RENAMED, "DIFFERENT_NAME")
    assert_changed(compat, A, A_RETYPED, "DIFFERENT_TYPE")
    assert_changed(compat, B, B_RETYPED, "DIFFERENT_TYPE")
    assert_changed(compat, A, A_PARAMETERED, "DIFFERENT_PARAMS")
    assert_changed(compat, B, B_PARAMETERED, "DIFFERENT_PARAMS")
    for record, file in ((A, A_WITH_DOC), (B, B_WITH_DOC), (A, A_OPTIONAL), (B, B_OPTIONAL)):
        assert_unchanged(compat, record, file)


@pytest.mark.parametrize("compat", OTHERS, ids=lambda c: c.mode)
def test_optionality_and_fields(compat):
    # optionalToRequiredWithoutDefaultShouldTriggerRotation, ...WithDefaultShouldNotTriggerRotation
    assert_changed(compat, A_OPTIONAL, A, "INCOMPATIBLE_OPTIONALITY")
    assert_changed(compat, B_OPTIONAL, B, "INCOMPATIBLE_OPTIONALITY")
    assert_unchanged(compat, int_schema("a", 2, optional=True), int_schema("a", 2, default=0))
    # extraRequiredFieldWithDefaultShouldNotTriggerRotation, *ShouldConsiderDifferentFieldsAsUnchanged,
    # allCompatibilitiesShouldConsiderExtraRequiredFieldsAsChanged
    for record, file in ((B, B_EXTRA_REQUIRED_WITH_DEFAULT), (B, B_EXTRA_OPTIONAL), (B_EXTRA_OPTIONAL, B),
                         (B_EXTRA_REQUIRED, B)):
        assert_unchanged(compat, record, file)
    assert_changed(compat, B, B_EXTRA_REQUIRED, "MISSING_REQUIRED_FIELD")


@pytest.mark.parametrize("compat", OTHERS, ids=lambda c: c.mode)
def test_enum_symbols_added_rotate_removed_project(compat):
    # testShouldChangeSchemaWithEnumAddition/DeletionAnd{Backward,Forward}Compatibility
    assert_changed(compat, ENUM_A, ENUM_B, "DIFFERENT_PARAMS")
    assert_changed(compat, ENUM_C, ENUM_D, "DIFFERENT_PARAMS")
    assert_unchanged(compat, ENUM_B, ENUM_A)
    assert_unchanged(compat, ENUM_D, ENUM_C)
    # nestedAvroEnumAdditionInStructShouldTriggerRotation, nestedProtobufEnumAddition...,
    # nestedEnumDeletionInStructShouldNotTriggerRotation, deeplyNestedAvroEnumAddition...,
    # arrayWithNestedEnumAddition..., mapWithNestedEnumAddition...
    for record, file in ((STRUCT_ENUM_BLUE, STRUCT_ENUM_NO_BLUE), (STRUCT_PB_BLUE, STRUCT_PB_NO_BLUE),
                         (DEEP_BLUE, DEEP_NO_BLUE), (ARRAY_BLUE, ARRAY_NO_BLUE), (MAP_BLUE, MAP_NO_BLUE)):
        assert_changed(compat, record, file, "DIFFERENT_PARAMS")
        assert_unchanged(compat, file, record)


@pytest.mark.parametrize("compat", OTHERS, ids=lambda c: c.mode)
def test_nested_type_changes_rotate_nested_doc_parameters_do_not(compat):
    # nestedFieldTypeChangeShouldTriggerRotation, nestedFieldDocParamShouldNotTriggerRotation
    assert_changed(compat, STRUCT_STRING, STRUCT_INT, "DIFFERENT_TYPE")
    assert_changed(compat, STRUCT_INT, STRUCT_STRING, "DIFFERENT_TYPE")
    assert_unchanged(compat, STRUCT_DOC_PARAM, STRUCT_NO_DOC_PARAM)
    assert_unchanged(compat, STRUCT_NO_DOC_PARAM, STRUCT_DOC_PARAM)


def test_numbers_promote_upwards_only():
    # PROMOTABLES: INT8 < INT16 < INT32 < INT64 < FLOAT32 < FLOAT64, record to file
    assert BACKWARD.incompatibility(in_struct("s", 1, {"field": "n", "type": "int8"}),
                                    in_struct("s", 1, {"field": "n", "type": "double"})) is None
    assert BACKWARD.incompatibility(in_struct("s", 1, {"field": "n", "type": "int64"}),
                                    in_struct("s", 1, {"field": "n", "type": "int32"})) == "DIFFERENT_TYPE"
    assert BACKWARD.incompatibility(in_struct("s", 1, {"field": "n", "type": "float"}),
                                    in_struct("s", 1, {"field": "n", "type": "int64"})) == "DIFFERENT_TYPE"


def test_validate_and_check_before_any_comparison():
    """validateAndCheck: both null, or the very schema, is compatible in every mode; a schema'd/
    schemaless switch throws; outside NONE a schema without a version throws, unless identical
    (the converter's cached Schema: the same JSON schema, whatever its key order)."""
    plain = {"type": "struct", "fields": [{"field": "n", "type": "int64"}]}
    reordered = {"fields": [{"type": "int64", "field": "n"}], "type": "struct"}
    spelled = {"type": "struct", "optional": False, "fields": [{"field": "n", "type": "int64", "optional": False}]}
    for compat in (NONE, *OTHERS):
        assert compat.incompatibility(None, None) is None
        assert compat.incompatibility(plain, reordered) is None
        with pytest.raises(ProjectionError, match="Switch between schema-based and schema-less"):
            compat.incompatibility(plain, None)
    assert NONE.incompatibility(plain, spelled) is None  # Schema.equals
    for compat in OTHERS:
        with pytest.raises(ProjectionError, match=f"Schema version required for {compat.mode} compatibility"):
            compat.incompatibility(plain, spelled)  # equal, not identical
        with pytest.raises(ProjectionError, match="Schema version required"):
            compat.incompatibility({**plain, "version": 1}, {**plain, "name": "x"})
    assert identical({"type": "int32", "default": 1}, {"type": "int32", "default": 1})
    assert not identical({"type": "int32", "default": 1}, {"type": "int32", "default": 1.0})


def test_mode_is_looked_up_by_its_exact_name():
    # getCompatibility: REVERSE.get(name), else NONE; ConfigDef trims the value first
    assert [mode_of(n) for n in ("BACKWARD", " FORWARD ", "FULL", "NONE")] == ["BACKWARD", "FORWARD", "FULL", "NONE"]
    assert [mode_of(n) for n in ("backward", "Full", "FULL_TRANSITIVE", "")] == ["NONE"] * 4


# --- SchemaProjectorTest and SchemaProjector.project ----------------------------------------------

def test_names_and_enum_symbols_in_projection():
    # testCheckMaybeCompatibleWithStringSchema
    with pytest.raises(ProjectionError, match="Schema name mismatch"):
        BACKWARD.project_value(string_schema("schema1", 1), "test", string_schema("schema2", 1))
    # testCheckMaybeCompatibleWithAvroEnumSchema / ...ProtobufEnumSchema: a symbol added fails, one removed projects
    for key in (AVRO_ENUM, PROTOBUF_ENUM):
        rgb, rgby = enum_schema(key, "e1", 1, "RED", "GREEN", "BLUE"), enum_schema(key, "e1", 1, "RED", "GREEN", "BLUE", "YELLOW")
        with pytest.raises(ProjectionError, match="is not a subset of target parameters"):
            BACKWARD.project_value(rgby, "RED", rgb)
        assert BACKWARD.project_value(enum_schema(key, "e1", 2, "RED", "GREEN"), "RED", rgb) == "RED"


@pytest.mark.parametrize("source,target", [
    ({"connect.record.doc": "source doc"}, {"connect.record.doc": "target doc"}),  # testConnectRecordDocParameterIgnored
    ({"connect.record.aliases": "alias1,alias2"}, {"connect.record.aliases": "alias3,alias4"}),  # ...AliasesParameterIgnored
    ({"connect.record.namespace": "com.example.source"}, {"connect.record.namespace": "com.example.target"}),
    ({"connect.record.doc": "s", "connect.record.aliases": "a1", "connect.record.namespace": "com.s"},
     {"connect.record.doc": "t", "connect.record.aliases": "a2", "connect.record.namespace": "com.t"}),
    ({"io.confluent.connect.avro.field.doc.innerField1": "blah"},  # testConfluentAvroFieldDocParametersIgnored
     {"io.confluent.connect.avro.field.doc.innerField1": "blah", "io.confluent.connect.avro.field.doc.innerField2": "blah"}),
    ({}, {}),  # testEmptyParametersHandled
    ({"connect.record.doc": "some doc"}, None),  # testMetadataParameterPresentInSourceButNotTarget
    (None, {"connect.record.doc": "some doc"}),  # testMetadataParameterPresentInTargetButNotSource
])
def test_metadata_parameters_never_fail_a_projection(source, target):
    def schema(params):
        return {"type": "int32", "name": "test", **({"parameters": params} if params is not None else {})}

    assert BACKWARD.project_value(schema(source), 42, schema(target)) == 42
    assert BACKWARD.params_differ(schema(source), schema(target)) is False


def test_functional_parameters_still_fail():
    # testFunctionalParametersStillChecked, testNonMetadataParametersStillCauseFailures
    dec = "org.apache.kafka.connect.data.Decimal"
    with pytest.raises(ProjectionError, match="Schema parameters not equal"):
        BACKWARD.project_value({"type": "bytes", "name": dec, "parameters": {"connect.decimal.scale": "2"}}, "AQI=",
                               {"type": "bytes", "name": dec, "parameters": {"connect.decimal.scale": "3"}})
    with pytest.raises(ProjectionError, match="Schema parameters not equal"):
        BACKWARD.project_value({"type": "int32", "name": "test", "parameters": {"connect.record.doc": "s", "important.param": "value1"}},
                               42, {"type": "int32", "name": "test", "parameters": {"connect.record.doc": "t", "important.param": "value2"}})


def test_metadata_parameters_nested_in_structs_and_arrays():
    # testMetadataParametersInNestedSchemas, testMetadataParametersInArraySchemas
    inner = {"type": "struct", "name": "Inner", "fields": [{"field": "field", "type": "int32"}]}
    source = {"type": "struct", "fields": [{**inner, "field": "nested", "parameters": {"connect.record.doc": "source inner doc"}}]}
    target = {"type": "struct", "fields": [{**inner, "field": "nested", "parameters": {"connect.record.doc": "target inner doc"}}]}
    assert BACKWARD.project_value(source, {"nested": {"field": 42}}, target) == {"nested": {"field": 42}}
    items = {"type": "array", "items": {"type": "int32", "parameters": {"connect.record.doc": "source doc"}}}
    assert BACKWARD.project_value(items, [1, 2, 3], {**items, "items": {"type": "int32", "parameters": {"connect.record.doc": "t"}}}) == [1, 2, 3]


def test_struct_projection_fills_the_file_schema():
    """projectStruct: the target's fields in its order; a source field missing from the target
    is dropped; a target field the source lacks: optional, left unset; required with a default,
    the default; required without, the projection fails. A source field's null takes the
    source's default (Struct.get)."""
    source = {"type": "struct", "fields": [{"field": "b", "type": "int32"}, {"field": "gone", "type": "string"},
                                           {"field": "a", "type": "string", "optional": True, "default": "src"}]}
    target = {"type": "struct", "fields": [{"field": "a", "type": "string", "optional": True},
                                           {"field": "b", "type": "int64"},
                                           {"field": "opt", "type": "string", "optional": True, "default": "o"},
                                           {"field": "req", "type": "string", "default": "r"}]}
    out = BACKWARD.project_value(source, {"b": 7, "gone": "x", "a": None}, target)
    assert out == {"a": "src", "b": 7, "req": "r"} and list(out) == ["a", "b", "req"]
    with pytest.raises(ProjectionError, match="Required field `must` is missing from source schema"):
        BACKWARD.project_value(source, {"b": 7, "gone": "x"},
                               {"type": "struct", "fields": [{"field": "must", "type": "string"}]})
    with pytest.raises(ProjectionError, match="Error projecting b: Schema type mismatch"):
        BACKWARD.project_value(source, {"b": 7, "gone": "x"},
                               {"type": "struct", "fields": [{"field": "b", "type": "string"}]})


def test_optional_onto_required():
    # SchemaProjector.project: an optional source onto a required target needs the target's default
    assert BACKWARD.project_value({"type": "int32", "optional": True}, None, {"type": "int32", "default": 5}) == 5
    assert BACKWARD.project_value({"type": "int32", "optional": True}, 3, {"type": "int32", "default": 5}) == 3
    with pytest.raises(ProjectionError, match="target schema does not provide a default value"):
        BACKWARD.project_value({"type": "int32", "optional": True}, 3, {"type": "int32"})
    assert BACKWARD.project_value({"type": "int32"}, None, {"type": "int32", "optional": True}) is None


def test_numbers_are_promoted_as_java_converts_them():
    # projectPrimitive: byteValue() .. doubleValue() of the source's Java value
    assert promote(300, "int8", "int32") == 44  # the converter's (byte) 300
    assert promote(16_777_217, "int32", "float") == 16_777_216.0
    assert promote(2**60 + 2**36 + 1, "int64", "float") == float(2**60 + 2**37)  # one rounding, not two
    assert promote(2**53 + 1, "int64", "double") == float(2**53)
    from decimal import Decimal

    assert promote(Decimal("0.1"), "float", "double") == 0.10000000149011612
    assert promote(Decimal("0.1"), "double", "double") == 0.1
    array = {"type": "array", "items": {"type": "int32"}}
    assert BACKWARD.project_value(array, [1, None, 2], {"type": "array", "items": {"type": "int64", "optional": True}}) == [1, None, 2]
    date = {"type": "int32", "name": "org.apache.kafka.connect.data.Date"}
    assert BACKWARD.project_value(date, 19000, date) == 19000  # a java.util.Date, not a Number: as it is


def test_maps_project_key_and_value_in_the_source_maps_order():
    source = {"type": "map", "keys": {"type": "int32"}, "values": {"type": "int32"}}
    target = {"type": "map", "keys": {"type": "int64"}, "values": {"type": "double"}}
    assert BACKWARD.project_value(source, [[2, 1], [1, 2]], target) == [[1, 2.0], [2, 1.0]]  # a HashMap's order
    strings = {"type": "map", "keys": {"type": "string"}, "values": {"type": "int32"}}
    assert BACKWARD.project_value(strings, {"b": 1, "a": 2}, {**strings, "values": {"type": "int64"}}) == {"a": 2, "b": 1}


def test_project_leaves_equal_schemas_and_none_alone():
    """StorageSchemaCompatibility.project: NONE never projects; the others not where Schema.equals."""
    v1 = in_struct("r", 1, {"field": "id", "type": "int32"})
    v2 = in_struct("r", 2, {"field": "id", "type": "int64"}, {"field": "tag", "type": "string", "optional": True})
    assert NONE.project({"id": 1}, v1, v2) == (v1, {"id": 1})
    spelled = {**v1, "optional": False}
    assert BACKWARD.project({"id": 1}, spelled, v1) == (spelled, {"id": 1})
    assert BACKWARD.project({"id": 1}, v1, v2) == (v2, {"id": 1})


# --- the sink end to end --------------------------------------------------------------------------

T0 = 1714557600000  # 2024-05-01T10:00:00Z, on a 10-minute boundary
KEY = "topics/t/partition=0/t+0+{:010d}.json"
CONFIG = {"s3.bucket.name": "b", "flush.size": "100", "rotate.schedule.interval.ms": "600000", "timezone": "UTC",
          "key.converter": "org.apache.kafka.connect.storage.StringConverter",
          "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}
V1 = in_struct("rec", 1, {"field": "id", "type": "int32"})
V2 = in_struct("rec", 2, {"field": "id", "type": "int32"},
               {"field": "tag", "type": "string", "optional": True, "default": "none"})


def env(schema, payload) -> dict:
    return {"schema": schema, "payload": payload}


def run(values: list, mode: str | None, variant: str | None = None, **extra: str) -> tuple[MemoryS3, InProcessSink]:
    """Records 0.. of t-0 with `values` (JsonConverter envelopes) put at T0; then, at T0 + 1 h,
    a put with no records, on which the scheduled rotation commits whatever is open."""
    clock = ManualClock(T0)
    store = MemoryS3(clock)
    s3 = MemoryS3Client(store)
    s3.create_bucket(Bucket="b")
    log = InProcessLog()
    log.create({"t": 1})
    for v in values:
        log.append("t", 0, T0, b"k", json.dumps(v).encode())
    config = {**CONFIG, **({"schema.compatibility": mode} if mode is not None else {}), **extra}
    sink = InProcessSink(log, s3, SinkSettings.from_config(config), clock=clock,
                         task_class=REGISTRY[variant] if variant else SinkTask)
    sink.poll_once()
    clock.advance(3_600_000)
    sink.poll_once()
    return store, sink


def files(store: MemoryS3) -> dict[int, list[dict]]:
    """start offset -> the records of the JSON object that starts there."""
    return {int(k.rsplit("+", 1)[1].split(".")[0]): [json.loads(line) for line in o.body.splitlines()]
            for k, o in sorted(store.buckets["b"].items())}


V1_V1_V2_V1 = [env(V1, {"id": 0}), env(V1, {"id": 1}), env(V2, {"id": 2, "tag": "x"}), env(V1, {"id": 3})]


@pytest.mark.parametrize("mode", ["BACKWARD", "FULL"])
def test_backward_and_full_rotate_on_a_newer_schema_and_project_older_records_onto_it(mode):
    store, sink = run(V1_V1_V2_V1, mode)
    assert files(store) == {0: [{"id": 0}, {"id": 1}], 2: [{"id": 2, "tag": "x"}, {"id": 3, "tag": "none"}]}
    assert sink.log.committed(sink.group)[("t", 0)] == 4


def test_forward_projects_newer_records_onto_the_file_and_rotates_on_an_older_one():
    store, _ = run(V1_V1_V2_V1, "FORWARD")
    assert files(store) == {0: [{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3}]}  # v2's tag dropped
    store, _ = run([env(V2, {"id": 0}), env(V1, {"id": 1}), env(V2, {"id": 2})], "FORWARD")
    assert files(store) == {0: [{"id": 0, "tag": "none"}], 1: [{"id": 1}, {"id": 2}]}
    store, _ = run([env(V2, {"id": 0}), env(V1, {"id": 1}), env(V2, {"id": 2})], "BACKWARD")
    assert files(store) == {0: [{"id": 0, "tag": "none"}, {"id": 1, "tag": "none"}, {"id": 2, "tag": "none"}]}


@pytest.mark.parametrize("mode", ["NONE", None, "backward", "Full"])
def test_none_and_any_other_spelling_rotate_on_every_change(mode):
    store, _ = run(V1_V1_V2_V1, mode)
    assert files(store) == {0: [{"id": 0}, {"id": 1}], 2: [{"id": 2, "tag": "x"}], 3: [{"id": 3}]}


def test_a_structural_change_rotates_outside_none_whatever_the_versions():
    v1_count_string = in_struct("rec", 1, {"field": "id", "type": "string"})
    store, _ = run([env(V1, {"id": 0}), env(v1_count_string, {"id": "one"}), env(V1, {"id": 2})], "BACKWARD")
    assert files(store) == {0: [{"id": 0}], 1: [{"id": "one"}], 2: [{"id": 2}]}


def test_a_missing_version_stops_the_task_unless_the_schema_is_the_files_own():
    unversioned = {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}
    store, _ = run([env(unversioned, {"id": 0}), env(unversioned, {"id": 1})], "BACKWARD")
    assert files(store) == {0: [{"id": 0}, {"id": 1}]}
    with pytest.raises(TaskFailed, match="offset 1: SchemaProjectorException: Schema version required for "
                                         "BACKWARD compatibility"):
        run([env(unversioned, {"id": 0}), env({**unversioned, "name": "other"}, {"id": 1})], "BACKWARD")
    with pytest.raises(TaskFailed, match="Schema version required for FORWARD"):  # equal, not identical
        run([env(unversioned, {"id": 0}), env({**unversioned, "optional": False}, {"id": 1})], "FORWARD")
    store, _ = run([env(V1, {"id": 0}), env({**V1, "optional": False}, {"id": 1})], "FORWARD")  # versioned: as is
    assert files(store) == {0: [{"id": 0}, {"id": 1}]}
    store, _ = run([env(unversioned, {"id": 0}), env({**unversioned, "name": "other"}, {"id": 1})], "NONE")
    assert files(store) == {0: [{"id": 0}], 1: [{"id": 1}]}


def test_avro_files_hold_the_projected_records_in_the_files_schema():
    import fastavro

    store, _ = run(V1_V1_V2_V1, "BACKWARD", **{"format.class": "io.confluent.connect.s3.format.avro.AvroFormat"})
    objects = store.buckets["b"]
    second = fastavro.reader(io.BytesIO(objects["topics/t/partition=0/t+0+0000000002.avro"].body))
    assert [f["name"] for f in second.writer_schema["fields"]] == ["id", "tag"]
    assert list(second) == [{"id": 2, "tag": "x"}, {"id": 3, "tag": "none"}]


# --- the faulty variants of issue 33, each against the correct sink -------------------------------

def test_no_rotation_on_incompatible_writes_the_record_as_it_came():
    assert files(run(V1_V1_V2_V1, "NONE", "no-rotation-on-incompatible")[0]) == {
        0: [{"id": 0}, {"id": 1}, {"id": 2, "tag": "x"}, {"id": 3}]}
    v1_string = in_struct("rec", 1, {"field": "id", "type": "string"})
    assert files(run([env(V1, {"id": 0}), env(v1_string, {"id": "one"})], "BACKWARD", "no-rotation-on-incompatible")[0]) \
        == {0: [{"id": 0}, {"id": "one"}]}


def test_projection_drops_default_writes_null():
    assert files(run(V1_V1_V2_V1, "BACKWARD", "projection-drops-default")[0]) == {
        0: [{"id": 0}, {"id": 1}], 2: [{"id": 2, "tag": "x"}, {"id": 3, "tag": None}]}


def test_nested_incompatible_compatible_writes_the_nested_value_unprojected():
    def nested(t, tag=False):
        inner = [{"field": "n", "type": t}] + ([{"field": "tag", "type": "string", "optional": True}] if tag else [])
        return in_struct("rec", 1, {"field": "id", "type": "int32"},
                         {"field": "inner", "type": "struct", "name": "inner", "fields": inner})

    values = [env(nested("int32"), {"id": 0, "inner": {"n": 1}}), env(nested("string"), {"id": 1, "inner": {"n": "x"}})]
    assert files(run(values, "BACKWARD")[0]) == {0: [{"id": 0, "inner": {"n": 1}}], 1: [{"id": 1, "inner": {"n": "x"}}]}
    assert files(run(values, "BACKWARD", "nested-incompatible-compatible")[0]) == {
        0: [{"id": 0, "inner": {"n": 1}}, {"id": 1, "inner": {"n": "x"}}]}
    # compatible nested changes: the connector projects the nested struct (its extra field dropped)
    values = [env(nested("int32"), {"id": 0, "inner": {"n": 1}}), env(nested("int32", True), {"id": 1, "inner": {"n": 2, "tag": "t"}})]
    assert files(run(values, "BACKWARD")[0]) == {0: [{"id": 0, "inner": {"n": 1}}, {"id": 1, "inner": {"n": 2}}]}
    assert files(run(values, "BACKWARD", "nested-incompatible-compatible")[0]) == {
        0: [{"id": 0, "inner": {"n": 1}}, {"id": 1, "inner": {"n": 2, "tag": "t"}}]}


def test_enum_change_incompatible_rotates_where_the_connector_projects():
    rgb = in_struct("rec", 1, COLOR_RGB)
    rg = in_struct("rec", 2, COLOR_RG)
    values = [env(rgb, {"color": "RED"}), env(rg, {"color": "GREEN"})]
    assert files(run(values, "FORWARD")[0]) == {0: [{"color": "RED"}, {"color": "GREEN"}]}
    assert files(run(values, "FORWARD", "enum-change-incompatible")[0]) == {0: [{"color": "RED"}], 1: [{"color": "GREEN"}]}


def _java_order(keys, hashes):
    """A `new HashMap<>()` filled with `keys` in order, as it iterates: the final table (16
    buckets, doubled while more than 3/4 full) bucket by bucket, each in put order."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    return sorted(keys, key=lambda k: (hashes[k] ^ (hashes[k] >> 16)) & (capacity - 1))


def _string_hash(s):
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def test_R14_7_a_projected_map_is_written_as_a_new_hashmap_filled_in_the_source_maps_order():
    """projectMap iterates the source map (JsonConverter's `new HashMap<>()`, filled in document
    order) into a `new HashMap<>()`; the writer iterates that. 14 int keys: 32 buckets, 65/33/1
    sharing bucket 1 in the source's order. String keys by String.hashCode."""
    from adapters.pysink.jsonwrite import hashmap_entries

    doc = [99, 12, 1, 33, 65, 40, 8, 31, 30, 17, 2, 64, 0, 5]
    source = {"type": "map", "keys": {"type": "int32"}, "values": {"type": "string"}}
    target = {"type": "map", "keys": {"type": "int64"}, "values": {"type": "string"}}
    projected = FULL.project_value(source, [[k, str(k)] for k in doc], target)
    written = [k for k, _ in hashmap_entries([(k, v) for k, v in projected], "int64")]
    converted = _java_order(doc, {k: k for k in doc})
    assert written == _java_order(converted, {k: k for k in doc})
    assert written[:5] == [64, 0, 1, 33, 65]
    names = [f"key{i}" for i in range(13, 0, -1)] + ["channel", "note"]
    strings = {"type": "map", "keys": {"type": "string"}, "values": {"type": "int32"}}
    projected = FULL.project_value(strings, {k: i for i, k in enumerate(names)}, {**strings, "values": {"type": "int64"}})
    written = [k for k, _ in hashmap_entries(list(projected.items()), "string")]
    hashes = {k: _string_hash(k) for k in names}
    assert written == _java_order(_java_order(names, hashes), hashes)
    assert _string_hash("note") == 3387378
