"""The embedded default's simulation: the same observation as the sink in real time over a real
S3 server and the fault front, and the same verdicts for the same seed every time."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.catalog.named import SUITE
from conformance.playing.runner import run_scenario
from sinkcheck.cli import main

# deterministic outcomes (no wall-clock rotation) across the fault kinds the in-process sink takes
DIFFERENTIAL = ["rotate-interval-table", "late-records-at-hour-edges", "crash-mid-stream", "crash-during-complete",
                "retriable-503-on-upload", "zombie-task", "task-restart-mid-stream", "naming-options-keys-headers",
                "bytearray-options", "struct-types-numeric", "error-inside-200-not-applied",
                "error-inside-200-applied", "dst-hourly-berlin"]


def _final(result) -> tuple[dict[str, bytes], dict[str, int], list[tuple[str, bool]]]:
    obs = result.observation
    return ({o.key: o.body for o in obs.final_bucket.objects}, obs.final_offsets,
            [(f.kind, f.fired) for f in obs.faults])


@pytest.mark.parametrize("name", DIFFERENTIAL)
def test_the_simulation_observes_what_real_time_does(name, tmp_path):
    """Objects (keys and bytes), committed offsets and the faults that fired, in simulation and
    in real time (moto over HTTP, the fault front, the sink's own threads and the wall clock)."""
    sim = run_scenario(SUITE[name](), "pysink", tmp_path / "sim")
    real = run_scenario(SUITE[name](), "pysink:realtime", tmp_path / "real")
    assert sim.target_info.s3_server.startswith("S3 in memory") and real.target_info.s3_server == "moto"
    s_objects, s_offsets, s_faults = _final(sim)
    r_objects, r_offsets, r_faults = _final(real)
    assert sorted(s_objects) == sorted(r_objects)
    assert s_objects == r_objects, [k for k in s_objects if s_objects[k] != r_objects.get(k)]
    assert s_offsets == r_offsets and s_faults == r_faults
    assert [(v.property, v.status) for v in sim.verdicts] == [(v.property, v.status) for v in real.verdicts]


def _verdicts(out: Path) -> dict[str, list[tuple[str, str]]]:
    doc = json.loads((out / "results.json").read_text())
    return {e["scenario"]: [(v["property"], v["status"]) for v in e["verdicts"]] for e in doc["results"]}


def test_same_seed_same_verdicts(tmp_path):
    """`sinkcheck run --target pysink --profile ci` three times (its named scenarios with faults
    and thirty generated ones): the same scenarios get the same verdicts every time."""
    named = [a for n in ("crash-mid-stream", "zombie-task", "crash-during-complete", "rotate-schedule-table",
                         "rebalance-mid-stream") for a in ("--scenario", n)]
    runs = []
    for i in range(3):
        out = tmp_path / f"run-{i}"
        assert main(["run", "--target", "pysink", "--profile", "ci", "--examples", "30", "--no-preflight",
                     *named, "--out", str(out), "--failures-dir", str(tmp_path / f"saved-{i}")]) == 0
        runs.append(_verdicts(out))
    assert len(runs[0]) >= 30
    assert runs[0] == runs[1] == runs[2]
