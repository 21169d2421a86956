"""How the suite names and reads Aiven's S3 sink 3.4.2 objects (conformance.judging.objects), pinned to
its source (Aiven-Open/cloud-storage-connectors-for-apache-kafka v3.4.2): FileNameFragment.getFilename
adds `.avro` and the compression's extension to the default template only; S3SinkTask.oldFullKey
makes the legacy names of `aws.s3.prefix`; `file.name.prefix` is no key of the S3 sink; the
output writers' csv, json and jsonl of `format.output.fields`. Then Lenses' S3 sink 11.7.2: its
KCQL with the run's bucket and topic, its names (CloudKeyNamer, OffsetFileNamer) and its claim.
Offline, on hand-made objects."""
from __future__ import annotations

import base64
import gzip
import json

import pyarrow as pa
import zstandard

from adapters.connect.connector_config import translate
from adapters.connect.profiles import PROFILES
from conformance.judging.claims import claim_for
from conformance.judging.objects import aiven_groups_by_key, aiven_key, aiven_rows, decode_aiven, decompress


def test_the_default_template_gets_the_compressions_extension_and_avros():
    assert aiven_key({}, "t", 0, 5) == "t-0-5.gz"  # gzip is the documented default
    assert aiven_key({"file.compression.type": "none"}, "t", 1, 5) == "t-1-5"
    assert aiven_key({"file.compression.type": "zstd", "format.output.type": "avro"}, "t", 1, 5) == "t-1-5.avro.zst"
    assert aiven_key({"file.compression.type": "snappy", "format.output.type": "parquet"}, "t", 1, 5) == "t-1-5.snappy"


def test_an_explicit_template_is_used_as_written_with_padding():
    cfg = {"file.name.template": "{{topic}}/{{partition:padding=true}}/{{start_offset:padding=true}}",
           "file.compression.type": "gzip"}
    assert aiven_key(cfg, "t", 1, 5) == "t/0000000001/00000000000000000005"  # no .gz: explicit
    assert aiven_key({"file.name.template": "{{topic}}-{{partition:padding=false}}-{{start_offset}}"}, "t", 2, 7) == "t-2-7"


def test_file_name_prefix_is_not_an_s3_sink_key_and_aws_s3_prefix_switches_to_legacy_names():
    assert aiven_key({"file.name.prefix": "dir/", "file.compression.type": "none"}, "t", 0, 3) == "t-0-3"
    legacy = {"aws.s3.prefix": "p/", "file.name.template": "ignored-{{topic}}"}
    assert aiven_key(legacy, "t", 0, 3) == "p/t-0-00000000000000000003.gz"
    assert aiven_key({**legacy, "format.output.type": "avro", "file.compression.type": "none"}, "t", 0, 3) == \
        "p/t-0-00000000000000000003.avro"


def test_a_key_template_groups_by_key_and_a_timestamp_cannot_be_predicted():
    cfg = {"file.name.template": "{{key}}"}
    assert aiven_groups_by_key(cfg) and aiven_key(cfg, "t", 0, 3, "k1") == "k1" and aiven_key(cfg, "t", 0, 3) == "null"
    assert not aiven_groups_by_key({}) and not aiven_groups_by_key({**cfg, "aws.s3.prefix": "p/"})
    assert aiven_key({"file.name.template": "{{topic}}-{{timestamp:unit=yyyy}}"}, "t", 0, 0) is None
    c = claim_for("kafka-connect:aiven@3.4.2", cfg)
    assert c.view == "latest-per-key" and c.claims("no-loss") and not c.claims("no-duplicates")
    assert not claim_for("kafka-connect:aiven", {"file.name.template": "{{timestamp:unit=yyyy}}"}).claims("naming")


def _xerial_snappy(data: bytes) -> bytes:
    block = pa.compress(data, codec="snappy", asbytes=True)
    return b"\x82SNAPPY\x00" + (1).to_bytes(4, "big") * 2 + len(block).to_bytes(4, "big") + block


