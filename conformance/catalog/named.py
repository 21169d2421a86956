"""Named scenarios from public write-ups of the connector: each replayable and in the suite."""
from __future__ import annotations

import base64
import datetime
import json
from typing import Any, Callable

from conformance.catalog.base import BASE, JSON, PUBLIC_T, _rec, _small
from conformance.catalog.gate import tombstones_with_record_time_rotation
from conformance.catalog.aiven import AIVEN_OWN
from conformance.catalog.evolution import EVOLUTION_SCENARIOS
from conformance.catalog.formats import FORMAT_SCENARIOS, SCHEMALESS_AVRO
from conformance.catalog.protobuf import PROTOBUF_SCENARIOS
from conformance.catalog.registry import REGISTRY_SCENARIOS
from conformance.catalog.iceberg import ICEBERG_OWN
from conformance.catalog.inputs import INPUT_SCENARIOS
from conformance.catalog.lenses import LENSES_OWN
from conformance.catalog.rebalance import REBALANCE_SHAPES
from conformance.catalog.s3_statuses import S3_KNOWN_BUG_SCENARIOS, S3_STATUS_SCENARIOS, STARTUP_SCENARIOS
from conformance.catalog.time_edges import time_edge_scenarios
from conformance.inputs.scenario import FaultStep, Scenario

MB = 1024 * 1024
# The multipart stories: 90 records of 200 KiB a file (17.6 MiB) in 5 MiB parts (the smallest
# s3.part.size the connector accepts): three full parts while the file fills, the fourth and last
# uploaded by the rotation, then CompleteMultipartUpload (R7.1).
PART_SIZE = 5 * MB
BIG_RECORD = 200 * 1024
# files of 17.6 MiB through a broker and the S3 fault front take a while on two cores: the
# multipart stories settle with a wider bound than the runner's default
BIG_QUIET_S = 180.0


def rotate_interval_table() -> Scenario:
    """TimeBasedPartitioner, Record extractor, rotate.interval.ms=3000: 0-2 commit in one
    object when 3 arrives; 3-4 stay open and invisible."""
    cfg = {**BASE, "flush.size": "1000", "rotate.interval.ms": "3000", "timestamp.extractor": "Record",
           "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
           "partition.duration.ms": "3600000", "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
           "locale": "en-US", "timezone": "UTC"}
    times = [0, 1000, 2000, 4000, 5000]
    return Scenario("rotate-interval-table", cfg, {"events": 1}, [_rec(i, PUBLIC_T + t) for i, t in enumerate(times)],
                    notes="public write-up: rotate.interval.ms measured on record time from the first record")


def rotate_schedule_table() -> Scenario:
    """DefaultPartitioner, rotate.schedule.interval.ms=3000, timezone=UTC: the file becomes
    visible at the first put after the boundary, even an empty one."""
    cfg = {**BASE, "flush.size": "1000", "rotate.schedule.interval.ms": "3000", "timezone": "UTC"}
    return Scenario("rotate-schedule-table", cfg, {"events": 1}, [_rec(i, PUBLIC_T + i * 1000) for i in range(3)],
                    faults=[FaultStep(3, "wait", {"seconds": 4.0})],
                    notes="public write-up: scheduled rotation flushes on wall-clock time at an (empty) put")


def rotate_schedule_steady_stream() -> Scenario:
    """DefaultPartitioner with rotate.schedule.interval.ms=2000 while records keep arriving (one
    every 250 ms for 6 s): a put holding records comes after a boundary with the file open, so
    the rotation happens on a record, not on an empty put. 11.0.1 logs that rotation with
    `currentTimestamp - baseRecordTimestamp`, both null without a time-based partitioner: a
    NullPointerException kills the task (confluentinc/kafka-connect-storage-cloud#867, fixed by
    #871 in 11.0.2). The last wait lets the schedule commit the last file on an empty put."""
    cfg = {**BASE, "flush.size": "1000", "rotate.schedule.interval.ms": "2000", "timezone": "UTC"}
    n = 24
    steps = [FaultStep(i, "wait", {"seconds": 0.25}) for i in range(1, n)] + [FaultStep(n, "wait", {"seconds": 5.0})]
    return Scenario("rotate-schedule-steady-stream", cfg, {"events": 1}, [_rec(i, PUBLIC_T + i * 250) for i in range(n)],
                    faults=steps, notes="R3.4 on a record's put; 11.0.1: NPE in the rotation log line (#867/#871)")


