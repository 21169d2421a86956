"""Formats (R10, R11.3, R5.3): encode as the connector writes, decode what a connector wrote."""
from __future__ import annotations

import decimal
import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_impl.connect_data import SinkRecord, from_json
from reference_impl.formats import DataError, FormatOptions, format_for, view_of

E10 = {"schema": {"type": "struct", "fields": [
    {"field": "id", "type": "int32"}, {"field": "name", "type": "string"},
    {"field": "ts", "type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"},
    {"field": "amt", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}}]},
    "payload": {"id": 1, "name": "a", "ts": 1704067200000, "amt": "BNI="}}


def cv(obj):
    c = from_json(obj)
    return (c.value, c.schema)


def test_R10_1_json_struct_line_matches_E10():
    j = format_for("io.confluent.connect.s3.format.json.JsonFormat")
    assert j.encode([cv(E10)], FormatOptions()) == b'{"id":1,"name":"a","ts":1704067200000,"amt":"BNI="}\n'
    assert j.encode([cv(E10)], FormatOptions(json_decimal_format="NUMERIC")) == \
        b'{"id":1,"name":"a","ts":1704067200000,"amt":12.34}\n'
    assert j.encode([("hello", None)], FormatOptions()) == b'"hello"\n'


@pytest.mark.parametrize("value,scale,b64", [("12.34", 2, "BNI="), ("-1", 0, "/w=="), ("0", 0, "AA=="), ("1.28", 2, "AIA=")])
def test_R10_1_decimal_is_base64_of_minimal_twos_complement(value, scale, b64):
    from reference_impl.formats.json_format import to_json_value
    from reference_impl.connect_data import Schema

    s = Schema("bytes", name="org.apache.kafka.connect.data.Decimal", parameters=(("scale", str(scale)),))
    assert to_json_value(decimal.Decimal(value), s) == b64


def test_R10_1_json_gzip_and_every_line_ends_with_a_separator():
    j = format_for("JsonFormat")
    data = j.encode([({"a": 1}, None), ([1, 2], None)], FormatOptions(compression="gzip"))
    assert gzip.decompress(data) == b'{"a":1}\n[1,2]\n'
    assert j.decode(data, FormatOptions()) == [{"a": 1}, [1, 2]]


def test_R11_3_json_headers_are_enveloped():
    r = SinkRecord("t", 0, 0, 0, headers=(("trace", "abc"),))
    data = format_for("JsonFormat").encode([view_of(r, "headers")], FormatOptions(), "headers")
    assert data == b'{"headers":[{"key":"trace","value":"abc"}]}\n'


@pytest.mark.parametrize("fmt,opts,ext", [
    ("JsonFormat", FormatOptions(), ".json"),
    ("JsonFormat", FormatOptions(compression="gzip"), ".json.gz"),
    ("ByteArrayFormat", FormatOptions(), ".bin"),
    ("ByteArrayFormat", FormatOptions(compression="gzip", bytearray_extension=".raw"), ".raw.gz"),
    ("AvroFormat", FormatOptions(avro_codec="deflate"), ".avro"),
    ("ParquetFormat", FormatOptions(), ".snappy.parquet"),
    ("ParquetFormat", FormatOptions(parquet_codec="gzip"), ".gz.parquet"),
    ("ParquetFormat", FormatOptions(parquet_codec="none"), ".parquet"),
])
def test_R5_3_extensions(fmt, opts, ext):
    assert format_for(fmt).extension(opts) == ext


def test_R10_2_bytearray_requires_bytes_and_separates_every_record():
    b = format_for("ByteArrayFormat")
    with pytest.raises(DataError):
        b.check_writable("text", None, "value")
    data = b.encode([(b"a", None), (b"bc", None)], FormatOptions(bytearray_separator=b"|"))
    assert data == b"a|bc|"
    assert b.decode(data, FormatOptions(bytearray_separator=b"|")) == [b"a", b"bc"]


@pytest.mark.parametrize("fmt", ["AvroFormat", "ParquetFormat"])
def test_R10_5_avro_and_parquet_reject_gzip(fmt):
    with pytest.raises(ValueError, match="R10.5"):
        format_for(fmt).encode([cv(E10)], FormatOptions(compression="gzip"))


def test_R10_4_parquet_needs_a_struct_value():
    with pytest.raises(DataError):
        format_for("ParquetFormat").check_writable({"a": 1}, None, "value")


def test_R10_3_avro_writer_schema_is_the_first_records_and_decodes_back():
    a = format_for("AvroFormat")
    data = a.encode([cv(E10), cv(E10)], FormatOptions(avro_codec="deflate"))
    assert data[:4] == b"Obj\x01"
    (row, _) = a.decode(data, FormatOptions())
    assert row == {"id": 1, "name": "a", "ts": 1704067200000, "amt": decimal.Decimal("12.34")}


def test_unknown_format_class_is_named():
    with pytest.raises(ValueError, match="CsvFormat"):
        format_for("io.example.CsvFormat")


structs = st.fixed_dictionaries({
    "n": st.integers(-2**31, 2**31 - 1), "s": st.text(max_size=8),
    "d": st.decimals(min_value=-10**6, max_value=10**6, places=2, allow_nan=False, allow_infinity=False)})
SCHEMA = {"type": "struct", "fields": [{"field": "n", "type": "int32"}, {"field": "s", "type": "string"},
          {"field": "d", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}}]}


def _env(p):
    from reference_impl.formats.json_format import decimal_bytes
    import base64
    return {"schema": SCHEMA, "payload": {**p, "d": base64.b64encode(decimal_bytes(p["d"], 2)).decode()}}


@pytest.mark.parametrize("fmt", ["JsonFormat", "AvroFormat", "ParquetFormat"])
@given(rows=st.lists(structs, min_size=1, max_size=5))
def test_round_trip_is_stable(fmt, rows):
    """decode(encode(x)) is what the model compares: equal inputs decode equal, and the
    decoded rows carry every field."""
    f = format_for(fmt)
    items = [cv(_env(r)) for r in rows]
    decoded = f.decode(f.encode(items, FormatOptions()), FormatOptions())
    assert len(decoded) == len(rows)
    assert decoded == f.decode(f.encode(items, FormatOptions()), FormatOptions())
    if fmt != "JsonFormat":
        assert [d["n"] for d in decoded] == [r["n"] for r in rows]
        assert [d["d"] for d in decoded] == [r["d"] for r in rows]
