"""One target's share of a run: its saved failures first (self-healing: one that passes now is
retired), the named scenarios (and those about the target's own connector), then generated ones."""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from conformance.playing.generated import run_generated
from conformance.judging.verdicts import NotApplicable
from conformance.playing.session import (InputError, Session, alike_groups, own_named_scenarios, planned, prepare,
    retire_if_passing, saved_failures, selected, slug)


def run_target(sess: Session, spec: str, failures_dir: Path, named: list[Any], connector: dict[str, str] | None,
               version: str | None, seed: int | None, n_examples: int, derandomize: bool, max_records: int, *,
               picked: bool = False, with_faults: bool = True) -> None:
    """One target's share of a run: saved failures (self-healing), the named scenarios (and,
    unless `picked` by name, those about the target's own connector), then generated ones."""
    runs = sess.out / "runs" / slug(spec)
    saved_ones = saved_failures(failures_dir, spec, [sc.name for sc in named] if picked else None, sess.warn)
    if spec.startswith(("kafka-connect:", "pysink:broker")) and needs_registry_converters(
            spec, connector, [s for _, s in saved_ones] + named + ([] if picked else own_named_scenarios(spec)),
            n_examples):
        sess.registry_converters.add(spec)  # before its warm stack starts
    # 1. saved failures first (of the scenarios picked, when picked); one that passes now is retired
    replay_saved(sess, spec, saved_ones, runs, connector, version)
    # 2. named scenarios, then those about this target's own connector
    if named and not picked:
        named = named + own_named_scenarios(spec)
    todo = []
    for sc in named:
        p = planned(sc, spec, connector=connector, version=version, seed=seed)
        if isinstance(p, NotApplicable):  # not run: its point cannot survive the user's config
            if not sess.props or set(p.properties) & sess.props:
                sess.not_applicable.append(p)
        elif selected(p, spec, sess.props):
            todo.append(p)

    def run_named(sc: Any) -> Any:
        if sess.over_budget():
            with sess._lock:
                sess.skipped_budget += 1
            return None
        return sess.run_one(sc, spec, "named", runs / slug(sc.name))

    if spec.startswith("kafka-connect:"):  # a warm stack: runs that touch only their connector go at once
        from conformance.playing.stack_sharing import SPARE_STACKS, needs_stack_alone, stack_schedule

        try:
            sess.stack_for(spec)  # started here: a process dies with the thread that started it
        except Exception as e:  # noqa: BLE001 - the run reports it; the scenarios cannot run
            sess.errors.append({"scenario": "(warm stack)", "target": spec, "origin": "named",
                                "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=8)})
            return
        for r in stack_schedule(todo, needs_stack_alone, run_named, spare=sess.spare_stacks([spec]),
                                spares=SPARE_STACKS):
            if isinstance(r, InputError):
                raise r
    else:  # each run alone: a simulated target's go to every core (Session.run_all)
        sess.run_all(spec, [(sc, "named", runs / slug(sc.name)) for sc in todo])
    # 3. generated scenarios, shrunk on failure
    run_generated(sess, spec, n_examples, seed, derandomize, max_records, connector, version,
                  with_faults=with_faults)


def replay_saved(sess: Session, spec: str, saved_ones: list[tuple[Path, Any]], runs: Path,
                 connector: dict[str, str] | None, version: str | None) -> None:
    """Each saved failure replayed, one of each group that fails alike (alike_groups): a group's
    first is played, and while it still fails its copies are not (several runs, or draws of one
    search, saved reproducers of one failure: played, each would be one more FAIL of it); one
    that passes now is retired and the next of its group played."""
    copies: list[str] = []
    for group in alike_groups(saved_ones):
        for i, (f, saved) in enumerate(group):
            if sess.over_budget():
                sess.skipped_budget += 1
                break
            sc = prepare(saved, connector=connector, version=version, seed=None)
            if not selected(sc, spec, sess.props):
                continue
            r = sess.run_one(sc, spec, "saved-failure", runs / f"saved-{f.stem[-12:]}")
            retire_if_passing(f, saved, r, spec, sess.warn)
            if f.exists():  # it fails still (or could not run): its copies would say nothing more
                copies += [f"{g.name} (as {f.name})" for g, _ in group[i + 1:]]
                break
    if copies:
        sess.warn(f"saved failures on {spec}: {len(copies)} not replayed, each failing as another replayed here: "
                  + "; ".join(copies[:3]) + (f" and {len(copies) - 3} more" if len(copies) > 3 else ""))


def needs_registry_converters(spec: str, connector: dict[str, str] | None, scenarios: list[Any],
                              n_examples: int) -> bool:
    """Whether a target's runs may read a Schema Registry's wire format on its workers: the
    user's connector config names a registry converter (every scenario plays under it), or one
    of the scenarios does, or generated ones may draw AvroConverter values (a target writing Avro)."""
    from adapters.connect.converters import needs_registry_converters as needs
    from conformance.generators.configs import formats_for
    from conformance.inputs.targets import target_kind

    if connector is not None:
        return needs(connector)
    return any(needs(sc.connector) for sc in scenarios) or (n_examples > 0 and "avro" in formats_for(target_kind(spec)))
