"""Named scenarios for Lenses' S3 sink (stream-reactor 11.7.2,
`io.lenses.streamreactor.connect.aws.s3.sink.S3SinkConnector`), each about its exactly-once claim
with `.indexes/` lock objects: 1000 records across 3 partitions, a SIGKILL between a data object
and its index write, S3 errors on the index objects, a lost offset commit, a zombie task; and
its bugs: a retried upload's 412, a tombstone under BYTES, tombstones skipped at a partition's
end never committed, and values with a schema its AVRO and PARQUET writers cannot write (an Avro
fixed, an optional date, a map with int keys, a null inside an array). Their configs are Lenses' own (KCQL; sinkcheck fills in the endpoint, the
credentials, the run's bucket and topic), played on the Lenses target only
(conformance.catalog.named.CONNECTOR_OWN).

Where it writes what (its source): records go to a local staging file per topic-partition; when
the KCQL's 'flush.count', 'flush.size' or 'flush.interval' is reached the file is uploaded with one
PutObject under `<prefix>/<topic>/<partition>/<last offset>_<ts>_<ts>.<ext>`, and the
topic-partition's lock object under `.indexes/` records the offset written, with conditional
writes (If-None-Match / If-Match); preCommit hands Kafka Connect the offsets the index holds.
"""
from __future__ import annotations

import base64
import json
from typing import Callable

from adapters.connect.profiles import lenses_kcql
from conformance.inputs.scenario import FaultStep, Scenario

PUBLIC_T = 1706713200000  # 2024-01-31T15:00:00Z


def _lenses(flush_count: int = 100, interval_s: int = 3) -> dict[str, str]:
    return {
        "connector.class": "io.lenses.streamreactor.connect.aws.s3.sink.S3SinkConnector",
        "tasks.max": "1",
        "topics": "events",
        "connect.s3.kcql": lenses_kcql("sinkcheck", "out", "events", "JSON",
                                       {"flush.count": str(flush_count), "flush.interval": str(interval_s)}),
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }


def _records(n: int, partitions: int = 3) -> list[dict]:
    return [{"topic": "events", "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000, "key": f"k{i}",
             "value": {"seq": i, "ts": PUBLIC_T + i * 1000}, "headers": []} for i in range(n)]


DATA_FILE = {"operation": "PutObject", "key": "out/*"}
INDEX = {"operation": "PutObject", "key": ".indexes/*"}


def e2e_1000() -> Scenario:
    """1000 JSON records across 3 partitions, no fault: each once in the data objects at quiet."""
    return Scenario("lenses-1000-records-3-partitions", _lenses(), {"events": 3}, _records(1000),
                    notes="Lenses: exactly-once with connect.s3.exactly.once.enable (default)")


def kill_between_data_and_index() -> Scenario:
    """SIGKILL of the worker while the index write after a data object hangs: the data object is
    there, its offset is not in the index; the restarted task must not write its records again
    under another name."""
    return Scenario("lenses-kill-between-data-and-index", _lenses(), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "quiet", {"seconds": 60}),
                            FaultStep(150, "s3", {**INDEX, "action": "hang", "nth": 1, "name": "an index write"}),
                            FaultStep(300, "wait-fired", {"rule": "an index write", "seconds": 60}),
                            FaultStep(300, "crash"), FaultStep(300, "release")])


# The S3 client's attempts at each request: `connect.s3.http.max.retries` (default 5) is documented
# as "Number of times to retry the http request, in the case of a resolvable error on the server
# side", and AwsS3ClientCreator.customiseRetryStrategy passes it to the SDK as maxAttempts: five
# attempts in all, the first one included.
CLIENT_ATTEMPTS = 5


def errors_on_index() -> Scenario:
    """InternalError on the index writes, fewer times than the client's attempts at one request:
    whichever writes they fall on (the task writes the lock objects of several partitions in
    turn), each is retried into place and exactly-once holds with the task alive. (With 8 errors
    the outcome hung on how they spread over the partitions' locks: 5 on one lock killed the
    task, 4 and 4 on two did not.)"""
    return Scenario("lenses-500-on-index", _lenses(), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {**INDEX, "action": "fail", "status": 500, "times": CLIENT_ATTEMPTS - 1,
                                                "name": "the index writes"}),
                            FaultStep(300, "wait-fired", {"rule": "the index writes", "seconds": 60})])


