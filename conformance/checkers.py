"""Checkers: one function per property, run offline on a recorded run.

Each takes a `RunData` and returns a `Verdict`: pass, fail with a minimal witness, or unknown.
`run_checks` runs them all; a checker that crashes yields unknown with its error and never
hides the others. A pass in a run where a scheduled fault never fired is unknown: the run
did not test what it was meant to.
"""
from __future__ import annotations

import traceback
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from adapters.observation import BucketSample, Observation, S3Object
from conformance.claims import C1, SDK_V1_COMPLETE, Claim, several_open_files
from conformance.scenario import Scenario, record_seq
from conformance.verdicts import FAIL, PASS, UNKNOWN, Verdict, Witness
from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.contents import decode_view, encode_view, view_format_class
from reference_impl.expectation import Expectation
from conformance.objects import DECODERS

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
    # how to decode objects without a Confluent config: a key of conformance.objects.DECODERS,
    # declared by the target (`object_format`); None: the built-in target's, if any
    object_format: str | None = None
    # the configs the sink ran under with the committed offsets each restarted from (a config
    # update starts a phase); empty: `cfg` throughout
    phases: list[tuple[SinkConfig, dict[str, int]]] = field(default_factory=list)
    # whether the model's file boundaries bind the run (conformance.runner.boundaries_hold):
    # False after a fault that moves them; objects are then compared with the records they hold
    boundaries: bool = True
    # the connector config the sink ran under (a translation's, adapters.connectors), which its
    # own objects are read by; empty: the scenario's
    sent: dict[str, str] = field(default_factory=dict)
    _decoded: dict[tuple[str, str], list[int] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.object_format is None:
            from conformance.targets import object_format_of

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
        if SDK_V1_COMPLETE not in self.claim.caveats:
            return False
        st = self.observation.statuses
        if not st or "FAILED" not in st[-1].task_states:
            return False
        fired = [f.at_ms for f in self.observation.faults
                 if f.kind == "s3" and f.fired and f.params.get("action") == "error-200" and f.at_ms is not None]
        return bool(fired) and not any(f.kind in REVIVES and f.fired and (f.at_ms or 0) > min(fired)
                                       for f in self.observation.faults)


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


def run_checks(data: RunData, names: list[str] | None = None) -> list[Verdict]:
    out = []
    not_fired = data.faults_not_fired()
    for name, (rule, fn) in CHECKS.items():
        if names is not None and name not in names:
            continue
        claimed = data.claim.claims(name)
        try:
            v = fn(data)
            v = replace(v, claimed=claimed, rule=v.rule or rule)
        except Exception as e:  # one broken checker never hides the others
            v = Verdict(name, UNKNOWN, claimed, rule, f"checker crashed: {type(e).__name__}: {e}",
                        details={"traceback": traceback.format_exc(limit=5)})
        if v.status == PASS and not_fired:
            v = replace(v, status=UNKNOWN, message=f"the fault it needs never fired ({'; '.join(not_fired)}); "
                                                   f"would otherwise pass: {v.message}")
        out.append(v)
    return out


def _verdict(name: str, witnesses: list[Witness], ok_message: str, fail_message: str, **details: Any) -> Verdict:
    if witnesses:
        return Verdict(name, FAIL, False, message=fail_message, witnesses=tuple(witnesses[:MAX_WITNESSES]),
                       details={"count": len(witnesses), **details})
    return Verdict(name, PASS, False, message=ok_message, details=details)


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
        for obj in d.value_objects(sample):
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


def first_difference(expected: bytes, observed: bytes, context: int = 24) -> dict[str, Any]:
    """Where two byte strings first differ: the byte offset, the record (line) it falls in, and
    the bytes around it on each side."""
    at = next((i for i, (a, b) in enumerate(zip(expected, observed)) if a != b), min(len(expected), len(observed)))
    lo = max(0, at - context)
    return {"at": at, "record": expected.count(b"\n", 0, at),
            "expected": expected[lo:at + context], "observed": observed[lo:at + context],
            "lengths": (len(expected), len(observed))}


def _content_witness(obj_key: str, view: str, expected: bytes, observed: bytes, fmt: str) -> Witness | None:
    from reference_impl.formats.compression import decompress

    exp_raw, obs_raw = decompress(expected), decompress(observed)
    if (expected[:2] == b"\x1f\x8b") != (observed[:2] == b"\x1f\x8b"):
        return Witness("wrong-compression", keys=(obj_key,),
                       expected="gzip" if expected[:2] == b"\x1f\x8b" else "uncompressed",
                       observed="gzip" if observed[:2] == b"\x1f\x8b" else "uncompressed",
                       explanation=f"the {view} object is not compressed as s3.compression.type says (R10.1)")
    if exp_raw == obs_raw:
        return None
    diff = first_difference(exp_raw, obs_raw)
    return Witness("different-bytes", keys=(obj_key,), expected=repr(diff["expected"]), observed=repr(diff["observed"]),
                   explanation=f"the {view} object differs from the model's {fmt} encoding of its records at byte "
                               f"{diff['at']} (record {diff['record']}; {diff['lengths'][0]} bytes expected, "
                               f"{diff['lengths'][1]} observed)")


def _rows_witness(d: RunData, obj_key: str, view: str, expected: bytes, observed: bytes, fmt: str) -> Witness | None:
    from reference_impl.contents import jsonable

    try:
        got = jsonable(decode_view(d.cfg, observed, view))
    except Exception as e:  # noqa: BLE001 - an object its own format cannot read
        return Witness("undecodable-object", keys=(obj_key,), explanation=f"the {view} object is no {fmt} file: {e}")
    want = jsonable(decode_view(d.cfg, expected, view))
    if got == want:
        return None
    i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return Witness("different-rows", keys=(obj_key,), expected=want[i] if i < len(want) else f"{len(want)} rows",
                   observed=got[i] if i < len(got) else f"{len(got)} rows",
                   explanation=f"row {i} of the {view} object differs from the model's {fmt} encoding of its records")


def _tombstone_run(d: RunData, obj: S3Object, model_recs: list[SinkRecord], view: str) -> list[SinkRecord] | None:
    """The tombstones a tombstone file holds where the model's file boundaries do not bind (C1, a
    zombie across an update): its topic-partition's null values from the offset its key names,
    as many as the object holds (R3.3: a change to or from the tombstone partition rotates
    nothing, so they need not be consecutive offsets). None when no such run encodes as it."""
    from reference_impl.formats.compression import decompress

    first = model_recs[0] if model_recs else None
    if first is None or obj.body is None or d.cfg is None:
        return None
    tail = sorted((r for r in d.records if r.tp == first.tp and r.offset >= first.offset and r.value is None),
                  key=lambda r: r.offset)
    body = decompress(obj.body)
    for k in range(1, len(tail) + 1):
        try:
            if decompress(encode_view(d.cfg, tail[:k], view)) == body:
                return tail[:k]
        except Exception:  # noqa: BLE001 - records the model cannot write: compare() says so
            return None
    return None


@check("contents", "R10")
def contents(d: RunData) -> Verdict:
    """Every object of the final listing holds the model's encoding of the records it holds,
    byte for byte after decompression (JSON, ByteArray; Avro and Parquet row for row), and a
    data file's keys and headers objects (R11) sit beside its value object with the same
    records: none missing, none without its value object."""
    from reference_impl.formats import format_for
    from reference_impl.naming import sibling_key, view_extension, views_stored

    final = d.observation.final_bucket
    if d.cfg is None and d.claim.naming == "aiven" and final is not None:
        from conformance.aiven_checks import aiven_contents

        return aiven_contents(d)
    if d.cfg is None or final is None:
        return Verdict("contents", UNKNOWN, False, message="no connector format to encode records with")
    cfg = d.cfg
    listed = {o.key: o for o in final.objects if not _sink_internal(o.key)}
    by_offset = {(r.topic, r.partition, r.offset): r for r in d.records}
    exact = d.expectation is not None and d.expectation.constraints is None
    model = {o.key: o for o in d.expectation.objects} if exact else {}
    tombstone_siblings = {k: o for o in model.values() if not o.value_object for _, k in o.sibling_keys}
    w: list[Witness] = []
    checked, unencodable = 0, 0
    st = d.observation.statuses
    task_died = (d.expectation is not None and d.expectation.task_failure is not None) or (
        bool(st) and ("FAILED" in st[-1].task_states or st[-1].connector_state == "FAILED"))

    def compare(obj: S3Object, recs: list[SinkRecord], view: str) -> None:
        nonlocal checked, unencodable
        if obj.body is None:
            return
        fmt = format_for(view_format_class(cfg, view)).name
        try:
            expected = encode_view(cfg, recs, view)
        except Exception:  # noqa: BLE001 - records the model cannot write: other checkers say so
            unencodable += 1
            return
        checked += 1
        found = (_content_witness(obj.key, view, expected, obj.body, fmt) if fmt in ("json", "bytearray")
                 else _rows_witness(d, obj.key, view, expected, obj.body, fmt))
        if found is not None:
            w.append(found)

    value_keys = set()
    for obj in d.value_objects(final):
        value_keys.add(obj.key)
        m = model.get(obj.key) if d.boundaries else None
        if m is not None and m.value_object:
            recs = [by_offset[(m.topic, m.partition, o)] for o in m.offsets if (m.topic, m.partition, o) in by_offset]
        else:
            offs = d.offsets_of(obj)
            if not offs:
                continue  # undecodable or unknown records: no-loss and atomic-visibility say so
            recs = [by_offset[(tp[0], tp[1], o)] for tp, o in offs if (tp[0], tp[1], o) in by_offset]
        compare(obj, recs, "value")
        for view in views_stored(cfg):
            sk = sibling_key(cfg, obj.key, view)
            if sk is None:
                continue
            if sk not in listed:
                if task_died or not _committed_past(d, obj):
                    # a dead task leaves a file set half committed (R11.1: not atomic); a set cut
                    # by a retriable error is written again whole once its records come round
                    # (R1.5), which an open tail after quiet still waits for
                    continue
                w.append(Witness("missing-sibling", keys=(obj.key, sk), expected=sk, observed=None,
                                 explanation=f"the data file's {view} object is not in the bucket beside its value "
                                             "object after quiet (R11.1)"))
            else:
                compare(listed[sk], recs, view)
    value_ext = view_extension(cfg, "value")
    for key, obj in sorted(listed.items()):
        if not _sibling(key):
            continue
        view = "keys" if ".keys." in key else "headers"
        m = tombstone_siblings.get(key)
        if m is not None:  # a tombstone file: keys (and headers) only (R12.3)
            recs = [by_offset[(m.topic, m.partition, o)] for o in m.offsets]
            if not d.boundaries:  # it starts where its key says; where it ends, the run decided
                recs = _tombstone_run(d, obj, recs, view) or recs
            compare(obj, recs, view)
            continue
        suffix = f".{view}{view_extension(cfg, view)}"
        owner = key[: -len(suffix)] + value_ext if key.endswith(suffix) else None
        if owner in value_keys:
            continue
        # a tombstone file holds keys (and headers) only (R12.3); where the model's boundaries do
        # not bind (C1, a zombie across an update) one may start at another offset than its
        if (exact and d.boundaries) or cfg.tombstone_encoded_partition not in key:
            w.append(Witness("orphan-sibling", keys=(key,), expected=owner, observed=None,
                             explanation=f"a {view} object without the value object it belongs beside (R11.1)"
                                         if not exact else f"a {view} object the model has no file for"))
    return _verdict("contents", w, f"{checked} objects hold the model's encoding of their records",
                    f"{len(w)} objects differ from the model's encoding or stand without their siblings",
                    checked=checked, unencodable=unencodable)


@check("commit-safety", "P-COMMIT-SAFETY")
def commit_safety(d: RunData) -> Verdict:
    samples = d.observation.bucket_samples
    must = d.must_write
    visible_at: list[tuple[int, dict[TP, set[int]]]] = []
    for s in sorted(samples, key=lambda b: b.at_ms):
        vis: dict[TP, set[int]] = defaultdict(set)
        for obj in d.value_objects(s):
            for tp, o in d.offsets_of(obj) or []:
                vis[tp].add(o)
        visible_at.append((s.at_ms, vis))
    w = []
    last: dict[tuple[str, Any, int], int] = {}
    # the suite's own rewinds (a lost offset commit: the offsets set back through the REST API)
    # start a new span: a step back across one is the fault, not the sink's
    rewinds = sorted((f.at_ms, f.until_ms or f.at_ms) for f in d.observation.faults
                     if f.kind == "lose-offset-commit" and f.fired and f.at_ms is not None)
    # in the order they were read: samplers on two threads can append out of order
    for os_ in sorted(d.observation.offset_samples, key=lambda o: o.at_ms):
        later = next((vis for at, vis in visible_at if at >= os_.at_ms), visible_at[-1][1] if visible_at else {})
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


# naming, rotation and file-count: the layout of the bucket (conformance.checks_layout registers
# them here, so the properties keep their order)
from conformance import checks_layout  # noqa: E402,F401


@check("multipart-hygiene", "P-MPU-HYGIENE")
def multipart_hygiene(d: RunData) -> Verdict:
    final = d.observation.final_bucket
    uploads = list(final.open_uploads) if final else []
    w = [Witness("leaked-upload", keys=(k,), observed=u, explanation="an incomplete multipart upload is left after quiet")
         for k, u in uploads]
    return _verdict("multipart-hygiene", w, "no incomplete multipart uploads after quiet", f"{len(w)} multipart uploads leaked")


# liveness (the sink ended running; a table sink committed in time): conformance.checks_liveness
from conformance import checks_liveness  # noqa: E402,F401
