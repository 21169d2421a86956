"""Run one scenario against one target and check it: Scenario → Target → Observation →
Checkers → Verdicts, with the model's Expectation beside the observation."""
from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from adapters.observation import FaultEvent, Observation
from adapters.target import Fault, Target, TargetError, TargetInfo
from conformance.judging.checks.base import RunData, outliving_phases
from conformance.judging.checks.run import run_checks
from conformance.judging.claims import (C1, CONFLUENT_SEMANTICS, S3_FATAL, SDK_V1_COMPLETE, Claim, claims_for_values,
                                fatal_error_inside_complete, task_stops_at)
from conformance.inputs import wire
from conformance.inputs.connector_config import sink_config
from conformance.playing.puts import put_schedule
from conformance.inputs.scenario import FaultStep, Scenario, ScenarioError
from conformance.judging.startup import (armed_before_start, expected_start, is_startup_rule, startup_call,
                                         startup_verdict)
from conformance.judging.untested import dead_while_armed, untested_reason
from conformance.playing.user_config import unread_topics
from adapters.s3.rules import s3_answers
from conformance.generators.faults import FOLLOWS, answers_a_condition
from conformance.inputs.targets import (connect_profile, connector_profile, data_key_glob_of, make_target,
                                        parts_follow_flush, simulated, target_kind, translation_for, uploads_of,
                                        worker_converters)
from conformance.judging.verdicts import PASS, UNKNOWN, Verdict, overall
from reference_impl.catch_up import catch_up_allowance_s
from reference_impl.config import SinkConfig
from reference_impl.converters import ConverterError
from reference_impl.engine.expectation import Expectation
from reference_impl.engine.model import expect, expect_phases, refused_start


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
    # the target's further claims (e.g. Spark's at-least-once for a raw listing beside its
    # exactly-once through the _spark_metadata log), each checked on the same observation
    other_claims: list[tuple[Claim, list[Verdict]]] = field(default_factory=list)
    # what the target said of itself (connector, Kafka and S3 server versions), for the report
    target_info: TargetInfo | None = None
    # how the scenario was put to this target's connector (adapters.connect.connector_config.Translation):
    # None where the target takes the scenario's config as it is
    translation: Any = None
    # the scenario's fault steps changed or left out for this target, each with the reason
    fault_changes: list[str] = field(default_factory=list)
    # a generated failure that did not come back on every replay: {"reproduced", "replays",
    # "signature": [property, anomaly], "note"}; None when it did (or nobody replayed it)
    flaky: dict[str, Any] | None = None
    # seconds spent in each phase of the run (PHASES), for the search bench
    timings: dict[str, float] = field(default_factory=dict)
    # why the run tested nothing (conformance.judging.untested): no object to compare; its pass is unknown
    untested: str | None = None
    # where a rule answered the start-up bucket check: the release's start() beside the sink's
    # (conformance.judging.startup.StartUpVerdict, R1.3)
    startup: Any = None
    # what a report derives from the run (reports.context.prepare_report), kept once derived: in
    # the worker process that played it, where the session has them (Session.prepare_report)
    report_cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    status: str = field(init=False)

    def __post_init__(self) -> None:
        self.status = overall(self.all_verdicts())
        if self.untested and self.status == PASS:
            self.status = UNKNOWN

    def all_verdicts(self) -> list[Verdict]:
        """The primary claim's verdicts, then those of each further claim."""
        return list(self.verdicts) + [v for _, vs in self.other_claims for v in vs]

    def failed(self) -> list[Verdict]:
        return [v for v in self.all_verdicts() if v.claimed and v.status == "fail"]


def final_quiet_timeout_s(base_s: float, cfg: SinkConfig | None, faults: Sequence[FaultStep], records: int,
                          runs_the_connector: bool) -> float:
    """How long the last wait for quiet may take: `base_s`, and where a fault can make a task
    re-read records whose files are already in S3 under conditional writes, one retry.backoff.ms
    per record on top (reference_impl.catch_up: a zombie's ten files cost 12.1.9 sixty seconds
    of 412s, more than the base 60 s wait left). Only for the connector itself on Kafka Connect,
    whose backoff is wall time: the Python sink and its simulation keep the base wait."""
    if not runs_the_connector or not faults:
        return base_s
    return base_s + catch_up_allowance_s(cfg, records)


