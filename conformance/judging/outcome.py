"""A command's outcome over its runs, one way for the command line and the pytest plugin:
`error` (a run could not complete), `fail` (a claimed property failed), `unknown` (one could
have been tested and was not: a fault that never fired; or most runs tested nothing),
`nothing` (no run at all: every scenario selected was not applicable, or none was selected),
else `pass`. Not-applicable scenarios (conformance.judging.verdicts.NotApplicable) are left out:
they were never runs, and a command of nothing but them tested nothing, so it is no pass. Runs a
known bug of their release explains, where the command accepts them (`run --accept-known-bugs`:
conformance.catalog.known_bugs.acceptance), are runs played, and the outcome is over the rest.
"""
from __future__ import annotations

from typing import Any, Collection, Sequence

from conformance.judging.untested import dominated
from conformance.judging.verdicts import FAIL, PASS, UNKNOWN

ERROR, NOTHING = "error", "nothing"


def outcome(results: Sequence[Any], errors: Sequence[Any] = (), accepted: Collection[str] = ()) -> str:
    """`accepted`: the run directories of the failed runs accepted as known bugs."""
    if errors:
        return ERROR
    if not results:
        return NOTHING
    rest = [r for r in results if str(r.run_dir) not in accepted] if accepted else list(results)
    if any(r.status == FAIL for r in rest):
        return FAIL
    # a run that tested nothing is unknown, but ends the command unknown only where such runs dominate
    # (an accepted failure tested something: it counts among the runs)
    if any(r.status == UNKNOWN and not getattr(r, "untested", None) for r in rest) or dominated(results):
        return UNKNOWN
    return PASS