def idle_partition() -> Scenario:
    """rotate.interval.ms on an idle partition: the last file never flushes (issues #144, #70)."""
    cfg = {**BASE, "flush.size": "1000", "rotate.interval.ms": "60000", "timestamp.extractor": "Record",
           "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
           "locale": "en-US", "timezone": "UTC"}
    recs = [_rec(i, PUBLIC_T + i * 30_000) for i in range(5)]  # 0, 30 s, ... 120 s: one rotation at 60 s
    return Scenario("idle-partition-never-flushes", cfg, {"events": 1}, recs,
                    faults=[FaultStep(5, "wait", {"seconds": 2.0})],
                    notes="C5: data reaches S3 only when a newer record arrives")


def _multipart_cfg() -> dict[str, str]:
    return {**BASE, "flush.size": "90", "s3.part.size": str(PART_SIZE)}


def _big(n: int) -> list[dict]:
    return [_rec(i, PUBLIC_T + i, pad=BIG_RECORD - 64) for i in range(n)]


def multipart_completes() -> Scenario:
    """Story 1: 90 records of 200 KiB per file, 5 MiB parts: each file is a multipart upload
    of 4 parts; the upload completes and the committed offset moves from 180 to 270."""
    return Scenario("multipart-completes", _multipart_cfg(), {"events": 1}, _big(270),
                    faults=[FaultStep(180, "quiet", {"seconds": BIG_QUIET_S}), FaultStep(270, "quiet", {"seconds": BIG_QUIET_S})],
                    notes="public write-up: each file is a multipart upload of 4 parts; the stream "
                          "pauses at 180 so the commit at 180 is seen before the third file")


def multipart_crash_in_part_four() -> Scenario:
    """Story 2: a SIGKILL of the sink while part four of a 4-part upload is in flight: nothing
    partial becomes visible; the restart resumes at 270 and the same file appears whole."""
    # the sink settles at 270 first (the offset is there when the next file starts), so the
    # rule catches part four of the fourth file whatever the sink's pace
    faults = [FaultStep(270, "quiet", {"seconds": BIG_QUIET_S}),
              FaultStep(270, "s3", {"operation": "UploadPart", "action": "hang", "part_number": 4, "nth": 1,
                                    "name": "part 4 of the 4th file"}),
              FaultStep(360, "wait-fired", {"rule": "part 4 of the 4th file", "seconds": 120}),
              FaultStep(360, "crash"),
              FaultStep(360, "release"),
              FaultStep(360, "quiet", {"seconds": BIG_QUIET_S})]
    return Scenario("multipart-crash-in-part-four", _multipart_cfg(), {"events": 1}, _big(360), faults)


def multipart_lost_commit() -> Scenario:
    """Story 3: the upload completes but the offset commit is lost: the restart re-uploads
    under the same key, which overwrites it, and no duplicate remains."""
    faults = [FaultStep(270, "quiet", {"seconds": BIG_QUIET_S}),
              FaultStep(270, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response", "nth": 1,
                                    "name": "complete of the 4th file"}),
              FaultStep(360, "wait-fired", {"rule": "complete of the 4th file", "seconds": 120}),
              FaultStep(360, "crash"),
              FaultStep(360, "quiet", {"seconds": BIG_QUIET_S})]
    return Scenario("multipart-lost-commit", _multipart_cfg(), {"events": 1}, _big(360), faults)


NAMED: dict[str, Callable[[], Scenario]] = {
    "rotate-interval-table": rotate_interval_table,
    "rotate-schedule-table": rotate_schedule_table,
    "idle-partition-never-flushes": idle_partition,
    "multipart-completes": multipart_completes,
    "multipart-crash-in-part-four": multipart_crash_in_part_four,
    "multipart-lost-commit": multipart_lost_commit,
}


# --- scenarios aimed at bugs real sinks have had (the kill matrix) -----------------------------

def late_records_at_hour_edges() -> Scenario:
    """E3's timeline: rotation by record time, and a late record across the hour edge must
    close the current file on both sides (R3.2, R3.3)."""
    t = 1714557600000  # 10:00:00Z
    cfg = {**BASE, "flush.size": "100", "rotate.interval.ms": "3000", "timestamp.extractor": "Record",
           "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
           "locale": "en-US", "timezone": "UTC"}
    times = [t, t + 1000, t + 2500, t + 3200, t + 3300, t + 7000, t + 6500, t - 1000, t + 8000,
             t + 8100, t + 8200, t + 12000, t + 12100]
    return Scenario("late-records-at-hour-edges", cfg, {"events": 1}, [_rec(i, ts) for i, ts in enumerate(times)])


