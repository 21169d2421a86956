"""Issue 34: S3's error answers and connection faults in the simulated S3 (the same rules as the
fault front), and the model's reading of what each Confluent release does with one of them
(reference_impl.s3_errors, R7.3/R7.4/R8.2)."""
from __future__ import annotations

import botocore.exceptions
import pytest

from adapters.s3.memory import MemoryS3, MemoryS3Client
from adapters.s3.rules import S3_MESSAGES, S3_STATUSES, FaultRule
from reference_impl.s3_errors import FILE_EXISTS, IGNORED, KILLS_TASK, RETRIED, one_answer

V1, V2 = (10, 6, 18), (12, 1, 9)


def store() -> tuple[MemoryS3, MemoryS3Client]:
    s = MemoryS3(clock=lambda: 0)
    s.create_bucket(Bucket="b")
    return s, MemoryS3Client(s)


def upload(c: MemoryS3Client, key: str) -> tuple[str, list[dict]]:
    u = c.create_multipart_upload(Bucket="b", Key=key)["UploadId"]
    return u, [{"PartNumber": 1, "ETag": c.upload_part(Bucket="b", Key=key, UploadId=u, PartNumber=1,
                                                      Body=b"abc")["ETag"]}]


@pytest.mark.parametrize("status,code", S3_STATUSES)
def test_simulated_s3_answers_every_status_with_its_code_and_message(status, code):
    s, c = store()
    s.add_rule(FaultRule("PutObject", "fail", status=status, code=code))
    with pytest.raises(botocore.exceptions.ClientError) as e:
        c.put_object(Bucket="b", Key="k", Body=b"x")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == status
    assert e.value.response["Error"] == {"Code": code, "Message": S3_MESSAGES[code]}
    assert "k" not in s.buckets["b"]


def test_simulated_412_with_the_object_there_applies_first():
    s, c = store()
    u, parts = upload(c, "k")
    s.add_rule(FaultRule("CompleteMultipartUpload", "fail", status=412, code="PreconditionFailed", state="applied"))
    with pytest.raises(botocore.exceptions.ClientError):
        c.complete_multipart_upload(Bucket="b", Key="k", UploadId=u, MultipartUpload={"Parts": parts})
    assert c.head_object(Bucket="b", Key="k")["ContentLength"] == 3


def test_simulated_no_such_upload_drops_the_upload():
    s, c = store()
    u, parts = upload(c, "k")
    s.add_rule(FaultRule("UploadPart", "fail", status=404, code="NoSuchUpload", state="aborted"))
    with pytest.raises(botocore.exceptions.ClientError):
        c.upload_part(Bucket="b", Key="k", UploadId=u, PartNumber=2, Body=b"d")
    assert s.list_multipart_uploads(Bucket="b")["Uploads"] == []


@pytest.mark.parametrize("forward", [False, True])
def test_simulated_reset_applies_only_with_forward(forward):
    s, c = store()
    s.add_rule(FaultRule("PutObject", "reset", forward=forward))
    with pytest.raises(botocore.exceptions.ConnectionClosedError):
        c.put_object(Bucket="b", Key="k", Body=b"x")
    assert ("k" in s.buckets["b"]) is forward


def test_simulated_stall_applies_and_fails_the_caller_once_released():
    s, _ = store()
    parked = []
    c = MemoryS3Client(s, park=lambda p: (parked.append(p), s.release()))
    s.add_rule(FaultRule("PutObject", "stall"))
    with pytest.raises(botocore.exceptions.ConnectionClosedError):
        c.put_object(Bucket="b", Key="k", Body=b"x")
    assert parked and "k" in s.buckets["b"]


# --- the model: one faulty answer, by release ---------------------------------------------------

@pytest.mark.parametrize("status,code", [(500, "InternalError"), (502, "BadGateway"), (503, "SlowDown"),
                                         (504, "GatewayTimeout"), (429, "SlowDown"), (400, "RequestTimeout"),
                                         (403, "RequestTimeTooSkewed")])
def test_R7_3_the_client_retries_5xx_throttling_request_timeout_and_clock_skew_on_both_sdks(status, code):
    for v in (V1, V2):
        assert one_answer(v, "UploadPart", "fail", status, code).outcome == RETRIED


def test_R7_3_signature_does_not_match_is_retried_by_sdk_v1_only():
    assert one_answer(V1, "UploadPart", "fail", 403, "SignatureDoesNotMatch").outcome == RETRIED
    assert one_answer(V2, "UploadPart", "fail", 403, "SignatureDoesNotMatch").outcome == KILLS_TASK


