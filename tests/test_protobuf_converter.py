"""ProtobufConverter (schema-registry 7.7.x) as the model reads it (reference_impl/protobuf_data.py),
as the Python sink reads it (adapters/pysink/protoread.py), and the bytes the producer writes
(conformance/inputs/protobuf_wire.py): Confluent's wire format, ProtobufData's Connect schema
and values with the converter's defaults."""
from __future__ import annotations

import dataclasses
import json

import pytest

from adapters.pysink.converters import RecordConverter
from conformance.catalog.protobuf import ORDER_V1, ORDER_V2, PROTOBUF_VALUES, order, order_v2
from conformance.inputs.wire import NotRealizable, converters, scratch_registry, to_bytes
from reference_impl.connect_data import schema_to_json
from reference_impl.converters import UnknownConverter, converter_for
from reference_impl.formats.json_format import to_json_value

CFG = {"key.converter": "org.apache.kafka.connect.storage.StringConverter", **PROTOBUF_VALUES}
TAG = "io.confluent.connect.protobuf.Tag"


def _read(schema_text: str, payload: dict, topic: str = "orders"):
    reg = scratch_registry()
    _, vc = converters(CFG)
    data = to_bytes({"schema": schema_text, "payload": payload}, vc, "value", topic, reg)
    return data, vc.to_connect(data, topic, reg.snapshot(), "value"), reg


def test_wire_format_is_magic_id_message_index_then_the_binary():
    data, cv, reg = _read(ORDER_V1, {"seq": 150})
    assert data[0] == 0
    schema_id = int.from_bytes(data[1:5], "big")
    assert reg.schema(schema_id) == (ORDER_V1, "PROTOBUF")
    assert data[5] == 0  # MessageIndexes [0]: the first message, one zigzag 0
    assert data[6:] == bytes([0x08, 0x96, 0x01])  # field 1, varint 150; every default left out
    assert reg.subjects() == ["orders-value"]


def test_connect_schema_oneofs_first_every_field_optional_with_its_tag():
    _, cv, _ = _read(ORDER_V1, order(1))
    s = cv.schema
    assert (s.type, s.name, s.optional, s.version) == ("struct", "Order", False, 1)
    assert [f.name for f in s.fields][:3] == ["coupon_0", "seq", "region"]  # generate.index.for.unions
    union = s.field("coupon_0").schema
    assert union.name == "io.confluent.connect.protobuf.Union.coupon" and union.optional and not union.parameters
    for f in s.fields[1:]:
        assert f.schema.optional and f.schema.params[TAG] == str(
            {"seq": 1, "region": 2, "status": 3, "customer": 4, "lines": 5, "placed_at": 6, "attributes": 7,
             "note": 8, "delta": 9, "units": 10, "checksum": 11, "amount": 12, "gift": 13, "tags": 14}[f.name])
    status = s.field("status").schema
    assert status.name == "Status" and list(status.params.items())[:4] == [
        ("io.confluent.connect.protobuf.Enum", "Status"), ("io.confluent.connect.protobuf.Enum.NEW", "0"),
        ("io.confluent.connect.protobuf.Enum.PAID", "1"), ("io.confluent.connect.protobuf.Enum.SHIPPED", "2")]
    assert s.field("units").schema.type == "int64" and s.field("units").schema.params[
        "io.confluent.connect.protobuf.Type"] == "uint32"
    assert s.field("delta").schema.params["io.confluent.connect.protobuf.Type"] == "sint32"
    assert s.field("placed_at").schema.name == "org.apache.kafka.connect.data.Timestamp"
    # wrapper.for.raw.primitives (on) unwraps a StringValue field, whatever wrapper.for.nullables says
    assert (s.field("note").schema.type, s.field("note").schema.name) == ("string", None)
    assert s.field("attributes").schema.name == "attributes" and s.field("attributes").schema.type == "map"
    lines = s.field("lines").schema
    assert lines.type == "array" and lines.items.name == "Line" and lines.items.parameters is None


def test_proto3_defaults_are_values_but_optional_message_and_oneof_are_null():
    _, cv, _ = _read(ORDER_V1, {"seq": 0})
    v = cv.value.values
    assert v["seq"] == 0 and v["status"] == "NEW" and v["delta"] == 0 and v["checksum"] == b"" and v["gift"] is False
    assert v["region"] is None  # proto3 `optional`: absent is null
    assert v["customer"] is None and v["note"] is None and v["placed_at"] is None and v["coupon_0"] is None
    assert v["lines"] == [] and v["tags"] == [] and v["attributes"] == {}
    _, cv, _ = _read(ORDER_V1, {"seq": 1, "region": "", "cents": 0, "units": 4_000_000_000})
    v = cv.value.values
    assert v["region"] == "" and v["units"] == 4_000_000_000
    assert v["coupon_0"].values == {"code": None, "cents": 0}  # a oneof member is written even at its default


