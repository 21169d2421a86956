"""Verdicts: what a checker says about one property of one run.

A verdict is `pass`, `fail` with a minimal witness, or `unknown` (the fault it needs did not
fire, or the checker itself crashed). Ranking for a run: fail > unknown > pass.

A named scenario whose point cannot survive the user's connector config is *not applicable*
(`n/a`, NotApplicable): decided before the run, never run, kept apart from unknown, and left
out of every status computed over the runs.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, UNKNOWN = "pass", "fail", "unknown"
NOT_APPLICABLE = "n/a"
_RANK = {PASS: 0, UNKNOWN: 1, FAIL: 2}


@dataclass(frozen=True)
class Witness:
    """The smallest evidence of an anomaly: which offsets, which object keys, and what the
    model expected beside what the bucket held."""

    anomaly: str  # e.g. "lost", "duplicated", "unexpected-object", "partial-object"
    offsets: tuple[str, ...] = ()  # "topic-partition@offset"
    keys: tuple[str, ...] = ()
    expected: Any = None
    observed: Any = None
    explanation: str = ""

    def to_json(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Verdict:
    property: str  # e.g. "no-loss"
    status: str  # pass | fail | unknown
    claimed: bool  # does the target's claim promise it?
    rule: str = ""  # the spec rule or property id it rests on (P-NOLOSS, R3.2 ...)
    message: str = ""
    witnesses: tuple[Witness, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def counts(self) -> bool:
        """A failure fails the run only when the property is claimed."""
        return self.claimed

    def to_json(self) -> dict[str, Any]:
        return {
            "property": self.property, "status": self.status, "claimed": self.claimed, "rule": self.rule,
            "message": self.message, "witnesses": [w.to_json() for w in self.witnesses], "details": self.details,
        }


def overall(verdicts: list[Verdict]) -> str:
    """The run's verdict over its claimed properties (unclaimed ones are reported only)."""
    claimed = [v.status for v in verdicts if v.claimed]
    if not claimed:
        return PASS
    return max(claimed, key=_RANK.__getitem__)


def failure_signatures(verdicts: list[Verdict]) -> list[tuple[str, str]]:
    """(property, anomaly) of each claimed failure, in verdict order: what a failure is, for
    shrinking and replays (a smaller scenario failing otherwise is another failure)."""
    out = []
    for v in verdicts:
        if v.claimed and v.status == FAIL:
            for anomaly in dict.fromkeys(w.anomaly for w in v.witnesses) or ("",):
                out.append((v.property, anomaly))
    return out


def fails_as(verdicts: list[Verdict], signature: tuple[str, str]) -> bool:
    """Does a run fail the same claimed property with the same anomaly?"""
    return signature in failure_signatures(verdicts)


@dataclass(frozen=True)
class NotApplicable:
    """A scenario not run on a target because its point cannot survive the config it would
    run under (conformance.playing.applicable): the one-line reason, and the properties its
    claim would have held it to (the compliance matrix counts it there as n/a)."""

    scenario: str
    target: str
    reason: str
    origin: str = "named"
    properties: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "target": self.target, "status": NOT_APPLICABLE, "reason": self.reason,
                "origin": self.origin, "properties": list(self.properties)}
