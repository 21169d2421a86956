"""Real connectors at the speed of their commits: for each real sink, `sinkcheck run --profile ci`
on a warm stack, its runs a minute and where each run's time goes by phase (start-up, produce,
faults, wait until quiet, observe, stop, model, check; the warm stack's start-up apart). Figures are printed, never asserted.

    python bench/real_rate.py                                  # every real sink, this tree
    python bench/real_rate.py --sink confluent@12.1.9          # one sink
    python bench/real_rate.py --sink confluent@12.1.9 --against HEAD~3
                                                               # and the same, side by side, on an
                                                               # older tree (a git worktree of it)
    python bench/real_rate.py --from out/results.json          # a run already made: no new run
    python bench/real_rate.py --from old/results.json --from new/results.json
                                                               # two runs: rates, and every named
                                                               # scenario whose verdicts differ

Each row is one `sinkcheck run` in its own process and output directory, one after another (two
sinks at once on two cores would measure each other). With --against, each sink runs on the
older tree first and then on this one, so both rows of a sink see the same machine.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SINKS = ("confluent@12.1.9", "aiven@3.4.2", "lenses@11.7.2", "camel@4.18.0", "iceberg")
# what issue #36 asks of each: Confluent's connector 12 runs a minute, the others 6
WANTED_PER_MIN = {"confluent": 12.0}
WANTED_OTHERWISE = 6.0
PHASES = ("start-up", "produce", "faults", "wait until quiet", "observe", "stop", "model", "check")


@dataclass
class Rate:
    """One `sinkcheck run`'s pace: runs a minute over its wall time and seconds per phase."""
    label: str
    runs: int
    wall_s: float
    exit_code: int | None
    errors: int
    stack_start_s: float
    spent: dict[str, float] = field(default_factory=dict)

    @property
    def per_min(self) -> float:
        return self.runs / max(self.wall_s, 1e-9) * 60

    @property
    def overlap(self) -> float:
        """How many runs went at once on average (several connectors on one warm worker): the
        phases' seconds add up past the wall time then."""
        return sum(self.spent.values()) / max(self.wall_s - self.stack_start_s, 1e-9)


def rate_of(doc: dict, label: str, wall_s: float | None = None, exit_code: int | None = None) -> Rate:
    runs = doc.get("results", [])
    spent = {p: sum((r.get("timings") or {}).get(p, 0.0) for r in runs) for p in PHASES}
    stack = sum(float(str(v).split()[0]) for k, v in (doc.get("environment") or {}).items()
                if k.startswith("warm stack start-up"))
    return Rate(label, len(runs), wall_s if wall_s is not None else float(doc.get("duration_s") or 0.0),
                exit_code, len(doc.get("errors") or []), stack, spent)


def verdicts_of(doc: dict) -> dict[str, dict[str, str]]:
    """Named scenario -> claimed property -> status, of one run's results.json (generated
    scenarios are drawn per tree and are not compared by name)."""
    out: dict[str, dict[str, str]] = {}
    for r in doc.get("results", []):
        if r.get("origin") == "generated":
            continue
        out[r["scenario"]] = {v["property"]: v["status"] for v in r.get("verdicts", []) if v.get("claimed")}
    return out


def verdict_changes(before: dict, after: dict) -> list[str]:
    """One line per named scenario both runs played whose claimed verdicts differ, and one per
    scenario only one of them played."""
    a, b = verdicts_of(before), verdicts_of(after)
    lines = []
    for name in sorted(set(a) | set(b)):
        if name not in b:
            lines.append(f"{name}: played before only")
        elif name not in a:
            lines.append(f"{name}: played after only")
        elif a[name] != b[name]:
            diff = ", ".join(f"{p} {a[name].get(p, '-')} -> {b[name].get(p, '-')}"
                             for p in sorted(set(a[name]) | set(b[name])) if a[name].get(p) != b[name].get(p))
            lines.append(f"{name}: {diff}")
    return lines


def render_changes(before: dict, after: dict, label: str) -> str:
    changes = verdict_changes(before, after)
    same = len(set(verdicts_of(before)) & set(verdicts_of(after))) - sum(": played" not in c for c in changes)
    head = f"verdicts, {label}: {same} named scenarios the same"
    return head + ("" if not changes else f", {len(changes)} not:\n  " + "\n  ".join(changes))


def shared_layouts() -> Path | None:
    sys.path.insert(0, str(ROOT))
    try:
        from adapters.connect.plugins import shared_root
    finally:
        sys.path.remove(str(ROOT))
    return shared_root()