def model_config(scenario: Scenario, kind: str) -> SinkConfig | None:
    if kind not in CONFLUENT_SEMANTICS:
        return None
    return sink_config(scenario.connector, scenario.connector_version)


def config_phases(scenario: Scenario, kind: str, cfg: SinkConfig,
                  observation: Observation) -> list[tuple[SinkConfig, dict[str, int]]]:
    """The configs the sink ran under, each with the committed offsets it restarted from: one
    phase, plus one per config update whose restart point the target reported."""
    phases = [(cfg, {})]
    connector = dict(scenario.connector)
    updates = [f for f in observation.faults if f.kind == "update-config" and f.fired]
    for ev in updates:
        connector.update({str(k): str(v) for k, v in dict(ev.params.get("config", {})).items()})
        if ev.restart_from is None:
            continue  # the target cannot tell where it restarted: the first config's model stands
        new = model_config(replace(scenario, connector=connector), kind)
        if new is not None:
            phases.append((new, dict(ev.restart_from)))
    return phases


_MULTIPART = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")


def faults_for_target(scenario: Scenario, target_spec: str, writes_until: int | None = None,
                      dies_at_error_200: bool = False) -> tuple[list[FaultStep], list[str]]:
    """The scenario's fault steps as this target can meet them, and what changed: an S3 rule on
    a multipart request stands for the request that makes the object, so a sink that writes each
    object with one PutObject gets the rule on PutObject, counting the records written after it
    (one PutObject each: the n-th file of a multipart sink may be a record that never comes), and
    is left out where no record after it reaches S3 (`writes_until`: the index of the record the
    target's task stops at, e.g. a null value Camel cannot write); a rule on a part number above 1
    goes on the UploadPart itself where the target's objects end at each offset flush (Aiven: a
    file has as many parts as the records one flush caught, so part 4 may never come); a config update sends what the
    target's connector has a counterpart for, and is left out where that is nothing. Where an
    error inside Complete's 200 kills the task (`dies_at_error_200`: Confluent's connector with
    the AWS SDK v1), only the first such rule can fire: the others are left out. A rule on the
    start-up bucket check goes on the call the target's release makes (R1.3: GetBucketAcl before
    11.0.0, conformance.judging.startup)."""
    kind = target_kind(target_spec)
    release = (connect_profile(target_spec)[1] or scenario.connector_version) if kind == "confluent" else None
    uploads = uploads_of(target_spec)
    data_key = data_key_glob_of(target_spec)
    profile = connector_profile(target_spec)
    unconditional = (f"{profile.name}'s uploads carry no condition ({why})"
                     if profile is not None and (why := profile.unconditional_under(scenario.connector)) else "")
    out: list[FaultStep] = []
    notes: list[str] = []
    merged = dict(scenario.connector)
    before = translation_for(target_spec, merged)
    dropped_names: set[str] = set()
    renumbered: list[int | None] = []  # each s3 step's index among this target's s3 steps (None: left out)

    def leave_out(step: FaultStep) -> None:
        """The rule is not played here: the waits and releases that name it go with it."""
        renumbered.append(None)
        dropped_names.add(str(step.params.get("name", "")))

    for f in scenario.faults:
        ref = f.params.get("rule")
        if f.kind in ("wait-fired", "release") and ref is not None:
            n = int(ref) if isinstance(ref, int) or str(ref).isdigit() else None
            if n is None and str(ref) in dropped_names:
                continue  # waits for, or lets go of, a rule left out below
            if n is not None and n < len(renumbered):
                if renumbered[n] is None:
                    continue
                f = replace(f, params={**f.params, "rule": renumbered[n]})
        if is_startup_rule(f) and f.after == 0 and f.params.get("operation") != (call := startup_call(kind, release)):
            notes.append(f"after {f.after}: the start-up rule on {f.params.get('operation')} is on {call}: "
                         f"{release or 'this release'} checks its bucket with {call} (R1.3)")
            f = replace(f, params={**f.params, "operation": call})
        on_put = f.kind == "s3" and uploads == "put" and f.params.get("operation") in _MULTIPART
        if on_put and f.params.get("action") == "error-200":
            # S3 answers 200 with an error in the body only to CompleteMultipartUpload (and
            # CopyObject): a PutObject never gets one, so no deployment sees this
            notes.append(f"after {f.after}: the error-200 rule on {f.params['operation']} left out: S3 never "
                         "answers a PutObject that way")
            leave_out(f)
            continue
        if unconditional and f.kind == "s3" and (answers_a_condition(f) or str(f.params.get("name", "")).endswith(FOLLOWS)
                                                  and str(f.params["name"])[: -len(FOLLOWS)] in dropped_names):
            # S3 answers 412 only to a request that carries a condition (R8.1), and this sink's never do
            notes.append(f"after {f.after}: the rule on {f.params.get('operation')} answering "
                         f"{f.params.get('status')} {f.params.get('code') or ''} left out: {unconditional}".rstrip())
            leave_out(f)
            continue
        if on_put and f.params.get("action") == "fail" and f.params.get("code") and not s3_answers(
                str(f.params["code"]), "PutObject"):
            notes.append(f"after {f.after}: the {f.params.get('status')} {f.params['code']} rule on "
                         f"{f.params['operation']} left out: S3 never answers a PutObject that way")
            leave_out(f)
            continue
        if (dies_at_error_200 and f.kind == "s3" and f.params.get("action") == "error-200"
                and any(o.kind == "s3" and o.params.get("action") == "error-200" for o in out)):
            notes.append(f"after {f.after}: a second error-200 rule left out: the first kills the task "
                         f"({SDK_V1_COMPLETE})")
            leave_out(f)
            continue
        writes_after = max(0, min(len(scenario.records), len(scenario.records) if writes_until is None
                                  else writes_until) - f.after)
        if on_put and writes_after == 0:
            why = ("no record is produced after it" if writes_until is None or f.after >= len(scenario.records)
                   else f"the task stops at record {writes_until} (a value it cannot write) before any "
                        "record after it")
            notes.append(f"after {f.after}: the rule on {f.params['operation']} left out: {why}, and this "
                         "connector writes each object with one PutObject")
            leave_out(f)
            continue
        if f.kind == "s3":
            renumbered.append(sum(1 for i in renumbered if i is not None))
        part = f.params.get("part_number")
        if (f.kind == "s3" and not on_put and part is not None and int(part) > 1
                and f.params.get("operation") == "UploadPart" and parts_follow_flush(target_spec)):
            out.append(replace(f, params={k: v for k, v in f.params.items() if k != "part_number"}))
            notes.append(f"after {f.after}: the rule on UploadPart part {part} is on the UploadPart of the first "
                         "object after it, whatever its part: this connector ends its objects at each offset "
                         "flush, so a file has 4 parts only if one flush caught enough records, which the "
                         "stream's pace against offset.flush.interval.ms decides")
            continue
        if on_put:
            params = {k: v for k, v in f.params.items() if k != "part_number"}
            params["operation"] = "PutObject"
            if data_key:
                # a table sink writes a data file per task per commit, beside its metadata files
                params.update(key=data_key, nth=1)
                notes.append(f"after {f.after}: the rule on {f.params['operation']} is on the PutObject of the "
                             f"first data file after it ({data_key})")
            else:
                params["nth"] = min(int(params.get("nth", 1)), writes_after)
                notes.append(f"after {f.after}: the rule on {f.params['operation']} is on PutObject "
                             f"(this connector writes each object with one PutObject)")
            out.append(replace(f, params=params))
        elif f.kind == "update-config" and before is not None and not before.given:
            merged.update({str(k): str(v) for k, v in dict(f.params.get("config", {})).items()})
            after = translation_for(target_spec, merged)
            changed = {k: v for k, v in after.config.items() if before.config.get(k) != v}
            if changed:
                out.append(replace(f, params={**f.params, "config": changed}))
            else:
                notes.append(f"after {f.after}: update-config {dict(f.params.get('config', {}))} left out: "
                             f"nothing in it has a counterpart in this connector")
            before = after
        else:
            out.append(f)
    return out, notes


