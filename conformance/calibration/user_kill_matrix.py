"""The kill matrix under a user's connector config (issue 38): does a faulty sink still fail
`sinkcheck run --connector-config F`? Each faulty variant of the Python sink plays the runs
`sinkcheck run --target pysink:<variant> --connector-config F --profile ci` plays (the named
scenarios fitted and adapted to F, those F leaves nothing of not applicable, then the generated
ones drawn for F), and where F exercises the rule the variant breaks (its class's `unexercised`
rule, adapters/pysink/targets/exercised.py) it must be killed: a claimed property fails in one of
them, so the run exits 1. A kill counts only where the correct sink passes that scenario; a run
that could not complete (it would end the command with 3) is no kill. The variants F does not
exercise are listed with the reason, not played.

A row plays its aimed scenarios first (the catalog's AIMED, those F leaves applicable), then the
named ones in the order `run` plays them, then the generated ones (drawn once, only for the rows
the named ones did not kill enough), and stops at `enough` killers.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from conformance.calibration.kill_matrix import AIMED, KILLS_WANTED

PROFILE = "ci"  # the profile the matrix plays: derandomized, so the same runs every time
SEED = 0  # the seed `run --profile ci` plays with
TARGET = "pysink"


@dataclass(frozen=True)
class Plan:
    """What `sinkcheck run --target pysink --connector-config F --profile ci` plays under `config`:
    the named scenarios that apply, as played (fitted, adapted), in its order; those that do
    not, with the reason; the generated ones are drawn apart (generated_runs), on demand."""

    named: tuple[Any, ...]  # conformance.inputs.scenario.Scenario
    not_applicable: tuple[Any, ...]  # conformance.judging.verdicts.NotApplicable


def refusal(config: dict[str, str]) -> str | None:
    """What `sinkcheck run --target pysink --connector-config` refuses before anything runs
    (exit 4): the same check, conformance.playing.user_config.checked."""
    from conformance.playing.user_config import checked

    try:
        checked(config, TARGET, None)
    except ValueError as e:
        return str(e)
    return None


def planned_named(config: dict[str, str]) -> Plan:
    """The named scenarios of `run` on pysink under `config`: the suite's, then pysink's own,
    each planned as run_target plans it (conformance.playing.session.planned)."""
    from conformance.judging.verdicts import NotApplicable
    from conformance.playing.session import named_scenarios, own_named_scenarios, planned

    named, na = [], []
    for sc in named_scenarios(None) + own_named_scenarios(TARGET):
        p = planned(sc, TARGET, connector=config, version=None, seed=SEED)
        (na if isinstance(p, NotApplicable) else named).append(p)
    return Plan(tuple(named), tuple(na))


def generated_runs(config: dict[str, str], draws: int | None = None) -> list[Any]:
    """The generated scenarios `run --profile ci` on pysink plays under `config`, as it plays
    them (conformance.playing.generated.generated_scenarios with the connector); `draws`: only
    the first ones (whole batches of ten draw the same scenarios under the same names)."""
    from conformance.playing.generated import generated_scenarios
    from conformance.playing.session import PROFILES, SIMULATED_EXAMPLES

    _, derandomize, max_records = PROFILES[PROFILE]
    return generated_scenarios(SIMULATED_EXAMPLES[PROFILE] if draws is None else draws, SEED, derandomize,
                               max_records, kinds=(TARGET,), connector=config)


@dataclass
class Row:
    """One variant under the config: why the config does not exercise its rule (None: it does),
    and what its runs gave."""

    variant: str
    unexercised: str | None
    failed: dict[str, list[str]] = field(default_factory=dict)  # claimed property -> scenarios
    errors: list[str] = field(default_factory=list)  # scenarios whose run could not complete
    played: int = 0
    # killers the correct sink fails too: no kill (set once the correct sink played them)
    false_kills: list[str] = field(default_factory=list)

    @property
    def killers(self) -> list[str]:
        """The scenarios that killed the variant, in the order they ran, less the false ones."""
        return [n for n in dict.fromkeys(n for names in self.failed.values() for n in names)
                if n not in self.false_kills]

    @property
    def exercised(self) -> bool:
        return self.unexercised is None

    @property
    def killed(self) -> bool:
        return bool(self.killers)

    def verdict(self) -> str:
        if self.variant == "correct":
            return "clean" if not self.failed and not self.errors else "FAILED"
        if not self.exercised:
            played = (f" (played anyway: killed by {', '.join(self.killers)})" if self.killed else
                      f" (played anyway: survived {self.played} runs)" if self.played else "")
            return f"not exercised: {self.unexercised}{played}"
        if self.killed:
            return f"killed by {len(self.killers)}: {', '.join(self.killers)}"
        return f"SURVIVED {self.played} runs" + (f" ({len(self.errors)} errors)" if self.errors else "")


def exercise(config: dict[str, str], variants: Sequence[str]) -> dict[str, str | None]:
    """variant -> why `config` does not exercise the rule it breaks (None: it does)."""
    from adapters.pysink.targets.variants import Config, unexercised

    c = Config.of(config)
    return {v: None if v == "correct" else unexercised(v, c) for v in variants}


def row_order(variant: str, named: Sequence[str], generated: Sequence[str] = (),
              aimed: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The order a row plays the named scenarios and the `generated` ones drawn so far in: its
    aimed ones first (those among them), then the rest of the named ones in run's order, then
    the rest of the generated ones. The correct sink plays them all, in run's order."""
    aims = [] if variant == "correct" else [
        n for n in (aimed if aimed is not None else AIMED).get(variant, ()) if n in named or n in generated]
    return aims + [n for n in [*named, *generated] if n not in aims]


