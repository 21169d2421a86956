"""What every checker reads and shares: the recorded run (`RunData`), the registry a checker enters
(`check`), and the small helpers that name a topic-partition's offsets and build a verdict."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from adapters.observation import BucketSample, FaultEvent, Observation, S3Object
from conformance.judging.claims import S3_FATAL, SDK_V1_COMPLETE, Claim
from conformance.inputs.scenario import Scenario, record_seq
from conformance.judging.verdicts import FAIL, PASS, Verdict, Witness
from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.contents import decode_view
from reference_impl.engine.expectation import Expectation
from conformance.judging.objects import DECODERS


TP = tuple[str, int]
MAX_WITNESSES = 5


@dataclass
class RunData:
    """Everything a checker may look at: the scenario, what was observed, the model."""

    scenario: Scenario
    target: str
    observation: Observation
    claim: Claim
    cfg: SinkConfig | None
    expectation: Expectation | None
    records: list[SinkRecord] = field(default_factory=list)  # as produced, with offsets
    # how to decode objects without a Confluent config: a key of conformance.judging.objects.DECODERS,
    # declared by the target (`object_format`); None: the built-in target's, if any
    object_format: str | None = None
    # the configs the sink ran under with the committed offsets each restarted from (a config
    # update starts a phase); empty: `cfg` throughout
    phases: list[tuple[SinkConfig, dict[str, int]]] = field(default_factory=list)
    # whether the model's file boundaries bind the run (conformance.playing.runner.boundaries_hold):
    # False after a fault that moves them; objects are then compared with the records they hold
    boundaries: bool = True
    # the connector config the sink ran under (a translation's, adapters.connect.profiles), which its
    # own objects are read by; empty: the scenario's
    sent: dict[str, str] = field(default_factory=dict)
    _decoded: dict[tuple[str, str], list[int] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.object_format is None:
            from conformance.inputs.targets import object_format_of

            self.object_format = object_format_of(self.target)
        self.seq_to_record: dict[int, SinkRecord] = {}
        for r in self.records:
            s = record_seq(_raw_value(r))
            if s is not None:
                self.seq_to_record[s] = r

    # --- what the bucket holds --------------------------------------------------------------
    def value_objects(self, sample: BucketSample | None) -> list[S3Object]:
        """The data objects of a sample as the claim's reader sees them: every object of a raw
        listing (view "listing"), or only those the sink's own commit log lists (view "log":
        `sample.committed_keys`; a sample without a log lists none). The sink's own files
        (its log, markers, temporary files) are never data."""
        if sample is None:
            return []
        objs = [o for o in sample.objects if not _sibling(o.key) and not _sink_internal(o.key)]
        if self.claim.view == "log":
            listed = set(sample.committed_keys or ())
            objs = [o for o in objs if o.key in listed]
        return objs

    @property
    def visible_in(self) -> str:
        """Where the claim's reader sees records, for witnesses: the bucket, or the sink's own log."""
        if self.claim.view != "log":
            return "S3"
        return "the table's current snapshot" if self.claim.naming == "iceberg" else "the sink's commit log"

    def seqs(self, obj: S3Object) -> list[int] | None:
        """The record seqs an object holds, in order (None: it could not be decoded)."""
        k = (obj.key, obj.etag)
        if k not in self._decoded:
            self._decoded[k] = self._decode(obj)
        return self._decoded[k]

    @property
    def decodable(self) -> bool:
        """Objects of this run have a known format (a Confluent config or a declared format)."""
        return self.cfg is not None or self.object_format in DECODERS

    def _decode(self, obj: S3Object) -> list[int] | None:
        if obj.body is None or not self.decodable:
            return None
        try:
            if self.cfg is not None:
                values = decode_view(self.cfg, obj.body, "value")
            else:
                values = DECODERS[self.object_format](obj.body, self.connector)
        except Exception:
            return None
        out = []
        for v in values:
            s = record_seq(v)
            if s is None:
                return None
            out.append(s)
        return out

    def offsets_of(self, obj: S3Object) -> list[tuple[TP, int]] | None:
        seqs = self.seqs(obj)
        if seqs is None:
            return None
        out = []
        for s in seqs:
            r = self.seq_to_record.get(s)
            if r is None:
                return None
            out.append((r.tp, r.offset))
        return out

    @property
    def connector(self) -> dict[str, str]:
        return self.sent or self.scenario.connector

    @property
    def must_write(self) -> dict[TP, set[int]]:
        """Offsets the model writes to some file (not skipped, not a tombstone); for a claim whose
        reader sees the latest value per key (view "latest-per-key"), each key's last record only."""
        skipped = {(s.topic, s.partition, s.offset) for s in (self.expectation.skipped if self.expectation else [])}
        out: dict[TP, set[int]] = defaultdict(set)
        kept = [r for r in self.records
                if r.value is not None and (r.topic, r.partition, r.offset) not in skipped
                and record_seq(_raw_value(r)) is not None]
        if self.claim.view == "latest-per-key":
            kept = list({r.key: r for r in sorted(kept, key=lambda r: (r.timestamp or 0, r.offset))}.values())
        for r in kept:
            out[r.tp].add(r.offset)
        return out

    def config_at(self, tp: TP, offset: int) -> SinkConfig | None:
        """The config in force when the sink wrote `offset` of `tp` (the phase it restarted in)."""
        cfg = self.cfg
        for phase_cfg, starts in self.phases:
            if offset >= starts.get(_tp_name(tp), 0):
                cfg = phase_cfg
        return cfg

    def configs_at(self, tp: TP, offset: int) -> list[SinkConfig]:
        """Every config a task instance may have written an object starting at `offset` of `tp`
        under: the phase the sink restarted in (config_at), and each earlier phase whose instance
        outlived the update that ended it (outliving_phases): that zombie finishes its put with
        the config it was started with, over offsets the next phase writes again (C4 across C3)."""
        current = self.config_at(tp, offset)
        zombies = outliving_phases(self.observation.faults)
        earlier = [cfg for i, (cfg, starts) in enumerate(self.phases)
                   if i in zombies and offset >= starts.get(_tp_name(tp), 0)]
        return [c for c in [current, *earlier] if c is not None]

    def faults_not_fired(self) -> list[str]:
        """The scheduled faults whose trigger never matched. An S3 rule is not among them once an
        error inside Complete's 200 has killed the task (SDK v1, R7.4) with nothing bringing it
        back after: no request came for it to fire on (10.6.18 --profile default: a 503 rule on
        UploadPart armed after such a rule, unknown)."""
        dead = self.task_killed_by_error_200()
        return [f"{f.kind} {f.params}" for f in self.observation.faults
                if not f.fired and not (dead and f.kind == "s3")]

    def task_killed_by_error_200(self) -> bool:
        """Whether the run ended with its task FAILED by the first error-200 rule that fired, on a
        connector whose S3 client does not retry it, and no restart, config update or worker
        restart after that fault."""
        if SDK_V1_COMPLETE not in self.claim.caveats and S3_FATAL not in self.claim.caveats:
            return False
        st = self.observation.statuses
        if not st or "FAILED" not in st[-1].task_states:
            return False
        # an error-200 under SDK v1, or an error answer the release does not retry (R7.4)
        killing = ("error-200", "fail", "reset", "stall") if S3_FATAL in self.claim.caveats else ("error-200",)
        fired = [f.at_ms for f in self.observation.faults
                 if f.kind == "s3" and f.fired and f.params.get("action") in killing and f.at_ms is not None]
        return bool(fired) and not any(f.kind in REVIVES and f.fired and (f.at_ms or 0) > min(fired)
                                       for f in self.observation.faults)