@pytest.mark.parametrize("i", range(8))
@pytest.mark.parametrize("text,payload", [(ORDER_V1, order), (ORDER_V2, order_v2)])
def test_the_python_sink_reads_what_the_model_reads(text, payload, i):
    data, cv, reg = _read(text, payload(i))
    rc = dataclasses.replace(RecordConverter.from_config(CFG, "value"), registry=reg)
    schema, got, has_schema = rc.read(data, "orders")
    assert has_schema
    assert schema == schema_to_json(cv.schema)
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(to_json_value(cv.value, cv.schema)))


def test_protobuf_converter_is_read_and_json_schema_converter_refused():
    assert converter_for(CFG, "value").reads_registry
    with pytest.raises(UnknownConverter, match="schema.registry.url"):
        converter_for({"value.converter": "io.confluent.connect.protobuf.ProtobufConverter"}, "value")
    with pytest.raises(UnknownConverter, match="not JsonSchemaConverter's"):
        converter_for({"value.converter": "io.confluent.connect.json.JsonSchemaConverter",
                       "value.converter.schema.registry.url": "http://r"}, "value")


def test_a_schema_the_model_does_not_read_is_not_produced():
    _, vc = converters(CFG)
    decimal_schema = ('syntax = "proto3";\n\nimport "confluent/type/decimal.proto";\n\n'
                      "message M {\n  confluent.type.Decimal d = 1;\n}\n")
    with pytest.raises(NotRealizable, match="well-known imports"):
        to_bytes({"schema": decimal_schema, "payload": {}}, vc, "value", "t", scratch_registry())
    with pytest.raises(NotRealizable, match="no field 'nope'"):
        to_bytes({"schema": ORDER_V1, "payload": {"nope": 1}}, vc, "value", "t", scratch_registry())


def test_a_named_scenario_is_re_expressed_for_a_users_protobuf_converter():
    """Structs as the message of their schema, schemaless objects as one inferred message a topic."""
    from conformance.inputs.wire import reexpress
    from conformance.playing.user_config import refusal

    cfg = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "orders", "flush.size": "3",
           "s3.bucket.name": "b", "storage.class": "io.confluent.connect.s3.storage.S3Storage", **CFG}
    assert refusal(cfg) is None
    old = {**CFG, "value.converter": "org.apache.kafka.connect.json.JsonConverter",
           "value.converter.schemas.enable": "false"}
    records = [{"topic": "orders", "partition": 0, "timestamp": 1, "key": "k", "value": v}
               for v in ({"seq": 1, "region": "eu", "n": 2}, {"seq": 2, "n": 2.5, "tags": ["a"]}, None)]
    out = reexpress(records, old, CFG)
    assert out[2]["value"] is None
    text = out[0]["value"]["schema"]
    assert text == out[1]["value"]["schema"] and "  optional double n = 3;\n" in text
    assert "  repeated string tags = 4;\n" in text
    _, cv, _ = _read(text, out[1]["value"]["payload"])
    assert (cv.value.values["seq"], cv.value.values["n"], cv.value.values["tags"]) == (2, 2.5, ["a"])


def test_generated_protobuf_values_are_a_producers_proto3_message():
    from conformance.inputs.protobuf_notation import producer_payload, producer_schema
    from conformance.generators.values import EXTRA_FIELDS

    schema = {"type": "struct", "name": "order", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False}, {"field": "region", "type": "string", "optional": True},
        *({"field": n, **f} for n, f in EXTRA_FIELDS.items())]}
    text = producer_schema(schema)
    assert "  optional string region = 2;\n" in text and "  google.type.Date day = " in text
    assert "  map<int32, string> codes = " in text and "  repeated Points points = " in text
    payload = {"seq": 7, "region": None, "amount": "AQI=", "day": 19754, "ints": [1, None, 3],
               "codes": [[5, "x"], [6, None]], "points": [{"x": 1, "y": None}]}
    written = producer_payload(schema, payload)
    assert written == {"seq": 7, "amount": "2.58", "day": "2024-02-01", "ints": [1, 3], "codes": {"5": "x"},
                       "points": [{"x": 1}]}
    _, cv, _ = _read(text, written)
    v = cv.value.values
    assert (v["seq"], v["region"], v["amount"], v["day"], v["ints"]) == (7, None, "2.58", 19754, [1, 3])
    assert v["codes"] == {5: "x"} and v["points"][0].values == {"x": 1, "y": None}


# the generator's Protobuf producer: a base schema and the later versions that add fields (records.PROTOBUF_ADDED)
ORDER = {"type": "struct", "name": "order", "optional": False, "fields": [
    {"field": "seq", "type": "int64", "optional": False}, {"field": "region", "type": "string", "optional": True},
    {"field": "points", "type": "array", "optional": True, "items": {"type": "struct", "optional": False, "fields": [
        {"field": "x", "type": "int32", "optional": False}]}}]}


