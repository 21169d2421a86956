"""Does an S3 server behave the way the verdicts assume? Probes of a bucket: a multipart upload is
invisible until complete; `If-None-Match: *` is honoured on PutObject and on
CompleteMultipartUpload (412 on an existing key); listing reads its writes; an aborted upload is gone."""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Callable


MB = 1024 * 1024


@dataclass
class PreflightCheck:
    check: str
    status: str  # pass | fail | error
    detail: str
    rule: str = ""


def _client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3", endpoint_url=endpoint, region_name=os.environ.get("AWS_REGION", "us-east-1"),
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", "sinkcheck"),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", "sinkcheck"),
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}, connect_timeout=5, read_timeout=20),
    )


def _code(e: Exception) -> tuple[str, int | None]:
    r = getattr(e, "response", None) or {}
    return str(r.get("Error", {}).get("Code", type(e).__name__)), r.get("ResponseMetadata", {}).get("HTTPStatusCode")


def _listed(s3: Any, bucket: str, key: str) -> bool:
    resp = s3.list_objects_v2(Bucket=bucket, Prefix=key)
    return any(o["Key"] == key for o in resp.get("Contents", []))


def _uploads(s3: Any, bucket: str, key: str) -> list[str]:
    resp = s3.list_multipart_uploads(Bucket=bucket, Prefix=key)
    return [u["UploadId"] for u in resp.get("Uploads", []) if u["Key"] == key]


def check_mpu_invisible(s3: Any, bucket: str, prefix: str) -> PreflightCheck:
    key = f"{prefix}/mpu-invisible"
    up = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    try:
        p1 = s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=1, Body=b"a" * (5 * MB))
        p2 = s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=2, Body=b"b" * 1024)
        if _listed(s3, bucket, key):
            return PreflightCheck("multipart upload invisible until complete", "fail",
                                  "the key is listed while its upload is open", "R7.1")
        try:
            s3.head_object(Bucket=bucket, Key=key)
            return PreflightCheck("multipart upload invisible until complete", "fail",
                                  "HEAD finds the key while its upload is open", "R7.1")
        except Exception as e:
            code, status = _code(e)
            if status != 404:
                return PreflightCheck("multipart upload invisible until complete", "fail", f"HEAD gave {status} {code}, not 404", "R7.1")
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["ETag"]}]})
        up = None
        size = s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
        if not _listed(s3, bucket, key) or size != 5 * MB + 1024:
            return PreflightCheck("multipart upload invisible until complete", "fail",
                                  f"after Complete the object is not listed whole (size {size})", "R7.1")
        return PreflightCheck("multipart upload invisible until complete", "pass",
                              "not listed and HEAD 404 while open; listed whole after Complete", "R7.1")
    finally:
        if up:
            s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=up)


def check_put_if_none_match(s3: Any, bucket: str, prefix: str) -> PreflightCheck:
    name = "If-None-Match: * on PutObject"
    key = f"{prefix}/put-inm"
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=b"first", IfNoneMatch="*")
    except Exception as e:
        code, status = _code(e)
        return PreflightCheck(name, "fail", f"a conditional put of a new key was refused: {status} {code}", "R8")
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=b"second", IfNoneMatch="*")
    except Exception as e:
        code, status = _code(e)
        if status == 412 or code == "PreconditionFailed":
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            if body != b"first":
                return PreflightCheck(name, "fail", "412 returned, but the object was overwritten anyway", "R8")
            return PreflightCheck(name, "pass", "412 PreconditionFailed on an existing key; the object is unchanged", "R8")
        return PreflightCheck(name, "fail", f"expected 412 on an existing key, got {status} {code}", "R8")
    return PreflightCheck(name, "fail", "the server overwrote an existing key despite If-None-Match: * "
                          "(conditional writes, R8, cannot be checked on it)", "R8")


def check_complete_if_none_match(s3: Any, bucket: str, prefix: str) -> PreflightCheck:
    name = "If-None-Match: * on CompleteMultipartUpload"
    key = f"{prefix}/complete-inm"
    s3.put_object(Bucket=bucket, Key=key, Body=b"existing")
    up = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    try:
        p1 = s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=1, Body=b"new")
        try:
            s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=up, IfNoneMatch="*",
                                         MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}]})
        except Exception as e:
            code, status = _code(e)
            if status == 412 or code == "PreconditionFailed":
                body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
                if body != b"existing":
                    return PreflightCheck(name, "fail", "412 returned, but the object was replaced anyway", "R8")
                return PreflightCheck(name, "pass", f"{status} {code} on an existing key; the object is unchanged", "R8")
            return PreflightCheck(name, "fail", f"expected 412 on an existing key, got {status} {code}", "R8")
        up = None
        return PreflightCheck(name, "fail", "Complete replaced an existing key despite If-None-Match: * "
                              "(10.6+ conditional writes would overwrite on this server)", "R8")
    finally:
        if up:
            try:
                s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=up)
            except Exception:
                pass


