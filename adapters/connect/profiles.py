"""Connector profiles: for each S3 sink plugin, its connector class, how to point it at the
local S3 server (endpoint, bucket, credentials), where its jars come from and how it names
objects, and which of a Confluent config's properties have a counterpart in it.

What is done with a connector config for a profile (a user's own filled with the S3 server's
keys, a scenario's translated for another sink, a default one, redaction) is in
adapters.connect.connector_config.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Mapping

from adapters.processes.connect_worker import JSON_CONVERTER


@dataclass(frozen=True)
class S3Location:
    """Where and how a connector reaches the S3 server."""

    endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"


@dataclass(frozen=True)
class Counterpart:
    """One property of a sink set from a scenario's (Confluent) properties."""

    key: str
    value: str
    sources: tuple[str, ...]  # the scenario's properties it stands for
    why: str


@dataclass(frozen=True)
class ConnectorProfile:
    name: str
    connector_class: str
    jar_set: str | None  # adapters.processes.jars set name; None: only from a user's --plugin-path
    naming: str  # how objects are named, for reports and readers
    fill: Callable[[S3Location], dict[str, str]] = field(repr=False)
    defaults: Mapping[str, str] = field(default_factory=dict)
    writes_s3: bool = True
    # keys whose values are secrets (redacted in reports)
    secret_keys: tuple[str, ...] = ()
    # property prefixes of the sink's own (kept when a scenario's config is translated)
    own_prefixes: tuple[str, ...] = ()
    # counterparts of a scenario's properties in this sink (None: the scenario's own language)
    counterparts: Callable[[Mapping[str, str]], list[Counterpart]] | None = field(default=None, repr=False)
    # how it writes an object: "multipart" (Create, UploadPart, Complete) or "put" (one PutObject)
    uploads: str = "multipart"
    # where its source says its uploads carry no condition (If-None-Match), so S3 never answers
    # them 412; "": they may (or it is not known)
    unconditional_uploads: str = ""
    # the property that gives its uploads a condition after all, where one does (read as a boolean)
    conditional_uploads_key: str = ""
    # where its sink cannot write a registry converter's Struct value at all, why ("": it can)
    no_struct_values: str = ""
    # its objects end at each offset flush (Aiven): how many parts a file has follows the stream's
    # pace against offset.flush.interval.ms, so no rule can count on a part number above 1
    parts_follow_flush: bool = False
    # the keys of the objects that hold records, where the sink writes others beside them (a
    # table's metadata): an S3 rule standing for "the n-th file" goes on the first of these
    data_key_glob: str | None = None
    # the worker's default converters where the plugin cannot run under sinkcheck's own
    # (adapters.processes.connect_worker.WORKER_CONVERTERS); None: those
    worker_converters: Mapping[str, str] | None = None
    # other worker properties its workers run with (plugin.discovery where every jar of the plugin
    # declares its classes as services: the worker then skips scanning them)
    worker_settings: Mapping[str, str] = field(default_factory=dict)
    # whether, under this (sent) config, the sink writes or commits on a wall-clock timer of its own
    # with no record arriving (Confluent's rotate.schedule.interval.ms, Lenses' flush.interval,
    # Iceberg's commit rounds): then a quiet spell short of the settled window proves nothing
    timed_flush: Callable[[Mapping[str, str]], bool] = field(default=lambda config: False, repr=False)
    # where the bucket (and the topics) sit inside another property (Lenses' KCQL): the keys to
    # set, given the config and the S3 location
    place: Callable[[Mapping[str, str], S3Location], dict[str, str]] | None = field(default=None, repr=False)

    def worker_props(self, converters: Mapping[str, str]) -> dict[str, str]:
        """The worker properties of a stack for this sink (`converters`: the worker's defaults
        where the profile names none)."""
        return {**(self.worker_converters if self.worker_converters is not None else converters),
                **self.worker_settings}

    def unconditional_under(self, config: Mapping[str, str]) -> str:
        """Why this sink's uploads carry no condition under `config`, or "" where they may."""
        if self.conditional_uploads_key:
            wanted = _binding_name(self.conditional_uploads_key)
            if any(_binding_name(k) == wanted and str(v).strip().lower() == "true" for k, v in config.items()):
                return ""
        return self.unconditional_uploads

    def endpoint_keys(self) -> tuple[str, ...]:
        return tuple(self.fill(S3Location("http://x", "b", "a", "s")).keys())


