"""The CI recipe of issue 38 cannot rot: examples/ci/gate.sh is what the GitHub Actions workflow
and the GitLab CI job run, and this test runs it on the repository with the variables the
workflow sets, the targets swapped for the Python sink (baseline pysink; candidate pysink, then
a faulty variant), the plugin given as an archive, and few scenarios: the job passes without a
regression and fails on one, and junit.xml and report.html are where the recipes publish them
from. Only the venv set-up is skipped (SINKCHECK_PYTHON: this interpreter has sinkcheck's
dependencies; a pip install needs the network)."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import yaml  # PyYAML comes with moto[server], a dependency

ROOT = Path(__file__).resolve().parent.parent
CI = ROOT / "examples" / "ci"
CONFIG = ROOT / "examples" / "user-configs" / "default-topics-orders.json"


def _github() -> tuple[dict, list[dict]]:
    doc = yaml.safe_load((CI / "github-actions.yml").read_text())
    job = doc["jobs"]["gate"]
    return job["env"], job["steps"]


def _gitlab() -> dict:
    return yaml.safe_load((CI / "gitlab-ci.yml").read_text())["sinkcheck-gate"]


def test_both_recipes_run_the_script_cache_the_setup_and_publish_junit_and_the_report():
    env, steps = _github()
    assert [s["run"] for s in steps if "run" in s] == ["sinkcheck/examples/ci/gate.sh"]
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache"))
    assert "~/.cache/sinkcheck" in cache["with"]["path"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["if"] == "always()"
    assert {"gate-out/junit.xml", "gate-out/report.html"} <= set(upload["with"]["path"].split())
    lab = _gitlab()
    assert lab["script"] == ["sinkcheck/examples/ci/gate.sh"]
    assert lab["cache"]["paths"] == [".cache/"] and lab["variables"]["SINKCHECK_VENV"].startswith("$CI_PROJECT_DIR/.cache/")
    assert lab["artifacts"]["when"] == "always" and lab["artifacts"]["reports"]["junit"] == "gate-out/junit.xml"
    assert "gate-out/report.html" in lab["artifacts"]["paths"]
    for variables in (env, lab["variables"]):
        for name in ("SINKCHECK_BASELINE", "SINKCHECK_CANDIDATE", "SINKCHECK_CONNECTOR_CONFIG", "SINKCHECK_PLUGIN"):
            assert variables[name]
        assert variables["SINKCHECK_OUT"] == "gate-out"


def _gate(tmp_path: Path, candidate: str) -> subprocess.CompletedProcess[str]:
    workflow_env, _ = _github()
    plugin_dir = tmp_path / "src" / "confluentinc-kafka-connect-s3-12.1.9" / "lib"
    plugin_dir.mkdir(parents=True)
    archive = tmp_path / "plugin.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(plugin_dir, "confluentinc-kafka-connect-s3-12.1.9/lib/")
    env = {**os.environ, **{k: str(v) for k, v in workflow_env.items()},
           "SINKCHECK_BASELINE": "pysink", "SINKCHECK_CANDIDATE": candidate,
           "SINKCHECK_CONNECTOR_CONFIG": str(CONFIG), "SINKCHECK_PLUGIN": str(archive),
           "SINKCHECK_GATE_ARGS": "--scenario crash-mid-stream --scenario dst-hourly-berlin --examples 2",
           "SINKCHECK_PYTHON": sys.executable}
    return subprocess.run([str(CI / "gate.sh")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_the_gate_script_passes_pysink_against_itself_under_the_users_config(tmp_path):
    p = _gate(tmp_path, "pysink")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert "PASS: gate pysink → pysink: 3 scenarios compared, 0 regressions" in out
    assert "1 not applicable" in out and "gate.sh: no regression" in out
    reports = tmp_path / "gate-out"
    assert (reports / "report.html").is_file() and (reports / "plugin" / "confluentinc-kafka-connect-s3-12.1.9").is_dir()
    skipped = [s.get("message") for s in ET.parse(reports / "junit.xml").iter("skipped")]
    assert any(m.startswith("not applicable: partitioner.class=DefaultPartitioner") for m in skipped)


def test_the_gate_script_fails_the_job_on_a_regression(tmp_path):
    p = _gate(tmp_path, "pysink:last-record-missing")
    out = p.stdout + p.stderr
    assert p.returncode == 1, out[-3000:]
    assert "REGRESSION crash-mid-stream: no-loss [P-NOLOSS] pass → fail" in out
    assert "gate.sh: REGRESSION" in out
    assert (tmp_path / "gate-out" / "junit.xml").is_file()