def crash_mid_stream() -> Scenario:
    """A crash between files: the restart resumes at the committed offset and re-creates the
    same objects (§16)."""
    cfg = {**BASE, "flush.size": "4"}
    recs = [{**r, "partition": r["value"]["seq"] % 2} for r in _small(22)]
    # the pause lets the first instance commit some files and hold an open one when it dies
    return Scenario("crash-mid-stream", cfg, {"events": 2}, recs,
                    faults=[FaultStep(11, "wait", {"seconds": 1.0}), FaultStep(11, "crash")])


def crash_during_complete() -> Scenario:
    """The sink dies while CompleteMultipartUpload hangs: nothing may be committed ahead of S3."""
    cfg = {**BASE, "flush.size": "5"}
    return Scenario("crash-during-complete", cfg, {"events": 1}, _small(20),
                    faults=[FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 2}),
                            FaultStep(20, "wait-fired", {"rule": 0, "seconds": 30}),
                            FaultStep(20, "crash"), FaultStep(20, "release")])


def retriable_s3_error() -> Scenario:
    """503 SlowDown on an upload: a retriable error must lose nothing and leak no upload."""
    cfg = {**BASE, "flush.size": "5"}
    return Scenario("retriable-503-on-upload", cfg, {"events": 1}, _small(15),
                    faults=[FaultStep(0, "s3", {"operation": "UploadPart", "action": "fail", "status": 503, "nth": 2})])


def zombie_task() -> Scenario:
    """A task paused while a Complete hangs, until another member owns its partitions (on Kafka
    Connect: SIGSTOP of the worker running it, until the other worker runs the task), then
    resumed: it finishes what it was doing (#800)."""
    cfg = {**BASE, "flush.size": "5"}
    return Scenario("zombie-task", cfg, {"events": 1}, _small(20),
                    faults=[FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 2}),
                            FaultStep(10, "wait-fired", {"rule": 0, "seconds": 30}),
                            FaultStep(10, "pause"), FaultStep(20, "wait", {"seconds": 2.0}),
                            FaultStep(20, "release"), FaultStep(20, "resume")])


def rebalance_mid_stream() -> Scenario:
    """A second member joins the group and leaves again while files are open (eager revocation:
    every writer closed, open files aborted, nothing committed, R1.7/R1.8): the new assignment
    resumes from the committed offsets and re-creates the same objects (§16)."""
    cfg = {**BASE, "flush.size": "4"}
    recs = [{**r, "partition": r["value"]["seq"] % 2} for r in _small(24)]
    return Scenario("rebalance-mid-stream", cfg, {"events": 2}, recs,
                    faults=[FaultStep(10, "quiet", {"seconds": 30}), FaultStep(10, "rebalance")])


def config_update_mid_stream() -> Scenario:
    """flush.size changed from 4 to 3 by a config update mid-stream (#487): the task restarts from
    the committed offsets; the new boundaries start there (C3: exactly-once is off, no-loss holds)."""
    cfg = {**BASE, "flush.size": "4"}
    return Scenario("config-update-mid-stream", cfg, {"events": 1}, _small(20),
                    faults=[FaultStep(10, "quiet", {"seconds": 30}),
                            FaultStep(10, "update-config", {"config": {"flush.size": "3"}})])


def task_restart_mid_stream() -> Scenario:
    """The task restarted through the REST API with a file open: the open file is aborted and
    re-created whole from the committed offset (R1.8)."""
    cfg = {**BASE, "flush.size": "4"}
    return Scenario("task-restart-mid-stream", cfg, {"events": 1}, _small(18),
                    faults=[FaultStep(10, "quiet", {"seconds": 30}), FaultStep(10, "restart-task")])


def two_tasks_restart_task_1() -> Scenario:
    """tasks.max=2 on 4 partitions, task 1 restarted through the REST API with files open: its
    consumer leaves and rejoins while task 0's stays, the group rebalances (R1.7: every writer
    closed, open files aborted) and both tasks re-create the same objects from the committed
    offsets (R1.8). The run must see task 1 back by its own consumer, not by a group with none
    of the members it had (task 0's member never leaves)."""
    cfg = {**BASE, "flush.size": "3", "tasks.max": "2"}
    recs = [{**r, "partition": r["value"]["seq"] % 4} for r in _small(28)]
    return Scenario("two-tasks-restart-task-1", cfg, {"events": 4}, recs,
                    faults=[FaultStep(14, "quiet", {"seconds": 30}), FaultStep(14, "restart-task", {"task": 1})])