# S3 answers held back from a task until released: the task's thread waits in the request
HELD_ANSWERS = ("hang", "stall")


def outliving_phases(faults: Sequence[FaultEvent]) -> frozenset[int]:
    """The config phases (0: the scenario's config; k: the one the k-th fired config update
    brought, RunData.phases's order where each update reported its restart point) whose task
    instance went on after the update that ended its phase: one paused when the update came
    (a zombie), or one waiting on an S3 answer held from before the update to after it (a hang
    or a stall). Connect cannot interrupt a task's thread: stopping the task for the new config
    waits task.shutdown.graceful.timeout.ms and abandons it, and its put goes on once S3
    answers, writing files with its own config's boundaries (spec C4 across C3)."""
    fired = [f for f in faults if f.fired]
    updates = [f for f in fired if f.kind == "update-config"]
    out: set[int] = set()
    paused: set[int] = set()  # the phases of the instances paused now, in the order the steps ran
    phase = 0
    for f in fired:
        if f.kind == "pause":
            paused.add(phase)
        elif f.kind == "resume":
            paused.clear()
        elif f.kind == "update-config":
            out |= paused
            # an update whose restart point the target could not tell starts no phase (the
            # model's config stands: conformance.playing.runner.config_phases)
            phase += f.restart_from is not None
    for f in fired:
        if f.kind != "s3" or f.params.get("action") not in HELD_ANSWERS or f.at_ms is None:
            continue
        # the instance the answer was held from: the phase of the updates made before it fired
        held = sum(1 for u in updates if u.restart_from is not None and u.at_ms is not None and u.at_ms <= f.at_ms)
        if any(u.at_ms is not None and u.at_ms > f.at_ms and (f.until_ms is None or f.until_ms >= u.at_ms)
               for u in updates):
            out.add(held)
    return frozenset(out)