def judged_run(scenario: Scenario, target_spec: str, observation: Observation, claim: Claim, cfg: Any,
               records: list[Any], object_format: Any = None, sent: dict[str, str] | None = None) -> RunData:
    """What the checkers read of a run: the model's expectation for its records and config
    phases (with the observed puts, where the target knows them, making wall-clock boundaries
    exact), its files possible rather than required where a fault moved them. A fidelity
    fixture's replay goes through here too, so offline judging is the run's own."""
    kind = target_kind(target_spec)
    expectation, phases, holds = None, [], True
    if cfg is not None:
        phases = config_phases(scenario, kind, cfg, observation)
        expectation = (expect_phases(phases, records) if len(phases) > 1
                       else expect(cfg, records, put_schedule(observation, records)))
        start = expected_start(observation.faults, kind, cfg.version.text,
                               (sent or scenario.connector).get("s3.bucket.name", ""))
        if start is not None and not start[0].starts:
            # R1.3: the release's start() refuses the bucket: its task never reads a record
            expectation = refused_start(cfg, expectation.engine, start[0].refusal)
        holds = boundaries_hold(expectation, claim, observation)
        if not holds:
            expectation = replace(expectation, objects=[replace(o, certain=False) for o in expectation.objects])
    return RunData(scenario, target_spec, observation, claim, cfg, expectation, records, object_format=object_format,
                   phases=phases, boundaries=holds, sent=sent or {})


