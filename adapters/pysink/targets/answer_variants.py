"""Faulty variants of the Python sink for S3's own error answers and connection faults (issue 34):
each a way real sinks have read an answer wrong, planted by overriding one hook of the correct
Writer or SinkTask (adapters.pysink.targets.variants.REGISTRY lists them with the others)."""
from __future__ import annotations

from typing import Any

from adapters.pysink.errors import Retriable
from adapters.pysink.sink import SinkTask
from adapters.pysink.targets.exercised import always, conditional_writes
from adapters.pysink.writer import Writer


def _status(error: BaseException) -> tuple[int, str, str]:
    """(HTTP status, S3 error code, operation) of a botocore ClientError; (0, "", "") otherwise."""
    response = getattr(error, "response", None)
    if not isinstance(response, dict):
        return 0, "", ""
    return (int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0),
            str(response.get("Error", {}).get("Code", "")), str(getattr(error, "operation_name", "")))


class PreconditionAsExists(Writer):
    """Takes a 412 on a conditional Complete as "the object exists" without a HEAD, so its records
    are skipped when the object never landed (R8.2 checks first)."""

    unexercised = staticmethod(conditional_writes)

    def key_taken(self, key: str) -> bool:
        return True


class NoSuchUploadSkipsFile(Writer):
    """Starts a file whose upload S3 no longer has (404 NoSuchUpload: aborted, or a lifecycle
    rule) over again after its records, not at its first record: the records in it are never
    written (the connector dies on it, R7.4)."""

    unexercised = staticmethod(always)

    def commit(self, now: int, timed: bool) -> None:
        try:
            super().commit(now, timed)
        except Exception as e:
            if _status(e)[1] != "NoSuchUpload":
                raise
            for fs in self.files.values():
                fs.start = self.current_offset + 1  # the wrong offset: past the file's records
            raise Retriable(f"upload gone, file started again: {e}") from e


class ThrottlingFatal(SinkTask):
    """Takes a 429 Too Many Requests as fatal, where the S3 clients retry throttling (R7.3)."""

    unexercised = staticmethod(always)

    def retriable(self, error: Exception) -> bool:
        return _status(error)[0] != 429 and super().retriable(error)


class RequestTimeoutOnPartFatal(SinkTask):
    """Takes a 400 RequestTimeout on UploadPart as fatal (a 400 is the client's fault), where the
    S3 clients retry it (R7.3: AWS's retryable error codes)."""

    unexercised = staticmethod(always)

    def retriable(self, error: Exception) -> bool:
        status, code, op = _status(error)
        return not (status == 400 and code == "RequestTimeout" and op == "UploadPart") and super().retriable(error)


class _ResetsAsSuccess:
    """An instance's S3 calls as the writer makes them, a connection that failed mid-exchange
    taken as the call having worked."""

    def __init__(self, inst: Any):
        self._inst = inst

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inst, name)

    def s3(self, op: str, **kw: Any) -> Any:
        from botocore.exceptions import HTTPClientError

        try:
            return self._inst.s3(op, **kw)
        except HTTPClientError:
            if op == "upload_part":
                return {"ETag": '"00000000000000000000000000000000"'}
            if op == "complete_multipart_upload":
                return {"Bucket": kw.get("Bucket"), "Key": kw.get("Key")}
            raise


class ResetAsSuccess(Writer):
    """Takes an UploadPart or CompleteMultipartUpload whose connection was reset or cut mid-answer
    as done: a part S3 never got, an object S3 never made (R7.4: an IOException is retried)."""

    unexercised = staticmethod(always)

    def __init__(self, task: Any, tp: Any, now: int):
        super().__init__(task, tp, now)
        self.inst = _ResetsAsSuccess(self.inst)


class BucketCheckStrict(SinkTask):
    """Fails its start on any error answer to its bucket check: a bucket in another region (301)
    or credentials that may write but not head it (403) stop a task the connector starts (R1.3)."""

    # every task's start checks its bucket, whatever the config
    unexercised = staticmethod(always)

    def bucket_answer(self, status: int) -> str:
        return "missing" if status == 404 else "error"


def _writing_with(writer: type[Writer]) -> type[SinkTask]:
    return type(f"{writer.__name__}Task", (SinkTask,), {"writer_class": writer, "__doc__": writer.__doc__})


ANSWER_VARIANTS: dict[str, type[SinkTask]] = {
    "precondition-as-exists": _writing_with(PreconditionAsExists),
    "no-such-upload-skips-file": _writing_with(NoSuchUploadSkipsFile),
    "throttling-fatal": ThrottlingFatal,
    "request-timeout-on-part-fatal": RequestTimeoutOnPartFatal,
    "reset-as-success": _writing_with(ResetAsSuccess),
    "bucket-check-strict": BucketCheckStrict,
}