# --- scenarios aimed at the config and record space: names, formats, types, zones ------------

JSON_KEYS_HEADERS = {"store.kafka.keys": "true", "keys.format.class": JSON,
                     "store.kafka.headers": "true", "headers.format.class": JSON}
HOURLY = "io.confluent.connect.storage.partitioner.HourlyPartitioner"
DAILY = "io.confluent.connect.storage.partitioner.DailyPartitioner"
TIME_BASED = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner"
FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
SCHEMAS = {"value.converter.schemas.enable": "true", "key.converter": "org.apache.kafka.connect.json.JsonConverter",
           "key.converter.schemas.enable": "true"}


def naming_options_keys_headers() -> Scenario:
    """R5's naming options beside stored keys and headers (R11): topics.dir two levels deep,
    file.delim '-', a 20-digit zero pad, gzip; schemaless values whose entries the connector
    writes in HashMap order, doubles in Java's spelling; several headers (text, bytes, unicode)."""
    cfg = {**BASE, **JSON_KEYS_HEADERS, "flush.size": "3", "topics.dir": "data/raw", "file.delim": "-",
           "filename.offset.zero.pad.width": "20", "s3.compression.type": "gzip"}
    recs = []
    for i in range(10):
        value = {"seq": i, "region": ["eu", "us"][i % 2], "ts": PUBLIC_T + i, "ratio": [0.1, 1.5e10, 1e-05][i % 3],
                 "nested": {"zeta": i, "alpha": [True, None]}, "note": "ü \"q\"\t"}
        recs.append({"topic": "events", "partition": 0, "timestamp": PUBLIC_T + i * 1000, "key": f"user-{i % 4}",
                     "value": value, "headers": [["h", str(i)], ["trace", f"t-{i}"], ["bin", {"base64": "AAF/"}],
                                                 ["lang", "ü ñ"]][: 1 + i % 4]})
    return Scenario("naming-options-keys-headers", cfg, {"events": 1}, recs,
                    notes="R5.1 options, R11.2 sibling names, R11.3 key and header contents")


def bytearray_options() -> Scenario:
    """ByteArrayFormat (R10.2) with its own extension and a multi-byte separator after every
    record, the last one included; topics.dir blank (no leading directory, R5.1), file.delim '_',
    a 3-digit zero pad that offsets past 999 outgrow; two partitions, gzip."""
    cfg = {**BASE, "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
           "format.class": "io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "flush.size": "4",
           "format.bytearray.extension": ".dat", "format.bytearray.separator": "<EOR>", "topics.dir": "",
           "file.delim": "_", "filename.offset.zero.pad.width": "3", "s3.compression.type": "gzip"}
    recs = []
    for i in range(17):
        raw = json.dumps({"seq": i, "blob": "x" * (i % 5)}, separators=(",", ":")).encode()
        recs.append({"topic": "events", "partition": i % 2, "timestamp": PUBLIC_T + i, "key": f"k{i}",
                     "value": base64.b64encode(raw).decode(), "headers": []})
    return Scenario("bytearray-options", cfg, {"events": 2}, recs, notes="R5.1, R5.3, R10.2")


def _typed_schema(ts_type: str = "int64") -> dict:
    return {"type": "struct", "name": "order", "version": 3, "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "region", "type": "string", "optional": True},
        {"field": "ts", "type": ts_type, "optional": False},
        {"field": "i8", "type": "int8", "optional": False},
        {"field": "f32", "type": "float", "optional": False},
        {"field": "f64", "type": "double", "optional": True, "default": 2.5},
        {"field": "flag", "type": "boolean", "optional": True},
        {"field": "amount", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "2"}, "optional": False},
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "optional": True},
        {"field": "clock", "type": "int32", "name": "org.apache.kafka.connect.data.Time", "version": 1,
         "optional": False},
        {"field": "raw", "type": "bytes", "optional": True},
        {"field": "tags", "type": "map", "keys": {"type": "string", "optional": False},
         "values": {"type": "double", "optional": False}, "optional": False},
        {"field": "codes", "type": "map", "keys": {"type": "int32", "optional": False},
         "values": {"type": "string", "optional": True}, "optional": True},
        {"field": "points", "type": "array", "optional": True, "items": {
            "type": "struct", "name": "point", "optional": False,
            "fields": [{"field": "x", "type": "int16", "optional": False}, {"field": "y", "type": "double",
                                                                             "optional": True}]}},
    ]}


