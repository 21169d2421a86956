"""`sinkcheck run`: saved failures first, then the named scenarios, then Hypothesis-generated
ones (shrunk on failure), against one or more targets; writes report.html, junit.xml,
results.json and a reproducer per failure; exit code per sinkcheck.exitcodes.

The command reads its arguments, the connector config, the budget and the profile, and hands
the rest to a session of the suite (conformance.playing.session): this module prints and exits.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

from conformance.playing.model_target import model_version
from conformance.playing.session import (FAILURES_DIR, PROFILES, Session, alike_groups, environment, failure_file_name,
    failure_scenario, fmt_secs, named_scenarios, own_named_scenarios, saved_failures, saved_twin, slug)
from conformance.playing.target_run import run_target
from sinkcheck.exitcodes import Exit, UsageError
from sinkcheck.lifecycle import Deferred, Interrupted, as_interrupted, defer_signals, holding
from sinkcheck.options import (check_connector_version, check_target_spec, examples_for, load_connector_config, load_preflight, out_dir,
                               parse_budget, resolve_profile, resolve_props, validate_for_target)
from sinkcheck.terminal import Terminal, exit_for, print_outcome


def own_preflight(out: Path, term: "Terminal") -> list[dict[str, Any]]:
    """Preflight the kind of S3 server the targets write to (sinkcheck's moto), so the report
    says what the verdicts rest on even when no --preflight file is given."""
    from dataclasses import asdict

    from adapters.processes.moto import MotoS3Server
    from adapters.s3.preflight import preflight

    term.progress("[sinkcheck] preflight of the S3 server…")
    server = MotoS3Server(out / "preflight-s3", bucket="sinkcheck-preflight").start()
    try:
        return [{**asdict(c), "endpoint": "sinkcheck's moto"} for c in preflight(server.endpoint, "sinkcheck-preflight")]
    finally:
        server.stop()


def cmd_run(args: Any) -> int:
    with holding(out_dir(args.out), "sinkcheck run " + " ".join(args.target or ["pysink"])):
        return _run(args)


def _run(args: Any) -> int:
    from reports import ReportContext, write_reports
    from reports.context import interruption_text, prepare_report
    from reports.redact import Redactor

    started = time.monotonic()
    connector = load_connector_config(args.connector_config)
    redactor = Redactor.from_configs(connector)
    term = Terminal(redactor)
    targets = args.target or ["pysink"]
    check_connector_version(args.connector_version)
    for t in targets:
        check_target_spec(t, args.plugin_path, term.err, args.connector_version)
        if connector is not None:
            validate_for_target(connector, t, model_version(t) or args.connector_version,
                                    f"--connector-config {args.connector_config}")
    props = resolve_props(args.property)
    budget = parse_budget(args.budget)
    profile, n_examples, derandomize, max_records = resolve_profile(args)
    seed = args.seed if args.seed is not None else (0 if derandomize else int.from_bytes(os.urandom(3), "big"))
    preflight = load_preflight(args.preflight)
    from conformance.inputs.targets import simulated

    needs_s3 = any(not t.startswith("model") and not simulated(t) for t in targets)  # a real S3 server to preflight
    baseline = None
    if args.baseline_results:
        try:
            baseline = json.loads(Path(args.baseline_results).read_text())["results"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"--baseline-results {args.baseline_results}: not a sinkcheck results.json ({e})") from None
    out = out_dir(args.out)
    failures_dir = Path(args.failures_dir)
    named = [] if args.no_named else named_scenarios(args.scenario)
    from conformance.playing.workers import default_processes

    try:  # a simulated target's runs go to every core (conformance.playing.workers)
        processes = default_processes()
    except ValueError as e:
        raise UsageError(str(e)) from None
    sess = Session(out, props, None if budget is None else started + budget, args.plugin_path,
                   progress=term.progress, warn=term.err, redactor=redactor, processes=processes,
                   prepare_report=prepare_report)
    examples = {spec: examples_for(spec, profile, args) for spec in targets}
    picked = [sc.name for sc in named] if args.scenario else None
    # a group of saved failures that fail alike is replayed once (conformance.playing.target_run.replay_saved)
    saved = {spec: len(alike_groups(saved_failures(failures_dir, spec, picked))) for spec in targets}
    sess.total_hint = sum(saved[spec] + len(named) + (len(own_named_scenarios(spec)) if named and not args.scenario else 0) + examples[spec] for spec in targets)
    term.err(f"sinkcheck run: {', '.join(targets)} · profile {profile} · seed {seed} · "
             + ", ".join(sorted({str(n) for n in saved.values()})) + " saved + "
             f"{len(named)} named + " + ", ".join(sorted({str(n) for n in examples.values()}))
             + " generated scenarios per target"
             + (f" · budget {fmt_secs(budget)}" if budget is not None else ""))

    stopped: Interrupted | None = None
    late: Deferred | None = None
    try:
        with term.ticking():  # a scenario on a real stack runs for a minute: its line shows how long
            for spec in targets:
                run_target(sess, spec, failures_dir, named, connector, args.connector_version, seed, examples[spec],
                           derandomize, max_records, picked=bool(args.scenario), with_faults=not args.no_faults)
                sess.close()  # a target's stack is done with once its scenarios ran
    except KeyboardInterrupt as e:  # the runs that finished are reported, marked interrupted
        late = defer_signals(term.err)  # stopping the stacks and writing the reports are not cut short
        stopped = as_interrupted(e)
        term.err(f"sinkcheck run: {stopped.name}: stopping the runs; writing the {len(sess.results) + len(sess.errors)} "
                 "that finished")
    finally:
        sess.close()
    late = late or defer_signals(term.err)
    if stopped is None and preflight is None and needs_s3 and args.preflight_s3 and (sess.results or sess.errors):
        try:
            preflight = own_preflight(out, term)
        except Exception as e:  # noqa: BLE001 - the report says why it has no preflight
            preflight = [{"check": "preflight of sinkcheck's S3 server", "status": "error", "detail": f"{type(e).__name__}: {e}"}]
    term.progress("")
    if not sess.results and not sess.errors and not sess.not_applicable and stopped is None:
        why = []
        if props:
            why.append(f"--property {', '.join(sorted(props))} is claimed by none of the scenarios for {', '.join(targets)}")
        if sess.skipped_budget:
            why.append(f"the budget ({args.budget}) ran out before any scenario ran")
        if not named and not any(examples.values()):
            why.append("no named scenario and --examples 0")
        term.err("sinkcheck run: nothing selected: " + ("; ".join(why) or "no scenario matched") +
                 ". Widen the selection (drop --property, raise --budget or --examples).")
        return Exit.NOTHING_SELECTED

    # reproducers: DIR/failures and .sinkcheck/failures (replayed first next time)
    (out / "failures").mkdir(exist_ok=True)
    reproducers: dict[str, str] = {}
    kept: dict[str, list[tuple[Path, Any]]] = {}  # the saved reproducers of each target, as saving goes on
    copies: list[str] = []
    for r in sess.results:
        if not r.failed():
            continue
        red = failure_scenario(r, redactor, sess.given.get(str(r.run_dir)))
        name = failure_file_name(red)  # one per failure signature: found again, it replaces its file
        p = red.save(out / "failures" / name)
        reproducers[str(r.run_dir)] = str(p)
        if args.save_failures:
            on_disk = kept.setdefault(r.target, saved_failures(failures_dir, r.target))
            twin = saved_twin(red, name, on_disk)
            if twin is not None:  # replayed next time, it would be one more FAIL of the same failure
                copies.append(f"{red.name} (as {twin.name})")
                continue
            on_disk.append((red.save(failures_dir / name), red))
    if copies:
        term.err(f"sinkcheck run: not saved to {failures_dir}, a saved reproducer failing the same way (the same "
                 "known bug, or the same scenario and properties): " + "; ".join(copies[:3])
                 + (f" and {len(copies) - 3} more" if len(copies) > 3 else ""))
    for e in sess.errors:
        f = Path(e["scenario_file"])
        if f.exists():
            shutil.copy(f, out / "failures" / f"error--{slug(e['target'])}--{slug(e['scenario'])}.json")
    if args.fixtures:
        from conformance.calibration import fidelity

        for r in sess.results:
            if r.target_info is not None and r.target_info.connector_version:
                fidelity.save(r, Path(args.fixtures))
    versions = {r.scenario.connector_version for r in sess.results if r.scenario.connector_version}
    from conformance.catalog.known_bugs import acceptances

    # the failed runs a known bug of the release that ran explains, where the team accepts them
    accepted = acceptances(sess.results) if args.accept_known_bugs else {}
    ctx = ReportContext(command="run", seed=seed, profile=profile, duration_s=time.monotonic() - started,
                        environment=environment(targets, versions, sess.results), preflight=preflight, errors=sess.errors,
                        origins=sess.origins, reproducers=reproducers, redactor=redactor, notes=list(sess.notes),
                        not_applicable=list(sess.not_applicable), accept_known_bugs=args.accept_known_bugs,
                        accepted=accepted)
    for spec, secs in sess.stack_startup_s.items():
        ctx.environment[f"warm stack start-up ({spec})"] = f"{secs:.1f} s"
    if sess.skipped_budget:
        ctx.notes.append(f"{sess.skipped_budget} scenarios were not run: the budget ({args.budget}) ran out")
    if stopped is not None:
        ctx.interrupted = {"signal": stopped.name, "finished": len(sess.results) + len(sess.errors),
                           "planned": max(sess.total_hint, len(sess.results) + len(sess.errors))}
    if baseline is not None:
        from reports.context import entry
        from reports.diff import diff_entries

        ctx.baseline = diff_entries(baseline, [entry(r, ctx) for r in sess.results])
    paths = write_reports(out, sess.results, ctx)
    from conformance.catalog.known_bugs import known_bug_line, relevant

    for bug in relevant(sess.results):
        term.out(known_bug_line(bug))
    extra = f" · budget ran out, {sess.skipped_budget} not run" if sess.skipped_budget else ""
    print_outcome(term, sess.results, sess.errors, paths, seed, profile, time.monotonic() - started, extra,
                  interrupted=interruption_text(ctx), not_applicable=sess.not_applicable, accepted=accepted)
    stopped = stopped or late.stopped()
    return stopped.exit_code if stopped is not None else exit_for(sess.results, sess.errors, accepted)


def add_run_parser(sub: Any) -> None:
    r = sub.add_parser("run", help="run named and generated scenarios against targets and write the reports")
    r.add_argument("--target", action="append", default=None,
                   help="pysink[:broker][:<variant>], kafka-connect:<aiven|camel|confluent|iceberg|lenses>, model@<version>, module:Class "
                        "(repeatable; default pysink)")
    r.add_argument("--connector-config", default=None, help="connector JSON used for every scenario instead of its own")
    r.add_argument("--connector-version", default=None, help="the connector version the model holds the sink to")
    r.add_argument("--profile", choices=tuple(PROFILES), default=None,
                   help="ci (fixed seed, 10 generated), default (25), thorough (100); ci when $CI is set")
    r.add_argument("--budget", default=None, help="wall-clock budget, e.g. 10m; scenarios left when it runs out are not run")
    r.add_argument("--seed", type=int, default=None, help="the seed for generated scenarios (printed in every summary)")
    r.add_argument("--examples", type=int, default=None, help="how many generated scenarios per target (overrides the profile)")
    r.add_argument("--scenario", action="append", default=None, help="run only these named scenarios (repeatable)")
    r.add_argument("--no-named", action="store_true", help="run no named scenarios")
    r.add_argument("--no-faults", action="store_true", help="generated scenarios without fault schedules")
    r.add_argument("--property", action="append", default=None,
                   help="only scenarios whose claim includes this property, and only its verdicts (repeatable)")
    r.add_argument("--preflight", default=None, help="a preflight result file (sinkcheck preflight --out) to embed "
                                                   "instead of preflighting sinkcheck's own S3 server")
    r.add_argument("--no-preflight", dest="preflight_s3", action="store_false",
                   help="do not preflight sinkcheck's S3 server after the run")
    r.add_argument("--baseline-results", default=None, help="an earlier results.json: the report shows changes since it")
    r.add_argument("--failures-dir", default=FAILURES_DIR, help=f"saved failures, replayed first (default {FAILURES_DIR})")
    r.add_argument("--no-save-failures", dest="save_failures", action="store_false", help="do not save failures for next time")
    r.add_argument("--accept-known-bugs", action="store_true",
                   help="a failed run that reproduces a known bug of the release that ran, which explains every "
                        "property that failed, is accepted: reported as such, and the exit code is over the other runs")
    r.add_argument("--plugin-path", action="append", default=[], help="Kafka Connect plugin directory (Confluent)")
    r.add_argument("--fixtures", default=None, help="write each real connector's run as a fidelity fixture here "
                                                  "(conformance.calibration.fidelity: replayed offline through the model)")
    r.add_argument("--out", required=True, help="where report.html, junit.xml, results.json and failures/ go")
    r.set_defaults(func=cmd_run)


