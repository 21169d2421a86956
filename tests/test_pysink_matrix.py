"""The Python sink across the connector's matrix, on its own (no reference model): keys and
headers objects (R11, E6), tombstone writing (R12.3, E7), ByteArrayFormat (R10.2), the
RecordField and Wallclock extractors (R6.5, E9), the DataExceptions that stop the task
(R11.4), value-schema rotation (R3.7, R14.2), and the configs it still refuses, each naming
its property.

Each test drives a `PySinkTarget` in-process with `threaded=False` and a `ManualClock`
(`step(at_ms)` is one put at that time) against one moto server shared by the module; each
test has its own bucket. Keys and values are read by JsonConverter without schemas unless a
test says otherwise (ENVELOPED values: with schemas, where `{"schema": null, …}` is schemaless)."""
from __future__ import annotations

import base64
import gzip
import json
import uuid

import pytest

from adapters.pysink.sink import ManualClock, SinkConfigError, SinkSettings, TaskFailed
from adapters.pysink.targets.target import PySinkTarget
from adapters.processes.moto import MotoS3Server
from adapters.observation import RecordToProduce
from adapters.target import TargetError

T0 = 1714557600000  # 2024-05-01T10:00:00Z
JSON = "io.confluent.connect.s3.format.json.JsonFormat"
BYTES = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"
AVRO = "io.confluent.connect.s3.format.avro.AvroFormat"
P = "io.confluent.connect.storage.partitioner."
D = "topics/t/partition=0/"


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    server = MotoS3Server(tmp_path_factory.mktemp("moto")).start()
    yield server
    server.stop()


@pytest.fixture
def sink(moto, tmp_path):
    """sink(config, topics={"t": 1}) -> a started, stepped-by-hand PySinkTarget."""
    started: list[PySinkTarget] = []

    def make(config: dict[str, str], topics: dict[str, int] | None = None) -> PySinkTarget:
        bucket = f"m-{uuid.uuid4().hex[:12]}"
        t = PySinkTarget(tmp_path / bucket, s3_endpoint=moto.endpoint, clock=ManualClock(T0), threaded=False)
        started.append(t)
        t.start({"s3.bucket.name": bucket, "format.class": JSON, **PLAIN_JSON, **config}, topics or {"t": 1})
        return t

    yield make
    for t in started:
        t.stop()


def rec(value, key=b'"k"', headers=(("h", b"1"),), ts=T0, topic="t") -> RecordToProduce:
    """A record; dict/str values and keys are JSON-encoded (as the runner does), bytes go as is."""
    enc = (lambda v: v if v is None or isinstance(v, bytes) else json.dumps(v, separators=(",", ":")).encode())
    return RecordToProduce(topic, 0, ts, enc(key), enc(value), tuple(headers))


JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
PLAIN_JSON = {"key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "false",
              "value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false"}
ENVELOPED = {"value.converter.schemas.enable": "true"}
ENVELOPED_KEYS = {"key.converter.schemas.enable": "true"}


def nos(v) -> dict:
    """A schemaless value or key under JsonConverter with schemas: the envelope with a null schema."""
    return {"schema": None, "payload": v}


def bytes_env(raw: bytes) -> dict:
    return {"schema": {"type": "bytes", "optional": False}, "payload": base64.b64encode(raw).decode()}


def objects(t: PySinkTarget) -> dict[str, bytes]:
    """key -> body (gunzipped for .gz keys) of every visible object."""
    return {o.key: gzip.decompress(o.body) if o.key.endswith(".gz") else o.body for o in t.sample_bucket().objects}


def completed(t: PySinkTarget) -> list[str]:
    return [ev[3] for ev in t.journal if ev[2] == "complete"]


KEYS = {"store.kafka.keys": "true", "keys.format.class": JSON}
HEADERS = {"store.kafka.headers": "true", "headers.format.class": JSON}


# --- R11: keys and headers -----------------------------------------------------------------------

