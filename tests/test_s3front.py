"""The S3 fault front against a real moto server: operations named, faults applied, events
recorded (fired or never fired), nothing left behind."""
from __future__ import annotations

import threading

import boto3
import pytest
from botocore.config import Config

from adapters.s3front import FaultRule, S3FaultFront, classify

PART = b"x" * (5 * 1024 * 1024)


@pytest.fixture
def front():
    from moto.server import ThreadedMotoServer

    srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    srv.start()
    host, port = srv.get_host_and_port()
    f = S3FaultFront(f"http://{host}:{port}").start()
    yield f
    f.stop()
    srv.stop()


def client(f: S3FaultFront):
    s3 = boto3.client("s3", endpoint_url=f.endpoint, region_name="us-east-1", aws_access_key_id="k",
                      aws_secret_access_key="s", config=Config(s3={"addressing_style": "path"},
                                                               retries={"total_max_attempts": 1, "mode": "standard"}))
    s3.create_bucket(Bucket="bkt")
    return s3


def mpu(s3, key: str, parts: int = 2):
    u = s3.create_multipart_upload(Bucket="bkt", Key=key)["UploadId"]
    done = [{"PartNumber": i, "ETag": s3.upload_part(Bucket="bkt", Key=key, UploadId=u, PartNumber=i, Body=PART)["ETag"]}
            for i in range(1, parts + 1)]
    return s3.complete_multipart_upload(Bucket="bkt", Key=key, UploadId=u, MultipartUpload={"Parts": done})


def visible(s3, key: str) -> bool:
    return "Contents" in s3.list_objects_v2(Bucket="bkt", Prefix=key)


def test_operations_are_named(front):
    s3 = client(front)
    mpu(s3, "a/k1")
    s3.put_object(Bucket="bkt", Key="a/k2", Body=b"1")
    s3.head_object(Bucket="bkt", Key="a/k2")
    s3.list_objects_v2(Bucket="bkt")
    ops = [(r.operation, r.part_number) for _, r, _ in front.requests()]
    assert ops == [("CreateBucket", None), ("CreateMultipartUpload", None), ("UploadPart", 1), ("UploadPart", 2),
                   ("CompleteMultipartUpload", None), ("PutObject", None), ("HeadObject", None), ("ListObjectsV2", None)]
    assert classify("DELETE", "/bkt/x?uploadId=u").operation == "AbortMultipartUpload"


def test_503_on_part_two_and_a_rule_that_never_matches(front):
    s3 = client(front)
    fired = front.add_rule(FaultRule("UploadPart", "fail", part_number=2, status=503))
    never = front.add_rule(FaultRule("UploadPart", "fail", part_number=9))
    with pytest.raises(Exception, match="SlowDown"):
        mpu(s3, "k")
    events = front.events()
    assert events[0].fired and "part=2" in events[0].detail and events[0].at_ms
    assert not events[1].fired
    assert fired != never


def test_error_in_a_200_on_complete_leaves_nothing_visible(front):
    s3 = client(front)
    front.add_rule(FaultRule("CompleteMultipartUpload", "error-200", status=200))
    with pytest.raises(Exception, match="InternalError"):
        mpu(s3, "k")
    assert not visible(s3, "k")


def test_drop_response_applies_the_call(front):
    s3 = client(front)
    front.add_rule(FaultRule("CompleteMultipartUpload", "drop-response"))
    with pytest.raises(Exception):
        mpu(s3, "k")
    assert visible(s3, "k")  # the upload completed; the client never heard


def test_hang_until_released_records_the_window(front):
    s3 = client(front)
    rid = front.add_rule(FaultRule("PutObject", "hang", key="k*"))
    t = threading.Thread(target=lambda: s3.put_object(Bucket="bkt", Key="k1", Body=b"1"))
    t.start()
    assert front.wait_fired(rid, 10)
    assert not visible(s3, "k1")
    front.release()
    t.join(10)
    assert visible(s3, "k1")
    (e,) = front.events()
    assert e.fired and e.until_ms is not None and e.until_ms >= e.at_ms


def test_nth_request_and_stop_with_a_hung_request_returns(front):
    s3 = client(front)
    rid = front.add_rule(FaultRule("PutObject", "hang", nth=2))
    s3.put_object(Bucket="bkt", Key="first", Body=b"1")  # not the 2nd: passes
    t = threading.Thread(target=lambda: s3.put_object(Bucket="bkt", Key="second", Body=b"1"), daemon=True)
    t.start()
    assert front.wait_fired(rid, 10)
    front.stop()  # releases the hung request and closes the port
    t.join(10)
    assert not t.is_alive()
