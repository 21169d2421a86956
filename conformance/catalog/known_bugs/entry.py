"""A known bug as the library records it: the sink, the citation, the affected version ranges and
the fixed releases, the condition a config meets, what a user sees, and how a run shows it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from reference_impl.versions import Version, VersionError, parse_version


# what a task dead until restarted fails: it is not running, and its commits stop short of the
# records after it (which it neither writes nor commits: no-loss holds)
TASK_FAILED = ("liveness", "commit-progress")


@dataclass(frozen=True)
class KnownBug:
    id: str
    sink: str  # the claim family it belongs to (conformance.inputs.targets.target_kind)
    title: str
    cite: str | None  # owner/repo#N: the fix, or the report when there is no fix
    also: tuple[str, ...]  # further citations (the introducing change, backports, reports)
    affected: tuple[tuple[str | None, str | None], ...]  # [from, to) version ranges: to is the fix; None: open
    fixed_in: tuple[str, ...]  # the first release without it, per release line
    needs: Callable[[dict[str, str]], bool]  # does a connector config meet the bug's condition?
    needs_text: str  # the condition in words: the config's, and the fault that sets it off where one does
    symptom: str  # what a user sees
    workaround: str | None
    scenarios: tuple[str, ...]  # named scenarios that show it
    signature: str | None = None  # regex over the failed task's trace that only this bug leaves
    # for a bug that leaves no trace: the witness a run's verdicts give of it, or None (so that a
    # generated run of the bug's shape is named too, not only its scenario)
    shown_by: Callable[[Any], str | None] | None = None
    why: str = ""  # why it is a bug when upstream has no issue for it
    # for a bug a fault sets off (an S3 answer, a member leaving): does a scenario carry that
    # fault? None: the config alone meets its condition (the records that set it off, a tombstone
    # or a null in an array, are the config's to meet: every stream may carry them)
    triggered_by: Callable[[Any], bool] | None = None
    # the claimed properties a run of it fails (as recorded on the real connector, tests/fidelity,
    # and as its symptom says): a run whose every failed property is one of these, reproducing it
    # on a release it affects, is explained by it (matching.acceptance: `run --accept-known-bugs`)
    breaks: tuple[str, ...] = ()

    def condition_met(self, scenario: Any) -> bool:
        """Does a scenario meet the bug's condition: its config, and the fault that sets it off?"""
        return self.needs(dict(scenario.connector)) and (self.triggered_by is None or self.triggered_by(scenario))

    def url(self, cite: str | None = None) -> str | None:
        c = cite or self.cite
        m = re.fullmatch(r"([\w.-]+)/([\w.-]+)#(\d+)", c or "")
        # GitHub sends /issues/N on to the pull request when N is one
        return f"https://github.com/{m[1]}/{m[2]}/issues/{m[3]}" if m else None

    def affects(self, version: str | None) -> bool | None:
        """Does this release have it? None when the version is not known."""
        if not version:
            return None
        try:
            v = parse_version(version)
        except VersionError:
            return None
        return any(_in(v, lo, hi) for lo, hi in self.affected)

    def matches(self, trace: str | None) -> bool:
        return bool(self.signature and trace and re.search(self.signature, trace))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "sink": self.sink, "title": self.title, "cite": self.cite, "url": self.url(),
                "also": [{"cite": c, "url": self.url(c)} for c in self.also], "affected": [_range_text(lo, hi) for lo, hi in self.affected],
                "fixed_in": list(self.fixed_in), "needs": self.needs_text, "symptom": self.symptom,
                "workaround": self.workaround, "scenarios": list(self.scenarios), "why": self.why or None,
                "breaks": list(self.breaks)}


def _in(v: Version, lo: str | None, hi: str | None) -> bool:
    return (lo is None or v >= parse_version(lo)) and (hi is None or v < parse_version(hi))


def _range_text(lo: str | None, hi: str | None) -> str:
    if lo and hi:
        return f"{lo} up to {hi} (excluded)"
    if lo:
        return f"{lo} and later (no release fixes it)"
    return f"every release before {hi}" if hi else "every release (no release fixes it)"
