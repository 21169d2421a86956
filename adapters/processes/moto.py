"""moto's S3 server on a free loopback port, and a boto3 client for an endpoint."""
from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from adapters.processes.managed import LOOPBACK, ManagedProcess, free_port, wait_until

_REPO = Path(__file__).resolve().parents[2]  # the checkout holding `adapters`, for the server's -m


def s3_client(endpoint: str):
    """A boto3 S3 client for sinkcheck's S3 server at `endpoint` (or the fault front before
    it): path-style, moto's credentials, short timeouts."""
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name=MotoS3Server.REGION,
                        aws_access_key_id=MotoS3Server.ACCESS_KEY,
                        aws_secret_access_key=MotoS3Server.SECRET_KEY,
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2},
                                      connect_timeout=5, read_timeout=30))


class MotoS3Server:
    """moto's S3 server as a subprocess on a free loopback port, with one bucket."""

    ACCESS_KEY = "sinkcheck"
    SECRET_KEY = "sinkcheck-secret"
    REGION = "us-east-1"

    def __init__(self, run_dir: Path, *, bucket: str = "sinkcheck", start_timeout_s: float = 60):
        self.dir = Path(run_dir) / "s3"
        self.port = free_port()
        self.bucket = bucket
        self.start_timeout_s = start_timeout_s
        self.proc: ManagedProcess | None = None
        self.startup_s: float | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "moto.log"

    def client(self):
        return s3_client(self.endpoint)

    def start(self) -> "MotoS3Server":
        t0 = time.monotonic()
        self.proc = ManagedProcess(
            "moto-s3", self.command(), self.log_path,
            env={"MOTO_PORT": str(self.port), "PYTHONPATH": os.pathsep.join(
                p for p in (str(_REPO), os.environ.get("PYTHONPATH", "")) if p)}).start()
        try:
            wait_until(lambda: self._get("/moto-api/data.json") is not None, self.start_timeout_s,
                       f"moto's S3 server at {self.endpoint}", log=self.log_path, proc=self.proc)
            self.create_bucket(self.bucket)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def command(self) -> list[str]:
        """moto.server through adapters.processes.moto_server: its ETags computed under the key's
        lock (moto 5.2.5 computes them unlocked, so concurrent requests cache a wrong one)."""
        return [sys.executable, "-m", "adapters.processes.moto_server", "-H", LOOPBACK, "-p", str(self.port)]

    def _get(self, path: str) -> bytes | None:
        try:
            with urllib.request.urlopen(self.endpoint + path, timeout=5) as r:
                return r.read()
        except (urllib.error.URLError, OSError):
            return None

    def create_bucket(self, name: str) -> None:
        c = self.client()
        try:
            c.create_bucket(Bucket=name)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass

    def reset(self) -> None:
        """Drop all state (POST /moto-api/reset) and recreate the bucket."""
        req = urllib.request.Request(self.endpoint + "/moto-api/reset", method="POST", data=b"")
        urllib.request.urlopen(req, timeout=10).read()
        self.create_bucket(self.bucket)

    def stop(self) -> None:
        if self.proc:
            self.proc.stop(timeout_s=5)
