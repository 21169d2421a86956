"""The kill matrix: faulty variants of the Python sink × claimed properties. Proof that the
suite catches real bugs: every variant must fail at least one claimed property, and the
correct sink none."""
from __future__ import annotations

import tempfile
from pathlib import Path

from conformance.named import KILL_SCENARIOS
from conformance.runner import RunResult, run_scenario


def kill_matrix(variants: list[str], scenarios: list[str] | None = None, out: Path | None = None,
                quiet_timeout_s: float = 30) -> dict[str, dict[str, list[str]]]:
    """variant -> property -> the scenarios in which it failed (claimed properties only)."""
    from adapters.supervisor import MotoS3Server

    out = out or Path(tempfile.mkdtemp(prefix="sinkcheck-kill-"))
    names = scenarios or list(KILL_SCENARIOS)
    matrix: dict[str, dict[str, list[str]]] = {}
    # one S3 server for every run, emptied before each (runs are one after another)
    s3 = MotoS3Server(out / "s3").start()
    try:
        for v in variants:
            target = "pysink" if v == "correct" else f"pysink:{v}"
            row: dict[str, list[str]] = {}
            for name in names:
                res: RunResult = run_scenario(KILL_SCENARIOS[name](), target, out / v / name,
                                              quiet_timeout_s=quiet_timeout_s, s3_server=s3)
                for verdict in res.failed():
                    row.setdefault(verdict.property, []).append(name)
            matrix[v] = row
    finally:
        s3.stop()
    return matrix


def render(matrix: dict[str, dict[str, list[str]]], properties: list[str]) -> str:
    width = max(len(v) for v in matrix) + 2
    head = " " * width + " ".join(f"{p[:9]:>9}" for p in properties)
    lines = [head]
    for v, row in matrix.items():
        cells = " ".join(f"{('KILL' if p in row else '.'):>9}" for p in properties)
        lines.append(f"{v:<{width}}{cells}   {'killed' if row else ('clean' if v == 'correct' else 'SURVIVED')}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """`python -m conformance.killmatrix [VARIANT ...]`: run the kill scenarios against the correct
    Python sink and each faulty variant; print the matrix and the wall time. Exit 1 when a variant
    survives or the correct sink fails a claimed property."""
    import argparse
    import time

    from adapters.pysink import VARIANTS
    from conformance.claims import PROPERTIES

    ap = argparse.ArgumentParser(prog="python -m conformance.killmatrix", description=main.__doc__)
    ap.add_argument("variants", nargs="*", help=f"variants (default: correct and all of {', '.join(VARIANTS)})")
    ap.add_argument("--out", type=Path, default=None, help="where the runs' logs go (default: a temporary directory)")
    args = ap.parse_args(argv)
    variants = args.variants or ["correct", *VARIANTS]
    started = time.monotonic()
    m = kill_matrix(variants, out=args.out)
    print(f"kill matrix (variant x claimed property), {time.monotonic() - started:.0f}s:")
    print(render(m, list(PROPERTIES)))
    bad = [v for v, row in m.items() if (v == "correct") == bool(row)]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
