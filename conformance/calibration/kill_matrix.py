"""The kill matrix: faulty variants of the Python sink × claimed properties. Proof that the
suite catches real bugs: every variant must fail a claimed property in at least two scenarios
(one scenario alone is a thin net), and the correct sink none."""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from conformance.catalog.named import KILL_SCENARIOS
from conformance.inputs.targets import simulated
from conformance.playing.runner import RunResult, run_scenario


KILLS_WANTED = 2  # scenarios that must kill each variant


def killers(row: dict[str, list[str]]) -> list[str]:
    """The scenarios that killed a variant (in any claimed property), in the order they ran."""
    return list(dict.fromkeys(n for names in row.values() for n in names))


def variant_row(variant: str, names: list[str], out: Path, quiet_timeout_s: float = 30,
                enough: int | None = KILLS_WANTED) -> dict[str, list[str]]:
    """One row of the matrix: property -> the scenarios in which `variant` failed it, in catalog
    order. A faulty variant stops once `enough` scenarios killed it; the correct sink plays
    them all."""
    target = "pysink" if variant == "correct" else f"pysink:{variant}"
    row: dict[str, list[str]] = {}
    # pysink[:<variant>] is the deterministic simulation, its S3 in memory: run_scenario sets any
    # S3 server aside for it, so only a real-time spec gets one (moto cost a row ~0.6 s of CPU
    # and 2 s of wall time to start, for nothing)
    s3 = None
    if not simulated(target):
        from adapters.processes.moto import MotoS3Server

        s3 = MotoS3Server(out / variant / "s3").start()
    try:
        for name in names:
            if variant != "correct" and enough is not None and len(killers(row)) >= enough:
                break
            res: RunResult = run_scenario(KILL_SCENARIOS[name](), target, out / variant / name,
                                          quiet_timeout_s=quiet_timeout_s, s3_server=s3)
            for verdict in res.failed():
                row.setdefault(verdict.property, []).append(name)
    finally:
        if s3 is not None:
            s3.stop()
    return row


def kill_matrix(variants: list[str], scenarios: list[str] | None = None, out: Path | None = None,
                quiet_timeout_s: float = 30, enough: int | None = KILLS_WANTED,
                workers: int = 4, progress: Callable[[str], None] = lambda text: None) -> dict[str, dict[str, list[str]]]:
    """variant -> property -> the scenarios in which it failed (claimed properties only). Rows
    run in `workers` processes at once: a run of the embedded sink mostly waits (for the sink to
    settle, for a scenario's wall-clock pauses), so more rows than cores fit. `progress` hears
    of each row as it ends: how many are done, the row's outcome and the time left."""
    import concurrent.futures
    import multiprocessing

    out = out or Path(tempfile.mkdtemp(prefix="sinkcheck-kill-"))
    names = scenarios or list(KILL_SCENARIOS)
    started = time.monotonic()
    done: dict[str, dict[str, list[str]]] = {}

    def finished(v: str, row: dict[str, list[str]]) -> None:
        done[v] = row
        by = killers(row)
        left = (time.monotonic() - started) / len(done) * (len(variants) - len(done))  # rows end at this rate
        progress(f"[killmatrix] {len(done)}/{len(variants)} variants done · {v}: "
                 + (("clean" if not row else "FAILED") if v == "correct" else f"killed by {len(by)}")
                 + (f" · ~{left:.0f}s left" if len(done) < len(variants) else ""))

    progress(f"[killmatrix] {len(variants)} variants × up to {len(names)} scenarios, {max(1, workers)} at once…")
    if workers <= 1:
        for v in variants:
            finished(v, variant_row(v, names, out, quiet_timeout_s, enough))
        return done
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = {pool.submit(variant_row, v, names, out, quiet_timeout_s, enough): v for v in variants}
        for f in concurrent.futures.as_completed(rows):
            finished(rows[f], f.result())
    return {v: done[v] for v in variants}


def render(matrix: dict[str, dict[str, list[str]]], properties: list[str]) -> str:
    width = max(len(v) for v in matrix) + 2
    head = " " * width + " ".join(f"{p[:9]:>9}" for p in properties)
    lines = [head]
    for v, row in matrix.items():
        cells = " ".join(f"{('KILL' if p in row else '.'):>9}" for p in properties)
        by = killers(row)
        verdict = ("clean" if not row else "FAILED") if v == "correct" else (
            f"killed by {len(by)}: {', '.join(by)}" if len(by) >= KILLS_WANTED else
            f"SURVIVED {len(by)} scenario(s)" if by else "SURVIVED")
        lines.append(f"{v:<{width}}{cells}   {verdict}")
    return "\n".join(lines)


def weak(matrix: dict[str, dict[str, list[str]]]) -> list[str]:
    """Variants killed by fewer than KILLS_WANTED scenarios, and a correct sink that failed."""
    return [v for v, row in matrix.items()
            if (v == "correct" and row) or (v != "correct" and len(killers(row)) < KILLS_WANTED)]


def main(argv: list[str] | None = None) -> int:
    """`python -m conformance.calibration.kill_matrix [VARIANT ...]`: run the kill scenarios against the correct
    Python sink and each faulty variant; print the matrix and the wall time. Exit 1 when a variant
    is killed by fewer than two scenarios or the correct sink fails a claimed property."""
    import argparse

    from adapters.pysink import VARIANTS
    from conformance.judging.claims import PROPERTIES

    ap = argparse.ArgumentParser(prog="python -m conformance.calibration.kill_matrix", description=main.__doc__)
    ap.add_argument("variants", nargs="*", help=f"variants (default: correct and all of {', '.join(VARIANTS)})")
    ap.add_argument("--out", type=Path, default=None, help="where the runs' logs go (default: a temporary directory)")
    ap.add_argument("--workers", type=int, default=4, help="variants run at once, each in its own process (default 4)")
    args = ap.parse_args(argv)
    variants = args.variants or ["correct", *VARIANTS]
    started = time.monotonic()
    tty = sys.stderr.isatty()

    def progress(text: str) -> None:  # one updating line on a terminal, a line each otherwise
        sys.stderr.write(("\r\x1b[K" + text) if tty else text + "\n")
        sys.stderr.flush()

    m = kill_matrix(variants, out=args.out, workers=args.workers, progress=progress)
    if tty:
        sys.stderr.write("\r\x1b[K")
    print(f"kill matrix (variant x claimed property), {time.monotonic() - started:.0f}s:")
    print(render(m, list(PROPERTIES)))
    return 1 if weak(m) else 0


if __name__ == "__main__":
    raise SystemExit(main())
