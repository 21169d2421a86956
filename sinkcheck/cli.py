"""`sinkcheck` command line."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Sequence

from conformance.session import InputError
from sinkcheck.exitcodes import Exit, UsageError


def _read(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        raise UsageError(f"{what} file not found: {path}") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} file {path}: {e.strerror}") from None


def cmd_model(args: argparse.Namespace) -> int:
    from reference_impl.config import ConfigError, ConfigSyntaxError, parse_config
    from reference_impl.model import InputError, expect, parse_puts_lines, parse_records_lines
    from reference_impl.versions import VersionError

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
    puts = None
    try:
        if args.puts:
            puts = parse_puts_lines(_read(args.puts, "put schedule").split("\n"), args.puts)
        if args.engine == "local" and not args.records.endswith(".parquet"):
            records = parse_records_lines(_read(args.records, "records").split("\n"), args.records)
    except InputError as e:
        raise UsageError(str(e)) from None

    existing = frozenset(args.existing_key or ())
    if args.existing_keys:
        existing |= {k.strip() for k in _read(args.existing_keys, "existing keys").splitlines() if k.strip()}
    started = time.monotonic()
    if args.engine == "local" and args.records.endswith(".parquet"):
        import pyarrow.parquet as pq

        from reference_impl.columns import expect_arrow

        if puts is not None or existing:
            raise UsageError("--records: a Parquet dump has no put order; give RECORDS.jsonl with --puts/--existing-key")
        try:
            exp = expect_arrow(cfg, pq.read_table(args.records), jvm_zone=args.jvm_zone)
        except ValueError as e:
            raise UsageError(str(e)) from None
    elif args.engine == "local":
        exp = expect(cfg, records, puts, engine="local", jvm_zone=args.jvm_zone, existing_keys=existing)
    else:
        from reference_impl.spark_engine import expect_spark, records_dataframe, spark_session

        if not os.path.exists(args.records):
            raise UsageError(f"records file not found: {args.records}")
        spark = spark_session(args.spark_master)
        try:
            df = records_dataframe(spark, args.records)
            try:
                exp = expect_spark(cfg, df, puts, jvm_zone=args.jvm_zone, manifest_path=args.manifest,
                                   existing_keys=existing, clustered=args.clustered)
            except InputError as e:
                raise UsageError(str(e)) from None
        finally:
            if not args.spark_master:
                spark.stop()
    out = exp.to_json()
    if args.contents:
        if args.engine != "local":
            raise UsageError("--contents needs --engine local (the Spark engine never brings records to the driver)")
        from reference_impl.contents import object_contents

        by_tp_offset = {(r.topic, r.partition, r.offset): r for r in records}
        for o, j in zip(exp.objects, out["objects"] if isinstance(out["objects"], list) else []):
            recs = {off: by_tp_offset[(o.topic, o.partition, off)] for off in o.offsets}
            j["contents"] = object_contents(cfg, o, recs)
    text = json.dumps(out, indent=2) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
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


def cmd_replay(args: argparse.Namespace) -> int:
    from conformance.pytest_plugin import failure_block
    from conformance.runner import run_scenario
    from conformance.scenario import Scenario, ScenarioError
    from conformance.targets import TargetSpecError

    from sinkcheck.options import check_target_spec

    try:
        scenario = Scenario.load(args.scenario)
    except ScenarioError as e:
        raise UsageError(str(e)) from None
    check_target_spec(args.target, args.plugin_path, lambda m: print(m, file=sys.stderr))
    from conformance.claims import CONFLUENT_SEMANTICS
    from conformance.targets import target_kind
    from sinkcheck.options import refuse_unhonoured

    s3_sink = args.target.startswith("model") or target_kind(args.target) in CONFLUENT_SEMANTICS
    refuse_unhonoured(scenario.connector, f"{args.scenario}: its connector config", s3_sink)
    out = Path(args.out or f".sinkcheck/replay/{Path(args.scenario).stem}")
    out.mkdir(parents=True, exist_ok=True)
    scenario.save(out / "scenario.json")
    print(f"replaying {args.scenario} ({len(scenario.records)} records, {len(scenario.faults)} faults) "
          f"against {args.target} ...", file=sys.stderr)
    try:
        result = run_scenario(scenario, args.target, out, plugin_path=args.plugin_path)
    except (TargetSpecError, ScenarioError) as e:
        raise UsageError(str(e)) from None
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
    print(f"{result.status.upper()}: {args.target} on {scenario.name} in {result.wall_s:.1f}s "
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
    m.add_argument("--out", required=True, help="EXPECTED.json ('-' for stdout)")
    m.set_defaults(func=cmd_model)

    r = sub.add_parser("replay", help="run a saved scenario again against a target")
    r.add_argument("scenario", help="SCENARIO.json (saved by a run, or written by hand)")
    r.add_argument("--target", default="pysink", help="pysink[:broker][:<variant>], kafka-connect:<aiven|camel|confluent>, module:Class")
    r.add_argument("--plugin-path", action="append", default=[], help="Kafka Connect plugin directory (Confluent)")
    r.add_argument("--out", default=None, help="where the run's logs go (default .sinkcheck/replay/<name>)")
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
    try:
        return int(args.func(args))
    except InputError as e:  # UsageError, and the suite's refusals of a scenario or a target
        print(f"sinkcheck {args.command}: {e}", file=sys.stderr)
        return Exit.USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return Exit.INTERNAL
    except Exception:
        print(f"sinkcheck {args.command}: internal error (a bug in sinkcheck, please report it):", file=sys.stderr)
        traceback.print_exc()
        return Exit.INTERNAL


if __name__ == "__main__":
    sys.exit(main())
