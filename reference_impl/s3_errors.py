"""R7.3/R7.4/R8.2 for one faulty S3 answer: what Confluent's S3 sink does with it, by release.

One rule, read from the connector's source (kafka-connect-storage-cloud, tags v10.6.18, v11.0.0,
v12.0.7, v12.1.9; paths under kafka-connect-s3/src/main/java/io/confluent/connect/s3/) and
the AWS SDKs it bundles:

* The client retries first. SDK v1 (before 11.0.0): `S3Storage.newFullJitterRetryPolicy`
  (v10.6.18 S3Storage.java:157-171) keeps `PredefinedRetryPolicies.DEFAULT_RETRY_CONDITION`:
  an IOException cause, status 500/502/503/504, the codes RequestTimeout(Exception),
  throttling (SlowDown, ..., or status 429) and clock skew (RequestTimeTooSkewed,
  SignatureDoesNotMatch, ...) (com.amazonaws.retry.RetryUtils). SDK v2 (11.0.0 on):
  `S3Storage.newRetryStrategy` (v12.1.9 S3Storage.java:180-186) builds a StandardRetryStrategy
  with no retry predicates, so the client builder adds the SDK's and AWS's defaults
  (AwsDefaultClientBuilder: maxAttempts > 1 and no predicates): status 500/502/503/504,
  IOExceptions, throttling (429, SlowDown), AwsErrorCode.RETRYABLE_ERROR_CODES (RequestTimeout)
  and the *definite* clock-skew codes (RequestTimeTooSkewed, RequestExpired, RequestInTheFuture);
  SignatureDoesNotMatch is only a *possible* clock skew, retried when the answer's Date is
  skewed, which an answer from a store with a right clock is not. `s3.part.retries` (default 3)
  is enough for one faulty answer: the retry succeeds and the connector never hears of it.
* What the client gives up on reaches `S3ErrorUtils.throwConnectException` (v10.6.18
  S3ErrorUtils.java:37-85, v12.1.9 S3ErrorUtils.java:39-93, through
  S3RetriableRecordWriter.java:50-72): a RetriableException where the same default condition
  would retry it (R1.5: the writer is dropped, the consumer rewound), else a ConnectException:
  the task dies.
* A 412 (or PreconditionFailed) on a conditional CompleteMultipartUpload (R8.1) is checked with a
  HEAD (v10.6.18 S3OutputStream.java:333-366, v12.1.9 S3OutputStream.java:371-405): the key there
  (or the HEAD refused with 403) is a FileExistsException (retriable, R8.2); not there is
  "Unexpected state - Contradicting response": a ConnectException, the task dies.
* A failed AbortMultipartUpload is logged and ignored (v10.6.18 S3OutputStream.java:368-375,
  v12.1.9 S3OutputStream.java:407-419).
* At start the task checks its bucket (R1.3, `start_up` below; the bytecode of the released jars
  was read, javap -c -l, for the lines):
  - 11.0.0 on (SDK v2; v12.1.9 S3SinkTask.java:117-118, S3Storage.java:211, S3FileUtils.java:39-58,
    the same in 11.0.1, 11.0.7 and 12.0.7): one HeadBucket. An AwsServiceException with status 301
    or 403, whatever its code, counts as the bucket being there (S3FileUtils.java:48-52, logged as
    "Bucket {} exists, but not in this region or we don't have permissions to it."); 404 is "no
    bucket" (:54-56) and start() throws ConnectException("Non-existent S3 bucket: <bucket>")
    (S3SinkTask.java:117-118); any other answer the client does not retry is rethrown (:58) and
    start() wraps it, an SdkException, in a ConnectException (S3SinkTask.java:144-145).
  - Before 11.0.0 (SDK v1; v10.6.18 S3SinkTask.java:117-118 and :144-145 with
    AmazonClientException, S3Storage.java:186): `AmazonS3.doesBucketExistV2`, a GetBucketAcl, not a
    HeadBucket (aws-java-sdk-s3 1.12.779 AmazonS3Client.java:1455-1467): status 301, or the code
    AccessDenied (any status), counts as there; 404 is "no bucket"; anything else is thrown, so a
    403 with another code (ExpiredToken, InvalidAccessKeyId) fails the start where 11.0.0 on goes on.
  - Neither client follows a redirect (both build their Apache client with
    disableRedirectHandling): a 301 PermanentRedirect (a bucket in another region) reaches the
    code above as an error. SDK v1 keeps its x-amz-bucket-region in a cache it reads only for a
    client without a region of its own (AmazonS3Client.java:5607-5620, bucketRegionShouldBeCached);
    the connector names its region, so the writes that follow go where they went.
  - The client retries first (`client_retries`): one answer it retries never reaches the check;
    the same answer to every attempt (a bucket that is missing stays missing) runs the retries out
    and is thrown, so start() fails.
  The shared spec's R1.3 ("a HEAD on the bucket returns 404 ... a 403 or 301 counts as bucket
  exists") holds for 11.0.0 on; it says nothing of SDK v1's GetBucketAcl, its 403 AccessDenied-only
  reading, or the other answers that fail the start.
"""
from __future__ import annotations

