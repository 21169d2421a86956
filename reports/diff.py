"""The upgrade-gate diff: the same scenarios on a baseline and a candidate, compared verdict by
verdict and object set by object set. Works on result entries (reports.context.entry or a
saved results.json), so a run can also be compared with an earlier run's results.json.

- regression: a property the candidate claims fails there but did not fail on the baseline;
- behaviour change: on identical input the final object sets differ (keys, or the offsets an
  object holds). With exactly-once claimed on both sides the object set is a function of the
  input: a change is *documented* when each side matches its own version's model (spec §18),
  where the baseline's objects break its model and the candidate's match it, the change is the
  *fixed* one; otherwise *unexplained* (a regression). Under at-least-once a change is allowed
  and reported.
- fixed: failed on the baseline, passes on the candidate.
"""
from __future__ import annotations

from typing import Any

MAX_WITNESS_KEYS = 8


def _objects(e: dict[str, Any]) -> dict[str, list[str] | None]:
    return {o["key"]: o.get("offsets") for o in e.get("objects") or []}


def _verdict(e: dict[str, Any], prop: str) -> dict[str, Any] | None:
    return next((v for v in e["verdicts"] if v["property"] == prop), None)


def _strip(key: str) -> str:
    return key


def object_diff(b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any] | None:
    bo, co = _objects(b), _objects(c)
    only_b = sorted(set(bo) - set(co))
    only_c = sorted(set(co) - set(bo))
    changed = sorted(k for k in set(bo) & set(co) if bo[k] != co[k])
    if not (only_b or only_c or changed):
        return None
    # offsets held differently: which records moved to another object
    where_b = {off: k for k, offs in bo.items() for off in offs or []}
    where_c = {off: k for k, offs in co.items() for off in offs or []}
    moved = sorted((off for off in set(where_b) | set(where_c) if where_b.get(off) != where_c.get(off)),
                   key=lambda s: (s.rsplit("@", 1)[0], int(s.rsplit("@", 1)[1]) if s.rsplit("@", 1)[-1].isdigit() else 0))
    return {
        "only_baseline": [{"key": k, "offsets": bo[k]} for k in only_b[:MAX_WITNESS_KEYS]],
        "only_candidate": [{"key": k, "offsets": co[k]} for k in only_c[:MAX_WITNESS_KEYS]],
        "changed": [{"key": k, "baseline": bo[k], "candidate": co[k]} for k in changed[:MAX_WITNESS_KEYS]],
        "counts": {"baseline": len(bo), "candidate": len(co), "only_baseline": len(only_b),
                   "only_candidate": len(only_c), "changed": len(changed)},
        "moved_offsets": [{"offset": off, "baseline": where_b.get(off), "candidate": where_c.get(off)} for off in moved[:MAX_WITNESS_KEYS]],
        "moved_count": len(moved),
    }


def _exactly_once(e: dict[str, Any]) -> bool:
    return e["claim"]["name"] == "exactly-once"


def _matches_model(e: dict[str, Any]) -> bool:
    v = _verdict(e, "exact-object-set")
    return v is not None and v["status"] == "pass"


def diff_entries(baseline: list[dict[str, Any]], candidate: list[dict[str, Any]]) -> dict[str, Any]:
    """Pair entries by scenario name (run order as tie-break) and compare them."""
    def key(e: dict[str, Any]) -> str:
        return e["scenario"]

    bmap = {key(e): e for e in baseline}
    cmap = {key(e): e for e in candidate}
    regressions, changes, fixed, verdict_changes = [], [], [], []
    unchanged = 0
    for name in [k for k in bmap if k in cmap]:
        b, c = bmap[name], cmap[name]
        pair_changed = False
        for cv in c["verdicts"]:
            bv = _verdict(b, cv["property"])
            bs = bv["status"] if bv else None
            if bs == cv["status"]:
                continue
            pair_changed = True
            item = {"scenario": name, "property": cv["property"], "baseline": bs, "candidate": cv["status"],
                    "claimed": cv["claimed"], "rule": cv["rule"], "message": cv["message"],
                    "witnesses": cv["witnesses"], "replay": c["replay"], "steps": c["steps"]}
            if cv["claimed"] and cv["status"] == "fail" and bs != "fail":
                regressions.append({**item, "kind": "regression"})
            elif bs == "fail" and cv["status"] == "pass":
                fixed.append({**item, "kind": "fixed"})
            else:
                verdict_changes.append({**item, "kind": "verdict-change"})
        od = object_diff(b, c)
        if od is not None:
            pair_changed = True
            versions = (b.get("connector_version"), c.get("connector_version"))
            if not (_exactly_once(b) and _exactly_once(c)):
                kind, why = "allowed", "at-least-once is claimed on one side: the object set may vary"
            elif versions[0] != versions[1] and _matches_model(b) and _matches_model(c):
                kind, why = "documented", (f"each side matches its own version's model ({versions[0]} vs {versions[1]}): "
                                           "a documented behaviour change between versions (spec §18)")
            elif _matches_model(c) and not _matches_model(b):
                kind, why = "fixed", ("the baseline's objects break its claim (see its failed verdicts) and the "
                                      "candidate's match the model: the change is the fix")
            elif b.get("connector") != c.get("connector") and _matches_model(b) and _matches_model(c):
                changed = sorted(k for k in set(b["connector"]) | set(c["connector"])
                                 if b["connector"].get(k) != c["connector"].get(k))
                kind, why = "configured", (f"each side matches the model for its own config ({', '.join(changed)} "
                                           "differ): the config change moves file boundaries (C3)")
            else:
                kind, why = "unexplained", ("exactly-once is claimed on both sides, so identical input must give the "
                                            "same objects; the change is not explained by the versions' models")
            change = {"scenario": name, "kind": kind, "why": why, "objects": od, "replay_baseline": b["replay"],
                      "replay_candidate": c["replay"], "steps": c["steps"], "versions": list(versions),
                      "rotations": _rotations(b, c)}
            changes.append(change)
            if kind == "unexplained":
                regressions.append({"scenario": name, "property": "upgrade-stability", "kind": "behaviour-change",
                                    "baseline": "objects", "candidate": "different objects", "claimed": True,
                                    "rule": "P-UPGRADE", "message": why, "witnesses": [], "replay": c["replay"],
                                    "steps": c["steps"]})
        if not pair_changed:
            unchanged += 1
    return {
        "baseline_targets": sorted({e["target"] for e in baseline}),
        "candidate_targets": sorted({e["target"] for e in candidate}),
        "compared": len([k for k in bmap if k in cmap]),
        "only_baseline": sorted(set(bmap) - set(cmap)),
        "only_candidate": sorted(set(cmap) - set(bmap)),
        "regressions": regressions,
        "fixed": fixed,
        "verdict_changes": verdict_changes,
        "behaviour_changes": changes,
        "unchanged": unchanged,
    }


def _rotations(b: dict[str, Any], c: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The model's objects with the rule that closed each, both sides (explains a change)."""
    return {"baseline": b.get("expected_objects") or [], "candidate": c.get("expected_objects") or []}
