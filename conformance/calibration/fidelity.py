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
from conformance.judging.claims import claims_for
from conformance.judging.untested import untested_reason
from conformance.inputs.scenario import Scenario
from conformance.inputs.targets import target_kind, translation_for, worker_converters
from conformance.judging.verdicts import Verdict

FIXTURE_FORMAT = "sinkcheck.fidelity/1"
# what the final state alone decides (the others need samples taken during the run)
FINAL_STATE_PROPERTIES = ("no-loss", "no-duplicates", "exact-object-set", "atomic-visibility", "contents",
                          "commit-progress", "naming", "rotation", "file-count", "multipart-hygiene", "liveness")
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
    }


def _table_of(obs: Any) -> dict[str, Any] | None:
    """A table sink's last table sample (what the report shows of it), or None."""
    t = obs.table_samples[-1] if getattr(obs, "table_samples", None) else None
    if t is None:
        return None
    return {"table": t.table, "snapshot_id": t.snapshot_id, "data_files": list(t.data_files),
            "record_count": t.record_count, "metadata_location": t.metadata_location,
            "snapshots": [[sid, at, added, [list(kv) for kv in summary]] for sid, at, added, summary in t.snapshots]}


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
        out = []
        for v in self.verdicts:
            if v.property in FINAL_STATE_PROPERTIES and v.property in real and v.status != real[v.property]:
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
    faults = [FaultEvent(f["kind"], dict(f["params"]), f["fired"], at, at, f.get("detail", ""),
                         restart_from=f.get("restart_from")) for f in fixture["faults"]]
    committed = fixture.get("committed_keys")
    obs = Observation(
        bucket_samples=[BucketSample(at, objects, tuple(tuple(u) for u in fixture["open_uploads"]),
                                     tuple(committed) if committed is not None else None)],
        offset_samples=[OffsetSample(at, dict(fixture["committed"]))],
        faults=faults, quiet=fixture["quiet"],
        statuses=[StatusSample(at, fixture["connector_state"] or "RUNNING", tuple(fixture["task_states"]),
                               trace=fixture.get("trace"))])
    if fixture.get("table"):
        t = fixture["table"]
        obs.table_samples = [TableSample(at, t["table"], t["snapshot_id"], tuple(t["data_files"]), t["record_count"],
                                         tuple((sid, ts, added, tuple(tuple(kv) for kv in summary))
                                               for sid, ts, added, summary in t["snapshots"]),
                                         t.get("metadata_location"))]
    # what was produced, where it landed (a sink judged without a model commits up to each log end)
    obs.produced = [ProducedRecord(r["topic"], int(r["partition"]), off, r.get("timestamp"), None, None, (), at)
                    for r, off in zip(scenario.records, fixture["offsets"])]
    # as the run judged it (conformance.playing.runner): the config the connector was sent (a
    # translation's), the records as its converters read them, the claim for the values they hold
    translation = translation_for(spec, scenario.connector)
    sent = translation.config if translation is not None else dict(scenario.connector)
    records = wire.sink_records(scenario.connector, scenario.records, fixture["offsets"], worker_converters(spec),
                                read_config=sent)
    null_values = any(r.value is None for r in records)
    bytes_values = any(isinstance(r.value, (bytes, bytearray)) for r in records)
    claim = claims_for(kind, sent, scenario.faults, scenario.connector_version, null_values, bytes_values)[0]
    data = judged_run(scenario, spec, obs, claim, model_config(scenario, kind), records, sent=sent)
    verdicts = run_checks(data)
    return Replay(fixture, verdicts, RunResult(scenario, spec, claim, obs, data.expectation, verdicts, 0.0, Path("."),
                                               untested=untested_reason(data)))


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