def _binding_name(key: str) -> str:
    """A Camel property name as its property binding matches it: case and dashes aside."""
    return key.lower().replace("-", "")


def _confluent(s3: S3Location) -> dict[str, str]:
    return {
        "store.url": s3.endpoint,
        "s3.path.style.access.enabled": "true",
        "s3.bucket.name": s3.bucket,
        "s3.region": s3.region,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
    }


def _aiven(s3: S3Location) -> dict[str, str]:
    # setting aws.s3.endpoint makes the connector's client path-style (S3SinkTask.createAmazonS3Client)
    return {
        "aws.s3.endpoint": s3.endpoint,
        "aws.s3.bucket.name": s3.bucket,
        "aws.s3.region": s3.region,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
    }


CAMEL_PREFIX = "camel.kamelet.aws-s3-sink."


def _camel(s3: S3Location) -> dict[str, str]:
    p = CAMEL_PREFIX
    return {
        p + "overrideEndpoint": "true",
        p + "uriEndpointOverride": s3.endpoint,
        p + "forcePathStyle": "true",
        p + "bucketNameOrArn": s3.bucket,
        p + "region": s3.region,
        p + "accessKey": s3.access_key,
        p + "secretKey": s3.secret_key,
    }


STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"


def _camel_counterparts(config: Mapping[str, str]) -> list[Counterpart]:
    p = CAMEL_PREFIX
    out = [Counterpart(p + key, config[src], (src,), why)
           for src, key, why in (("s3.bucket.name", "bucketNameOrArn", "the bucket"),
                                 ("s3.region", "region", "the bucket's region"))
           if config.get(src)]
    value = config.get("value.converter", "")
    if value == JSON_CONVERTER:
        # the S3 producer writes a String, byte[] or InputStream body; a JsonConverter value is a
        # Struct or a Map, which it cannot turn into one (the exchange fails and the task with
        # it). The same bytes read as text are what a Camel deployment stores for JSON data.
        srcs = ("value.converter",) + tuple(k for k in config if k.startswith("value.converter."))
        out.append(Counterpart("value.converter", STRING_CONVERTER, srcs,
                               "Camel's S3 producer writes String or byte[] bodies, not a JsonConverter's "
                               "Struct/Map, and Camel 4.18.0's package (it bundles connect-json 3.6.1) cannot "
                               "instantiate JsonConverter on a Kafka 4 worker: the same JSON bytes go through "
                               "StringConverter and land as written"))
    if config.get("key.converter", "") == JSON_CONVERTER:
        srcs = ("key.converter",) + tuple(k for k in config if k.startswith("key.converter."))
        out.append(Counterpart("key.converter", STRING_CONVERTER, srcs,
                               "Camel only puts the key in a header, and its package (connect-json 3.6.1) "
                               "cannot instantiate JsonConverter on a Kafka 4 worker"))
    return out


# Camel 4.18.0's package bundles connect-json 3.6.1, and Kafka Connect loads connect-json classes
# from the plugin's own jars; that JsonConverter calls Utils.mkSet, gone since Kafka 4.0. A Kafka
# 4.1 worker validates every connector config against the worker's default converters (KIP-891's
# ConverterDefaults, with InstantiableClassValidator) in the plugin's class loader, so on a
# worker whose defaults are JsonConverter (the distribution's connect-distributed.properties)
# every Camel config is rejected: "Invalid value org.apache.kafka.connect.json.JsonConverter for
# configuration key.converter: Could not instantiate class". Camel's workers default to text.
CAMEL_WORKER_CONVERTERS = {"key.converter": STRING_CONVERTER, "value.converter": STRING_CONVERTER}


