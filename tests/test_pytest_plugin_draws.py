"""The pytest plugin's generated scenarios are the ones `sinkcheck run` draws for the same profile,
seed and count: the same batches, Hypothesis seeds and strategy, drawn apart from the literals
of the modules the process loaded (seed_only_draws), each played once. A failure the suite finds
is then one `run` finds, and shrinks, with the command its header prints."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

from conformance.inputs.scenario import Scenario
from conformance.playing.generated import generated_scenarios

ROOT = Path(__file__).resolve().parent.parent


def _played(tmp_path: Path, *options: str, examples: int, env: dict[str, str]) -> tuple[list[str], str]:
    """The generated scenarios the suite played on the Python sink, in order, and its output."""
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "conformance.suite",
                        "--target=pysink", "-k", "test_generated_scenarios", f"--sinkcheck-out={tmp_path / 'out'}",
                        *options],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300,
                       env={**os.environ, **env, "PYTHONPATH": str(ROOT), "SINKCHECK_GENERATED_EXAMPLES": str(examples)})
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    return [_what_is_played(Scenario.load(f)) for f in sorted((tmp_path / "out").glob("generated-*/scenario.json"))], out


def _what_is_played(sc: Scenario) -> str:
    return dataclasses.replace(sc, name="generated", seed=None, played_on=None, notes="").dumps()


def test_the_suite_plays_the_scenarios_sinkcheck_run_draws_for_its_seed(tmp_path):
    """Five batches under a seed given: a batch's plainest scenario repeats and is played once,
    and from fifty the (converter, schema.compatibility) pairs no stream evolved under get a
    top-up batch each (seed 2 when written: 45 distinct draws and 4 top-ups)."""
    played, out = _played(tmp_path, "--sinkcheck-profile=thorough", "--sinkcheck-seed=2", examples=50, env={"CI": ""})
    drawn = [_what_is_played(sc) for sc in generated_scenarios(50, 2, False, 40, kinds=("pysink",))]
    assert len(drawn) >= 40 and played == drawn
    assert ("sinkcheck: generated scenarios: seed 2, profile thorough, 50 drawn (those of `sinkcheck run "
            "--target pysink --profile thorough --seed 2 --examples 50 --no-named`)") in out


def test_under_ci_the_suite_plays_runs_fixed_draws(tmp_path):
    """$CI: the ci profile's fixed seed, as `sinkcheck run --profile ci` draws without one."""
    played, out = _played(tmp_path, examples=10, env={"CI": "true"})
    drawn = [_what_is_played(sc) for sc in generated_scenarios(10, None, True, 30, kinds=("pysink",))]
    assert played == drawn
    assert "seed 0, profile ci, 10 drawn (those of `sinkcheck run --target pysink --profile ci --examples 10" in out