def test_E6_keys_headers_and_gzip_make_each_data_file_a_triple(sink):
    t = sink({"flush.size": "2", "s3.compression.type": "gzip", **KEYS, **HEADERS, **ENVELOPED_KEYS})
    struct_key = {"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}, "payload": {"id": 7}}
    t.produce([rec({"n": 0}, key=nos("k0"), headers=[("trace", b"abc")]),
               rec({"n": 1}, key=struct_key, headers=[("trace", b"def"), ("n", b"1")]),
               rec({"n": 2}, key=nos(5), headers=[("trace", b"ghi")])])
    t.step(T0)
    raw = {o.key: o.body for o in t.sample_bucket().objects}
    assert all(b[:2] == b"\x1f\x8b" for b in raw.values())  # every object is gzip
    assert objects(t) == {
        D + "t+0+0000000000.json.gz": b'{"n":0}\n{"n":1}\n',
        D + "t+0+0000000000.keys.json.gz": b'"k0"\n{"id":7}\n',
        D + "t+0+0000000000.headers.json.gz":
            b'{"headers":[{"key":"trace","value":"abc"}]}\n'
            b'{"headers":[{"key":"trace","value":"def"},{"key":"n","value":"1"}]}\n',
    }
    # R11.1: value, then keys, then headers, each its own (completed) multipart upload
    assert completed(t) == [D + "t+0+0000000000.json.gz", D + "t+0+0000000000.keys.json.gz",
                            D + "t+0+0000000000.headers.json.gz"]
    assert t.committed() == {("t", 0): 2}
    t.produce([rec({"n": 3}, key=nos("k3"), headers=[("trace", b"jkl")])])
    t.step(T0 + 1000)
    assert sorted(objects(t)) == sorted([D + f"t+0+{s:010d}{ext}" for s in (0, 2)
                                         for ext in (".json.gz", ".keys.json.gz", ".headers.json.gz")])
    assert objects(t)[D + "t+0+0000000002.keys.json.gz"] == b'5\n"k3"\n'


def test_keys_only_without_gzip(sink):
    t = sink({"flush.size": "1", **KEYS})
    t.produce([rec({"n": 0}, key={"a": [1, 2]})])
    t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.json": b'{"n":0}\n', D + "t+0+0000000000.keys.json": b'{"a":[1,2]}\n'}


def test_a_null_key_with_keys_on_kills_the_task_naming_the_offset(sink):
    t = sink({"flush.size": "5", **KEYS})
    t.produce([rec({"n": 0}), rec({"n": 1}, key=None)])
    with pytest.raises(TaskFailed, match=r"offset 1: Key cannot be null.*R11\.4"):
        t.step(T0)
    assert "offset 1" in t.sink.error and objects(t) == {}
    assert t.committed() == {}


def test_a_json_null_key_is_a_null_key_too(sink):
    t = sink({"flush.size": "5", **KEYS})
    t.produce([rec({"n": 0}, key=b"null")])
    with pytest.raises(TaskFailed, match=r"offset 0: Key cannot be null"):
        t.step(T0)


def test_a_record_without_headers_with_headers_on_kills_the_task(sink):
    t = sink({"flush.size": "1", **HEADERS})
    t.produce([rec({"n": 0}), rec({"n": 1}, headers=())])
    with pytest.raises(TaskFailed, match=r"offset 1: Headers cannot be null.*R11\.4"):
        t.step(T0)
    # the file before it is whole (value and headers aligned); the put died, so its offset
    # never reached a preCommit
    assert objects(t) == {D + "t+0+0000000000.json": b'{"n":0}\n',
                          D + "t+0+0000000000.headers.json": b'{"headers":[{"key":"h","value":"1"}]}\n'}
    assert t.committed() == {}


# --- R12.3 / R6.7: tombstones --------------------------------------------------------------------

def test_E7_tombstone_write_with_json_keys(sink):
    t = sink({"flush.size": "2", "behavior.on.null.values": "write", **KEYS, **ENVELOPED})
    string = {"type": "string", "optional": True}
    t.produce([rec({"schema": string, "payload": "v"}, key="k0"), rec(None, key="k1"),
               rec({"schema": string, "payload": "v"}, key="k2"), rec({"schema": string, "payload": None}, key="k3")])
    t.step(T0)
    assert objects(t) == {
        D + "t+0+0000000000.json": b'"v"\n', D + "t+0+0000000000.keys.json": b'"k0"\n',
        "topics/t/tombstone/t+0+0000000001.keys.json": b'"k1"\n',
        D + "t+0+0000000002.json": b'"v"\n', D + "t+0+0000000002.keys.json": b'"k2"\n',
        "topics/t/tombstone/t+0+0000000003.keys.json": b'"k3"\n',
    }
    assert t.committed() == {("t", 0): 4}


def test_tombstones_go_to_the_configured_partition_with_headers_and_gzip(sink):
    t = sink({"flush.size": "1", "behavior.on.null.values": "write", "tombstone.encoded.partition": "deleted",
              "s3.compression.type": "gzip", **KEYS, **HEADERS})
    t.produce([rec(None, key="k0", headers=[("op", b"d")])])
    t.step(T0)
    assert objects(t) == {"topics/t/deleted/t+0+0000000000.keys.json.gz": b'"k0"\n',
                          "topics/t/deleted/t+0+0000000000.headers.json.gz":
                              b'{"headers":[{"key":"op","value":"d"}]}\n'}


def test_a_change_to_or_from_the_tombstone_partition_does_not_rotate(sink):
    """R3.3 (12.1.0+): under rotate.interval.ms, moving to or from the tombstone ep is no
    partition change; the interval still rotates."""
    t = sink({"flush.size": "10", "behavior.on.null.values": "write", **KEYS,
              "partitioner.class": P + "HourlyPartitioner", "timezone": "UTC", "locale": "en",
              "timestamp.extractor": "Record", "rotate.interval.ms": "60000"})
    t.produce([rec("a", key="k0", ts=T0), rec(None, key="k1", ts=T0 + 1000), rec("b", key="k2", ts=T0 + 2000)])
    t.step(T0)
    assert objects(t) == {}
    t.produce([rec("c", key="k3", ts=T0 + 60000)])
    t.step(T0 + 1000)
    h10 = "topics/t/year=2024/month=05/day=01/hour=10/"
    assert objects(t) == {h10 + "t+0+0000000000.json": b'"a"\n"b"\n', h10 + "t+0+0000000000.keys.json": b'"k0"\n"k2"\n',
                          "topics/t/tombstone/t+0+0000000001.keys.json": b'"k1"\n'}
    assert t.committed() == {("t", 0): 3}


def test_a_key_containing_the_tombstone_string_gets_no_value_object(sink):
    """R11.5: the check runs even with tombstone writing off; a non-null record there dies."""
    t = sink({"flush.size": "1"}, topics={"user-tombstones": 1})
    t.produce([rec({"n": 0}, topic="user-tombstones")])
    with pytest.raises(TaskFailed, match=r"offset 0: Value writer not configured.*R11\.5"):
        t.step(T0)


# --- R10.2: ByteArrayFormat ----------------------------------------------------------------------

def test_bytearray_default_separator_and_extension(sink):
    t = sink({"flush.size": "3", "format.class": BYTES, **ENVELOPED})
    t.produce([rec(bytes_env(b"\x00\x01\x02")), rec(bytes_env(b"hi\n")), rec(bytes_env(b""))])
    t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.bin": b"\x00\x01\x02\nhi\n\n\n"}


def test_bytearray_custom_separator_extension_gzip_and_keys(sink):
    t = sink({"flush.size": "2", "format.class": BYTES, "format.bytearray.separator": " || ",
              "format.bytearray.extension": ".dat", "s3.compression.type": "gzip", **KEYS, **ENVELOPED})
    t.produce([rec(bytes_env(b"one"), key="a"), rec(bytes_env(b"two"), key="b")])
    t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.dat.gz": b"one || two || ",
                          D + "t+0+0000000000.keys.json.gz": b'"a"\n"b"\n'}


