"""moto's S3 server as sinkcheck runs it: `python -m moto.server` with one race fixed.

moto 5.2.5 computes an object's ETag lazily (`FakeKey.etag`) by seeking its body's shared buffer
to 0 and reading it in 16 MiB blocks, without the key's lock that the body's reader (`value`) takes
since getmoto/moto#2816. Two requests touching one object at once (a ListObjectsV2 or HeadObject
beside the PutObject's own answer) move each other's position: the MD5 of part of the body, or of
none of it, is cached as the ETag, and one of the two requests is answered with an ETag the next
one does not have. A sink that fences on ETags then meets a 412 no S3 would give: Lenses 11.7.2
copies its staged `.temp-upload/` file with `HeadObject(If-Match: <the PutObject's ETag>)` first
(`AwsS3StorageInterface.mvFile`), and an 18 MB file in `multipart-completes` died on that HEAD's
412. Measured on the real server: 3 PutObjects of 18 MiB in 10 with two threads listing the bucket
gave a wrong ETag (`tests/test_moto_server.py`). Here the ETag is computed under the key's lock,
as its body is read.

    python -m adapters.processes.moto_server -H 127.0.0.1 -p PORT     # what MotoS3Server starts
"""
from __future__ import annotations

import sys
from typing import Any, Callable


def locked_etag(unlocked: Callable[[Any], str]) -> property:
    """FakeKey.etag computed while holding the key's lock (the lock FakeKey.value reads under)."""
    if getattr(unlocked, "sinkcheck_locked", False):
        return property(unlocked)

    def etag(self: Any) -> str:
        with self.lock:
            return unlocked(self)

    etag.sinkcheck_locked = True  # type: ignore[attr-defined]
    etag.__doc__ = unlocked.__doc__
    return property(etag)


def patch_moto() -> None:
    from moto.s3.models import FakeKey

    FakeKey.etag = locked_etag(FakeKey.etag.fget)  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    patch_moto()
    from moto.server import main as moto_main

    moto_main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
