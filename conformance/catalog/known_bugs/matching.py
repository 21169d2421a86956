"""What a run is told of the known bugs: which entries touch the configs it played on the version
that ran, which it reproduced and with what witness, and which an upgrade fixes or introduces."""
from __future__ import annotations

import re
from typing import Any, Sequence

from conformance.catalog.known_bugs.entry import KnownBug
from conformance.catalog.known_bugs.library import KNOWN_BUGS
from conformance.inputs.targets import target_kind


def version_of(result: Any) -> str | None:
    """The connector version a run ran: what the target said of itself, else its spec's `@VERSION`."""
    info = getattr(result, "target_info", None)
    if info is not None and getattr(info, "connector_version", None):
        return info.connector_version
    spec = result.target
    if spec.startswith("model@"):
        return spec.split("@", 1)[1]
    return spec.partition("@")[2] or None


def sink_of(spec: str) -> str:
    return "confluent" if spec.startswith("model@") or spec == "model" else target_kind(spec)


def _trace(result: Any) -> str | None:
    sts = getattr(result.observation, "statuses", None) or []
    return next((s.trace for s in reversed(sts) if getattr(s, "trace", None)), None)


def _signature_line(bug: KnownBug, trace: str | None) -> str | None:
    """The line of the trace where the bug's signature starts (its exception)."""
    if not bug.matches(trace):
        return None
    m = re.search(bug.signature or "", trace or "")
    start = (trace or "").rfind("\n", 0, m.start() if m else 0) + 1
    return (trace or "")[start:].splitlines()[0].strip()[:240]


def _witness(bug: KnownBug, result: Any) -> str:
    parts = [f"the task FAILED with {line}"] if (line := _signature_line(bug, _trace(result))) else []
    parts += [f"{v.property}: {v.message}" + (f" ({v.witnesses[0].explanation})" if v.witnesses else "")
              for v in result.verdicts if v.status == "fail" and v.property != "liveness"][:2]
    return "; ".join(parts) or next((f"{v.property}: {v.message}" for v in result.verdicts if v.status == "fail"), "")


def reproduction(bug: KnownBug, result: Any) -> str | None:
    """The witness a run gives of this bug, or None: its scenario failing, the task's trace
    carrying the bug's signature, or (a bug that leaves no trace) its `shown_by` over a run whose
    scenario meets its condition (config and fault)."""
    if sink_of(result.target) != bug.sink:
        return None
    trace = _trace(result)
    # a scenario of the bug failing for another reason (another trace) is not this bug
    if result.scenario.name in bug.scenarios and result.status == "fail" and (not trace or not bug.signature
                                                                             or bug.matches(trace)):
        return f"{result.scenario.name} failed: {_witness(bug, result)}"
    if bug.matches(trace):
        return f"{result.scenario.name}: {_witness(bug, result)}"
    if bug.shown_by and bug.condition_met(result.scenario) and (w := bug.shown_by(result)):
        return f"{result.scenario.name}: {w}"
    return None


def reproduced(result: Any) -> list[KnownBug]:
    """The known bugs a run reproduced (whatever the version that ran: a reproducer of one is a
    reproducer of it)."""
    return [bug for bug in KNOWN_BUGS if reproduction(bug, result)]


def acceptance(result: Any) -> dict[str, Any] | None:
    """The known bug a failed run is accepted as, for a team that accepts the known bugs of the
    release it runs (`sinkcheck run --accept-known-bugs`): an entry that affects the version that
    ran (or whose version is not known), that the run reproduced, and whose `breaks` holds every
    claimed property that failed. None where the run did not fail, or failed in a way no known bug
    of its release explains (a new failure: the team hears of it)."""
    failed = {v.property for v in result.failed()}
    if not failed:
        return None
    version = version_of(result)
    for bug in KNOWN_BUGS:
        if bug.affects(version) is False or not failed <= set(bug.breaks):
            continue
        if witness := reproduction(bug, result):
            return {"id": bug.id, "cite": bug.cite, "url": bug.url(), "title": bug.title, "version": version,
                    "failed": sorted(failed), "witness": witness}
    return None


