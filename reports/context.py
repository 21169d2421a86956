"""What every writer shares: the context of a report (seed, profile, environment, preflight,
baseline diff, errors) and the one JSON form of a run result that all formats render.

`entry(result, ctx)` is the only place a `RunResult` is turned into data; the JSON, JUnit and
HTML writers all read entries, so they never disagree, and every entry is redacted.
"""
from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from typing import Any

from conformance.judging.claims import PROPERTIES
from conformance.judging.verdicts import FAIL, NOT_APPLICABLE, PASS, UNKNOWN
from reports.redact import Redactor

REPORT_FORMAT = "sinkcheck.results/1"
NOT_CLAIMED = "not-claimed"


@dataclass
class ReportContext:
    command: str = "run"  # run | gate | replay
    seed: int | None = None
    profile: str | None = None
    started_at: float = field(default_factory=time.time)
    duration_s: float | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    preflight: list[dict[str, Any]] | None = None  # [{"check", "status", "detail", "rule"}]
    baseline: dict[str, Any] | None = None  # reports.diff.diff_entries(...)
    errors: list[dict[str, Any]] = field(default_factory=list)  # [{"scenario", "target", "error"}]
    origins: dict[str, str] = field(default_factory=dict)  # run_dir -> named | generated | saved-failure
    reproducers: dict[str, str] = field(default_factory=dict)  # run_dir -> saved scenario file
    notes: list[str] = field(default_factory=list)
    verdict: str | None = None  # the command's own verdict when it is not the runs' (gate: regressions or not)
    # set when a signal stopped the command: {"signal": "SIGINT", "finished": runs done, "planned": runs planned}
    interrupted: dict[str, Any] | None = None
    # gate: known bugs the candidate fixes or introduces (conformance.catalog.known_bugs.gate_changes)
    known_bug_changes: list[dict[str, Any]] = field(default_factory=list)
    # scenarios not run because their point cannot survive the user's config
    # (conformance.judging.verdicts.NotApplicable): reported apart, never counted as runs
    not_applicable: list[Any] = field(default_factory=list)
    # `run --accept-known-bugs`: the failed runs a known bug of the release that ran explains, by run
    # directory (conformance.catalog.known_bugs.acceptance); the verdict is over the other runs
    accept_known_bugs: bool = False
    accepted: dict[str, dict[str, Any]] = field(default_factory=dict)
    redactor: Redactor = field(default_factory=Redactor)
    _entries: dict[int, dict[str, Any]] = field(default_factory=dict, repr=False)


def interruption_text(ctx: ReportContext) -> str | None:
    """What every report says of a command a signal stopped."""
    i = ctx.interrupted
    if not i:
        return None
    return (f"INTERRUPTED by {i['signal']}: {i['finished']} of {i['planned']} planned runs finished; "
            "the runs not finished are not in this report")


def replay_command(scenario_file: str, target: str) -> str:
    return f"sinkcheck replay {shlex.quote(str(scenario_file))} --target {shlex.quote(target)}"


def _fault_json(f: Any) -> dict[str, Any]:
    return {"kind": f.kind, "params": f.params, "fired": f.fired, "at_ms": f.at_ms, "until_ms": f.until_ms,
            "detail": f.detail}


def timeline_events(result: Any) -> dict[str, Any]:
    """Produce, faults, offset commits and objects becoming visible, in ms, from the observation."""
    obs = result.observation
    produced = [{"at": p.at_ms, "tp": f"{p.topic}-{p.partition}", "offset": p.offset} for p in obs.produced]
    faults = [_fault_json(f) for f in obs.faults]
    commits, last = [], {}
    for s in obs.offset_samples:
        for tp, k in sorted(s.committed.items()):
            if last.get(tp) != k:
                commits.append({"at": s.at_ms, "tp": tp, "offset": k})
                last[tp] = k
    visible, seen = [], set()
    for b in obs.bucket_samples:
        for o in b.objects:
            if (o.key, o.etag) not in seen:
                seen.add((o.key, o.etag))
                visible.append({"at": b.at_ms, "key": o.key, "size": o.size})
    statuses = [{"at": s.at_ms, "state": s.connector_state, "tasks": list(s.task_states)} for s in obs.statuses]
    out = {"produced": produced, "faults": faults, "commits": commits, "visible": visible, "statuses": statuses}
    tables = obs.table_samples
    if tables:
        # a table sink's commits: every snapshot of the table, at its commit time
        out["snapshots"] = [{"at": at, "id": sid, "records": added,
                             "offsets": {k: v for k, v in summary if k.startswith("kafka.connect.offsets.")}}
                            for sid, at, added, summary in tables[-1].snapshots]
    return out


