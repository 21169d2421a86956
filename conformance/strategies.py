"""Hypothesis strategies for connector configs, record streams and put schedules.

Each strategy is named after what it generates and shrinks toward the simplest case: fewer
records, the default partitioner, no rotation by time, no nulls.
"""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, Sequence

from hypothesis import strategies as st

from conformance import values
from conformance.scenario import VALUE_KINDS_BY_CONVERTER, FaultStep, Scenario, converter_kind, seq_value
from conformance.rebalance_shapes import with_rebalance_shapes
from conformance.testable import closing_a_file, fatal_after_a_commit, first_written, placed_offsets
from conformance.wire import with_worker_converters
from reference_impl.converters import BYTEARRAY_CONVERTER, JSON_CONVERTER, STRING_CONVERTER

T0 = 1714557600000  # 2024-05-01T10:00:00Z, an hour edge
JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
P = "io.confluent.connect.storage.partitioner."

VALUE_SCHEMA = {
    "type": "struct", "optional": False, "name": "order",
    "fields": [
        {"field": "region", "type": "string", "optional": True},
        {"field": "n", "type": "int32", "optional": False},
        {"field": "ts", "type": "int64", "optional": False},
    ],
}
VERSIONS = ["12.1.9", "11.0.8", "10.6.3", "10.6.0", "10.5.23", "10.0.4"]


@st.composite
def null_policies_and_siblings(draw: st.DrawFn) -> dict[str, str]:
    """behavior.on.null.values × stored keys × stored headers, as JSON (`write` needs keys, R12.3).
    Shrinks toward nulls ignored and no keys or headers."""
    nulls = draw(st.sampled_from(["ignore", "write", "fail"]))
    cfg = {"behavior.on.null.values": nulls}
    if nulls == "write" or draw(st.booleans()):
        cfg.update({"store.kafka.keys": "true", "keys.format.class": JSON_FORMAT})
    if draw(st.booleans()):
        cfg.update({"store.kafka.headers": "true", "headers.format.class": JSON_FORMAT})
    return cfg


@st.composite
def connector_configs(draw: st.DrawFn, scheduled: bool | None = None) -> dict[str, str]:
    """Flat connector maps across partitioners × extractors × rotation × null policies."""
    cfg: dict[str, str] = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": JSON_FORMAT,
        "s3.bucket.name": "bucket",
        "flush.size": str(draw(st.integers(1, 6))),
    }
    part = draw(st.sampled_from(["default", "field", "hourly", "daily", "time"]))
    if part == "field":
        cfg.update({"partitioner.class": P + "FieldPartitioner", "partition.field.name": "region"})
    elif part != "default":
        cls = {"hourly": "HourlyPartitioner", "daily": "DailyPartitioner", "time": "TimeBasedPartitioner"}[part]
        cfg.update({"partitioner.class": P + cls, "locale": "en-US",
                    "timezone": draw(st.sampled_from(["UTC", "Europe/Berlin", "Asia/Kolkata"])),
                    "timestamp.extractor": draw(st.sampled_from(["Record", "RecordField"])),
                    "timestamp.field": "ts"})
        if part == "time":
            cfg.update({"partition.duration.ms": str(draw(st.sampled_from([60000, 600000, 25200000]))),
                        "path.format": "'d'=dd/'h'=HH/'m'=mm"})
        if draw(st.booleans()):
            cfg["rotate.interval.ms"] = str(draw(st.sampled_from([1000, 3000, 60000])))
            if draw(st.booleans()):
                cfg["rotate.file.on.partition.change"] = "false"
    if scheduled if scheduled is not None else draw(st.booleans()):
        cfg.update({"rotate.schedule.interval.ms": str(draw(st.sampled_from([5000, 60000, 600000]))),
                    "timezone": cfg.get("timezone", "UTC")})
    fmt = draw(st.sampled_from(["json", "json", "json-gzip", "bytearray", "avro", "parquet"]))
    cfg["format.class"] = {"json": JSON_FORMAT, "json-gzip": JSON_FORMAT,
                           "bytearray": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
                           "avro": "io.confluent.connect.s3.format.avro.AvroFormat",
                           "parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat"}[fmt]
    if fmt == "json-gzip" or (fmt == "bytearray" and draw(st.booleans())):
        cfg["s3.compression.type"] = "gzip"
    cfg.update(draw(null_policies_and_siblings()))
    if draw(st.booleans()):
        cfg.update({"errors.tolerance": "all", "errors.deadletterqueue.topic.name": "dlq"})
    return cfg


@st.composite
def record_streams(draw: st.DrawFn, max_records: int = 24) -> list[dict[str, Any]]:
    """RECORDS.jsonl objects over 1–3 topic-partitions: late and out-of-order timestamps, hour
    edges, idle gaps, nulls, keys, Struct values."""
    tps = draw(st.lists(st.tuples(st.sampled_from(["t", "u"]), st.integers(0, 2)), min_size=1, max_size=3, unique=True))
    n = draw(st.integers(0, max_records))
    next_offset = {tp: draw(st.integers(0, 5)) for tp in tps}
    clock = T0 - draw(st.sampled_from([0, 500, 3_000]))
    out = []
    for _ in range(n):
        tp = draw(st.sampled_from(tps))
        step = draw(st.sampled_from([0, 100, 1000, 2500, 60_000, 3_600_000]))
        clock += step
        ts = clock - draw(st.sampled_from([0, 0, 0, 1500, 3_600_000]))  # late records
        value: Any
        kind = draw(st.integers(0, 11))
        if kind == 0:
            value = None
        elif kind == 1:
            value = f"text-{len(out)}"  # a string (StringConverter-like)
        elif kind == 2:
            value = {"schema": {"type": "bytes", "optional": True}, "payload": "AAEC"}  # bytes
        elif kind == 3:
            value = {"n": len(out), "region": "eu"}  # schemaless JSON
        else:
            value = {"schema": VALUE_SCHEMA,
                     "payload": {"region": draw(st.sampled_from(["eu", "us", None])), "n": len(out), "ts": ts}}
        out.append({"topic": tp[0], "partition": tp[1], "offset": next_offset[tp], "timestamp": ts,
                    "key": f"k{len(out)}", "value": value, "headers": [["h", "1"]]})
        next_offset[tp] += 1
    return out