from dataclasses import dataclass

# what one faulty answer leads to
RETRIED = "retried"  # the client's own retry succeeds: the connector never hears of it
REWINDS = "rewinds"  # RetriableException: writer dropped, consumer rewound (R1.5)
FILE_EXISTS = "file-exists"  # R8.2: FileExistsException, rewound past the file that is there
IGNORED = "ignored"  # the connector goes on as if the call had worked (a failed abort)
KILLS_TASK = "kills-task"  # ConnectException: the task dies (documented: not a claim failure)

RETRYABLE_STATUSES = (500, 502, 503, 504)
THROTTLING_CODES = ("Throttling", "ThrottlingException", "ThrottledException", "SlowDown", "TooManyRequestsException",
                    "RequestLimitExceeded", "BandwidthLimitExceeded", "RequestThrottled",
                    "RequestThrottledException", "ProvisionedThroughputExceededException")
RETRYABLE_CODES = ("RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete")
DEFINITE_CLOCK_SKEW = ("RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture")
POSSIBLE_CLOCK_SKEW = ("InvalidSignatureException", "SignatureDoesNotMatch", "AuthFailure")
# connection faults: the client sees an IOException (a reset, a closed or stalled answer)
CONNECTION_ACTIONS = ("drop-response", "reset", "stall")
# the calls whose answer is an XML document the SDK parses (UploadPart's is headers only)
XML_ANSWERS = ("CreateMultipartUpload", "CompleteMultipartUpload", "ListObjectsV2", "ListMultipartUploads")


@dataclass(frozen=True)
class Handling:
    """What a release does with one faulty answer, and where its source says so."""

    outcome: str  # RETRIED | REWINDS | FILE_EXISTS | IGNORED | KILLS_TASK
    why: str

    @property
    def kills_task(self) -> bool:
        return self.outcome == KILLS_TASK

    @property
    def survived(self) -> bool:
        """The task goes on, its at-least-once and exactly-once claims intact."""
        return self.outcome != KILLS_TASK


def sdk_v2(version: tuple[int, ...] | None) -> bool:
    """11.0.0 moved to the AWS SDK v2 (#858); None: the newest release the model follows."""
    return version is None or tuple(version) >= (11, 0, 0)


def client_retries(status: int, code: str, v2: bool) -> bool:
    """The S3 client's own retry condition for an error answer (see the module's sources)."""
    if status in RETRYABLE_STATUSES or status == 429 or code in THROTTLING_CODES or code in RETRYABLE_CODES:
        return True
    if code in DEFINITE_CLOCK_SKEW:
        return True
    return code in POSSIBLE_CLOCK_SKEW and not v2


def one_answer(version: tuple[int, ...] | None, operation: str, action: str, status: int = 0, code: str = "",
               *, conditional: bool = False, object_there: bool = False, answer_cut: bool = False) -> Handling:
    """The release's handling of one faulty answer to `operation` (`action` as the fault rules
    name it: fail, error-200, drop-response, reset, stall, delay, hang). `conditional`: the
    Complete carries If-None-Match (R8.1); `object_there`: the key exists when a 412 is checked;
    `answer_cut`: the connection broke in the middle of the answer's body (a stall, a reset
    after S3 applied the request)."""
    v2 = sdk_v2(version)
    sdk = "SDK v2" if v2 else "SDK v1"
    if action in ("delay", "hang"):
        return Handling(RETRIED, "an answer that comes late is an answer")
    if action in CONNECTION_ACTIONS and answer_cut and v2 and operation in XML_ANSWERS:
        # seen on 12.1.9 (s3-stalled-complete-answer): SdkClientException "Could not parse XML
        # response" caused by a WstxIOException (an XMLStreamException, no IOException), which
        # neither the client's retry nor S3ErrorUtils' SdkRetryCondition.DEFAULT (its exception
        # and its cause's class) takes: a ConnectException
        return Handling(KILLS_TASK, f"an answer to {operation} cut mid-body: the SDK v2 cannot parse the XML "
                                    "('Could not parse XML response', a WstxIOException) and nothing retries it")
    if action in CONNECTION_ACTIONS:
        return Handling(RETRIED, f"an IOException: retried by the {sdk} client (R7.3)")
    if action == "error-200":
        if v2:
            return Handling(RETRIED, "an error inside Complete's 200 is retried by the SDK v2 client (R7.4, #858)")
        return Handling(KILLS_TASK, "an error inside Complete's 200 is thrown at once by the SDK v1 client and "
                                    "its default condition takes no status 200 (R7.4)")
    if operation == "AbortMultipartUpload":
        return Handling(IGNORED, "S3OutputStream.MultipartUpload.abort logs and ignores a failure (R7.5)")
    if client_retries(status, code, v2):
        return Handling(RETRIED, f"{status} {code}: retried by the {sdk} client (R7.3)")
    if operation == "HeadObject":
        # asked only after a 412 on a conditional Complete (R8.2)
        if status == 403:
            return Handling(FILE_EXISTS, "a HEAD refused with 403 after a 412 counts as the key being there "
                                         "(S3OutputStream.fileExists): FileExistsException")
        if status == 404:
            return Handling(KILLS_TASK, "a HEAD that finds no key after a 412: 'Contradicting response' (R8.2)")
    if operation in STARTUP_OPERATIONS:
        # asked only at start (R1.3): one answer, the client's retry above aside
        s = start_up(version, status, code, every_answer=False)
        return Handling(IGNORED if s.starts else KILLS_TASK, s.why)
    if operation == "CompleteMultipartUpload" and conditional and (status == 412 or code == "PreconditionFailed"):
        if object_there:
            return Handling(FILE_EXISTS, "412 on a conditional Complete, the HEAD finds the key: FileExistsException, "
                                         "rewound past it (R8.2)")
        return Handling(KILLS_TASK, "412 on a conditional Complete and no such key: 'Contradicting response from "
                                    "conditional upload and file exists call' (R8.2)")
    return Handling(KILLS_TASK, f"{status} {code} on {operation}: not retriable by the {sdk} default condition, "
                                "a ConnectException (R7.4)")