def run_once(tree: Path, sink: str, profile: str, out: Path, extra: list[str]) -> Rate:
    """`sinkcheck run --target kafka-connect:SINK --profile PROFILE` in `tree`'s code, timed."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    shared = shared_layouts()
    if shared is not None:  # an older tree's worktree is not beside the shared layouts this checkout finds
        env.setdefault("SINKCHECK_SHARED", str(shared))
    cmd = [sys.executable, "-m", "sinkcheck.cli", "run", "--target", f"kafka-connect:{sink}", "--profile", profile,
           "--out", str(out), "--no-preflight", *extra]
    started = time.monotonic()
    print(f"[real_rate] {tree.name or tree}: {' '.join(cmd[3:])}", file=sys.stderr, flush=True)
    code = subprocess.call(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - started
    results = out / "results.json"
    if not results.exists():
        return Rate(f"{sink} ({tree.name})", 0, wall, code, 1, 0.0, {p: 0.0 for p in PHASES})
    return rate_of(json.loads(results.read_text()), f"{sink} ({tree.name})", wall, code)


def wanted(label: str) -> float:
    return next((v for k, v in WANTED_PER_MIN.items() if label.startswith(k)), WANTED_OTHERWISE)


def render(rows: list[Rate]) -> str:
    out = [f"{'sink (tree)':<44}{'runs':>6}{'wall':>9}{'/min':>7}{'wanted':>8}{'stack up':>10}{'exit':>6}{'errors':>8}"]
    for r in rows:
        out.append(f"{r.label:<44}{r.runs:>6}{r.wall_s:>8.0f}s{r.per_min:>7.1f}{wanted(r.label):>8.0f}"
                   f"{r.stack_start_s:>9.0f}s{str(r.exit_code):>6}{r.errors:>8}")
    out.append("\nwhere the time goes (share of the runs' summed time; 'at once': runs in flight on average):")
    out.append(f"{'':<44}" + "".join(f"{p[:10]:>11}" for p in PHASES) + f"{'at once':>9}")
    for r in rows:
        total = max(sum(r.spent.values()), 1e-9)
        out.append(f"{r.label:<44}" + "".join(f"{r.spent[p] / total:>11.0%}" for p in PHASES) + f"{r.overlap:>9.1f}")
    return "\n".join(out)


def worktree_of(rev: str, parent: Path) -> Path:
    path = parent / f"tree-{rev.replace('/', '_').replace('~', '-')}"
    subprocess.run(["git", "worktree", "add", "--detach", str(path), rev], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sink", action="append", help=f"a real sink (default: all of {', '.join(SINKS)})")
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--against", help="also run each sink on this git revision's tree, side by side")
    ap.add_argument("--from", dest="from_", action="append", type=Path,
                    help="a results.json of a run already made (repeatable): print its figures only")
    ap.add_argument("--keep", type=Path, help="write each run's output here (DIR/old-N, DIR/new-N), kept for --from")
    ap.add_argument("extra", nargs="*", help="more `sinkcheck run` arguments, after --")
    args = ap.parse_args(argv)
    if args.from_:
        docs = [(p, json.loads(p.read_text())) for p in args.from_]
        rows = [rate_of(d, f"{','.join(t.removeprefix('kafka-connect:') for t in d.get('targets') or [])} "
                           f"({p.parent.name})") for p, d in docs]
        print(render(rows))
        for (pa, a), (pb, b) in zip(docs, docs[1:]):
            print(render_changes(a, b, f"{pa.parent.name} -> {pb.parent.name}"))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="sinkcheck-real-rate-") as tmp:
        t = args.keep or Path(tmp)
        t.mkdir(parents=True, exist_ok=True)
        old = worktree_of(args.against, t) if args.against else None
        try:
            changes = []
            for sink in args.sink or SINKS:
                if old is not None:
                    before = t / f"old-{len(rows)}"
                    rows.append(run_once(old, sink, args.profile, before, args.extra))
                after = t / f"new-{len(rows)}"
                rows.append(run_once(ROOT, sink, args.profile, after, args.extra))
                if old is not None and (before / "results.json").exists() and (after / "results.json").exists():
                    changes.append(render_changes(json.loads((before / "results.json").read_text()),
                                                  json.loads((after / "results.json").read_text()),
                                                  f"{sink}, {args.against} -> this tree"))
        finally:
            if old is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)
    print(render(rows))
    for c in changes:
        print(c)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