def test_objects_are_decompressed_by_their_magic_bytes():
    text = b'{"value":{"seq":1}}\n'
    for body in (gzip.compress(text), zstandard.ZstdCompressor().compress(text), _xerial_snappy(text), text):
        assert decompress(body) == text


def test_rows_of_each_format_with_their_fields():
    fields = {"format.output.fields": "key,value,offset,timestamp"}
    value = base64.b64encode(b'{"seq": 3}').decode()
    csv_body = f"{base64.b64encode(b'k3').decode()},{value},3,1706713203000\n".encode()
    assert aiven_rows(csv_body, fields) == [{"key": "azM=", "value": value, "offset": "3", "timestamp": "1706713203000"}]
    assert decode_aiven(csv_body, fields) == [b'{"seq": 3}']
    row = {"key": "k3", "value": {"seq": 3}, "offset": 3, "timestamp": "2024-01-31T15:00:03Z"}
    jsonl = {**fields, "format.output.type": "jsonl"}
    assert decode_aiven(gzip.compress(json.dumps(row).encode() + b"\n"), jsonl) == [{"seq": 3}]
    assert aiven_rows(json.dumps([row, row]).encode(), {**fields, "format.output.type": "json"}) == [row, row]


def test_a_scenario_is_translated_to_aivens_keys():
    t = translate({"flush.size": "7", "s3.part.size": "5242880", "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                   "storage.class": "io.confluent.connect.s3.storage.S3Storage",
                   "rotate.schedule.interval.ms": "1000"}, PROFILES["aiven"])
    assert t.config["file.max.records"] == "7" and t.config["format.output.type"] == "jsonl"
    assert t.config["aws.s3.part.size.bytes"] == "5242880"
    assert t.config["format.output.fields"] == "key,value,offset,timestamp"
    assert t.config["file.compression.type"] == "none"  # Confluent's default, not Aiven's gzip
    assert set(t.dropped) == {"storage.class", "rotate.schedule.interval.ms"}
    parquet = translate({"format.class": "ParquetFormat", "parquet.codec": "zstd"}, PROFILES["aiven"])
    assert (parquet.config["format.output.type"], parquet.config["file.compression.type"]) == ("parquet", "zstd")
    raw = translate({"format.class": "ByteArrayFormat", "format.bytearray.separator": "<EOR>", "file.delim": "_",
                     "format.output.envelope": "false"}, PROFILES["aiven"])
    assert raw.config["format.output.type"] == "csv" and raw.config["format.output.envelope"] == "false"
    assert set(raw.dropped) == {"format.bytearray.separator", "file.delim"}  # Confluent's, whatever their prefix


# --- Lenses' S3 sink (stream-reactor 11.7.2): its KCQL, names and objects ---------------------