def _run_data(result: Any) -> Any:
    """The checkers' view of a run (conformance.judging.checks.base.RunData), None where it cannot be had."""
    try:
        from conformance.judging.checks.base import RunData
        from conformance.playing.runner import model_config
        from conformance.inputs.targets import object_format_of, target_kind

        kind = target_kind(result.target)
        kind = "confluent" if result.target.startswith("model@") else kind
        cfg = model_config(result.scenario, kind)
        records = []
        if result.expectation is not None or cfg is not None or object_format_of(result.target):
            from conformance.inputs import wire
            from conformance.inputs.targets import worker_converters

            produced = result.observation.produced
            if len(produced) == len(result.scenario.records):
                records = wire.sink_records(result.scenario.connector, result.scenario.records,
                                            [p.offset for p in produced], worker_converters(result.target))
        return RunData(result.scenario, result.target, result.observation, result.claim, cfg, result.expectation, records)
    except Exception:
        return None


def _offsets(data: Any, obj: Any) -> list[str] | None:
    if data is None:
        return None
    try:
        got = data.offsets_of(obj)
    except Exception:
        return None
    return None if got is None else [f"{tp[0]}-{tp[1]}@{off}" for tp, off in got]


def observed_objects(result: Any, data: Any) -> list[dict[str, Any]]:
    """The final bucket: each object's key and, where it decodes (`data`: _run_data), the
    offsets it holds."""
    final = result.observation.final_bucket
    if final is None:
        return []
    out = [{"key": o.key, "size": o.size, "etag": o.etag, "offsets": _offsets(data, o)} for o in final.objects]
    return sorted(out, key=lambda d: d["key"])


def records_read(result: Any, data: Any) -> list[str] | None:
    """The records the claim's reader sees at the end, once per time it sees each ("topic-
    partition@offset", sorted): every data object of a raw listing, or those the sink's log or
    the table's current snapshot lists (the claim's view). None where an object does not decode."""
    final = result.observation.final_bucket
    if final is None:
        return []
    if data is None:
        return None
    out: list[str] = []
    for o in data.value_objects(final):
        offs = _offsets(data, o)
        if offs is None:
            return None
        out += offs
    return sorted(out, key=offset_order)


def offset_order(off: str) -> tuple[str, int]:
    """"topic-partition@offset" in topic-partition, then numeric offset order."""
    tp, _, n = off.rpartition("@")
    return tp, int(n) if n.isdigit() else 0


def config_summary(connector: dict[str, str]) -> str:
    part = connector.get("partitioner.class", "DefaultPartitioner").rsplit(".", 1)[-1]
    bits = [part, f"flush.size={connector.get('flush.size', '?')}"]
    for k in ("rotate.interval.ms", "rotate.schedule.interval.ms", "partition.duration.ms", "timestamp.extractor",
              "rotate.file.on.partition.change", "s3.compression.type"):
        if k in connector:
            bits.append(f"{k}={connector[k]}")
    fmt = connector.get("format.class", "").rsplit(".", 1)[-1]
    if fmt:
        bits.append(fmt)
    return " · ".join(bits)


def prepare_report(result: Any) -> tuple[list[dict[str, Any]], list[str] | None]:
    """The costly part of a run's entry, which needs no report context: its final objects with
    their offsets, and the records read (observed_objects, records_read). Kept in the result's
    `report_cache` where it has one: a session derives it as each run ends, in the worker
    process that played it (conformance.playing.session.Session.prepare_report)."""
    cache = getattr(result, "report_cache", None)
    if cache is not None and "derived" in cache:
        return cache["derived"]
    data = _run_data(result)
    derived = (observed_objects(result, data), records_read(result, data))
    if cache is not None:
        cache["derived"] = derived
    return derived