# --- R1.3: the bucket check of a task's start() ---------------------------------------------------

STARTUP_RULE = "R1.3"
# the calls a release checks its bucket with at start: HeadBucket (SDK v2), GetBucketAcl (SDK v1)
STARTUP_OPERATIONS = ("HeadBucket", "GetBucketAcl")
NON_EXISTENT = "Non-existent S3 bucket"  # the start of start()'s message for a 404 (S3SinkTask.java:118)


def startup_operation(version: tuple[int, ...] | None) -> str:
    """The call the release's start() checks its bucket with (R1.3)."""
    return "HeadBucket" if sdk_v2(version) else "GetBucketAcl"


@dataclass(frozen=True)
class StartUp:
    """What a task's start() makes of the answer to its bucket check (R1.3)."""

    starts: bool  # the bucket is taken as there and the task goes on to write
    operation: str  # the call the release makes (startup_operation)
    why: str  # the reading, with the source that says so
    refusal: str = ""  # where it does not start: what start() throws

    @property
    def rule(self) -> str:
        return STARTUP_RULE


def start_up(version: tuple[int, ...] | None, status: int, code: str = "", bucket: str = "<bucket>",
             action: str = "fail", *, every_answer: bool = True) -> StartUp:
    """R1.3: whether a task of this release starts when its bucket check is answered with
    `status` and `code` (`action` as the fault rules name it). `every_answer`: the store gives
    the same answer to each attempt (a missing bucket stays missing), so a status the client
    retries runs its retries out; else one answer, which a retry gets past."""
    v2 = sdk_v2(version)
    sdk = "SDK v2" if v2 else "SDK v1"
    op = startup_operation(version)

    def refused(why: str, refusal: str) -> StartUp:
        return StartUp(False, op, why, refusal)

    if action != "fail" and action not in CONNECTION_ACTIONS:
        # a late answer is an answer; S3 puts an error inside a 200 only in a Complete's answer
        return StartUp(True, op, f"a {action} answer to {op} is an answer: the check goes on")
    if action in CONNECTION_ACTIONS or client_retries(status, code, v2):
        what = "a broken connection" if action in CONNECTION_ACTIONS else f"{status} {code}".strip()
        if not every_answer:
            return StartUp(True, op, f"{what} on {op}: retried by the {sdk} client, the retry answers (R7.3)")
        return refused(f"{what} to every {op}: the {sdk} client's retries run out and the exception reaches "
                       "start(), which throws it as a ConnectException (S3SinkTask.java:144-145)",
                       f"ConnectException: {what} on {op}")
    if status == 301:
        return StartUp(True, op, f"301 on {op} (a bucket in another region) counts as the bucket being there ("
                                 + ("S3FileUtils.java:48-52" if v2 else "AmazonS3Client.doesBucketExistV2, "
                                    "1.12.779 AmazonS3Client.java:1461-1462") + "); the writes go where they went")
    if v2 and status == 403:
        return StartUp(True, op, f"403 {code} on HeadBucket counts as the bucket being there (S3FileUtils.java:48-52: "
                                 "any 403, the credentials may write without heading it)")
    if not v2 and code == "AccessDenied":
        return StartUp(True, op, f"{status} AccessDenied on GetBucketAcl counts as the bucket being there "
                                 "(AmazonS3Client.java:1461-1462: the code AccessDenied, not the status)")
    if status == 404:
        return refused(f"404 {code} on {op}: no bucket ("
                       + ("S3FileUtils.java:54-56" if v2 else "AmazonS3Client.java:1464-1465")
                       + "), and start() fails with 'Non-existent S3 bucket' (S3SinkTask.java:117-118)",
                       f"{NON_EXISTENT}: {bucket}")
    return refused(f"{status} {code} on {op}: neither there nor missing to the check, so it is thrown ("
                   + ("S3FileUtils.java:58" if v2 else "AmazonS3Client.java:1467, a 403 other than AccessDenied "
                      "among them") + ") and start() throws it as a ConnectException (S3SinkTask.java:144-145)",
                   f"ConnectException: {status} {code} on {op}")
