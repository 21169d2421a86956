"""The checkers of the bucket's layout: every key the connector's name for its first record
(R5.1), objects within the rotation rules and every record in the model's file (R3), object
counts within the model's bound (P-FILE-COUNT), no multipart upload left open after quiet
(P-MPU-HYGIENE). Registered in the checkers' registry (conformance.judging.checks.base).

A record in another file than the model's is the witness of a bucket, key or file boundary one
unit off: the record (with its time), the key the model puts it in and the key it is in.
"""
from __future__ import annotations

from collections import Counter

from conformance.judging.checks.evolution import rotation_witness
from conformance.judging.checks.base import TP, RunData, _at, _past_fatal_null, _tp_name, _verdict, check
from conformance.judging.verdicts import UNKNOWN, Verdict, Witness
from reference_impl.connect_data import SinkRecord


@check("naming", "R5.1")
def naming(d: RunData) -> Verdict:
    if d.cfg is None and d.claim.naming == "aiven":
        from conformance.judging.checks.aiven import aiven_naming

        return aiven_naming(d)
    if d.cfg is None and d.claim.naming == "lenses":
        from conformance.judging.checks.lenses import lenses_naming

        return lenses_naming(d)
    if d.cfg is None:
        return Verdict("naming", UNKNOWN, False, message=f"no naming scheme to check {d.claim.naming} objects against")
    from reference_impl.naming import encoded_partition_of, object_key

    eps: dict[tuple[str, int, int], str] = {}
    if d.expectation is not None and d.expectation.constraints is None:
        for o in d.expectation.objects:
            for off in o.offsets:
                eps[(o.topic, o.partition, off)] = o.encoded_partition
    elif d.expectation is not None and d.expectation.constraints is not None:
        for c in d.expectation.constraints:
            for off, ep in (c.encoded_partitions or {}).items():
                eps[(c.topic, c.partition, off)] = ep
    w = []
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if not offs:
            continue
        (topic, p), start = offs[0]
        ep = eps.get((topic, p, start))
        if ep is None:
            if encoded_partition_of(d.cfg, obj.key, topic, p, start) is None:
                w.append(Witness("bad-name", (_at((topic, p), start),), (obj.key,),
                                 expected=object_key(d.cfg, topic, p, "<encoded partition>", start), observed=obj.key,
                                 explanation="not the connector's name for a file starting at its first record"))
            continue
        want = object_key(d.cfg, topic, p, ep, start)
        if obj.key != want:
            w.append(Witness("bad-name", (_at((topic, p), start),), (obj.key,), expected=want, observed=obj.key,
                             explanation="the key is not the connector's name for its first record"))
    return _verdict("naming", w, "every key is the connector's name for its first record", f"{len(w)} objects misnamed")


@check("rotation", "R3")
def rotation(d: RunData) -> Verdict:
    if d.cfg is None:
        return Verdict("rotation", UNKNOWN, False, message="no rotation rules to check against")
    w = []
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj) or []
        # the flush.size of the task that wrote it: a zombie's object is its own config's (C4 across C3)
        cfgs = d.configs_at(*offs[0]) if offs else [d.cfg]
        flush = max(max(c.flush_size if c is not None else 1, 1) for c in cfgs)
        if len(offs) > flush:
            w.append(Witness("oversized-object", keys=(obj.key,), expected=f"<= {flush} records", observed=len(offs),
                             explanation="flush.size caps the records of a commit set (R2.4)"))
        if offs and [o for _, o in offs] != sorted(o for _, o in offs):
            w.append(Witness("out-of-order", keys=(obj.key,), explanation="records of an object are in offset order"))
    w += misplaced_records(d)
    return _verdict("rotation", w, "objects within flush.size, in offset order" +
                    (", every record in the model's file" if binding(d) else ""),
                    f"{len(w)} objects or records break rotation rules")


def binding(d: RunData) -> bool:
    """Whether the model's file of every record binds the run: an exact model whose boundaries
    no fault moved, and no restart (after one, a wall-clock boundary or a restart point may cut
    a file the model does not, unless the claim holds the sink to the model's exact set)."""
    exp = d.expectation
    if exp is None or exp.constraints is not None or not d.boundaries:
        return False
    return d.claim.claims("exact-object-set") or not any(f.kind in RESTARTS for f in d.scenario.faults)


