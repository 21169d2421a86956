"""The conformance suite as a user runs it (`pytest --pyargs conformance.suite --target=…`),
against the embedded default and against the Python sink over a real broker."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _suite(target: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true", "SINKCHECK_HYPOTHESIS_PROFILE": "ci"}
    return subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", f"--target={target}",
                           "-q", "-p", "no:cacheprovider", "-rs", f"--sinkcheck-out={tmp_path}", *extra],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1500)


def test_suite_on_the_embedded_default(tmp_path):
    r = _suite("pysink", tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout.splitlines()[-1]


@pytest.mark.kafka
def test_suite_on_the_python_sink_over_a_real_broker(tmp_path):
    # the 1 MB-record multipart stories stay on the in-process log (Kafka's default
    # message.max.bytes is 1 MiB)
    r = _suite("pysink:broker", tmp_path, "-k", "not multipart")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