def _typed_payload(i: int, region: str | None, ts: Any) -> dict:
    # fields in another order than the schema's, an optional one left out (written as its
    # default or null, in schema order, by JsonConverter)
    return {"tags": {"zeta": 0.5, "alpha": 1e-05, "mid": 123.456}, "seq": i, "ts": ts, "region": region,
            "i8": -128 + i, "f32": [0.1, 1024.0, -1.25][i % 3], "amount": base64.b64encode(
                (1234 + i * 1000).to_bytes(4, "big", signed=True)).decode(),
            "day": 19723 + i if i % 3 else None, "clock": 3_600_000 * i, "raw": "AAEC",
            "codes": [[i * 17, "x"], [5000, None], [-3, "y"]], "points": [{"x": i, "y": 0.25}, {"x": -i}]}


def struct_types_numeric() -> Scenario:
    """Struct values of every Connect type and logical type (JsonConverter with schemas), written
    by JsonFormat with json.decimal.format=NUMERIC (R10.1, E10); FieldPartitioner on a region
    that is sometimes null (`region=null`) or holds a '/' (not escaped: a directory level of its
    own, R6.2); Struct keys and several headers stored."""
    cfg = {**BASE, **SCHEMAS, **JSON_KEYS_HEADERS, "flush.size": "3", "json.decimal.format": "NUMERIC",
           "partitioner.class": FIELD, "partition.field.name": "region"}
    schema = _typed_schema()
    key_schema = {"type": "struct", "name": "key", "optional": False,
                  "fields": [{"field": "id", "type": "int32", "optional": False},
                             {"field": "name", "type": "string", "optional": True}]}
    regions = ["eu", "us", None, "eu/west", "eu", "us", "eu", None, "us", "eu"]
    recs = [{"topic": "events", "partition": 0, "timestamp": PUBLIC_T + i, "value": {
        "schema": schema, "payload": _typed_payload(i, regions[i], PUBLIC_T + i)},
        "key": {"schema": key_schema, "payload": {"id": i % 3, "name": None if i % 4 == 0 else f"n{i}"}},
        "headers": [["h", str(i)], ["src", "ü"]]} for i in range(10)]
    return Scenario("struct-types-numeric", cfg, {"events": 1}, recs, notes="R6.2, R10.1, R11")


def local_midnight_daily() -> Scenario:
    """DailyPartitioner in Asia/Kolkata (UTC+05:30): days are cut at local midnight (flooring on
    local epoch milliseconds, R6.3, E8), so records from 23:50 to 00:20 local fall in two days;
    rotate.interval.ms and partition change rotation close the file at the edge (R3.2, R3.3);
    a 12-digit zero pad."""
    t = 1714587600000  # 2024-05-01T18:20:00Z, 23:50 in Kolkata
    cfg = {**BASE, "flush.size": "100", "partitioner.class": DAILY, "locale": "en-IN", "timezone": "Asia/Kolkata",
           "timestamp.extractor": "Record", "rotate.interval.ms": "600000", "filename.offset.zero.pad.width": "12"}
    # a late record back in the 1st, then one in the 2nd again: partition change closes each file
    times = [0, 240_000, 540_000, 599_999, 600_000, 610_000, 900_000, 300_000, 950_000, 1_200_000, 1_800_000,
             1_801_000]
    return Scenario("local-midnight-daily", cfg, {"events": 1}, [_rec(i, t + d) for i, d in enumerate(times)],
                    notes="R6.3 local days, R3.2 inclusive interval")


def dst_hourly_berlin() -> Scenario:
    """HourlyPartitioner in Europe/Berlin across the end of summer time (2024-10-27: local 02:00
    to 03:00 comes twice, CEST then CET) and a record exactly rotate.interval.ms after the
    file's first record, which rotates (the check is inclusive, R3.2)."""
    t = 1729987200000  # 2024-10-27T00:00:00Z, 02:00 CEST
    cfg = {**BASE, "flush.size": "100", "partitioner.class": HOURLY, "locale": "de-DE", "timezone": "Europe/Berlin",
           "timestamp.extractor": "Record", "rotate.interval.ms": "1200000"}
    mins = [0, 10, 20, 30, 45, 59, 60, 61, 80, 100, 119, 120, 150, 180]
    return Scenario("dst-hourly-berlin", cfg, {"events": 1}, [_rec(i, t + m * 60_000) for i, m in enumerate(mins)],
                    notes="R6.3 local hours across a DST change, R3.2")