def _raw_value(r: SinkRecord) -> Any:
    from reference_impl.formats.json_format import to_json_value

    return to_json_value(r.value, r.value_schema)


def _sibling(key: str) -> bool:
    return ".keys." in key or ".headers." in key


# faults after which a FAILED Connect task runs again: its worker restarted (`crash` is a
# kill-worker with a restart), the task or connector restarted by REST, a new config
REVIVES = ("crash", "kill-worker", "restart-task", "restart-connector", "update-config")


# directories a sink keeps its own files in, next to its data: Spark's metadata log and
# checkpoint, Hadoop's task attempts, Lenses' exactly-once indexes (lock objects) and the
# staged uploads it copies into place (a fenced zombie's stay behind)
_INTERNAL_DIRS = {"_spark_metadata", "_temporary", "_checkpoint", ".indexes", ".temp-upload"}


def _committed_past(d: RunData, obj: S3Object) -> bool:
    """Whether the sink's committed offset has passed the first record of `obj`."""
    offs = d.offsets_of(obj)
    if not offs:
        return True
    (topic, partition), first = min(offs, key=lambda t: t[1])
    return d.observation.final_offsets.get(f"{topic}-{partition}", 0) > first


def _sink_internal(key: str) -> bool:
    """A sink's own file, never data: in one of _INTERNAL_DIRS, a directory marker (`dir/`),
    `_SUCCESS`, or a hidden temporary/checksum file (`.name.tmp`, `.name.crc`)."""
    parts = key.split("/")
    name = parts[-1]
    return (key.endswith("/") or name == "_SUCCESS" or any(p in _INTERNAL_DIRS for p in parts[:-1])
            or (name.startswith(".") and name.endswith((".tmp", ".crc"))))


def _tp_name(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def _at(tp: TP, offset: int) -> str:
    return f"{tp[0]}-{tp[1]}@{offset}"


# --- registry ---------------------------------------------------------------------------------

Check = Callable[[RunData], Verdict]
CHECKS: dict[str, tuple[str, Check]] = {}


def check(name: str, rule: str) -> Callable[[Check], Check]:
    """Register a checker under the property it verifies."""
    def deco(fn: Check) -> Check:
        CHECKS[name] = (rule, fn)
        return fn
    return deco


def _verdict(name: str, witnesses: list[Witness], ok_message: str, fail_message: str, **details: Any) -> Verdict:
    if witnesses:
        return Verdict(name, FAIL, False, message=fail_message, witnesses=tuple(witnesses[:MAX_WITNESSES]),
                       details={"count": len(witnesses), **details})
    return Verdict(name, PASS, False, message=ok_message, details=details)


def _observed_objects(d: RunData) -> dict[str, list[int]]:
    out = {}
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        out[obj.key] = [o for _, o in offs] if offs is not None else []
    return out


def _past_fatal_null(d: RunData) -> set[TP]:
    """Topic-partitions whose files the model bounds from below only: the task died at a fatal
    null in a put it cannot place (R1.4, R12.1/R12.2), and a consumer's fetches do not follow
    the produce order across partitions, so another partition's records produced after the
    null may have been put, and their files committed, before it."""
    f = d.expectation.task_failure if d.expectation is not None else None
    if f is None or f.rule not in ("R12.1", "R12.2") or f.put_index is not None:
        return set()
    return {(r.topic, r.partition) for r in d.records} - {(f.topic, f.partition)}