def acceptances(results: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Each failed run a known bug of its release explains (acceptance), by run directory."""
    return {str(r.run_dir): a for r in results if (a := acceptance(r)) is not None}


def accepted_line(accepted: dict[str, Any]) -> str:
    """How every output names an accepted run's known bug."""
    return f"accepted known bug {accepted['id']} ({accepted.get('cite') or 'no upstream issue'})"


def relevant(results: Sequence[Any]) -> list[dict[str, Any]]:
    """Per target, each known bug whose condition a scenario the run played meets (its config, and
    the fault that sets it off where one does) on a version that has it (or whose version is not
    known), and whether the run reproduced it."""
    out: list[dict[str, Any]] = []
    by_target: dict[str, list[Any]] = {}
    for r in results:
        by_target.setdefault(r.target, []).append(r)
    for target, rs in by_target.items():
        sink = sink_of(target)
        version = next((v for v in (version_of(r) for r in rs) if v), None)
        for bug in KNOWN_BUGS:
            if bug.sink != sink:
                continue
            configs = [r.scenario.name for r in rs if bug.condition_met(r.scenario)]
            witnesses = [(r.scenario.name, w) for r in rs if (w := reproduction(bug, r))]
            affected = bug.affects(version)
            if not witnesses and (not configs or affected is False):
                continue
            out.append({**bug.to_json(), "target": target, "version": version,
                        "version_affected": affected, "configs": configs,
                        "reproduced": bool(witnesses), "witnesses": [{"scenario": s, "witness": w} for s, w in witnesses]})
    return out


def gate_changes(baseline: Sequence[Any], candidate: Sequence[Any]) -> list[dict[str, Any]]:
    """Known bugs the upgrade fixes (reproduced on the baseline, not on the candidate although it
    played the same scenario) or introduces (the other way round), with the witness."""
    def seen(rs: Sequence[Any]) -> dict[str, str]:
        found: dict[str, str] = {}
        for bug in KNOWN_BUGS:
            w = next((w for r in rs if (w := reproduction(bug, r))), None)
            if w:
                found[bug.id] = w
        return found

    base, cand = seen(baseline), seen(candidate)
    played_base = {r.scenario.name for r in baseline}
    played_cand = {r.scenario.name for r in candidate}
    changes = []
    for bug in KNOWN_BUGS:
        if bug.id in base and bug.id not in cand and set(bug.scenarios) & played_cand:
            changes.append({"id": bug.id, "change": "fixed", "cite": bug.cite, "url": bug.url(),
                            "witness": base[bug.id], "title": bug.title})
        elif bug.id in cand and bug.id not in base and set(bug.scenarios) & played_base:
            changes.append({"id": bug.id, "change": "introduced", "cite": bug.cite, "url": bug.url(),
                            "witness": cand[bug.id], "title": bug.title})
    return changes


def gate_line(change: dict[str, Any]) -> str:
    cite = f" ({change['cite']})" if change.get("cite") else ""
    return f"known bug {change['id']}{cite} {change['change']}: {change['witness']}"


def known_bug_line(b: dict[str, Any]) -> str:
    """One entry of `relevant` as the terminal says it."""
    cite = f" ({b['cite']})" if b.get("cite") else ""
    fixed = f"fixed in {', '.join(b['fixed_in'])}" if b["fixed_in"] else "no fixed release"
    head = (f"KNOWN BUG {b['id']}{cite} on {b['target']}: "
            + (f"reproduced: {b['witnesses'][0]['witness']}" if b["reproduced"] else
               f"its condition is met ({', '.join(b['configs'][:3])}), not reproduced by this run"))
    return head + f"\n  {fixed}; workaround: {b['workaround'] or 'none known'}"
