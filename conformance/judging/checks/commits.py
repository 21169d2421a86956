"""Commits: no offset committed past what is durably in S3 (commit-safety), and committed
offsets reaching the model's once the sink is quiet (commit-progress)."""
from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Any

from conformance.judging.verdicts import Verdict, Witness
from conformance.judging.checks.base import RunData, TP, _at, _tp_name, _verdict, check


@check("commit-safety", "P-COMMIT-SAFETY")
def commit_safety(d: RunData) -> Verdict:
    samples = d.observation.bucket_samples
    must = d.must_write
    visible_at: list[tuple[int, dict[TP, set[int]]]] = []
    # a listing repeats the one before it until the sink writes: the offsets it shows are
    # gathered once per distinct listing (a simulated run samples its bucket every tick)
    by_listing: dict[Any, dict[TP, set[int]]] = {}
    for s in sorted(samples, key=lambda b: b.at_ms):
        listing = (tuple((o.key, o.etag, o.body is None) for o in s.objects), s.committed_keys)
        vis = by_listing.get(listing)
        if vis is None:
            vis = by_listing[listing] = defaultdict(set)
            for obj in d.value_objects(s):
                for tp, o in d.offsets_of(obj) or []:
                    vis[tp].add(o)
        visible_at.append((s.at_ms, vis))
    sampled_at = [at for at, _ in visible_at]
    w = []
    last: dict[tuple[str, Any, int], int] = {}
    # the suite's own rewinds (a lost offset commit: the offsets set back through the REST API)
    # start a new span: a step back across one is the fault, not the sink's
    rewinds = sorted((f.at_ms, f.until_ms or f.at_ms) for f in d.observation.faults
                     if f.kind == "lose-offset-commit" and f.fired and f.at_ms is not None)
    # in the order they were read: samplers on two threads can append out of order
    for os_ in sorted(d.observation.offset_samples, key=lambda o: o.at_ms):
        # the first listing taken at or after the offsets were read (else the last one)
        first = bisect.bisect_left(sampled_at, os_.at_ms)
        later = visible_at[first][1] if first < len(visible_at) else visible_at[-1][1] if visible_at else {}
        for name, k in os_.committed.items():
            topic, _, p = name.rpartition("-")
            tp = (topic, int(p))
            missing = sorted(o for o in must.get(tp, ()) if o < k and o not in later.get(tp, set()))
            if missing:
                w.append(Witness("commit-ahead-of-s3", (_at(tp, missing[0]),), expected=f"every offset < {k} visible",
                                 observed=f"{len(missing)} not visible",
                                 explanation=f"at {os_.at_ms} {name} was committed to {k} but offset {missing[0]} was not in "
                                             f"{d.visible_in}"))
            if any(at <= os_.at_ms <= until for at, until in rewinds):
                continue  # read while the suite sets the offsets back: either side of it
            key = (name, os_.generation, sum(1 for at, _ in rewinds if at <= os_.at_ms))
            if key in last and k < last[key]:
                w.append(Witness("commit-backwards", (_at(tp, k),), expected=f">= {last[key]}", observed=k,
                                 explanation=f"{name} moved back from {last[key]} to {k} within one generation"))
            last[key] = k
    return _verdict("commit-safety", w, f"{len(d.observation.offset_samples)} offset samples, never ahead of {d.visible_in}",
                    f"{len(w)} offset commits ran ahead of {d.visible_in} or backwards")


@check("commit-progress", "P-COMMIT-PROGRESS")
def commit_progress(d: RunData) -> Verdict:
    final = d.observation.final_offsets
    w = []
    if (d.expectation is not None and d.expectation.constraints is None and d.expectation.task_failure is None
            and d.boundaries):
        for name, k in sorted(d.expectation.committed_offsets.items()):
            if final.get(name, 0) < k:
                w.append(Witness("commit-stuck", (name,), expected=k, observed=final.get(name),
                                 explanation=f"after quiet {name} is committed to {final.get(name)}; the model commits {k}"))
    if d.expectation is None and d.claim.naming in ("camel", "aiven", "iceberg", "lenses"):
        # no model, but a Kafka Connect sink that took every record commits up to the log end
        ends: dict[str, int] = {}
        for p in d.observation.produced:
            name = _tp_name((p.topic, p.partition))
            ends[name] = max(ends.get(name, 0), p.offset + 1)
        for name, end in sorted(ends.items()):
            if final.get(name, 0) < end:
                w.append(Witness("commit-stuck", (name,), expected=end, observed=final.get(name),
                                 explanation=f"after quiet {name} is committed to {final.get(name)} of its {end} records"))
    if not d.observation.quiet:
        w.append(Witness("not-quiet", explanation=f"the sink never became quiet: {d.observation.still_moving}"))
    return _verdict("commit-progress", w, "committed offsets reached the model's after quiet", "commits did not progress")
