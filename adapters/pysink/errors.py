"""What stops the Python sink: the exceptions its layers raise, and which S3 errors are retriable."""
from __future__ import annotations


class Killed(Exception):
    """The instance was killed: it stops where it is, closing and committing nothing."""


class Fenced(Exception):
    """The group has moved on: this instance no longer owns its partitions."""


class Stopped(Fenced):
    """The instance was asked to stop while in a put (an S3 call of it hung): it completes no
    more uploads, since the task may already run again elsewhere (SinkInstance.s3)."""


class SinkConfigError(ValueError):
    """The connector config asks for something the Python sink does not do (names the property)."""


class TaskFailed(RuntimeError):
    """A non-retriable error: the task dies (Connect kills a sink task for these)."""


class Retriable(RuntimeError):
    """A retriable S3 error (5xx, throttling, a network error): R1.5."""


class FileExists(Retriable):
    """R8.2: a conditional Complete found the key taken (412, and a HEAD confirms it): the
    object there is never overwritten; put() rewinds past it (R1.5)."""


def s3_status(e: BaseException) -> int:
    """The HTTP status of an S3 error answer (a botocore ClientError); 0 for anything else."""
    response = getattr(e, "response", None)
    if not isinstance(response, dict):
        return 0
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)


def precondition_failed(e: BaseException) -> bool:
    """S3's answer to If-None-Match on a key that exists: a 412, or PreconditionFailed inside a 200."""
    try:
        from botocore.exceptions import ClientError
    except ImportError:  # pragma: no cover
        return False
    if not isinstance(e, ClientError):
        return False
    status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0
    return status == 412 or e.response.get("Error", {}).get("Code", "") == "PreconditionFailed"


def is_retriable(e: BaseException) -> bool:
    """R7.4: what the AWS SDK's default retry condition would retry: 5xx, throttling, network;
    and the sink's own retriable errors (R8.2)."""
    if isinstance(e, Retriable):
        return True
    try:
        from botocore.exceptions import (ClientError, ConnectionClosedError, ConnectTimeoutError,
                                         EndpointConnectionError, HTTPClientError, ReadTimeoutError)
    except ImportError:  # pragma: no cover
        return False
    # any failure of the connection (a reset, an answer cut or stalled mid-body: HTTPClientError
    # and its ResponseStreamingError) is an IOException to the AWS SDK: retried
    if isinstance(e, (ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError,
                      HTTPClientError)):
        return True
    if isinstance(e, ClientError):
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0
        code = e.response.get("Error", {}).get("Code", "")
        # the AWS SDK v2 retries a clock skew it is sure of (the request's time is off; signing it
        # again fixes it), not SignatureDoesNotMatch, which a wrong key answers just the same
        return status >= 500 or status == 429 or code in (
            "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError", "ServiceUnavailable",
            "RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture")
    return isinstance(e, (ConnectionError, TimeoutError))

