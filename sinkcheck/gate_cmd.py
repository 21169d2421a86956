"""`sinkcheck gate`: the same scenarios (same seeds, identical input) against a baseline and a
candidate; a diff of verdicts and of object sets; exit 1 on a regression.

Targets may be real sinks or `model@VERSION`, the reference model at a connector version, so
`sinkcheck gate --baseline model@10.5.23 --candidate model@10.6.3` shows what an upgrade
changes by the documented rules alone (spec §18), before any sink runs.
"""
from __future__ import annotations

import dataclasses

import time
from pathlib import Path
from typing import Any

from sinkcheck.exitcodes import Exit, UsageError
from conformance.playing.generated import generated_scenarios
from conformance.catalog.known_bugs import gate_changes, gate_line
from conformance.catalog.gate import GATE_SCENARIOS
from conformance.playing.model_target import model_version
from conformance.judging.verdicts import NotApplicable
from conformance.playing.session import (PROFILES, InputError, Session, environment, fmt_secs,
    named_scenarios, planned, prepare, selected, slug)
from sinkcheck.lifecycle import Deferred, Interrupted, as_interrupted, defer_signals, holding
from sinkcheck.options import (check_connector_version, check_target_spec, load_connector_config, load_preflight, out_dir,
                               parse_budget, resolve_profile, resolve_props, validate_for_target)
from sinkcheck.terminal import Terminal

def gate_scenarios(names: list[str] | None, no_named: bool) -> list[Any]:
    if no_named:
        return []
    if names:
        own = [GATE_SCENARIOS[n]() for n in names if n in GATE_SCENARIOS]
        rest = [n for n in names if n not in GATE_SCENARIOS]
        return own + (named_scenarios(rest) if rest else [])
    return [f() for f in GATE_SCENARIOS.values()] + named_scenarios(None)


def side_kind(spec: str) -> str:
    """The claim family whose scenarios `run` generates for a side (the model's: Confluent's)."""
    from conformance.inputs.targets import target_kind

    return "confluent" if model_version(spec) or spec == "model" else target_kind(spec)


def load_overrides(path: str | None, flag: str) -> dict[str, str]:
    """Connector properties one side sets over every scenario's own config (a gate between two
    configs of the same sink: identical records, the boundaries each config gives)."""
    if not path:
        return {}
    cfg = load_connector_config(path, flag)
    if not cfg:
        raise UsageError(f"{flag} {path}: no connector properties in it")
    return cfg


def cmd_gate(args: Any) -> int:
    with holding(out_dir(args.out), f"sinkcheck gate {args.baseline} -> {args.candidate}"):
        return _gate(args)


