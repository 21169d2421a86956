"""bench/real_rate.py's comparison of two recorded runs (issue 36: the same verdicts before and
after a change that makes the real runs faster). Pure functions over results.json documents."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "real_rate", Path(__file__).resolve().parent.parent / "bench" / "real_rate.py")
real_rate = importlib.util.module_from_spec(_spec)
sys.modules["real_rate"] = real_rate  # its dataclasses look their module up
_spec.loader.exec_module(real_rate)


def _run(name: str, origin: str = "named", **statuses: str) -> dict:
    verdicts = [{"property": p.replace("_", "-"), "status": s, "claimed": True} for p, s in statuses.items()]
    verdicts.append({"property": "file-count", "status": "fail", "claimed": False})  # unclaimed: not compared
    return {"scenario": name, "origin": origin, "verdicts": verdicts, "timings": {"faults": 1.0}}


def test_a_changed_claimed_verdict_is_named_and_generated_runs_are_not_compared():
    before = {"results": [_run("crash-mid-stream", no_loss="pass", liveness="pass"),
                          _run("zombie-task", no_loss="pass"), _run("generated-003", "generated", no_loss="fail")]}
    after = {"results": [_run("crash-mid-stream", no_loss="pass", liveness="pass"),
                         _run("zombie-task", no_loss="fail"), _run("generated-003", "generated", no_loss="pass"),
                         _run("s3-429-on-part", no_loss="pass")]}
    assert real_rate.verdict_changes(before, after) == ["s3-429-on-part: played after only",
                                                       "zombie-task: no-loss pass -> fail"]
    text = real_rate.render_changes(before, after, "a -> b")
    assert text.startswith("verdicts, a -> b: 1 named scenarios the same, 2 not:")
    assert real_rate.verdict_changes(before, before) == []
