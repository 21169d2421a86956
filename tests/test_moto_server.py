"""moto's S3 server as sinkcheck starts it (adapters.processes.moto_server): an object's ETag is
computed under the key's lock, so a request reading the object meanwhile cannot make it the MD5 of
part of the body (moto 5.2.5 computes it unlocked; Lenses 11.7.2's HeadObject(If-Match) on its
staged 18 MB file got a 412 from that in `multipart-completes`)."""
from __future__ import annotations

import hashlib
import os
import threading

import pytest

from adapters.processes.moto import MotoS3Server
from adapters.processes.moto_server import locked_etag

BIG = (16 << 20) + 4096  # over moto's 16 MiB read block: the ETag takes two reads of the shared buffer


def _interleaved_etag(key) -> tuple[str, list]:
    """key.etag with another request reading the object (FakeKey.value) between its first and
    second block, as a ListObjectsV2 or HeadObject beside a PutObject's answer does."""
    buf = key._value_buffer
    real_read = buf.read
    other: list = []

    def read(n: int = -1) -> bytes:
        data = real_read(n)
        if not other:
            other.append("started")
            t = threading.Thread(target=lambda: other.append(key.value), daemon=True)
            t.start()
            t.join(0.5)  # unlocked, the reader runs to the end of the buffer here
            other.append(t)
        return data

    buf.read = read
    try:
        return key.etag, other
    finally:
        buf.read = real_read


def _key(body: bytes):
    from moto.s3.models import FakeKey

    return FakeKey("k", body, account_id="123456789012", region_name="us-east-1")


def test_moto_etag_is_the_md5_of_the_whole_body_when_another_request_reads_the_object_meanwhile(monkeypatch):
    from moto.s3.models import FakeKey

    body = os.urandom(BIG)
    want = f'"{hashlib.md5(body).hexdigest()}"'
    # moto as released: the other reader moves the position and the ETag misses the second block
    etag, _ = _interleaved_etag(_key(body))
    assert etag != want, "moto computes ETags under the key's lock now: adapters.processes.moto_server is not needed"
    # as sinkcheck runs it
    monkeypatch.setattr(FakeKey, "etag", locked_etag(FakeKey.etag.fget))
    key = _key(body)
    etag, other = _interleaved_etag(key)
    assert etag == want
    other[1].join(5)
    assert other[-1] == body  # the other request waited for the lock and read the whole object


def test_locking_the_etag_twice_takes_the_lock_once():
    from moto.s3.models import FakeKey

    once = locked_etag(FakeKey.etag.fget)
    twice = locked_etag(once.fget)
    key = _key(b"x")
    assert twice.fget(key) == f'"{hashlib.md5(b"x").hexdigest()}"'  # a second lock of the same Lock would hang


def test_the_s3_server_sinkcheck_starts_is_moto_with_the_locked_etag(tmp_path):
    srv = MotoS3Server(tmp_path)
    assert srv.command()[1:3] == ["-m", "adapters.processes.moto_server"]
    srv.start()
    try:
        c = srv.client()
        c.put_object(Bucket=srv.bucket, Key="a", Body=b"abc")
        assert c.head_object(Bucket=srv.bucket, Key="a")["ETag"] == f'"{hashlib.md5(b"abc").hexdigest()}"'
    finally:
        srv.stop()
    assert "adapters.processes.moto_server" in srv.log_path.read_text()
