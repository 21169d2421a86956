"""Named scenarios for Aiven's S3 sink 3.4.2 (`io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector`),
each about what is its own: its naming template (the `{{key}}` grouping, the default template
with and without padding, the compression's extension, `aws.s3.prefix`'s legacy names), its
output formats and fields, and its at-least-once claim under a SIGKILL mid-multipart, S3 errors
beyond its client's retries, a rebalance and a zombie. Their connector configs are Aiven's own
(used as given: sinkcheck fills in only the endpoint, bucket and credentials), and they play
on the Aiven target only (conformance.catalog.named.CONNECTOR_OWN).

Where the sink writes what (its source, v3.4.2): put() only groups records; SinkTask.flush()
(each `offset.flush.interval.ms`, 2 s on sinkcheck's workers, and on rebalance or stop) writes
each group as one object through a multipart upload (S3OutputStream: CreateMultipartUpload,
UploadPart per `aws.s3.part.size.bytes`, CompleteMultipartUpload, even for a few bytes), then
Kafka Connect commits the offsets. A flush that throws is logged by the worker, which rewinds
the consumer to the last committed offsets: the records come again.
"""
from __future__ import annotations

import base64
import json
from typing import Callable

from conformance.inputs.scenario import FaultStep, Scenario

PUBLIC_T = 1706713200000  # 2024-01-31T15:00:00Z
AIVEN = {
    "connector.class": "io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector",
    "tasks.max": "1",
    "format.output.type": "jsonl",
    "format.output.fields": "key,value,offset,timestamp",
    "file.compression.type": "none",
    "file.max.records": "100",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
BYTES_VALUES = {"value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
# the first object's multipart upload, whichever key it has
FIRST_PART = {"operation": "UploadPart", "nth": 1}


def _records(n: int, partitions: int = 3, keys: int = 0, as_bytes: bool = False) -> list[dict]:
    out = []
    for i in range(n):
        value: object = {"seq": i, "ts": PUBLIC_T + i * 1000}
        if as_bytes:  # ByteArrayConverter: a scenario gives the bytes in base64
            value = base64.b64encode(json.dumps(value).encode()).decode()
        out.append({"topic": "events", "partition": i % partitions, "timestamp": PUBLIC_T + i * 1000,
                    "key": f"k{i % keys}" if keys else f"k{i}", "value": value, "headers": []})
    return out


def _aiven(**overrides: str) -> dict[str, str]:
    cfg = {**AIVEN, **overrides}
    return {k: v for k, v in cfg.items() if v != ""}


def e2e_1000() -> Scenario:
    """1000 JSON records across 3 partitions, no fault: each is in S3 once at quiet, named by
    the default template, at most file.max.records a file, with its key, offset and timestamp."""
    return Scenario("aiven-1000-records-3-partitions", _aiven(), {"events": 3}, _records(1000),
                    notes="Aiven's README: at-least-once; one object per partition per flush, split by file.max.records")


def key_template() -> Scenario:
    """`file.name.template={{key}}`: one object per key, each flush overwriting it with the
    key's latest record (compact grouping), across flushes and a task restart: at quiet every
    key's last value is there."""
    cfg = _aiven(**{"file.name.template": "{{key}}", "file.max.records": "1"})
    return Scenario("aiven-key-template", cfg, {"events": 1}, _records(90, partitions=1, keys=7),
                    faults=[FaultStep(40, "quiet", {"seconds": 60}), FaultStep(60, "restart-task")],
                    notes="Aiven's README, 'Grouping by the key': only the latest record per key is kept")


def default_template_csv() -> Scenario:
    """Aiven's defaults but the fields: csv of the base64 value (ByteArrayConverter), no
    `file.name.template` and no `file.compression.type`: the README's default name is
    `{{topic}}-{{partition}}-{{start_offset}}` plus `.gz` (compression gzip by default)."""
    cfg = _aiven(**{"format.output.type": "", "file.compression.type": "", **BYTES_VALUES})
    return Scenario("aiven-default-template-csv", cfg, {"events": 2}, _records(200, partitions=2, as_bytes=True),
                    notes="the default template gets the compression's extension (FileNameFragment.getFilename)")


def padded_template_zstd() -> Scenario:
    """An explicit template with padding, `{{topic}}/{{partition:padding=true}}/{{start_offset:padding=true}}`,
    and zstd: the partition in 10 digits, the offset in 20, and no extension (only the default
    template gets one)."""
    cfg = _aiven(**{"file.name.template": "{{topic}}/{{partition:padding=true}}/{{start_offset:padding=true}}",
                    "file.compression.type": "zstd"})
    return Scenario("aiven-padded-template-zstd", cfg, {"events": 2}, _records(200, partitions=2))


def json_snappy() -> Scenario:
    """`format.output.type=json` (one JSON array a file) with snappy: the default template plus `.snappy`."""
    cfg = _aiven(**{"format.output.type": "json", "file.compression.type": "snappy"})
    return Scenario("aiven-json-snappy", cfg, {"events": 2}, _records(200, partitions=2))


def legacy_prefix_gzip() -> Scenario:
    """`aws.s3.prefix` switches to the legacy names, the template ignored:
    `<prefix><topic>-<partition>-<20-digit offset>.gz`."""
    cfg = _aiven(**{"aws.s3.prefix": "legacy/", "file.compression.type": "gzip",
                    "file.name.template": "ignored-{{topic}}-{{partition}}-{{start_offset}}"})
    return Scenario("aiven-legacy-prefix-gzip", cfg, {"events": 2}, _records(200, partitions=2))


def kill_mid_multipart() -> Scenario:
    """SIGKILL of the worker while the first object's UploadPart hangs: the flush never ends,
    the offsets are not committed, and the restarted task writes the records again (the dead
    upload stays open: measured)."""
    return Scenario("aiven-kill-mid-multipart", _aiven(), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {**FIRST_PART, "action": "hang", "name": "the first part"}),
                            FaultStep(300, "wait-fired", {"rule": "the first part", "seconds": 60}),
                            FaultStep(300, "crash"), FaultStep(300, "release")])


