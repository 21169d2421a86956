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


def _only(names: list[str]) -> str:
    """A -k expression for exactly these named scenarios. -k matches a substring of the test's
    id, test_named_scenario[<scenario>-<property>]: '[name-' keeps worker-joins-then-leaves from
    taking cooperative-worker-joins-then-leaves with it."""
    return " or ".join(f"[{n}-" for n in names)


def test_suite_on_the_embedded_default(tmp_path):
    """The main job's suite (./dev main runs it whole): every named scenario but the three
    multipart stories, 270–360 MB each, which run over a real broker in tests/test_pysink.py
    instead. Two generated ones take the plugin's Hypothesis path; that ./dev main's generated
    scenarios pass on this sink is test_simulation.test_same_seed_same_verdicts's (thirty of
    them, three times, exit 0)."""
    from conformance.catalog.named import SUITE

    r = _suite("pysink", tmp_path, "-k", "not multipart", examples=2)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout.splitlines()[-1]
    runs = _results(tmp_path)
    assert {x["scenario"] for x in runs} == {n for n in SUITE if "multipart" not in n} | {"generated"}
    assert all(x["status"] != "fail" for x in runs), [x for x in runs if x["status"] == "fail"]


@pytest.mark.kafka
def test_suite_over_a_real_broker_with_faults_that_fire(tmp_path):
    """The Python sink as a member of a consumer group on a real broker: the named scenarios
    whose point is the broker (conformance.catalog.broker: a crash, a zombie, members moving,
    the wall clock, S3 over HTTP, one scenario a mechanism) and a generated one. Every named
    scenario plays on the embedded default above; over a broker, tests/test_pysink.py plays a
    crash between requests beside a 503 (crash-mid-stream's and retriable-503-on-upload's
    mechanisms), a rebalance and a config update, and the three multipart stories."""
    from conformance.catalog.broker import BROKER_POINTS, broker_scenarios

    names = broker_scenarios()
    assert set(names) == set(BROKER_POINTS), set(BROKER_POINTS) - set(names)  # each one a suite scenario
    r = _suite("pysink:broker", tmp_path, "-k", f"{_only(names)} or test_generated_scenarios", examples=1)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    runs = _results(tmp_path)
    assert all(x["target"] == "pysink:broker" for x in runs)
    assert sorted(x["scenario"] for x in runs) == sorted([*names, "generated"])
    assert all(x["status"] != "fail" for x in runs), [x for x in runs if x["status"] == "fail"]
    fired = Counter(f["kind"] for x in runs for f in x["faults"] if f["fired"])
    # a crash, S3's hangs, 412, reset and stall, a zombie, a worker joining and leaving: each fires
    assert (fired["crash"] >= 1 and fired["s3"] >= 5 and fired["pause"] >= 1 and fired["resume"] >= 1
            and fired["add-worker"] >= 1 and fired["remove-worker"] >= 1), fired
    never = [(x["scenario"], f["detail"]) for x in runs if x["scenario"] != "generated" for f in x["faults"] if not f["fired"]]
    assert not never, never
    # the stack's Schema Registry starts with the first run that reads one, and only then
    reads = [p.parent.name for p in tmp_path.glob("*/scenario.json") if "schema.registry.url" in p.read_text()]
    assert (tmp_path / "stacks" / "pysink_broker" / "registry").exists() == bool(reads), reads
