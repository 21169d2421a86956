"""Checkers: one function per property, run offline on a recorded run.

Each takes a `RunData` and returns a `Verdict`: pass, fail with a minimal witness, or unknown.
`run_checks` runs them all; a checker that crashes yields unknown with its error and never
hides the others. A pass in a run where a scheduled fault never fired is unknown: the run
did not test what it was meant to.
"""
from __future__ import annotations

import traceback
from dataclasses import replace

from conformance.judging.verdicts import PASS, UNKNOWN, Verdict
# each family registers its checkers on import, in this order: the order of the properties
from conformance.judging.checks import delivery, contents, commits, layout, liveness  # noqa: F401
from conformance.judging.checks.base import CHECKS, RunData


def run_checks(data: RunData, names: list[str] | None = None) -> list[Verdict]:
    out = []
    not_fired = data.faults_not_fired()
    for name, (rule, fn) in CHECKS.items():
        if names is not None and name not in names:
            continue
        claimed = data.claim.claims(name)
        try:
            v = fn(data)
            v = replace(v, claimed=claimed, rule=v.rule or rule)
        except Exception as e:  # one broken checker never hides the others
            v = Verdict(name, UNKNOWN, claimed, rule, f"checker crashed: {type(e).__name__}: {e}",
                        details={"traceback": traceback.format_exc(limit=5)})
        if v.status == PASS and not_fired:
            v = replace(v, status=UNKNOWN, message=f"the fault it needs never fired ({'; '.join(not_fired)}); "
                                                   f"would otherwise pass: {v.message}")
        out.append(v)
    return out
