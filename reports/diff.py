"""The upgrade-gate diff: the same scenarios on a baseline and a candidate, compared verdict by
verdict and, in what each side's claim reads, object set by object set or record by record.
Works on result entries (reports.context.entry or a saved results.json), so a run can also be
compared with an earlier run's results.json.

- regression: a property the candidate claims fails there but did not fail on the baseline
  (with the candidate's witnesses);
- behaviour change: on identical input the two sides' final states differ in what the claim
  reads. Where the sink names its objects deterministically (Confluent's naming: the Python sink
  too) that is the object set (keys, or the offsets an object holds). With exactly-once claimed
  on both sides the object set is a function of the input: a change is *documented* when each
  side matches its own version's model (spec §18), *configured* when each matches the model for
  its own config, *fixed* where the baseline's objects break its model and the candidate's match
  it; otherwise *unexplained*: a regression (`upgrade-stability`) whose witnesses are the
  objects that differ. Where either side's model verdict is unknown the objects are shown, not
  judged (*unknown*). Under at-least-once a change is allowed and reported. A sink whose
  names are not deterministic (Iceberg's data files, Camel's exchange ids, Spark's part files)
  is compared by the records its claim's reader sees (the table's current snapshot, the log, or
  the listing): another file name holding the same records is no change, and other records are
  judged by the verdicts (no-loss, no-duplicates), never by `upgrade-stability`.
- fixed: failed on the baseline, passes on the candidate.
"""
from __future__ import annotations

from typing import Any

from reports.context import offset_order

MAX_WITNESS_KEYS = 8


def _objects(e: dict[str, Any]) -> dict[str, list[str] | None]:
    return {o["key"]: o.get("offsets") for o in e.get("objects") or []}


def _verdict(e: dict[str, Any], prop: str) -> dict[str, Any] | None:
    return next((v for v in e["verdicts"] if v["property"] == prop), None)


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
                   key=offset_order)
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


# claims whose objects are named by the input alone (conformance.judging.claims.Claim.naming): the
# object set is compared by key, and a change nothing explains is a regression
DETERMINISTIC_NAMING = ("confluent",)


def by_name(e: dict[str, Any]) -> bool:
    return e["claim"].get("naming") in DETERMINISTIC_NAMING


def record_diff(b: dict[str, Any], c: dict[str, Any]) -> dict[str, Any] | None:
    """What the claim's reader sees on each side, record by record (entry "records_read"): None
    where both see the same records the same number of times, whatever files hold them."""
    from collections import Counter

    rb, rc = b.get("records_read"), c.get("records_read")
    if rb is None or rc is None:
        undecoded = [side for side, r in (("baseline", rb), ("candidate", rc)) if r is None]
        return {"unit": "records", "undecoded": undecoded, "counts": {"baseline": len(rb or []), "candidate": len(rc or [])},
                "moved_offsets": [], "moved_count": 0,
                "summary": f"the {' and '.join(undecoded)} side's records could not be read back: not compared"}
    cb, cc = Counter(rb), Counter(rc)
    if cb == cc:
        return None
    differ = sorted((off for off in set(cb) | set(cc) if cb[off] != cc[off]), key=offset_order)
    return {
        "unit": "records",
        "counts": {"baseline": len(rb), "candidate": len(rc)},
        "moved_offsets": [{"offset": off, "baseline": f"seen {cb[off]}×", "candidate": f"seen {cc[off]}×"}
                          for off in differ[:MAX_WITNESS_KEYS]],
        "moved_count": len(differ),
        "summary": f"{len(rb)} records read → {len(rc)}; {len(differ)} records seen a different number of times",
    }


def _status(e: dict[str, Any], prop: str) -> str | None:
    v = _verdict(e, prop)
    return None if v is None else v["status"]


def _explained_by(b: dict[str, Any], c: dict[str, Any]) -> str:
    """What differs between the sides that a model could explain a change by."""
    what = [w for w, k in (("versions'", "connector_version"), ("configs'", "connector")) if b.get(k) != c.get(k)]
    return (" and ".join(what) + " models") if what else "model"


