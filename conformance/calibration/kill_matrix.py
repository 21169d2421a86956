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

# The scenarios aimed at each variant, played first in its row: the two that killed it first when
# every row played the catalog in order (a7de462: 1312 runs, 47 rows of 2 to 65 scenarios; now
# 2 a row). An aim is a guess about where to look, not part of the proof: a row still counts only
# the scenarios that failed a claimed property, and when an aimed one does not kill (a scenario or
# a variant changed) it goes on through the rest of the catalog in order, as before (stale_aims
# names them). A variant without an entry plays the catalog in order.
AIMED: dict[str, tuple[str, ...]] = {
    "commit-before-upload": ("crash-during-complete", "zombie-task"),
    "rotate-on-wallclock": ("late-records-at-hour-edges", "rotate-interval-table"),
    "renumber-after-restart": ("crash-mid-stream", "task-restart-mid-stream"),
    "no-partition-change-rotation": ("late-records-at-hour-edges", "local-midnight-daily"),
    "partial-visible": ("crash-during-complete", "retriable-503-on-upload"),
    "drop-after-retriable": ("retriable-503-on-upload", "error-inside-200-not-applied"),
    "unstable-boundaries": ("crash-mid-stream", "crash-during-complete"),
    "leak-multipart": ("retriable-503-on-upload", "error-inside-200-not-applied"),
    "zombie-overwrite": ("zombie-task", "zombie-with-keys"),
    "last-record-missing": ("late-records-at-hour-edges", "crash-mid-stream"),
    "no-trailing-separator": ("late-records-at-hour-edges", "crash-mid-stream"),
    "ignore-topics-dir": ("naming-options-keys-headers", "bytearray-options"),
    "pad-capped": ("naming-options-keys-headers", "local-midnight-daily"),
    "utc-buckets": ("local-midnight-daily", "dst-time-based-new-york"),
    "dst-fixed-offset": ("dst-hourly-berlin", "dst-hourly-lord-howe"),
    "rotate-interval-exclusive": ("idle-partition-never-flushes", "dst-hourly-berlin"),
    "headers-first-only": ("naming-options-keys-headers", "struct-types-numeric"),
    "keys-unquoted": ("naming-options-keys-headers", "zombie-with-keys"),
    "json-as-received": ("naming-options-keys-headers", "struct-types-numeric"),
    "decimal-always-base64": ("struct-types-numeric", "field-partition-decimals"),
    "error-200-ignored": ("error-inside-200-not-applied", "error-inside-200-with-keys"),
    "field-slash-escaped": ("struct-types-numeric", "field-partition-decimals"),
    "floor-buckets": ("pre-1970-record-field", "pre-1970-record-field-text"),
    "naive-iso-in-zone": ("pre-1970-record-field-text", "offsetless-iso-berlin"),
    "schedule-from-file-open": ("schedule-unaligned-open", "schedule-after-size-rotation"),
    "base-time-kept-on-size": ("pre-1970-daily-size-and-interval", "offsetless-iso-berlin"),
    "no-idle-schedule-reset": ("schedule-unaligned-open", "schedule-idle-burst"),
    "interval-abs-difference": ("pre-1970-daily-size-and-interval", "offsetless-iso-berlin"),
    "flush-size-per-file": ("struct-types-numeric", "dst-time-based-new-york"),
    "tombstone-change-rotates": ("tombstones-amid-interval-rotation", "tombstones-amid-record-field-windows"),
    "epoch-seconds-guess": ("pre-1970-record-field", "offsetless-iso-berlin"),
    "logical-types-plain": ("avro-connect-types", "parquet-connect-types"),
    "no-rotation-on-incompatible": ("avro-converter-schema-versions", "evolution-backward-avro"),
    "projection-drops-default": ("evolution-backward-avro", "evolution-full-parquet"),
    "nested-incompatible-compatible": ("evolution-backward-avro", "evolution-full-parquet"),
    "enum-change-incompatible": ("evolution-backward-avro", "evolution-full-parquet"),
    "projected-map-keeps-order": ("evolution-record-doc-avro", "evolution-union-nested-forward-avro"),
    "topic-dots-replaced": ("avro-connect-types", "parquet-connect-types"),
    "partition-fields-sorted": ("field-partition-unsorted", "decimal-base64"),
    "html-escaping-json": ("avro-converter-to-json-hourly", "dotted-topic"),
    "partition-zero-padded": ("field-partition-unsorted", "two-digit-partition"),
    "part-bounded-files": ("record-larger-than-part", "bytearray-record-larger-than-part"),
    "precondition-as-exists": ("s3-412-without-the-object", "s3-412-without-the-object-two-partitions"),
    "no-such-upload-skips-file": ("s3-no-such-upload-on-complete", "s3-no-such-upload-on-part"),
    "throttling-fatal": ("s3-429-on-part", "s3-429-on-complete"),
    "request-timeout-on-part-fatal": ("s3-request-timeout-on-part", "s3-request-timeout-on-a-later-part"),
    "reset-as-success": ("s3-reset-mid-complete", "s3-reset-mid-part"),
    "bucket-check-strict": ("startup-bucket-head-forbidden", "startup-bucket-in-another-region"),
}


def killers(row: dict[str, list[str]]) -> list[str]:
    """The scenarios that killed a variant (in any claimed property), in the order they ran."""
    return list(dict.fromkeys(n for names in row.values() for n in names))


def play_order(variant: str, names: list[str]) -> list[str]:
    """The order `variant`'s row plays `names` in: its aimed scenarios first (those of them in
    `names`), then the rest in catalog order. The correct sink plays them all, in catalog order."""
    aimed = [n for n in AIMED.get(variant, ()) if n in names] if variant != "correct" else []
    return aimed + [n for n in names if n not in aimed]


