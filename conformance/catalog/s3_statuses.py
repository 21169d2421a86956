"""Named scenarios of S3's own error answers and connection faults (issue 34): each a status or a
broken connection on one of the sink's calls, after a first file is committed, so the run has
objects to judge whatever the answer does to the task. What each release does with the answer is
the model's (reference_impl.s3_errors); the claims say which properties a task that dies where
its release documents it keeps (no-loss, commit-safety) and which it does not (liveness).

The start-up scenarios answer the bucket check a task's start() makes (R1.3) instead: there the
release's answer is the task's start-up verdict (conformance.judging.startup), and a task that
dies at start where its release refuses the bucket keeps every claim."""
from __future__ import annotations

from typing import Any, Callable

from conformance.catalog.base import BASE, _small
from conformance.generators.faults import status_params
from conformance.inputs.scenario import FaultStep, Scenario

# a rule armed once the first file (records 0-2 of one partition) is committed fires on the second
# file's calls (on two partitions: on the first file of the other one, or the second of the first)
FIRST_FILE = 3
# R8.1: a scheduled rotation (an hour: never reached in a run) turns conditional writes on
CONDITIONAL = {**BASE, "flush.size": "3", "rotate.schedule.interval.ms": "3600000", "timezone": "UTC"}
PLAIN = {**BASE, "flush.size": "3"}


def _after_first_file(rule: dict[str, Any], *more: FaultStep) -> list[FaultStep]:
    return [FaultStep(FIRST_FILE, "quiet", {"seconds": 30}), FaultStep(FIRST_FILE, "s3", rule), *more]


def _two_partitions(n: int) -> list[dict]:
    return [{**r, "partition": r["value"]["seq"] % 2} for r in _small(n)]


def precondition_without_the_object() -> Scenario:
    """A 412 on a conditional Complete with no object at the key (a conflicting write in flight
    elsewhere): the HEAD that follows finds nothing, and the connector dies on S3 contradicting
    itself (R8.2); a sink that takes the 412 for the object skips the file's records."""
    return Scenario("s3-412-without-the-object", CONDITIONAL, {"events": 1}, _small(9),
                    _after_first_file(status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "412")))


def precondition_without_the_object_two_partitions() -> Scenario:
    """The same 412 on the second Complete of two partitions' files, with records after it that
    commit further files: skipped records would lie behind the committed offset."""
    return Scenario("s3-412-without-the-object-two-partitions", CONDITIONAL, {"events": 2}, _two_partitions(18),
                    _after_first_file(status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "412", nth=2)))


def precondition_with_the_object() -> Scenario:
    """A 412 on a conditional Complete that S3 applied (the object is there): FileExistsException,
    the consumer rewound past the file (R8.2); nothing lost, nothing written twice."""
    return Scenario("s3-412-with-the-object", CONDITIONAL, {"events": 1}, _small(9),
                    _after_first_file(status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "412",
                                                    state="applied")))


def no_such_upload_on_complete() -> Scenario:
    """The upload aborted under the sink (a lifecycle rule on incomplete uploads) before its
    Complete: 404 NoSuchUpload, which no client retries: the task dies with the file's records
    uncommitted (R7.4); none may be skipped."""
    return Scenario("s3-no-such-upload-on-complete", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(404, "NoSuchUpload", "CompleteMultipartUpload", "gone")))


def no_such_upload_on_part() -> Scenario:
    """The same on the file's UploadPart."""
    return Scenario("s3-no-such-upload-on-part", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(404, "NoSuchUpload", "UploadPart", "gone")))


def throttled_part() -> Scenario:
    """429 SlowDown (an S3-compatible store throttling) on UploadPart: retried (R7.3)."""
    return Scenario("s3-429-on-part", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(429, "SlowDown", "UploadPart", "429")))


def throttled_complete() -> Scenario:
    """429 SlowDown on CompleteMultipartUpload, on two partitions: retried (R7.3)."""
    return Scenario("s3-429-on-complete", PLAIN, {"events": 2}, _two_partitions(12),
                    _after_first_file(status_params(429, "SlowDown", "CompleteMultipartUpload", "429")))


