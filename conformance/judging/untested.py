"""Runs that tested nothing. A run in which the sink wrote no object its claim's reader sees
(it consumed nothing, its task died before its first file, every record was rejected or left
out) has no object to compare with the model: every checker passes on an empty bucket, and
such a pass says nothing about the sink. The run's outcome is then `unknown`, with the reason
this module gives; a claimed failure stays a failure. Such runs end the command non-zero
only where they dominate (`dominated`): among runs that tested something they are the
profile's blind spots, named and counted in the summary.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from conformance.judging.checks.base import REVIVES, _sibling, _sink_internal
from conformance.judging.startup import startup_verdict
from reference_impl.s3_errors import STARTUP_RULE

# a profile whose runs tested nothing in more than this share is not a result (the terminal
# says so and the command exits 2 even where every other run passed)
DOMINANT_SHARE = 0.5


def untested_reason(data: Any) -> str | None:
    """Why the run (conformance.judging.checks.base.RunData) tested nothing, or None when it tested
    something: no sample of the bucket (or the sink's own log) ever held a data object, and no
    record was produced, or every one is a tombstone, or the task died at its first record, or
    every record was rejected, or the model expects objects the sink never wrote, or it holds
    every record in open files."""
    scenario = data.scenario
    if not scenario.records:
        return "no record was produced"
    if any(data.value_objects(s) for s in data.observation.bucket_samples):
        return None
    if data.claim.view == "log" and any(data.seqs(o) for s in data.observation.bucket_samples for o in s.objects
                                        if not _sibling(o.key) and not _sink_internal(o.key)):
        # a sink with its own log (Iceberg's table) wrote files of records that its log never
        # listed: whether they reach the reader is what the run tested (no-loss says)
        return None
    if all(r.get("value") is None for r in scenario.records):
        return "every record is a tombstone, and this config writes none"
    if data.task_killed_by_error_200():
        if not any(f.kind == "s3" and f.fired and f.params.get("action") == "error-200" for f in data.observation.faults):
            return ("the task died at an S3 error answer its release does not retry, before any object (R7.4: "
                    "reference_impl.s3_errors)")
        return ("the task died at the error inside CompleteMultipartUpload's 200 before any object (R7.4: the "
                "AWS SDK v1 does not retry it; known bug confluent-error-inside-complete-200)")
    exp = data.expectation
    if exp is not None and exp.task_failure is not None and exp.task_failure.rule == STARTUP_RULE:
        start = startup_verdict(data)
        if start is not None and start.ok:
            return None  # the run tested the refusal at start (R1.3): liveness says so
    if exp is not None:
        fail = exp.task_failure
        first = min((r.offset for r in data.records), default=0)
        if fail is not None:
            where = "at start" if fail.offset is None else f"at offset {fail.offset}"
            before = "before any object" if fail.offset is None or fail.offset <= first else "in the put that held its records"
            return f"the task died {where} {before} ({fail.rule}: {fail.message})"
        if exp.skipped and len(exp.skipped) >= sum(1 for r in scenario.records if r.get("value") is not None):
            rules = ", ".join(sorted({s.rule for s in exp.skipped}))
            return f"every record was rejected or left out ({rules})"
        if exp.constraints is None and any(o.value_object and o.certain for o in exp.objects):
            return (f"the sink wrote none of the {sum(1 for o in exp.objects if o.value_object)} objects the model "
                    "expects: did it consume the topics the records went to?")
    # the model holds the records in open files: nothing visible early is all a checker saw
    return "no object was written (the records stay in open files), so none could be compared with the model"


def summary(results: Sequence[Any]) -> tuple[int, str]:
    """How many runs tested nothing, and the commonest reason (for the summary line)."""
    reasons = [r.untested for r in results if getattr(r, "untested", None)]
    if not reasons:
        return 0, ""
    kinds = [re.sub(r"\d+", "N", why.split(" (")[0]) for why in reasons]
    common = max(set(kinds), key=kinds.count)
    return len(reasons), next(why for why, k in zip(reasons, kinds) if k == common).split(" (")[0]


def dominated(results: Sequence[Any]) -> bool:
    """Runs that tested nothing are more than DOMINANT_SHARE of them. A failed run is a result
    even where it says why it tested nothing (its claimed failure stands), so it does not count."""
    n, _ = summary([r for r in results if getattr(r, "status", None) != "fail"])
    return bool(results) and n / len(results) > DOMINANT_SHARE


def dead_while_armed(event: Any, observation: Any) -> str | None:
    """Why an S3 rule saw no request at all: the task was FAILED when the rule was armed and at
    every status sample until the rule was retired or something brought the task back (a crash's
    restart). No request could come for it; the sink's own failure, not the harness, left the
    fault untried (multipart-crash-in-part-four on Lenses 11.7.2: a 412 had failed the task)."""
    p = event.params
    if event.kind != "s3" or event.fired or p.get("matched") or p.get("armed_ms") is None:
        return None
    start = int(p["armed_ms"])
    revived = [f.at_ms for f in observation.faults if f.kind in REVIVES and f.fired and (f.at_ms or 0) > start]
    end = min([t for t in [p.get("retired_ms"), *revived] if t is not None], default=None)
    statuses = list(observation.statuses)
    before = [s for s in statuses if s.at_ms <= start][-1:]
    window = before + [s for s in statuses if start < s.at_ms and (end is None or s.at_ms <= end)]
    if not window or any("FAILED" not in s.task_states for s in window):
        return None
    trace = next((s.trace for s in window if s.trace), "") or ""
    cause = next((ln.strip() for ln in trace.splitlines() if ln.strip()), "")[:200]
    return ("the task was FAILED from before the rule was armed until "
            + ("the rule was retired" if end is None or end == p.get("retired_ms") else "it was brought back")
            + ": no request came for it" + (f" ({cause})" if cause else ""))