# Confluent's format classes and what Aiven's format.output.type writes the same records as
AIVEN_FORMATS = {"JsonFormat": "jsonl", "AvroFormat": "avro", "ParquetFormat": "parquet", "ByteArrayFormat": "csv"}
# what each record carries, so that the suite can tell records apart and check their fields
AIVEN_FIELDS = "key,value,offset,timestamp"
AIVEN_CSV_FIELDS_WITHOUT_KEY = "value,offset,timestamp"
# the key converters Aiven's csv output takes ("The key.converter property must be set to ...")
AIVEN_CSV_KEY_CONVERTERS = ("ByteArrayConverter", "StringConverter")
# the value converter it takes ("The value.converter property must be set to ...ByteArrayConverter")
AIVEN_CSV_VALUE_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"


def _aiven_counterparts(config: Mapping[str, str]) -> list[Counterpart]:
    out = [Counterpart(key, config[src], (src,), why)
           for src, key, why in (("s3.bucket.name", "aws.s3.bucket.name", "the bucket"),
                                 ("s3.region", "aws.s3.region", "the bucket's region"),
                                 ("flush.size", "file.max.records",
                                  "records per file (Aiven splits each offset flush's records of a partition into "
                                  "files of at most this many; it has no time or size rotation)"),
                                 ("s3.part.size", "aws.s3.part.size.bytes", "the multipart upload's part size"))
           if config.get(src)]
    fmt = config.get("format.class", "JsonFormat").rsplit(".", 1)[-1]
    output = AIVEN_FORMATS.get(fmt, "jsonl")
    out.append(Counterpart("format.output.type", output, ("format.class",) if "format.class" in config else (),
                           f"{fmt} records as Aiven's {output}" + (" (the value base64, as Aiven's csv writes bytes)"
                                                                   if output == "csv" else "")))
    value_conv = config.get("value.converter", JSON_CONVERTER)
    if output == "csv" and value_conv.rsplit(".", 1)[-1] != AIVEN_CSV_VALUE_CONVERTER.rsplit(".", 1)[-1]:
        # AbstractValuePlainWriter takes a BYTES value schema only, and a null one (JsonConverter's
        # tombstone) throws in flush(), every offset commit with it: its README has csv values come
        # through ByteArrayConverter. The bytes produced land as they are (a JsonConverter's
        # envelope too, which holds the record's seq)
        srcs = ("value.converter",) + tuple(k for k in config if k.startswith("value.converter."))
        out.append(Counterpart("value.converter", AIVEN_CSV_VALUE_CONVERTER, srcs,
                               f"Aiven's csv takes values only through ByteArrayConverter (its README; here "
                               f"{value_conv.rsplit('.', 1)[-1]}): the bytes produced are written as they are, base64"))
    key_conv = config.get("key.converter", JSON_CONVERTER).rsplit(".", 1)[-1]
    if output == "csv" and key_conv not in AIVEN_CSV_KEY_CONVERTERS:
        # KeyPlainWriter takes a STRING or BYTES key schema only (a null one throws in flush(),
        # every offset commit with it): its README has csv keys come through these two converters
        out.append(Counterpart("format.output.fields", AIVEN_CSV_FIELDS_WITHOUT_KEY, (),
                               f"each record's value, offset and timestamp: records told apart and their fields "
                               f"checked; no key, which Aiven's csv writes only through "
                               f"{' or '.join(AIVEN_CSV_KEY_CONVERTERS)} (here {key_conv})"))
    else:
        out.append(Counterpart("format.output.fields", AIVEN_FIELDS, (),
                               "each record's key, value, offset and timestamp: records told apart and their fields "
                               "checked (Aiven's default is the value only)"))
    if output == "parquet":
        codec = config.get("parquet.codec", "snappy")
        out.append(Counterpart("file.compression.type", codec if codec in ("gzip", "snappy", "zstd") else "none",
                               ("parquet.codec",) if "parquet.codec" in config else (),
                               "for parquet Aiven's file.compression.type is Parquet's own codec"))
    else:
        comp = config.get("s3.compression.type", "none")
        out.append(Counterpart("file.compression.type", comp if comp == "gzip" else "none",
                               ("s3.compression.type",) if "s3.compression.type" in config else (),
                               "the object's compression (Confluent's default is none, Aiven's gzip)"))
    if config.get("behavior.on.null.values", "").strip().lower() == "ignore":
        t, p = "sinkcheckDropTombstones", "sinkcheckIsTombstone"
        src = ("behavior.on.null.values",)
        out += [Counterpart("transforms", ",".join(x for x in (config.get("transforms", "").strip(), t) if x), src,
                            "a tombstone dropped before put() by Kafka Connect's Filter, as Confluent's ignore skips it "
                            "(Aiven has no setting for it, and its csv writer throws in flush() on a null value "
                            "JsonConverter gives no schema: AbstractValuePlainWriter.java:47)"),
                Counterpart(f"transforms.{t}.type", "org.apache.kafka.connect.transforms.Filter", (), "drops the record"),
                Counterpart(f"transforms.{t}.predicate", p, (), "tombstones only"),
                Counterpart("predicates", ",".join(x for x in (config.get("predicates", "").strip(), p) if x), (),
                            "the tombstone predicate"),
                Counterpart(f"predicates.{p}.type", "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
                            (), "a null value")]
    return out


