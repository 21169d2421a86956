"""The S3 fault front against a real moto server (a subprocess, as in a run): operations named,
faults applied (fail, error-200, delay, hang, drop-response), events recorded (fired or never
fired), bodies streamed both ways, nothing left behind on stop."""
from __future__ import annotations

import http.client
import itertools
import json
import threading
import time

import boto3
import botocore.exceptions
import pytest
from botocore.config import Config

from adapters.s3.front import FaultRule, S3FaultFront, classify
from adapters.processes.managed import free_port, port_open
from adapters.processes.moto import MotoS3Server

PART = b"x" * (5 * 1024 * 1024)
_buckets = itertools.count(1)


@pytest.fixture(scope="module")
def moto(tmp_path_factory):
    srv = MotoS3Server(tmp_path_factory.mktemp("s3front")).start()
    yield srv
    srv.stop()


@pytest.fixture
def front(moto, tmp_path):
    f = S3FaultFront(moto.endpoint, tmp_path / "front").start()
    yield f
    f.stop()
    assert not f.threads()


def client(f: S3FaultFront, attempts: int = 1, read_timeout: float = 20):
    # NB: botocore's retries={"max_attempts": 1} means one *retry* (two attempts), which hides a
    # one-shot fault; total_max_attempts=1 is a single attempt
    return boto3.client("s3", endpoint_url=f.endpoint, region_name="us-east-1", aws_access_key_id="k",
                        aws_secret_access_key="s",
                        config=Config(s3={"addressing_style": "path"}, read_timeout=read_timeout,
                                      connect_timeout=5, retries={"total_max_attempts": attempts}))


@pytest.fixture
def s3(front, moto):
    c = client(front)
    c.bucket = f"bkt-{next(_buckets)}"  # a fresh bucket per test on the shared server
    moto.create_bucket(c.bucket)
    return c


def start_mpu(s3, key: str, parts: int = 2) -> tuple[str, list[dict]]:
    u = s3.create_multipart_upload(Bucket=s3.bucket, Key=key)["UploadId"]
    done = [{"PartNumber": i, "ETag": s3.upload_part(Bucket=s3.bucket, Key=key, UploadId=u, PartNumber=i,
                                                     Body=PART)["ETag"]} for i in range(1, parts + 1)]
    return u, done


def complete(s3, key: str, upload_id: str, parts: list[dict]):
    return s3.complete_multipart_upload(Bucket=s3.bucket, Key=key, UploadId=upload_id,
                                        MultipartUpload={"Parts": parts})


def visible(moto, bucket: str, key: str) -> bool:
    """Asked of moto directly, not through the front."""
    return any(o["Key"] == key for o in moto.client().list_objects_v2(Bucket=bucket).get("Contents", []))