def dst_time_based_new_york() -> Scenario:
    """TimeBasedPartitioner with 7-hour buckets ('day'=dd/'hour'=HH) in America/New_York across
    the start of summer time (2024-03-10: 02:00 EST becomes 03:00 EDT): buckets floor local
    epoch milliseconds, so they drift across days (R6.3, S9, E8); the RecordField extractor
    reads an ISO timestamp with an offset from the value (R6.5)."""
    t = 1710043200000  # 2024-03-10T04:00:00Z, 23:00 EST on the 9th
    cfg = {**BASE, "flush.size": "3", "partitioner.class": TIME_BASED, "partition.duration.ms": "25200000",
           "path.format": "'day'=dd/'hour'=HH", "locale": "en-US", "timezone": "America/New_York",
           "timestamp.extractor": "RecordField", "timestamp.field": "at"}
    recs = []
    for i, h in enumerate([0, 1, 2.5, 3, 3.5, 4, 6, 9, 13, 20, 27]):
        ts = t + int(h * 3_600_000)
        iso = datetime.datetime.fromtimestamp(ts / 1000, datetime.timezone(datetime.timedelta(hours=2)))
        recs.append({"topic": "events", "partition": 0, "timestamp": PUBLIC_T, "key": f"k{i}",
                     "value": {"seq": i, "at": iso.isoformat(timespec="milliseconds")}, "headers": []})
    return Scenario("dst-time-based-new-york", cfg, {"events": 1}, recs, notes="R6.3 S9, R6.5 ISO strings")


def dst_hourly_lord_howe() -> Scenario:
    """HourlyPartitioner on Lord Howe Island, whose clocks go back half an hour (2024-04-07:
    local 02:00 LHDT becomes 01:30 LHST): an hour's records straddle the change, and each
    bucket is the local hour floored on local epoch milliseconds (R6.3)."""
    t = 1712412000000  # 2024-04-06T14:00:00Z, 01:00 LHDT
    cfg = {**BASE, "flush.size": "100", "partitioner.class": HOURLY, "locale": "en-AU",
           "timezone": "Australia/Lord_Howe", "timestamp.extractor": "Record", "rotate.interval.ms": "5400000"}
    mins = [0, 20, 29, 31, 45, 59, 61, 75, 89, 91, 100, 130, 170]
    return Scenario("dst-hourly-lord-howe", cfg, {"events": 1}, [_rec(i, t + m * 60_000) for i, m in enumerate(mins)],
                    notes="R6.3 local hours across a half-hour DST change")


def field_partition_decimals() -> Scenario:
    """FieldPartitioner on two Struct fields (joined by directory.delim, R5.2), a value holding
    a '/' (not escaped, R6.2); Decimals of two scales written as JSON numbers
    (json.decimal.format=NUMERIC, R10.1), gzip."""
    schema = {"type": "struct", "name": "payment", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "region", "type": "string", "optional": False},
        {"field": "tier", "type": "int32", "optional": True},
        {"field": "price", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "3"}, "optional": False},
        {"field": "units", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "0"}, "optional": True}]}
    cfg = {**BASE, "value.converter.schemas.enable": "true", "flush.size": "2", "partitioner.class": FIELD,
           "partition.field.name": "region,tier",
           "json.decimal.format": "NUMERIC", "s3.compression.type": "gzip"}
    recs = []
    for i in range(9):
        price = (-1) ** i * (1999 + 100_000 * i)
        payload = {"seq": i, "region": ["eu/west", "us", "eu/west"][i % 3], "tier": None if i == 4 else i % 2,
                   "price": base64.b64encode(price.to_bytes(4, "big", signed=True)).decode(),
                   "units": None if i % 4 == 0 else base64.b64encode((10 ** i).to_bytes(5, "big", signed=True)).decode()}
        recs.append({"topic": "events", "partition": 0, "timestamp": PUBLIC_T + i, "key": f"k{i}",
                     "value": {"schema": schema, "payload": payload}, "headers": []})
    return Scenario("field-partition-decimals", cfg, {"events": 1}, recs, notes="R5.2, R6.2, R10.1")