def play_row(variant: str, files: Sequence[str], out: str, enough: int | None,
             row: dict[str, Any] | None = None) -> dict[str, Any]:
    """Play `variant` on the scenarios saved at `files`, in order, until `enough` of them killed
    it (None: all of them). A row is a dict across processes: {"failed", "errors", "played"},
    going on from `row`."""
    from conformance.inputs.scenario import Scenario
    from conformance.playing.runner import run_scenario

    row = row or {"failed": {}, "errors": [], "played": 0}
    target = TARGET if variant == "correct" else f"{TARGET}:{variant}"

    def killers() -> int:
        return len({n for names in row["failed"].values() for n in names})

    for f in files:
        if enough is not None and killers() >= enough:
            break
        sc = Scenario.load(f)
        row["played"] += 1
        try:
            res = run_scenario(sc, target, Path(out) / variant / sc.name)
        except Exception as e:  # noqa: BLE001 - an error is no kill: the run would exit 3, not 1
            row["errors"].append(f"{sc.name}: {type(e).__name__}: {e}")
            continue
        for verdict in res.failed():
            row["failed"].setdefault(verdict.property, []).append(sc.name)
    return row


def _save(scenarios: Sequence[Any], where: Path) -> dict[str, str]:
    """Each scenario saved once (rows in other processes load the ones they play): name -> file."""
    where.mkdir(parents=True, exist_ok=True)
    return {sc.name: str(sc.save(where / f"{sc.name}.json")) for sc in scenarios}


