"""The conformance suite: named scenarios property by property, and generated scenarios with
faults, each run whole against `--target` and checked against the model and the claims."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.catalog.named import SUITE
from conformance.pytest_plugin import PROPERTY_MARKERS, claim_failure, failure_block
from conformance.generators.configs import formats_for
from conformance.generators.strategies import scenarios
from conformance.judging.verdicts import failure_signatures

_RESULTS: dict[tuple[str, str], object] = {}
SCENARIOS = SUITE  # the public write-ups, then the scenarios aimed at bugs real sinks have had


def _record(result) -> None:
    """result.json beside the run's scenario.json: its status, each fault and whether it fired,
    each verdict (what a CI job or a test reads after the suite ran)."""
    doc = {"scenario": result.scenario.name, "target": result.target, "status": result.status,
           "claim": result.claim.name,
           "faults": [{"kind": f.kind, "fired": f.fired, "detail": f.detail} for f in result.observation.faults],
           "verdicts": [v.to_json() for v in result.all_verdicts()]}
    (result.run_dir / "result.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")


def _run(name, scenario, target, out: Path, stack=None, plugin_path=None):
    from conformance.playing.session import execute

    key = (target, name)
    if key not in _RESULTS:
        run_dir = out / re.sub(r"[^\w.-]", "_", f"{target}-{name}")
        dataclasses.replace(scenario, played_on={"target": target}).save(run_dir / "scenario.json")  # replay plays it there
        _RESULTS[key] = execute(scenario, target, run_dir, plugin_path, stack)
        _record(_RESULTS[key])
    return _RESULTS[key]


def _scenario(name, connector, target):
    """The named scenario, under the user's connector config if one is given (as `sinkcheck
    run` plays it: records re-expressed for its converters, on its topics, with its fields), or
    conformance.judging.verdicts.NotApplicable where that config leaves nothing of its point."""
    from conformance.playing.session import planned

    return planned(SCENARIOS[name](), target, connector=connector, version=None, seed=None)


_NOT_APPLICABLE: set[tuple[str, str]] = set()


@pytest.mark.sinkcheck
@pytest.mark.parametrize("prop", [pytest.param(m.replace("_", "-"), marks=getattr(pytest.mark, m)) for m in PROPERTY_MARKERS])
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_named_scenario(name, prop, sinkcheck_target, sinkcheck_connector, sinkcheck_profile, sinkcheck_out,
                        sinkcheck_stack, sinkcheck_plugin_path, sinkcheck_outcomes, sinkcheck_accept_known_bugs):
    from conformance.judging.verdicts import NotApplicable

    scenario = _scenario(name, sinkcheck_connector, sinkcheck_target)
    if isinstance(scenario, NotApplicable):  # not run: as `sinkcheck run` names it
        if (sinkcheck_target, name) not in _NOT_APPLICABLE:
            _NOT_APPLICABLE.add((sinkcheck_target, name))
            sinkcheck_outcomes.not_applicable.append(scenario)
        pytest.skip(f"not applicable: {scenario.reason}")
    first = (sinkcheck_target, name) not in _RESULTS
    result = _run(name, scenario, sinkcheck_target, sinkcheck_out, sinkcheck_stack, sinkcheck_plugin_path)
    if first:
        sinkcheck_outcomes.results.append(result)
    if result.untested:
        pytest.skip(f"the run tested nothing: {result.untested}")
    verdict = next(v for v in result.verdicts if v.property == prop)
    if not verdict.claimed:
        pytest.skip(f"{prop} is not claimed by {sinkcheck_target} here ({result.claim.name}): {verdict.status} — {verdict.message}")
    if verdict.status == "unknown":
        pytest.skip(f"unknown: {verdict.message}")
    if verdict.status == "fail" and (accepted := sinkcheck_outcomes.accepted_as(result, sinkcheck_accept_known_bugs)):
        from conformance.catalog.known_bugs import accepted_line

        pytest.xfail(f"{accepted_line(accepted)}: {accepted['witness']}")
    assert verdict.status == "pass", failure_block(result)


def _generated_settings():
    import os

    ci = bool(os.environ.get("CI")) or os.environ.get("SINKCHECK_HYPOTHESIS_PROFILE") == "ci"
    # SINKCHECK_GENERATED_EXAMPLES sets how many (a slow target's suite in CI takes fewer)
    n = int(os.environ.get("SINKCHECK_GENERATED_EXAMPLES") or (6 if ci else 40))
    return settings(max_examples=n, deadline=None, derandomize=ci,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])


@pytest.mark.sinkcheck
@pytest.mark.no_loss
@pytest.mark.no_duplicates
@pytest.mark.commit_safety
@_generated_settings()
@given(data=st.data())
def test_generated_scenarios(data, sinkcheck_target, sinkcheck_connector, sinkcheck_out, sinkcheck_stack,
                             sinkcheck_plugin_path, sinkcheck_outcomes, sinkcheck_accept_known_bugs):
    from conformance.playing.session import execute
    from conformance.generators.configs import value_kinds_for
    from conformance.inputs.targets import target_kind

    # configs across the target's matrix (or the user's config), with records that fit them
    kind = target_kind(sinkcheck_target)
    scenario = data.draw(scenarios(max_records=30, formats=formats_for(kind), connector=sinkcheck_connector,
                                   kinds=value_kinds_for(kind)), label="scenario")
    if sinkcheck_connector is not None:
        from conformance.playing.session import prepare

        scenario = prepare(scenario, connector=sinkcheck_connector, version=None, seed=None)
    n = len(list(sinkcheck_out.glob("generated-*")))
    run_dir = sinkcheck_out / f"generated-{n:04d}"
    dataclasses.replace(scenario, played_on={"target": sinkcheck_target}).save(run_dir / "scenario.json")
    result = execute(scenario, sinkcheck_target, run_dir, sinkcheck_plugin_path, sinkcheck_stack)
    _record(result)
    sinkcheck_outcomes.results.append(result)
    signatures = failure_signatures(result.all_verdicts())
    if signatures and sinkcheck_outcomes.accepted_as(result, sinkcheck_accept_known_bugs):
        return  # a known bug of the release that ran, accepted: no failure to shrink (the session counts it)
    if signatures:
        failures = Path(".sinkcheck/failures")
        failures.mkdir(parents=True, exist_ok=True)
        scenario.save(failures / f"{sinkcheck_target.replace(':', '_')}-{abs(hash(scenario.dumps())) % 10**8}.json")
        raise claim_failure(signatures[0])(failure_block(result) + "\n" + scenario.steps())
