"""Run one scenario against one target and check it: Scenario → Target → Observation →
Checkers → Verdicts, with the model's Expectation beside the observation."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from adapters.observation import FaultEvent, Observation
from adapters.target import Fault, RecordToProduce, Target
from conformance.checkers import RunData, run_checks
from conformance.claims import CONFLUENT_SEMANTICS, Claim, claim_for
from conformance.scenario import Scenario
from conformance.targets import make_target, target_kind
from conformance.verdicts import Verdict, overall
from reference_impl.config import ConfigError, SinkConfig, parse_config
from reference_impl.connect_data import SinkRecord
from reference_impl.expectation import Expectation
from reference_impl.model import expect


@dataclass
class RunResult:
    scenario: Scenario
    target: str
    claim: Claim
    observation: Observation
    expectation: Expectation | None
    verdicts: list[Verdict]
    wall_s: float
    run_dir: Path
    status: str = field(init=False)

    def __post_init__(self) -> None:
        self.status = overall(self.verdicts)

    def failed(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.claimed and v.status == "fail"]


def encode_record(r: dict[str, Any]) -> RecordToProduce:
    """Scenario record → Kafka record bytes, as JsonConverter reads them."""
    def enc(v: Any) -> bytes | None:
        return None if v is None else json.dumps(v, separators=(",", ":")).encode()

    headers = tuple((h[0], None if h[1] is None else str(h[1]).encode()) for h in r.get("headers") or [])
    return RecordToProduce(r["topic"], int(r["partition"]), r.get("timestamp"), enc(r.get("key")), enc(r.get("value")), headers)


def model_config(scenario: Scenario, kind: str) -> SinkConfig | None:
    if kind not in CONFLUENT_SEMANTICS:
        return None
    cfg = dict(scenario.connector)
    cfg.setdefault("storage.class", "io.confluent.connect.s3.storage.S3Storage")
    cfg.setdefault("s3.bucket.name", "sinkcheck")
    cfg.pop("connector.class", None)
    try:
        return parse_config(cfg, version=scenario.connector_version)
    except ConfigError:
        raise


def run_scenario(scenario: Scenario, target_spec: str, run_dir: Path, *, quiet_timeout_s: float = 60,
                 target: Target | None = None, plugin_path: list[str] | None = None) -> RunResult:
    """Run the scenario whole, then check the recorded observation."""
    started = time.monotonic()
    kind = target_kind(target_spec)
    s3_faults = [f for f in scenario.faults if f.kind in ("s3", "release")]
    front = moto = None
    s3_endpoint = None
    if s3_faults and target is None:
        from adapters.s3front import FaultRule, S3FaultFront
        from adapters.supervisor import MotoS3Server

        moto = MotoS3Server(run_dir / "s3", bucket=scenario.connector.get("s3.bucket.name", "sinkcheck")).start()
        front = S3FaultFront(moto.endpoint, run_dir / "s3front").start()
        s3_endpoint = front.endpoint
    tgt = target or make_target(target_spec, run_dir, s3_endpoint, plugin_path)
    # a third-party target may declare that its objects follow Confluent's semantics
    kind = getattr(tgt, "semantics", None) or kind
    claim = claim_for(kind, scenario.connector, scenario.faults)
    cfg = model_config(scenario, kind)
    produced_offsets: list[int] = []
    rule_ids: list[str] = []  # the scenario's s3 rules in order
    try:
        tgt.start({"name": f"sinkcheck-{abs(hash(scenario.name)) % 10**6}", "config": dict(scenario.connector)},
                  scenario.topics)
        faults = sorted(enumerate(scenario.faults), key=lambda t: t[1].after)
        pos = 0
        for idx, step in faults + [(None, None)]:  # type: ignore[list-item]
            upto = len(scenario.records) if step is None else min(step.after, len(scenario.records))
            if upto > pos:
                produced_offsets += tgt.produce([encode_record(r) for r in scenario.records[pos:upto]])
                pos = upto
            if step is None:
                break
            if step.kind == "s3":
                if front is None:
                    continue  # reported below as a fault that never fired
                from adapters.s3front import FaultRule

                rule_ids.append(front.add_rule(FaultRule(**step.params)))
            elif step.kind == "release":
                if front is not None:
                    front.release()
            elif step.kind == "quiet":
                # a checkpoint in the stream: the sink catches up before more is produced
                tgt.wait_until_quiet(float(step.params.get("seconds", quiet_timeout_s)))
            elif step.kind == "wait":
                time.sleep(float(step.params.get("seconds", 1.0)))  # the sink keeps polling: empty puts
            elif step.kind == "wait-fired":
                n = int(step.params.get("rule", 0))
                if front is not None and n < len(rule_ids):
                    front.wait_fired(rule_ids[n], float(step.params.get("seconds", 30)))
            else:
                tgt.apply_fault(Fault(step.kind, step.params))
        tgt.wait_until_quiet(quiet_timeout_s)
        if front is not None:
            front.release()
        observation = tgt.observe()
    finally:
        tgt.stop()
        if front is not None:
            s3_events = front.events()
            front.stop()
        if moto is not None:
            moto.stop()
    if front is not None:
        observation.faults.extend(s3_events)
    for idx, step in enumerate(scenario.faults):
        if step.kind == "s3" and front is None:
            observation.faults.append(FaultEvent("s3", dict(step.params), False,
                                                 detail="this target was run without the S3 fault front"))
    records = [
        SinkRecord.from_json({**r, "offset": off}) for r, off in zip(scenario.records, produced_offsets)
    ]
    expectation = expect(cfg, records) if cfg is not None else None
    data = RunData(scenario, target_spec, observation, claim, cfg, expectation, records)
    verdicts = run_checks(data)
    return RunResult(scenario, target_spec, claim, observation, expectation, verdicts,
                     time.monotonic() - started, run_dir)