def user_kill_matrix(config: dict[str, str], variants: Sequence[str] | None = None, out: Path | None = None,
                     workers: int = 4, enough: int | None = KILLS_WANTED,
                     aimed: dict[str, tuple[str, ...]] | None = None, draws: int | None = None,
                     unexercised_too: bool = False,
                     progress: Callable[[str], None] = lambda text: None) -> tuple[Plan, dict[str, Row]]:
    """The plan of `run` under `config`, and variant -> Row. The exercised variants play the plan
    (aimed first, generated last, until `enough` killers); "correct", where asked for, plays all
    of it; the correct sink then plays every killer it did not, and a killer it fails too is no
    kill. Rows go `workers` at a time, each in its own process (1: all in this one). `aimed`:
    the scenarios each row plays first (default AIMED), named or generated; `draws`: how many
    generated scenarios are drawn (default the profile's: a test's aims need the first few);
    `unexercised_too`: the variants the config does not exercise play as well (a kill among them
    says their rule is too narrow: the config does exercise it)."""
    from adapters.pysink import VARIANTS

    out = out or Path(tempfile.mkdtemp(prefix="sinkcheck-kill-user-"))
    variants = list(variants) if variants is not None else ["correct", *VARIANTS]
    started = time.monotonic()
    rows = {v: Row(v, why) for v, why in exercise(config, variants).items()}
    plan = planned_named(config)
    files = _save(plan.named, out / "scenarios")
    named = [sc.name for sc in plan.named]
    todo = [v for v in variants if rows[v].exercised or unexercised_too]
    progress(f"[killmatrix] {sum(r.exercised for r in rows.values())} of {len(variants)} variants exercised · "
             f"{len(named)} named scenarios apply "
             f"({len(plan.not_applicable)} not applicable)…")

    def drawn() -> list[str]:  # the generated runs, drawn once, saved beside the named ones
        if not any(n.startswith("generated-") for n in files):
            progress("[killmatrix] drawing the generated scenarios…")
            files.update(_save(generated_runs(config, draws), out / "scenarios"))
        return [n for n in files if n.startswith("generated-")]

    # the named runs (and the generated ones a row is aimed at), then the generated ones for the
    # rows that want more kills: most rows never need the generated ones drawn
    aims = aimed if aimed is not None else AIMED
    generated = drawn() if any(a.startswith("generated-") for v in todo for a in aims.get(v, ())) else []
    first = {v: row_order(v, named, generated, aimed) for v in todo}
    played = _play(todo, {v: [files[n] for n in order] for v, order in first.items()}, out, workers, enough, {})
    more = [v for v in todo if v == "correct" or _wants_more(played[v], enough)]
    if more:
        rest = {v: [files[n] for n in drawn() if n not in first[v]] for v in more}
        played = {**played, **_play(more, rest, out, workers, enough, played)}
    for v, r in played.items():
        rows[v].failed, rows[v].errors, rows[v].played = r["failed"], r["errors"], r["played"]
    _check_on_the_correct_sink(rows, files, out)
    progress(f"[killmatrix] done in {time.monotonic() - started:.0f}s")
    return plan, rows


def _wants_more(row: dict[str, Any], enough: int | None) -> bool:
    return enough is None or len({n for names in row["failed"].values() for n in names}) < enough


