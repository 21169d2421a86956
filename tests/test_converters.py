"""Converters are part of a scenario: the model reads a record's bytes exactly as the converter
the connector config names (Kafka 4.1's JsonConverter, StringConverter, ByteArrayConverter),
a scenario only produces bytes its converters accept, format-1 scenarios migrate, and a named
scenario re-expressed for another converter keeps its records findable."""
from __future__ import annotations

import base64
import decimal
import json

import pytest
from hypothesis import given

from conformance.inputs import wire
from conformance.catalog.named import rotate_interval_table
from conformance.inputs.scenario import (FORMAT_1, SCENARIO_FORMAT, Scenario, ScenarioError, converter_kind,
    record_seq)
from conformance.generators.configs import CONFLUENT_FORMATS, value_kinds
from conformance.generators.strategies import scenarios
from reference_impl.connect_data import Schema, Struct, parse_schema, schema_to_json
from reference_impl.converters import (BYTEARRAY_CONVERTER, JSON_CONVERTER, STRING_CONVERTER, Converter,
                                       ConverterError, UnknownConverter, converter_for)

WITH_SCHEMAS = Converter(JSON_CONVERTER, {"schemas.enable": "true"})
SCHEMALESS = Converter(JSON_CONVERTER, {"schemas.enable": "false"})


def env(schema, payload) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}).encode()


# --- JsonConverter's own type names -----------------------------------------------------------

@pytest.mark.parametrize("name,connect", [("int8", "int8"), ("int16", "int16"), ("int32", "int32"),
                                          ("int64", "int64"), ("float", "float32"), ("double", "float64"),
                                          ("boolean", "boolean"), ("string", "string"), ("bytes", "bytes")])
def test_every_primitive_type_name_jsonconverter_writes_is_read(name, connect):
    payload = {"boolean": True, "string": "x", "bytes": "AAE="}.get(name, 1)
    cv = WITH_SCHEMAS.to_connect(env({"type": name}, payload))
    assert cv.schema.type == connect
    assert schema_to_json(cv.schema)["type"] == name  # and written back under the same name


@pytest.mark.parametrize("name", ["float32", "float64", "integer", "long"])
def test_type_names_jsonconverter_rejects_are_rejected(name):
    with pytest.raises(ConverterError, match=f"Unknown schema type: {name}"):
        WITH_SCHEMAS.to_connect(env({"type": name}, 1))


def test_struct_array_map_and_their_parts():
    schema = {"type": "struct", "name": "order", "version": 3, "doc": "d", "fields": [
        {"field": "tags", "type": "array", "items": {"type": "string"}},
        {"field": "counts", "type": "map", "keys": {"type": "string"}, "values": {"type": "int64"}},
        {"field": "pairs", "type": "map", "keys": {"type": "int32"}, "values": {"type": "double"}, "optional": True},
        {"field": "inner", "type": "struct", "fields": [{"field": "x", "type": "float"}], "optional": True}]}
    cv = WITH_SCHEMAS.to_connect(env(schema, {"tags": ["a"], "counts": {"k": 2}, "pairs": [[1, 0.5]],
                                              "inner": {"x": 1.5}, "ignored": 1}))
    s = cv.value
    assert isinstance(s, Struct) and (cv.schema.name, cv.schema.version, cv.schema.doc) == ("order", 3, "d")
    assert s.get("tags") == ["a"] and s.get("counts") == {"k": 2} and s.get("pairs") == {1: 0.5}
    assert s.get("inner").get("x") == 1.5


def test_optional_only_when_it_is_the_boolean_true():
    assert not parse_schema({"type": "string", "optional": "true"}).optional
    assert parse_schema({"type": "string", "optional": True}).optional


def test_logical_types_as_jsonconverter_reads_them():
    dec = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}}
    assert WITH_SCHEMAS.to_connect(env(dec, "BNI=")).value == decimal.Decimal("12.34")  # base64 of 1234
    assert WITH_SCHEMAS.to_connect(env(dec, 12.34)).value == decimal.Decimal("12.34")  # a number, as written
    date = {"type": "int32", "name": "org.apache.kafka.connect.data.Date"}
    assert WITH_SCHEMAS.to_connect(env(date, 19723)).value == 19723
    with pytest.raises(ConverterError, match="Invalid type for Date"):
        WITH_SCHEMAS.to_connect(env(date, 1.5))
    ts = {"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"}
    with pytest.raises(ConverterError, match="Invalid type for Timestamp"):
        WITH_SCHEMAS.to_connect(env(ts, "2024-01-01"))