def entry(result: Any, ctx: ReportContext) -> dict[str, Any]:
    """The JSON form of one run (redacted): scenario × target with every property's verdict."""
    from conformance.playing.user_config import mapping_note

    key = id(result)
    if key in ctx._entries:
        return ctx._entries[key]
    sc = result.scenario
    run_dir = str(result.run_dir)
    scenario_file = ctx.reproducers.get(run_dir) or str(result.run_dir / "scenario.json")
    by_prop = {v.property: v for v in result.verdicts}
    objects, read = prepare_report(result)
    verdicts = []
    for prop in list(PROPERTIES) + [p for p in by_prop if p not in PROPERTIES]:
        v = by_prop.get(prop)
        if v is None:
            continue
        j = v.to_json()
        j["cell"] = v.status if v.claimed else NOT_CLAIMED
        verdicts.append(j)
    expected = None
    if result.expectation is not None and result.expectation.constraints is None:
        expected = [{"key": o.key, "offsets": [f"{o.topic}-{o.partition}@{x}" for x in o.offsets], "rotation": o.rotation}
                    for o in result.expectation.objects if o.value_object]
    e = {
        "scenario": sc.name,
        "origin": ctx.origins.get(run_dir, "named"),
        "target": result.target,
        "status": result.status,
        # why the run tested nothing (no object to compare): its pass is unknown
        "untested": getattr(result, "untested", None),
        # where a rule answered the bucket check of the task's start (R1.3): the release's start() and
        # the sink's (conformance.judging.startup); None for every other run
        "startup": result.startup.to_json() if getattr(result, "startup", None) is not None else None,
        "claim": {"name": result.claim.name, "properties": sorted(result.claim.properties),
                  "naming": result.claim.naming, "reasons": list(result.claim.reasons)},
        "seed": sc.seed,
        "connector_version": sc.connector_version,
        "config_summary": config_summary(sc.connector),
        "connector": sc.connector,
        # an audit's results (conformance.auditing.auditor.AuditResult) hold no records, only how many were checked
        "records": getattr(result, "record_count", None) or len(sc.records),
        "faults_scheduled": [f.to_json() for f in sc.faults],
        "faults": [_fault_json(f) for f in result.observation.faults],
        "wall_s": round(result.wall_s, 3),
        "timings": {k: round(v, 4) for k, v in (getattr(result, "timings", None) or {}).items()},
        "run_dir": run_dir,
        "scenario_file": scenario_file,
        "replay": getattr(result, "reproduce", None) or replay_command(scenario_file, result.target),
        "steps": sc.steps(),
        "notes": sc.notes,
        # how the scenario's topics were put onto a user's connector config's (conformance.playing.user_config)
        "topic_mapping": mapping_note(sc),
        "verdicts": verdicts,
        "objects": objects,
        "records_read": read,
        "expected_objects": expected,
        "quiet": result.observation.quiet,
        "still_moving": result.observation.still_moving,
        "timeline": timeline_events(result),
    }
    others = getattr(result, "other_claims", None) or []
    if others:  # further claims checked on the same observation (Spark: a raw listing's view)
        from conformance.judging.verdicts import overall

        e["claim"]["view"] = result.claim.view
        e["other_claims"] = [
            {"claim": {"name": c.name, "view": c.view, "properties": sorted(c.properties), "naming": c.naming,
                       "reasons": list(c.reasons)},
             "status": overall(vs),
             "verdicts": [{**v.to_json(), "cell": v.status if v.claimed else NOT_CLAIMED} for v in vs]}
            for c, vs in others]
    translation = getattr(result, "translation", None)
    if translation is not None and not translation.given:
        # the scenario's config as this target's connector got it: sent, mapped, dropped (never sent)
        e["translation"] = {**translation.to_json(), "sent": dict(translation.config)}
    if getattr(result, "fault_changes", None):
        e["fault_changes"] = list(result.fault_changes)
    if getattr(result, "flaky", None):
        e["flaky"] = dict(result.flaky)
    if getattr(result, "audit", None):
        e["audit"] = result.audit  # the audit's counts for this topic-partition
    if run_dir in ctx.accepted:  # a failure the team accepts: a known bug of the release that ran
        from conformance.catalog.known_bugs import accepted_line

        e["accepted_known_bug"] = {**ctx.accepted[run_dir], "line": accepted_line(ctx.accepted[run_dir])}
    e = ctx.redactor.data(e)
    ctx._entries[key] = e
    return e


def not_applicable_entries(ctx: ReportContext) -> list[dict[str, Any]]:
    """The JSON form of the scenarios not applicable under the user's config (redacted)."""
    return [ctx.redactor.data(na.to_json()) for na in ctx.not_applicable]


def counts(entries: list[dict[str, Any]], not_applicable: list[dict[str, Any]] | None = None) -> dict[str, int]:
    """Runs by status, and beside them the scenarios not applicable (never runs)."""
    c = {PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_APPLICABLE: len(not_applicable or [])}
    for e in entries:
        c[e["status"]] = c.get(e["status"], 0) + 1
    return c


