"""`sinkcheck` command line."""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from conformance.playing.session import InputError
from sinkcheck.exitcodes import Exit, UsageError
from sinkcheck.options import check_utf8, decode_text, out_file, warn_config


def _read(path: str, what: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} file {path}: {e.strerror}") from None
    return decode_text(data, path, what)


def cmd_model(args: argparse.Namespace) -> int:
    from reference_impl.config import ConfigError, ConfigSyntaxError, parse_config
    from reference_impl.engine.model import InputError, expect, parse_puts_lines, parse_records_lines
    from reference_impl.versions import VersionError
    from reports.redact import Redactor
    from sinkcheck.terminal import PLAIN_TICK_S, Terminal

    out_file(args.out)
    from reference_impl.config import load_config_text
    from sinkcheck.options import refuse_unhonoured

    text = _read(args.config, "connector config")
    try:
        refuse_unhonoured(load_config_text(text, args.config)[1], args.config, converted=False)
        cfg = parse_config(text, version=args.connector_version)
    except ConfigSyntaxError as e:
        raise UsageError(f"{args.config}: malformed JSON at line {e.line}, column {e.column}: {str(e).split(': ', 2)[-1]}") from None
    except ConfigError as e:
        raise UsageError(f"{args.config}: {e}") from None
    except VersionError as e:
        raise UsageError(f"--connector-version: {e}") from None
    warn_config(cfg.raw, args.config)
    from sinkcheck.model_input import check_local_fits, lines_with_progress, parse_size

    puts = None
    term = Terminal(Redactor())
    progress = term.progress
    try:
        if args.puts:
            puts = parse_puts_lines(_read(args.puts, "put schedule").split("\n"), args.puts)
        if args.engine == "local" and not args.records.endswith(".parquet"):
            if not os.path.isfile(args.records):
                _read(args.records, "records")  # says why it cannot be read
            check_local_fits(args.records, parse_size(args.max_memory))
            reading = time.monotonic()
            records = parse_records_lines(lines_with_progress(args.records, progress, 1.0 if term.tty else PLAIN_TICK_S),
                                          args.records)
            if time.monotonic() - reading > 2:  # a long read: the work after it is as long
                progress(f"[sinkcheck] model: {len(records)} records read; computing what the connector writes…")
    except InputError as e:
        raise UsageError(str(e)) from None

    existing = frozenset(args.existing_key or ())
    if args.existing_keys:
        existing |= {k.strip() for k in _read(args.existing_keys, "existing keys").splitlines() if k.strip()}
    started = time.monotonic()
    if args.engine == "local" and args.records.endswith(".parquet"):
        import pyarrow.parquet as pq

        from reference_impl.engine.columns import expect_arrow

        if puts is not None or existing:
            raise UsageError("--records: a Parquet dump has no put order; give RECORDS.jsonl with --puts/--existing-key")
        try:
            progress(f"[sinkcheck] model: reading {args.records} and computing what the connector writes…")
            with term.ticking():
                exp = expect_arrow(cfg, pq.read_table(args.records), jvm_zone=args.jvm_zone)
        except ValueError as e:
            raise UsageError(str(e)) from None
    elif args.engine == "local":
        with term.ticking():
            try:
                exp = expect(cfg, records, puts, engine="local", jvm_zone=args.jvm_zone, existing_keys=existing)
            except InputError as e:  # the put schedule and the records disagree
                raise UsageError(f"--puts {args.puts}: {e}; give a put schedule that carries at most the records "
                                 f"of {args.records}") from None
    else:
        from reference_impl.engine.spark import (expect_spark, records_dataframe, records_problem,
            spark_session)

        if not os.path.exists(args.records):
            raise UsageError(f"records file not found: {args.records}")
        if os.path.isfile(args.records) and not args.records.endswith(".parquet"):
            check_utf8(args.records, "--records")
        progress("[sinkcheck] model: starting Spark…")
        # on a terminal Spark's own stage bar shows how far each stage got, as spark-shell's does
        with term.ticking():
            spark = spark_session(args.spark_master, conf={"spark.ui.showConsoleProgress": str(term.tty).lower()})
        progress("[sinkcheck] model: Spark running the model over the records…")
        try:
            df = records_dataframe(spark, args.records)
            problem = records_problem(df)
            if problem:
                raise UsageError(f"--records {args.records}: {problem}")
            try:
                with term.ticking(spark=True):
                    exp = expect_spark(cfg, df, puts, jvm_zone=args.jvm_zone, manifest_path=args.manifest,
                                       existing_keys=existing, clustered=args.clustered)
            except InputError as e:
                raise UsageError(f"--puts {args.puts}: {e}" if args.puts else str(e)) from None
        finally:
            if not args.spark_master:
                spark.stop()
    out = exp.to_json()
    if args.contents:
        if args.engine != "local":
            raise UsageError("--contents needs --engine local (the Spark engine never brings records to the driver)")
        from reference_impl.engine.contents import object_contents

        by_tp_offset = {(r.topic, r.partition, r.offset): r for r in records}
        for o, j in zip(exp.objects, out["objects"] if isinstance(out["objects"], list) else []):
            recs = {off: by_tp_offset[(o.topic, o.partition, off)] for off in o.offsets}
            j["contents"] = object_contents(cfg, o, recs)
    text = json.dumps(out, indent=2) + "\n"
    progress("")
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        objs = out["objects"]
        n = len(objs) if isinstance(objs, list) else "constraints for " + str(len(objs["topic_partitions"]))
        fail = out["task_failure"]
        print(f"model ({args.engine}, connector {exp.connector_version}): {n} objects, "
              f"committed {out['committed_offsets']}, {len(out['open'])} open files"
              + (f", task fails at offset {fail['offset']} by {fail['rule']}" if fail else "")
              + f" in {time.monotonic() - started:.2f}s -> {args.out}", file=sys.stderr)
    return Exit.OK


