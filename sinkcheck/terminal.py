"""What sinkcheck prints (always through the redactor) and how a run's results end the process
(sinkcheck.exitcodes)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sinkcheck.exitcodes import Exit


class Terminal:
    """Every line sinkcheck prints goes through the redactor."""

    def __init__(self, redactor: Any) -> None:
        self.redactor = redactor
        self.tty = sys.stderr.isatty()
        self._progress_shown = False

    def out(self, text: str = "") -> None:
        self._clear()
        print(self.redactor.text(text), file=sys.stdout, flush=True)

    def err(self, text: str) -> None:
        self._clear()
        print(self.redactor.text(text), file=sys.stderr, flush=True)

    def progress(self, text: str) -> None:
        text = self.redactor.text(text)
        if self.tty:
            sys.stderr.write("\r\x1b[K" + text[:200])
            sys.stderr.flush()
            self._progress_shown = True
        else:
            print(text, file=sys.stderr, flush=True)

    def _clear(self) -> None:
        if self._progress_shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._progress_shown = False



# runs that tested nothing named one by one before the summary line
UNTESTED_SHOWN = 10


def exit_for(results: list[Any], errors: list[dict[str, Any]]) -> Exit:
    if errors:
        return Exit.INTERNAL
    from conformance.untested import dominated

    statuses = {r.status for r in results}
    if "fail" in statuses:
        return Exit.FAILED
    # a run that tested nothing is unknown, but ends the command unknown only where such runs dominate
    if any(r.status == "unknown" and not getattr(r, "untested", None) for r in results) or dominated(results):
        return Exit.UNKNOWN
    return Exit.OK


def print_outcome(term: Terminal, results: list[Any], errors: list[dict[str, Any]], paths: dict[str, Path],
                  seed: int | None, profile: str, elapsed: float, extra: str = "") -> None:
    from conformance.pytest_plugin import failure_block

    for r in results:
        if r.failed():
            term.out(failure_block(r))
            term.out("  steps:\n" + "\n".join("    " + ln for ln in r.scenario.steps().splitlines()))
            term.out()
    for e in errors:
        term.out(f"ERROR {e['scenario']} on {e['target']}: {e['error']}\n  scenario: {e.get('scenario_file')}")
    from conformance.untested import dominated, summary

    untested = [r for r in results if getattr(r, "untested", None) and r.status != "fail"]
    for r in untested[:UNTESTED_SHOWN]:
        term.out(f"TESTED NOTHING {r.scenario.name} on {r.target}: {r.untested}")
    if len(untested) > UNTESTED_SHOWN:
        term.out(f"TESTED NOTHING … and {len(untested) - UNTESTED_SHOWN} more runs (results.json: \"untested\")")
    n_fail = sum(1 for r in results if r.status == "fail")
    n_unk = sum(1 for r in results if r.status == "unknown")
    n_pass = sum(1 for r in results if r.status == "pass")
    code = exit_for(results, errors)
    word = {Exit.OK: "PASS", Exit.FAILED: "FAIL", Exit.UNKNOWN: "UNKNOWN", Exit.INTERNAL: "ERROR"}[code]
    n_untested, why = summary(untested)
    nothing = f" ({n_untested} tested nothing: {why}{' …' if n_untested > 1 else ''})" if n_untested else ""
    term.out(f"{word}: {len(results)} runs: {n_pass} passed, {n_fail} failed, {n_unk} unknown{nothing}, "
             f"{len(errors)} errors in {elapsed:.1f}s · seed {seed} · profile {profile}{extra}")
    if dominated(results):
        term.out(f"  most runs ({n_untested} of {len(results)}) tested nothing: this is no result for the sink; "
                 "fix what the reason above names (the config, the topics, the records) and run again")
    for k, p in paths.items():
        term.out(f"  {k:<5} {p}")