def boundaries_hold(expectation: Expectation, claim: Claim, observation: Observation) -> bool:
    """Whether the model's file boundaries bind this run. Two fired faults move them: an S3 fault
    in a run whose task dies (a retriable error sets its writer back (R1.5) while the others go
    on, so the record that kills the task can come before a file the model commits first), and a
    retriable S3 error while several files are open (C1: committed records are written again
    from the rewind point into other files). The model's files are then possible, not required,
    and checkers compare objects with the records they hold. So are they where a zombie outlives
    a config update: woken, it finishes the put it was in with the old config's boundaries, over
    the keys the new config's task wrote (C3; the model's phases restart at the update)."""
    s3_fired = any(f.kind == "s3" and f.fired for f in observation.faults)
    c1 = C1 in claim.caveats
    # the task dies where the model has it go on (an error inside Complete's 200 under SDK v1)
    dies = SDK_V1_COMPLETE in claim.caveats or S3_FATAL in claim.caveats  # or a status it does not retry
    return not (s3_fired and (expectation.task_failure is not None or c1 or dies)) and not zombie_across_update(
        observation)


def zombie_across_update(observation: Observation) -> bool:
    """Whether a task instance outlived a config update: paused when it came (a zombie waiting
    to resume), or waiting on an S3 answer held from before it to after it
    (conformance.judging.checks.base.outliving_phases)."""
    return bool(outliving_phases(observation.faults))


# "stop": the connector deleted and its topics and bucket removed (on a warm stack, what the next
# run on that lane waits for)
PHASES = ("start-up", "produce", "faults", "wait until quiet", "observe", "stop", "model", "check")


