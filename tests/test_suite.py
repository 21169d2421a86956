"""The conformance suite as a user runs it (`pytest --pyargs conformance.suite --target=…`): on
the embedded default, and over a real KRaft broker with moto behind the S3 fault front."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest


def _suite(target: str, tmp_path, *extra: str, examples: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true", "SINKCHECK_HYPOTHESIS_PROFILE": "ci"}
    if examples is not None:
        env["SINKCHECK_GENERATED_EXAMPLES"] = str(examples)
    return subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance.suite", f"--target={target}",
                           "-q", "-p", "no:cacheprovider", "-rs", f"--sinkcheck-out={tmp_path}", *extra],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=1500)


def _results(out) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*/result.json"))]


def test_suite_on_the_embedded_default(tmp_path):
    """The main job's suite (./dev main runs it whole); the three multipart stories, 270–360 MB
    each, run over a real broker in tests/test_pysink.py instead."""
    r = _suite("pysink", tmp_path, "-k", "not multipart")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout.splitlines()[-1]
    runs = _results(tmp_path)
    assert {x["scenario"] for x in runs} >= {"rotate-schedule-table", "zombie-task", "crash-during-complete", "generated"}
    assert all(x["status"] != "fail" for x in runs), [x for x in runs if x["status"] == "fail"]


@pytest.mark.kafka
def test_suite_over_a_real_broker_with_faults_that_fire(tmp_path):
    """The Python sink as a member of a consumer group on a real broker. The three multipart
    stories (270–360 MB each) run over the broker in tests/test_pysink.py instead."""
    from conformance.catalog.named import KNOWN_BUG_SCENARIOS, SPACE_SCENARIOS

    # over a broker, the scenarios about processes, S3 faults and the wall clock, and two
    # generated ones; those about the config and record space and the sink's record-time rules
    # (no process at stake), and those showing a known bug of Confluent's connector, run on the
    # embedded default and on Confluent's connector
    record_time = ("rotate-interval-table", "late-records-at-hour-edges", "idle-partition-never-flushes")
    r = _suite("pysink:broker", tmp_path, "-k", " and ".join(["not multipart", *(f"not {n}" for n in SPACE_SCENARIOS),
                                                               *(f"not {n}" for n in record_time),
                                                               *(f"not {n}" for n in KNOWN_BUG_SCENARIOS)]), examples=2)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    runs = _results(tmp_path)
    assert all(x["target"] == "pysink:broker" for x in runs) and len(runs) >= 10
    assert all(x["status"] != "fail" for x in runs), [x for x in runs if x["status"] == "fail"]
    fired = Counter(f["kind"] for x in runs for f in x["faults"] if f["fired"])
    # the bug-aimed scenarios stage a crash, S3 errors and hangs, and a zombie: each must fire
    assert fired["crash"] >= 2 and fired["s3"] >= 3 and fired["pause"] >= 1 and fired["resume"] >= 1, fired
    never = [(x["scenario"], f["detail"]) for x in runs if x["scenario"] != "generated" for f in x["faults"] if not f["fired"]]
    assert not never, never