def accepted_entries(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed runs accepted as known bugs of their release (`run --accept-known-bugs`)."""
    return [e for e in entries if e.get("accepted_known_bug") and e["status"] == FAIL]


def overall_status(entries: list[dict[str, Any]], errors: list[dict[str, Any]] | None = None,
                   accepting: bool = True) -> str:
    """The verdict over the runs; a failure accepted as a known bug of its release is no failure
    of it where `accepting` (the runs' own status where not)."""
    if errors:
        return "error"
    statuses = {PASS if accepting and e.get("accepted_known_bug") else e["status"] for e in entries}
    if FAIL in statuses:
        return FAIL
    if UNKNOWN in statuses:
        return UNKNOWN
    return PASS if entries else "nothing"


def claim_columns(e: dict[str, Any]) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(column, claim, verdicts) for each claim of a run: the target alone when it makes one
    claim, "target · view" per claim when it makes several (Spark: log and listing)."""
    others = e.get("other_claims") or []
    if not others:
        return [(e["target"], e["claim"], e["verdicts"])]
    return [(f"{e['target']} · {e['claim'].get('view', 'listing')}", e["claim"], e["verdicts"])] + [
        (f"{e['target']} · {o['claim']['view']}", o["claim"], o["verdicts"]) for o in others]


def matrix(entries: list[dict[str, Any]], not_applicable: list[dict[str, Any]] | None = None
           ) -> dict[str, dict[str, dict[str, int]]]:
    """property -> column (a target, or target · view per claim) -> {"pass": n, "fail": n,
    "unknown": n, "not-claimed": n, plus "measured-fail": n, and "n/a": the scenarios not
    applicable whose claim holds that property (counted beside the runs, never as one)}."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    nas = not_applicable or []
    columns = sorted({c for e in entries for c, _, _ in claim_columns(e)} | {n["target"] for n in nas})
    props = list(PROPERTIES) + sorted(({v["property"] for e in entries for _, _, vs in claim_columns(e) for v in vs}
                                       | {p for n in nas for p in n["properties"]}) - set(PROPERTIES))
    for p in props:
        out[p] = {c: {PASS: 0, FAIL: 0, UNKNOWN: 0, NOT_CLAIMED: 0, "measured-fail": 0, NOT_APPLICABLE: 0}
                  for c in columns}
    for n in nas:
        for p in n["properties"]:
            out[p][n["target"]][NOT_APPLICABLE] += 1
    for e in entries:
        for column, _, verdicts in claim_columns(e):
            for v in verdicts:
                cell = out[v["property"]][column]
                cell[v["cell"]] += 1
                if v["cell"] == NOT_CLAIMED and v["status"] == FAIL:
                    cell["measured-fail"] += 1
    return out


def fault_label(f: dict[str, Any]) -> str:
    """A fault's kind as the coverage table counts it: an S3 rule by its action and operation
    (`s3 fail 503 UploadPart`), any other fault by its kind."""
    if f["kind"] != "s3":
        return f["kind"]
    p = f.get("params") or {}
    action = str(p.get("action", "?"))
    if action == "fail":
        action += f" {p.get('status', '')}" + (f" {p['code']}" if p.get("code") else "") + (
            f" ({p['state']})" if p.get("state") else "")
    elif action == "reset":
        action += " answer" if p.get("forward", True) else " request"
    elif action == "error-200":
        action += " applied" if p.get("forward", True) else " not applied"
    return f"s3 {action} {p.get('operation', '*')}"


def fault_coverage(entries: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """fault kind -> target -> {"scheduled": n, "fired": n}: how often each kind of fault was
    staged and how often it really happened (a run whose fault never fired tested nothing)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for e in entries:
        for f in e.get("faults") or []:
            cell = out.setdefault(fault_label(f), {}).setdefault(e["target"], {"scheduled": 0, "fired": 0})
            cell["scheduled"] += 1
            cell["fired"] += 1 if f["fired"] else 0
    return {k: out[k] for k in sorted(out)}


def cell_status(c: dict[str, int]) -> str:
    """A matrix cell's colour: over the runs that applied; n/a only where none did."""
    if c[FAIL]:
        return FAIL
    if c[UNKNOWN]:
        return UNKNOWN
    if c[PASS]:
        return PASS
    if c.get(NOT_APPLICABLE) and not c.get(NOT_CLAIMED):
        return NOT_APPLICABLE
    return NOT_CLAIMED


def witness_text(w: dict[str, Any]) -> str:
    import json

    lines = [f"{w['anomaly']}: {w.get('explanation', '')}"]
    if w.get("offsets"):
        lines.append("  offsets: " + ", ".join(w["offsets"]))
    if w.get("keys"):
        lines.append("  keys: " + ", ".join(w["keys"]))
    if w.get("expected") is not None or w.get("observed") is not None:
        lines.append("  expected: " + json.dumps(w.get("expected"), default=str)[:400])
        lines.append("  observed: " + json.dumps(w.get("observed"), default=str)[:400])
    return "\n".join(lines)


def known_bugs_section(results: list[Any], ctx: ReportContext) -> list[dict[str, Any]]:
    """Each known bug that touches a config and version this run played, and whether it was
    reproduced (conformance.catalog.known_bugs.relevant), redacted."""
    from conformance.catalog.known_bugs import relevant

    return ctx.redactor.data(relevant(results))
