"""An S3 in memory for the simulated Python sink: the semantics sinkcheck's S3 server and fault
front give a sink, without a socket.

* Objects and multipart uploads as moto keeps them: an upload is invisible until completed; a
  completed upload answers a repeated Complete as the completion it was; every part but the
  last must hold 5 MiB; ETags are S3's (MD5, or MD5 of the parts' MD5s with `-N`);
  `If-None-Match: *` on PutObject and Complete answers 412 when the key exists.
* The fault rules of the HTTP front (adapters.s3.rules.FaultRules), on calls: `fail` raises the
  S3 error, `error-200` raises InternalError (as botocore reads an error inside a 200) after
  applying the call or instead of it, `drop-response` applies it and raises a closed
  connection, `delay` moves the virtual clock, `hang` parks the caller until the rule is
  released (the call takes effect at that moment, whatever became of its caller). `reset`
  raises a closed connection without applying the call (or after, with `forward`); `stall`
  applies it and parks the caller until released, then raises a closed connection (the answer
  never ended). A `fail` rule's `state` applies the call first ("applied") or drops its
  multipart upload first ("aborted").
* The clock is the simulation's; the caller's turn (`park`) comes from the simulation's
  scheduler, which is what makes a hung call a step of the schedule.

Clients are boto3-shaped (`create_multipart_upload(Bucket=…, Key=…)`, paginators for
ListObjectsV2), so the sink and sinkcheck's bucket reader use them as they use boto3's.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from adapters.s3.rules import S3_MESSAGES, FaultRules, S3Request

MIN_PART = 5 * 1024 * 1024


def _error(op: str, status: int, code: str, message: str = "", region: str | None = None) -> Exception:
    """S3's error answer as botocore raises it; `region`: a 301's x-amz-bucket-region."""
    from botocore.exceptions import ClientError

    meta: dict[str, Any] = {"HTTPStatusCode": status}
    if region:
        meta["HTTPHeaders"] = {"x-amz-bucket-region": region}
    return ClientError({"Error": {"Code": code, "Message": message or code}, "ResponseMetadata": meta}, op)


def _dropped() -> Exception:
    from botocore.exceptions import ConnectionClosedError

    return ConnectionClosedError(endpoint_url="memory-s3 (response dropped by rule)")


@dataclass
class _Object:
    body: bytes
    etag: str
    modified_ms: int


@dataclass
class _Upload:
    bucket: str
    key: str
    parts: dict[int, tuple[bytes, str]] = field(default_factory=dict)
    completed: str | None = None  # the ETag it was completed with


class _Paginator:
    def __init__(self, s3: "MemoryS3"):
        self.s3 = s3

    def paginate(self, Bucket: str, **_: Any) -> list[dict[str, Any]]:  # noqa: N803 - boto3's names
        return [self.s3.list_objects_v2(Bucket=Bucket)]


@dataclass
class Parked:
    """A call held by a hang rule: it takes effect when released; its caller waits for that and
    then for its turn."""

    apply: Callable[[], Any]
    firing: Any  # the rule's firing (adapters.s3.rules._Firing) it waits on
    released: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None


class MemoryS3(FaultRules):
    """The store, its fault rules, and boto3-shaped clients on it (`client(caller)`)."""

    def __init__(self, clock: Callable[[], int], advance: Callable[[int], Any] | None = None):
        super().__init__(now=clock)
        self.clock = clock
        self.advance = advance or (lambda ms: None)
        self.buckets: dict[str, dict[str, _Object]] = {}
        self.uploads: dict[str, _Upload] = {}
        self._upload_ids = itertools.count(1)
        self.parked: list[Parked] = []
        self.calls = 0
        # bumped by every change a listing shows (an object written, an upload started, completed
        # or aborted): an observer whose count has not moved lists what it listed before
        self.changes = 0

    # --- fault rules on calls ---------------------------------------------------------------------
    def release(self, rule_id: str | None = None) -> None:
        """Let hung calls go on: each takes effect now, in the order it was parked."""
        super().release(rule_id)
        for p in [p for p in self.parked if p.firing.released.is_set()]:
            try:
                p.result = p.apply()
            except Exception as e:  # noqa: BLE001 - handed to the caller when it goes on
                p.error = e
            self.parked.remove(p)
            p.released.set()

    def _call(self, op: str, bucket: str, key: str | None, upload_id: str | None, part: int | None,
              apply: Callable[[], Any], park: Callable[[Parked], None] | None) -> Any:
        self.calls += 1
        req = S3Request(op, bucket, key, upload_id, part, "SIM")
        fired = self._fire(req)
        if fired is None:
            return apply()
        st, firing = fired
        rule = st.rule
        if rule.action == "fail":
            if rule.state == "applied":
                try:
                    apply()
                except Exception:  # noqa: BLE001 - S3's own refusal; the client hears the rule's
                    pass
            elif rule.state == "aborted" and upload_id is not None:
                self.uploads.pop(upload_id, None)
                self.changes += 1
            firing.until_ms = self.clock()
            raise _error(op, int(rule.status), rule.error_code(), S3_MESSAGES.get(rule.error_code(), ""),
                         rule.bucket_region())
        if rule.action == "reset":
            if rule.forward:
                apply()
            firing.until_ms = self.clock()
            raise _dropped()
        if rule.action == "error-200":
            if rule.forward:
                apply()
            firing.until_ms = self.clock()
            raise _error(op, 500, rule.error_code(), "an error inside a 200 (botocore reads it as a 500)")
        if rule.action == "drop-response":
            apply()
            firing.until_ms = self.clock()
            raise _dropped()
        if rule.action == "delay":
            self.advance(int(rule.delay_s * 1000))
            firing.until_ms = self.clock()
            return apply()
        if rule.action == "stall":
            # applied at once; the answer stops mid-body until the rule is released
            apply()
            p = Parked(lambda: None, firing)
            if not firing.released.is_set():
                self.parked.append(p)
                if park is None:
                    raise RuntimeError(f"{op} stalls by rule {st.rule_id} and its caller cannot wait")
                park(p)
            firing.until_ms = self.clock()
            raise _dropped()
        # hang: parked until released; the call takes effect then
        p = Parked(apply, firing)
        if firing.released.is_set():  # released before it came (the front was stopping)
            firing.until_ms = self.clock()
            return apply()
        self.parked.append(p)
        if park is None:
            raise RuntimeError(f"{op} hangs by rule {st.rule_id} and its caller cannot wait")
        park(p)
        firing.until_ms = self.clock()
        if p.error is not None:
            raise p.error
        return p.result

    # --- the store ------------------------------------------------------------------------------
    def _bucket(self, op: str, bucket: str) -> dict[str, _Object]:
        if bucket not in self.buckets:
            raise _error(op, 404, "NoSuchBucket")
        return self.buckets[bucket]

    def _put(self, bucket: str, key: str, body: bytes, etag: str, if_none_match: str | None, op: str) -> None:
        objs = self._bucket(op, bucket)
        if if_none_match == "*" and key in objs:
            raise _error(op, 412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
        objs[key] = _Object(body, etag, self.clock())
        self.changes += 1

    def create_bucket(self, Bucket: str, **_: Any) -> dict:  # noqa: N803
        self.buckets.setdefault(Bucket, {})
        self.changes += 1
        return {}

    def list_objects_v2(self, Bucket: str, **_: Any) -> dict:  # noqa: N803
        objs = self._bucket("ListObjectsV2", Bucket)
        return {"Contents": [{"Key": k, "Size": len(o.body), "ETag": o.etag,
                              "LastModified": dt.datetime.fromtimestamp(o.modified_ms / 1000, dt.timezone.utc)}
                             for k, o in sorted(objs.items())], "IsTruncated": False}

    def list_multipart_uploads(self, Bucket: str, **_: Any) -> dict:  # noqa: N803
        self._bucket("ListMultipartUploads", Bucket)
        return {"Uploads": [{"Key": u.key, "UploadId": uid} for uid, u in sorted(self.uploads.items(),
                                                                                key=lambda t: (t[1].key, t[0]))
                            if u.bucket == Bucket and u.completed is None], "IsTruncated": False}


class MemoryS3Client:
    """boto3-shaped calls on a MemoryS3 by one caller (`park` waits for a hung call's release and
    the caller's next turn; None: a hang is an error). `faults=False`: an observer's client,
    whose calls no fault rule sees (sinkcheck's own sampler reads S3 beside the fault front)."""

    def __init__(self, store: MemoryS3, park: Callable[[Parked], None] | None = None, faults: bool = True):
        self.store, self.park, self.faults = store, park, faults

    def _call(self, op: str, bucket: str, key: str | None, upload_id: str | None, part: int | None,
              apply: Callable[[], Any]) -> Any:
        if not self.faults:
            return apply()
        return self.store._call(op, bucket, key, upload_id, part, apply, self.park)

    def get_paginator(self, name: str) -> _Paginator:
        if name != "list_objects_v2":
            raise ValueError(f"no paginator {name!r} in the simulated S3")
        return _Paginator(self.store)

    def create_bucket(self, Bucket: str, **kw: Any) -> dict:  # noqa: N803
        return self.store.create_bucket(Bucket=Bucket)

    def list_objects_v2(self, Bucket: str, **kw: Any) -> dict:  # noqa: N803
        return self._call("ListObjectsV2", Bucket, None, None, None, lambda: self.store.list_objects_v2(Bucket=Bucket))

    def head_bucket(self, Bucket: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            if Bucket not in self.store.buckets:
                raise _error("HeadBucket", 404, "404")
            return {}
        return self._call("HeadBucket", Bucket, None, None, None, apply)

    def get_bucket_acl(self, Bucket: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            self.store._bucket("GetBucketAcl", Bucket)
            return {"Owner": {"ID": "sinkcheck"}, "Grants": []}
        return self._call("GetBucketAcl", Bucket, None, None, None, apply)

    def list_multipart_uploads(self, Bucket: str, **kw: Any) -> dict:  # noqa: N803
        return self.store.list_multipart_uploads(Bucket=Bucket)

    def list_parts(self, Bucket: str, Key: str, UploadId: str, **kw: Any) -> dict:  # noqa: N803
        u = self.store.uploads.get(UploadId)
        if u is None or u.completed is not None:
            raise _error("ListParts", 404, "NoSuchUpload")
        return {"Parts": [{"PartNumber": n, "ETag": e, "Size": len(b)} for n, (b, e) in sorted(u.parts.items())]}

    def get_object(self, Bucket: str, Key: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            o = self.store._bucket("GetObject", Bucket).get(Key)
            if o is None:
                raise _error("GetObject", 404, "NoSuchKey")
            return {"Body": io.BytesIO(o.body), "ETag": o.etag, "ContentLength": len(o.body)}
        return self._call("GetObject", Bucket, Key, None, None, apply)

    def head_object(self, Bucket: str, Key: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            o = self.store._bucket("HeadObject", Bucket).get(Key)
            if o is None:
                raise _error("HeadObject", 404, "404")
            return {"ETag": o.etag, "ContentLength": len(o.body)}
        return self._call("HeadObject", Bucket, Key, None, None, apply)

    def put_object(self, Bucket: str, Key: str, Body: bytes = b"", IfNoneMatch: str | None = None,  # noqa: N803
                   **kw: Any) -> dict:
        body = bytes(Body)
        etag = f'"{hashlib.md5(body).hexdigest()}"'

        def apply() -> dict:
            self.store._put(Bucket, Key, body, etag, IfNoneMatch, "PutObject")
            return {"ETag": etag}
        return self._call("PutObject", Bucket, Key, None, None, apply)

    def create_multipart_upload(self, Bucket: str, Key: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            self.store._bucket("CreateMultipartUpload", Bucket)
            uid = f"sim-upload-{next(self.store._upload_ids)}"
            self.store.uploads[uid] = _Upload(Bucket, Key)
            self.store.changes += 1
            return {"UploadId": uid, "Bucket": Bucket, "Key": Key}
        return self._call("CreateMultipartUpload", Bucket, Key, None, None, apply)

    def upload_part(self, Bucket: str, Key: str, UploadId: str, PartNumber: int, Body: bytes = b"",  # noqa: N803
                    **kw: Any) -> dict:
        body = bytes(Body)
        etag = f'"{hashlib.md5(body).hexdigest()}"'

        def apply() -> dict:
            u = self.store.uploads.get(UploadId)
            if u is None or u.completed is not None or (u.bucket, u.key) != (Bucket, Key):
                raise _error("UploadPart", 404, "NoSuchUpload")
            u.parts[int(PartNumber)] = (body, etag)
            return {"ETag": etag}
        return self._call("UploadPart", Bucket, Key, UploadId, int(PartNumber), apply)

    def complete_multipart_upload(self, Bucket: str, Key: str, UploadId: str,  # noqa: N803
                                  MultipartUpload: dict | None = None, IfNoneMatch: str | None = None,
                                  **kw: Any) -> dict:
        listed = [(int(p["PartNumber"]), p["ETag"]) for p in (MultipartUpload or {}).get("Parts", [])]

        def apply() -> dict:
            u = self.store.uploads.get(UploadId)
            if u is None or (u.bucket, u.key) != (Bucket, Key):
                raise _error("CompleteMultipartUpload", 404, "NoSuchUpload")
            if u.completed is not None:
                return {"Bucket": Bucket, "Key": Key, "ETag": u.completed}
            chunks, digests = [], b""
            for i, (n, etag) in enumerate(listed):
                got = u.parts.get(n)
                if got is None or got[1].strip('"') != str(etag).strip('"'):
                    raise _error("CompleteMultipartUpload", 400, "InvalidPart")
                if i < len(listed) - 1 and len(got[0]) < MIN_PART:
                    raise _error("CompleteMultipartUpload", 400, "EntityTooSmall")
                chunks.append(got[0])
                digests += bytes.fromhex(got[1].strip('"'))
            etag = f'"{hashlib.md5(digests).hexdigest()}-{len(listed)}"'
            self.store._put(Bucket, Key, b"".join(chunks), etag, IfNoneMatch, "CompleteMultipartUpload")
            u.completed = etag
            self.store.changes += 1
            return {"Bucket": Bucket, "Key": Key, "ETag": etag}
        return self._call("CompleteMultipartUpload", Bucket, Key, UploadId, None, apply)

    def abort_multipart_upload(self, Bucket: str, Key: str, UploadId: str, **kw: Any) -> dict:  # noqa: N803
        def apply() -> dict:
            u = self.store.uploads.get(UploadId)
            if u is None or u.completed is not None:
                raise _error("AbortMultipartUpload", 404, "NoSuchUpload")
            del self.store.uploads[UploadId]
            self.store.changes += 1
            return {}
        return self._call("AbortMultipartUpload", Bucket, Key, UploadId, None, apply)