def test_int8_wraps_and_a_string_read_as_a_number_is_zero_as_in_java():
    assert WITH_SCHEMAS.to_connect(env({"type": "int8"}, 300)).value == 44  # (byte) 300
    assert WITH_SCHEMAS.to_connect(env({"type": "int32"}, "7")).value == 0  # JsonNode.intValue() of text
    assert WITH_SCHEMAS.to_connect(env({"type": "string"}, 7)).value is None  # textValue() of a number


def test_null_in_a_required_field_is_refused_and_a_default_fills_it():
    schema = {"type": "struct", "fields": [{"field": "a", "type": "int32"},
                                           {"field": "b", "type": "int32", "default": 5}]}
    with pytest.raises(ConverterError, match="Invalid null value for required INT32 field"):
        WITH_SCHEMAS.to_connect(env(schema, {"b": None}))
    assert WITH_SCHEMAS.to_connect(env(schema, {"a": 1, "b": None})).value.get("b") == 5


# --- schemas.enable --------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [b'{"seq":1}', b"null", b'{"schema":{"type":"string"},"payload":"x","extra":1}'])
def test_with_schemas_every_non_null_value_must_be_the_envelope(raw):
    with pytest.raises(ConverterError, match='requires "schema" and "payload" fields'):
        WITH_SCHEMAS.to_connect(raw)


def test_null_bytes_are_the_null_value_without_a_schema():
    cv = WITH_SCHEMAS.to_connect(None)
    assert (cv.value, cv.schema) == (None, None)


def test_without_schemas_an_envelope_is_just_a_map():
    cv = SCHEMALESS.to_connect(env({"type": "string"}, "x"))
    assert cv.schema is None and cv.value == {"schema": {"type": "string"}, "payload": "x"}


def test_schemaless_numbers_are_long_and_double():
    v = SCHEMALESS.to_connect(b'{"i": 9223372036854775808, "f": 1}').value
    assert v == {"i": -9223372036854775808, "f": 1}  # Java long wraps


# --- StringConverter and ByteArrayConverter ------------------------------------------------

def test_string_converter_gives_an_optional_string_schema_even_for_a_tombstone():
    c = Converter(STRING_CONVERTER)
    assert c.to_connect(b"seq=1").value == "seq=1"
    assert c.to_connect(b"seq=1").schema == Schema("string", optional=True)
    tomb = c.to_connect(None)
    assert tomb.value is None and tomb.schema == Schema("string", optional=True)
    assert c.to_connect(b"\xff").value == "\ufffd"  # malformed UTF-8 is replaced, as new String() does


def test_bytearray_converter_passes_the_bytes():
    c = Converter(BYTEARRAY_CONVERTER)
    cv = c.to_connect(b"\x00\x01")
    assert cv.value == b"\x00\x01" and cv.schema == Schema("bytes", optional=True)


def test_a_converter_is_read_from_the_connector_config_with_its_settings():
    c = converter_for({"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false"}, "value")
    assert not c.schemas_enabled and c.describe() == "JsonConverter (schemas.enable=false)"
    assert converter_for({"key.converter": "StringConverter"}, "key").class_name == STRING_CONVERTER
    with pytest.raises(UnknownConverter, match="value.converter=io.confluent.connect.avro.AvroConverter"):
        converter_for({"value.converter": "io.confluent.connect.avro.AvroConverter"}, "value")
    with pytest.raises(UnknownConverter, match="key.converter is not set"):
        converter_for({}, "key")


# --- scenarios on the wire -------------------------------------------------------------------

def test_a_scenario_produces_the_bytes_of_its_converters_notation():
    cfg = {"key.converter": STRING_CONVERTER, "value.converter": BYTEARRAY_CONVERTER}
    raw = base64.b64encode(b'{"seq":3}').decode()
    [p] = wire.records_to_produce(cfg, [{"topic": "t", "partition": 0, "key": "k3", "value": raw, "headers": [["h", "1"]]}])
    assert (p.key, p.value, p.headers) == (b"k3", b'{"seq":3}', (("h", b"1"),))
    [r] = wire.sink_records(cfg, [{"topic": "t", "partition": 0, "key": "k3", "value": raw}], [7])
    assert (r.offset, r.key, r.value, r.value_schema.type) == (7, "k3", b'{"seq":3}', "bytes")