LENSES_PREFIX = "connect.s3."
LENSES_KCQL = LENSES_PREFIX + "kcql"
LENSES_FORMATS = {"JsonFormat": "JSON", "AvroFormat": "AVRO", "ParquetFormat": "PARQUET", "ByteArrayFormat": "BYTES"}
# a time flush, in seconds, so that the tail of a stream short of flush.count is written within a run
LENSES_FLUSH_INTERVAL_S = 3
_KCQL_INSERT = re.compile(r"(INSERT\s+INTO\s+)(`?)([^:`\s]+)(`?)(:\S*)?", re.IGNORECASE)
_KCQL_FROM = re.compile(r"(FROM\s+)(`?)([^`\s]+)(`?)", re.IGNORECASE)


def _lenses(s3: S3Location) -> dict[str, str]:
    p = LENSES_PREFIX
    return {
        p + "aws.auth.mode": "Credentials",
        p + "aws.access.key": s3.access_key,
        p + "aws.secret.key": s3.secret_key,
        p + "aws.region": s3.region,
        p + "custom.endpoint": s3.endpoint,
        # connect.s3.vhost.bucket (deprecated) means the opposite of its name
        p + "path.style.access": "true",
    }


def lenses_kcql(bucket: str, prefix: str, topic: str, store_as: str, properties: Mapping[str, str]) -> str:
    props = ",".join(f"'{k}'={v}" for k, v in properties.items())
    return (f"INSERT INTO {bucket}:{prefix} SELECT * FROM `{topic}` STOREAS `{store_as}`"
            + (f" PROPERTIES({props})" if props else ""))


def _lenses_place(config: Mapping[str, str], s3: S3Location) -> dict[str, str]:
    """The run's bucket in every KCQL statement's INSERT INTO, and, where the KCQL is one
    statement, one statement for each topic the config reads (a run renames its topics)."""
    kcql = config.get(LENSES_KCQL, "")
    if not kcql:
        return {}
    statements = [st for st in kcql.split(";") if st.strip()]
    out = [_KCQL_INSERT.sub(lambda m: f"{m.group(1)}{m.group(2)}{s3.bucket}{m.group(4)}{m.group(5) or ''}", st)
           for st in statements]
    topics = [t.strip() for t in config.get("topics", "").split(",") if t.strip()]
    if len(out) == 1 and topics:
        # one statement for every topic the run reads: Lenses fails the task at start for a topic
        # without one ("Can't find the KCQL for source topic"), as a run of several topics showed
        out = [_KCQL_FROM.sub(lambda m, t=t: f"{m.group(1)}`{t}`", out[0], count=1) for t in topics]
    return {LENSES_KCQL: ";".join(out)}