def errors_on_index_as_many_as_retries() -> Scenario:
    """InternalError on one partition's lock object as many times as `connect.s3.http.max.retries`
    says it retries (5): its documentation has the sixth attempt land it. The client makes five
    in all (CLIENT_ATTEMPTS), and a failed write of the lock as the partition is assigned is a
    FatalCloudSinkError (IndexManagerV2.createNewIndexFileNoOverwrite), which
    CloudSinkTask.handleErrors throws as FatalConnectException under every
    connect.s3.error.policy: the task dies. (A later lock update that fails only holds back the
    commit: WriterManager logs "Returning no offset to prevent consumer advance", seen on 11.7.2.)"""
    return Scenario("lenses-500-on-index-as-many-as-retries", _lenses(), {"events": 3}, _records(300),
                    # armed before the start: the lock is first written when the partition is assigned,
                    # which can come before a rule armed after the start (the task then met the errors
                    # at a later update, which only holds back the commit, and lived)
                    faults=[FaultStep(0, "s3", {"operation": "PutObject", "key": ".indexes/*/0.lock", "action": "fail",
                                                "status": 500, "times": CLIENT_ATTEMPTS, "at_start": True,
                                                "name": "partition 0's index writes"}),
                            FaultStep(300, "wait-fired", {"rule": "partition 0's index writes", "seconds": 60})])


STAGED_DATA = {"operation": "PutObject", "key": ".temp-upload/*"}


def lost_answer_to_an_upload() -> Scenario:
    """S3 applies a data file's upload and its answer is lost: the S3 client retries the
    PutObject of the staged `.temp-upload/` file, whose own If-None-Match: * now gets 412
    (AwsS3StorageInterface.uploadFile). PendingOperationsProcessors calls it a transient upload
    failure, but CloudSinkTask.handleErrors throws it as a ConnectException under the default
    connect.s3.error.policy THROW: the task dies with the records after the last commit unwritten
    (known bug lenses-retried-upload-412-kills-task; RETRY has Kafka Connect redeliver them)."""
    return Scenario("lenses-lost-answer-to-an-upload", _lenses(), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "quiet", {"seconds": 60}),
                            FaultStep(150, "s3", {**STAGED_DATA, "action": "drop-response", "nth": 1,
                                                  "name": "a data upload"}),
                            FaultStep(300, "wait-fired", {"rule": "a data upload", "seconds": 60})])


