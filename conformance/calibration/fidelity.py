"""Fidelity fixtures: what a real connector did with a scenario, kept so the model answers to it
offline.

A fixture holds the scenario (config with converters, records, faults), the offset each record
landed at, the put boundaries where known (the real connector does not tell them: null), the
faults as they fired (with the offsets a restart resumed from), and the connector's final state:
every object with its bytes (gzip, base64), the open multipart uploads, the committed offsets,
the task states, and the verdicts the run got. For a sink that keeps its own log (Iceberg's
table) also the data files its reader sees (the current snapshot's: `committed_keys`) and the
table's last sample, so its no-loss and no-duplicates are judged offline as in the run. `replay`
rebuilds that final state as an observation and checks it against today's model with the same
checkers, under the claim the run had: a fixture passes when every property that can be judged
from the final state gets the verdict the real run got.

    sinkcheck run --target kafka-connect:confluent@12.1.9 --fixtures tests/fidelity …   # write them
    python -m conformance.calibration.fidelity tests/fidelity/*.json                              # replay them
"""
from __future__ import annotations

import base64
import gzip
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord, S3Object,
                                  StatusSample, TableSample)
from conformance.inputs import wire
from conformance.judging.checks.run import run_checks
from conformance.judging.claims import claims_for_values
from conformance.judging.startup import startup_verdict
from conformance.judging.untested import untested_reason
from conformance.inputs.scenario import Scenario
from conformance.inputs.targets import target_kind, worker_converters
from conformance.judging.verdicts import Verdict

FIXTURE_FORMAT = "sinkcheck.fidelity/1"
# what the final state alone decides (the others need samples taken during the run)
FINAL_STATE_PROPERTIES = ("no-loss", "no-duplicates", "exact-object-set", "atomic-visibility", "contents",
                          "commit-progress", "naming", "rotation", "file-count", "multipart-hygiene", "liveness")
# what only the samples taken during the run decide: a fixture keeps them (`samples`) where the real
# run failed one of these, and is then compared on them too
SAMPLED_PROPERTIES = ("commit-safety",)
# properties added after a fixture was taken: the real connector's objects are what the model
# must encode, so a fixture without a verdict for them stands for a pass
IMPLIED_PASS = ("contents",)


def _pack(body: bytes | None) -> str | None:
    return None if body is None else base64.b64encode(gzip.compress(body, 9, mtime=0)).decode("ascii")


def _unpack(text: str | None) -> bytes | None:
    return None if text is None else gzip.decompress(base64.b64decode(text))


def fixture_of(result: Any, note: str = "") -> dict[str, Any]:
    """A RunResult of a real target as a fixture (its final state, not its samples over time)."""
    obs = result.observation
    final = obs.final_bucket
    info = result.target_info
    offsets = [p.offset for p in obs.produced]
    return {
        "format": FIXTURE_FORMAT,
        "title": result.scenario.name,
        "target": result.target,
        "connector": {"class": info.connector_class if info else None,
                      "version": info.connector_version if info else None,
                      "kafka": info.kafka_version if info else None,
                      "s3_server": info.s3_server if info else None},
        "note": note,
        **_scenario_field(result.scenario.to_json()),
        # the config the connector was sent where it is not the scenario's (a translation for another
        # sink, adapters.connect.profiles): its own objects are read by it (Aiven's fields, names)
        "sent": _sent_of(result),
        "offsets": offsets,
        "puts": None,
        "faults": [{"kind": f.kind, "params": _plain(f.params), "fired": f.fired, "detail": f.detail,
                    "restart_from": f.restart_from} for f in obs.faults],
        "committed": obs.final_offsets,
        "quiet": obs.quiet,
        "task_states": list(obs.statuses[-1].task_states) if obs.statuses else [],
        "connector_state": obs.statuses[-1].connector_state if obs.statuses else None,
        # the failed task's trace: what a known bug's signature is read from (conformance.catalog.known_bugs)
        "trace": next((s.trace for s in reversed(obs.statuses) if s.trace), None),
        "objects": [{"key": o.key, "size": o.size, "etag": o.etag, "body": _pack(o.body)}
                    for o in (final.objects if final else ())],
        "open_uploads": [list(u) for u in (final.open_uploads if final else ())],
        # a sink with its own log (Iceberg's table, Spark's _spark_metadata): the data files its
        # reader sees (the current snapshot's); None for a raw listing
        "committed_keys": (list(final.committed_keys) if final is not None and final.committed_keys is not None
                           else None),
        "table": _table_of(obs),
        "verdicts": {v.property: v.status for v in result.verdicts},
        **_samples_field(obs, result.verdicts),
    }


