"""Records in the Schema Registry's wire format (conformance/inputs/registry_wire.py): what a
producer writes for a scenario's Avro notation, what it refuses as no producer could write it, a
run's registry found again from its snapshot, records re-expressed for a user's AvroConverter
config, and a user's registry URL and credentials mapped onto the run's registry."""
from __future__ import annotations

import json

import pytest

from adapters.connect.connector_config import onto_registry
from adapters.registry.memory import InMemoryRegistry
from conformance.inputs import wire
from conformance.inputs.registry_wire import RegistryNotation, SnapshotRegistry, avro_bytes
from reference_impl.avro_data import TOPIC_NAME_STRATEGY, avro_to_connect
from reference_impl.connect_data import Struct

AVRO = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "io.confluent.connect.avro.AvroConverter",
        "value.converter.schema.registry.url": "http://registry:8081"}
SCHEMA = {"type": "record", "name": "Pay", "namespace": "com.acme", "fields": [
    {"name": "seq", "type": "long"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2}},
    {"name": "blob", "type": ["null", "bytes"], "default": None},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}}]}


def test_a_producer_registers_under_the_topic_subject_and_writes_the_wire_format():
    reg = InMemoryRegistry()
    data = avro_bytes({"schema": SCHEMA, "payload": {"seq": 1, "amount": "12.5", "blob": "AAE=", "kind": "B"}},
                      "com.acme.pay.v1", "value", reg, TOPIC_NAME_STRATEGY)
    assert data[0] == 0 and reg.subjects() == ["com.acme.pay.v1-value"]
    value, schema = avro_to_connect(data, reg.snapshot(), "com.acme.pay.v1", "value")
    assert isinstance(value, Struct) and schema.version == 1
    assert str(value.values["amount"]) == "12.50" and value.values["blob"] == b"\x00\x01" and value.values["kind"] == "B"


@pytest.mark.parametrize("item,says", [
    ({"seq": 1}, 'gives {"schema": <Avro schema>, "payload": <value>}'),
    ({"schema": {"type": "record"}, "payload": {}}, "not an Avro schema"),
    ({"schema": SCHEMA, "payload": {"seq": "one", "amount": "1.00", "kind": "A"}}, "does not fit its Avro schema"),
    ({"schema": SCHEMA, "payload": {"seq": 1, "amount": "1.00", "blob": "not base64!", "kind": "A"}}, "not base64"),
    ({"schema": SCHEMA, "payload": {"seq": 1, "amount": "1.00", "kind": "C"}}, "does not fit its Avro schema"),
])
def test_what_no_producer_could_write_is_refused(item, says):
    with pytest.raises(RegistryNotation, match=says.replace("(", r"\(").replace(")", r"\)")):
        avro_bytes(item, "t", "value", InMemoryRegistry(), TOPIC_NAME_STRATEGY)


def test_a_runs_registry_gives_the_same_ids_again_whatever_the_schemas_formatting():
    reg = InMemoryRegistry()
    first = avro_bytes({"schema": SCHEMA, "payload": {"seq": 1, "amount": "1.00", "kind": "A"}}, "t", "value", reg,
                       TOPIC_NAME_STRATEGY)
    again = SnapshotRegistry(reg.snapshot())
    pretty = json.dumps(SCHEMA, indent=2)  # what a registry stores is Java's toString of it
    assert again.register("t-value", pretty) == int.from_bytes(first[1:5], "big")
    with pytest.raises(RegistryNotation, match="holds no such AVRO schema under other-value"):
        again.register("other-value", pretty)


def test_schemaless_values_are_written_with_one_record_schema_a_topic_every_field_optional():
    plain = {"key.converter": "org.apache.kafka.connect.storage.StringConverter",
             "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
    recs = [{"topic": "events", "partition": 0, "timestamp": 1, "key": "k", "value": {"seq": 0, "ts": 5}},
            {"topic": "events", "partition": 0, "timestamp": 2, "key": "k", "value": {"seq": 1, "note": "<&>"}},
            {"topic": "events", "partition": 0, "timestamp": 3, "key": "k", "value": None}]
    out = wire.reexpress(recs, plain, AVRO)
    schemas = {json.dumps(r["value"]["schema"], sort_keys=True) for r in out if r["value"] is not None}
    assert len(schemas) == 1 and out[2]["value"] is None
    fields = {f["name"]: f for f in json.loads(schemas.pop())["fields"]}
    assert list(fields) == ["seq", "ts", "note"] and all(f["default"] is None for f in fields.values())
    assert out[1]["value"]["payload"] == {"seq": 1, "ts": None, "note": "<&>"}
    # and the model reads them back as the records they were
    got = wire.sink_records(AVRO, out, [0, 1, 2])
    assert [r.value.values["seq"] if r.value is not None else None for r in got] == [0, 1, None]


def test_a_users_registry_url_and_credentials_are_mapped_onto_the_runs_registry():
    cfg = {**AVRO, "value.converter.basic.auth.credentials.source": "USER_INFO",
           "value.converter.basic.auth.user.info": "u:p", "value.converter.schema.registry.ssl.truststore.location": "/x",
           "value.converter.auto.register.schemas": "false"}
    out, changed = onto_registry(cfg, "http://127.0.0.1:9999/apis/ccompat/v7")
    assert out["value.converter.schema.registry.url"] == "http://127.0.0.1:9999/apis/ccompat/v7"
    assert not any("basic.auth" in k or "ssl" in k for k in out)
    assert out["value.converter.auto.register.schemas"] == "false"  # the converter's own behaviour stays
    assert len(changed) == 4 and "http://registry:8081" in changed[0]
