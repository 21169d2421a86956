"""The conformance suite as a user runs it (`pytest --pyargs conformance.suite --target=…`),
against the embedded default. (Over a real broker, tests/test_pysink.py runs scenarios with
faults through the same runner and checkers.)"""
from __future__ import annotations

import os
import subprocess
import sys


def _suite(target: str, tmp_path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true", "SINKCHECK_HYPOTHESIS_PROFILE": "ci"}
    return subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", f"--target={target}",
                           "-q", "-p", "no:cacheprovider", "-rs", f"--sinkcheck-out={tmp_path}", *extra],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1500)


def test_suite_on_the_embedded_default(tmp_path):
    r = _suite("pysink", tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout.splitlines()[-1]