def test_a_dropped_field_is_reserved_in_the_next_version_the_schema_read_the_same():
    """An older producer's version registered after a newer one under its subject drops the newer
    fields: its text reserves their numbers and names, in a nested message gone entirely too, in
    the order ProtobufSchema.canonicalString() writes them back; the model and the Python sink
    read the same Connect schema and value as from the text without them."""
    from conformance.generators.records import PROTOBUF_ADDED
    from conformance.inputs.protobuf_notation import Reserved, dropped_fields, message_layout, producer_schema

    v1 = {**ORDER, "fields": ORDER["fields"] + list(PROTOBUF_ADDED[:2])}
    v2 = {**ORDER, "fields": ORDER["fields"] + list(PROTOBUF_ADDED)}
    assert message_layout(v2) == {("Order",): {"seq": 1, "region": 2, "points": 3, "channel": 4, "priority": 5,
                                               "audit": 6},
                                  ("Order", "Points"): {"x": 1}, ("Order", "Audit"): {"by": 1}}
    reserved = dropped_fields([message_layout(ORDER), message_layout(v2)], message_layout(v1))
    assert reserved == {("Order",): Reserved((6,), ("audit",)), ("Order", "Audit"): Reserved((1,), ("by",))}
    text = producer_schema(v1, reserved)
    assert text == ('syntax = "proto3";\npackage com.acme.orders;\n\nmessage Order {\n'
                    '  reserved 6;\n  reserved "audit";\n\n'
                    "  int64 seq = 1;\n  optional string region = 2;\n  repeated Points points = 3;\n"
                    "  optional string channel = 4;\n  optional int32 priority = 5;\n\n"
                    "  message Points {\n    int32 x = 1;\n  }\n"
                    '  message Audit {\n    reserved 1;\n    reserved "by";\n  }\n}\n')  # canonicalString()'s own
    # the oldest version after both: each dropped field, in the order of its number
    oldest = producer_schema(ORDER, dropped_fields([message_layout(v1), message_layout(v2)], message_layout(ORDER)))
    assert '  reserved 4, 5, 6;\n  reserved "channel", "priority", "audit";\n\n  int64 seq = 1;\n' in oldest
    # nothing dropped: the text as before
    assert producer_schema(v2, dropped_fields([message_layout(ORDER), message_layout(v1)], message_layout(v2))) \
        == producer_schema(v2)
    payload = {"seq": 3, "region": "eu", "points": [{"x": 1}], "channel": "web", "priority": 2}
    _, plain, _ = _read(producer_schema(v1), payload)
    data, cv, reg = _read(text, payload)
    assert schema_to_json(cv.schema) == schema_to_json(plain.schema)
    assert to_json_value(cv.value, cv.schema) == to_json_value(plain.value, plain.schema)
    rc = dataclasses.replace(RecordConverter.from_config(CFG, "value"), registry=reg)
    schema, got, _ = rc.read(data, "orders")
    assert schema == schema_to_json(cv.schema)
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(to_json_value(cv.value, cv.schema)))


@pytest.mark.parametrize("message,payload,expected,connect_type", [
    ("google.protobuf.StringValue", "seq=3 text", "seq=3 text", "string"),
    ("google.protobuf.BytesValue", "AQI=", b"\x01\x02", "bytes"),
    ("google.protobuf.UInt32Value", 4_000_000_000, 4_000_000_000, "int64"),
    ("google.protobuf.Int64Value", 0, 0, "int64"),
])
def test_a_bare_wrapper_is_its_primitive(message, payload, expected, connect_type):
    from conformance.inputs.protobuf_wire import WRAPPERS_PROTO

    reg = scratch_registry()
    _, vc = converters(CFG)
    data = to_bytes({"schema": WRAPPERS_PROTO, "message": message, "payload": payload}, vc, "value", "t", reg)
    index = list(WRAPPERS_PROTO_NAMES).index(message)
    assert data[5:7] == bytes([2, 2 * index])  # MessageIndexes [index]: count 1 and the index, zigzag
    cv = vc.to_connect(data, "t", reg.snapshot(), "value")
    assert (cv.value, cv.schema.type, cv.schema.optional, cv.schema.version, cv.schema.name) == (
        expected, connect_type, False, 1, None)
    rc = dataclasses.replace(RecordConverter.from_config(CFG, "value"), registry=reg)
    schema, got, _ = rc.read(data, "t")
    assert schema == schema_to_json(cv.schema)
    assert json.loads(json.dumps(got)) == json.loads(json.dumps(to_json_value(cv.value, cv.schema)))


WRAPPERS_PROTO_NAMES = ("google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int64Value",
                        "google.protobuf.UInt64Value", "google.protobuf.Int32Value", "google.protobuf.UInt32Value",
                        "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue")
