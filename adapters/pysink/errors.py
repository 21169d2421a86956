"""What stops the Python sink: the exceptions its layers raise, and which S3 errors are retriable."""
from __future__ import annotations


class Killed(Exception):
    """The instance was killed: it stops where it is, closing and committing nothing."""


class Fenced(Exception):
    """The group has moved on: this instance no longer owns its partitions."""


class SinkConfigError(ValueError):
    """The connector config asks for something the Python sink does not do (names the property)."""


class TaskFailed(RuntimeError):
    """A non-retriable error: the task dies (Connect kills a sink task for these)."""


class Retriable(RuntimeError):
    """A retriable S3 error (5xx, throttling, a network error): R1.5."""


def is_retriable(e: BaseException) -> bool:
    """R7.4: what the AWS SDK's default retry condition would retry: 5xx, throttling, network."""
    try:
        from botocore.exceptions import (ClientError, ConnectionClosedError, ConnectTimeoutError,
                                         EndpointConnectionError, ReadTimeoutError)
    except ImportError:  # pragma: no cover
        return False
    if isinstance(e, (ConnectionClosedError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError)):
        return True
    if isinstance(e, ClientError):
        status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0
        code = e.response.get("Error", {}).get("Code", "")
        return status >= 500 or status == 429 or code in (
            "SlowDown", "Throttling", "ThrottlingException", "RequestTimeout", "InternalError", "ServiceUnavailable")
    return isinstance(e, (ConnectionError, TimeoutError))