def errors_on_upload_part() -> Scenario:
    """InternalError on UploadPart more times than `aws.s3.backoff.max.retries` (3) lets the
    client retry: the flush fails (S3OutputStream aborts the upload), the worker rewinds to the
    committed offsets and a later flush writes the records."""
    return Scenario("aiven-500-on-upload-part", _aiven(), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {**FIRST_PART, "action": "fail", "status": 500, "times": 8,
                                                "name": "the first part"}),
                            FaultStep(300, "wait-fired", {"rule": "the first part", "seconds": 60})])


def errors_on_complete() -> Scenario:
    """InternalError on CompleteMultipartUpload beyond the client's retries: the flush fails and
    its records come again (the upload is left open: measured)."""
    return Scenario("aiven-500-on-complete", _aiven(), {"events": 3}, _records(300),
                    faults=[FaultStep(0, "s3", {"operation": "CompleteMultipartUpload", "nth": 1, "action": "fail",
                                                "status": 500, "times": 8, "name": "the first complete"}),
                            FaultStep(300, "wait-fired", {"rule": "the first complete", "seconds": 60})])


def rebalance() -> Scenario:
    """A second worker joins and leaves mid-stream: the task's partitions are revoked (a flush)
    and reassigned twice."""
    return Scenario("aiven-rebalance-mid-stream", _aiven(), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "rebalance")])


def zombie() -> Scenario:
    """The worker running the task is stopped (SIGSTOP) until another worker runs it, then
    resumed: the zombie's late flush may write records again, never lose any."""
    return Scenario("aiven-zombie-task", _aiven(), {"events": 3}, _records(300),
                    faults=[FaultStep(150, "wait", {"seconds": 1.0}), FaultStep(150, "pause"),
                            FaultStep(300, "wait", {"seconds": 4.0}), FaultStep(300, "resume")])


def parquet_null_in_array() -> Scenario:
    """`format.output.type=parquet` of Structs (JsonConverter with schemas) holding an array of
    optional ints, one record in three with a null inside it: parquet-avro's two-level list
    writer, which Aiven's ParquetOutputWriter leaves on (Confluent's connector turns it off for
    such schemas, kafka-connect-storage-cloud#339, PR #485), throws on the null at every flush."""
    schema = {"type": "struct", "name": "reading", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "ts", "type": "int64", "optional": False},
        {"field": "samples", "type": "array", "items": {"type": "int32", "optional": True}, "optional": False}]}
    recs = [{"topic": "events", "partition": i % 2, "timestamp": PUBLIC_T + i * 1000, "key": f"k{i}",
             "value": {"schema": schema, "payload": {"seq": i, "ts": PUBLIC_T + i * 1000,
                                                     "samples": [i, None, -i] if i % 3 == 2 else [i, -i]}},
             "headers": []} for i in range(12)]
    cfg = _aiven(**{"format.output.type": "parquet", "format.output.fields": "value",
                    "value.converter.schemas.enable": "true", "file.max.records": "4"})
    return Scenario("aiven-parquet-null-in-array", cfg, {"events": 2}, recs,
                    notes="parquet output, an array of optional items holding a null")


AIVEN_OWN: dict[str, Callable[[], Scenario]] = {s().name: s for s in (
    e2e_1000, key_template, default_template_csv, padded_template_zstd, json_snappy, legacy_prefix_gzip,
    kill_mid_multipart, errors_on_upload_part, errors_on_complete, rebalance, zombie, parquet_null_in_array)}
