"""How much the generated scenarios test, per profile, on the correct Python sink: the share of
scenarios the model gives an exact object set for (the rest get constraints), overall and for
the wall-clock configs on their own rows (rotate.schedule.interval.ms, the Wallclock extractor),
the share that ended unknown (a fault never fired), each fault kind fired / scheduled, and how
many scenarios meet each class of production input (conformance.generators.input_classes: topic
names, text, field lists, partition numbers, record shapes, headers;
tests/test_evolution_generator.py asserts `ci`'s generated scenarios meet every one), and for
each profile the table of S3's error answers (status and code) by the operation they answered
(fired / scheduled; `--profile thorough` on a simulated target plays every pair: the status
sweep of conformance.playing.generated). Figures are printed side by side, never asserted.

    python bench/coverage.py [--profiles ci,default,thorough] [--seed 1] [--target pysink]

`ci` is derandomized as `sinkcheck run --profile ci` is; `default` and `thorough` draw from
`--seed` so a rerun prints the same figures.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path


WALL_KINDS = ("scheduled rotation", "Wallclock extractor")
TIME_PARTITIONERS = ("TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner")


def wall_kind(cfg: dict) -> str | None:
    """Which wall-clock rule decides a config's boundaries, if one does."""
    if int(cfg.get("rotate.schedule.interval.ms", "-1") or -1) > 0:
        return "scheduled rotation"
    time_based = cfg.get("partitioner.class", "").rsplit(".", 1)[-1] in TIME_PARTITIONERS
    if time_based and cfg.get("timestamp.extractor", "Wallclock") == "Wallclock":
        return "Wallclock extractor"
    return None


def measure(profile: str, seed: int, target: str, out: Path) -> dict:
    from sinkcheck.cli import main

    started = time.monotonic()
    args = ["run", "--target", target, "--no-named", "--profile", profile, "--out", str(out),
            "--failures-dir", str(out / "saved"), "--no-preflight"]
    if profile != "ci":
        args += ["--seed", str(seed)]
    code = main(args)
    doc = json.loads((out / "results.json").read_text())
    runs = [e for e in doc["results"] if e["origin"] == "generated"]
    n = len(runs) or 1

    def share(kind: str) -> tuple[int, int]:
        """(exact, runs) among the runs of one wall-clock kind."""
        mine = [e for e in runs if wall_kind(e.get("connector") or {}) == kind]
        return sum(1 for e in mine if e["expected_objects"] is not None), len(mine)

    drawn = drawn_scenarios(profile, None if profile == "ci" else seed, target)
    return {
        "evolving": dict(evolving_streams(drawn)),
        "changes": evolution_changes(drawn),
        "inputs": input_class_counts(drawn),
        "by_kind": {k: share(k) for k in WALL_KINDS},
        "profile": profile, "exit": code, "runs": len(runs), "wall_s": time.monotonic() - started,
        "exact": sum(1 for e in runs if e["expected_objects"] is not None) / n,
        "unknown": sum(1 for e in runs if e["status"] == "unknown") / n,
        "failed": sum(1 for e in runs if e["status"] == "fail"),
        "faults": doc["fault_coverage"],
        "statuses": status_table(runs),
        "seed": doc["seed"],
    }


def status_table(runs: list[dict]) -> dict[tuple[str, str], list[int]]:
    """(status and code, operation) -> [fired, scheduled] over the runs' S3 `fail` rules."""
    out: dict[tuple[str, str], list[int]] = {}
    for e in runs:
        for f in e.get("faults") or []:
            p = f.get("params") or {}
            if f["kind"] != "s3" or p.get("action") != "fail":
                continue
            cell = out.setdefault((f"{p.get('status')} {p.get('code') or ''}".strip(), str(p.get("operation"))), [0, 0])
            cell[0] += 1 if f["fired"] else 0
            cell[1] += 1
    return out


def print_status_table(profile: str, table: dict[tuple[str, str], list[int]]) -> None:
    from adapters.s3.rules import S3_STATUSES, s3_answers
    from conformance.generators.faults import STATUS_OPERATIONS

    short = {"CreateMultipartUpload": "Create", "UploadPart": "Part", "CompleteMultipartUpload": "Complete",
             "AbortMultipartUpload": "Abort", "HeadObject": "HeadObject"}
    rows = [f"{s} {c}" for s, c in S3_STATUSES]
    rows += sorted({r for r, _ in table} - set(rows))
    cols = list(STATUS_OPERATIONS)

    def answered(r: str, o: str) -> bool:  # a pair S3 never answers is not drawn: shown as "never"
        return s3_answers(r.partition(" ")[2], o)

    pairs = [(r, o) for r in rows for o in cols if answered(r, o)]
    print(f"\nS3 error answers by operation, {profile} (fired / scheduled; "
          f"{sum(1 for p in pairs if table.get(p, [0])[0])} of {len(pairs)} pairs fired; 'never': S3 does not "
          "answer that call with that code):")
    print(f"{'status':<32}" + "".join(f"{short.get(o, o):>12}" for o in cols))
    for r in rows:
        print(f"{r:<32}" + "".join(f"{'%d/%d' % tuple(table[(r, o)]) if (r, o) in table else '-' if answered(r, o) else 'never':>12}"
                                   for o in cols))