def misplaced_records(d: RunData) -> list[Witness]:
    """The first record of each topic-partition that sits, once, in another object than the one
    the model commits it in: a bucket, key or file boundary one unit off. Lost and duplicated
    records are no-loss's and no-duplicates' to report."""
    if not binding(d):
        return []
    assert d.expectation is not None
    want = {(o.topic, o.partition, off): o.key for o in d.expectation.objects if o.value_object and o.certain
            for off in o.offsets}
    seen: dict[tuple[str, int, int], list[str]] = {}
    for obj in d.value_objects(d.observation.final_bucket):
        for (topic, p), off in d.offsets_of(obj) or []:
            seen.setdefault((topic, p, off), []).append(obj.key)
    by_offset = {(r.topic, r.partition, r.offset): r for r in d.records}
    w, reported = [], set()
    for rec, expected in sorted(want.items()):
        keys = seen.get(rec, [])
        if len(keys) != 1 or keys[0] == expected or rec[:2] in reported:
            continue
        reported.add(rec[:2])
        observed = keys[0]
        named = rotation_witness(d.cfg, d.expectation.objects, by_offset, rec, expected, observed, _at(rec[:2], rec[2]))
        if named is not None:
            w.append(named)
            continue
        what = ("file boundary" if observed.rsplit("/", 1)[0] == expected.rsplit("/", 1)[0]
                else "encoded partition (time bucket, field value or directory)")
        w.append(Witness("misplaced-record", (_at(rec[:2], rec[2]),), (expected, observed), expected=expected,
                         observed=observed, explanation=f"the record ({_record_time(d, by_offset.get(rec))}) is in another "
                                                        f"object than the model's: its {what} differs (R3, R5.1, R6)"))
    return w


# faults after which a new task instance starts over from the committed offsets; each may cut
# one more file per topic-partition than the model (its first file starts at the restart point)
RESTARTS = ("crash", "restart-task", "rebalance", "add-worker", "remove-worker", "pause", "update-config",
            "lose-offset-commit")


@check("file-count", "P-FILE-COUNT")
def file_count(d: RunData) -> Verdict:
    if d.cfg is None and d.claim.naming == "aiven":
        from conformance.judging.checks.aiven import aiven_file_count

        return aiven_file_count(d)
    exp = d.expectation
    if exp is None or exp.constraints is not None:
        return Verdict("file-count", UNKNOWN, False, message="no exact model to bound the object count")
    restarts = sum(1 for f in d.scenario.faults if f.kind in RESTARTS)
    want: Counter[TP] = Counter((o.topic, o.partition) for o in exp.objects if o.value_object)
    have: Counter[TP] = Counter()
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if offs:
            have[offs[0][0]] += 1
    unbound = _past_fatal_null(d)  # the model's files there are a lower bound only
    w = [Witness("too-many-objects", (_tp_name(tp),), expected=f"<= {want[tp] + restarts}", observed=n,
                 explanation="more objects than the model allows (small-file explosion)")
         for tp, n in sorted(have.items()) if n > want[tp] + restarts and tp not in unbound]
    return _verdict("file-count", w, "object counts within the model's bound", f"{len(w)} topic-partitions have too many objects")


def _record_time(d: RunData, record: SinkRecord | None) -> str:
    """A record's Kafka timestamp and, under RecordField, the time its field gives (R6.5)."""
    if record is None:
        return "not produced"
    text = f"timestamp {record.timestamp}"
    if d.cfg is not None and d.cfg.timestamp_extractor == "recordfield":
        from reference_impl.partitioning import TimestampExtractor
        from reference_impl.timeutil import zone

        try:
            text += f", {d.cfg.timestamp_field} {TimestampExtractor(d.cfg, zone('UTC')).extract(record, None)}"
        except Exception:  # noqa: BLE001 - a field the model cannot read: the record's timestamp says enough
            pass
    return text


# what the bucket must not hold after quiet
@check("multipart-hygiene", "P-MPU-HYGIENE")
def multipart_hygiene(d: RunData) -> Verdict:
    final = d.observation.final_bucket
    uploads = list(final.open_uploads) if final else []
    # a file the model leaves open whose records outgrew a part has its upload in progress (R7.1:
    # the part went up when the buffer filled): one upload for each such file is no leak
    in_progress = Counter(_open_file_keys(d))
    leaked = []
    for k, u in uploads:
        if in_progress[k] > 0:
            in_progress[k] -= 1
        else:
            leaked.append((k, u))
    w = [Witness("leaked-upload", keys=(k,), observed=u, explanation="an incomplete multipart upload is left after quiet")
         for k, u in leaked]
    return _verdict("multipart-hygiene", w, "no incomplete multipart uploads after quiet", f"{len(w)} multipart uploads leaked")


def _open_file_keys(d: RunData) -> list[str]:
    """The keys of the objects of every file the model leaves open at the end (each view stored)."""
    if d.cfg is None or d.expectation is None or d.expectation.constraints is not None:
        return []
    from reference_impl.naming import object_key, views_stored

    return [object_key(d.cfg, o.topic, o.partition, o.encoded_partition, o.offsets[0], view)
            for o in d.expectation.open if o.offsets for view in ("value", *views_stored(d.cfg))]
