"""Strategies for connector configs: partitioners, formats, naming options, converters, and the
value kinds a config's converters carry."""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from conformance.inputs.scenario import VALUE_KINDS_BY_CONVERTER, converter_kind
from reference_impl.converters import (AVRO_CONVERTER, BYTEARRAY_CONVERTER, JSON_CONVERTER, PROTOBUF_CONVERTER,
                                       STRING_CONVERTER)


JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
P = "io.confluent.connect.storage.partitioner."
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


# --- whole scenarios -------------------------------------------------------------------------


SINK_PARTITIONERS = ("default", "field", "hourly", "daily", "time")
FORMAT_CLASSES = {
    "json": JSON_FORMAT,
    "bytearray": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
    "avro": "io.confluent.connect.s3.format.avro.AvroFormat",
    "parquet": "io.confluent.connect.s3.format.parquet.ParquetFormat",
}
# value formats per claim family: the Confluent connector and the Python sink write all four;
# a sink of its own declares JSON and ByteArray
SINK_FORMATS = ("json", "bytearray")
CONFLUENT_FORMATS = ("json", "bytearray", "avro", "parquet")


def formats_for(target_kind: str) -> tuple[str, ...]:
    return CONFLUENT_FORMATS if target_kind in ("confluent", "pysink") else SINK_FORMATS


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
                 kinds: tuple[str, ...] | None = None, evolving: tuple[str, str] | None = None) -> dict[str, str]:
    """Connector configs a sink runs in the suite, across the matrix: partitioners × timestamp
    extractors × time zones, path formats and locales × rotation (flush.size, rotate.interval.ms
    with and without partition-change rotation, rotate.schedule.interval.ms) × value formats and
    gzip × R5's naming options × null policies × keys/headers. Most configs rotate by record
    time or size alone, so the model gives an exact object set. Shrinks toward
    DefaultPartitioner, JSON, no gzip, the default names, nulls ignored, no keys or headers.
    `evolving` (value converter kind, schema.compatibility) asks for that converter and mode
    where the drawn format can take them (a profile's top-up of a pair its draws missed)."""
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
    # the targets that write Avro run a Schema Registry too: their values come from AvroConverter now and then
    cfg.update(draw(converter_configs(cfg, kinds, registry="avro" in formats, protobuf=formats == CONFLUENT_FORMATS,
                                      prefer=evolving[0] if evolving else None)))
    # schema.compatibility is Confluent's (the sinks given its formats read it): where values carry
    # a schema with versions, the producers move through versions of it under each mode (R14)
    if formats == CONFLUENT_FORMATS and converter_kind(cfg) in EVOLVING_CONVERTERS and evolving:
        cfg["schema.compatibility"] = evolving[1]
    elif formats == CONFLUENT_FORMATS and converter_kind(cfg) in EVOLVING_CONVERTERS and draw(
            st.integers(0, 4)) > 0:
        cfg["schema.compatibility"] = draw(st.sampled_from(COMPATIBILITY_SPELLINGS))
    return cfg


# the value converters whose records carry a schema with versions (R14)
EVOLVING_CONVERTERS = ("json-schemas", "avro", "protobuf")
COMPATIBILITY_MODES = ("NONE", "BACKWARD", "FORWARD", "FULL")
# the modes, and a spelling a pasted config has that the connector reads as NONE (R14.6)
COMPATIBILITY_SPELLINGS = ("NONE", "BACKWARD", "FORWARD", "FULL", "BACKWARD", "FORWARD", "FULL", "backward")


# converters by kind (conformance.inputs.scenario.converter_kind), as a connector config states them
CONVERTER_CLASSES = {"json": JSON_CONVERTER, "json-schemas": JSON_CONVERTER, "string": STRING_CONVERTER,
                     "bytearray": BYTEARRAY_CONVERTER, "avro": AVRO_CONVERTER, "protobuf": PROTOBUF_CONVERTER}
CONVERTER_KINDS = ("json", "json-schemas", "string", "bytearray", "avro", "protobuf")  # simplest first: shrinks toward schemaless JSON
# where a deployment's registry is; sinkcheck's targets point the converter at their own
REGISTRY_URL = "http://schema-registry:8081"


def converter_config(which: str, kind: str) -> dict[str, str]:
    """`which`.converter (and its schemas.enable, or its registry) for a converter kind."""
    out = {f"{which}.converter": CONVERTER_CLASSES[kind]}
    if kind.startswith("json"):
        out[f"{which}.converter.schemas.enable"] = "true" if kind == "json-schemas" else "false"
    if kind in ("avro", "protobuf"):
        out[f"{which}.converter.schema.registry.url"] = REGISTRY_URL
    return out


@st.composite
def converter_configs(draw: st.DrawFn, cfg: dict[str, str], kinds: tuple[str, ...] | None = None,
                      registry: bool = False, protobuf: bool = False, prefer: str | None = None) -> dict[str, str]:
    """One key converter and one value converter for a connector: the value converter among
    those whose values this config can write (value_kinds), the key converter any of them;
    AvroConverter values where the target runs a Schema Registry (`registry`), and
    ProtobufConverter values too where the target reads them (`protobuf`: Confluent's connector
    and the Python sink); `prefer`'s kind where it fits. Shrinks toward schemaless JSON."""
    fits = [k for k in CONVERTER_KINDS if (registry or k != "avro") and ((registry and protobuf) or k != "protobuf")
            and value_kinds({**cfg, **converter_config("value", k)}, kinds)]
    out = converter_config("value", prefer if prefer in fits else draw(st.sampled_from(fits)))
    out.update(converter_config("key", draw(st.sampled_from(("string", "json", "bytearray")))))
    return out


def value_kinds(cfg: dict[str, str], only: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The kinds of values (conformance.inputs.scenario.seq_value) a config can write without its task
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


MIN_PART_SIZE = 5 * 1024 * 1024  # S3's smallest part but the last, and the connector's minimum

# FieldPartitioner's fields beside `region`: an optional one of each other type it encodes, null
# in some records (a null INT or BOOLEAN killed the task before storage-common 11.2.27: known bug
# confluent-field-partitioner-null); sink_records adds the ones a config names to the schema
PARTITION_FIELDS: dict[str, dict[str, Any]] = {
    "tier": {"type": "int32", "optional": True}, "rank": {"type": "int8", "optional": True},
    "level": {"type": "int16", "optional": True}, "big": {"type": "int64", "optional": True},
    "vip": {"type": "boolean", "optional": True},
    # a nested Struct a dotted name reaches (storage-common 12+: `origin.zone=…`): never null, a
    # null level between kills the task; its text needs no escaping in a path and gets none
    # (values.PATH_TEXTS: a space, '=', '/')
    "origin": {"type": "struct", "name": "origin", "optional": False,
               "fields": [{"field": "zone", "type": "string", "optional": False},
                          {"field": "depot", "type": "int32", "optional": True}]},
}
# field lists as users write them: one field, several in the order the user chose (not sorted:
# a sink that sorts them names other paths), dotted paths into a nested Struct
PARTITION_FIELD_LISTS = ("region", "region", "tier,region", "vip", "region,tier", "vip,level,region", "tier",
                         "origin.zone,tier", "rank", "level,vip", "big", "region,origin.depot")


def partition_field_roots(cfg: dict[str, str]) -> tuple[str, ...]:
    """The top-level fields a config's partition.field.name reads (a dotted path's first name)."""
    return tuple(dict.fromkeys(x.strip().split(".")[0] for x in cfg.get("partition.field.name", "").split(",")
                               if x.strip()))
