"""The liveness checker: the sink ended running (or died where the model's task dies too), and
a table sink committed each record within its commit interval and timeout. Registered in
the checkers' registry (conformance.judging.checks.base), last."""
from __future__ import annotations

from conformance.judging.checks.base import RunData, _verdict, check
from conformance.judging.startup import startup_verdict
from conformance.judging.verdicts import PASS, Verdict, Witness


def _causes(trace: str, limit: int = 220) -> str:
    """A Java stack trace as its chain of exceptions (the first line, then each `Caused by:`):
    the root cause sits at the bottom, far past the frames of the wrapper that reported it."""
    lines = trace.strip().splitlines()
    chain = lines[:1] + [ln.strip()[len("Caused by: "):] for ln in lines[1:] if ln.strip().startswith("Caused by: ")]
    return " ← caused by: ".join(c[:limit] for c in chain)


@check("liveness", "P-LIVENESS")
def liveness(d: RunData) -> Verdict:
    st = d.observation.statuses
    failed = bool(st) and ("FAILED" in st[-1].task_states or st[-1].connector_state == "FAILED")
    exp = d.expectation
    start = startup_verdict(d)
    if start is not None and not start.ok:
        # R1.3: a task that starts where its release refuses the bucket, or dies where it starts
        anomaly = "refused-where-it-starts" if start.expected.starts else "started-where-refused"
        return _verdict("liveness", [Witness(anomaly, explanation=f"{start.line()}; {start.expected.why}")],
                        "", "the sink's start-up is not its release's", startup=start.to_json())
    if start is not None and not start.expected.starts:
        return Verdict("liveness", PASS, False, message=f"refused at start as documented: {start.line()}",
                       details={"startup": start.to_json()})
    if exp is not None and exp.task_failure is not None:
        # the connector's own task dies on this input: ending FAILED is the specified outcome
        return Verdict("liveness", PASS, False, message=f"the model's task dies too ({exp.task_failure.rule} at "
                                                        f"offset {exp.task_failure.offset})")
    w = [Witness("task-failed", explanation=f"the sink ended FAILED: {_causes(st[-1].trace or '')}")] if failed else []
    if failed and "SchemaProjectorException" in (st[-1].trace or "") and d.cfg is not None:
        # R14: a release that checks the schemas first rotates where the projector would throw
        w = [Witness("task-died-on-projection", explanation=(
            f"the sink ended FAILED projecting a record onto its file's schema under schema.compatibility="
            f"{d.cfg.schema_compatibility}, where connector {d.cfg.version.text} finds the schemas incompatible and "
            f"rotates the file, or projects without error (R14.3, R14.7): {_causes(st[-1].trace or '')}"))]
    if d.claim.naming == "iceberg":
        late, latency = _late_table_commits(d)
        w += late
        return _verdict("liveness", w, f"the sink ended running; each record reached a table commit within "
                                       f"{latency:.1f} s of being produced", "the sink ended failed or committed late",
                        max_commit_latency_s=round(latency, 1))
    return _verdict("liveness", w, "the sink ended running", "the sink ended failed")


def _late_table_commits(d: RunData) -> tuple[list[Witness], float]:
    """A table sink's commit latency: for each record in the final snapshot, from its produce (or
    the scenario's last restart of a task, or release of an S3 call it held, before it showed) to
    the first table sample holding it.
    Late: beyond the commit interval plus the claim's bound."""
    from adapters.connect.profiles import iceberg_commit_timing_s
    from conformance.judging.claims import ICEBERG_COMMIT_BOUND_S
    from conformance.inputs.targets import translation_for

    sent = translation_for(d.target, dict(d.scenario.connector))
    interval_s, timeout_s = iceberg_commit_timing_s(sent.config if sent else {})
    bound = interval_s + timeout_s + ICEBERG_COMMIT_BOUND_S
    produced_at = {(p.topic, p.partition, p.offset): p.at_ms for p in d.observation.produced}
    # a task the scenario restarts (restart-task or -connector: an operator's act, after it FAILED) commits
    # nothing while it waits for the restart, and a task whose S3 call the scenario holds (a hang)
    # nothing until S3 answers: those waits are the scenario's, so a record's clock starts again
    # at the restart, or at the held call's release
    restarts = [f.at_ms for f in d.observation.faults
                if f.kind in ("restart-task", "restart-connector") and f.fired and f.at_ms]
    restarts += [f.until_ms for f in d.observation.faults
                 if f.kind == "s3" and f.params.get("action") == "hang" and f.fired and f.until_ms]
    first_seen: dict[tuple[str, int, int], int] = {}
    for sample in sorted(d.observation.bucket_samples, key=lambda b: b.at_ms):
        for obj in d.value_objects(sample):
            for tp, o in d.offsets_of(obj) or []:
                first_seen.setdefault((tp[0], tp[1], o), sample.at_ms)
    w, worst = [], 0.0
    for k, seen in sorted(first_seen.items()):
        at = produced_at.get(k)
        if at is None:
            continue
        at = max([at, *(r for r in restarts if r <= seen)])
        latency = (seen - at) / 1000
        worst = max(worst, latency)
        if latency > bound:
            w.append(Witness("late-commit", (f"{k[0]}-{k[1]}@{k[2]}",), expected=f"<= {bound:.0f} s", observed=f"{latency:.1f} s",
                             explanation=f"first in the table {latency:.1f} s after it was produced (commit interval "
                                         f"{interval_s:.0f} s + timeout {timeout_s:.0f} s + {ICEBERG_COMMIT_BOUND_S:.0f} s)"))
    return w, worst
