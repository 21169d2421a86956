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
* At start the task checks the bucket (v12.1.9 S3SinkTask.java:117, S3FileUtils.java:38-60:
  HeadBucket; 403 and 301 count as there, 404 fails the start with "Non-existent S3 bucket", any
  other answer is thrown from start()). SDK v1 (v10.6.18 S3Storage.java:185-187) asks
  `doesBucketExistV2`, a GetBucketAcl: a rule on HeadBucket never fires there.
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
    if operation == "HeadBucket":
        if status in (301, 403):
            return Handling(IGNORED, f"{status} on HeadBucket counts as the bucket being there (S3FileUtils)")
        return Handling(KILLS_TASK, f"{status} {code} on the start-up HeadBucket fails the task's start "
                                    "(S3SinkTask.start)")
    if operation == "CompleteMultipartUpload" and conditional and (status == 412 or code == "PreconditionFailed"):
        if object_there:
            return Handling(FILE_EXISTS, "412 on a conditional Complete, the HEAD finds the key: FileExistsException, "
                                         "rewound past it (R8.2)")
        return Handling(KILLS_TASK, "412 on a conditional Complete and no such key: 'Contradicting response from "
                                    "conditional upload and file exists call' (R8.2)")
    return Handling(KILLS_TASK, f"{status} {code} on {operation}: not retriable by the {sdk} default condition, "
                                "a ConnectException (R7.4)")