def _gate(args: Any) -> int:
    from reports import ReportContext, write_reports
    from reports.context import entry, interruption_text
    from reports.diff import diff_entries
    from reports.redact import Redactor

    started = time.monotonic()
    connector = load_connector_config(args.connector_config)
    sides = [("baseline", args.baseline, args.baseline_version), ("candidate", args.candidate, args.candidate_version)]
    overrides = {"baseline": load_overrides(args.baseline_config, "--baseline-config"),
                 "candidate": load_overrides(args.candidate_config, "--candidate-config")}
    redactor = Redactor.from_configs(connector, *overrides.values())
    term = Terminal(redactor)
    for side, spec, ver in sides:
        check_connector_version(ver, f"--{side}-version")
        check_target_spec(spec, args.plugin_path, term.err, ver)
        if ver and model_version(spec):
            raise UsageError(f"{spec} already names its connector version; drop --*-version for it")
        if connector is not None:
            validate_for_target(connector, spec, model_version(spec) or ver, f"--connector-config {args.connector_config}")
    props = resolve_props(args.property)
    budget = parse_budget(args.budget)
    profile, n_examples, derandomize, max_records = resolve_profile(args)
    seed = args.seed if args.seed is not None else 0  # the gate is reproducible by default
    preflight = load_preflight(args.preflight)
    out = out_dir(args.out)
    model_only = any(s.startswith("model") for _, s, _ in sides)
    scenarios = gate_scenarios(args.scenario, args.no_named)
    scenarios += generated_scenarios(n_examples, seed, derandomize, max_records, with_faults=not args.no_faults,
                                     kinds=tuple(side_kind(spec) for _, spec, _ in sides))
    if model_only:
        # the same scenarios as a gate of real versions with this seed, their fault schedules
        # dropped: the model applies none, and a scenario with faults is unknown to it
        scenarios = [dataclasses.replace(sc, faults=[]) for sc in scenarios]
    term.err(f"sinkcheck gate: {args.baseline} → {args.candidate} · {len(scenarios)} scenarios · seed {seed} · profile {profile}"
             + (" · the model applies no faults: the scenarios without their fault schedules" if model_only else "")
             + (" · generated scenarios without faults" if args.no_faults and not model_only else ""))
    sess = Session(out, props, None if budget is None else started + budget, args.plugin_path,
                   progress=term.progress, warn=term.err, redactor=redactor)
    # a target against itself (another config): a stack for each side, as for two targets
    stack_key = {side: f"{spec} ({side})" if args.baseline == args.candidate else spec for side, spec, _ in sides}
    per_side: dict[str, list[Any]] = {"baseline": [], "candidate": []}
    skipped = 0
    jobs: list[tuple[str, str, Any, str, str]] = []  # side, spec, scenario, origin, topic tag
    for n, sc in enumerate(scenarios):
        origin = "generated" if sc.name.startswith("generated") else "named"
        base = planned(sc, args.candidate, connector=connector, version=None, seed=seed, origin=origin)
        if isinstance(base, NotApplicable):  # not run on either side: the user's config leaves nothing of its point
            if not props or set(base.properties) & props:
                sess.not_applicable += [dataclasses.replace(base, target=spec) for _, spec, _ in sides]
            continue
        if not all(selected(base, spec, props) for _, spec, _ in sides):
            continue
        for side, spec, ver in sides:
            # both sides play the same records: the override's config is not fitted again
            s = prepare(base, connector={**base.connector, **overrides[side]} if overrides[side] else None,
                        version=ver, seed=None, fit=False)
            # both sides' topics get one tag (each side has a stack of its own): same keys to compare
            jobs.append((side, spec, s, origin, f"-g{n}"))

    def run(job: tuple[str, str, Any, str, str]) -> Any:
        nonlocal skipped
        side, spec, s, origin, tag = job
        if sess.over_budget():
            with sess._lock:
                skipped += 1
            return None
        return sess.run_one(s, spec, origin, out / side / slug(s.name), tag=tag, stack_key=stack_key[side])

    from conformance.playing.stack_sharing import SPARE_STACKS, needs_stack_alone, stack_schedule

    sess.total_hint = len(jobs)
    stopped: Interrupted | None = None
    late: Deferred | None = None
    try:
        # on warm stacks (Kafka Connect sides) runs that touch only their own connector go at once
        warm = all(spec.startswith("kafka-connect:") for _, spec, _ in sides)
        with term.ticking():  # a stack starts and a scenario on it runs for a minute: the line shows how long
            for side, spec, _ in sides:
                sess.stack_for(spec, stack_key[side])  # started here: a process dies with the thread that started it
            # spare stacks pay off only where a side has more than one scenario to run alone
            spare = warm and sum(1 for j in jobs if needs_stack_alone(j[2])) > len(sides)
            results = stack_schedule(jobs, lambda j: needs_stack_alone(j[2]), run, workers=3 if warm else 1,
                                     spare=sess.spare_stacks([spec for _, spec, _ in sides],
                                                             [stack_key[side] for side, _, _ in sides]) if spare else None,
                                     spares=SPARE_STACKS)
        for (side, _, _, _, _), r in zip(jobs, results):
            if isinstance(r, (UsageError, InputError)):  # a scenario this target cannot play: exit 4
                raise r
            if r is not None and not isinstance(r, Exception):
                per_side[side].append(r)
    except KeyboardInterrupt as e:  # the runs that finished are compared and reported, marked interrupted
        late = defer_signals(term.err)  # stopping the stacks and writing the reports are not cut short
        stopped = as_interrupted(e)
        term.err(f"sinkcheck gate: {stopped.name}: stopping the runs; writing the {len(sess.results) + len(sess.errors)} "
                 "that finished")
        for r in sess.results:  # each side's runs are under out/<side>/
            per_side[Path(r.run_dir).relative_to(out).parts[0]].append(r)
    finally:
        sess.close()
    late = late or defer_signals(term.err)
    term.progress("")
    if not sess.results and not sess.errors and stopped is None:
        for na in sess.not_applicable[::2]:  # one line a scenario: both sides skip it for the same reason
            term.out(f"N/A {na.scenario}: {na.reason}")
        term.err("sinkcheck gate: nothing selected: no scenario ran on both sides"
                 + (" (every one selected is not applicable under the given connector config)" if sess.not_applicable else "")
                 + (f" (--property {', '.join(sorted(props))} is claimed by none)" if props else "")
                 + (f" (the budget ran out: {skipped} skipped)" if skipped else "") + ".")
        return Exit.NOTHING_SELECTED
    versions = {r.scenario.connector_version for r in sess.results if r.scenario.connector_version}
    ctx = ReportContext(command="gate", seed=seed, profile=profile, environment=environment([s for _, s, _ in sides], versions, sess.results),
                        preflight=preflight, errors=sess.errors, origins=sess.origins, redactor=redactor,
                        notes=list(sess.notes), not_applicable=list(sess.not_applicable))
    ctx.environment["baseline"] = f"{args.baseline}" + (f" @ {args.baseline_version}" if args.baseline_version else "")
    ctx.environment["candidate"] = f"{args.candidate}" + (f" @ {args.candidate_version}" if args.candidate_version else "")
    for side in ("baseline", "candidate"):
        if overrides[side]:
            ctx.environment[side] += " with " + ", ".join(f"{k}={v}" for k, v in sorted(overrides[side].items()))
    diff = diff_entries([entry(r, ctx) for r in per_side["baseline"]], [entry(r, ctx) for r in per_side["candidate"]])
    ctx.baseline = diff
    ctx.known_bug_changes = gate_changes(per_side["baseline"], per_side["candidate"])
    if skipped:
        ctx.notes.append(f"{skipped} scenarios were not run: the budget ({args.budget}) ran out")
    ctx.duration_s = time.monotonic() - started
    if stopped is not None:
        ctx.interrupted = {"signal": stopped.name, "finished": len(sess.results) + len(sess.errors), "planned": len(jobs)}
    ctx.verdict = ("error" if sess.errors else
                   "fail" if diff["regressions"] or (args.fail_on_change and diff["behaviour_changes"]) else "pass")
    paths = write_reports(out, sess.results, ctx)

    for it in diff["regressions"]:
        term.out(f"REGRESSION {it['scenario']}: {it['property']} [{it['rule']}] {it['baseline']} → {it['candidate']}: {it['message']}")
        for w in it["witnesses"][:3]:
            term.out(f"    {w['anomaly']}: {w.get('explanation', '')} offsets {', '.join(w.get('offsets') or [])} "
                     f"keys {', '.join(w.get('keys') or [])}")
        term.out(f"  Reproduce with: {it['replay']}")
    for ch in diff["behaviour_changes"]:
        od = ch["objects"]
        term.out(f"BEHAVIOUR CHANGE ({ch['kind']}) {ch['scenario']}: {od['summary']}")
        term.out(f"  {ch['why']}")
        for m in od["moved_offsets"][:5]:
            term.out(f"    {m['offset']}: {m['baseline']} → {m['candidate']}")
        term.out(f"  Reproduce with: {ch['replay_baseline']}\n                  {ch['replay_candidate']}")
    for it in diff["fixed"]:
        term.out(f"fixed {it['scenario']}: {it['property']} fail → pass")
    for change in ctx.known_bug_changes:
        term.out(gate_line(change))
    for na in sess.not_applicable[::2]:  # one line a scenario: both sides skip it for the same reason
        term.out(f"N/A {na.scenario}: {na.reason}")
    documented = [c for c in diff["behaviour_changes"] if c["kind"] == "documented"]
    unjudged = [c for c in diff["behaviour_changes"] if c["kind"] == "unknown"]
    if sess.errors:
        code = Exit.INTERNAL
    elif diff["regressions"] or (args.fail_on_change and diff["behaviour_changes"]):
        code = Exit.FAILED
    else:
        code = Exit.OK
    word = {Exit.OK: "PASS", Exit.FAILED: "FAIL", Exit.INTERNAL: "ERROR"}[code]
    if stopped is not None:
        word = f"INTERRUPTED ({word} so far)"
    term.out(f"{word}: gate {args.baseline} → {args.candidate}: {diff['compared']} scenarios compared, "
             f"{len(diff['regressions'])} regressions, {len(diff['behaviour_changes'])} behaviour changes "
             f"({len(documented)} documented" + (f", {len(unjudged)} not judged: a side unknown" if unjudged else "")
             + f"), {len(diff['fixed'])} fixed, {len(sess.errors)} errors"
             + (f", {len(sess.not_applicable) // 2} not applicable" if sess.not_applicable else "") + f" · seed {seed} · "
             f"profile {profile} · {time.monotonic() - started:.1f}s"
             + (f" · budget ran out, {skipped} not run ({fmt_secs(budget or 0)})" if skipped else ""))
    if ctx.interrupted:
        term.out(interruption_text(ctx) or "")
    for k, p in paths.items():
        term.out(f"  {k:<5} {p}")
    stopped = stopped or late.stopped()
    return stopped.exit_code if stopped is not None else code