def test_a_record_its_converter_refuses_is_not_realizable_and_says_which():
    with pytest.raises(wire.NotRealizable, match=r"record #1 \(t-0\): its value is refused by value.converter="
                                                 r"JsonConverter \(schemas.enable=true\) \(the worker's"):
        wire.check_realizable({}, [{"topic": "t", "partition": 0, "value": {"schema": None, "payload": 1}},
                                   {"topic": "t", "partition": 0, "value": {"seq": 1}}])
    with pytest.raises(wire.NotRealizable, match="with StringConverter a scenario gives a string"):
        wire.check_realizable({"value.converter": STRING_CONVERTER}, [{"topic": "t", "partition": 0, "value": {"a": 1}}])


def _format_1(config: dict, values: list) -> dict:
    return {"format": FORMAT_1, "name": "old", "connector": {"name": "x", "config": config}, "topics": {"t": 1},
            "records": [{"topic": "t", "partition": 0, "key": f"k{i}", "value": v, "headers": []}
                        for i, v in enumerate(values)]}


def test_format_1_migrates_to_jsonconverter_and_produces_the_same_bytes():
    plain = Scenario.from_json(_format_1({"flush.size": "1"}, [{"seq": 0}, None]))
    assert plain.connector["value.converter.schemas.enable"] == "false"
    assert wire.records_to_produce(plain.connector, plain.records)[0].key == b'"k0"'  # JSON text, as format 1 wrote
    enveloped = Scenario.from_json(_format_1({}, [{"schema": {"type": "string"}, "payload": "a"}]))
    assert enveloped.connector["value.converter.schemas.enable"] == "true"
    assert json.loads(enveloped.dumps())["format"] == SCENARIO_FORMAT


def test_format_1_keeps_a_named_converter_and_rewrites_values_to_the_same_bytes():
    sc = Scenario.from_json(_format_1({"value.converter": STRING_CONVERTER}, ["text"]))
    assert sc.records[0]["value"] == '"text"'  # format 1 produced the JSON text "text", quotes included
    assert wire.records_to_produce(sc.connector, sc.records)[0].value == b'"text"'


def test_format_1_mixing_envelopes_and_plain_json_is_refused_with_what_to_do():
    with pytest.raises(ScenarioError, match=r"mix JsonConverter envelopes .* no real converter reads both"):
        Scenario.from_json(_format_1({}, [{"schema": {"type": "string"}, "payload": "a"}, {"seq": 1}]))


@pytest.mark.parametrize("value_converter", [
    {"value.converter": STRING_CONVERTER},
    {"value.converter": BYTEARRAY_CONVERTER},
    {"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "true"},
])
def test_a_named_scenario_re_expressed_for_other_converters_is_realizable_and_keeps_its_seqs(value_converter):
    sc = rotate_interval_table()
    new = {**sc.connector, **value_converter}
    if value_converter["value.converter"] != JSON_CONVERTER:
        new.pop("value.converter.schemas.enable")
    records = wire.reexpress(sc.records, sc.connector, new)
    wire.check_realizable(new, records)
    seen = wire.sink_records(new, records, range(len(records)))
    from reference_impl.formats.json_format import to_json_value

    assert [record_seq(to_json_value(r.value, r.value_schema)) for r in seen] == list(range(len(records)))




@given(scenarios(max_records=12, with_faults=False, formats=CONFLUENT_FORMATS))
def test_every_generated_scenario_is_one_its_converters_accept(sc):
    wire.check_realizable(sc.connector, sc.records)
    assert converter_kind(sc.connector) and converter_kind(sc.connector, "key")
    assert value_kinds(sc.connector)  # the config can write what its converter gives


def test_a_seq_is_found_in_every_form_an_object_can_hold_it():
    """A sink that writes a record's bytes as they are (Camel) holds a JsonConverter string value
    with its quotes: `"seq=3"` is the record with seq 3, as `seq=3` and `{"seq": 3}` are."""
    for held in (b'"seq=3"', b"seq=3", b'{"seq":3}', '"seq=3"', {"seq": 3},
                 b'{"schema":{"type":"string"},"payload":"seq=3"}'):
        assert record_seq(held) == 3, held
    assert record_seq(b'"no seq here"') is None and record_seq(b'""') is None
