"""What sinkcheck prints (always through the redactor) and how a run's results end the process
(sinkcheck.exitcodes)."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from sinkcheck.exitcodes import Exit


PLAIN_TICK_S = 10.0  # off a terminal a line says every this often that a long step goes on


class Terminal:
    """Every line sinkcheck prints goes through the redactor."""

    def __init__(self, redactor: Any) -> None:
        self.redactor = redactor
        self.tty = sys.stderr.isatty()
        self._progress_shown = False
        self._last: tuple[str, float] | None = None  # the latest progress line and when it was first shown
        self._write = threading.Lock()  # a ticker thread writes too

    def out(self, text: str = "") -> None:
        with self._write:
            self._clear()
            print(self.redactor.text(text), file=sys.stdout, flush=True)

    def err(self, text: str) -> None:
        with self._write:
            self._clear()
            print(self.redactor.text(text), file=sys.stderr, flush=True)

    def progress(self, text: str) -> None:
        """A step begins or goes on: a signal whose exception was lost is raised here (main thread)."""
        from sinkcheck.lifecycle import check_interrupted

        check_interrupted()
        self._last = (text, time.monotonic()) if text else None
        self._show(text)

    def _show(self, text: str) -> None:
        text = self.redactor.text(text)
        with self._write:
            self._emit(text)

    def _emit(self, text: str) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K" + text[:200])
            sys.stderr.flush()
            self._progress_shown = True
        elif text:  # no TTY line to clear: nothing to print
            print(text, file=sys.stderr, flush=True)

    @contextlib.contextmanager
    def ticking(self, spark: bool = False) -> Iterator[None]:
        """While inside, a step that shows no progress of its own still shows it is alive: the
        latest progress line again with how long it has run, every second on a terminal (the
        line updates) and every PLAIN_TICK_S seconds as a plain line otherwise. `spark`: on a
        terminal Spark's stage bar is the progress (its session shows it there): no ticks."""
        if spark and self.tty:
            yield
            return
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(1.0 if self.tty else PLAIN_TICK_S):
                last = self._last
                if last is not None:
                    self._show(f"{last[0]} · {time.monotonic() - last[1]:.0f}s")

        t = threading.Thread(target=tick, name="sinkcheck-progress", daemon=True)
        t.start()
        try:
            yield
        finally:
            stop.set()
            t.join()

    def _clear(self) -> None:
        if self._progress_shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._progress_shown = False



# runs that tested nothing named one by one before the summary line
UNTESTED_SHOWN = 10


EXIT_FOR_OUTCOME = {"pass": Exit.OK, "fail": Exit.FAILED, "unknown": Exit.UNKNOWN, "error": Exit.INTERNAL,
                    "nothing": Exit.NOTHING_SELECTED}


def exit_for(results: list[Any], errors: list[dict[str, Any]], accepted: Mapping[str, Any] | None = None) -> Exit:
    """conformance.judging.outcome's outcome as an exit code: 0 only when runs were played and
    every applicable claimed property passed (not-applicable scenarios are no runs), or failed
    only where `accepted` (run directory -> the known bug of its release that explains it:
    conformance.catalog.known_bugs.acceptance) says so."""
    from conformance.judging.outcome import outcome

    return EXIT_FOR_OUTCOME[outcome(results, errors, accepted or {})]


def print_outcome(term: Terminal, results: list[Any], errors: list[dict[str, Any]], paths: dict[str, Path],
                  seed: int | None, profile: str, elapsed: float, extra: str = "", interrupted: str | None = None,
                  not_applicable: Sequence[Any] = (), accepted: Mapping[str, dict[str, Any]] | None = None) -> None:
    """Each failure's block (a failure accepted as a known bug of its release: one line), each
    unknown, error, not-applicable scenario and run that tested nothing, then the summary line
    and the reports' paths."""
    from conformance.catalog.known_bugs import accepted_line
    from conformance.pytest_plugin import failure_block

    accepted = accepted or {}
    for r in results:
        if r.failed() and str(r.run_dir) in accepted:
            a = accepted[str(r.run_dir)]
            term.out(f"ACCEPTED {r.scenario.name} on {r.target}: {accepted_line(a)} of "
                     f"{a['version'] or 'a version not known'}: {', '.join(a['failed'])} failed\n"
                     f"  Reproduce with: sinkcheck replay {r.run_dir / 'scenario.json'} --target {r.target}")
        elif r.failed():
            term.out(failure_block(r))
            term.out("  steps:\n" + "\n".join("    " + ln for ln in r.scenario.steps().splitlines()))
            term.out()
    for r in results:  # what an unknown verdict rests on: which run, which property, why
        if r.status == "unknown":
            by_reason: dict[str, list[str]] = {}  # one reason (a message's first clause) often holds for many
            for v in r.all_verdicts():
                if v.claimed and v.status == "unknown":
                    by_reason.setdefault(v.message.split("; ")[0], []).append(v.property)
            why = "; ".join(f"{', '.join(props)}: {reason}" for reason, props in by_reason.items())
            term.out(f"UNKNOWN {r.scenario.name} on {r.target}: {why or 'no verdict'}")
    for e in errors:
        term.out(f"ERROR {e['scenario']} on {e['target']}: {e['error']}\n  scenario: {e.get('scenario_file')}")
    for na in not_applicable:  # never run: the user's config leaves nothing of the scenario's point
        term.out(f"N/A {na.scenario} on {na.target}: {na.reason}")
    from conformance.judging.untested import dominated, summary

    untested = [r for r in results if getattr(r, "untested", None) and r.status != "fail"]
    for r in untested[:UNTESTED_SHOWN]:
        term.out(f"TESTED NOTHING {r.scenario.name} on {r.target}: {r.untested}")
    if len(untested) > UNTESTED_SHOWN:
        term.out(f"TESTED NOTHING … and {len(untested) - UNTESTED_SHOWN} more runs (results.json: \"untested\")")
    n_fail = sum(1 for r in results if r.status == "fail")
    n_unk = sum(1 for r in results if r.status == "unknown")
    n_pass = sum(1 for r in results if r.status == "pass")
    code = exit_for(results, errors, accepted)
    word = {Exit.OK: "PASS", Exit.FAILED: "FAIL", Exit.UNKNOWN: "UNKNOWN", Exit.INTERNAL: "ERROR",
            Exit.NOTHING_SELECTED: "NOTHING TESTED"}[code]
    na = f", {len(not_applicable)} not applicable" if not_applicable else ""
    n_untested, why = summary(untested)
    nothing = f" ({n_untested} tested nothing: {why}{' …' if n_untested > 1 else ''})" if n_untested else ""
    if interrupted:
        term.out(interrupted)
        word = f"INTERRUPTED ({word} so far)"
    n_accepted = sum(1 for r in results if r.status == "fail" and str(r.run_dir) in accepted)
    failed = f"{n_fail} failed" + (f" ({n_accepted} accepted as known bugs)" if n_accepted else "")
    term.out(f"{word}: {len(results)} runs: {n_pass} passed, {failed}, {n_unk} unknown{nothing}, "
             f"{len(errors)} errors{na} in {elapsed:.1f}s · seed {seed} · profile {profile}{extra}")
    if not results and not_applicable:
        term.out("  every scenario selected is not applicable under the given connector config (the reasons above): "
                 "nothing was tested; run the generated scenarios (drop --examples 0) or pick others")
    if dominated(results):
        term.out(f"  most runs ({n_untested} of {len(results)}) tested nothing: this is no result for the sink; "
                 "fix what the reason above names (the config, the topics, the records) and run again")
    for k, p in paths.items():
        term.out(f"  {k:<5} {p}")