def _lenses_counterparts(config: Mapping[str, str]) -> list[Counterpart]:
    fmt = config.get("format.class", "JsonFormat").rsplit(".", 1)[-1]
    store_as = LENSES_FORMATS.get(fmt, "JSON")
    bytes_only = config.get("value.converter", "").rsplit(".", 1)[-1] == "ByteArrayConverter"
    if store_as == "JSON" and bytes_only:
        # every value is bytes, which its JSON store cannot write (ToJsonDataConverter: "Cannot
        # currently write byte array as json"): the task would stop at the first record. A Lenses
        # user with byte values stores them as BYTES
        store_as = "BYTES"
    # BYTES writes one record a file: Lenses refuses any other flush.count for it
    # (CloudSinkBucketOptions.validateCommitPolicyForBytesFormat)
    count = "1" if store_as == "BYTES" else config.get("flush.size", "50000")
    props = {"flush.count": count, "flush.interval": str(LENSES_FLUSH_INTERVAL_S)}
    topics = [t.strip() for t in config.get("topics", "").split(",") if t.strip()] or ["events"]
    bucket = config.get("s3.bucket.name", "sinkcheck")
    kcql = ";".join(lenses_kcql(bucket, "out", t, store_as, props) for t in topics)
    srcs = tuple(k for k in ("topics", "s3.bucket.name", "flush.size", "format.class") if k in config)
    out = [Counterpart(LENSES_KCQL, kcql, srcs,
                       f"KCQL: the bucket, one statement per topic, {fmt} as {store_as}"
                       + (" (the value converter's bytes, which its JSON store cannot write)"
                          if bytes_only and fmt != "ByteArrayFormat" else "")
                       + f", flush.size as 'flush.count', and 'flush.interval'="
                       f"{LENSES_FLUSH_INTERVAL_S} s so that a tail short of flush.count is written within the run "
                       "(Lenses' default is 1 h)")]
    if config.get("s3.region"):
        out.append(Counterpart(LENSES_PREFIX + "aws.region", config["s3.region"], ("s3.region",), "the bucket's region"))
    if config.get("behavior.on.null.values", "").strip().lower() == "ignore":
        out.append(Counterpart(LENSES_PREFIX + "skip.null.values", "true", ("behavior.on.null.values",),
                               "a tombstone skipped (Lenses' default writes it)"))
    return out


ICEBERG_TABLE = "sinkcheck.events"  # the table a scenario's records land in (namespace.table)
ICEBERG_COMMIT_INTERVAL_MS = 2000
ICEBERG_COMMIT_TIMEOUT_MS = 10000


def iceberg_commit_timing_s(config: Mapping[str, str]) -> tuple[float, float]:
    """Iceberg's commit interval and commit-round timeout in seconds, as a config sets them
    (the sink's defaults: 5 min and 30 s)."""
    return (int(config.get("iceberg.control.commit.interval-ms", "300000")) / 1000,
            int(config.get("iceberg.control.commit.timeout-ms", "30000")) / 1000)
JSON_SCHEMALESS = {"value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false"}


def _iceberg(s3: S3Location) -> dict[str, str]:
    # S3FileIO on the local server, path-style; the catalog's own keys (catalog-impl, uri) come
    # from the catalog the target starts (adapters.connect.iceberg)
    return {
        "iceberg.catalog.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "iceberg.catalog.warehouse": f"s3://{s3.bucket}/warehouse",
        "iceberg.catalog.s3.endpoint": s3.endpoint,
        "iceberg.catalog.s3.path-style-access": "true",
        "iceberg.catalog.s3.access-key-id": s3.access_key,
        "iceberg.catalog.s3.secret-access-key": s3.secret_key,
        "iceberg.catalog.client.region": s3.region,
    }