def zombie_with_keys() -> Scenario:
    """A zombie on two partitions with keys stored (no conditional writes then, R8.1): the
    paused task, resumed after the other member took over, must not put an older file over a
    newer one (#800)."""
    cfg = {**BASE, "flush.size": "4", "store.kafka.keys": "true", "keys.format.class": JSON}
    recs = [{**r, "partition": r["value"]["seq"] % 2} for r in _small(24)]
    return Scenario("zombie-with-keys", cfg, {"events": 2}, recs,
                    faults=[FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 3}),
                            FaultStep(12, "wait-fired", {"rule": 0, "seconds": 30}),
                            FaultStep(12, "pause"), FaultStep(24, "wait", {"seconds": 2.0}),
                            FaultStep(24, "release"), FaultStep(24, "resume")])


def rotate_interval_boundary() -> Scenario:
    """rotate.interval.ms=2000 on record time: a record exactly 2000 ms after the file's first
    record rotates (>=, R3.2), one at 1999 ms does not; the next file's window starts at the
    first record after the rotation, not at the boundary (S2)."""
    cfg = {**BASE, "flush.size": "100", "rotate.interval.ms": "2000", "timestamp.extractor": "Record",
           "partitioner.class": TIME_BASED, "partition.duration.ms": "3600000",
           "path.format": "'dt'=yyyy-MM-dd/'hr'=HH/", "locale": "fr", "timezone": "Asia/Kathmandu"}
    times = [0, 1000, 1999, 2000, 3000, 3999, 4000, 4001, 6001, 6500]
    return Scenario("rotate-interval-boundary", cfg, {"events": 1}, [_rec(i, PUBLIC_T + d) for i, d in enumerate(times)],
                    notes="R3.2 inclusive, S2")


def _error_200(name: str, forward: bool, cfg: dict, n: int, partitions: int, nths: list[int]) -> Scenario:
    recs = [{**r, "partition": r["value"]["seq"] % partitions} for r in _small(n)]
    faults = [FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "action": "error-200", "nth": k,
                                  "forward": forward, "name": f"error-200-{k}"}) for k in nths]
    return Scenario(name, cfg, {"events": partitions}, recs, faults=faults)


def error_inside_200_not_applied() -> Scenario:
    """CompleteMultipartUpload answered 200 with an InternalError inside, the upload not done
    (#855): a sink that reads the 200 as success loses the file; the connector retries it."""
    return _error_200("error-inside-200-not-applied", False, {**BASE, "flush.size": "4"}, 16, 1, [2])


def error_inside_200_with_keys() -> Scenario:
    """The same on two partitions with keys stored: the failed Complete may be the value's or the
    keys object's (R11.1), on the first and the third upload."""
    cfg = {**BASE, "flush.size": "3", "store.kafka.keys": "true", "keys.format.class": JSON}
    return _error_200("error-inside-200-with-keys", False, cfg, 18, 2, [1, 3])


def error_inside_200_applied() -> Scenario:
    """The 200 carries an error after S3 completed the upload: the object is there and a retried
    Complete is answered as the completion it was."""
    return _error_200("error-inside-200-applied", True, {**BASE, "flush.size": "4"}, 16, 1, [2])


SPACE_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "naming-options-keys-headers": naming_options_keys_headers,
    "bytearray-options": bytearray_options,
    "struct-types-numeric": struct_types_numeric,
    "local-midnight-daily": local_midnight_daily,
    "dst-hourly-berlin": dst_hourly_berlin,
    "dst-time-based-new-york": dst_time_based_new_york,
    "dst-hourly-lord-howe": dst_hourly_lord_howe,
    "field-partition-decimals": field_partition_decimals,
    "zombie-with-keys": zombie_with_keys,
    "rotate-interval-boundary": rotate_interval_boundary,
    "error-inside-200-not-applied": error_inside_200_not_applied,
    "error-inside-200-with-keys": error_inside_200_with_keys,
    "error-inside-200-applied": error_inside_200_applied,
    **time_edge_scenarios(BASE),
    **FORMAT_SCENARIOS,
    **REGISTRY_SCENARIOS,
    **INPUT_SCENARIOS,
}


KILL_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "late-records-at-hour-edges": late_records_at_hour_edges,
    "crash-mid-stream": crash_mid_stream,
    "crash-during-complete": crash_during_complete,
    "retriable-503-on-upload": retriable_s3_error,
    "zombie-task": zombie_task,
    "rotate-interval-table": rotate_interval_table,
    "idle-partition-never-flushes": idle_partition,
    "task-restart-mid-stream": task_restart_mid_stream,
    **SPACE_SCENARIOS,
    **EVOLUTION_SCENARIOS,
    **S3_STATUS_SCENARIOS,  # last: only the variants not yet killed twice play them
    **STARTUP_SCENARIOS,
}

