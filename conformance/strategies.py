"""Hypothesis strategies for connector configs, record streams and put schedules.

Each strategy is named after what it generates and shrinks toward the simplest case: fewer
records, the default partitioner, no rotation by time, no nulls.
"""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

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
    nulls = draw(st.sampled_from(["ignore", "write", "fail"]))
    cfg["behavior.on.null.values"] = nulls
    if nulls == "write" or draw(st.booleans()):
        cfg.update({"store.kafka.keys": "true", "keys.format.class": JSON_FORMAT})
    if draw(st.booleans()):
        cfg.update({"store.kafka.headers": "true", "headers.format.class": JSON_FORMAT})
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

from conformance.scenario import FaultStep, Scenario  # noqa: E402

SINK_PARTITIONERS = ("default", "field", "hourly")


@st.composite
def sink_configs(draw: st.DrawFn) -> dict[str, str]:
    """Configs a real sink runs in the suite: JSON values, rotation by size and record time."""
    cfg = {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": JSON_FORMAT,
        "s3.bucket.name": "sinkcheck",
        "flush.size": str(draw(st.integers(1, 8))),
        "behavior.on.null.values": "ignore",
    }
    part = draw(st.sampled_from(SINK_PARTITIONERS))
    if part == "field":
        cfg.update({"partitioner.class": P + "FieldPartitioner", "partition.field.name": "region"})
    elif part == "hourly":
        cfg.update({"partitioner.class": P + "HourlyPartitioner", "timestamp.extractor": "Record",
                    "locale": "en-US", "timezone": "UTC"})
        if draw(st.booleans()):
            cfg["rotate.interval.ms"] = str(draw(st.sampled_from([1000, 3000, 60000])))
    if draw(st.booleans()):
        cfg["s3.compression.type"] = "gzip"
    return cfg


SINK_VALUE_SCHEMA = {
    "type": "struct", "optional": False, "name": "order",
    "fields": [{"field": "seq", "type": "int64", "optional": False},
               {"field": "region", "type": "string", "optional": True},
               {"field": "ts", "type": "int64", "optional": False}],
}


@st.composite
def sink_records(draw: st.DrawFn, topics: dict[str, int], max_records: int = 40,
                 structs: bool = False) -> list[dict[str, Any]]:
    """Records with a `seq` in every value (how checkers find them in S3): late and
    out-of-order timestamps, hour edges, idle gaps, keys, regions; Structs (JsonConverter's
    envelope) where the partitioner needs them."""
    n = draw(st.integers(1, max_records))
    tps = [(t, p) for t, k in topics.items() for p in range(k)]
    clock = T0 - draw(st.sampled_from([0, 1500, 60_000]))
    out = []
    for seq in range(n):
        t, p = draw(st.sampled_from(tps))
        clock += draw(st.sampled_from([0, 100, 1000, 2500, 60_000, 3_600_000]))
        ts = clock - draw(st.sampled_from([0, 0, 0, 1500, 3_600_000]))
        payload = {"seq": seq, "region": draw(st.sampled_from(["eu", "us"])), "ts": ts}
        value = {"schema": SINK_VALUE_SCHEMA, "payload": payload} if structs else payload
        out.append({"topic": t, "partition": p, "timestamp": ts, "key": f"k{seq % 5}", "value": value,
                    "headers": [["h", str(seq)]]})
    return out


@st.composite
def fault_schedules(draw: st.DrawFn, n_records: int) -> list[FaultStep]:
    """0–2 faults at chosen points: a crash, a zombie pause, a 503 on an S3 call, a 200 that
    carries an error on CompleteMultipartUpload, a response dropped after Complete."""
    steps = []
    for _ in range(draw(st.integers(0, 2))):
        after = draw(st.integers(0, n_records))
        kind = draw(st.sampled_from(["crash", "pause", "s3-503", "s3-500", "s3-error-200", "s3-drop"]))
        if kind == "crash":
            steps.append(FaultStep(after, "crash"))
        elif kind == "pause":
            steps.append(FaultStep(after, "pause", {"duration_s": 1.0}))
        else:
            op = draw(st.sampled_from(["UploadPart", "CompleteMultipartUpload", "CreateMultipartUpload"]))
            action, status = {"s3-503": ("fail", 503), "s3-500": ("fail", 500),
                              "s3-error-200": ("error-200", 200), "s3-drop": ("drop-response", 200)}[kind]
            if action in ("error-200", "drop-response"):
                op = "CompleteMultipartUpload"
            steps.append(FaultStep(after, "s3", {"operation": op, "action": action, "status": status,
                                                 "nth": draw(st.integers(1, 2))}))
    return sorted(steps, key=lambda f: f.after)


@st.composite
def scenarios(draw: st.DrawFn, max_records: int = 40, with_faults: bool = True) -> Scenario:
    """A whole scenario: config, topics, records, faults. Shrinks toward fewer records and
    no faults."""
    cfg = draw(sink_configs())
    topics = {"orders": draw(st.integers(1, 2))}
    structs = cfg.get("partitioner.class", "").endswith("FieldPartitioner") or draw(st.booleans())
    records = draw(sink_records(topics, max_records, structs))
    faults = draw(fault_schedules(len(records))) if with_faults else []
    return Scenario("generated", cfg, topics, records, faults)