def request_timeout_on_part() -> Scenario:
    """400 RequestTimeout on UploadPart (S3 waited too long for the body): a 400 that S3 clients
    retry (AWS's retryable error codes, R7.3)."""
    return Scenario("s3-request-timeout-on-part", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(400, "RequestTimeout", "UploadPart", "timeout")))


def request_timeout_on_a_later_part() -> Scenario:
    """The same on the second UploadPart of two partitions' files."""
    return Scenario("s3-request-timeout-on-a-later-part", PLAIN, {"events": 2}, _two_partitions(12),
                    _after_first_file(status_params(400, "RequestTimeout", "UploadPart", "timeout", nth=2)))


def reset_mid_complete() -> Scenario:
    """The connection reset while the Complete is sent (S3 never made the object): an IOException,
    retried (R7.3); the offset may not move past records that are in no object."""
    return Scenario("s3-reset-mid-complete", PLAIN, {"events": 1}, _small(9),
                    _after_first_file({"operation": "CompleteMultipartUpload", "action": "reset", "forward": False,
                                       "name": "reset"}))


def reset_mid_part() -> Scenario:
    """The connection reset while an UploadPart is sent (S3 never got the part): retried (R7.3)."""
    return Scenario("s3-reset-mid-part", PLAIN, {"events": 2}, _two_partitions(12),
                    _after_first_file({"operation": "UploadPart", "action": "reset", "forward": False,
                                       "name": "reset"}))


def stalled_complete_answer() -> Scenario:
    """S3 made the object and its answer to the Complete stops mid-body for a second before the
    connection ends: retried (R7.3), the same object written again under the same key."""
    return Scenario("s3-stalled-complete-answer", PLAIN, {"events": 1}, _small(9),
                    _after_first_file({"operation": "CompleteMultipartUpload", "action": "stall", "name": "stall"},
                                      FaultStep(9, "wait-fired", {"rule": "stall", "seconds": 30}),
                                      FaultStep(9, "wait", {"seconds": 1.0}),
                                      FaultStep(9, "release", {"rule": "stall"})))


def signature_mismatch_on_part() -> Scenario:
    """403 SignatureDoesNotMatch on UploadPart: SDK v1 (before 11.0.0) takes it for a clock skew
    and retries; SDK v2 does only when the answer's Date is off, so 11.0.0 on dies (R7.3)."""
    return Scenario("s3-signature-mismatch-on-part", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(403, "SignatureDoesNotMatch", "UploadPart", "403")))


def access_denied_on_complete() -> Scenario:
    """403 AccessDenied on CompleteMultipartUpload (a policy that lost s3:PutObject): no client
    retries it and the task dies (R7.4), with nothing committed past the first file."""
    return Scenario("s3-access-denied-on-complete", PLAIN, {"events": 1}, _small(9),
                    _after_first_file(status_params(403, "AccessDenied", "CompleteMultipartUpload", "403")))


def precondition_head_refused() -> Scenario:
    """A 412 on a conditional Complete with no object at the key, and the HEAD that checks it
    refused with 403 (a policy without s3:GetObject): the connector counts the 403 as the key
    there (R8.2) and moves the file's start past its first record, which is never written while
    the offset moves past it (known bug confluent-412-head-403-skips-record)."""
    return Scenario("s3-412-without-the-object-head-403", CONDITIONAL, {"events": 1}, _small(9),
                    _after_first_file(status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "412"),
                                      FaultStep(FIRST_FILE, "s3", status_params(403, "AccessDenied", "HeadObject",
                                                                                "412-then"))))


S3_STATUS_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "s3-412-without-the-object": precondition_without_the_object,
    "s3-412-without-the-object-two-partitions": precondition_without_the_object_two_partitions,
    "s3-412-with-the-object": precondition_with_the_object,
    "s3-no-such-upload-on-complete": no_such_upload_on_complete,
    "s3-no-such-upload-on-part": no_such_upload_on_part,
    "s3-429-on-part": throttled_part,
    "s3-429-on-complete": throttled_complete,
    "s3-request-timeout-on-part": request_timeout_on_part,
    "s3-request-timeout-on-a-later-part": request_timeout_on_a_later_part,
    "s3-reset-mid-complete": reset_mid_complete,
    "s3-reset-mid-part": reset_mid_part,
    "s3-stalled-complete-answer": stalled_complete_answer,
    "s3-signature-mismatch-on-part": signature_mismatch_on_part,
    "s3-access-denied-on-complete": access_denied_on_complete,
}


