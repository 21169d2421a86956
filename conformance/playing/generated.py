"""Generated scenarios: drawn by Hypothesis in fixed batches (the same list for a seed, so a
gate plays the same input on both sides), run through a session, shrunk on a claimed failure and
replayed before the shrunk one is shown as the reproducer."""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

from conformance.playing.applicable import inapplicable
from conformance.playing.session import Session, held_to_release, prepare, redacted_scenario, selected, slug


def generated_scenarios(n: int, seed: int | None, derandomize: bool, max_records: int, with_faults: bool = True,
                        kinds: tuple[str, ...] = (), connector: dict[str, str] | None = None) -> list[Any]:
    """A deterministic list of generated scenarios for a seed (used by the gate: same input
    on both sides), drawn in the batches `sinkcheck run` draws them in, with the formats and
    value kinds every one of the target `kinds` is given by `run` (a table sink: values that
    make rows). With the user's `connector`, drawn for it as `run --connector-config` draws
    them, and given as it plays them: `prepare`d (fitted to the config, adapted), a draw that
    prepares into one already given skipped, named in that order (the kill matrix under a
    user's config plays these)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    from conformance.generators.configs import SINK_FORMATS, formats_for, value_kinds_for
    from conformance.generators.strategies import scenarios, seed_only_draws

    # what every side can take: its formats if they share them, the values each side's kind allows
    shared = {formats_for(k) for k in kinds}
    formats = shared.pop() if len(shared) == 1 else SINK_FORMATS
    drawn = [value_kinds_for(k) for k in kinds if value_kinds_for(k) is not None]
    values = tuple(v for v in drawn[0] if all(v in d for d in drawn)) if drawn else None
    out: list[Any] = []
    seen: set[str] = set()

    def collect(sc: Any) -> None:
        if connector is not None:  # as run_generated's body takes a draw: prepared, then told apart
            sc = prepare(sc, connector=connector, version=None, seed=seed)
        drawn = identity(sc) if connector is not None else sc.dumps()
        if len(out) < n and drawn not in seen:
            seen.add(drawn)
            out.append(sc)

    with seed_only_draws():  # what `run` draws, whatever this process imported before
        for batch_seed, size in generation_batches(n, seed, derandomize):
            hseed(batch_seed)(settings(database=None, max_examples=size, derandomize=False, deadline=None,
                                       phases=[Phase.generate], suppress_health_check=list(HealthCheck),
                                       verbosity=Verbosity.quiet)(given(scenarios(max_records=max_records, with_faults=with_faults,
                                                                                 formats=formats, kinds=values,
                                                                                 connector=connector))(collect)))()
        if connector is None:  # run tops up only the streams of its own configs (run_generated)
            out += evolution_top_up(out, n, formats, values, max_records, with_faults, seed, derandomize)
    return [dataclasses.replace(sc, name=f"generated-{i:03d}", seed=seed) for i, sc in enumerate(out)]


def _first_evolving(found: list[Any], pair: tuple[str, str]) -> Any:
    """A test body for @given that keeps the first scenario evolving under `pair` in `found`."""
    from conformance.generators.evolution import evolving_streams

    def keep(sc: Any) -> None:
        if not found and pair in evolving_streams([sc]):
            found.append(sc)
    return keep


# profiles drawing this many scenarios or more are topped up (the simulated ones: ci 100); a real
# target's ten would get a dozen more runs, longer than the ten themselves
EVOLUTION_TOP_UP_FROM = 50
# the Hypothesis seeds of the top-up batches (missing_evolution), apart from the generation batches
TOP_UP_SEED = 900_000


def missing_evolution(drawn: list[Any], formats: tuple[str, ...], n: int) -> list[tuple[str, str]]:
    """The (value converter, schema.compatibility) pairs no stream of `drawn` evolves under,
    among the converters `drawn` gives values through, where the formats take
    schema.compatibility (Confluent's connector and the Python sink). A profile's hundred
    independent draws miss a pair of twelve now and then, and a pair never played is a
    projection rule never tested (R14): a top-up batch asks for each (the evolving argument
    of conformance.generators.strategies.scenarios). None for a run of fewer than
    EVOLUTION_TOP_UP_FROM generated scenarios (`n`)."""
    from conformance.generators.configs import CONFLUENT_FORMATS, COMPATIBILITY_MODES, EVOLVING_CONVERTERS
    from conformance.generators.evolution import evolving_streams
    from conformance.inputs.scenario import converter_kind

    if formats != CONFLUENT_FORMATS or n < EVOLUTION_TOP_UP_FROM:
        return []
    seen = set(evolving_streams(drawn))
    converters = {converter_kind(sc.connector) for sc in drawn} & set(EVOLVING_CONVERTERS)
    return [(c, m) for c in sorted(converters) for m in COMPATIBILITY_MODES if (c, m) not in seen]


def evolution_top_up(drawn: list[Any], n: int, formats: tuple[str, ...], values: tuple[str, ...] | None, max_records: int,
                     with_faults: bool, seed: int | None, derandomize: bool) -> list[Any]:
    """For each pair missing_evolution names, the first stream of a batch drawn with the pair
    asked for that evolves under it (as run_generated's top-up batches play it)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    from conformance.generators.strategies import scenarios

    more: list[Any] = []
    for i, pair in enumerate(missing_evolution(drawn, formats, n)):
        found: list[Any] = []
        keep = _first_evolving(found, pair)

        hseed(top_up_seed(i, seed, derandomize))(settings(database=None, max_examples=GENERATION_BATCH, derandomize=False,
                                               deadline=None, phases=[Phase.generate],
                                               suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)(
            given(scenarios(max_records=max_records, with_faults=with_faults, formats=formats, kinds=values,
                            evolving=pair))(keep)))()
        more += found
    return more


# generated scenarios come in batches of this many, each from a seed of its own: Hypothesis
# draws each next example near the ones before it, so one long run repeats configs (80
# examples held 23 configs; eight batches of ten, 70)
GENERATION_BATCH = 10


def seed_base(seed: int | None, derandomize: bool) -> int:
    """The first Hypothesis seed of a run's batches: fixed under a derandomized profile, else
    from the run's seed (printed in every summary)."""
    return 0 if derandomize or seed is None else seed * 10_007


def top_up_seed(i: int, seed: int | None, derandomize: bool) -> int:
    """The Hypothesis seed of the i-th evolution top-up batch, apart from the generation batches'."""
    return TOP_UP_SEED + i + seed_base(seed, derandomize)


def generation_batches(n: int, seed: int | None, derandomize: bool) -> list[tuple[int, int]]:
    """(Hypothesis seed, examples) of each batch: fixed seeds under a derandomized profile,
    else seeds from the run's seed (printed in every summary)."""
    base = seed_base(seed, derandomize)
    return [(base + b, min(GENERATION_BATCH, n - b * GENERATION_BATCH))
            for b in range((n + GENERATION_BATCH - 1) // GENERATION_BATCH)]


def identity(scenario: Any) -> str:
    """What tells two drawn scenarios apart: their JSON (compact: the C encoder's, not the
    indented form a scenario file is written in)."""
    import json

    return json.dumps(scenario.to_json(), separators=(",", ":"))


def generation_strategy(spec: str, max_records: int, connector: dict[str, str] | None, with_faults: bool = True,
                        evolving: tuple[str, str] | None = None) -> Any:
    """What a target's generated scenarios are drawn from (`run` and the pytest plugin): configs
    in its formats with values it takes, or the user's `connector`, and faults except on the
    model (which applies none)."""
    from conformance.generators.configs import formats_for, value_kinds_for
    from conformance.generators.strategies import scenarios
    from conformance.inputs.targets import target_kind

    kind = target_kind(spec)
    return scenarios(max_records=max_records, with_faults=with_faults and not spec.startswith("model"),
                     formats=formats_for(kind), connector=connector, kinds=value_kinds_for(kind), evolving=evolving)


def batch_test(strategy: Any, batch_seed: int, size: int, body: Any) -> Any:
    """One batch as a Hypothesis test: `size` examples of `strategy` from `batch_seed`, each
    handed to `body`, and a failing one (an exception from `body`) shrunk. The runs import the
    model and the sink's modules as they go: without seed_only_draws the batches after the first
    run would draw from their literals, and the pytest plugin's from whatever pytest loaded."""
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import seed as hseed

    from conformance.generators.strategies import seed_only_draws

    return seed_only_draws()(hseed(batch_seed)(
        settings(database=None, max_examples=size, derandomize=False, deadline=None, report_multiple_bugs=False,
                 suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)(
            given(strategy)(body))))


def explained_by_known_bug(result: Any) -> dict[str, Any] | None:
    """The known bug of the release that ran which explains every claimed property a failed
    generated run failed (conformance.catalog.known_bugs.matching.acceptance), or None."""
    from conformance.catalog.known_bugs.matching import acceptance

    return acceptance(result)


class _ClaimedFailure(Exception):
    def __init__(self, result: Any) -> None:
        super().__init__(f"{result.scenario.name}: claimed property failed")
        self.result = result


def run_generated(sess: Session, spec: str, n: int, seed: int | None, derandomize: bool, max_records: int,
                  connector: dict[str, str] | None, version: str | None, with_faults: bool = True) -> None:
    """Generated scenarios through Hypothesis `@given`, so a failing one is shrunk; the
    budget bounds generation and shrinking alike. The search goes on after a failure: the batch
    that found it is drawn again (the scenarios already run are skipped), and a later scenario
    failing only in ways already found (property and anomaly) is reported as it is, not shrunk
    again, so one failure does not hide another's cause."""
    from hypothesis.errors import HypothesisException

    from conformance.generators.configs import formats_for
    from conformance.generators.evolution import evolving_streams
    from conformance.inputs.targets import target_kind
    from conformance.judging.verdicts import failure_signatures

    if n <= 0:
        return
    gen_dir = sess.out / "runs" / slug(spec)
    counts: dict[str, Any] = {"n": 0, "errored": False, "batch": 0, "batch_size": 0}
    # the failure being shrunk: the run that found it (its index in `reported`) and its signature
    hunt: dict[str, Any] = {"original": None, "signature": None, "other": 0}
    reported: list[Any] = []  # runs to record, in the order they ran (a found failure replaced by its reproducer)
    tried: list[Any] = []  # shrink attempts: not reported
    found: dict[tuple[str, str], str] = {}  # signatures of the failures already shrunk, and their reproducers' names
    best: list[Any] = []  # the latest (smallest) failing result seen while shrinking
    seen: set[str] = set()
    played: list[Any] = []  # the scenarios run (not shrink attempts): which pairs evolved
    want: dict[str, Any] = {"pair": None}  # a top-up batch's (converter, schema.compatibility)
    workers = sess.pool_for(spec)  # runs in worker processes (a simulated target), else None
    ahead: list[Any] | None = None  # runs started while a batch is drawn (drawn_ahead): (k, identity, PendingRun)
    taken_early: dict[int, tuple[str, Any]] = {}  # k -> (identity, result) of a run taken before its batch's next pass
    strategy = generation_strategy(spec, max_records, connector, with_faults)

    def body(sc: Any) -> None:
        if counts["errored"] or sess.over_budget():
            if sess.over_budget() and hunt["signature"] is None:
                sess.skipped_budget += 1
            return
        sc = prepare(sc, connector=connector, version=version, seed=seed)
        if not selected(sc, spec, sess.props) or inapplicable(sc, held_to_release(sc, spec)):
            return  # a stream the release stops before any object (a nested field name on 10.6.18) tests nothing
        shrinking = hunt["signature"] is not None
        drawn = identity(sc)
        if not shrinking:  # every batch starts with the plainest scenario, and a batch drawn again repeats: run each once
            if drawn in seen or counts["batch"] >= counts["batch_size"]:
                return  # a batch drawn again after a failure runs only the rest of its share
            if want["pair"] is not None:
                if want["pair"] not in evolving_streams([sc]):
                    return  # a top-up batch plays one stream: the first evolving under its pair
                counts["batch_size"] = 1
            seen.add(drawn)
            counts["batch"] += 1
            played.append(sc)
        k = counts["n"]
        counts["n"] += 1
        sc = dataclasses.replace(sc, name=f"generated-{k:03d}" + ("-shrink" if shrinking else ""))
        if ahead is not None and not shrinking:  # started in a worker; judged once the batch is drawn
            ahead.append((k, drawn, sess.submit(sc, spec, "generated", gen_dir / f"gen-{k:03d}", record=False)))
            return
        n_err = len(sess.errors)
        early = taken_early.pop(k, None)  # this run's result, taken before its batch was drawn again
        result = early[1] if early is not None and early[0] == drawn else sess.run_one(
            sc, spec, "generated", gen_dir / f"gen-{k:03d}", record=False)
        judge(result, n_err, shrinking)

    def judge(result: Any, n_err: int, shrinking: bool) -> None:
        """What body does with a run's result: keep it, or start (or go on with) a shrink."""
        if result is None:
            if len(sess.errors) > n_err:
                counts["errored"] = True  # no shrinking of internal errors
            return
        signatures = failure_signatures(result.all_verdicts())
        if not shrinking:
            reported.append(result)
            new = [s for s in signatures if s not in found]
            if new and (bug := explained_by_known_bug(result)) is not None:
                # its cause is in the catalogue, with a reproducer of its own: a shrink (a dozen
                # or more real runs one after another) would find only that again
                for s in new:
                    found[s] = result.scenario.name
                result.scenario = dataclasses.replace(result.scenario, notes=(
                    f"fails as known bug {bug['id']} ({bug['cite'] or 'no upstream issue'}) of {bug['version'] or 'this release'} "
                    f"does ({bug['witness']}): not shrunk"))
                return
            if not new:  # passed, or failed only in ways already found and shrunk: shown as it is
                if signatures:
                    result.scenario = dataclasses.replace(result.scenario, notes=(
                        "fails as " + ", ".join(sorted({f"{found[s]} ({' / '.join(s)})" for s in signatures}))
                        + " did: not shrunk again"))
                return
            hunt["original"], hunt["signature"] = len(reported) - 1, new[0]
        else:
            tried.append(result)
            if hunt["signature"] not in signatures:
                hunt["other"] += 1  # a smaller scenario failing otherwise is another failure: not this one
                return
        best[:] = [result]
        raise _ClaimedFailure(result)

    def settle(final: Any) -> None:
        """Replay the failure found, put its reproducer where the run that found it was, and
        start looking for the next one."""
        original = reported[hunt["original"]] if hunt["original"] is not None else final
        signature = hunt["signature"] or failure_signatures(final.all_verdicts())[0]
        chosen = confirmed_failure(sess, spec, original, final, signature, gen_dir)
        if chosen is not original:
            shrunk = dataclasses.replace(chosen.scenario, name=original.scenario.name + "-shrunk",
                                         notes=f"shrunk by Hypothesis from {len(original.scenario.records)} records and "
                                               f"{len(original.scenario.faults)} faults")
            chosen.scenario = shrunk
            dataclasses.replace(redacted_scenario(shrunk, sess.redactor), played_on={"target": spec}).save(
                chosen.run_dir / "scenario.json")
        if hunt["other"]:
            sess.notes.append(f"{spec}: while shrinking {original.scenario.name} ({' / '.join(signature)}), "
                              f"{hunt['other']} smaller scenarios failed otherwise; they were not taken as its reproducer")
        if hunt["original"] is None:
            reported.append(chosen)
        else:
            reported[hunt["original"]] = chosen
        found[signature] = chosen.scenario.name
        hunt.update(original=None, signature=None, other=0)
        best.clear()

    def drawn_ahead(test: Any) -> bool:
        """A batch's first pass with its runs in worker processes: drawn whole (Hypothesis draws
        the same scenarios whatever the runs give, as long as none fails), then each result
        judged in the order drawn. At the first run that starts a shrink the runs after it are
        forgotten, and it, unjudged, is kept for the pass that draws the batch again in this
        process: the shrink, and every run after it, then go as they would without workers,
        with the same numbers and names. True when that pass is needed."""
        nonlocal ahead
        ahead = []
        try:
            test()
        finally:
            started, ahead = ahead, None
        for i, (k, drawn, pending) in enumerate(started):
            n_err = len(sess.errors)
            result = pending.take()
            new = result is not None and any(
                s not in found for s in failure_signatures(result.all_verdicts())) and explained_by_known_bug(result) is None
            if new:
                taken_early[k] = (drawn, result)
                forget(started[i:], keep=pending)
                return True
            judge(result, n_err, False)
            if counts["errored"]:
                forget(started[i + 1:])
                return False
        return False

    def forget(runs: list[Any], keep: Any = None) -> None:
        """Runs drawn ahead that the pass without workers would not have made yet: undone."""
        for k, drawn, pending in runs:
            if pending is not keep:
                pending.discard()
            seen.discard(drawn)
        if runs:
            counts["n"] = runs[0][0]
            counts["batch"] -= len(runs)
            del played[len(played) - len(runs):]

    def play(strategy: Any, batch_seed: int, size: int) -> bool:
        """One batch of `size` scenarios drawn from `strategy`; False once the run must stop."""
        test = batch_test(strategy, batch_seed, size, body)
        # a failure ends Hypothesis's pass over the batch: draw it again for the rest of the
        # batch's scenarios, as many times as it finds a failure of a new kind
        counts.update(batch=0, batch_size=size)
        if workers is not None and not drawn_ahead(test):
            return not (counts["errored"] or sess.over_budget())
        for _ in range(1 + MAX_FAILURES_PER_BATCH):
            final = None
            try:
                test()
            except _ClaimedFailure as e:
                final = e.result
            except HypothesisException:
                final = best[0] if best else None  # e.g. Flaky: the budget ran out while re-checking the shrunk example
            except BaseException as e:  # a failure inside hypothesis carrying our failure in a group
                if isinstance(e, KeyboardInterrupt):
                    raise
                inner = getattr(e, "exceptions", None)
                caught = [x for x in inner or [] if isinstance(x, _ClaimedFailure)]
                if not caught and not best:
                    raise
                final = caught[0].result if caught else best[0]
            if final is None:
                break
            settle(final)
            if counts["errored"] or sess.over_budget():
                break
        return not (counts["errored"] or sess.over_budget())

    try:
        going = True
        for batch_seed, size in generation_batches(n, seed, derandomize):
            if not (going := play(strategy, batch_seed, size)):
                break
        if going and connector is None and not spec.startswith("model"):
            # the (converter, schema.compatibility) pairs no stream played evolved under: one
            # batch each with the pair asked for, its first stream that evolves under it played
            for i, pair in enumerate(missing_evolution(played, formats_for(target_kind(spec)), n)):
                want["pair"] = pair
                pinned = generation_strategy(spec, max_records, None, with_faults, evolving=pair)
                if not play(pinned, top_up_seed(i, seed, derandomize), GENERATION_BATCH):
                    break
        if going and n >= STATUS_SWEEP_FROM and with_faults and not spec.startswith("model") and not counts["errored"]:
            reported += status_sweep(sess, spec, reported, connector, version, seed, gen_dir)
    except KeyboardInterrupt:  # stopped by a signal: the runs before the failure being shrunk are kept, shrinking is not
        del reported[hunt["original"] if hunt["original"] is not None else len(reported):]
        raise
    finally:
        for r in reported:
            sess.record(r, "generated")
        kept = {str(r.run_dir) for r in sess.results}
        for r in tried:  # shrink attempts that are not reported
            if str(r.run_dir) not in kept:
                shutil.rmtree(r.run_dir, ignore_errors=True)


# from this many generated scenarios (`--profile thorough` on a simulated target) the drawn ones are
# topped up with a scenario for each (status, operation) pair of S3's answers none of them drew
# (conformance.catalog.s3_statuses.status_sweep), so every pair is played at least once
STATUS_SWEEP_FROM = 1000


def status_sweep(sess: Session, spec: str, played: list[Any], connector: dict[str, str] | None,
                 version: str | None, seed: int | None, gen_dir: Path) -> list[Any]:
    """A run of each (status, code, operation) no generated scenario of `played` drew."""
    from conformance.catalog.s3_statuses import status_sweep as sweep_scenario, sweep_pairs

    drawn = {(int(f.params.get("status", 0)), str(f.params.get("code")), str(f.params.get("operation")))
             for r in played for f in r.scenario.faults
             if f.kind == "s3" and f.params.get("action") == "fail" and f.params.get("code")}
    out = []
    for i, (status, code, op) in enumerate(p for p in sweep_pairs() if p not in drawn):
        if sess.over_budget():
            sess.skipped_budget += 1
            continue
        sc = prepare(sweep_scenario(status, code, op), connector=connector, version=version, seed=seed)
        if not selected(sc, spec, sess.props):
            continue
        result = sess.run_one(sc, spec, "generated", gen_dir / f"sweep-{i:03d}", record=False)
        if result is not None:
            out.append(result)
    return out


# failures of new kinds one batch may find before the search moves on to the next batch
MAX_FAILURES_PER_BATCH = 3


# how many times a failure found by generation is replayed before it is shown as the reproducer
REPLAYS = 2


def confirmed_failure(sess: Session, spec: str, original: Any, shrunk: Any, signature: tuple[str, str],
                      gen_dir: Path, replays: int = REPLAYS) -> Any:
    """The failing run to show: the shrunk one when its scenario fails the same way (property
    and anomaly) on every replay, else the first one found. A failure that does not come back on
    every replay is marked flaky with how often it did (`result.flaky`): it is never the
    reproducer without saying so."""
    from conformance.judging.verdicts import fails_as

    def reproduced(result: Any, tag: str) -> int:
        hits = 0
        given = sess.given.get(str(result.run_dir), result.scenario)  # without a warm stack's topic tag
        for i in range(replays):
            again = sess.run_one(dataclasses.replace(given, name=f"{given.name}-replay{i + 1}"),
                                 spec, "generated", gen_dir / f"{tag}-replay-{i + 1}", record=False)
            hits += 1 if again is not None and fails_as(again.all_verdicts(), signature) else 0
            if again is not None:
                shutil.rmtree(again.run_dir, ignore_errors=True)
        return hits

    candidates = [(shrunk, "shrunk")] + ([(original, "first")] if original is not shrunk else [])
    tried: list[tuple[Any, int]] = []
    for result, tag in candidates:  # the shrunk scenario first
        tried.append((result, reproduced(result, tag)))
        if tried[-1][1] == replays:
            break
    result, hits = max(tried, key=lambda t: t[1])
    if result is not shrunk:
        sess.notes.append(f"{spec}: the shrunk scenario of {original.scenario.name} failed as {' / '.join(signature)} "
                          f"in {tried[0][1]} of {replays} replays; the first one is shown instead")
    result.flaky = None if hits == replays else {
        "reproduced": hits, "replays": replays, "signature": list(signature),
        "note": "; ".join(f"the {tag} scenario failed as {' / '.join(signature)} in {h} of {replays} replays"
                          for (_, tag), (_, h) in zip(candidates, tried))}
    return result