def _play(variants: Sequence[str], files: dict[str, list[str]], out: Path, workers: int, enough: int | None,
          before: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each variant's row over its files (going on from `before`), `workers` at a time. The
    correct sink's row, every run of the plan where a faulty one stops at its kills, is dealt
    out among the workers (every `workers`-th run to a piece) instead of ending last."""
    if workers <= 1 or len(variants) <= 1:
        return {v: play_row(v, files[v], str(out), None if v == "correct" else enough, before.get(v)) for v in variants}
    import concurrent.futures
    import multiprocessing

    jobs = [(v, files[v][i::workers] if v == "correct" else files[v])
            for v in variants for i in range(workers if v == "correct" else 1)]
    with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)),
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [(v, pool.submit(play_row, v, chunk, str(out), None if v == "correct" else enough,
                                   None if v == "correct" else before.get(v))) for v, chunk in jobs]
        rows: dict[str, dict[str, Any]] = {}
        for v, f in futures:
            piece, row = f.result(), rows.get(v) or before.get(v)
            rows[v] = piece if row is None or v != "correct" else _merged(row, piece)
        return rows


def _merged(row: dict[str, Any], piece: dict[str, Any]) -> dict[str, Any]:
    """A row with a piece of it played elsewhere added."""
    failed = {p: list(names) for p, names in row["failed"].items()}
    for p, names in piece["failed"].items():
        failed.setdefault(p, []).extend(names)
    return {"failed": failed, "errors": row["errors"] + piece["errors"], "played": row["played"] + piece["played"]}


def _check_on_the_correct_sink(rows: dict[str, Row], files: dict[str, str], out: Path) -> None:
    """A killer counts only where the correct sink passes it: where the correct sink's row was
    not played (it plays every scenario), it plays each killer, and the rows lose those it
    fails (or errs on)."""
    correct = rows.get("correct")
    checked: dict[str, Any] = {"failed": correct.failed, "errors": correct.errors} if correct else {}
    if correct is None:
        wanted = dict.fromkeys(n for r in rows.values() for n in r.killers)
        checked = play_row("correct", [files[n] for n in wanted], str(out / "correct-on-killers"), None)
    failing = ({n for names in checked["failed"].values() for n in names}
               | {e.split(":", 1)[0] for e in checked["errors"]})
    for r in rows.values():
        if r.variant != "correct":
            r.false_kills = [n for n in dict.fromkeys(n for names in r.failed.values() for n in names) if n in failing]


def render(rows: dict[str, Row]) -> str:
    """The table: a line per variant, the exercised ones first: its verdict, and the claimed
    properties its killers failed."""
    width = max(len(v) for v in rows) + 2
    ordered = sorted(rows.values(), key=lambda r: (r.variant != "correct", not r.exercised))
    lines = []
    for r in ordered:
        props = sorted(p for p, names in r.failed.items() if set(names) - set(r.false_kills))
        extra = f"  [{', '.join(props)}]" if props and r.variant != "correct" else ""
        false = f"  (the correct sink fails {', '.join(r.false_kills)} too: no kill)" if r.false_kills else ""
        lines.append(f"{r.variant:<{width}}{r.verdict()}{extra}{false}")
    return "\n".join(lines)


def summary(rows: dict[str, Row]) -> str:
    faulty = [r for r in rows.values() if r.variant != "correct"]
    exercised = [r for r in faulty if r.exercised]
    return (f"{len(faulty)} variants: {len(exercised)} exercised, {sum(r.killed for r in exercised)} killed, "
            f"{len(faulty) - len(exercised)} not exercised")


def weak(rows: dict[str, Row]) -> list[str]:
    """The exercised variants that survived, and a correct sink that failed."""
    return [r.variant for r in rows.values()
            if (r.variant == "correct" and r.verdict() != "clean") or (r.variant != "correct" and r.exercised
                                                                       and not r.killed)]


def main(config_path: str, variants: Sequence[str], out: Path | None, workers: int, enough: int | None,
         unexercised_too: bool = False) -> int:
    """`python -m conformance.killmatrix --connector-config F [VARIANT ...]`: print the table;
    exit 0 when every exercised variant is killed (and the correct sink, where played, is
    clean), 1 otherwise, 4 for a config `sinkcheck run` refuses."""
    import sys

    from sinkcheck.exitcodes import Exit, UsageError
    from sinkcheck.options import load_connector_config

    try:
        config = load_connector_config(config_path)
    except UsageError as e:
        print(f"python -m conformance.killmatrix: {e}", file=sys.stderr)
        return int(Exit.USAGE)
    assert config is not None
    from adapters.pysink import VARIANTS

    unknown = [v for v in variants if v != "correct" and v not in VARIANTS]
    if unknown:
        print(f"python -m conformance.killmatrix: unknown variant(s) {', '.join(unknown)}; known: correct, "
              f"{', '.join(VARIANTS)}", file=sys.stderr)
        return int(Exit.USAGE)
    why = refusal(config)
    if why:
        print(f"python -m conformance.killmatrix: {why}", file=sys.stderr)
        return int(Exit.USAGE)
    tty = sys.stderr.isatty()

    def progress(text: str) -> None:
        sys.stderr.write(("\r\x1b[K" + text) if tty else text + "\n")
        sys.stderr.flush()

    started = time.monotonic()
    plan, rows = user_kill_matrix(config, variants or None, out, workers, enough, unexercised_too=unexercised_too,
                                  progress=progress)
    if tty:
        sys.stderr.write("\r\x1b[K")
    print(f"kill matrix under --connector-config {config_path} ({TARGET}, --profile {PROFILE}; "
          f"{len(plan.named)} named scenarios apply, {len(plan.not_applicable)} not applicable, then the generated "
          f"ones), {time.monotonic() - started:.0f}s:")
    print(render(rows))
    print(summary(rows))
    return 1 if weak(rows) else 0