@pytest.mark.parametrize("value,what", [
    (nos({"n": 1}), "schemaless dict"),
    (nos("AAEC"), "schemaless str"),  # base64 text without a BYTES schema is a String
    ({"schema": {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "parameters": {"scale": "2"}},
      "payload": "BNI="}, "Decimal"),
    ({"schema": {"type": "string"}, "payload": "x"}, "string"),
])
def test_bytearray_with_a_value_that_is_not_bytes_kills_the_task(sink, value, what):
    t = sink({"flush.size": "1", "format.class": BYTES, **ENVELOPED})
    t.produce([rec(bytes_env(b"ok")), rec(value)])
    with pytest.raises(TaskFailed, match=rf"offset 1: ByteArrayFormat needs a bytes value.*{what}"):
        t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.bin": b"ok\n"}


# --- R6.5: RecordField and Wallclock -------------------------------------------------------------

HOURLY = {"partitioner.class": P + "HourlyPartitioner", "timezone": "UTC", "locale": "en", "flush.size": "1"}


def struct(ts_schema: dict, ts) -> dict:
    meta = {"type": "struct", "optional": True, "fields": [{"field": "ts", "optional": True, **ts_schema}]}
    return {"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"},
                                                    {"field": "meta", **meta}]},
            "payload": {"id": 1, "meta": None if ts is ... else {"ts": ts}}}


