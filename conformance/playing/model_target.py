"""The reference model as a target (`model@VERSION`): what the model commits for a scenario at a
connector version, shown to the checkers as an observation."""
from __future__ import annotations

import dataclasses
import hashlib
import time
from pathlib import Path
from typing import Any


def model_version(spec: str) -> str | None:
    if spec.startswith("model@"):
        return spec.split("@", 1)[1] or None
    return None


def run_model(scenario: Any, spec: str, run_dir: Path) -> Any:
    """The reference model as a target: the objects `reference_impl.engine.model.expect` commits at the
    connector version of `spec` (`model@10.6.3`), shown to the checkers as an observation.
    The model applies no faults (a scenario with faults is unknown here) and has no clock
    (wall-clock rotation gives constraints, not objects: unknown)."""
    from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord,
                                      S3Object, StatusSample)
    from conformance.judging.checks.base import RunData
    from conformance.judging.checks.run import run_checks
    from conformance.judging.claims import claim_for
    from conformance.inputs import wire
    from conformance.playing.runner import RunResult, model_config
    from conformance.judging.untested import untested_reason
    from conformance.judging.verdicts import PASS, UNKNOWN
    from reference_impl.engine.contents import encode_view
    from reference_impl.engine.model import expect

    started = time.monotonic()
    version = model_version(spec)
    if version:
        scenario = dataclasses.replace(scenario, connector_version=version)
    run_dir.mkdir(parents=True, exist_ok=True)
    claim = claim_for("confluent", scenario.connector, scenario.faults, scenario.connector_version)
    cfg = model_config(scenario, "confluent")
    t0 = 1_000_000
    next_off: dict[tuple[str, int], int] = {}
    produced, offsets = [], []
    for i, enc in enumerate(wire.records_to_produce(scenario.connector, scenario.records)):
        tp = (enc.topic, enc.partition)
        off = next_off.get(tp, 0)
        next_off[tp] = off + 1
        offsets.append(off)
        produced.append(ProducedRecord(enc.topic, enc.partition, off, enc.timestamp, enc.key, enc.value, enc.headers,
                                       at_ms=t0 + 10 * i))
    records = wire.sink_records(scenario.connector, scenario.records, offsets)
    at_of = {(p.topic, p.partition, p.offset): p.at_ms for p in produced}
    end = t0 + 10 * len(produced) + 10
    exp = expect(cfg, records)
    obs = Observation(produced=produced, quiet=True)
    by_off = {(r.topic, r.partition, r.offset): r for r in records}
    if exp.constraints is None:
        objects: list[tuple[int, S3Object, tuple[str, int], int]] = []
        for o in exp.objects:
            at = at_of.get((o.topic, o.partition, o.committed_offset), end)
            recs = [by_off[(o.topic, o.partition, x)] for x in o.offsets]
            views = ([(o.key, "value")] if o.value_object else []) + [(k, v) for v, k in o.sibling_keys]
            for key, view in views:
                body = encode_view(cfg, recs, view)
                objects.append((at, S3Object(key, len(body), hashlib.md5(body).hexdigest(), body, at),
                                (o.topic, o.partition), o.committed_offset))
        times = sorted({a for a, *_ in objects} | {end})
        for t in times:
            vis = [o for a, o, *_ in objects if a <= t]
            obs.bucket_samples.append(BucketSample(t, tuple(vis)))
            committed: dict[str, int] = {}
            for a, _, tp, k in objects:
                if a <= t:
                    name = f"{tp[0]}-{tp[1]}"
                    committed[name] = max(committed.get(name, 0), k)
            if t == end:
                committed.update(exp.committed_offsets)
            obs.offset_samples.append(OffsetSample(t, committed))
    else:
        obs.bucket_samples.append(BucketSample(end, ()))
    state = "FAILED" if exp.task_failure is not None else "RUNNING"
    obs.statuses.append(StatusSample(end, "RUNNING", (state,), exp.task_failure.message if exp.task_failure else None))
    for f in scenario.faults:
        if f.kind not in ("wait", "wait-fired", "release"):
            obs.faults.append(FaultEvent(f.kind, dict(f.params), False, detail="the model target applies no faults"))
    data = RunData(scenario, spec, obs, claim, cfg, exp, records)
    verdicts = run_checks(data)
    if exp.constraints is not None:
        verdicts = [dataclasses.replace(v, status=UNKNOWN, message="the model gives constraints, not objects, for this "
                                        f"config ({exp.constraints_reason}); would otherwise be: {v.message}")
                    if v.status == PASS else v for v in verdicts]
    # under constraints every verdict is unknown already, for that reason, not for want of objects
    return RunResult(scenario, spec, claim, obs, exp, verdicts, time.monotonic() - started, run_dir,
                     untested=None if exp.constraints is not None else untested_reason(data))