class PhaseTimer:
    """Seconds per phase of a run: `with timer("produce"): ...` adds to that phase."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {p: 0.0 for p in PHASES}

    def __call__(self, phase: str) -> Any:
        import contextlib

        @contextlib.contextmanager
        def timed() -> Any:
            t = time.perf_counter()
            try:
                yield
            finally:
                self.spent[phase] = self.spent.get(phase, 0.0) + time.perf_counter() - t
        return timed()


def _rule_id(ref: Any, rule_ids: list[str], rule_names: list[str]) -> str | None:
    """The fault front's id of an armed S3 rule, referred to by its `name` or its index among
    the scenario's s3 steps; None when no such rule was armed (yet)."""
    if ref is None:
        return None
    if isinstance(ref, str) and not ref.isdigit():
        return rule_ids[rule_names.index(ref)] if ref in rule_names else None
    n = int(ref)
    return rule_ids[n] if 0 <= n < len(rule_ids) else None


def run_scenario(scenario: Scenario, target_spec: str, run_dir: Path, *, quiet_timeout_s: float = 60,
                 target: Target | None = None, plugin_path: list[str] | None = None,
                 s3_server: Any = None, stack: Any = None) -> RunResult:
    """Run the scenario whole, then check the recorded observation. `s3_server` is a started
    adapters.processes.moto.MotoS3Server to use (emptied first) instead of one started for this run:
    runs one after another share it (the kill matrix). `stack` is a started KafkaStack a Kafka
    Connect target runs on (its broker, workers and S3 server: a warm stack); the run brings its
    own connector, topics and bucket."""
    started = time.monotonic()
    timer = PhaseTimer()
    if stack is not None and s3_server is None:
        s3_server = stack.s3
    worker = worker_converters(target_spec)
    try:
        wire.check_realizable(scenario.connector, scenario.records, worker)
    except wire.NotRealizable as e:
        raise ScenarioError(f"{scenario.name}: not a scenario a real deployment could produce: {e}") from None
    unread = unread_topics(sorted({r["topic"] for r in scenario.records}), scenario.connector)
    if unread:
        # a connector that reads none of them consumes nothing: no sink would be tested
        raise ScenarioError(f"{scenario.name}: its records go to {', '.join(unread)}, which its connector config does "
                            f"not read (topics={scenario.connector.get('topics', '')!r}, topics.regex="
                            f"{scenario.connector.get('topics.regex', '')!r}); produce to the config's topics or give "
                            "the scenario's topics in `topics`")
    registry_records = wire.uses_registry(scenario.connector, worker)
    # records in a registry's wire format are written once the target's registry is there
    to_produce = [] if registry_records else wire.records_to_produce(scenario.connector, scenario.records, worker)
    kind = target_kind(target_spec)
    translation = translation_for(target_spec, scenario.connector)
    sent = translation.config if translation is not None else dict(scenario.connector)
    try:  # what the connector's converters refuse, its task dies on: refused here, before anything starts
        received = wire.sink_records(scenario.connector, scenario.records, range(len(scenario.records)), worker,
                                     read_config=sent)
    except ConverterError as e:
        conv = sent.get("value.converter", "the worker's")
        raise ScenarioError(f"{scenario.name}: {target_spec}'s connector reads these records with the converters of "
                            f"the config it is sent (value.converter={conv}), "
                            f"which refuse them: {e}. Give it records those converters read (a table sink: maps or "
                            "Structs)") from None
    values = [r.value for r in received]
    stops_at = task_stops_at(kind, sent, values)
    runs_version = connect_profile(target_spec)[1] if kind == "confluent" else None
    dies_at_200 = kind == "confluent" and fatal_error_inside_complete(scenario.faults,
                                                                      runs_version or scenario.connector_version)
    fault_steps, fault_changes = faults_for_target(scenario, target_spec, stops_at, dies_at_200)
    s3_faults = [f for f in fault_steps if f.kind in ("s3", "release")]
    front = moto = None
    s3_endpoint = None
    sim = target is None and simulated(target_spec)  # its S3 and fault front are in memory
    if sim:
        s3_server = None
    if s3_server is not None and target is None:
        if stack is None:  # a stack's S3 server holds other runs' buckets: the target makes its own
            s3_server.reset()
            s3_server.create_bucket(scenario.connector.get("s3.bucket.name", "sinkcheck"))
        s3_endpoint = s3_server.endpoint
    if s3_faults and target is None and not sim:
        from adapters.s3.front import S3FaultFront
        from adapters.processes.moto import MotoS3Server

        if s3_server is None:
            moto = MotoS3Server(run_dir / "s3", bucket=scenario.connector.get("s3.bucket.name", "sinkcheck")).start()
        front = S3FaultFront((moto or s3_server).endpoint, run_dir / "s3front").start()
        s3_endpoint = front.endpoint
    # a zombie needs a second worker to take its task over
    workers = 2 if any(f.kind == "pause" for f in fault_steps) else 1
    tgt = target or make_target(target_spec, run_dir, s3_endpoint, plugin_path, workers, stack)
    if sim and s3_faults:
        front = tgt.fault_front
    # a third-party target may declare that its objects follow Confluent's semantics
    kind = getattr(tgt, "semantics", None) or kind
    runs = getattr(getattr(tgt, "plugin", None), "version", None)
    if kind == "confluent" and runs and scenario.connector_version != runs:
        # the model holds the connector to the version that runs
        scenario = replace(scenario, connector_version=runs)
    if hasattr(tgt, "faults_played"):  # a Kafka Connect target: with no fault, nothing retries a put
        tgt.faults_played = any(f.kind not in ("quiet", "wait") for f in fault_steps)
    claims = claims_for_values(kind, sent, fault_steps, scenario.connector_version, values)
    claim = claims[0]
    cfg = model_config(scenario, kind)
    produced_offsets: list[int] = []
    rule_ids: list[str] = []  # the scenario's s3 rules in order, and their names
    rule_names: list[str] = []
    # rules on the start-up bucket check are armed before the sink starts (its first task's start()
    # asks at once), first among the s3 rules; a start they may refuse is a start that went through
    at_start = [i for i, f in enumerate(fault_steps) if armed_before_start(f)]
    try:
        if at_start and front is not None:
            from adapters.s3.front import FaultRule

            for i in at_start:
                rule_ids.append(front.add_rule(FaultRule(**fault_steps[i].params)))
                rule_names.append(str(fault_steps[i].params.get("name", "")))
            tgt.start_may_fail = True
        # a name of its own: on a shared stack a consumer group of an earlier run keeps its offsets
        with timer("start-up"):
            tgt.start({"name": f"sinkcheck-{re.sub(r'[^A-Za-z0-9-]+', '-', scenario.name)[:40]}-{uuid.uuid4().hex[:6]}",
                       "config": sent}, scenario.topics)
        if registry_records:
            to_produce = wire.records_to_produce(scenario.connector, scenario.records, worker,
                                                 registry=target_registry(tgt, target_spec))
        faults = sorted(enumerate(fault_steps), key=lambda t: t[1].after)
        pos = 0
        for idx, step in faults + [(None, None)]:  # type: ignore[list-item]
            upto = len(scenario.records) if step is None else min(step.after, len(scenario.records))
            if upto > pos:
                with timer("produce"):
                    produced_offsets += tgt.produce(to_produce[pos:upto])
                pos = upto
            if step is None:
                break
            if step.kind == "s3":
                if front is None or idx in at_start:
                    continue  # reported below as a fault that never fired, or armed before the start
                from adapters.s3.front import FaultRule

                rule_ids.append(front.add_rule(FaultRule(**step.params)))
                rule_names.append(str(step.params.get("name", "")))
            elif step.kind == "release":
                if front is not None:
                    rid = _rule_id(step.params.get("rule"), rule_ids, rule_names)
                    if rid is not None or "rule" not in step.params:
                        front.release(rid)
            elif step.kind == "quiet":
                # a checkpoint in the stream: the sink catches up before more is produced
                with timer("wait until quiet"):
                    tgt.wait_until_quiet(float(step.params.get("seconds", quiet_timeout_s)))
            elif step.kind == "wait":
                # the sink keeps polling: empty puts (a simulation moves its virtual clock)
                advance = getattr(tgt, "advance", None)
                with timer("faults"):
                    advance(float(step.params.get("seconds", 1.0))) if advance else time.sleep(
                        float(step.params.get("seconds", 1.0)))
            elif step.kind == "wait-fired":
                rid = _rule_id(step.params.get("rule", 0), rule_ids, rule_names)
                if front is not None and rid is not None:
                    with timer("faults"):
                        front.wait_fired(rid, float(step.params.get("seconds", 30)))
            else:
                with timer("faults"):
                    tgt.apply_fault(Fault(step.kind, step.params))
        with timer("wait until quiet"):
            tgt.wait_until_quiet(final_quiet_timeout_s(
                quiet_timeout_s, cfg, fault_steps, len(scenario.records),
                target_spec.startswith("kafka-connect:") and kind == "confluent"))
        if front is not None:
            front.release()
        with timer("observe"):
            observation = tgt.observe()
    finally:
        info = _target_info(tgt)
        with timer("stop"):
            tgt.stop()
        if front is not None:
            s3_events = front.events()
            front.stop()
        if moto is not None:
            moto.stop()
    if front is not None:
        observation.faults.extend(s3_events)
        observation.faults[:] = [replace(f, detail=f"{f.detail}; {why}") if (why := dead_while_armed(f, observation))
                                 else f for f in observation.faults]
    for idx, step in enumerate(fault_steps):
        if step.kind == "s3" and front is None:
            observation.faults.append(FaultEvent("s3", dict(step.params), False,
                                                 detail="this target was run without the S3 fault front"))
    # what put() received: read with the converters the connector was given (what was read before
    # the run, where the records landed at the offsets assumed then and no registry's ids enter)
    records = received if not registry_records and produced_offsets == list(range(len(scenario.records))) else (
        wire.sink_records(scenario.connector, scenario.records, produced_offsets, worker, read_config=sent,
                          registry=observed_registry(observation) if registry_records else None))
    with timer("model"):
        data = judged_run(scenario, target_spec, observation, claim, cfg, records,
                          object_format=getattr(tgt, "object_format", None), sent=sent)
    expectation = data.expectation
    with timer("check"):
        verdicts = run_checks(data)
        others = [(c, run_checks(replace(data, claim=c))) for c in claims[1:]]
        startup = startup_verdict(data)
    if others:  # several claims: each verdict says which one (and which view) it is for
        verdicts = _tagged(claim, verdicts)
        others = [(c, _tagged(c, vs)) for c, vs in others]
    result = RunResult(scenario, target_spec, claim, observation, expectation, verdicts,
                       time.monotonic() - started, run_dir, others, info, translation, fault_changes,
                       untested=untested_reason(data), startup=startup)
    result.timings = dict(timer.spent)
    return result


def target_registry(tgt: Target, target_spec: str) -> Any:
    """The Schema Registry a target's converters read from, where the producer registers the
    records' schemas; a target that has none cannot run a registry converter's scenario."""
    reg = getattr(tgt, "schema_registry", None)
    if reg is None:
        raise TargetError(f"{target_spec} runs no Schema Registry, so records in its wire format (AvroConverter) "
                          "cannot be produced for it")
    return reg


def observed_registry(observation: Observation) -> Any:
    """The registry as the run left it, to write the scenario's records again with the same ids
    and read them with the same versions (the model's input); None where the run kept none."""
    from conformance.inputs.registry_wire import SnapshotRegistry

    return SnapshotRegistry(observation.registry) if observation.registry is not None else None


def _target_info(tgt: Target) -> TargetInfo | None:
    # a third-party target's info() failing must not cost the run its verdicts
    try:
        return tgt.info()
    except Exception:  # noqa: BLE001
        return None


def _tagged(claim: Claim, verdicts: list[Verdict]) -> list[Verdict]:
    return [replace(v, details={**v.details, "claim": claim.name, "view": claim.view}) for v in verdicts]