def _table_of(obs: Any) -> dict[str, Any] | None:
    """A table sink's last table sample (what the report shows of it), or None."""
    t = obs.table_samples[-1] if getattr(obs, "table_samples", None) else None
    if t is None:
        return None
    return {"table": t.table, "snapshot_id": t.snapshot_id, "data_files": list(t.data_files),
            "record_count": t.record_count, "metadata_location": t.metadata_location,
            "snapshots": [[sid, at, added, [list(kv) for kv in summary]] for sid, at, added, summary in t.snapshots]}


def _samples_field(obs: Observation, verdicts: list[Verdict]) -> dict[str, Any]:
    """The bucket listings and offset commits sampled during the run, where it failed a property
    only they decide (SAMPLED_PROPERTIES): each body once (by ETag), each run of equal listings
    once with the times it was read."""
    if not any(v.property in SAMPLED_PROPERTIES and v.status == "fail" for v in verdicts):
        return {}
    bodies: dict[str, str | None] = {}
    bucket: list[dict[str, Any]] = []
    for b in sorted(obs.bucket_samples, key=lambda b: b.at_ms):
        for o in b.objects:
            if bodies.get(o.etag) is None:
                bodies[o.etag] = _pack(o.body)
        state = {"objects": [[o.key, o.size, o.etag] for o in b.objects],
                 "open_uploads": [list(u) for u in b.open_uploads],
                 "committed_keys": None if b.committed_keys is None else list(b.committed_keys)}
        if bucket and {k: v for k, v in bucket[-1].items() if k != "at"} == state:
            bucket[-1]["at"].append(b.at_ms)
        else:
            bucket.append({"at": [b.at_ms], **state})
    return {"samples": {
        "bodies": bodies, "bucket": bucket,
        "offsets": [[o.at_ms, o.committed, o.generation] for o in obs.offset_samples],
        "produced_at": [p.at_ms for p in obs.produced],
        "fault_times": [[f.at_ms, f.until_ms] for f in obs.faults]}}


def _sampled(fixture: dict[str, Any]) -> tuple[list[BucketSample], list[OffsetSample]]:
    smp = fixture["samples"]
    bodies = smp["bodies"]
    bucket = [BucketSample(at, tuple(S3Object(k, size, etag, _unpack(bodies.get(etag)), at) for k, size, etag in b["objects"]),
                           tuple(tuple(u) for u in b["open_uploads"]),
                           None if b.get("committed_keys") is None else tuple(b["committed_keys"]))
              for b in smp["bucket"] for at in b["at"]]
    offsets = [OffsetSample(at, dict(committed), generation) for at, committed, generation in smp["offsets"]]
    return bucket, offsets


def _sent_of(result: Any) -> dict[str, str] | None:
    t = getattr(result, "translation", None)
    return dict(t.config) if t is not None and not t.given else None


# a scenario bigger than this (the multipart stories' 200 KiB records) is kept gzipped
SCENARIO_INLINE_MAX = 256 * 1024