def _object_witnesses(od: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects that differ, as witnesses of an unexplained change."""
    out = []
    for o in od["only_baseline"]:
        out.append({"anomaly": "object-gone", "keys": [o["key"]], "offsets": o["offsets"] or [],
                    "explanation": "an object of the baseline's that the candidate does not write"})
    for o in od["only_candidate"]:
        out.append({"anomaly": "object-new", "keys": [o["key"]], "offsets": o["offsets"] or [],
                    "explanation": "an object the candidate writes that the baseline does not"})
    for o in od["changed"]:
        out.append({"anomaly": "object-changed", "keys": [o["key"]], "offsets": o["candidate"] or [],
                    "expected": o["baseline"], "observed": o["candidate"],
                    "explanation": "the same key holds other records on the candidate"})
    return out


def _object_change(b: dict[str, Any], c: dict[str, Any], od: dict[str, Any]) -> tuple[str, str]:
    """(kind, why) of a change in the object set of two by-name entries."""
    versions = (b.get("connector_version"), c.get("connector_version"))
    model = {side: _status(e, "exact-object-set") for side, e in (("baseline", b), ("candidate", c))}
    unknown = [side for side, st in model.items() if st not in ("pass", "fail")]
    if not (_exactly_once(b) and _exactly_once(c)):
        return "allowed", "at-least-once is claimed on one side: the object set may vary"
    if unknown:
        return "unknown", (f"the {' and '.join(unknown)} side's objects could not be held to its model "
                           "(exact-object-set unknown: see its verdicts): the change is shown, not judged")
    if versions[0] != versions[1] and model["baseline"] == model["candidate"] == "pass":
        return "documented", (f"each side matches its own version's model ({versions[0]} vs {versions[1]}): "
                              "a documented behaviour change between versions (spec §18)")
    if model["candidate"] == "pass" and model["baseline"] == "fail":
        return "fixed", ("the baseline's objects break its claim (see its failed verdicts) and the "
                         "candidate's match the model: the change is the fix")
    if b.get("connector") != c.get("connector") and model["baseline"] == model["candidate"] == "pass":
        changed = sorted(k for k in set(b["connector"]) | set(c["connector"])
                         if b["connector"].get(k) != c["connector"].get(k))
        return "configured", (f"each side matches the model for its own config ({', '.join(changed)} "
                              "differ): the config change moves file boundaries (C3)")
    return "unexplained", ("exactly-once is claimed on both sides, so identical input must give the same objects; "
                           f"the change is not explained by the {_explained_by(b, c)}")


def _record_change(b: dict[str, Any], c: dict[str, Any], rd: dict[str, Any]) -> tuple[str, str]:
    """(kind, why) of a change in the records a non-deterministic-naming claim's reader sees."""
    if rd.get("undecoded"):
        return "unknown", rd["summary"]
    failed = {side: sorted(v["property"] for v in e["verdicts"] if v["claimed"] and v["status"] == "fail")
              for side, e in (("baseline", b), ("candidate", c))}
    if failed["baseline"] and not failed["candidate"]:
        return "fixed", (f"the baseline's reader sees other records than the candidate's and the baseline fails "
                         f"{', '.join(failed['baseline'])}: the change is the fix")
    return "records", ("the claim's reader sees other records on each side; the file names are the sink's own, "
                       "so the records are compared, and the verdicts judge them")


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
        named = by_name(b) and by_name(c)
        od = object_diff(b, c) if named else record_diff(b, c)
        if od is not None:
            pair_changed = True
            if named:
                od = {**od, "unit": "objects",
                      "summary": f"{od['counts']['baseline']} objects → {od['counts']['candidate']}; "
                                 f"{od['moved_count']} records held in a different object"}
            kind, why = _object_change(b, c, od) if named else _record_change(b, c, od)
            versions = (b.get("connector_version"), c.get("connector_version"))
            change = {"scenario": name, "kind": kind, "why": why, "objects": od, "replay_baseline": b["replay"],
                      "replay_candidate": c["replay"], "steps": c["steps"], "versions": list(versions),
                      "rotations": _rotations(b, c)}
            changes.append(change)
            if kind == "unexplained":
                regressions.append({"scenario": name, "property": "upgrade-stability", "kind": "behaviour-change",
                                    "baseline": "objects", "candidate": "different objects", "claimed": True,
                                    "rule": "P-UPGRADE", "message": why, "witnesses": _object_witnesses(od),
                                    "replay": c["replay"], "steps": c["steps"]})
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