def recorded_target(played_on: dict | None) -> str | None:
    """The target a saved scenario records, pinned to the connector version that ran there when
    its spec leaves the version open (`kafka-connect:confluent` plays the default plugin, which
    may since have changed)."""
    if not played_on:
        return None
    from adapters.connect import plugins
    from conformance.inputs.targets import connect_profile

    target, ran = played_on["target"], played_on.get("connector")
    if target.startswith("kafka-connect:") and ran:
        profile, version = connect_profile(target)
        if version is None and profile in plugins.KINDS:
            return f"{target}@{ran}"
    return target


def cmd_replay(args: argparse.Namespace) -> int:
    from adapters.target import UnsupportedFault
    from conformance.pytest_plugin import failure_block
    from conformance.inputs.scenario import Scenario, ScenarioError
    from conformance.playing.session import execute
    from conformance.inputs.targets import TargetSpecError

    from reports.redact import Redactor
    from conformance.playing.model_target import model_version
    from sinkcheck.lifecycle import holding
    from sinkcheck.options import check_target_spec, out_dir, validate_for_target
    from sinkcheck.terminal import Terminal

    try:
        scenario = Scenario.load(args.scenario)
    except ScenarioError as e:
        raise UsageError(str(e)) from None
    recorded = recorded_target(scenario.played_on)
    target = args.target or recorded or "pysink"
    check_target_spec(target, args.plugin_path, lambda m: print(m, file=sys.stderr))
    validate_for_target(scenario.connector, target, model_version(target) or scenario.connector_version,
                        f"{args.scenario}'s connector config")
    out = out_dir(args.out or f".sinkcheck/replay/{Path(args.scenario).stem}")
    with holding(out, f"sinkcheck replay {args.scenario}"):
        dataclasses.replace(scenario, played_on=scenario.played_on if target == recorded else {"target": target}).save(
            out / "scenario.json")
        whence = (" (the target recorded in the file)" if not args.target and recorded
                  else " (the file records no target; --target picks one)" if not args.target else "")
        print(f"replaying {args.scenario} ({len(scenario.records)} records, {len(scenario.faults)} faults) "
              f"against {target}{whence} ...", file=sys.stderr)
        term = Terminal(Redactor())
        term.progress(f"[sinkcheck] replaying {scenario.name} on {target}…")
        try:  # through the session, as run and gate play a target spec (model@VERSION included)
            with term.ticking():
                result = execute(scenario, target, out, plugin_path=args.plugin_path)
        except (TargetSpecError, ScenarioError) as e:
            raise UsageError(str(e)) from None
        except UnsupportedFault as e:
            raise UsageError(f"{args.scenario}: {e}; replay it on a target that applies it (--target), or remove "
                             "the step from the file") from None
        finally:
            term.progress("")
    if args.fixtures:
        from conformance.calibration import fidelity

        if result.target_info is None or not result.target_info.connector_version:
            print(f"no fixture written: {target} is not a real connector whose version the worker reported",
                  file=sys.stderr)
        else:
            print(f"fixture: {fidelity.save(result, Path(args.fixtures))}", file=sys.stderr)
    sets = [(result.claim, result.verdicts)] + list(getattr(result, "other_claims", []))
    for claim, verdicts in sets:
        if len(sets) > 1:  # a target with several claims (Spark: through its log, and a raw listing)
            print(f"  claim {claim.name}, {claim.view} view:")
        for v in verdicts:
            mark = {"pass": "ok  ", "fail": "FAIL", "unknown": "??  "}[v.status]
            claimed = "claimed" if v.claimed else "measured"
            print(f"  {mark} {v.property:<18} {claimed:<8} {v.message}")
    if result.failed():
        print(failure_block(result))
    if result.untested:
        print(f"  tested nothing: {result.untested}")
    print(f"{result.status.upper()}: {target} on {scenario.name} in {result.wall_s:.1f}s "
          f"(claim {result.claim.name}); logs in {out}")
    return {"pass": Exit.OK, "fail": Exit.FAILED, "unknown": Exit.UNKNOWN}[result.status]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sinkcheck", description="Conformance testing for Kafka-to-S3 sinks.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    m = sub.add_parser("model", help="the reference model: what a Confluent S3 sink must produce for these records")
    m.add_argument("--config", required=True, help="connector JSON ({\"name\":…,\"config\":{…}} or a flat map)")
    m.add_argument("--records", required=True, help="RECORDS.jsonl (or .parquet with --engine spark)")
    m.add_argument("--puts", help="PUTS.jsonl: {\"at\": ms, \"count\": n} per put()")
    m.add_argument("--connector-version", default=None, help="Confluent S3 sink version (default 12.1.9)")
    m.add_argument("--engine", choices=("local", "spark"), default="local")
    m.add_argument("--spark-master", default=None, help="spark.master (default: embedded local[*])")
    m.add_argument("--jvm-zone", default="UTC", help="JVM default zone for zone-less timestamp strings (R6.5)")
    m.add_argument("--clustered", action="store_true",
                   help="with --engine spark: the dump keeps each topic-partition whole and in offset order "
                        "(one file per topic-partition); streamed with no shuffle, checked, with a fallback")
    m.add_argument("--manifest", default=None, help="with --engine spark: also write the manifest as Parquet here")
    m.add_argument("--existing-key", action="append", metavar="KEY",
                   help="an object already in the bucket from an earlier run (repeatable; R8)")
    m.add_argument("--existing-keys", metavar="FILE", help="a file of such keys, one per line")
    m.add_argument("--contents", action="store_true", help="add each object's decoded contents (local engine)")
    m.add_argument("--max-memory", default="1G", help="the local engine holds every record: an input it would need "
                   "more memory for is refused before it starts, pointing to --engine spark (default 1G)")
    m.add_argument("--out", required=True, help="EXPECTED.json ('-' for stdout)")
    m.set_defaults(func=cmd_model)

    r = sub.add_parser("replay", help="run a saved scenario again against a target")
    r.add_argument("scenario", help="SCENARIO.json (saved by a run, or written by hand)")
    r.add_argument("--target", default=None, help="pysink[:broker][:<variant>], kafka-connect:<aiven|camel|confluent>, "
                   "model@<version>, module:Class (default: the target the file records, else pysink)")
    r.add_argument("--plugin-path", action="append", default=[], help="Kafka Connect plugin directory (Confluent)")
    r.add_argument("--out", default=None, help="where the run's logs go (default .sinkcheck/replay/<name>)")
    r.add_argument("--fixtures", default=None, help="write the run as a fidelity fixture here when the target is a real "
                                                  "connector (conformance.calibration.fidelity: replayed offline "
                                                  "through the model)")
    r.set_defaults(func=cmd_replay)

    from sinkcheck.audit_cmd import add_audit_parser
    from sinkcheck.gate_cmd import add_gate_parser
    from sinkcheck.preflight_cmd import add_preflight_parser
    from sinkcheck.run_cmd import add_run_parser

    add_run_parser(sub)  # run: set_defaults(func=run_cmd.cmd_run)
    add_gate_parser(sub)  # gate: set_defaults(func=gate_cmd.cmd_gate)
    add_preflight_parser(sub)  # preflight: set_defaults(func=preflight_cmd.cmd_preflight)
    add_audit_parser(sub)  # audit: set_defaults(func=audit_cmd.cmd_audit)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return Exit.USAGE if e.code not in (0, None) else Exit.OK
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return Exit.USAGE
    from sinkcheck.lifecycle import as_interrupted, signals_interrupt

    try:
        with signals_interrupt():  # run and gate keep what finished; every other command just stops
            return int(args.func(args))
    except InputError as e:  # UsageError, and the suite's refusals of a scenario or a target
        print(f"sinkcheck {args.command}: {e}", file=sys.stderr)
        return Exit.USAGE
    except KeyboardInterrupt as e:
        stop = as_interrupted(e)
        print(f"sinkcheck {args.command}: interrupted by {stop.name}", file=sys.stderr)
        return stop.exit_code
    except Exception:
        print(f"sinkcheck {args.command}: internal error (a bug in sinkcheck, please report it):", file=sys.stderr)
        traceback.print_exc()
        return Exit.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