@st.composite
def put_schedules(draw: st.DrawFn, n_records: int) -> list[dict[str, int]]:
    """put() calls carrying all records in order, with empty puts and idle gaps."""
    at = T0 + draw(st.integers(0, 10_000))
    puts, left = [], n_records
    while left > 0 or not puts:
        count = min(left, draw(st.integers(0, 5)))
        puts.append({"at": at, "count": count})
        left -= count
        at += draw(st.sampled_from([10, 1000, 5000, 61_000, 600_000]))
    for _ in range(draw(st.integers(0, 2))):
        puts.append({"at": at, "count": 0})
        at += draw(st.sampled_from([1000, 600_000]))
    return puts


# --- whole scenarios -------------------------------------------------------------------------


SINK_PARTITIONERS = ("default", "field", "hourly", "daily", "time")
FORMAT_CLASSES = {
    "json": JSON_FORMAT,
    "bytearray": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "avro": "io.confluent.connect.s3.format.avro.AvroFormat",
    "parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat",
}
# value formats per claim family: the Python sink writes JSON and ByteArray values; the
# Confluent connector all four
SINK_FORMATS = ("json", "bytearray")
CONFLUENT_FORMATS = ("json", "bytearray", "avro", "parquet")


def formats_for(target_kind: str) -> tuple[str, ...]:
    return CONFLUENT_FORMATS if target_kind == "confluent" else SINK_FORMATS


# the values a table sink can write into rows: Structs and maps (Iceberg's sink: "Messages should
# be converted to a struct or map"); text and bytes make no row, in no deployment of it. Its maps
# keep one shape (record_value's one_shape)
TABLE_VALUE_KINDS = ("map", "struct")


def value_kinds_for(target_kind: str) -> tuple[str, ...] | None:
    """The value kinds a target's deployments give it (None: every kind its config can write)."""
    return TABLE_VALUE_KINDS if target_kind == "iceberg" else None


# time zones: UTC, whole-hour and half-hour offsets with and without DST, and Lord Howe's
# half-hour DST change
ZONES = ("UTC", "Europe/Berlin", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu")
# TimeBasedPartitioner's path.format and the durations that go with it (R6.3)
TIME_PATHS = (
    ("'d'=dd/'h'=HH/'m'=mm", (600_000, 60_000, 3_600_000)),
    ("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", (3_600_000, 25_200_000)),
    ("'dt'=yyyy-MM-dd/'hr'=HH/", (3_600_000, 86_400_000)),
    ("YYYYMMdd'T'HHmm", (600_000, 1_800_000)),
    ("'year'=YYYY/'week'=ww", (604_800_000,)),
)
LOCALES = ("en-US", "en", "de-DE", "fr", "ja-JP")


@st.composite
def naming_options(draw: st.DrawFn, fmt: str) -> dict[str, str]:
    """R5's naming options, set in one config in three: topics.dir (blank or nested too),
    directory.delim, file.delim, filename.offset.zero.pad.width (widths above 10 too), and for
    ByteArray its extension and separator (R10.2). Shrinks toward the defaults."""
    if draw(st.integers(0, 2)) > 0:
        return {}
    cfg: dict[str, str] = {}
    for prop, choices in (("topics.dir", (None, "topics", "", "data/raw", "archive")),
                          ("directory.delim", (None, None, "_")),
                          ("file.delim", (None, "-", "_")),
                          ("filename.offset.zero.pad.width", (None, "1", "3", "12", "20"))):
        v = draw(st.sampled_from(choices))
        if v is not None:
            cfg[prop] = v
    if fmt == "bytearray":
        ext = draw(st.sampled_from((None, ".dat", ".raw.bytes")))
        sep = draw(st.sampled_from((None, "\r\n", "|", "<EOR>")))
        cfg.update({k: v for k, v in (("format.bytearray.extension", ext), ("format.bytearray.separator", sep))
                    if v is not None})
    return cfg


@st.composite
def sink_configs(draw: st.DrawFn, formats: tuple[str, ...] = SINK_FORMATS,
                 kinds: tuple[str, ...] | None = None) -> dict[str, str]:
    """Connector configs a sink runs in the suite, across the matrix: partitioners × timestamp
    extractors × time zones, path formats and locales × rotation (flush.size, rotate.interval.ms
    with and without partition-change rotation, rotate.schedule.interval.ms) × value formats and
    gzip × R5's naming options × null policies × keys/headers. Most configs rotate by record
    time or size alone, so the model gives an exact object set. Shrinks toward
    DefaultPartitioner, JSON, no gzip, the default names, nulls ignored, no keys or headers."""
    cfg = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": JSON_FORMAT,
        "s3.bucket.name": "sinkcheck",
        "flush.size": str(draw(st.integers(1, 8))),
    }
    part = draw(st.sampled_from(SINK_PARTITIONERS))
    if part == "field":
        # a field's values open a file each, and Confluent's connector holds s3.part.size of heap
        # per open file (value, keys, headers): at the default 25 MiB twenty values with keys and
        # headers outgrow the Connect worker's heap (10.6.18 --profile default: OutOfMemoryError)
        cfg.update({"partitioner.class": P + "FieldPartitioner",
                    "partition.field.name": draw(st.sampled_from(PARTITION_FIELD_LISTS)),
                    "s3.part.size": str(MIN_PART_SIZE)})
    elif part != "default":
        cls = {"hourly": "HourlyPartitioner", "daily": "DailyPartitioner", "time": "TimeBasedPartitioner"}[part]
        # the Wallclock extractor makes boundaries follow the wall clock: one config in six
        extractor = draw(st.sampled_from(["Record", "RecordField", "Record", "RecordField", "Record", "Wallclock"]))
        cfg.update({"partitioner.class": P + cls, "locale": draw(st.sampled_from(LOCALES)),
                    # New York twice: west of UTC, its local milliseconds are negative in 1970's first hours
                    "timezone": draw(st.sampled_from(ZONES + ("America/New_York",))), "timestamp.extractor": extractor,
                    "timestamp.field": "ts"})
        if part == "time":
            path, durations = draw(st.sampled_from(TIME_PATHS))
            cfg.update({"partition.duration.ms": str(draw(st.sampled_from(durations))), "path.format": path})
        if draw(st.integers(0, 2)) > 0:
            cfg["rotate.interval.ms"] = str(draw(st.sampled_from([3000, 1000, 60000])))
            if draw(st.integers(0, 3)) == 0:
                cfg["rotate.file.on.partition.change"] = "false"
    if draw(st.integers(0, 2)) == 1:  # a middle value: Hypothesis draws the ends of a range more often
        # wall-clock rotation (at-least-once, §16), with every partitioner and with size and
        # record-time rotation: short intervals so it fires within a run (the simulation's put
        # schedule makes its objects exact; real targets get constraints)
        cfg.update({"rotate.schedule.interval.ms": str(draw(st.sampled_from([2000, 3000, 5000]))),
                    "timezone": cfg.get("timezone", "UTC")})
    # ByteArrayFormat writes only bytes: not drawn where the target's values are no bytes (a table sink)
    fmt = draw(st.sampled_from([f for f in formats if not (f == "bytearray" and (part == "field" or
                                                                                 (kinds is not None and "bytes" not in kinds)))]))
    cfg["format.class"] = FORMAT_CLASSES[fmt]
    if fmt == "bytearray" and cfg.get("timestamp.extractor") == "RecordField":
        cfg["timestamp.extractor"] = "Record"  # bytes hold no field: every record would kill the task (R6.5)
    if fmt in ("json", "bytearray") and draw(st.booleans()):
        cfg["s3.compression.type"] = "gzip"
    if fmt == "json" and draw(st.integers(0, 3)) == 0:
        cfg["json.decimal.format"] = "NUMERIC"
    cfg.update(draw(naming_options(fmt)))
    cfg.update(draw(null_policies_and_siblings()))
    cfg.update(draw(converter_configs(cfg, kinds)))
    return cfg


