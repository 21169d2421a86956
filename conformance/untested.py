"""Runs that tested nothing. A run in which the sink wrote no object its claim's reader sees
(it consumed nothing, its task died before its first file, every record was rejected or left
out) has no object to compare with the model: every checker passes on an empty bucket, and
such a pass says nothing about the sink. The run's outcome is then `unknown`, with the reason
this module gives; a claimed failure stays a failure.
"""
from __future__ import annotations

from typing import Any, Sequence

# a profile whose runs tested nothing in more than this share is not a result (the terminal
# says so and the command exits 2 even where every other run passed)
DOMINANT_SHARE = 0.5


def untested_reason(data: Any) -> str | None:
    """Why the run (conformance.checkers.RunData) tested nothing, or None when it tested
    something: no sample of the bucket (or the sink's own log) ever held a data object, and no
    record was produced, or every one is a tombstone, or the task died at its first record, or
    every record was rejected, or the model expects objects the sink never wrote. A run whose
    records the model holds in open files tested that nothing became visible early."""
    scenario = data.scenario
    if not scenario.records:
        return "no record was produced"
    if any(data.value_objects(s) for s in data.observation.bucket_samples):
        return None
    if all(r.get("value") is None for r in scenario.records):
        return "every record is a tombstone, and this config writes none"
    exp = data.expectation
    if exp is not None:
        fail = exp.task_failure
        first = min((r.offset for r in data.records), default=0)
        if fail is not None and (fail.offset is None or fail.offset <= first):
            where = "at start" if fail.offset is None else f"at offset {fail.offset}"
            return f"the task died {where} before any object ({fail.rule}: {fail.message})"
        if exp.skipped and len(exp.skipped) >= sum(1 for r in scenario.records if r.get("value") is not None):
            rules = ", ".join(sorted({s.rule for s in exp.skipped}))
            return f"every record was rejected or left out ({rules})"
        if exp.constraints is None and any(o.value_object and o.certain for o in exp.objects):
            return (f"the sink wrote none of the {sum(1 for o in exp.objects if o.value_object)} objects the model "
                    "expects: did it consume the topics the records went to?")
    # the model holds the records in open files: the run checked that nothing became visible early
    return None


def summary(results: Sequence[Any]) -> tuple[int, str]:
    """How many runs tested nothing, and the commonest reason (for the summary line)."""
    reasons = [r.untested for r in results if getattr(r, "untested", None)]
    if not reasons:
        return 0, ""
    common = max(set(reasons), key=reasons.count)
    return len(reasons), common


def dominated(results: Sequence[Any]) -> bool:
    n, _ = summary(results)
    return bool(results) and n / len(results) > DOMINANT_SHARE