def hour_dir(y, mo, d, h) -> str:
    return f"topics/t/year={y:04d}/month={mo:02d}/day={d:02d}/hour={h:02d}/"


@pytest.mark.parametrize("value,where", [
    (struct({"type": "string"}, "2024-05-01T10:15:00+02:00"), hour_dir(2024, 5, 1, 8)),  # E9: 08:15Z
    (struct({"type": "string"}, "1714551300000"), hour_dir(2024, 5, 1, 8)),  # E9: digits are epoch ms
    (struct({"type": "string"}, "2024-05-01T10:15:00"), hour_dir(2024, 5, 1, 10)),  # no offset: UTC
    (struct({"type": "string"}, "2024-05-01T23:30:00.5-01:00"), hour_dir(2024, 5, 2, 0)),
    (struct({"type": "int64"}, 1714551300), hour_dir(1970, 1, 20, 20)),  # E9: seconds read as ms
    (struct({"type": "int64", "name": "org.apache.kafka.connect.data.Timestamp"}, 1714551300000),
     hour_dir(2024, 5, 1, 8)),
    (nos({"meta": {"ts": 1714551300000}}), hour_dir(2024, 5, 1, 8)),  # a schemaless map
    (nos({"meta": {"ts": "2024-05-01T07:59:59.999Z"}}), hour_dir(2024, 5, 1, 7)),
])
def test_record_field_on_a_dotted_path(sink, value, where):
    t = sink({**HOURLY, "timestamp.extractor": "RecordField", "timestamp.field": "meta.ts", **ENVELOPED})
    t.produce([rec(value, ts=T0 + 5 * 3_600_000)])  # the record timestamp (15:00) is not used
    t.step(T0)
    assert list(objects(t)) == [where + "t+0+0000000000.json"]


@pytest.mark.parametrize("value,match", [
    (struct({"type": "string"}, ...), r"inside a null struct"),  # meta is null
    (struct({"type": "string"}, None), r"'meta\.ts' is null"),
    ({"schema": {"type": "struct", "fields": [{"field": "id", "type": "int32"}]}, "payload": {"id": 1}},
     r"'meta\.ts' is not in the value's schema"),
    (nos({"meta": {}}), r"'meta\.ts' is missing or null"),
    (nos({"other": 1}), r"'meta\.ts' is missing or null"),
    (struct({"type": "string"}, "yesterday"), r"neither epoch milliseconds nor an ISO-8601"),
    (struct({"type": "double"}, 1.5), r"has type double"),
    (nos("just text"), r"RecordField needs a Struct or Map value"),
])
def test_record_field_missing_null_or_unreadable_kills_the_task(sink, value, match):
    t = sink({**HOURLY, "timestamp.extractor": "RecordField", "timestamp.field": "meta.ts", **ENVELOPED})
    t.produce([rec(value)])
    with pytest.raises(TaskFailed, match=rf"offset 0: .*{match}"):
        t.step(T0)
    assert "R6.5" in t.sink.error and objects(t) == {}


def test_record_field_default_field_name_is_timestamp(sink):
    t = sink({**HOURLY, "timestamp.extractor": "RecordField"})
    t.produce([rec({"timestamp": T0 - 1})])
    t.step(T0)
    assert list(objects(t)) == [hour_dir(2024, 5, 1, 9) + "t+0+0000000000.json"]


def test_wallclock_each_puts_now_decides_the_hour(sink):
    """R2.1/R6.5: Wallclock (the default extractor) is the `now` of the put; record timestamps
    (here in 2020) play no part. Two records of one put share it."""
    t = sink({**HOURLY, "flush.size": "3"})
    old = 1577836800000  # 2020-01-01
    t.produce([rec({"n": 0}, ts=old), rec({"n": 1}, ts=old)])
    t.step(T0 + 59 * 60_000 + 59_999)  # 10:59:59.999
    t.produce([rec({"n": 2}, ts=old)])
    t.step(T0 + 60 * 60_000)  # 11:00:00.000
    assert objects(t) == {hour_dir(2024, 5, 1, 10) + "t+0+0000000000.json": b'{"n":0}\n{"n":1}\n',
                          hour_dir(2024, 5, 1, 11) + "t+0+0000000002.json": b'{"n":2}\n'}
    assert t.committed() == {("t", 0): 3}


