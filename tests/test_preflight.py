"""sinkcheck preflight against moto's S3 server on 127.0.0.1 (port 0): the behaviours the
verdicts rely on, a table, exit 0/1/4, and the results embedded in a report."""
from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Iterator

import pytest
from moto.server import ThreadedMotoServer

from adapters.s3 import preflight as s3_preflight
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def test_every_check_passes_on_moto(s3: str) -> None:
    checks = s3_preflight.preflight(s3)
    assert [c.check for c in checks] == [
        "multipart upload invisible until complete", "If-None-Match: * on PutObject",
        "If-None-Match: * on CompleteMultipartUpload", "read-after-write listing", "abort removes the upload"]
    assert all(c.status == "pass" for c in checks), s3_preflight.table(checks)


def test_cli_prints_a_table_writes_json_and_the_report_embeds_it(s3: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pf = tmp_path / "preflight.json"
    assert main(["preflight", "--s3-endpoint", s3, "--out", str(pf)]) == Exit.OK
    out = capsys.readouterr().out
    assert "If-None-Match: * on CompleteMultipartUpload  PASS" in out and "PASS: 5/5" in out
    assert len(json.loads(pf.read_text())["checks"]) == 5
    assert main(["run", "--target", "model@10.6.3", "--scenario", "rotate-interval-table", "--examples", "0",
                 "--preflight", str(pf), "--out", str(tmp_path / "out"), "--failures-dir", str(tmp_path / "f")]) == Exit.OK
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'id="preflight"' in html and "S3 preflight 5/5" in html
    assert json.loads((tmp_path / "out" / "results.json").read_text())["preflight"][0]["status"] == "pass"


def test_existing_bucket(s3: str) -> None:
    import boto3

    boto3.client("s3", endpoint_url=s3, region_name="us-east-1", aws_access_key_id="sinkcheck",
                 aws_secret_access_key="sinkcheck").create_bucket(Bucket="mine")
    assert main(["preflight", "--s3-endpoint", s3, "--bucket", "mine"]) == Exit.OK
    assert main(["preflight", "--s3-endpoint", s3, "--bucket", "does-not-exist"]) == Exit.USAGE


def test_a_failing_behaviour_is_1(s3: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def overwrites(s3c, bucket, prefix):  # noqa: ANN001 - a server that ignores If-None-Match
        return s3_preflight.PreflightCheck("If-None-Match: * on PutObject", "fail", "the server overwrote an existing key", "R8")

    monkeypatch.setattr(s3_preflight, "CHECKS", [s3_preflight.check_mpu_invisible, overwrites])
    assert main(["preflight", "--s3-endpoint", s3]) == Exit.FAILED
    assert "FAIL: 1/2" in capsys.readouterr().out


def test_unreachable_server_is_4(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert main(["preflight", "--s3-endpoint", f"http://127.0.0.1:{port}"]) == Exit.USAGE
    assert "Start the S3 server" in capsys.readouterr().err
    assert main(["preflight", "--s3-endpoint", "127.0.0.1:9"]) == Exit.USAGE