def _iceberg_counterparts(config: Mapping[str, str]) -> list[Counterpart]:
    srcs = tuple(k for k in ("topics", "topics.regex") if config.get(k))
    out = [Counterpart("iceberg.tables", ICEBERG_TABLE, srcs, "one table holds the records of the scenario's topics"),
           Counterpart("iceberg.tables.auto-create-enabled", "true", (),
                       "Confluent's sink needs no table made beforehand: the sink creates it from the first record"),
           Counterpart("iceberg.tables.evolve-schema-enabled", "true", (),
                       "a record with a field the table lacks widens the table, as a new field simply lands "
                       "in Confluent's JSON objects"),
           Counterpart("iceberg.control.commit.interval-ms", str(ICEBERG_COMMIT_INTERVAL_MS), (),
                       "a table commit every 2 s (the default is 5 min): the scenario's records become visible "
                       "within the run, as a rotation makes them visible in Confluent's sink"),
           Counterpart("iceberg.control.commit.timeout-ms", str(ICEBERG_COMMIT_TIMEOUT_MS), (),
                       "a commit round missing a task's answer ends after 10 s (the default is 30 s): a task "
                       "restarted with nothing new to read never answers")]
    from adapters.connect.converters import needs_registry_converters

    value = config.get("value.converter", "")
    # a Schema Registry converter (AvroConverter, ProtobufConverter) gives Structs, which Iceberg's
    # sink writes as rows: a deployment of it reading a registry's wire format keeps that converter
    if value != JSON_CONVERTER and not needs_registry_converters({"value.converter": value}):
        srcs = ("value.converter",) + tuple(k for k in config if k.startswith("value.converter."))
        out += [Counterpart(k, v, srcs if k == "value.converter" else (),
                            "Iceberg's sink writes Structs or Maps into table rows; the same JSON text read by "
                            "JsonConverter without schemas is the Map a deployment of it reads")
                for k, v in JSON_SCHEMALESS.items()]
    return out


def _no_s3(s3: S3Location) -> dict[str, str]:
    return {}


