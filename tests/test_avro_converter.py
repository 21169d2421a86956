"""AvroConverter's reading of the Schema Registry wire format, held to Confluent's own converter:
tests/vectors/avro_converter_7.7.8.txt holds what io.confluent.connect.avro.AvroConverter 7.7.8
(built from Confluent's public source) returned for records Confluent's KafkaAvroSerializer wrote.
The same records are written here (fastavro, the ids an in-memory registry gives in the same
order) and read by the model (reference_impl.avro_data) and by the Python sink
(adapters/pysink/avroread.py); each must print what Confluent's converter printed."""
from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import re
from pathlib import Path

import fastavro
import pytest

from adapters.pysink.avroread import AvroReadError, read as sink_read
from adapters.registry.memory import InMemoryRegistry
from reference_impl.avro_data import AvroDataError, avro_to_connect
from reference_impl.connect_data import Struct, convert_payload, parse_schema

VECTORS = Path(__file__).parent / "vectors" / "avro_converter_7.7.8.txt"
RNS = "io.confluent.kafka.serializers.subject.RecordNameStrategy"
TRNS = "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy"
TNS = "io.confluent.kafka.serializers.subject.TopicNameStrategy"

ORDER_V1 = {
    "type": "record", "name": "Order", "namespace": "shop.v1", "doc": "An order", "fields": [
        {"name": "id", "type": "long", "doc": "order id"},
        {"name": "customer", "type": {"type": "record", "name": "Customer", "fields": [
            {"name": "name", "type": "string"},
            {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
                {"name": "street", "type": "string"},
                {"name": "zip", "type": ["null", "string"], "default": None}]}}]}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "qty", "type": ["int", "null"], "default": 1},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"],
                                    "default": "NEW"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"},
            {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}}]}}},
        {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
        {"name": "opt_total", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}],
         "default": None},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "opt_ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tod", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "micros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "choice", "type": ["null", "string", "int"], "default": None},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {"name": "ratio", "type": "double", "default": 0.5},
        {"name": "flag", "type": "boolean", "default": True},
    ]}
ORDER_V2 = {**ORDER_V1, "fields": ORDER_V1["fields"] + [
    {"name": "channel", "type": ["null", "string"], "default": None, "doc": "added in v2"}]}
KEY = {"type": "record", "name": "OrderKey", "namespace": "shop.v1", "fields": [{"name": "id", "type": "long"}]}


def order(schema: dict, oid: int, full: bool) -> dict:
    d = decimal.Decimal
    out = {"id": oid, "customer": {"name": "Ada", "address": {"street": "1 Main St", "zip": "12345" if full else None}},
           "note": "leave at door" if full else None, "qty": 3 if full else None, "status": "PAID" if full else "NEW",
           "tags": ["a", "b"] if full else [], "counts": {"x": 1, "y": 2} if full else {},
           "lines": [{"sku": "SKU-1", "price": d("19.99")}] if full else [], "total": d("59.97"),
           "opt_total": d("-0.05") if full else None, "created": 1700000000123, "opt_ts": 1700000000456 if full else None,
           "day": 19675, "tod": 3723004, "micros": 1700000000123456, "uid": "0b6c2c5e-8a5e-4f8c-9b7e-5d2f4e0a9c11",
           "choice": 7 if full else "seven", "hash": bytes([1, 2, 3, 4]), "ratio": 0.25, "flag": full}
    if any(f["name"] == "channel" for f in schema["fields"]):
        out["channel"] = "web"
    return out


def _write(reg: InMemoryRegistry, subject: str, schema, datum) -> bytes:
    sid = reg.register(subject, json.dumps(schema))
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(schema), datum)
    return b"\x00" + sid.to_bytes(4, "big") + buf.getvalue()


def _records() -> tuple[InMemoryRegistry, dict[str, tuple[str, str, str, bytes | None]]]:
    """The harness's records, written in its order (so the registry gives the same ids)."""
    reg = InMemoryRegistry(compatibility="NONE")
    v = {}
    v["order v1 full"] = ("orders", "value", TNS, _write(reg, "orders-value", ORDER_V1, order(ORDER_V1, 1, True)))
    v["order v1 sparse"] = ("orders", "value", TNS, _write(reg, "orders-value", ORDER_V1, order(ORDER_V1, 2, False)))
    v["order v2 full"] = ("orders", "value", TNS, _write(reg, "orders-value", ORDER_V2, order(ORDER_V2, 3, True)))
    v["order v1 after v2 registered"] = ("orders", "value", TNS,
                                         _write(reg, "orders-value", ORDER_V1, order(ORDER_V1, 4, True)))
    v["key record"] = ("orders", "key", TNS, _write(reg, "orders-key", KEY, {"id": 1}))
    v["plain string"] = ("names", "value", TNS, _write(reg, "names-value", "string", "hello"))
    v["long"] = ("longs", "value", TNS, _write(reg, "longs-value", "long", 42))
    v["bytes"] = ("blobs", "value", TNS, _write(reg, "blobs-value", "bytes", bytes([0, 1, 2, 255])))
    v["top-level array"] = ("arrays", "value", TNS,
                            _write(reg, "arrays-value", {"type": "array", "items": "int"}, [1, 2, 3]))
    v["top-level map"] = ("maps", "value", TNS, _write(reg, "maps-value", {"type": "map", "values": ["null", "string"]},
                                                       {"k": "v", "n": None}))
    v["top-level enum"] = ("enums", "value", TNS, _write(
        reg, "enums-value", {"type": "enum", "name": "Color", "namespace": "x", "symbols": ["RED", "GREEN"]}, "GREEN"))
    v["null value (tombstone)"] = ("orders", "value", TNS, None)
    v["same bytes under another topic (subject has no such schema)"] = ("other", "value", TNS,
                                                                       v["order v1 full"][3])
    v["RecordNameStrategy"] = ("rns", "value", RNS, _write(reg, "shop.v1.Order", ORDER_V1, order(ORDER_V1, 5, True)))
    v["TopicRecordNameStrategy"] = ("trns", "value", TRNS,
                                    _write(reg, "trns-shop.v1.Order", ORDER_V2, order(ORDER_V2, 6, False)))
    v["TopicRecordNameStrategy bytes read with default TopicNameStrategy"] = (
        "trns", "value", TNS, v["TopicRecordNameStrategy"][3])
    return reg, v