@pytest.mark.parametrize("status,code", [(400, "IncompleteBody"), (400, "InvalidPart"), (403, "AccessDenied"),
                                         (403, "ExpiredToken"), (404, "NoSuchUpload"), (409, "OperationAborted"),
                                         (501, "NotImplemented")])
def test_R7_4_what_the_client_gives_up_on_and_the_default_condition_refuses_kills_the_task(status, code):
    for v in (V1, V2, None):
        assert one_answer(v, "CompleteMultipartUpload", "fail", status, code).kills_task


def test_R8_2_a_412_on_a_conditional_complete_is_checked_with_a_head():
    assert one_answer(V2, "CompleteMultipartUpload", "fail", 412, "PreconditionFailed", conditional=True,
                      object_there=True).outcome == FILE_EXISTS
    assert one_answer(V2, "CompleteMultipartUpload", "fail", 412, "PreconditionFailed", conditional=True,
                      object_there=False).outcome == KILLS_TASK
    # without If-None-Match a 412 is one more status the task dies of
    assert one_answer(V1, "CompleteMultipartUpload", "fail", 412, "PreconditionFailed").outcome == KILLS_TASK


def test_R8_2_a_head_refused_with_403_counts_as_the_key_there():
    assert one_answer(V2, "HeadObject", "fail", 403, "AccessDenied").outcome == FILE_EXISTS
    assert one_answer(V1, "HeadObject", "fail", 404, "NoSuchKey").kills_task


def test_R7_5_a_failed_abort_is_ignored_and_connection_faults_are_retried():
    assert one_answer(V2, "AbortMultipartUpload", "fail", 403, "AccessDenied").outcome == IGNORED
    for action in ("reset", "stall", "drop-response"):
        assert one_answer(V1, "UploadPart", action).outcome == RETRIED


def test_R7_4_an_error_inside_completes_200_by_sdk():
    assert one_answer(V1, "CompleteMultipartUpload", "error-200", 200, "InternalError").kills_task
    assert one_answer(V2, "CompleteMultipartUpload", "error-200", 200, "InternalError").outcome == RETRIED


def test_R7_4_an_xml_answer_cut_mid_body_kills_sdk_v2s_task():
    """Seen on 12.1.9 (s3-stalled-complete-answer): 'Could not parse XML response', not retried."""
    assert one_answer(V2, "CompleteMultipartUpload", "stall", answer_cut=True).kills_task
    assert one_answer(V2, "CreateMultipartUpload", "reset", answer_cut=True).kills_task
    # UploadPart's answer is headers only; a request cut before S3 had it is an IOException
    assert one_answer(V2, "UploadPart", "stall", answer_cut=True).outcome == RETRIED
    assert one_answer(V2, "CompleteMultipartUpload", "reset", answer_cut=False).outcome == RETRIED


def test_the_generator_draws_only_answers_s3_gives_on_the_call_and_the_sweep_plays_each_of_them():
    from hypothesis import HealthCheck, given, settings, strategies as st

    from adapters.s3.rules import s3_answers
    from conformance.catalog.s3_statuses import sweep_pairs
    from conformance.generators.faults import STATUS_OPERATIONS, status_fault

    drawn: set[tuple[int, str, str]] = set()

    @settings(max_examples=400, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(status_fault(0, "f"))
    def draw(steps):
        for f in steps:
            p = f.params
            drawn.add((p["status"], p["code"], p["operation"]))
            assert s3_answers(p["code"], p["operation"]), p  # no 412 on a call without a condition

    draw()
    pairs = set(sweep_pairs())
    assert drawn <= pairs | {(412, "PreconditionFailed", "CompleteMultipartUpload"),
                             (400, "IncompleteBody", "UploadPart")}  # the answers HEAD and Abort follow
    assert all(s3_answers(c, o) for _, c, o in pairs)
    never = {(s, c, o) for s, c in S3_STATUSES for o in STATUS_OPERATIONS} - pairs
    assert (412, "PreconditionFailed", "CreateMultipartUpload") in never
    assert (404, "NoSuchUpload", "CreateMultipartUpload") in never
    assert (400, "IncompleteBody", "AbortMultipartUpload") in never
    # every status still meets every call it can meet
    assert {(s, c) for s, c, _ in pairs} == set(S3_STATUSES)
    assert {o for _, _, o in pairs} == set(STATUS_OPERATIONS)