def test_lenses_kcql_gets_the_runs_bucket_and_topic_and_a_scenario_becomes_kcql():
    from adapters.connect.connector_config import fill_config
    from adapters.connect.profiles import S3Location

    t = translate({"topics": "events", "flush.size": "4", "s3.bucket.name": "sinkcheck",
                   "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                   "storage.class": "io.confluent.connect.s3.storage.S3Storage"}, PROFILES["lenses"])
    assert t.config["connect.s3.kcql"] == ("INSERT INTO sinkcheck:out SELECT * FROM `events` STOREAS `JSON` "
                                           "PROPERTIES('flush.count'=4,'flush.interval'=3)")
    assert set(t.dropped) == {"storage.class"}
    sent = fill_config({**t.config, "topics": "events-r7"}, PROFILES["lenses"], S3Location("http://s3", "bkt-3", "a", "s"))
    assert "INSERT INTO bkt-3:out SELECT * FROM `events-r7` STOREAS `JSON`" in sent["connect.s3.kcql"]
    assert sent["connect.s3.custom.endpoint"] == "http://s3" and sent["connect.s3.path.style.access"] == "true"


def test_lenses_names_and_claim():
    from conformance.judging.checks.lenses import lenses_prefix
    from conformance.judging.objects import decode_lenses, lenses_key

    assert lenses_key("out", "events", 2, 99, 1000, 2000, "json") == "out/events/2/000000000099_1000_2000.json"
    cfg = {"connect.s3.kcql": "INSERT INTO b:out SELECT * FROM `t` STOREAS `JSON` PROPERTIES('flush.count'=3)"}
    assert lenses_prefix(cfg) == "out" and decode_lenses(b'{"seq":1}\n{"seq":2}\n', cfg) == [{"seq": 1}, {"seq": 2}]
    c = claim_for("kafka-connect:lenses@11.7.2", cfg)
    assert c.name == "exactly-once" and c.claims("no-duplicates") and c.claims("naming")
    off = claim_for("kafka-connect:lenses", {**cfg, "connect.s3.exactly.once.enable": "false"})
    assert off.name == "at-least-once" and not off.claims("no-duplicates")


def test_a_tombstone_in_an_aiven_object_holds_no_record():
    fields = {"format.output.fields": "key,value,offset,timestamp", "format.output.type": "jsonl"}
    rows = [{"key": "k1", "value": None, "offset": 1}, {"key": "k2", "value": {"seq": 2}, "offset": 2}]
    assert decode_aiven("".join(json.dumps(r) + "\n" for r in rows).encode(), fields) == [{"seq": 2}]
    csv_fields = {"format.output.fields": "key,value,offset,timestamp"}
    assert decode_aiven(b"azE=,,1,5\nazI=,eyJzZXEiOiAyfQ==,2,6\n", csv_fields) == [b'{"seq": 2}']


def test_an_s3_rule_on_a_lenses_data_file_goes_on_its_staged_putobject():
    """Lenses stages each data file with one PutObject under .temp-upload/ and copies it into
    place: a rule on out/* never fires (seen in `sinkcheck run --profile ci`)."""
    from conformance.catalog.named import SUITE
    from conformance.playing.runner import faults_for_target

    steps, _ = faults_for_target(SUITE["retriable-503-on-upload"](), "kafka-connect:lenses@11.7.2")
    assert [f.params["key"] for f in steps if f.kind == "s3"] == [".temp-upload/*"]


def test_multipart_crash_in_part_four_on_aiven_hangs_the_first_upload_part_after_270():
    """multipart-crash-in-part-four on Aiven (`--profile default`): unknown, its rule on part 4
    never fired. Aiven ends an object at each offset flush (2 s), so the 90 records after 270
    reach S3 as several files of under 77 records (under 4 parts of 5 MiB). The rule goes on the
    first UploadPart after 270, which every flush makes (Aiven writes each object as a multipart
    upload); Confluent keeps part 4."""
    from conformance.catalog.named import SUITE
    from conformance.playing.runner import faults_for_target

    sc = SUITE["multipart-crash-in-part-four"]()
    steps, notes = faults_for_target(sc, "kafka-connect:aiven@3.4.2")
    [rule] = [f for f in steps if f.kind == "s3"]
    assert rule.after == 270 and rule.params["operation"] == "UploadPart" and rule.params["nth"] == 1
    assert "part_number" not in rule.params
    assert [f.params["rule"] for f in steps if f.kind == "wait-fired"] == ["part 4 of the 4th file"]
    assert any("offset flush" in n for n in notes)
    same, _ = faults_for_target(sc, "kafka-connect:confluent@12.1.9")
    assert [f.params.get("part_number") for f in same if f.kind == "s3"] == [4]


def test_bytes_in_lenses_are_one_record_a_file():
    t = translate({"topics": "t", "flush.size": "4", "format.class": "ByteArrayFormat"}, PROFILES["lenses"])
    assert "STOREAS `BYTES` PROPERTIES('flush.count'=1," in t.config["connect.s3.kcql"]


def test_lenses_stores_a_bytearray_converters_values_as_bytes_under_a_json_format():
    """generated-002 of `--profile ci` (JsonFormat, ByteArrayConverter values) tested nothing on
    Lenses: STOREAS `JSON` cannot write a bytes value and its task stopped at the first record.
    Every value is bytes there, so the KCQL stores them as BYTES (one record a file)."""
    from conformance.judging.claims import task_stops_at

    cfg = {"topics": "t", "flush.size": "4", "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
           "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    t = translate(cfg, PROFILES["lenses"])
    assert "STOREAS `BYTES` PROPERTIES('flush.count'=1," in t.config["connect.s3.kcql"]
    assert task_stops_at("lenses", t.config, [b'{"seq": 0}', b'{"seq": 1}']) is None
    schemas = {**cfg, "value.converter": "org.apache.kafka.connect.json.JsonConverter"}
    assert "STOREAS `JSON`" in translate(schemas, PROFILES["lenses"]).config["connect.s3.kcql"]


def test_a_config_update_of_lenses_kcql_keeps_the_runs_bucket_and_topic(tmp_path):
    """config-update-mid-stream on a warm stack (`sinkcheck run --profile ci`): the update's KCQL,
    translated from the scenario's names, reached the worker reading `events` where the run's
    topic is `events-r21`, and the task died ("Can't find the KCQL for source topic"). The update
    is filled in as the start was."""
    from adapters.connect.connector_config import fill_config
    from adapters.connect.profiles import S3Location
    from adapters.connect.target import KafkaConnectTarget
    from conformance.catalog.named import SUITE
    from conformance.playing.runner import faults_for_target
    from conformance.playing.stack_sharing import on_shared_stack
    from conformance.inputs.targets import translation_for

    spec = "kafka-connect:lenses@11.7.2"
    scenario = on_shared_stack(SUITE["config-update-mid-stream"](), "-r21")
    steps, _ = faults_for_target(scenario, spec)
    [update] = [f for f in steps if f.kind == "update-config"]
    target = KafkaConnectTarget(tmp_path, profile="lenses")
    target.profile, target._location = PROFILES["lenses"], S3Location("http://s3", "bkt-3", "a", "s")
    target.config = fill_config(translation_for(spec, scenario.connector).config, target.profile,
                                target._location, scenario.topics)
    assert "FROM `events-r21`" in target.config["connect.s3.kcql"]
    kcql = target.updated_config(update.params["config"])["connect.s3.kcql"]
    assert kcql.startswith("INSERT INTO bkt-3:out SELECT * FROM `events-r21` STOREAS `JSON`")
    assert "'flush.count'=3" in kcql


def test_a_run_of_several_topics_gives_lenses_a_kcql_statement_for_each(tmp_path):
    """A generated run of two dotted topics on the real 11.7.2 died at start: "Can't find the KCQL
    for source topic [Topic(Orders-2024_eu.v10-r124)]" (one statement, for the default topic)."""
    from adapters.connect.connector_config import fill_config
    from adapters.connect.profiles import S3Location
    from conformance.catalog.named import SUITE
    from conformance.inputs.targets import translation_for
    from conformance.playing.stack_sharing import on_shared_stack
    from dataclasses import replace

    base = SUITE["rotate-interval-table"]()
    two = replace(base, topics={"Orders-2024_eu.v10": 1, "audit.events_v1": 1},
                  records=[{**r, "topic": ("Orders-2024_eu.v10", "audit.events_v1")[i % 2]}
                           for i, r in enumerate(base.records)])
    scenario = on_shared_stack(two, "-r124")
    spec = "kafka-connect:lenses@11.7.2"
    config = fill_config(translation_for(spec, scenario.connector).config, PROFILES["lenses"],
                         S3Location("http://s3", "bkt", "a", "s"), scenario.topics)
    kcql = config["connect.s3.kcql"]
    assert "FROM `Orders-2024_eu.v10-r124`" in kcql and "FROM `audit.events_v1-r124`" in kcql
    assert kcql.count("INSERT INTO bkt:out") == 2


def test_lenses_json_store_stops_at_the_first_bytes_value():
    """generated-002 of `--profile ci` on Lenses: a bytes value under STOREAS `JSON` killed the task
    ("Cannot currently write byte array as json", ToJsonDataConverter). The run knows where the
    task stops (the S3 rules after it are left out) and claims no liveness for it."""
    from conformance.judging.claims import task_stops_at

    json_cfg = translate({"topics": "t", "flush.size": "4"}, PROFILES["lenses"]).config
    assert task_stops_at("lenses", json_cfg, [{"seq": 1}, "text", b"\x00", None]) == 2
    avro = translate({"topics": "t", "flush.size": "4", "format.class": "AvroFormat"}, PROFILES["lenses"]).config
    assert task_stops_at("lenses", avro, [b"\x00"]) is None
    assert task_stops_at("camel", {}, ["a", b"\x00", None]) == 2  # Camel's task stops at a null value
    c = claim_for("kafka-connect:lenses@11.7.2", json_cfg, bytes_values=True)
    assert not c.claims("liveness") and not c.claims("commit-progress") and c.claims("no-duplicates")
    assert claim_for("kafka-connect:lenses@11.7.2", avro, bytes_values=True).claims("liveness")
    # the runner and a recorded run's replay read it off the values put() receives, by one function
    from conformance.judging.claims import claims_for_values

    assert claims_for_values("kafka-connect:lenses@11.7.2", json_cfg, (), None, [{"seq": 1}, b"\x00"]) == [c]
    assert claims_for_values("kafka-connect:lenses@11.7.2", json_cfg, (), None, [{"seq": 1}, "text"])[0].claims(
        "liveness")
    tolerant = claims_for_values("kafka-connect:camel@4.18.0", {}, (), None, ["a", None])[0]
    assert tolerant == claim_for("kafka-connect:camel@4.18.0", {}, null_values=True)


def test_aivens_csv_gets_the_key_only_through_a_string_or_bytes_key_converter():
    """--profile default on Aiven: a null key read by JsonConverter has no schema, and Aiven's
    KeyPlainWriter ("key schema cannot be null") threw in every flush: no offset was ever committed.
    Its README has csv keys come through ByteArrayConverter or StringConverter only."""
    base = {"topics": "t", "flush.size": "1", "format.class": "ByteArrayFormat"}
    json_key = translate({**base, "key.converter": "org.apache.kafka.connect.json.JsonConverter"}, PROFILES["aiven"])
    assert json_key.config["format.output.fields"] == "value,offset,timestamp"
    assert json_key.config["key.converter"] == "org.apache.kafka.connect.json.JsonConverter"
    string_key = translate({**base, "key.converter": "org.apache.kafka.connect.storage.StringConverter"},
                           PROFILES["aiven"])
    assert string_key.config["format.output.fields"] == "key,value,offset,timestamp"
    jsonl = translate({"topics": "t", "key.converter": "org.apache.kafka.connect.json.JsonConverter"}, PROFILES["aiven"])
    assert jsonl.config["format.output.fields"] == "key,value,offset,timestamp"


def test_an_aiven_object_is_named_by_its_first_row_a_tombstone_too():
    """tombstones-amid-record-field-windows on Aiven (--profile ci): `events-0-4` starts with the
    tombstone at offset 4 (an empty value column) and Aiven names it so; its first record is 5."""
    from adapters.observation import S3Object
    from conformance.judging.checks.aiven import first_row_offset

    cfg = {"format.output.fields": "key,value,offset,timestamp"}
    body = b"azE=,,4,5\nazI=,eyJzZXEiOiAyfQ==,5,6\n"
    assert first_row_offset(S3Object("events-0-4", len(body), "e", body), cfg, 5) == 4
    assert first_row_offset(S3Object("events-0-4", len(body), "e", body), {"format.output.fields": "value"}, 5) == 5


def test_R12_aiven_skips_a_tombstone_under_ignore_through_kafka_connects_filter():
    """Found by `--profile ci` on Aiven 3.4.2 (generated-003-shrunk): `ignore` had no counterpart, so
    tombstones reached Aiven's csv writer, whose flush() throws on a null value JsonConverter gives
    no schema (AbstractValuePlainWriter.java:47); no offset was ever committed and a record beside
    the tombstone's file never uploaded. Confluent's ignore skips the record: Kafka Connect's
    Filter with RecordIsTombstone does that before put()."""
    t = translate({"topics": "t", "behavior.on.null.values": "ignore"}, PROFILES["aiven"])
    name = t.config["transforms"]
    assert t.config[f"transforms.{name}.type"] == "org.apache.kafka.connect.transforms.Filter"
    predicate = t.config[f"transforms.{name}.predicate"]
    assert t.config["predicates"] == predicate
    assert t.config[f"predicates.{predicate}.type"] == "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"
    assert "behavior.on.null.values" not in t.dropped
    assert "transforms" not in translate({"topics": "t", "behavior.on.null.values": "write"}, PROFILES["aiven"]).config


def test_lenses_skips_tombstones_where_the_scenario_ignores_them():
    t = translate({"topics": "t", "behavior.on.null.values": "ignore"}, PROFILES["lenses"])
    assert t.config["connect.s3.skip.null.values"] == "true" and "behavior.on.null.values" not in t.dropped
    w = translate({"topics": "t", "behavior.on.null.values": "write"}, PROFILES["lenses"])
    assert "connect.s3.skip.null.values" not in w.config and "behavior.on.null.values" in w.dropped


def test_a_csv_row_short_of_aivens_fields_is_no_tombstone_but_an_unreadable_object():
    """A csv line of fewer columns than format.output.fields lacked its `value` and was read as a
    tombstone, holding no record: a record missing from a row went unnoticed. PlainOutputStreamWriter
    writes every field, an empty one for null (a tombstone's value: `azE=,,1,5`), so a missing column
    is no row of Aiven's: the object cannot be read, and RunData says so."""
    import pytest

    fields = {"format.output.fields": "key,value,offset,timestamp"}
    with pytest.raises(ValueError, match="3 columns where format.output.fields names 4"):
        aiven_rows(b"azE=,1,5\n", fields)
    with pytest.raises(ValueError):
        decode_aiven(b"azE=,eyJzZXEiOiAyfQ==,2,6,7\n", fields)
    # a value written raw (encoding none) may hold commas: it is what lies between its neighbours
    raw = {**fields, "format.output.fields.value.encoding": "none"}
    assert aiven_rows(b'azM=,{"seq":3,"ts":4},3,9\n', raw) == [
        {"key": "azM=", "value": '{"seq":3,"ts":4}', "offset": "3", "timestamp": "9"}]
    # a value-only object: a tombstone is an empty line, no row
    assert decode_aiven(b"eyJzZXEiOiAyfQ==\n\neyJzZXEiOiAzfQ==\n", {}) == [b'{"seq": 2}', b'{"seq": 3}']


def test_aivens_csv_reads_values_through_bytearrayconverter_as_its_readme_requires():
    """Aiven's README: for csv "the value.converter property must be set to ByteArrayConverter";
    AbstractValuePlainWriter takes a BYTES schema only and throws on a null one, which is what
    JsonConverter gives a tombstone. A scenario's csv (ByteArrayFormat) is sent with ByteArrayConverter
    whatever converter it names: the bytes produced land as they are and are still told apart."""
    from conformance.inputs import wire
    from conformance.inputs.scenario import record_seq, seq_value

    base = {"topics": "t", "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
            "key.converter": "org.apache.kafka.connect.storage.StringConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "true"}
    t = translate(base, PROFILES["aiven"])
    assert t.config["format.output.type"] == "csv"
    assert t.config["value.converter"] == "org.apache.kafka.connect.converters.ByteArrayConverter"
    assert "value.converter.schemas.enable" not in t.config and "value.converter" in t.mapped
    # the worker's default (JsonConverter with schemas) is made explicit, then replaced
    assert translate({k: v for k, v in base.items() if not k.startswith("value.")}, PROFILES["aiven"],
                     {"value.converter": "org.apache.kafka.connect.json.JsonConverter"}
                     ).config["value.converter"].endswith("ByteArrayConverter")
    jsonl = translate({**base, "format.class": "JsonFormat"}, PROFILES["aiven"])
    assert jsonl.config["value.converter"] == "org.apache.kafka.connect.json.JsonConverter"
    # a bytes value under JsonConverter reaches Aiven as the envelope's bytes, which hold the seq,
    # and a tombstone as a null value (an empty csv column), not a missing schema
    recs = [{"topic": "t", "partition": 0, "key": "k0", "value": seq_value(0, "bytes", converter="json-schemas"),
             "timestamp": 1, "headers": []},
            {"topic": "t", "partition": 0, "key": "k1", "value": None, "timestamp": 2, "headers": []}]
    got = wire.sink_records(base, recs, [0, 1], read_config=t.config)
    assert isinstance(got[0].value, bytes) and record_seq(got[0].value) == 0
    assert got[1].value is None
    body = f"{base64.b64encode(got[0].value).decode()},0,1\n,1,2\n".encode()
    assert [record_seq(v) for v in decode_aiven(body, {"format.output.fields": "value,offset,timestamp"})] == [0]


def test_json_lines_are_cut_at_newlines_only_not_at_the_line_separators_inside_strings():
    # Jackson writes U+2028, U+2029 and U+0085 raw inside a string (text-escaping-stream on Aiven
    # 3.4.2 was read as undecodable, 4 records lost, until the reader cut only at "\n")
    from conformance.judging.objects import decode_lenses

    text = "a\u2028b\u2029c\u0085d"
    row = {"key": "k", "value": {"seq": 1, "note": text}, "offset": 0, "timestamp": "2024-01-31T15:00:03Z"}
    jsonl = {"format.output.fields": "key,value,offset,timestamp", "format.output.type": "jsonl"}
    body = (json.dumps(row, ensure_ascii=False) + "\n").encode()
    assert decode_aiven(gzip.compress(body), jsonl) == [{"seq": 1, "note": text}]
    lenses = (json.dumps({"seq": 1, "note": text}, ensure_ascii=False) + "\n").encode()
    assert decode_lenses(lenses, {"connect.s3.kcql": "INSERT INTO b SELECT * FROM t STOREAS `JSON`"}) == [
        {"seq": 1, "note": text}]


def test_aivens_file_count_is_bound_by_the_file_max_records_a_config_update_set():
    from types import SimpleNamespace

    from conformance.judging.checks.aiven import aiven_file_count

    obj = SimpleNamespace(key="t-0-0.gz")
    update = SimpleNamespace(fired=True, kind="update-config", params={"config": {"file.max.records": "7"}})

    def run(faults):
        return SimpleNamespace(connector={"file.max.records": "2"}, observation=SimpleNamespace(
            final_bucket=None, faults=faults), value_objects=lambda bucket: [obj],
            offsets_of=lambda o: [(("t", 0), i) for i in range(6)])

    assert aiven_file_count(run([])).status == "fail"  # 6 records where 2 is the bound
    assert aiven_file_count(run([update])).status == "pass"  # the update raised it to 7