def _scenario_field(scenario: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(scenario)
    if len(text) <= SCENARIO_INLINE_MAX:
        return {"scenario": scenario}
    return {"scenario_gz": _pack(text.encode())}


def scenario_of(fixture: dict[str, Any]) -> dict[str, Any]:
    if "scenario" in fixture:
        return fixture["scenario"]
    return json.loads(_unpack(fixture["scenario_gz"]))


def _plain(v: Any) -> Any:
    return json.loads(json.dumps(v, default=str))


def save(result: Any, directory: Path, note: str = "") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    version = (result.target_info.connector_version if result.target_info else None) or "unknown"
    kind = target_kind(result.target)
    path = directory / f"{kind}-{version}--{result.scenario.name}.json"
    path.write_text(json.dumps(fixture_of(result, note), indent=1) + "\n")
    return path


@dataclass
class Replay:
    fixture: dict[str, Any]
    verdicts: list[Verdict]
    result: Any = None  # the replay as a conformance.playing.runner.RunResult (what the reports and known bugs read)

    def disagreements(self) -> list[str]:
        """Final-state properties whose verdict today differs from the real run's."""
        real = {**{p: "pass" for p in IMPLIED_PASS}, **self.fixture["verdicts"]}
        judged = FINAL_STATE_PROPERTIES + (SAMPLED_PROPERTIES if "samples" in self.fixture else ())
        out = []
        for v in self.verdicts:
            if v.property in judged and v.property in real and v.status != real[v.property]:
                out.append(f"{v.property}: the real connector's run was {real[v.property]}, the model now says "
                           f"{v.status}: {v.message}"
                           + "".join(f"\n    {w.anomaly}: {w.explanation} {list(w.keys)} {list(w.offsets)}"
                                     for w in v.witnesses[:3]))
        return out


def replay(fixture: dict[str, Any]) -> Replay:
    """The fixture's final state checked against today's model by the suite's checkers."""
    from conformance.playing.runner import RunResult, judged_run, model_config

    if fixture.get("format") != FIXTURE_FORMAT:
        raise ValueError(f"not a sinkcheck fidelity fixture (expected \"format\": \"{FIXTURE_FORMAT}\")")
    scenario = Scenario.from_json(scenario_of(fixture), fixture["title"])
    spec = fixture["target"]
    kind = target_kind(spec)
    at = 1
    objects = tuple(S3Object(o["key"], o["size"], o["etag"], _unpack(o["body"]), at) for o in fixture["objects"])
    times = fixture["samples"]["fault_times"] if "samples" in fixture else [[at, at]] * len(fixture["faults"])
    faults = [FaultEvent(f["kind"], dict(f["params"]), f["fired"], t[0], t[1], f.get("detail", ""),
                         restart_from=f.get("restart_from")) for f, t in zip(fixture["faults"], times)]
    if "samples" in fixture:  # the listings and commits read during the run: the final ones last
        bucket, offsets = _sampled(fixture)
    else:
        committed = fixture.get("committed_keys")  # a table sink's: the current snapshot's data files
        bucket = [BucketSample(at, objects, tuple(tuple(u) for u in fixture["open_uploads"]),
                               tuple(committed) if committed is not None else None)]
        offsets = [OffsetSample(at, dict(fixture["committed"]))]
    obs = Observation(
        bucket_samples=bucket, offset_samples=offsets,
        faults=faults, quiet=fixture["quiet"],
        statuses=[StatusSample(at, fixture["connector_state"] or "RUNNING", tuple(fixture["task_states"]),
                               trace=fixture.get("trace"))])
    if fixture.get("table"):
        t = fixture["table"]
        obs.table_samples = [TableSample(at, t["table"], t["snapshot_id"], tuple(t["data_files"]), t["record_count"],
                                         tuple((sid, ts, added, tuple(tuple(kv) for kv in summary))
                                               for sid, ts, added, summary in t["snapshots"]),
                                         t.get("metadata_location"))]
    sent = sent_config(fixture, scenario)
    worker = worker_converters(spec)
    # what was produced, at the offsets it landed at (a sink without a model commits up to its log end)
    produced_at = fixture["samples"]["produced_at"] if "samples" in fixture else [at] * len(fixture["offsets"])
    obs.produced = [ProducedRecord(p.topic, p.partition, off, p.timestamp, p.key, p.value, p.headers, t)
                    for p, off, t in zip(wire.records_to_produce(scenario.connector, scenario.records, worker),
                                         fixture["offsets"], produced_at)]
    records = wire.sink_records(scenario.connector, scenario.records, fixture["offsets"], worker, read_config=sent)
    claim = claims_for_values(kind, sent, scenario.faults, scenario.connector_version, [r.value for r in records])[0]
    data = judged_run(scenario, spec, obs, claim, model_config(scenario, kind), records,
                      sent=sent if sent != dict(scenario.connector) else {})
    verdicts = run_checks(data)
    return Replay(fixture, verdicts, RunResult(scenario, spec, claim, obs, data.expectation, verdicts, 0.0, Path("."),
                                               untested=untested_reason(data), startup=startup_verdict(data)))


def sent_config(fixture: dict[str, Any], scenario: Scenario) -> dict[str, str]:
    """The config the real connector was sent: the fixture's, else the scenario's as today's
    translation gives it to the fixture's target (the scenario's own for Confluent's sink)."""
    from conformance.inputs.targets import translation_for

    if fixture.get("sent"):
        return {str(k): str(v) for k, v in fixture["sent"].items()}
    t = translation_for(fixture["target"], scenario.connector)
    return dict(t.config) if t is not None else dict(scenario.connector)


def load(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


def compact(path: Path) -> None:
    """Rewrite a fixture with its scenario gzipped when it is large."""
    fx = load(path)
    scenario = scenario_of(fx)
    fx.pop("scenario", None)
    fx.pop("scenario_gz", None)
    keys = list(fx)
    at = keys.index("note") + 1 if "note" in keys else len(keys)
    items = list(fx.items())
    fx = dict(items[:at] + list(_scenario_field(scenario).items()) + items[at:])
    path.write_text(json.dumps(fx, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    bad = 0
    for p in paths:
        r = replay(load(p))
        d = r.disagreements()
        bad += bool(d)
        print(f"{'ok  ' if not d else 'DIFF'} {p.name}" + "".join(f"\n  {x}" for x in d))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
