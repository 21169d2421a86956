"""The conformance suite: named scenarios property by property, and generated scenarios with
faults, each run whole against `--target` and checked against the model and the claims."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from conformance.catalog.named import SUITE
from conformance.pytest_plugin import PROPERTY_MARKERS, claim_failure, failure_block
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test of generated scenarios per batch `sinkcheck run` draws (sinkcheck_generation)."""
    if "batch" in metafunc.fixturenames:
        from conformance.pytest_plugin import GENERATION

        batches = metafunc.config.stash[GENERATION].batches()
        metafunc.parametrize("batch", range(len(batches)), ids=[f"batch-{i}" for i in range(len(batches))])


# by target: the identities of the generated scenarios played, and the scenarios themselves
# (which streams evolved): a batch starts with the plainest scenario, played once, as `run` does
_SEEN: dict[str, set[str]] = {}
_PLAYED: dict[str, list] = {}


@pytest.mark.sinkcheck
@pytest.mark.no_loss
@pytest.mark.no_duplicates
@pytest.mark.commit_safety
def test_generated_scenarios(batch, sinkcheck_target, sinkcheck_connector, sinkcheck_generation, sinkcheck_out,
                             sinkcheck_stack, sinkcheck_plugin_path, sinkcheck_outcomes, sinkcheck_accept_known_bugs):
    """One batch of the generated scenarios `sinkcheck run` draws for the session's seed and
    profile (conformance.playing.generated: the same Hypothesis seeds and strategy, drawn apart
    from the literals of the modules loaded so far), each played once; a failing one is shrunk
    by Hypothesis. The last batch tops them up as `run` does where they are many."""
    from conformance.playing.generated import batch_test, generation_strategy

    gen = sinkcheck_generation
    batch_seed, size = gen.batches()[batch]
    strategy = generation_strategy(sinkcheck_target, gen.max_records, sinkcheck_connector)

    def player(only=None):
        return _generated_player(sinkcheck_target, sinkcheck_connector, gen.seed, sinkcheck_out, sinkcheck_stack,
                                 sinkcheck_plugin_path, sinkcheck_outcomes, only, sinkcheck_accept_known_bugs)

    batch_test(strategy, batch_seed, size, player())()
    if batch == len(gen.batches()) - 1:
        _evolution_top_up(sinkcheck_target, sinkcheck_connector, gen, player)


def _generated_player(target, connector, seed, out: Path, stack, plugin_path, outcomes, only=None,
                      accept_known_bugs: bool = False):
    """The body of a batch's Hypothesis test: a drawn scenario as `run` plays it (under the
    user's config, at the session's seed), skipped where already played or where `only` (a top-up
    batch's choice) refuses it, until one fails: from then on every scenario Hypothesis tries
    while shrinking it is played."""
    from conformance.playing.generated import identity
    from conformance.playing.session import execute, prepare

    seen = _SEEN.setdefault(target, set())
    played = _PLAYED.setdefault(target, [])
    failing: list[bool] = []

    def play(drawn) -> None:
        scenario = prepare(drawn, connector=connector, version=None, seed=seed)
        if not failing:
            if identity(scenario) in seen or (only is not None and not only(scenario)):
                return
            seen.add(identity(scenario))
            played.append(scenario)
        run_dir = out / f"generated-{len(list(out.glob('generated-*'))):04d}"
        dataclasses.replace(scenario, played_on={"target": target}).save(run_dir / "scenario.json")
        result = execute(scenario, target, run_dir, plugin_path, stack)
        _record(result)
        outcomes.results.append(result)
        signatures = failure_signatures(result.all_verdicts())
        if signatures and outcomes.accepted_as(result, accept_known_bugs):
            return  # a known bug of the release that ran, accepted: no failure to shrink (the session counts it)
        if signatures:
            failing.append(True)
            failures = Path(".sinkcheck/failures")
            failures.mkdir(parents=True, exist_ok=True)
            scenario.save(failures / f"{target.replace(':', '_')}-{abs(hash(scenario.dumps())) % 10**8}.json")
            raise claim_failure(signatures[0])(failure_block(result) + "\n" + scenario.steps())
    return play


def _evolution_top_up(target, connector, gen, player) -> None:
    """`run`'s top-up batches (conformance.playing.generated.missing_evolution): for each
    (converter, schema.compatibility) no stream played evolved under, where the scenarios are
    many, the first stream of a batch drawn with it asked for that evolves under it."""
    from conformance.generators.configs import formats_for
    from conformance.generators.evolution import evolving_streams
    from conformance.inputs.targets import target_kind
    from conformance.playing.generated import GENERATION_BATCH, batch_test, generation_strategy, missing_evolution, top_up_seed

    if connector is not None or target.startswith("model"):
        return
    for i, pair in enumerate(missing_evolution(_PLAYED.get(target, []), formats_for(target_kind(target)), gen.examples)):
        found: list[bool] = []

        def first_evolving(sc) -> bool:
            if found or pair not in evolving_streams([sc]):
                return False
            found.append(True)
            return True

        strategy = generation_strategy(target, gen.max_records, None, evolving=pair)
        batch_test(strategy, top_up_seed(i, gen.seed, gen.derandomize), GENERATION_BATCH, player(first_evolving))()
