"""Delivery: every record acknowledged lands (no-loss), once (no-duplicates), in exactly the
objects the model names (exact-object-set), and no object is seen half-written (atomic-visibility)."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any

from conformance.judging.claims import C1, several_open_files
from conformance.judging.verdicts import UNKNOWN, Verdict, Witness
from reference_impl.engine.contents import decode_view, encode_view
from conformance.judging.checks.base import (RunData, TP, _at, _observed_objects, _past_fatal_null, _tp_name,
    _verdict, check)


# --- the properties ---------------------------------------------------------------------------

@check("no-loss", "P-NOLOSS")
def no_loss(d: RunData) -> Verdict:
    final = d.observation.final_bucket
    visible: dict[TP, set[int]] = defaultdict(set)
    undecodable = []
    for obj in d.value_objects(final):
        offs = d.offsets_of(obj)
        if offs is None:
            undecodable.append(obj.key)
            continue
        for tp, o in offs:
            visible[tp].add(o)
    committed = d.observation.final_offsets
    model_visible: dict[TP, set[int]] = defaultdict(set)
    if d.expectation is not None and d.expectation.constraints is None:
        for e in d.expectation.objects:
            if e.certain:
                model_visible[(e.topic, e.partition)].update(e.offsets)
    lost, pending = [], []
    # C1: a retriable error can cut a commit set after some of its files completed, so a later
    # offset is visible while an earlier one waits, in a file of the same set, to be written again
    cut_sets = C1 in d.claim.caveats and any(f.kind == "s3" and f.fired for f in d.observation.faults)
    # R3.1/R3.10: so can a crash within a commit of several files (they complete one after
    # another, in the order they were opened), where no restart writes them again: the task dies
    # for good (a later offset then stays visible while earlier ones are never committed)
    cut_sets = cut_sets or (several_open_files(d.scenario.connector) and any(
        f.kind == "crash" and f.fired for f in d.observation.faults) and d.expectation is not None
        and d.expectation.task_failure is not None)
    for tp, offsets in sorted(d.must_write.items()):
        top = -1 if cut_sets else max(visible[tp], default=-1)
        for o in sorted(offsets - visible[tp]):
            why = []
            if committed.get(_tp_name(tp), 0) > o:
                why.append(f"the sink committed {committed[_tp_name(tp)]}")
            if top > o:
                why.append(f"a later offset ({top}) is visible")
            if o in model_visible[tp]:
                why.append("the model says it must be visible")
            if why:
                lost.append(Witness("lost", (_at(tp, o),), explanation=f"absent from {d.visible_in} although " + " and ".join(why)))
            else:
                pending.append(_at(tp, o))
    if undecodable and not lost:
        return Verdict("no-loss", UNKNOWN, False, message=f"{len(undecodable)} objects could not be decoded",
                       details={"undecodable": undecodable[:10]})
    return _verdict("no-loss", lost, "every committed or superseded record is visible",
                    f"{len(lost)} records lost", not_yet_visible=pending[:50], not_yet_visible_count=len(pending))


@check("no-duplicates", "P-NODUP")
def no_duplicates(d: RunData) -> Verdict:
    where: dict[int, list[str]] = defaultdict(list)
    for obj in d.value_objects(d.observation.final_bucket):
        for s in d.seqs(obj) or []:
            where[s].append(obj.key)
    dups = []
    for s, keys in sorted(where.items()):
        if len(keys) > 1:
            r = d.seq_to_record.get(s)
            at = _at(r.tp, r.offset) if r else f"seq {s}"
            dups.append(Witness("duplicated", (at,), tuple(sorted(set(keys))),
                                explanation=f"{at} appears {len(keys)} times"))
    return _verdict("no-duplicates", dups, "every record appears once", f"{len(dups)} records duplicated")


@check("exact-object-set", "§16")
def exact_object_set(d: RunData) -> Verdict:
    exp = d.expectation
    if exp is None or exp.constraints is not None:
        return Verdict("exact-object-set", UNKNOWN, False, message="the model gives constraints, not an exact set, for this config")
    expected = {o.key: list(o.offsets) for o in exp.objects if o.value_object and o.certain}
    # files the task may or may not have committed before it died (their put is unknown, R1.4):
    # allowed when present, exactly as the model has them, and never required
    possible = {o.key: list(o.offsets) for o in exp.objects if o.value_object and not o.certain}
    observed = _observed_objects(d)
    lower_bound = _past_fatal_null(d)
    unbound = {obj.key for obj in d.value_objects(d.observation.final_bucket)
               if lower_bound and {tp for tp, _ in d.offsets_of(obj) or ()} <= lower_bound}
    w = []
    for k in sorted(set(observed) - set(expected)):
        if k in possible and possible[k] == observed[k] or k in unbound and k not in possible:
            continue
        w.append(Witness("unexpected-object", keys=(k,), observed=observed[k],
                         expected=possible.get(k),
                         explanation="the model has no such object" if k not in possible
                         else "the model's possible object under this key holds other records"))
    for k in sorted(set(expected) - set(observed)):
        w.append(Witness("missing-object", keys=(k,), expected=expected[k], explanation="the model commits this object"))
    for k in sorted(set(expected) & set(observed)):
        if expected[k] != observed[k]:
            w.append(Witness("different-object", keys=(k,), expected=expected[k], observed=observed[k],
                             explanation="the object holds other records than the model's"))
    return _verdict("exact-object-set", w, f"{len(expected)} objects exactly as the model", f"{len(w)} objects differ from the model")


@check("atomic-visibility", "R7.1")
def atomic_visibility(d: RunData) -> Verdict:
    exp = d.expectation
    model = {o.key: o for o in exp.objects if o.certain or d.boundaries} \
        if exp is not None and exp.constraints is None and d.boundaries else {}
    # a version an earlier config phase made before the update rewrote its records (C3) is whole too
    earlier: dict[str, list[Any]] = defaultdict(list)
    for o in exp.superseded if model and exp is not None else []:
        earlier[o.key].append(o)
    by_offset = {(r.topic, r.partition, r.offset): r for r in d.records}
    expected_rows: dict[str, list[Any]] = {}

    def rows_of(m: Any) -> Any:
        recs = [by_offset[(m.topic, m.partition, o)] for o in m.offsets if (m.topic, m.partition, o) in by_offset]
        return decode_view(d.cfg, encode_view(d.cfg, recs, "value"), "value")
    w = []
    seen: set[tuple[str, str]] = set()
    for sample in d.observation.bucket_samples:
        # a version already judged is passed over before the listing is read for data objects:
        # the same versions come back in every sample until the sink writes again
        fresh = [o for o in sample.objects if (o.key, o.etag) not in seen]
        if not fresh:
            continue
        for obj in d.value_objects(replace(sample, objects=tuple(fresh))):
            if (obj.key, obj.etag) in seen or obj.body is None:
                continue
            seen.add((obj.key, obj.etag))
            m = model.get(obj.key)
            if m is None or d.cfg is None:
                if d.seqs(obj) is None and d.decodable:
                    w.append(Witness("undecodable-object", keys=(obj.key,), explanation="not a complete object of the format"))
                continue
            if obj.key not in expected_rows:
                expected_rows[obj.key] = rows_of(m)
            try:
                rows = decode_view(d.cfg, obj.body, "value")
            except Exception as e:
                rows = f"undecodable: {e}"
            if rows != expected_rows[obj.key] and all(rows != rows_of(e) for e in earlier.get(obj.key, ())):
                w.append(Witness("partial-object", keys=(obj.key,),
                                 expected=f"{len(expected_rows[obj.key])} records", observed=f"{len(rows) if isinstance(rows, list) else rows}",
                                 explanation=f"seen at {sample.at_ms} with other contents than the model's"))
    return _verdict("atomic-visibility", w, f"{len(seen)} object versions seen, each complete",
                    f"{len(w)} object versions were visible incomplete or different")