def _vectors() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    title = None
    for line in VECTORS.read_text().splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("-- toConnectData "):
            title = line[len("-- toConnectData "):].split(" (topic")[0]
            out[title] = []
        elif title is not None and not line.strip().startswith("result is"):
            out[title].append(line)
    return out


# --- printing Connect data the way the harness printed it -------------------------------------

def _fmt(v, schema=None) -> str:
    if v is None:
        return "null"
    if isinstance(v, Struct):
        return "Struct{" + ", ".join(f"{f.name}={_fmt(v.values[f.name], f.schema)}" for f in v.schema.fields) + "}"
    if isinstance(v, list):
        return "List[" + ", ".join(_fmt(x, schema.items if schema else None) for x in v) + "]"
    if isinstance(v, dict):
        items = sorted(((_fmt(k, schema.keys if schema else None), _fmt(x, schema.values if schema else None))
                        for k, x in v.items()))
        return "Map{" + ", ".join(f"{k}={x}" for k, x in items) + "}"
    if isinstance(v, decimal.Decimal):
        return f"BigDecimal({format(v, 'f')})"
    if isinstance(v, bool):
        return f"Boolean({'true' if v else 'false'})"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, (bytes, bytearray)):
        return f"ByteBuffer({bytes(v).hex()})"
    if schema is not None and schema.name and schema.name.rsplit(".", 1)[-1] in ("Date", "Time", "Timestamp"):
        ms = v * 86_400_000 if schema.name.endswith("Date") else v
        text = (dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)).isoformat(
            timespec="milliseconds").replace("+00:00", "Z")
        return f"Date({re.sub(r'[.]000Z$', 'Z', text)})"
    java = {"int8": "Byte", "int16": "Short", "int32": "Integer", "int64": "Long", "float32": "Float",
            "float64": "Double"}.get(schema.type if schema is not None else "")
    return f"{java}({v})" if java else repr(v)


def _schema_lines(indent: str, label: str, s, out: list[str]) -> None:
    params = "null" if not s.parameters else "{" + ", ".join(f"{k}={v}" for k, v in sorted(s.parameters)) + "}"
    out.append(f"{indent}{label}: type={s.type.upper()} name={s.name or 'null'} "
               f"version={'null' if s.version is None else s.version} optional={'true' if s.optional else 'false'} "
               f"default={'null' if s.default is None else _fmt(s.default, s)} "
               f"doc={chr(34) + s.doc + chr(34) if s.doc else 'null'} params={params}")
    if s.type == "struct":
        for i, f in enumerate(s.fields):
            _schema_lines(indent + "  ", f"field[{i}] {f.name}", f.schema, out)
    elif s.type == "array":
        _schema_lines(indent + "  ", "items", s.items, out)
    elif s.type == "map":
        _schema_lines(indent + "  ", "keys", s.keys, out)
        _schema_lines(indent + "  ", "values", s.values, out)


def _printed(schema, value) -> list[str]:
    out: list[str] = []
    if schema is None:
        out.append("  schema: <null schema>")
    else:
        _schema_lines("  ", "schema", schema, out)
    out.append("  value: " + _fmt(value, schema))
    return out


REG, RECORDS = _records()
VECTORS_BY_TITLE = _vectors()
TITLES = sorted(VECTORS_BY_TITLE)


def test_the_vectors_cover_every_record_written_here():
    assert set(TITLES) == set(RECORDS) and len(TITLES) == 16


@pytest.mark.parametrize("title", TITLES)
def test_the_model_reads_what_confluents_avroconverter_read(title):
    topic, which, strategy, data = RECORDS[title]
    want = VECTORS_BY_TITLE[title]
    snap = REG.snapshot()
    if want[0].lstrip().startswith("threw:"):
        with pytest.raises(AvroDataError, match="does not hold it"):
            avro_to_connect(data, snap, topic, which, strategy)
        return
    if data is None:
        assert want == ["  schema: <null schema>", "  value: null"]
        return
    value, schema = avro_to_connect(data, snap, topic, which, strategy)
    assert _printed(schema, value) == want


@pytest.mark.parametrize("title", TITLES)
def test_the_python_sink_reads_what_confluents_avroconverter_read(title):
    topic, which, strategy, data = RECORDS[title]
    want = VECTORS_BY_TITLE[title]
    if data is None:
        return  # the sink's converter answers a null before it reads anything (RecordConverter.read)
    if want[0].lstrip().startswith("threw:"):
        with pytest.raises(AvroReadError, match="version"):
            sink_read(data, REG, topic, which, strategy)
        return
    schema_json, payload = sink_read(data, REG, topic, which, strategy)
    # the sink carries JsonConverter's shape: read back as Connect data to print it alike
    schema = parse_schema(schema_json)
    assert _printed(schema, convert_payload(schema, payload)) == want
