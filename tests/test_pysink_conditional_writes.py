"""R8 in the Python sink: where the connector sends If-None-Match: * on CompleteMultipartUpload,
the Python sink does too, never overwrites an object already there, and skips past it (R8.2);
and the S3 it runs against (in memory, or moto through the fault front) answers 412 as S3 does."""
from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from adapters.s3.memory import MemoryS3, MemoryS3Client
from adapters.pysink.log import InProcessLog
from adapters.pysink.sink import InProcessSink, ManualClock, SinkSettings

T0 = 1714557600000
BASE = {"s3.bucket.name": "b", "flush.size": "2", "rotate.schedule.interval.ms": "600000", "timezone": "UTC",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
KEY0, KEY1 = "topics/t/partition=0/t+0+0000000000.json", "topics/t/partition=0/t+0+0000000001.json"
NEWER = b'{"seq":"newer"}\n'


def run_over_newer_object(config: dict[str, str], n: int = 4) -> tuple[MemoryS3, InProcessSink]:
    """A sink writing records 0..n-1 of t-0 into a bucket where another member already completed
    the object its first file is named after (a newer file of the same key)."""
    clock = ManualClock(T0)
    store = MemoryS3(clock)
    s3 = MemoryS3Client(store)
    s3.create_bucket(Bucket="b")
    s3.put_object(Bucket="b", Key=KEY0, Body=NEWER)
    log = InProcessLog()
    log.create({"t": 1})
    for i in range(n):
        log.append("t", 0, T0 + i, b"k", json.dumps({"seq": i}).encode())
    sink = InProcessSink(log, s3, SinkSettings.from_config(config), clock=clock)
    for _ in range(6):  # polls past retry.backoff.ms
        sink.poll_once()
        clock.advance(1000)
    return store, sink


def body(store: MemoryS3, key: str) -> bytes:
    return store.buckets["b"][key].body


def seqs(store: MemoryS3, key: str) -> list[int]:
    return [json.loads(line)["seq"] for line in body(store, key).splitlines()]


def test_R8_1_R8_2_a_file_whose_key_is_taken_is_not_overwritten_and_its_records_go_on_past_it():
    store, sink = run_over_newer_object(BASE)
    assert body(store, KEY0) == NEWER  # never overwritten
    # the scan finds offset 1 free (R8.2): the records after the existing file's start are written again
    assert seqs(store, KEY1) == [1, 2]
    assert sink.log.committed(sink.group)[("t", 0)] == 3
    assert not store.uploads or all(u.completed for u in store.uploads.values())  # the refused upload aborted


@pytest.mark.parametrize("off", [{"store.kafka.keys": "true", "keys.format.class":
                                  "io.confluent.connect.s3.format.json.JsonFormat"},
                                 {"enable.conditional.writes": "false"},
                                 {"rotate.schedule.interval.ms": "-1"}])
def test_R8_1_without_conditional_writes_an_existing_key_is_overwritten(off):
    config = {**BASE, **off}
    assert not SinkSettings.from_config(config).conditional_writes
    store, _ = run_over_newer_object(config)
    assert seqs(store, KEY0) == [0, 1]


def test_R8_1_any_schedule_but_minus_one_turns_them_on():
    assert SinkSettings.from_config({**BASE, "rotate.schedule.interval.ms": "0"}).conditional_writes
    assert SinkSettings.from_config(BASE).conditional_writes


def test_R8_2_the_scan_skips_files_already_there_up_to_max_files_scan_limit():
    clock = ManualClock(T0)
    store = MemoryS3(clock)
    s3 = MemoryS3Client(store)
    s3.create_bucket(Bucket="b")
    for k in (KEY0, KEY1):
        s3.put_object(Bucket="b", Key=k, Body=NEWER)
    log = InProcessLog()
    log.create({"t": 1})
    for i in range(4):
        log.append("t", 0, T0 + i, b"k", json.dumps({"seq": i}).encode())
    sink = InProcessSink(log, s3, SinkSettings.from_config({**BASE, "flush.size": "3"}), clock=clock)
    sink.poll_once()
    # the file at offset 1 exists too: the consumer goes back to 2, past both files
    assert sink.positions[("t", 0)] == 2
    limited = InProcessSink(log, s3, SinkSettings.from_config({**BASE, "flush.size": "3", "max.files.scan.limit": "1"}),
                            clock=clock)
    limited.poll_once()
    # the keys are remembered for the first max.files.scan.limit records only: offset 1's is not
    # known, so it is taken as free (and its file is refused again later)
    assert limited.positions[("t", 0)] == 1


def test_R8_1_the_in_memory_s3_answers_412_to_if_none_match_on_an_existing_key():
    store = MemoryS3(ManualClock(T0))
    s3 = MemoryS3Client(store)
    s3.create_bucket(Bucket="b")
    s3.put_object(Bucket="b", Key="k", Body=b"x")
    u = s3.create_multipart_upload(Bucket="b", Key="k")["UploadId"]
    etag = s3.upload_part(Bucket="b", Key="k", UploadId=u, PartNumber=1, Body=b"y")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket="b", Key="k", UploadId=u, IfNoneMatch="*",
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert store.buckets["b"]["k"].body == b"x"