def test_wallclock_by_its_class_name_with_a_time_based_partitioner(sink):
    t = sink({"partitioner.class": P + "TimeBasedPartitioner", "timezone": "Asia/Kolkata", "locale": "en",
              "partition.duration.ms": "600000", "path.format": "'d'=dd/'h'=HH/'m'=mm", "flush.size": "1",
              "timestamp.extractor": P + "TimeBasedPartitioner$WallclockTimestampExtractor"})
    t.produce([rec({"n": 0})])
    t.step(T0 + 25 * 60_000)  # 10:25Z = 15:55 in Kolkata -> the 15:50 bucket
    assert list(objects(t)) == ["topics/t/d=01/h=15/m=50/t+0+0000000000.json"]


# --- what SinkSettings accepts and refuses -------------------------------------------------------

BASE = {"s3.bucket.name": "b", "flush.size": "1", "format.class": JSON}


def test_the_matrix_config_is_accepted():
    s = SinkSettings.from_config({**BASE, "format.class": BYTES, "s3.compression.type": "gzip",
                                  "format.bytearray.separator": "\r\n", "behavior.on.null.values": "WRITE",
                                  **KEYS, **HEADERS, "partitioner.class": P + "DailyPartitioner",
                                  "timezone": "UTC", "locale": "en", "timestamp.extractor": "RecordField",
                                  "timestamp.field": "a.b", "schema.compatibility": "backward"})  # R14.6: NONE
    assert (s.value_format, s.value_ext, s.bytearray_sep, s.keys, s.headers, s.nulls, s.extractor, s.ts_field) == \
        ("bytearray", ".bin.gz", b"\r\n", True, True, "write", "RecordField", "a.b")
    assert SinkSettings.from_config({**BASE, "partitioner.class": P + "HourlyPartitioner",
                                     "timezone": "UTC"}).extractor == "Wallclock"


@pytest.mark.parametrize("extra,props", [
    ({"format.class": "com.example.OrcFormat"}, ["format.class=OrcFormat", "JsonFormat, ByteArrayFormat, AvroFormat"]),
    ({"format.class": AVRO, "s3.compression.type": "gzip"},
     ["s3.compression.type=gzip with format.class=AvroFormat", "R10.5"]),
    ({"store.kafka.keys": "true", "s3.compression.type": "gzip"},  # keys default to Avro (R10.5)
     ["s3.compression.type=gzip with keys.format.class=AvroFormat", "R10.5"]),
    ({"store.kafka.headers": "true", "headers.format.class": BYTES},
     ["headers.format.class=ByteArrayFormat", "JsonFormat, AvroFormat and ParquetFormat keys and headers"]),
    ({"format.class": AVRO, "avro.codec": "zstandard"}, ["avro.codec=zstandard", "null, deflate, snappy, bzip2"]),
    ({"format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat", "parquet.codec": "lzo"},
     ["parquet.codec=lzo"]),
    ({"store.kafka.keys": "yes"}, ["store.kafka.keys='yes'"]),
    ({"behavior.on.null.values": "write"}, ["behavior.on.null.values=write", "store.kafka.keys=true"]),
    ({"behavior.on.null.values": "drop"}, ["behavior.on.null.values=drop"]),
    ({"errors.tolerance": "all"}, ["errors.tolerance=all", "dead letter queue"]),
    ({"errors.deadletterqueue.topic.name": "dlq"}, ["errors.deadletterqueue.topic.name=dlq"]),
    ({"errors.log.enable": "true"}, ["errors.log.enable=true"]),
    ({"partitioner.class": P + "HourlyPartitioner", "timezone": "UTC", "timestamp.extractor": "com.example.Ts"},
     ["timestamp.extractor=com.example.Ts", "Wallclock, Record and RecordField"]),
    ({"json.decimal.format": "TEXT"}, ["json.decimal.format=TEXT", "BASE64 or NUMERIC"]),
    ({"s3.schema.partition.affix.type": "PREFIX"}, ["s3.schema.partition.affix.type=PREFIX", "R6.6"]),
    ({"partitioner.max.open.files": "3"}, ["partitioner.max.open.files=3", "R3.6"]),
    ({"max.write.duration.ms": "1000"}, ["max.write.duration.ms=1000", "R9.1"]),
    ({"s3.object.tagging": "true"}, ["s3.object.tagging=true", "R9.4"]),
])
def test_a_config_it_cannot_run_is_refused_naming_the_property(extra, props):
    with pytest.raises(SinkConfigError) as e:
        SinkSettings.from_config({**BASE, **extra})
    for p in props:
        assert p in str(e.value)