def add_gate_parser(sub: Any) -> None:
    g = sub.add_parser("gate", help="the same scenarios on a baseline and a candidate; exit 1 on a regression")
    g.add_argument("--baseline", required=True, help="target spec (e.g. model@10.5.23, kafka-connect:confluent, module:Class)")
    g.add_argument("--candidate", required=True, help="target spec")
    g.add_argument("--baseline-version", default=None, help="connector version the baseline is held to")
    g.add_argument("--candidate-version", default=None, help="connector version the candidate is held to")
    g.add_argument("--connector-config", default=None, help="connector JSON used for every scenario instead of its own")
    g.add_argument("--baseline-config", default=None,
                   help="connector properties (JSON) the baseline sets over each scenario's config")
    g.add_argument("--candidate-config", default=None,
                   help="connector properties (JSON) the candidate sets over each scenario's config, e.g. a new flush.size")
    g.add_argument("--profile", choices=tuple(PROFILES), default=None)
    g.add_argument("--seed", type=int, default=None, help="seed for generated scenarios (default 0: reproducible)")
    g.add_argument("--examples", type=int, default=None, help="generated scenarios (overrides the profile)")
    g.add_argument("--scenario", action="append", default=None,
                   help=f"only these scenarios (named ones, or {', '.join(GATE_SCENARIOS)})")
    g.add_argument("--no-named", action="store_true", help="no named scenarios, generated ones only")
    g.add_argument("--no-faults", action="store_true", help="generated scenarios without fault schedules (the same "
                                                            "scenarios a gate of model@ versions plays)")
    g.add_argument("--property", action="append", default=None, help="only these properties (repeatable)")
    g.add_argument("--budget", default=None, help="wall-clock budget, e.g. 10m")
    g.add_argument("--fail-on-change", action="store_true",
                   help="exit 1 on any object-set change, documented version changes included")
    g.add_argument("--preflight", default=None, help="a preflight result file to embed in the report")
    g.add_argument("--plugin-path", action="append", default=[], help="Kafka Connect plugin directory (Confluent)")
    g.add_argument("--out", required=True, help="where report.html, junit.xml and results.json go")
    g.set_defaults(func=cmd_gate)
