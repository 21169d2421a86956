"""A command's outcome over its runs, one way for the command line and the pytest plugin:
`error` (a run could not complete), `fail` (a claimed property failed), `unknown` (one could
have been tested and was not: a fault that never fired; or most runs tested nothing),
`nothing` (no run at all: every scenario selected was not applicable, or none was selected),
else `pass`. Not-applicable scenarios (conformance.judging.verdicts.NotApplicable) are left out:
they were never runs, and a command of nothing but them tested nothing, so it is no pass.
"""
from __future__ import annotations

from typing import Any, Sequence

from conformance.judging.untested import dominated
from conformance.judging.verdicts import FAIL, PASS, UNKNOWN

ERROR, NOTHING = "error", "nothing"


def outcome(results: Sequence[Any], errors: Sequence[Any] = ()) -> str:
    if errors:
        return ERROR
    if any(r.status == FAIL for r in results):
        return FAIL
    if not results:
        return NOTHING
    # a run that tested nothing is unknown, but ends the command unknown only where such runs dominate
    if any(r.status == UNKNOWN and not getattr(r, "untested", None) for r in results) or dominated(results):
        return UNKNOWN
    return PASS