PROFILES: dict[str, ConnectorProfile] = {
    p.name: p
    for p in (
        ConnectorProfile(
            name="confluent",
            connector_class="io.confluent.connect.s3.S3SinkConnector",
            jar_set=None,
            timed_flush=lambda config: int(str(config.get("rotate.schedule.interval.ms", "-1")).strip() or -1) > 0,
            naming="<topics.dir=topics>/<topic>/partition=<p>/<topic>+<p>+<start offset, 10 digits>.<ext>",
            fill=_confluent,
            defaults={
                "storage.class": "io.confluent.connect.s3.storage.S3Storage",
                "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
                "flush.size": "100",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                "schema.compatibility": "NONE",
            },
            secret_keys=("aws.secret.access.key",),
        ),
        ConnectorProfile(
            name="aiven",
            connector_class="io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector",
            jar_set=None,
            naming="file.name.template, default {{topic}}-{{partition}}-{{start_offset}} (+ .avro for avro, + the "
                   "compression's extension: .gz by default); one object per partition per offset flush, split by "
                   "file.max.records",
            fill=_aiven,
            parts_follow_flush=True,
            unconditional_uploads="S3OutputStream.MultipartUpload.complete builds CompleteMultipartUploadRequest(bucket, "
                                  "key, uploadId, parts) with no condition (3.4.2, AWS SDK v1)",
            defaults={
                "format.output.type": "jsonl",
                "format.output.fields": AIVEN_FIELDS,
                "file.compression.type": "gzip",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            secret_keys=("aws.secret.access.key",),
            # its own keys only: Confluent's format.bytearray.* and file.delim share the first word
            own_prefixes=("aws.", "aws_", "file.name.", "file.compression.", "file.max.records", "file.prefix.",
                          "format.output.", "kafka.retry.", "timestamp.timezone", "timestamp.source", "output_"),
            counterparts=_aiven_counterparts,
        ),
        ConnectorProfile(
            name="camel",
            connector_class="org.apache.camel.kafkaconnector.awss3sink.CamelAwss3sinkSinkConnector",
            jar_set=None,
            naming="one object per record; key = header 'file' or 'ce-file', else the Camel "
                   "exchange id (random), unless camel.kamelet.aws-s3-sink.keyName is set",
            fill=_camel,
            defaults={
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            secret_keys=(CAMEL_PREFIX + "secretKey", CAMEL_PREFIX + "accessKey"),
            own_prefixes=("camel.",),
            counterparts=_camel_counterparts,
            uploads="put",
            unconditional_uploads="the kamelet's aws2-s3 endpoint sets no conditionalWritesEnabled, and AWS2S3Producer "
                                  "adds If-None-Match to its PutObject only under it (4.18.0)",
            conditional_uploads_key="camel.component.aws2-s3.conditionalWritesEnabled",
            no_struct_values="its S3 producer writes a String, byte[] or InputStream body, and a registry "
                             "converter's Struct is none of them (real 4.18.0: InvalidPayloadException 'No body "
                             "available of type: java.io.InputStream but has type: org.apache.kafka.connect.data."
                             "Struct', the task failed at the first record)",
            worker_converters=CAMEL_WORKER_CONVERTERS,
        ),
        ConnectorProfile(
            name="iceberg",
            connector_class="org.apache.iceberg.connect.IcebergSinkConnector",
            jar_set="iceberg",
            timed_flush=lambda config: True,
            naming="no object naming to hold it to: Parquet data files under <warehouse>/<namespace>/<table>/data/, "
                   "visible to readers only through the table's snapshots (metadata/)",
            fill=_iceberg,
            defaults={
                "iceberg.tables": ICEBERG_TABLE,
                "iceberg.tables.auto-create-enabled": "true",
                "iceberg.tables.evolve-schema-enabled": "true",
                "iceberg.control.commit.interval-ms": str(ICEBERG_COMMIT_INTERVAL_MS),
                "iceberg.control.commit.timeout-ms": str(ICEBERG_COMMIT_TIMEOUT_MS),
                "key.converter": STRING_CONVERTER,
                **JSON_SCHEMALESS,
            },
            secret_keys=("iceberg.catalog.s3.secret-access-key", "iceberg.catalog.s3.access-key-id"),
            own_prefixes=("iceberg.",),
            counterparts=_iceberg_counterparts,
            uploads="put",
            unconditional_uploads="S3FileIO's S3OutputStream builds its PutObject and multipart requests with no "
                                  "If-None-Match or If-Match (iceberg-aws 1.12.0)",
            data_key_glob="*/data/*.parquet",
            # 90 jars: scanning them takes a worker 11.8 s to start, the service manifests 3.6 s
            worker_settings={"plugin.discovery": "service_load"},
        ),
        ConnectorProfile(
            name="lenses",
            connector_class="io.lenses.streamreactor.connect.aws.s3.sink.S3SinkConnector",
            jar_set=None,
            timed_flush=lambda config: True,
            naming="<prefix>/<topic>/<partition>/<offset of the file's last record, 12 digits>_<earliest ts>_"
                   "<latest ts>.<ext>; exactly-once lock objects under .indexes/",
            fill=_lenses,
            defaults={
                "key.converter": STRING_CONVERTER,
                **JSON_SCHEMALESS,
            },
            secret_keys=(LENSES_PREFIX + "aws.secret.key", LENSES_PREFIX + "aws.access.key"),
            own_prefixes=(LENSES_PREFIX,),
            counterparts=_lenses_counterparts,
            place=_lenses_place,
            # data files and .indexes/ lock objects alike are single PutObjects
            uploads="put",
            # a data file is staged with one PutObject under .temp-upload/, then copied into place
            data_key_glob=".temp-upload/*",
        ),
        ConnectorProfile(
            name="filesink",
            connector_class="org.apache.kafka.connect.file.FileStreamSinkConnector",
            jar_set="filesink",
            naming="no S3 objects: one local file (`file`), one line per record",
            fill=_no_s3,
            defaults={
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            writes_s3=False,
        ),
    )
}