# converters by kind (conformance.scenario.converter_kind), as a connector config states them
CONVERTER_CLASSES = {"json": JSON_CONVERTER, "json-schemas": JSON_CONVERTER, "string": STRING_CONVERTER,
                     "bytearray": BYTEARRAY_CONVERTER}
CONVERTER_KINDS = ("json", "json-schemas", "string", "bytearray")  # simplest first: shrinks toward schemaless JSON


def converter_config(which: str, kind: str) -> dict[str, str]:
    """`which`.converter (and its schemas.enable) for a converter kind."""
    out = {f"{which}.converter": CONVERTER_CLASSES[kind]}
    if kind.startswith("json"):
        out[f"{which}.converter.schemas.enable"] = "true" if kind == "json-schemas" else "false"
    return out


@st.composite
def converter_configs(draw: st.DrawFn, cfg: dict[str, str], kinds: tuple[str, ...] | None = None) -> dict[str, str]:
    """One key converter and one value converter for a connector: the value converter among
    those whose values this config can write (value_kinds), the key converter any of them.
    Shrinks toward schemaless JSON."""
    fits = [k for k in CONVERTER_KINDS if value_kinds({**cfg, **converter_config("value", k)}, kinds)]
    out = converter_config("value", draw(st.sampled_from(fits)))
    out.update(converter_config("key", draw(st.sampled_from(("string", "json", "bytearray")))))
    return out


