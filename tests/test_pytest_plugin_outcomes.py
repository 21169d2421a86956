"""The pytest plugin says what the command line says (issue 38): the warning of a property
nobody defines in `--connector-config`, a not-applicable named scenario as a skip with its
reason, and the command line's exit codes (2: a claimed property unknown; 5: nothing but
not-applicable scenarios, so nothing tested). The refusal (exit 4) is pinned in
tests/test_user_config.py. Each case is one pysink or model scenario: seconds."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "examples" / "user-configs"


def _pytest(tmp_path: Path, config: Path, target: str, select: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "--pyargs",
                           "conformance.suite", f"--target={target}", f"--connector-config={config}", "-k", select,
                           f"--sinkcheck-out={tmp_path / 'out'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=180,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_not_applicable_scenario_is_a_skip_with_its_reason_and_nothing_else_is_exit_5(tmp_path):
    p = _pytest(tmp_path, CONFIGS / "default-topics-orders.json", "pysink",
                "dst-hourly-berlin and no_loss")
    out = p.stdout + p.stderr
    assert p.returncode == 5, out[-3000:]
    assert "not applicable: partitioner.class=DefaultPartitioner: no time-based partitioner" in out
    assert "sinkcheck: exit 5: every sinkcheck scenario was not applicable" in out


def test_an_unknown_property_is_warned_of_and_a_pass_is_exit_0(tmp_path):
    cfg = json.loads((CONFIGS / "default-topics-orders.json").read_text())
    cfg["config"]["flush.szie"] = "3"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cfg))
    p = _pytest(tmp_path, path, "pysink", "crash-mid-stream and no_loss")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert "The configuration 'flush.szie' was supplied but isn't a known config." in out
    assert "1 passed" in out


def test_a_claimed_property_left_unknown_is_exit_2_as_on_the_command_line(tmp_path):
    """The reference model applies no fault: crash-mid-stream's crash never fires there."""
    p = _pytest(tmp_path, CONFIGS / "default-topics-orders.json", "model@12.1.9", "crash-mid-stream and no_loss")
    out = p.stdout + p.stderr
    assert p.returncode == 2, out[-3000:]
    assert "unknown: " in out and "sinkcheck: exit 2: a claimed property is unknown" in out