def tombstone_as_bytes() -> Scenario:
    """A tombstone under STOREAS `BYTES` (ByteArrayConverter values, one record a file): its
    BytesFormatWriter writes a null value as no bytes, and the upload of the empty staged file is
    refused (UploadableFile.validate: ZeroByteFileError, "zero byte upload prevented"), which
    CloudSinkTask.handleErrors throws under the default THROW policy: the task dies at the
    tombstone (known bug lenses-bytes-null-value-zero-byte-upload; connect.s3.skip.null.values=true
    skips it)."""
    cfg = {**_lenses(1), "connect.s3.kcql": lenses_kcql("sinkcheck", "out", "events", "BYTES",
                                                        {"flush.count": "1", "flush.interval": "3"}),
           "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    cfg.pop("value.converter.schemas.enable")
    recs = [{**r, "value": None if i == 4 else base64.b64encode(json.dumps(r["value"]).encode()).decode()}
            for i, r in enumerate(_records(9))]  # ByteArrayConverter: the bytes of each value's JSON
    return Scenario("lenses-tombstone-as-bytes", cfg, {"events": 3}, recs)


def trailing_tombstones_skipped() -> Scenario:
    """Tombstones skipped (`connect.s3.skip.null.values=true`, what `behavior.on.null.values=ignore`
    is sent as) at the end of a partition: JsonConverter without schemas, a null value a tombstone
    of an earlier key. CloudSinkTask.put skips a null value without recording its offset, and
    WriterManager.getOffsetAndMeta hands preCommit only the offsets of written records, so
    partitions 0 (two tombstones last) and 1 (one) are never committed to their end; partition 2's
    tombstone is followed by a value, whose commit covers it (known bug
    lenses-skipped-tombstones-never-committed)."""
    cfg = {**_lenses(), "connect.s3.skip.null.values": "true"}
    recs = _records(18)  # 6 values a partition
    t = PUBLIC_T + 18 * 1000

    def rec(i: int, partition: int, key: str, value: dict | None) -> dict:
        return {"topic": "events", "partition": partition, "timestamp": t + i * 1000, "key": key, "value": value,
                "headers": []}

    recs += [rec(0, 2, "k2", None), rec(1, 2, "k18", {"seq": 18, "ts": t + 1000}),
             rec(2, 0, "k0", None), rec(3, 0, "k3", None), rec(4, 1, "k1", None)]
    return Scenario("lenses-trailing-tombstones-skipped", cfg, {"events": 3}, recs,
                    notes="Lenses: skipped tombstones at a partition's end are never committed")


# Values with a schema (AvroConverter, JsonConverter with schemas) stored as AVRO or PARQUET: since
# 11.5.0 (commit 5110b8130) both writers build each record with
# ToAvroDataConverter.convertToGenericRecordWithSchema against the Avro schema AvroData gives the
# file, instead of AvroData.fromConnectData, and its conversion misses some of what AvroData
# makes of a Connect schema (known bugs lenses-avro-*); the Parquet writer leaves parquet-avro's
# two-level lists on (lenses-parquet-null-in-array-kills-task). One record a file: the first
# record, which the bug does not touch, is written and committed (the sink quiet) before the second
# is produced and kills the task.
AVRO_CONVERTER = {"value.converter": "io.confluent.connect.avro.AvroConverter",
                  "value.converter.schema.registry.url": "http://schema-registry:8081"}
JSON_WITH_SCHEMAS = {"value.converter": "org.apache.kafka.connect.json.JsonConverter",
                     "value.converter.schemas.enable": "true"}


def _stored_as(store_as: str, values: dict[str, str]) -> dict[str, str]:
    cfg = {**_lenses(1), "connect.s3.kcql": lenses_kcql("sinkcheck", "out", "events", store_as,
                                                        {"flush.count": "1", "flush.interval": "3"})}
    cfg.pop("value.converter.schemas.enable")
    return {**cfg, **values}


FIRST_COMMITTED = [FaultStep(1, "quiet", {"seconds": 60})]


def _two(schema: dict, first: dict, second: dict) -> list[dict]:
    return [{"topic": "events", "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"k{i}",
             "value": {"schema": schema, "payload": payload}, "headers": []}
            for i, payload in enumerate((first, second))]


def avro_fixed_field() -> Scenario:
    """An Avro `fixed` (AvroConverter: Connect bytes with connect.fixed.size, which AvroData turns
    back into the fixed) under STOREAS `AVRO`: ToAvroDataConverter.convertBySchemaType has no case
    for FIXED and hands the ByteBuffer on, which Avro's writer casts to GenericFixed. The first
    payment carries no digest (null) and is written; the second's digest kills the task (known
    bug lenses-avro-fixed-not-converted)."""
    md5 = {"type": "fixed", "name": "Md5", "size": 4}
    schema = {"type": "record", "name": "Payment", "namespace": "com.acme.payments", "fields": [
        {"name": "seq", "type": "long"},
        {"name": "digest", "type": ["null", {"type": "record", "name": "Digest", "fields": [
            {"name": "md5", "type": md5}]}], "default": None}]}
    recs = _two(schema, {"seq": 0, "digest": None},
                {"seq": 1, "digest": {"md5": base64.b64encode(bytes([1, 255, 7, 0])).decode()}})
    return Scenario("lenses-avro-fixed-field", _stored_as("AVRO", AVRO_CONVERTER), {"events": 1}, recs,
                    faults=FIRST_COMMITTED,
                    notes="Lenses: an Avro fixed under STOREAS AVRO")


def avro_optional_date() -> Scenario:
    """An optional Avro date (AvroConverter: an optional Connect Date) under STOREAS `AVRO`:
    ToAvroDataConverter turns the Date into days as a Long (ChronoUnit.DAYS.between), which the
    union ["null", int] does not take (an Avro int is an Integer). The first order has no ship day
    (null) and is written; the second's kills the task (known bug lenses-avro-optional-date)."""
    schema = {"type": "record", "name": "Order", "namespace": "com.acme.orders", "fields": [
        {"name": "seq", "type": "long"},
        {"name": "ship_day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None}]}
    recs = _two(schema, {"seq": 0, "ship_day": None}, {"seq": 1, "ship_day": 19_754})
    return Scenario("lenses-avro-optional-date", _stored_as("AVRO", AVRO_CONVERTER), {"events": 1}, recs,
                    faults=FIRST_COMMITTED,
                    notes="Lenses: an optional date under STOREAS AVRO")


def avro_optional_int_key_map() -> Scenario:
    """An optional map with int32 keys (JsonConverter with schemas) under STOREAS `AVRO`: AvroData
    gives it the Avro schema ["null", array of MapEntry records], and ToAvroDataConverter's ARRAY
    case takes only a java.util.List, so the Connect map reaches the writer as a Map, which the
    union does not take. The first record's map is null and is written; the second's kills the
    task (known bug lenses-avro-map-with-non-string-keys)."""
    schema = {"type": "struct", "name": "com.acme.Reading", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "codes", "type": "map", "keys": {"type": "int32", "optional": False},
         "values": {"type": "double", "optional": False}, "optional": True}]}
    recs = _two(schema, {"seq": 0, "codes": None}, {"seq": 1, "codes": [[7, 0.5], [-3, 1.5]]})
    return Scenario("lenses-avro-optional-int-key-map", _stored_as("AVRO", JSON_WITH_SCHEMAS), {"events": 1}, recs,
                    faults=FIRST_COMMITTED,
                    notes="Lenses: an optional map with int keys under STOREAS AVRO")


def parquet_null_in_array() -> Scenario:
    """An array of optional int32s (JsonConverter with schemas) holding a null, under STOREAS
    `PARQUET`: ParquetFormatWriter builds its AvroParquetWriter without a Configuration, so
    parquet.avro.write-old-list-structure keeps its default (true) and parquet-avro's two-level
    list writer throws on the null (the fix Confluent's connector made,
    kafka-connect-storage-cloud#339, PR #485). The first record's array has no null and is
    written; the second kills the task (known bug lenses-parquet-null-in-array-kills-task)."""
    schema = {"type": "struct", "name": "com.acme.Reading", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "samples", "type": "array", "items": {"type": "int32", "optional": True}, "optional": False}]}
    recs = _two(schema, {"seq": 0, "samples": [1, 2]}, {"seq": 1, "samples": [1, None]})
    return Scenario("lenses-parquet-null-in-array", _stored_as("PARQUET", JSON_WITH_SCHEMAS), {"events": 1}, recs,
                    faults=FIRST_COMMITTED,
                    notes="Lenses: an array of optional items holding a null under STOREAS PARQUET")


def lost_offset_commit() -> Scenario:
    """The Connect group's last offset commit is lost: the task reads committed records again,
    and the indexes must keep them from landing twice."""
    return Scenario("lenses-lost-offset-commit", _lenses(), {"events": 3}, _records(200),
                    faults=[FaultStep(100, "quiet", {"seconds": 60}), FaultStep(100, "lose-offset-commit")])


def zombie() -> Scenario:
    """The worker running the task is stopped until another runs it, then resumed: the zombie's
    late writes must meet the indexes' conditional writes."""
    return Scenario("lenses-zombie-task", _lenses(), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "wait", {"seconds": 1.0}), FaultStep(150, "pause"),
                            FaultStep(300, "wait", {"seconds": 4.0}), FaultStep(300, "resume")])


LENSES_OWN: dict[str, Callable[[], Scenario]] = {s().name: s for s in (
    e2e_1000, kill_between_data_and_index, errors_on_index, errors_on_index_as_many_as_retries,
    lost_answer_to_an_upload, tombstone_as_bytes, trailing_tombstones_skipped, lost_offset_commit, zombie,
    avro_fixed_field, avro_optional_date, avro_optional_int_key_map, parquet_null_in_array)}