def test_the_target_refuses_before_starting_anything(tmp_path):
    t = PySinkTarget(tmp_path, clock=ManualClock(T0), threaded=False)
    with pytest.raises(TargetError, match=r"rejected by the Python sink: errors\.tolerance=all"):
        t.start({**BASE, "errors.tolerance": "all"}, {"t": 1})
    assert t._moto is None


# --- R2.2 steps 4 and 6: value-schema changes within an ep rotate ---------------------------------

def test_schema_changes_rotate_under_none(sink):
    """R3.7: a schemaless/schema'd switch within an ep rotates; R14.2 (NONE): so does any other
    schema (here a name), while the same schema spelled with its defaults does not."""
    s1 = {"type": "struct", "fields": [{"field": "n", "type": "int64"}]}
    s1_spelled = {"type": "struct", "optional": False, "fields": [{"field": "n", "type": "int64", "optional": False}]}
    s2 = {**s1, "name": "v2"}
    t = sink({"flush.size": "10", **ENVELOPED})
    t.produce([rec(nos({"n": 0})), rec({"schema": s1, "payload": {"n": 1}}), rec({"schema": s1_spelled, "payload": {"n": 2}}),
               rec({"schema": s2, "payload": {"n": 3}}), rec(nos({"n": 4}))])
    t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.json": b'{"n":0}\n', D + "t+0+0000000001.json": b'{"n":1}\n{"n":2}\n',
                          D + "t+0+0000000003.json": b'{"n":3}\n'}
    assert t.committed() == {("t", 0): 4}


# --- converters: what the sink receives is what its converter reads ------------------------------

STRING_VALUES = {"value.converter": "org.apache.kafka.connect.storage.StringConverter"}
BYTEARRAY_VALUES = {"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}


def test_string_converter_values_are_written_as_json_strings(sink):
    t = sink({"flush.size": "2", **STRING_VALUES})
    t.produce([rec(b"seq=0"), rec(b'{"not":"parsed"}')])
    t.step(T0)
    assert objects(t) == {D + "t+0+0000000000.json": b'"seq=0"\n"{\\"not\\":\\"parsed\\"}"\n'}


def test_bytearray_converter_values_go_raw_into_bytearray_format_and_base64_into_json(sink):
    raw = sink({"flush.size": "2", "format.class": BYTES, **BYTEARRAY_VALUES})
    raw.produce([rec(b"\x00\x01"), rec(b"two")])
    raw.step(T0)
    assert objects(raw) == {D + "t+0+0000000000.bin": b"\x00\x01\ntwo\n"}
    js = sink({"flush.size": "1", **BYTEARRAY_VALUES})
    js.produce([rec(b"\x00\x01")])
    js.step(T0)
    assert objects(js) == {D + "t+0+0000000000.json": b'"AAE="\n'}


@pytest.mark.parametrize("value,match", [
    ({"n": 1}, 'requires "schema" and "payload"'),  # plain JSON under schemas.enable=true
    ({"schema": {"type": "float64"}, "payload": 1.5}, "Unknown schema type: float64"),  # JsonConverter says "double"
    (b"{not json", "not JSON"),
])
def test_a_value_its_converter_refuses_stops_the_task_before_anything_is_written(sink, value, match):
    t = sink({"flush.size": "1", **ENVELOPED})
    t.produce([rec({"schema": None, "payload": {"n": 0}}), rec(value)])
    with pytest.raises(TaskFailed, match=rf"offset 1: .*the value converter refused the record: .*{match}"):
        t.step(T0)
    assert objects(t) == {}  # Connect converts the whole batch before put()


def test_a_converter_the_sink_cannot_read_is_refused_naming_the_property():
    with pytest.raises(SinkConfigError, match=r"value.converter=io.confluent.connect.avro.AvroConverter"):
        SinkSettings.from_config({**BASE, "value.converter": "io.confluent.connect.avro.AvroConverter"})