def value_kinds(cfg: dict[str, str], only: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The kinds of values (conformance.scenario.seq_value) a config can write without its task
    dying on every record, among those its value converter gives: ByteArray needs bytes
    (R10.2), Avro and Parquet and FieldPartitioner need Structs (R10.4, R6.2), RecordField a
    Struct or a map holding the field (R6.5)."""
    fmt = cfg.get("format.class", JSON_FORMAT).rsplit(".", 1)[-1]
    if fmt == "ByteArrayFormat":
        wanted: tuple[str, ...] = ("bytes",)
    elif fmt in ("AvroFormat", "ParquetFormat") or cfg.get("partitioner.class", "").endswith("FieldPartitioner"):
        wanted = ("struct",)
    elif cfg.get("timestamp.extractor") == "RecordField" and not cfg.get("partitioner.class", "").endswith("DefaultPartitioner"):
        wanted = ("struct", "map")
    else:
        wanted = ("map", "struct", "string", "bytes")
    given = VALUE_KINDS_BY_CONVERTER[converter_kind(cfg)]
    return tuple(k for k in wanted if k in given and (only is None or k in only))


@functools.lru_cache(maxsize=None)
def zone_anchors(zone: str) -> tuple[int, ...]:
    """Instants worth putting records around for a config in `zone`: an hour edge in UTC, the
    zone's local midnight, and the zone's offset changes of 2024 (DST, to the minute)."""
    import datetime as dt
    import zoneinfo

    tz = dt.timezone.utc if zone.upper() == "UTC" else zoneinfo.ZoneInfo(zone)
    out = [T0, int(dt.datetime(2024, 5, 1, tzinfo=tz).timestamp() * 1000)]
    t = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    before = t.astimezone(tz).utcoffset()
    for _ in range(366 * 24):
        nxt = t + dt.timedelta(hours=1)
        if nxt.astimezone(tz).utcoffset() != before:
            while t.astimezone(tz).utcoffset() == before:
                t += dt.timedelta(minutes=1)
            out.append(int(t.timestamp() * 1000))
            before = t.astimezone(tz).utcoffset()
        t = nxt
    return tuple(out)


# instants around 1970-01-01T00:00Z: the epoch, half an hour before it, mid-1969, and 05:00Z (local
# midnight in New York, whose local epoch milliseconds are negative before it)
EPOCH_ANCHORS = (0, -1_800_000, -17_280_000_000 + 5_400_000, 18_000_000 - 1_500)


MIN_PART_SIZE = 5 * 1024 * 1024  # S3's smallest part but the last, and the connector's minimum

# FieldPartitioner's fields beside `region`: an optional one of each other type it encodes, null
# in some records (a null INT or BOOLEAN killed the task before storage-common 11.2.27: known bug
# confluent-field-partitioner-null); sink_records adds the ones a config names to the schema
PARTITION_FIELDS: dict[str, dict[str, Any]] = {
    "tier": {"type": "int32", "optional": True}, "rank": {"type": "int8", "optional": True},
    "level": {"type": "int16", "optional": True}, "big": {"type": "int64", "optional": True},
    "vip": {"type": "boolean", "optional": True},
}
PARTITION_FIELD_LISTS = ("region", "region", "region", "tier", "vip", "region,tier", "rank", "level,vip", "big")


def with_partition_fields(schema: dict[str, Any], cfg: dict[str, str]) -> dict[str, Any]:
    """The value schema with the fields FieldPartitioner reads (PARTITION_FIELDS) it lacks."""
    if not cfg.get("partitioner.class", "").endswith("FieldPartitioner"):
        return schema
    have = {f["field"] for f in schema["fields"]}
    more = [{"field": n, **PARTITION_FIELDS[n]} for n in (x.strip() for x in cfg.get("partition.field.name", "").split(","))
            if n in PARTITION_FIELDS and n not in have]
    return {**schema, "fields": schema["fields"] + more} if more else schema


# the regions FieldPartitioner encodes: plain, null (`region=null`) and one with a '/' inside
# (values are not escaped: it makes a directory level of its own, R6.2)
REGIONS = ("eu", "us", "eu", "us", None, "eu/west")


@st.composite
def record_value(draw: st.DrawFn, kind: str, seq: int, ts: int, converter: str, schema: dict[str, Any],
                 one_shape: bool = False, zone: str = "UTC") -> Any:
    """A value of `kind` (conformance.scenario.seq_value) carrying `seq`, in the notation of the
    value converter: Structs of `schema`, schemaless maps with nested extras, text, bytes.
    `one_shape`: schemaless maps keep the fields and types of `schema` from record to record,
    as the topic a table sink reads does (a field that turns from a map into text stops it).
    A `ts` string is in one of RecordField's forms, offset-less ones as wall times of `zone`."""
    region = draw(st.sampled_from(REGIONS))
    if kind == "struct":
        return {"schema": schema, "payload": draw(values.struct_payload(schema, seq, region, ts, zone))}
    if kind == "map" and one_shape:
        # a map with other than string keys has no schemaless shape of its own: JsonConverter
        # writes it as [key, value] pairs, arrays of mixed types that no table column holds
        pairs = {f["field"] for f in schema["fields"] if f["type"] == "map" and f["keys"]["type"] != "string"}
        payload = draw(values.struct_payload(schema, seq, region, ts))
        return {k: v for k, v in payload.items() if k not in pairs}
    if kind == "map":
        extras = draw(values.schemaless_extras())
        ts_value: Any = draw(values.ts_texts(ts, zone)) if draw(st.integers(0, 2)) == 0 else ts
        return {"seq": seq, "region": region, "ts": ts_value, **extras}
    if kind == "string" and draw(st.booleans()):
        text = f"seq={seq} {draw(st.sampled_from(values.TEXTS))}"
        return {"schema": {"type": "string", "optional": False}, "payload": text} if converter == "json-schemas" else text
    return seq_value(seq, kind, {"region": region, "ts": ts}, None, converter)


@st.composite
def sink_records(draw: st.DrawFn, topics: dict[str, int], max_records: int = 40,
                 cfg: dict[str, str] | None = None, kinds: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Records with a `seq` in every value (how checkers find them in S3), of the kinds the
    config can write (value_kinds), across Connect's types (conformance.values): timestamps
    late and out of order, around hour edges, local midnight and DST changes of the config's
    zone, with idle gaps; keys null, text, maps or Structs; headers none, one or several (text,
    bytes, null); null values in some streams (rarely where nulls kill the task). One stream in
    three lives around 1970 (value times before it too); half step finely across rotate.interval.ms."""
    cfg = with_worker_converters(cfg or {})
    table = kinds is not None  # a table sink's value kinds (value_kinds_for): its maps keep one shape
    kinds = value_kinds(cfg, kinds)
    if not kinds:
        raise ValueError(f"value.converter={converter_kind(cfg)} gives no value this config can write "
                         f"({cfg.get('format.class', JSON_FORMAT).rsplit('.', 1)[-1]}, "
                         f"{cfg.get('partitioner.class', 'DefaultPartitioner').rsplit('.', 1)[-1]})")
    converter, key_kind = converter_kind(cfg), converter_kind(cfg, "key")
    keys_stored = cfg.get("store.kafka.keys", "false").lower() == "true"
    headers_stored = cfg.get("store.kafka.headers", "false").lower() == "true"
    zone = cfg.get("timezone", "UTC") or "UTC"
    record_field = cfg.get("timestamp.extractor") == "RecordField"
    # RecordField reads the ts field: there its text forms come in one schema in two
    schema = with_partition_fields(draw(values.value_schemas(("string", "int64", "timestamp", "string") if record_field else
                                                             ("int64", "timestamp", "string"))), cfg)
    n = draw(st.integers(1, max_records))
    tps = [(t, p) for t, k in topics.items() for p in range(k)]
    # one stream in three lives around 1970: Java's division truncates toward zero there (R6.3)
    epoch = draw(st.integers(0, 2)) == 0
    anchor = draw(st.sampled_from(EPOCH_ANCHORS if epoch else zone_anchors(zone)))
    clock = anchor - draw(st.sampled_from([0, 1500, 60_000, 3_600_000]))
    # fine steps cross rotate.interval.ms (1 s, 3 s) between the records of one bucket, so a
    # window's base record time, and what resets it (R3.1 step 4), decides the files
    steps = (0, 100, 1000, 2500, 60_000, 3_600_000) if draw(st.booleans()) else (0, 400, 700, 1100, 1300, 2600)
    fatal_nulls = cfg.get("behavior.on.null.values", "fail").lower() == "fail"
    with_nulls = draw(st.integers(0, 3)) == 0 if fatal_nulls else draw(st.booleans())
    # where stored keys must not be null (R11.4), a null key comes in one stream in five
    null_keys = not keys_stored or draw(st.integers(0, 4)) == 0
    out = []
    for seq in range(n):
        t, p = draw(st.sampled_from(tps))
        clock += draw(st.sampled_from(steps))
        ts = clock - draw(st.sampled_from([0, 0, 0, 1500, 3_600_000]))
        # a stream of tombstones only writes nothing a checker could compare: its last record has a value
        if with_nulls and draw(st.integers(0, 7)) == 0 and (seq < n - 1 or any(r["value"] is not None for r in out)):
            value = None
        else:
            value = draw(record_value(draw(st.sampled_from(kinds)), seq, ts, converter, schema, table, zone))
        # a Kafka record timestamp is never negative (a value's time field can be): one before
        # 1970 keeps its time of day on 1970-01-01; and never 0, which librdkafka sends as "now"
        out.append({"topic": t, "partition": p, "timestamp": max(1, ts % 86_400_000 if ts < 0 else ts),
                    "key": draw(values.record_keys(key_kind, seq, null_keys)), "value": value,
                    "headers": draw(values.header_lists(seq, headers_stored))})
    return first_written(out, keys_stored, headers_stored, fatal_nulls, key_kind)


FAULT_KINDS = ("crash", "crash-mid-upload", "lost-commit", "s3-503", "s3-500", "s3-error-200", "s3-drop-response",
               "zombie", "rebalance", "config-update")
# How long a generated schedule waits for an S3 rule to fire before going on. The rules kept
# (that_can_fire) have uploads to fire on, so the bound is rarely reached; on a real Kafka Connect
# worker the first upload after a crash waits for the dead consumer's session to expire and the
# group to rebalance (seen: over 6 s, which left a zombie's rule unfired and the run unknown).
FIRE_WAIT_S = 30.0


@st.composite
def one_fault(draw: st.DrawFn, n_records: int, index: int) -> list[FaultStep]:
    """One fault of FAULT_KINDS as the steps that stage it, placed after a drawn number of
    records. `index` makes the names of its S3 rules unique within the schedule."""
    kind = draw(st.sampled_from(FAULT_KINDS))
    at = draw(st.integers(0, n_records))
    name = f"f{index}-{kind}"
    if kind == "crash":
        # settled first (files committed, an open tail held) or at once (mid-poll)
        return ([FaultStep(at, "quiet", {"seconds": 30})] if draw(st.booleans()) else []) + [FaultStep(at, "crash")]
    if kind == "crash-mid-upload":
        # the k-th UploadPart hangs; the sink dies while it waits; the hung request then goes
        # on (or not) after the restart has begun
        k = draw(st.integers(1, 3))
        later = draw(st.integers(min(at + 1, n_records), n_records))  # records to upload come first
        return [FaultStep(at, "s3", {"operation": "UploadPart", "action": "hang", "nth": k, "name": name}),
                FaultStep(later, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(later, "crash"), FaultStep(later, "release", {"rule": name})]
    if kind == "lost-commit":
        # CompleteMultipartUpload is applied but its answer never arrives; the sink dies before
        # it commits the offset, so the restart uploads the same file again
        later = draw(st.integers(min(at + 1, n_records), n_records))
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response",
                                     "nth": draw(st.integers(1, 2)), "name": name}),
                FaultStep(later, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(later, "crash")]
    if kind in ("s3-503", "s3-500"):
        op = draw(st.sampled_from(["CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"]))
        return [FaultStep(at, "s3", {"operation": op, "action": "fail", "status": int(kind[3:]),
                                     "nth": draw(st.integers(1, 2)), "name": name})]
    if kind == "s3-error-200":
        # S3 answers Complete with 200 at once and the outcome later: the error may come after
        # the upload completed (forward) or instead of it
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "error-200", "status": 200,
                                     "nth": draw(st.integers(1, 2)), "forward": draw(st.booleans()), "name": name})]
    if kind == "s3-drop-response":
        # S3 applies the request and the answer never reaches the sink (a broken connection)
        op = draw(st.sampled_from(["UploadPart", "CompleteMultipartUpload", "CreateMultipartUpload"]))
        return [FaultStep(at, "s3", {"operation": op, "action": "drop-response", "nth": draw(st.integers(1, 2)),
                                     "name": name})]
    if kind == "zombie":
        # paused mid-complete past the poll interval, another member takes over, then the
        # paused one wakes up and finishes what it was doing; the records that close the file it
        # hangs in come between the rule and the pause
        hung = draw(st.integers(min(at + 1, n_records), n_records))
        later = draw(st.integers(hung, n_records))
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 1,
                                     "name": name}),
                FaultStep(hung, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(hung, "pause"), FaultStep(later, "wait", {"seconds": 1.0}),
                FaultStep(later, "release", {"rule": name}), FaultStep(later, "resume")]
    if kind == "rebalance":
        return [FaultStep(at, "rebalance")]
    # config-update: a new flush.size mid-stream (C3: boundaries move, so exactly-once is off)
    return [FaultStep(at, "update-config", {"config": {"flush.size": str(draw(st.integers(1, 8)))}})]


@st.composite
def fault_schedules(draw: st.DrawFn, n_records: int, max_faults: int = 2) -> list[FaultStep]:
    """0–`max_faults` faults (FAULT_KINDS): a crash, a crash at the k-th UploadPart, a lost
    offset commit, 503/500 on an S3 call, a 200 carrying an error on Complete, a response
    dropped after S3 applied the request, a zombie, a rebalance, a config update. Shrinks toward
    fewer faults and earlier ones."""
    steps: list[FaultStep] = []
    for i in range(draw(st.integers(0, max_faults))):
        steps += draw(one_fault(n_records, i))
    return sorted(steps, key=lambda f: f.after)  # stable: a fault's own steps keep their order


# pauses between records where the wall clock decides boundaries: a put then comes at a time no
# boundary is aligned with (the simulation starts 250 ms past a second), and a file opens there
PACING_S = (0.35, 0.8, 1.3, 2.15)


def wall_clock_config(cfg: dict[str, str]) -> bool:
    """Whether the wall clock decides a config's boundaries (scheduled rotation, the Wallclock
    extractor of a time-based partitioner)."""
    time_based = cfg.get("partitioner.class", "").rsplit(".", 1)[-1] in (
        "TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner")
    return (int(cfg.get("rotate.schedule.interval.ms", "-1") or -1) > 0
            or (time_based and cfg.get("timestamp.extractor", "Wallclock") == "Wallclock"))


@st.composite
def pacing(draw: st.DrawFn, cfg: dict[str, str], n_records: int) -> list[FaultStep]:
    """0–3 `wait` steps between records of a wall-clock config, so its puts spread over
    unaligned times; under scheduled rotation, one time in three, short gaps between all the
    records (a steady stream across an interval where enough records come), and a last wait past
    a whole interval, so a boundary commits what is open before the run ends (and an S3 rule on
    that upload fires). None elsewhere (they would only slow a real run)."""
    if not wall_clock_config(cfg):
        return []
    interval_ms = int(cfg.get("rotate.schedule.interval.ms", "-1") or -1)
    steps = [FaultStep(draw(st.integers(1, max(1, n_records))), "wait", {"seconds": draw(st.sampled_from(PACING_S))})
             for _ in range(draw(st.integers(0, 3)))]
    if interval_ms > 0 and n_records > 2 and draw(st.integers(0, 2)) == 2:  # shrinks to none
        # a steady stream across a whole interval: records keep coming in short gaps, so a put
        # holding records meets a boundary with a file open before an empty put (one per offset
        # flush) rotates it (11.0.1 dies there without a bare time-based partitioner: known bug
        # confluent-scheduled-rotation-npe; a single pause mostly ends after an empty put)
        gap = round(max(0.25, min(1.0, (interval_ms / 1000 + 0.5) / (n_records - 1))), 2)
        steps += [FaultStep(i, "wait", {"seconds": gap}) for i in range(1, n_records)]
    if interval_ms > 0:
        steps.append(FaultStep(n_records, "wait", {"seconds": interval_ms / 1000 + 0.5}))
    return steps


@st.composite
def scenarios(draw: st.DrawFn, max_records: int = 40, with_faults: bool = True,
              formats: tuple[str, ...] = SINK_FORMATS, connector: dict[str, str] | None = None,
              kinds: tuple[str, ...] | None = None) -> Scenario:
    """A whole scenario: config (or the user's `connector`), topics, records that fit it,
    faults. Shrinks toward fewer records, no faults and the simplest config."""
    cfg = with_worker_converters(connector) if connector is not None else draw(sink_configs(formats, kinds))
    # one draw in six has four partitions shared by two tasks (shrinks to one task on one): the
    # group's members then outlive a restart of one of them
    topics = {"orders": draw(st.sampled_from((1, 2, 1, 2, 1, 4) if connector is None else (1, 2)))}
    if topics["orders"] == 4:
        cfg = {**cfg, "tasks.max": "2"}
    records = closing_a_file(cfg, draw(sink_records(topics, max_records, cfg, kinds)))
    records, fatal_put = fatal_after_a_commit(cfg, records)
    faults = draw(fault_schedules(len(records))) if with_faults else []
    if with_faults:
        # the sink settles on what it can write before the record that kills its task comes
        settle = [FaultStep(fatal_put, "quiet", {"seconds": 30})] if fatal_put is not None else []
        faults = sorted(settle + faults + draw(pacing(cfg, len(records))), key=lambda f: f.after)
    # the rebalance shapes are drawn last, so the draws above stay what they were for a seed;
    # the rules kept are those that can fire around every step, theirs included
    sc = with_rebalance_shapes(draw, Scenario("generated", cfg, topics, records, faults), connector is None, with_faults)
    return replace(sc, faults=that_can_fire(sc.connector, sc.records, sc.faults))


S3_UPLOAD_OPERATIONS = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")


def uploads_after(cfg: dict[str, str], records: list[dict[str, Any]], batch_starts: Sequence[int] = ()) -> list[int]:
    """For each position i in the stream (0..n), how many multipart uploads the model says the
    sink makes when records produced from position i on arrive (each value/keys/headers file is
    one upload, made when the record whose processing commits it arrives); [] where the model
    rejects the config. Where the wall clock decides boundaries (Wallclock, scheduled rotation) it counts
    what the records close by themselves (one put: flush.size and the other record-driven
    rules), and under scheduled rotation also one file per topic-partition that still gets a
    record from i on (a boundary commits what is pending) where the task does not die: a lower
    bound either way."""
    from conformance.connector_config import sink_config
    from conformance.wire import sink_records as to_sink_records
    from reference_impl.config import ConfigError
    from reference_impl.model import PutSpec, expect

    try:
        placed = placed_offsets(records)
        config = sink_config(cfg)
        sink_recs = to_sink_records(cfg, records, placed)
        exp = expect(config, sink_recs)
        wallclock = exp.constraints is not None
        if wallclock:
            exp = expect(config, sink_recs, [PutSpec(T0, len(records))])
    except (ConfigError, ValueError):
        return []
    per_file = 1 + (config.store_kafka_keys and 1) + (config.store_kafka_headers and 1)
    index = {(r["topic"], int(r["partition"]), off): i for i, (r, off) in enumerate(zip(records, placed))}
    reaches_writer = [r.get("value") is not None or config.behavior_on_null_values == "write" for r in records]

    def trigger(o: Any) -> int:
        """The position of the record whose processing commits `o` (R3.1: a rotation commits
        every open file of the topic-partition at once): the last record written for a
        flush.size rotation, else the next record that reaches the writer."""
        if o.rotation.startswith("R3.8"):
            return index[(o.topic, o.partition, o.committed_offset - 1)]
        later = [i for (t, p, off), i in index.items()
                 if (t, p) == (o.topic, o.partition) and off >= o.committed_offset and reaches_writer[i]]
        return min(later, default=len(records))

    dies = exp.task_failure
    alive = len(records) if dies is None or dies.offset is None else next(
        (i for i, (r, off) in enumerate(zip(records, placed))
         if (r["topic"], int(r["partition"]), off) == (dies.topic, dies.partition, dies.offset)), len(records))
    # the batch the task dies in (`batch_starts`: where the schedule's steps cut the stream):
    # no later put comes to commit what it holds on a scheduled boundary
    # the model names one failing writer (R1.4 shuffles them): the task dies in the first batch
    # holding any writer's failing record
    first_death = min([alive] + [first_failure(config, [(i, sr) for i, sr in enumerate(sink_recs)
                                                        if (sr.topic, sr.partition) == tp], index, records)
                                 for tp in {(sr.topic, sr.partition) for sr in sink_recs}] if dies is not None else [alive])
    dying_batch = alive if dies is None else max((b for b in batch_starts if b <= first_death), default=0)
    if dies is not None and dies.rule in ("R12.1", "R12.2"):
        # a fatal null fails its put before any writer runs (R1.4): its batch is never written
        alive = dying_batch
    closed_at = []  # once per upload
    for o in exp.objects:
        if not o.certain:
            continue  # a file of the put the task dies in may never be uploaded
        closed_at += [trigger(o)] * ((1 if o.value_object else 0) + len(o.sibling_keys))
    closed_at = [c for c in closed_at if c < alive]
    counts = [sum(1 for c in closed_at if c >= i) for i in range(len(records) + 1)]
    # a boundary commits what is pending before the batch the task dies in (the put that kills
    # it may come before any boundary of its own batch)
    if wallclock and config.rotate_schedule_interval_ms > 0:
        for i in range(len(records) + 1):
            pending = {(r["topic"], r["partition"]) for r in records[i:dying_batch] if r.get("value") is not None}
            counts[i] = max(counts[i], len(pending) * per_file)
    return counts


def first_failure(config: Any, tp_records: list[tuple[int, Any]], index: dict, records: list[dict[str, Any]]) -> int:
    """The stream position of the record one topic-partition's writer dies at, alone (the model
    on its records in one put), or past the end."""
    from reference_impl.model import PutSpec, expect

    f = expect(config, [r for _, r in tp_records], [PutSpec(T0, len(tp_records))]).task_failure
    if f is None or f.offset is None:
        return len(records)
    return index.get((f.topic, f.partition, f.offset), len(records))


def dies_at(cfg: dict[str, str], records: list[dict[str, Any]]) -> int | None:
    """The stream position of the first record that kills the task (a fatal null, a writer's
    own failure: each writer alone, as R1.4 shuffles them), or None."""
    from conformance.connector_config import sink_config
    from conformance.wire import sink_records as to_sink_records
    from reference_impl.config import ConfigError
    from reference_impl.model import PutSpec, expect

    try:
        placed = placed_offsets(records)
        config = sink_config(cfg)
        sink_recs = to_sink_records(cfg, records, placed)
        dies = expect(config, sink_recs, [PutSpec(T0, len(records))]).task_failure
    except (ConfigError, ValueError):
        return None
    if dies is None or dies.offset is None:
        return None
    index = {(r["topic"], int(r["partition"]), off): i for i, (r, off) in enumerate(zip(records, placed))}
    return min([index.get((dies.topic, dies.partition, dies.offset), len(records))]
               + [first_failure(config, [(i, sr) for i, sr in enumerate(sink_recs) if (sr.topic, sr.partition) == tp],
                                index, records) for tp in {(sr.topic, sr.partition) for sr in sink_recs}])


# steps after which the sink starts over from the committed offsets
RESTARTS = ("crash", "restart", "restart-task", "restart-connector", "kill-worker", "rebalance", "update-config")
POLLS = ("quiet", "wait", "wait-fired", "pause")


def dying_restart(cfg: dict[str, str], records: list[dict[str, Any]], faults: list[FaultStep]) -> int | None:
    """The index of the first restart whose first put reads the record that kills the task: it
    re-reads from the committed offsets everything produced until it first polls (the next step
    that lets it), dies before any write (R1.4), and nothing is uploaded after it."""
    death = dies_at(cfg, records)
    if death is None:
        return None
    n = len(records)
    for j, f in enumerate(faults):
        if f.kind in RESTARTS:
            polled = next((min(g.after, n) for g in faults[j + 1:] if g.kind in POLLS), n)
            if death < polled:
                return j
    return None


def before_restart(faults: list[FaultStep], i: int, dead: int, n: int) -> int | None:
    """Where the uploads the rule `faults[i]` can fire on end when the restart `faults[dead]`
    dies at once: the records the sink read at the last step before it that lets it poll (or
    at the rule's own wait before it), and before a hang that holds the sink at the restart (a
    crash mid-upload's); None: no upload comes for it (armed after the restart, or nothing
    lets the sink read between)."""
    if i > dead:
        return None
    names = {str(f.params.get("name")): j for j, f in enumerate(faults) if f.kind == "s3"}
    waited = {str(f.params.get("rule")): j for j, f in enumerate(faults) if f.kind == "wait-fired"}
    released = {str(f.params.get("rule")): j for j, f in enumerate(faults) if f.kind == "release"}
    # a hang that fired before the restart and is released after it parks the sink from its firing on
    holds = [j for name, j in names.items() if faults[j].params.get("action") == "hang" and j != i
             and waited.get(name, len(faults)) < dead < released.get(name, len(faults))]
    if any(j < i for j in holds):
        return None
    bound = min([dead] + holds)
    own = waited.get(str(faults[i].params.get("name")))
    if own is not None and own < bound:
        return min(faults[own].after, n)
    polls = [min(f.after, n) for f in faults[i + 1:bound] if f.kind in POLLS]
    return polls[-1] if polls else None


def that_can_fire(cfg: dict[str, str], records: list[dict[str, Any]], faults: list[FaultStep]) -> list[FaultStep]:
    """The schedule without S3 rules that cannot fire: a rule on an upload request armed after
    `after` records waits for its `nth` matching request, and the model says how many uploads
    come after that point (and before the step that waits for the rule, if one does). Such a
    rule is made to wait for the last of them, or, where none comes, dropped with the steps that
    wait for or release it (a crash it staged stays). A schedule whose rule never fires would end
    `unknown` for a reason of the generator's making."""
    # where the sink has read what came before: only a step that lets it poll (a fault that
    # restarts it at once may come before it read anything, its successor reads it all again)
    cuts = sorted({min(f.after, len(records)) for f in faults if f.kind in POLLS})
    counts = uploads_after(cfg, records, cuts)
    updated = {**cfg, **{str(k): str(v) for f in faults if f.kind == "update-config"
                         for k, v in dict(f.params.get("config", {})).items()}}
    if counts and updated != cfg:
        # the records before an update may be read only after it (no poll came between), and
        # are then written under the new config: count what both configs upload
        after_update = uploads_after(updated, records, cuts)
        counts = [min(a, b) for a, b in zip(counts, after_update)] if after_update else counts
    if not counts:
        return faults
    n = len(records)
    # a rule a step waits for must fire on uploads of records produced before that wait
    waits = {str(f.params.get("rule")): min(f.after, n) for f in faults if f.kind == "wait-fired"}
    dropped: set[str] = set()
    # a hang parks the sink: a second hang armed before the first is released waits for
    # requests that never come while it is parked
    releases = {str(f.params.get("rule")): i for i, f in enumerate(faults) if f.kind == "release"}
    hung_until = -1
    # after a restart that dies at once only the uploads before it come (before_restart)
    dead = dying_restart(cfg, records, faults)
    out = []
    for i, f in enumerate(faults):
        until = waits.get(str(f.params.get("name")))
        if dead is not None and f.kind == "s3" and f.params.get("operation") in S3_UPLOAD_OPERATIONS:
            until = before_restart(faults, i, dead, n)
            if until is None:
                dropped.add(str(f.params.get("name")))
                continue
        if f.kind == "s3" and f.params.get("action") == "hang":
            if i < hung_until:
                dropped.add(str(f.params.get("name")))
                continue
            hung_until = releases.get(str(f.params.get("name")), len(faults))
        if f.kind == "s3" and f.params.get("operation") in S3_UPLOAD_OPERATIONS:
            name = str(f.params.get("name"))
            available = counts[min(f.after, n)] - (counts[until] if until is not None else 0)
            if available == 0:
                dropped.add(str(f.params.get("name")))
                continue
            if int(f.params.get("nth", 1)) > available:
                f = FaultStep(f.after, f.kind, {**f.params, "nth": available})
        elif f.kind in ("wait-fired", "release") and str(f.params.get("rule")) in dropped:
            continue
        out.append(f)
    if any(n.endswith("-zombie") for n in dropped):  # a zombie without its hung Complete is no zombie
        out = [f for f in out if f.kind not in ("pause", "resume")]
    return out