def drawn_scenarios(profile: str, seed: int | None, target: str) -> list:
    """The generated scenarios `run` draws for the profile on `target` (the same seed, the same list,
    whatever either process imported before: conformance.generators.strategies.seed_only_draws)."""
    from conformance.inputs.targets import target_kind
    from conformance.playing.generated import generated_scenarios
    from conformance.playing.session import PROFILES, SIMULATED_EXAMPLES

    n, derandomize, max_records = PROFILES[profile]
    if target.split(":")[0] == "pysink" and ":broker" not in target:
        n = SIMULATED_EXAMPLES[profile]
    return generated_scenarios(n, seed, derandomize, max_records, kinds=(target_kind(target),))


def evolution_changes(scenarios: list) -> dict:
    """(converter, change) -> generated streams with a version that makes it."""
    from conformance.generators.evolution import evolution_changes as changes

    return dict(changes(scenarios))


def evolving_streams(scenarios: list) -> dict:
    """(converter, schema.compatibility) -> generated streams that write more than one value
    schema under it."""
    from conformance.generators.evolution import evolving_streams as streams

    return dict(streams(scenarios))


def input_class_counts(scenarios: list) -> dict[str, int]:
    """Input class -> how many of `scenarios` meet it (every class listed, met or not)."""
    from collections import Counter

    from conformance.generators.input_classes import INPUT_CLASSES, input_classes

    met = Counter(c for sc in scenarios for c in input_classes(sc))
    return {c: met[c] for c in INPUT_CLASSES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", default="ci,default,thorough")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", default="pysink")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sinkcheck-coverage-") as tmp:
        for profile in args.profiles.split(","):
            rows.append(measure(profile, args.seed, args.target, Path(tmp) / profile))
    print(f"\ngenerated scenarios on {args.target}, side by side:")
    print(f"{'profile':<10}{'seed':>10}{'runs':>6}{'exact':>8}{'unknown':>9}{'failed':>8}{'wall':>9}")
    for r in rows:
        print(f"{r['profile']:<10}{str(r['seed']):>10}{r['runs']:>6}{r['exact']:>8.0%}{r['unknown']:>9.1%}"
              f"{r['failed']:>8}{r['wall_s']:>8.0f}s")
    print("\nexact object sets among the wall-clock configs (exact / runs):")
    print(f"{'rule':<24}" + "".join(f"{r['profile']:>12}" for r in rows))
    for k in WALL_KINDS:
        print(f"{k:<24}" + "".join(f"{'%d/%d' % r['by_kind'][k]:>12}" for r in rows))
    print("\nstreams with evolving value schemas, by converter and schema.compatibility (R14):")
    print(f"{'converter / mode':<24}" + "".join(f"{r['profile']:>12}" for r in rows))
    for conv in ("json-schemas", "avro", "protobuf"):
        for mode in ("NONE", "BACKWARD", "FORWARD", "FULL"):
            print(f"{conv + ' ' + mode:<24}" + "".join(f"{r['evolving'].get((conv, mode), 0):>12}" for r in rows))
    print("\nthe changes those streams' versions make, by converter (streams with one):")
    print(f"{'converter / change':<44}" + "".join(f"{r['profile']:>12}" for r in rows))
    for conv, change in sorted({k for r in rows for k in r["changes"]}):
        print(f"{conv + ' ' + change:<44}" + "".join(f"{r['changes'].get((conv, change), 0):>12}" for r in rows))
    print("\nscenarios meeting each class of production input (conformance.generators.input_classes):")
    print(f"{'input class':<32}" + "".join(f"{r['profile']:>12}" for r in rows))
    for c in rows[0]["inputs"]:
        print(f"{c:<32}" + "".join(f"{r['inputs'][c]:>12}" for r in rows))
    print("\nfault kinds, fired / scheduled:")
    kinds = sorted({k for r in rows for k in r["faults"]})
    print(f"{'fault':<48}" + "".join(f"{r['profile']:>12}" for r in rows))
    for k in kinds:
        cells = []
        for r in rows:
            c = r["faults"].get(k, {}).get(args.target)
            cells.append(f"{c['fired']}/{c['scheduled']}" if c else "-")
        print(f"{k:<48}" + "".join(f"{c:>12}" for c in cells))
    for r in rows:
        print_status_table(r["profile"], r["statuses"])


if __name__ == "__main__":
    main()