def check_read_after_write(s3: Any, bucket: str, prefix: str) -> PreflightCheck:
    name = "read-after-write listing"
    keys = [f"{prefix}/raw/{i:03d}" for i in range(5)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    listed = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/raw/").get("Contents", [])}
    missing = [k for k in keys if k not in listed]
    if missing:
        return PreflightCheck(name, "fail", f"{len(missing)} of {len(keys)} new keys not listed right after their PUT", "P-NOLOSS")
    s3.put_object(Bucket=bucket, Key=keys[0], Body=b"overwritten")
    if s3.get_object(Bucket=bucket, Key=keys[0])["Body"].read() != b"overwritten":
        return PreflightCheck(name, "fail", "GET right after an overwrite returned the old body", "P-NOLOSS")
    s3.delete_object(Bucket=bucket, Key=keys[1])
    if _listed(s3, bucket, keys[1]):
        return PreflightCheck(name, "fail", "a deleted key is still listed", "P-NOLOSS")
    return PreflightCheck(name, "pass", "new keys listed at once; overwrite and delete seen at once", "P-NOLOSS")


def check_abort(s3: Any, bucket: str, prefix: str) -> PreflightCheck:
    name = "abort removes the upload"
    key = f"{prefix}/abort"
    up = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=1, Body=b"x" * 1024)
    if up not in _uploads(s3, bucket, key):
        return PreflightCheck(name, "fail", "an open upload is not in ListMultipartUploads (P-MPU-HYGIENE cannot be measured)",
                              "P-MPU-HYGIENE")
    s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=up)
    if up in _uploads(s3, bucket, key):
        return PreflightCheck(name, "fail", "the aborted upload is still listed", "P-MPU-HYGIENE")
    try:
        s3.upload_part(Bucket=bucket, Key=key, UploadId=up, PartNumber=2, Body=b"y")
        return PreflightCheck(name, "fail", "UploadPart to an aborted upload succeeded", "P-MPU-HYGIENE")
    except Exception as e:
        code, status = _code(e)
        refused = "NoSuchUpload" if code == "NoSuchUpload" else f"{status} {code}; AWS answers 404 NoSuchUpload"
    if _listed(s3, bucket, key):
        return PreflightCheck(name, "fail", "the aborted upload's key became visible", "P-MPU-HYGIENE")
    return PreflightCheck(name, "pass", f"listed while open; gone from the listing after abort; parts refused ({refused})",
                          "P-MPU-HYGIENE")


CHECKS: list[Callable[[Any, str, str], PreflightCheck]] = [
    check_mpu_invisible, check_put_if_none_match, check_complete_if_none_match, check_read_after_write, check_abort,
]


def preflight(endpoint: str, bucket: str | None = None) -> list[PreflightCheck]:
    """Run every check; raises ConnectionError when the server cannot be reached."""
    s3 = _client(endpoint)
    created = False
    try:
        if bucket is None:
            bucket = f"sinkcheck-preflight-{uuid.uuid4().hex[:10]}"
            s3.create_bucket(Bucket=bucket)
            created = True
        else:
            s3.head_bucket(Bucket=bucket)
    except Exception as e:
        code, status = _code(e)
        raise ConnectionError(f"S3 at {endpoint}: {code}" + (f" (HTTP {status})" if status else "") +
                              (f": {e}" if status is None else "")) from None
    prefix = f"sinkcheck-preflight/{uuid.uuid4().hex[:8]}"
    out = []
    try:
        for fn in CHECKS:
            try:
                out.append(fn(s3, bucket, prefix))
            except Exception as e:
                code, status = _code(e)
                out.append(PreflightCheck(fn.__name__.removeprefix("check_").replace("_", " "), "error",
                                          f"{status or ''} {code}: {e}".strip()))
    finally:
        _cleanup(s3, bucket, prefix, created)
    return out


def _cleanup(s3: Any, bucket: str, prefix: str, delete_bucket: bool) -> None:
    try:
        for u in s3.list_multipart_uploads(Bucket=bucket, Prefix=prefix).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
        for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
            s3.delete_object(Bucket=bucket, Key=o["Key"])
        if delete_bucket:
            s3.delete_bucket(Bucket=bucket)
    except Exception:
        pass


def table(checks: list[PreflightCheck]) -> str:
    w = max(len(c.check) for c in checks)
    lines = [f"{'check':<{w}}  result  detail", f"{'-' * w}  ------  ------"]
    for c in checks:
        lines.append(f"{c.check:<{w}}  {c.status.upper():<6}  {c.detail}")
    return "\n".join(lines)
