"""The task's start-up verdict (R1.3): what the release's start() makes of the answer to its
bucket check (reference_impl.s3_errors.start_up), beside what the sink did.

A start-up rule is an S3 rule on the bucket check (HeadBucket, or GetBucketAcl where the release
asks that) armed before the target starts (`after` 0): the runner arms it before the sink's
first task starts, and translates it to the call the release makes. Where the model says the
start is refused, its expectation is a task that dies at start with nothing written
(reference_impl.engine.model.refused_start): a sink that ends FAILED there, having written
nothing, refused as documented, which is no failure of a claim (liveness of a documented
refusal); one that starts and writes there fails liveness, and one that dies where the release
takes the bucket as there fails it too. The verdict's line is what the report and the terminal
show for the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from reference_impl.s3_errors import NON_EXISTENT, STARTUP_OPERATIONS, StartUp, start_up, startup_operation

REFUSED, STARTED = "refused", "started"


def is_startup_rule(step: Any) -> bool:
    """An S3 rule (a FaultStep or the FaultEvent it became) on the start-up bucket check."""
    return step.kind == "s3" and step.params.get("operation") in STARTUP_OPERATIONS


def armed_before_start(step: Any) -> bool:
    """An S3 rule the runner arms before the target starts: one at the stream's start on the
    start-up bucket check, or one that asks for it (FaultRule.at_start)."""
    return step.kind == "s3" and step.after == 0 and (is_startup_rule(step) or bool(step.params.get("at_start")))


def release_of(kind: str, version: str | None) -> tuple[int, ...] | None:
    """The release whose start() the model holds the sink to: Confluent's that runs (`version`;
    None: the newest the model follows). The Python sink is its own S3 client: the newest's."""
    from reference_impl.versions import VersionError, VersionProfile

    if kind != "confluent":
        return None
    try:
        return VersionProfile.of(version).version
    except VersionError:
        return None


def startup_call(kind: str, version: str | None) -> str:
    """The call a target's start() checks its bucket with (R1.3): GetBucketAcl for Confluent's
    releases on the AWS SDK v1, HeadBucket for the others and the Python sink."""
    return startup_operation(release_of(kind, version))


def expected_start(events: Iterable[Any], kind: str, version: str | None, bucket: str) -> tuple[StartUp, str] | None:
    """The model's start-up (R1.3) for the first start-up rule that fired among `events` (the
    observation's FaultEvents), with the answer it gave ("404 NoSuchBucket on HeadBucket"); None
    where none fired (the start met no rule: a normal start)."""
    from adapters.s3.rules import ERROR_CODES

    for ev in events:
        if not (is_startup_rule(ev) and ev.fired):
            continue
        p = ev.params
        action = str(p.get("action", "fail"))
        status = int(p.get("status", 503) or 0) if action == "fail" else 0
        code = str(p.get("code") or (ERROR_CODES.get(status, "InternalError") if action == "fail" else ""))
        # a rule with `times` 0 answers every request: the same answer to each of the client's attempts
        every = int(p.get("times", 1) or 0) == 0
        answer = (f"{status} {code}" if action == "fail" else action) + f" on {p.get('operation')}"
        return start_up(release_of(kind, version), status, code, bucket, action, every_answer=every), answer
    return None


@dataclass(frozen=True)
class StartUpVerdict:
    """The model's start-up beside the sink's, in one line."""

    expected: StartUp
    answer: str  # the answer the check got: "404 NoSuchBucket on HeadBucket"
    release: str  # "connector 12.1.9", or "the Python sink (the newest release's reading)"
    observed: str  # REFUSED (ended FAILED, nothing written) | STARTED
    said: str = ""  # what the failed task said (its trace's first line), where it was refused

    @property
    def ok(self) -> bool:
        return (self.observed == STARTED) == self.expected.starts

    def line(self) -> str:
        e, rule = self.expected, self.expected.rule
        if self.ok and e.starts:
            return f"start-up: bucket taken as there on {self.answer}, as documented ({rule}); the task started"
        if self.ok:
            return f"start-up: refused, '{self.said or e.refusal}' as documented ({rule}: {self.answer})"
        if e.starts:
            return (f"start-up: REFUSED where {self.release} takes the bucket as there on {self.answer} ({rule}): "
                    f"'{self.said}'")
        return f"start-up: STARTED where {self.release} refuses on {self.answer} ({rule}: '{e.refusal}')"

    def to_json(self) -> dict[str, Any]:
        return {"expected": REFUSED if not self.expected.starts else STARTED, "observed": self.observed,
                "ok": self.ok, "rule": self.expected.rule, "answer": self.answer, "call": self.expected.operation,
                "why": self.expected.why, "refusal": self.expected.refusal, "said": self.said,
                "release": self.release, "line": self.line()}


def _said(trace: str) -> str:
    """The failed task's own words: its trace's first line, from "Non-existent S3 bucket" on
    where it says so (Connect prefixes the exception's class)."""
    first = next((ln.strip() for ln in (trace or "").splitlines() if ln.strip()), "")
    at = first.find(NON_EXISTENT)
    return first[at:] if at >= 0 else first[:200]


def startup_verdict(data: Any) -> StartUpVerdict | None:
    """The run's start-up verdict (conformance.judging.checks.base.RunData), None where no
    start-up rule fired."""
    from conformance.inputs.targets import connect_profile, target_kind
    from reference_impl.versions import DEFAULT_VERSION

    kind = target_kind(data.target)
    version = data.cfg.version.text if data.cfg is not None else None
    bucket = data.connector.get("s3.bucket.name", "")
    got = expected_start(data.observation.faults, kind, version, bucket)
    if got is None:
        return None
    expected, answer = got
    st = data.observation.statuses
    failed = bool(st) and ("FAILED" in st[-1].task_states or st[-1].connector_state == "FAILED")
    wrote = any(data.value_objects(s) for s in data.observation.bucket_samples)
    observed = REFUSED if failed and not wrote else STARTED
    trace = next((s.trace for s in reversed(st) if s.trace), "") if failed else ""
    release = (f"connector {version or connect_profile(data.target)[1]}" if kind == "confluent"
               else f"the model ({DEFAULT_VERSION}'s reading)")
    return StartUpVerdict(expected, answer, release, observed, _said(trace or ""))
