"""Reading a sink's bucket: one listing of its objects (with their bodies) and its open multipart
uploads, as a BucketSample; and the final sample of a run, taken once the uploads have settled.

Every target samples its bucket the same way; only what it adds beside the listing differs (a
sink's own commit log: `committed_keys`).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from adapters.observation import BucketSample, S3Object


def _now_ms() -> int:
    return int(time.time() * 1000)


class BucketReader:
    """Lists one bucket through a boto3 client; bodies are read once per (key, ETag)."""

    def __init__(self, client: Any, bucket: str, read_bodies: bool = True, clock: Callable[[], int] | None = None):
        self.client, self.bucket, self.read_bodies = client, bucket, read_bodies
        self.clock = clock or _now_ms
        self._bodies: dict[tuple[str, str], bytes] = {}

    def objects(self) -> tuple[S3Object, ...]:
        c, out = self.client, []
        for page in c.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            for o in page.get("Contents", []):
                key, etag = o["Key"], o["ETag"].strip('"')
                body = None
                if self.read_bodies:
                    body = self._bodies.get((key, etag))
                    if body is None:
                        try:
                            body = c.get_object(Bucket=self.bucket, Key=key)["Body"].read()
                        except Exception:  # noqa: BLE001 - replaced or deleted meanwhile: the next sample sees it
                            continue
                        self._bodies[(key, etag)] = body
                out.append(S3Object(key, o["Size"], etag, body, int(o["LastModified"].timestamp() * 1000)))
        return tuple(sorted(out, key=lambda o: o.key))

    def open_uploads(self) -> tuple[tuple[str, str], ...]:
        """(key, upload id) of every multipart upload not completed or aborted."""
        uploads: list[tuple[str, str]] = []
        kw: dict[str, str] = {}
        while True:
            r = self.client.list_multipart_uploads(Bucket=self.bucket, **kw)
            uploads += [(u["Key"], u["UploadId"]) for u in r.get("Uploads", [])]
            if not r.get("IsTruncated"):
                return tuple(uploads)
            kw = {"KeyMarker": r["NextKeyMarker"], "UploadIdMarker": r["NextUploadIdMarker"]}

    def sample(self, committed_keys: Callable[[tuple[S3Object, ...]], tuple[str, ...] | None] | None = None
               ) -> BucketSample:
        at = self.clock()
        objs = self.objects()
        return BucketSample(at, objs, self.open_uploads(), committed_keys(objs) if committed_keys else None)


def settled_samples(sample: Callable[[], BucketSample], settle_s: float = 1.5,
                    timeout_s: float = 20.0) -> list[BucketSample]:
    """The final samples of a run: one listing, and, while it shows open multipart uploads,
    more listings `settle_s` apart until two in a row show the same open uploads (or
    `timeout_s` passes). An upload that a sink was completing as the first listing was taken
    (a scheduled rotation that fired after quiet) is then gone; one the sink left behind stays
    in the last sample, which is the one P-MPU-HYGIENE reads."""
    out = [sample()]
    deadline = time.monotonic() + timeout_s
    while out[-1].open_uploads and time.monotonic() < deadline:
        time.sleep(settle_s)
        out.append(sample())
        if set(out[-1].open_uploads) == set(out[-2].open_uploads):
            break
    return out