# the process faults a deployment sees besides crashes and zombies (#487, R1.7/R1.8)
PROCESS_FAULTS: dict[str, Callable[[], Scenario]] = {
    "rebalance-mid-stream": rebalance_mid_stream,
    "config-update-mid-stream": config_update_mid_stream,
    "task-restart-mid-stream": task_restart_mid_stream,
    "two-tasks-restart-task-1": two_tasks_restart_task_1,
    "worker-joins-then-leaves": REBALANCE_SHAPES["worker-joins-then-leaves"],
}

# scenarios that show a known bug of a released connector version (conformance.catalog.known_bugs)
KNOWN_BUG_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "rotate-schedule-steady-stream": rotate_schedule_steady_stream,
    "cooperative-worker-joins-then-leaves": REBALANCE_SHAPES["cooperative-worker-joins-then-leaves"],
    **S3_KNOWN_BUG_SCENARIOS,
}

# what the suite and `sinkcheck run` play: the public write-ups, then the scenarios aimed at bugs,
# then the process faults
# (schema.compatibility is Confluent's: its scenarios are played where it is read, CONNECTOR_OWN)
SUITE: dict[str, Callable[[], Scenario]] = {**NAMED, **{k: v for k, v in KILL_SCENARIOS.items()
                                                        if k not in NAMED and k not in EVOLUTION_SCENARIOS
                                                        and k not in STARTUP_SCENARIOS},
                                            **PROCESS_FAULTS, **KNOWN_BUG_SCENARIOS}


def _with_null_value(n: int, at: int) -> list[dict]:
    recs = _small(n)
    recs[at] = {**recs[at], "value": None}  # a tombstone: the key with a null value
    return recs


def null_value_stops_the_task() -> Scenario:
    """A tombstone mid-stream on a sink that cannot write a null value and has no errant-record
    reporter: Camel's exchange fails (no body) and its task with it; the records after it are
    never written, and nothing after it is committed."""
    # flush.size: a config Confluent's connector accepts too (R3.7: its default behaviour on a null
    # value fails the task as well), so the scenario plays side by side on every target
    return Scenario("null-value-stops-the-task", {**BASE, "flush.size": "3"}, {"events": 1}, _with_null_value(10, 5),
                    notes="Camel: InvalidPayloadException, then 'Exchange delivery has failed!' (no reporter)")


def null_value_tolerated() -> Scenario:
    """The same tombstone with errors.tolerance=all and errors.log.enable=true: the worker gives
    the task an errant-record reporter (KIP-610), Camel reports the failed exchange to it, the
    record is skipped and the stream goes on."""
    cfg = {**BASE, "flush.size": "3", "errors.tolerance": "all", "errors.log.enable": "true"}
    return Scenario("null-value-tolerated", cfg, {"events": 1}, _with_null_value(10, 5),
                    notes="Camel: the failed exchange is reported and skipped")


# scenarios about one connector's own behaviour, played on that connector's targets only (by
# the claim family of conformance.inputs.targets.target_kind)
CONNECTOR_OWN: dict[str, dict[str, Callable[[], Scenario]]] = {
    "camel": {"null-value-stops-the-task": null_value_stops_the_task, "null-value-tolerated": null_value_tolerated},
    "iceberg": ICEBERG_OWN,
    # the gate plays it between any two versions; a run plays it on Confluent's connector (R3.9's bug)
    "confluent": {"tombstones-with-record-time-rotation": tombstones_with_record_time_rotation, **SCHEMALESS_AVRO,
                  **EVOLUTION_SCENARIOS, **PROTOBUF_SCENARIOS, **STARTUP_SCENARIOS},
    # the start-up check (R1.3) is Confluent's start(), which the Python sink follows
    "pysink": {**SCHEMALESS_AVRO, **EVOLUTION_SCENARIOS, **PROTOBUF_SCENARIOS, **STARTUP_SCENARIOS},
    "aiven": AIVEN_OWN,
    "lenses": LENSES_OWN,
}
# every named scenario by name (`--scenario NAME` picks from these)
ALL_NAMED: dict[str, Callable[[], Scenario]] = {**SUITE, **{k: v for own in CONNECTOR_OWN.values() for k, v in own.items()}}