def open_uploads(moto, bucket: str) -> list[str]:
    return [u["UploadId"] for u in moto.client().list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def in_thread(fn) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run():
        t0 = time.monotonic()
        try:
            out["result"] = fn()
        except Exception as e:  # noqa: BLE001 - inspected by the test
            out["error"] = e
        out["elapsed"] = time.monotonic() - t0

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def test_operations_are_named(front, s3, moto):
    u, parts = start_mpu(s3, "a/k1")
    complete(s3, "a/k1", u, parts)
    s3.put_object(Bucket=s3.bucket, Key="a/k 2+", Body=b"hello")
    objs = s3.list_objects_v2(Bucket=s3.bucket)["Contents"]
    head = s3.head_object(Bucket=s3.bucket, Key="a/k 2+")
    got = s3.get_object(Bucket=s3.bucket, Key="a/k1")["Body"].read()
    s3.list_multipart_uploads(Bucket=s3.bucket)
    s3.head_bucket(Bucket=s3.bucket)
    u2 = s3.create_multipart_upload(Bucket=s3.bucket, Key="a/k3")["UploadId"]
    s3.abort_multipart_upload(Bucket=s3.bucket, Key="a/k3", UploadId=u2)
    s3.delete_object(Bucket=s3.bucket, Key="a/k 2+")

    log = [r for _, r, _ in front.requests()]
    assert [(r.operation, r.key, r.part_number) for r in log] == [
        ("CreateMultipartUpload", "a/k1", None), ("UploadPart", "a/k1", 1), ("UploadPart", "a/k1", 2),
        ("CompleteMultipartUpload", "a/k1", None), ("PutObject", "a/k 2+", None), ("ListObjectsV2", None, None),
        ("HeadObject", "a/k 2+", None), ("GetObject", "a/k1", None), ("ListMultipartUploads", None, None),
        ("HeadBucket", None, None), ("CreateMultipartUpload", "a/k3", None),
        ("AbortMultipartUpload", "a/k3", None), ("DeleteObject", "a/k 2+", None)]
    assert {r.bucket for r in log} == {s3.bucket}
    assert [r.upload_id for r in log[1:4]] == [u] * 3 and log[11].upload_id == u2
    assert all(st in (200, 204) for _, _, st in front.requests())
    # bodies and lengths come through whole, both ways
    assert got == PART * 2 and head["ContentLength"] == 5
    assert {o["Key"]: o["Size"] for o in objs} == {"a/k1": 2 * len(PART), "a/k 2+": 5}
    # the same names for requests boto3 did not make here
    assert classify("PUT", "/b").operation == "CreateBucket"
    assert classify("GET", "/b/k?uploadId=u").operation == "ListParts"
    assert classify("POST", "/b?delete").operation == "DeleteObjects"
    assert classify("PUT", "/b/k", {"x-amz-copy-source": "/b/j"}).operation == "CopyObject"
    assert classify("GET", "/b?location").operation == "Other"


def test_503_on_part_two_and_a_rule_that_never_matches(front, s3, moto):
    fired = front.add_rule(FaultRule("UploadPart", "fail", part_number=2, status=503, name="slow part 2"))
    never = front.add_rule(FaultRule("UploadPart", "fail", part_number=9))
    u = s3.create_multipart_upload(Bucket=s3.bucket, Key="t/k")["UploadId"]
    s3.upload_part(Bucket=s3.bucket, Key="t/k", UploadId=u, PartNumber=1, Body=PART)
    with pytest.raises(botocore.exceptions.ClientError) as ei:
        s3.upload_part(Bucket=s3.bucket, Key="t/k", UploadId=u, PartNumber=2, Body=PART)
    assert ei.value.response["Error"]["Code"] == "SlowDown"
    assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 503
    # a one-shot rule: the retry goes through
    s3.upload_part(Bucket=s3.bucket, Key="t/k", UploadId=u, PartNumber=2, Body=PART)
    assert front.wait_fired(fired, 0) and not front.wait_fired(never, 0.1)

    ev_fired, ev_never = front.events()
    assert ev_fired.kind == "s3" and ev_fired.fired and ev_fired.at_ms and ev_fired.params["action"] == "fail"
    (firing,) = ev_fired.params["firings"]
    assert (firing["operation"], firing["key"], firing["upload_id"], firing["part_number"]) == ("UploadPart", "t/k", u, 2)
    assert u in ev_fired.detail and "part=2" in ev_fired.detail and "slow part 2" in ev_fired.detail
    assert not ev_never.fired and ev_never.at_ms is None and "never fired" in ev_never.detail
    assert ev_never.params["matched"] == 0
    ex = [x for x in front.exchanges() if x.request.operation == "UploadPart"]
    assert [(x.request.part_number, x.status, x.upstream_status, x.rule_id) for x in ex] == [
        (1, 200, 200, None), (2, 503, None, fired), (2, 200, 200, None)]
    json.dumps([e.params for e in front.events()])  # reports serialise them


def test_error_inside_a_200_on_complete_after_s3_applied_it(front, s3, moto):
    """The default error-200: S3 completes the upload, then the 200 it began with carries an
    error. The object is there and the client heard of a failure; a retry of the Complete is
    answered as the completion it was (moto, like S3, takes a repeated Complete of a completed
    upload as success)."""
    rid = front.add_rule(FaultRule("CompleteMultipartUpload", "error-200", key="t/*"))
    u, parts = start_mpu(s3, "t/k")
    with pytest.raises(botocore.exceptions.ClientError) as ei:
        complete(s3, "t/k", u, parts)
    # botocore reads the <Error> in the 200 of CompleteMultipartUpload as an error and rewrites
    # the status to 500 (so a retrying client retries it); the front sent 200
    assert ei.value.response["Error"]["Code"] == "InternalError"
    assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500
    x = front.exchanges()[-1]
    assert (x.status, x.upstream_status, x.rule_id) == (200, 200, rid)
    assert visible(moto, s3.bucket, "t/k") and u not in open_uploads(moto, s3.bucket)
    ev = front.events()[0]
    assert ev.fired and "applied by S3" in ev.detail
    assert complete(s3, "t/k", u, parts)["Key"] == "t/k"


def test_error_inside_a_200_on_complete_not_applied(front, s3, moto):
    rid = front.add_rule(FaultRule("CompleteMultipartUpload", "error-200", key="t/*", forward=False))
    u, parts = start_mpu(s3, "t/k")
    with pytest.raises(botocore.exceptions.ClientError) as ei:
        complete(s3, "t/k", u, parts)
    assert ei.value.response["Error"]["Code"] == "InternalError"
    assert front.requests()[-1][2] == 200 and front.exchanges()[-1].upstream_status is None
    assert not visible(moto, s3.bucket, "t/k") and u in open_uploads(moto, s3.bucket)
    assert front.events()[0].fired and "not applied" in front.events()[0].detail
    # with one retry allowed (retries={"max_attempts": 1} means that), botocore retries the
    # rewritten 500 and the upload completes: the sink never sees the fault
    again = front.add_rule(FaultRule("CompleteMultipartUpload", "error-200", forward=False))
    retrying = client(front, attempts=2)
    retrying.bucket = s3.bucket
    complete(retrying, "t/k", u, parts)
    assert visible(moto, s3.bucket, "t/k") and front.wait_fired(again, 0)
    assert [(x.status, x.upstream_status, x.rule_id) for x in front.exchanges()[-2:]] == [
        (200, None, again), (200, 200, None)]
    assert front.events()[0].params["fired_count"] == 1 and rid == front.events()[0].params["rule_id"]


def test_the_final_sample_waits_for_uploads_in_flight(moto, tmp_path):
    """An upload completed just after the first final listing is not a leak; one nobody
    completes is still open in the last sample (P-MPU-HYGIENE reads that one)."""
    from adapters.s3.bucket import BucketReader, settled_samples

    c = moto.client()
    c.bucket = f"bkt-{next(_buckets)}"
    moto.create_bucket(c.bucket)
    in_flight, parts = start_mpu(c, "t/in-flight", parts=1)
    leaked, _ = start_mpu(c, "t/leaked", parts=1)
    reader = BucketReader(c, c.bucket)
    first = []

    def sample():
        got = reader.sample()
        if not first:
            first.append(got)
            threading.Timer(0.3, lambda: complete(c, "t/in-flight", in_flight, parts)).start()
        return got

    samples = settled_samples(sample, settle_s=0.8, timeout_s=10)
    assert {u for _, u in samples[0].open_uploads} == {in_flight, leaked}
    assert [u for _, u in samples[-1].open_uploads] == [leaked]
    assert [o.key for o in samples[-1].objects] == ["t/in-flight"]
    assert len(samples) == 3  # the first, one without the completed upload, one that agrees with it


def test_hang_on_complete_until_released(front, s3, moto):
    rid = front.add_rule(FaultRule("CompleteMultipartUpload", "hang", key="t/k"))
    other = front.add_rule(FaultRule("PutObject", "hang", key="elsewhere"))
    u, parts = start_mpu(s3, "t/k")
    t, out = in_thread(lambda: complete(s3, "t/k", u, parts))
    assert front.wait_fired(rid, 10)
    time.sleep(0.3)
    assert t.is_alive() and not visible(moto, s3.bucket, "t/k")
    assert [r.upload_id for r in front.hung()] == [u]
    assert front.events()[0].until_ms is None  # still hanging
    front.release(other)  # another rule's release lets nothing go
    time.sleep(0.2)
    assert t.is_alive()
    front.release(rid)
    t.join(10)
    assert not t.is_alive() and "error" not in out, out
    assert visible(moto, s3.bucket, "t/k")
    ev = front.events()[0]
    assert ev.fired and ev.at_ms and ev.until_ms and ev.until_ms - ev.at_ms >= 500
    assert not front.events()[1].fired
    # a released hang fires no more
    s3.put_object(Bucket=s3.bucket, Key="t/k", Body=b"again")
    u2, parts2 = start_mpu(s3, "t/k")
    complete(s3, "t/k", u2, parts2)
    assert front.events()[0].params["fired_count"] == 1


def test_drop_response_on_complete_applies_it(front, s3, moto):
    rid = front.add_rule(FaultRule("CompleteMultipartUpload", "drop-response"))
    u, parts = start_mpu(s3, "t/k")
    with pytest.raises(botocore.exceptions.ConnectionClosedError):
        complete(s3, "t/k", u, parts)
    assert visible(moto, s3.bucket, "t/k")  # the upload completed; the sink never heard
    assert u not in open_uploads(moto, s3.bucket)
    x = front.exchanges()[-1]
    assert (x.request.operation, x.status, x.upstream_status, x.rule_id) == ("CompleteMultipartUpload", 0, 200, rid)
    ev = front.events()[0]
    assert ev.fired and ev.until_ms >= ev.at_ms and u in ev.detail
    # the same client goes on over a new connection
    assert s3.head_object(Bucket=s3.bucket, Key="t/k")["ContentLength"] == 2 * len(PART)


def test_R8_1_if_none_match_on_complete_through_the_front_is_a_412_for_an_existing_key(front, s3, moto):
    """The header reaches moto, which refuses to complete over an object already there, as S3 does."""
    s3.put_object(Bucket=s3.bucket, Key="t/taken", Body=b"newer")
    u, parts = start_mpu(s3, "t/taken", parts=1)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.complete_multipart_upload(Bucket=s3.bucket, Key="t/taken", UploadId=u, MultipartUpload={"Parts": parts},
                                     IfNoneMatch="*")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert moto.client().get_object(Bucket=s3.bucket, Key="t/taken")["Body"].read() == b"newer"
    u, parts = start_mpu(s3, "t/free", parts=1)
    s3.complete_multipart_upload(Bucket=s3.bucket, Key="t/free", UploadId=u, MultipartUpload={"Parts": parts},
                                 IfNoneMatch="*")
    assert visible(moto, s3.bucket, "t/free")


def test_delay_and_nth(front, s3, moto):
    rid = front.add_rule(FaultRule("PutObject", "delay", delay_s=0.6, nth=2, times=2))
    t0 = time.monotonic()
    s3.put_object(Bucket=s3.bucket, Key="k1", Body=b"1")
    first = time.monotonic() - t0
    t0 = time.monotonic()
    s3.put_object(Bucket=s3.bucket, Key="k2", Body=PART)  # the 2nd: delayed, whole body spooled
    second = time.monotonic() - t0
    assert first < 0.5 <= 0.6 <= second < 5
    s3.put_object(Bucket=s3.bucket, Key="k3", Body=b"3")  # the 3rd: delayed too (times=2)
    assert s3.get_object(Bucket=s3.bucket, Key="k2")["Body"].read() == PART
    ev = front.events()[0]
    assert ev.fired and ev.params["fired_count"] == 2 and ev.params["matched"] == 3
    assert ev.until_ms - ev.at_ms >= 1200
    assert [f["key"] for f in ev.params["firings"]] == ["k2", "k3"]
    assert front.wait_fired(rid, 0)


def test_chunked_bodies_pass_through(front, s3, moto):
    front.add_rule(FaultRule("PutObject", "delay", key="delayed", delay_s=0.1))
    for key in ("plain", "delayed"):
        c = http.client.HTTPConnection("127.0.0.1", front.port, timeout=10)
        c.putrequest("PUT", f"/{s3.bucket}/{key}")
        c.putheader("Transfer-Encoding", "chunked")
        c.endheaders()
        for piece in (b"hello ", b"world" * 300_000):
            c.send(b"%x\r\n%b\r\n" % (len(piece), piece))
        c.send(b"0\r\n\r\n")
        r = c.getresponse()
        assert r.status == 200, r.read()
        r.read()
        c.close()
        assert s3.get_object(Bucket=s3.bucket, Key=key)["Body"].read() == b"hello " + b"world" * 300_000


def test_upstream_down_is_a_502(tmp_path):
    with S3FaultFront(f"http://127.0.0.1:{free_port()}") as f:
        with pytest.raises(botocore.exceptions.ClientError) as ei:
            client(f).head_bucket(Bucket="nobody-home")
        assert ei.value.response["ResponseMetadata"]["HTTPStatusCode"] == 502
        assert f.requests()[-1][2] == 502


def test_stop_with_a_hung_request_returns_promptly(moto, tmp_path):
    f = S3FaultFront(moto.endpoint, tmp_path / "front").start()
    s3 = client(f)
    bucket = f"bkt-{next(_buckets)}"
    moto.create_bucket(bucket)
    rid = f.add_rule(FaultRule("PutObject", "hang", nth=2))
    s3.put_object(Bucket=bucket, Key="first", Body=b"1")  # not the 2nd: passes
    t, out = in_thread(lambda: s3.put_object(Bucket=bucket, Key="second", Body=b"2"))
    assert f.wait_fired(rid, 10)
    idle = client(f)  # another client with an idle keep-alive connection
    idle.head_bucket(Bucket=bucket)
    port = f.port
    t0 = time.monotonic()
    f.stop()  # lets the hung request go on, closes every connection and the port
    assert time.monotonic() - t0 < 3
    t.join(10)
    assert not t.is_alive() and "error" not in out, out
    assert visible(moto, bucket, "second")
    assert not port_open(port) and not f.threads()
    ev = f.events()[0]
    assert ev.fired and ev.until_ms is not None
    lines = (tmp_path / "front" / "requests.jsonl").read_text().splitlines()
    assert [json.loads(ln)["request"]["operation"] for ln in lines] == ["PutObject", "HeadBucket", "PutObject"]
    assert json.loads((tmp_path / "front" / "events.json").read_text())[0]["fired"] is True
    f.stop()  # twice is fine


def test_rules_are_checked():
    with pytest.raises(ValueError):
        FaultRule("PutObject", "explode")
    with pytest.raises(ValueError):
        FaultRule("PutObject", "fail", nth=0)


# --- issue 34: S3's own error answers, the state they imply, connection faults -------------------

def test_every_status_is_answered_with_s3s_own_code_and_message(front, s3, moto):
    from adapters.s3.rules import S3_MESSAGES, S3_STATUSES

    for status, code in S3_STATUSES:
        front.add_rule(FaultRule("HeadBucket", "fail", status=status, code=code))
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3.head_bucket(Bucket=s3.bucket)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    for status, code in S3_STATUSES:  # a GET has a body: the code and message are S3's
        front.add_rule(FaultRule("ListObjectsV2", "fail", status=status, code=code))
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3.list_objects_v2(Bucket=s3.bucket)
        assert e.value.response["Error"]["Code"] == code
        assert e.value.response["Error"]["Message"] == S3_MESSAGES[code]


def test_a_412_with_the_object_there_applies_the_complete_first(front, s3, moto):
    u, parts = start_mpu(s3, "k412", parts=1)
    front.add_rule(FaultRule("CompleteMultipartUpload", "fail", status=412, code="PreconditionFailed",
                             state="applied"))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        complete(s3, "k412", u, parts)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert visible(moto, s3.bucket, "k412")  # S3 applied it: a HEAD now finds the key


def test_a_412_without_the_object_leaves_no_object(front, s3, moto):
    u, parts = start_mpu(s3, "k412b", parts=1)
    front.add_rule(FaultRule("CompleteMultipartUpload", "fail", status=412, code="PreconditionFailed"))
    with pytest.raises(botocore.exceptions.ClientError):
        complete(s3, "k412b", u, parts)
    assert not visible(moto, s3.bucket, "k412b")


def test_no_such_upload_after_an_abort_aborts_the_upload_first(front, s3, moto):
    u, parts = start_mpu(s3, "kgone", parts=1)
    front.add_rule(FaultRule("UploadPart", "fail", status=404, code="NoSuchUpload", state="aborted"))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.upload_part(Bucket=s3.bucket, Key="kgone", UploadId=u, PartNumber=2, Body=b"tail")
    assert e.value.response["Error"]["Code"] == "NoSuchUpload"
    assert u not in open_uploads(moto, s3.bucket)
    with pytest.raises(botocore.exceptions.ClientError):  # the state is S3's own now
        complete(s3, "kgone", u, parts)


def test_a_reset_mid_request_never_reaches_s3(front, s3, moto):
    rid = front.add_rule(FaultRule("PutObject", "reset", forward=False))
    with pytest.raises(botocore.exceptions.HTTPClientError):
        s3.put_object(Bucket=s3.bucket, Key="kreset", Body=b"abc")
    assert not visible(moto, s3.bucket, "kreset")
    assert front.events()[0].fired and front.exchanges()[-1].upstream_status is None
    assert rid


def test_a_reset_mid_answer_after_s3_applied_it(front, s3, moto):
    front.add_rule(FaultRule("PutObject", "reset", forward=True))
    with pytest.raises(botocore.exceptions.HTTPClientError):
        s3.put_object(Bucket=s3.bucket, Key="kreset2", Body=b"abc")
    assert visible(moto, s3.bucket, "kreset2")
    assert front.exchanges()[-1].upstream_status == 200 and front.exchanges()[-1].status == 0


def test_a_stalled_answer_stops_until_released_and_then_the_connection_ends(front, s3, moto):
    u, parts = start_mpu(s3, "kstall", parts=1)
    rid = front.add_rule(FaultRule("CompleteMultipartUpload", "stall"))
    t, out = in_thread(lambda: complete(s3, "kstall", u, parts))
    assert front.wait_fired(rid, 10)
    time.sleep(0.3)
    assert t.is_alive()  # half an answer and then nothing
    assert visible(moto, s3.bucket, "kstall")  # S3 applied it
    front.release(rid)
    t.join(10)
    assert not t.is_alive() and isinstance(out.get("error"), botocore.exceptions.HTTPClientError)
