"""How fast the search goes: scenarios a minute per target and profile, side by side in one run,
and where the time goes (start-up, produce, faults, wait until quiet, observe, model, check).
Figures are printed, never asserted.

    python bench/search.py                         # the embedded default (simulated and real time)
    python bench/search.py --confluent 12.1.9      # and Confluent's connector on a warm stack
    python bench/search.py --iceberg               # and Apache Iceberg's sink on a warm stack

Each row is one `sinkcheck run` (its own output directory): `--profile ci` for the embedded
default (named and generated scenarios), the named scenarios with faults for a Kafka Connect
target (a warm stack: one broker, worker and S3 server for the row; runs that touch only their
own connector go three at a time, those that touch the worker alone on it or on a spare stack).
The warm stack's start-up is printed apart: it is paid once per run of sinkcheck.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from conformance.playing.runner import PHASES


def measure(label: str, args: list[str], out: Path) -> dict:
    from sinkcheck.cli import main

    started = time.monotonic()
    code = main(["run", "--out", str(out), "--failures-dir", str(out / "saved"), "--no-preflight", *args])
    wall = time.monotonic() - started
    doc = json.loads((out / "results.json").read_text())
    runs = doc["results"]
    faulty = [e for e in runs if e["faults_scheduled"]]
    spent = {p: sum(e.get("timings", {}).get(p, 0.0) for e in runs) for p in PHASES}
    in_runs = sum(e["wall_s"] for e in runs)
    # the warm stack's own start-up is paid once per run of sinkcheck, not per scenario
    startup = sum(float(v.split()[0]) for k, v in doc["environment"].items() if k.startswith("warm stack start-up"))
    warm = max(wall - startup, 1e-9)
    return {"label": label, "exit": code, "runs": len(runs), "faulty": len(faulty), "wall": wall,
            "per_min": len(runs) / wall * 60, "faulty_per_min": len(faulty) / wall * 60,
            "stack_startup": startup, "faulty_per_min_warm": len(faulty) / warm * 60,
            "spent": spent, "outside": max(0.0, wall - in_runs), "errors": len(doc["errors"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--confluent", default=None, help="also Confluent's connector at this version (e.g. 12.1.9)")
    ap.add_argument("--realtime", action="store_true", help="also the in-process sink in real time (pysink:realtime)")
    ap.add_argument("--iceberg", action="store_true", help="also Apache Iceberg's sink (its own named scenarios)")
    args = ap.parse_args()
    from conformance.catalog.named import SUITE

    fault_names = [n for n, f in SUITE.items() if f().faults and not n.startswith("multipart")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="sinkcheck-search-") as tmp:
        t = Path(tmp)
        rows.append(measure("pysink · ci (named + generated)", ["--target", "pysink", "--profile", "ci"], t / "sim-ci"))
        rows.append(measure("pysink · generated only, 300", ["--target", "pysink", "--profile", "ci", "--no-named",
                                                             "--examples", "300"], t / "sim-300"))
        if args.realtime:
            rows.append(measure("pysink:realtime · ci", ["--target", "pysink:realtime", "--profile", "ci"], t / "rt"))
        if args.confluent:
            spec = f"kafka-connect:confluent@{args.confluent}"
            picks = [a for n in fault_names for a in ("--scenario", n)]
            rows.append(measure(f"{spec} · named with faults", ["--target", spec, "--examples", "0", *picks],
                                t / "confluent"))
        if args.iceberg:
            from conformance.catalog.iceberg import ICEBERG_OWN

            picks = [a for n in ICEBERG_OWN for a in ("--scenario", n)]
            rows.append(measure("kafka-connect:iceberg · its named scenarios", ["--target", "kafka-connect:iceberg",
                                                                               "--examples", "0", *picks], t / "iceberg"))
    print(f"\n{'target · scenarios':<52}{'runs':>6}{'wall':>9}{'/min':>8}{'faulty/min':>12}{'stack up':>10}"
          f"{'faulty/min warm':>17}{'errors':>8}")
    for r in rows:
        print(f"{r['label']:<52}{r['runs']:>6}{r['wall']:>8.1f}s{r['per_min']:>8.0f}{r['faulty_per_min']:>12.1f}"
              f"{r['stack_startup']:>9.1f}s{r['faulty_per_min_warm']:>17.1f}{r['errors']:>8}")
    print("('stack up': the warm stack's start-up, once per run of sinkcheck; 'faulty/min warm' leaves it out)")
    print("\nwhere the time goes (share of the wall time; 'outside' is stack start-up, generation and reports):")
    print(f"{'':<52}" + "".join(f"{p[:10]:>11}" for p in (*PHASES, "outside")))
    for r in rows:
        cells = [r["spent"][p] for p in PHASES] + [r["outside"]]
        print(f"{r['label']:<52}" + "".join(f"{c / r['wall']:>11.0%}" for c in cells))


if __name__ == "__main__":
    main()