# --- the start-up check (R1.3) ------------------------------------------------------------------

def _at_start(name: str, status: int, code: str, **more: Any) -> Scenario:
    """`status` `code` to every bucket check of a task's start() (a rule armed before the sink
    starts, on the call the release makes: conformance.judging.startup), then records for three
    files: written where the release takes the bucket as there, none where it refuses it."""
    rule = {**status_params(status, code, "HeadBucket", "start-up"), "times": 0, **more}
    return Scenario(name, PLAIN, {"events": 1}, _small(9), [FaultStep(0, "s3", rule)],
                    notes=f"R1.3: {status} {code} to the start-up bucket check")


def bucket_missing() -> Scenario:
    """The bucket does not exist (404 NoSuchBucket to the check): start() fails with
    "Non-existent S3 bucket" on every release, before any record (R1.3); a sink that starts and
    writes anyway fails liveness."""
    return _at_start("startup-bucket-missing", 404, "NoSuchBucket")


def bucket_head_forbidden() -> Scenario:
    """Credentials that may write to the bucket but not head or read its ACL (403 AccessDenied to
    the check): the connector takes the bucket as there and writes (R1.3); a sink whose start
    fails on it fails liveness."""
    return _at_start("startup-bucket-head-forbidden", 403, "AccessDenied")


def bucket_in_another_region() -> Scenario:
    """The bucket is in another region than the client's (301 PermanentRedirect naming it in
    x-amz-bucket-region): the connector takes it as there and its writes go where they went
    (R1.3: neither SDK follows the redirect, and the connector names its region)."""
    from adapters.s3.rules import OTHER_REGION

    return _at_start("startup-bucket-in-another-region", 301, "PermanentRedirect", region=OTHER_REGION)


STARTUP_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "startup-bucket-missing": bucket_missing,
    "startup-bucket-head-forbidden": bucket_head_forbidden,
    "startup-bucket-in-another-region": bucket_in_another_region,
}


# scenarios that show a known bug of a released connector (conformance.catalog.known_bugs)
S3_KNOWN_BUG_SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "s3-412-without-the-object-head-403": precondition_head_refused,
}


# --- the status sweep: every (status, operation) pair the generator draws --------------------------

def status_sweep(status: int, code: str, operation: str) -> Scenario:
    """One of S3's answers (adapters.s3.rules.S3_STATUSES) on one of the sink's calls
    (conformance.generators.faults.STATUS_OPERATIONS), after a first file, set up as the generator
    sets it up: HeadObject after a 412 on a conditional Complete that S3 applied,
    AbortMultipartUpload after an UploadPart that failed, a NoSuchUpload after an abort, a 412 on
    Complete where the Complete is conditional."""
    from conformance.generators.faults import FOLLOWS

    name = f"status-sweep-{status}-{code}-{operation}"
    rule = status_params(status, code, operation, "sweep")
    cfg = PLAIN
    more: list[FaultStep] = []
    if operation == "HeadObject":
        cfg, rule = CONDITIONAL, status_params(412, "PreconditionFailed", "CompleteMultipartUpload", "sweep",
                                               state="applied")
        more = [FaultStep(FIRST_FILE, "s3", status_params(status, code, operation, "sweep" + FOLLOWS))]
    elif operation == "AbortMultipartUpload":
        rule = status_params(400, "IncompleteBody", "UploadPart", "sweep")
        more = [FaultStep(FIRST_FILE, "s3", status_params(status, code, operation, "sweep" + FOLLOWS))]
    elif code == "PreconditionFailed" and operation == "CompleteMultipartUpload":
        cfg = CONDITIONAL
    return Scenario(name, cfg, {"events": 1}, _small(9), _after_first_file(rule, *more))


def sweep_pairs() -> list[tuple[int, str, str]]:
    """(status, code, operation) for every answer on every call the generator draws it on: the
    calls S3 answers with it (adapters.s3.rules.s3_answers)."""
    from adapters.s3.rules import S3_STATUSES, s3_answers
    from conformance.generators.faults import STATUS_OPERATIONS

    return [(status, code, op) for status, code in S3_STATUSES for op in STATUS_OPERATIONS if s3_answers(code, op)]