def stale_aims(matrix: dict[str, dict[str, list[str]]]) -> dict[str, list[str]]:
    """variant -> its aimed scenarios that did not kill it in a matrix of the whole catalog (its
    row went on through the catalog): AIMED wants updating there. Not a weakness of the suite;
    `weak` judges the kills."""
    return {v: missed for v, row in matrix.items()
            if (missed := [n for n in AIMED.get(v, ()) if n in KILL_SCENARIOS and n not in killers(row)])}


def variant_row(variant: str, names: list[str], out: Path, quiet_timeout_s: float = 30,
                enough: int | None = KILLS_WANTED) -> dict[str, list[str]]:
    """One row of the matrix: property -> the scenarios in which `variant` failed it, played in
    play_order. A faulty variant stops once `enough` scenarios killed it; the correct sink plays
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
        for name in play_order(variant, names):
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
    run in `workers` processes at once (1: in this process, which spawns none); a run of the
    embedded sink is a simulation and busy all along, so more workers than cores gain nothing.
    `progress` hears of each row as it ends: how many are done, the row's outcome and the time
    left."""
    import concurrent.futures
    import multiprocessing

    out = out or Path(tempfile.mkdtemp(prefix="sinkcheck-kill-"))
    names = scenarios or list(KILL_SCENARIOS)
    started = time.monotonic()
    done: dict[str, dict[str, list[str]]] = {}
    # the runs each row is expected to play, for the time left: the correct sink's row is most of
    # them, and dealt out among the workers it ends among the first
    planned = {v: len(names) if v == "correct" or enough is None else min(enough, len(names)) for v in variants}

    def finished(v: str, row: dict[str, list[str]]) -> None:
        done[v] = row
        by = killers(row)
        left = ((time.monotonic() - started) / max(1, sum(planned[d] for d in done))  # runs end at this rate
                * sum(planned[u] for u in variants if u not in done))
        progress(f"[killmatrix] {len(done)}/{len(variants)} variants done · {v}: "
                 + (("clean" if not row else "FAILED") if v == "correct" else f"killed by {len(by)}")
                 + (f" · ~{left:.0f}s left" if len(done) < len(variants) else ""))

    progress(f"[killmatrix] {len(variants)} variants × up to {len(names)} scenarios, {max(1, workers)} at once…")
    if workers <= 1:
        for v in variants:
            finished(v, variant_row(v, names, out, quiet_timeout_s, enough))
        return done
    parts: dict[str, list[dict[str, list[str]]]] = {}
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        rows = {pool.submit(variant_row, v, chunk, out, quiet_timeout_s, enough): (v, len(chunks))
                for v in variants for chunks in [row_chunks(v, names, workers)] for chunk in chunks}
        for f in concurrent.futures.as_completed(rows):
            v, chunks = rows[f]
            parts.setdefault(v, []).append(f.result())
            if len(parts[v]) == chunks:
                finished(v, merged_row(parts[v], names))
    return {v: done[v] for v in variants}


def row_chunks(variant: str, names: list[str], workers: int) -> list[list[str]]:
    """The scenarios of a row, in the pieces the workers play it in. The correct sink plays every
    scenario where a variant stops at its aimed two: its row alone is most of the matrix's runs,
    so it is dealt out among the workers (every `workers`-th scenario to a piece, which spreads
    the costly Avro and Parquet scenarios, adjacent in the catalog) instead of ending last."""
    if variant != "correct" or workers <= 1:
        return [names]
    return [chunk for chunk in (names[i::workers] for i in range(workers)) if chunk]


def merged_row(parts: list[dict[str, list[str]]], names: list[str]) -> dict[str, list[str]]:
    """One row from its pieces (row_chunks): each property's scenarios in catalog order, the
    properties in the order of their first failing scenario, as one process playing the row
    would have them."""
    row: dict[str, list[str]] = {}
    for part in parts:
        for prop, failed_in in part.items():
            row.setdefault(prop, []).extend(failed_in)
    at = {n: i for i, n in enumerate(names)}
    ordered = {prop: sorted(failed_in, key=at.__getitem__) for prop, failed_in in row.items()}
    return dict(sorted(ordered.items(), key=lambda item: at[item[1][0]]))


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
    is killed by fewer than two scenarios or the correct sink fails a claimed property. With
    `--connector-config F`, the matrix under the user's config (conformance.calibration.user_kill_matrix):
    exit 1 when a variant whose rule F exercises survives, 4 when `sinkcheck run` refuses F."""
    import argparse

    from adapters.pysink import VARIANTS
    from conformance.judging.claims import PROPERTIES

    ap = argparse.ArgumentParser(prog="python -m conformance.calibration.kill_matrix", description=main.__doc__)
    ap.add_argument("variants", nargs="*", help=f"variants (default: correct and all of {', '.join(VARIANTS)})")
    ap.add_argument("--out", type=Path, default=None, help="where the runs' logs go (default: a temporary directory)")
    ap.add_argument("--workers", type=int, default=4, help="variants run at once, each in its own process (default 4)")
    ap.add_argument("--connector-config", default=None, metavar="F",
                    help="play each variant under this connector JSON as `sinkcheck run --target pysink:<variant> "
                         "--connector-config F --profile ci` does; the variants whose rule F exercises must be killed")
    ap.add_argument("--unexercised-too", action="store_true",
                    help="with --connector-config: play the variants F does not exercise as well (a kill among them "
                         "says the variant's rule is one F uses)")
    args = ap.parse_args(argv)
    if args.connector_config is not None:
        from conformance.calibration import user_kill_matrix

        return user_kill_matrix.main(args.connector_config, args.variants, args.out, args.workers, KILLS_WANTED,
                                     args.unexercised_too)
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
