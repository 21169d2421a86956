"""One topic-partition of an audit, compared on an executor: its records, the model's manifest
rows for it (objects, whose `certain` the model's failure resolution has settled, and its open
tail) and the objects found under its keys.

Each object the model commits is encoded from its records with the model's format code and
compared with the object at that key; objects that differ, and objects the model has no key
for, are decoded and their rows matched to records by content: the digest of a row as the
model's format decodes it, per topic-partition (records carry no `seq` marker in a real
audit; see `conformance.auditing.match`). The result is a summary with capped witness lists.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from conformance.auditing.match import RECORD_COLUMNS, TopicPartitionRecords
from conformance.judging.verdicts import Witness
from reference_impl.config import SinkConfig

WITNESS_CAP = 20  # witnesses kept per anomaly and topic-partition; counts are always exact
OFFSETS_SHOWN = 10  # offsets listed in one witness
# the model's manifest rows and the observed objects travel together into the cogroup
OTHER_DDL = ("kind string, topic string, partition int, key string, first_offset long, last_offset long, "
             "offsets array<long>, siblings string, value_object boolean, certain boolean, rotation string, "
             "rule string, message string, failure_offset long, view string, content binary")
OTHER_COLUMNS = [c.split()[0] for c in OTHER_DDL.split(", ")]


# --- what one topic-partition's comparison returns ----------------------------------------------

@dataclass
class TopicPartitionAudit:
    """One topic-partition's audit, as counted on an executor. `topic` None holds the objects
    whose keys name no topic-partition (R5.1)."""

    topic: str | None
    partition: int | None
    records: int = 0
    committed: int = 0  # records in objects the model commits
    uncertain: int = 0  # records in objects the model may or may not commit (its task dies)
    open_tail: int = 0  # records of the model's open files
    expected_objects: int = 0
    observed_objects: int = 0
    exact_objects: int = 0
    lost: int = 0
    duplicated: int = 0
    not_yet_visible: int = 0
    extra_visible: int = 0  # records visible that the model does not commit (yet)
    missing: int = 0
    different: int = 0
    unexpected: int = 0
    undecodable: int = 0
    model_errors: int = 0  # objects of the model whose records its format code cannot encode
    foreign_rows: int = 0  # rows matching no record of this topic-partition
    outside_prefix: int = 0  # expected objects whose keys lie outside the audited prefix
    duplicate_offsets: int = 0  # offsets given twice in the records (the first is kept)
    constraints: bool = False
    failure: dict[str, Any] | None = None
    not_yet_visible_range: tuple[int, int] | None = None
    witnesses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return "(objects outside any topic-partition)" if self.topic is None else f"{self.topic}-{self.partition}"

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["not_yet_visible_range"] = list(self.not_yet_visible_range) if self.not_yet_visible_range else None
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TopicPartitionAudit":
        d = dict(d)
        r = d.get("not_yet_visible_range")
        d["not_yet_visible_range"] = tuple(r) if r else None
        return cls(**d)

    def add(self, anomaly: str, w: Witness) -> None:
        ws = self.witnesses.setdefault(anomaly, [])
        if len(ws) < WITNESS_CAP:
            ws.append(w.to_json())


# --- comparing one topic-partition (runs on executors) ------------------------------------------


def _at(topic: str, partition: int, offset: int) -> str:
    return f"{topic}-{partition}@{offset}"


def _records_text(n: int) -> str:
    return f"{n} record" if n == 1 else f"{n} records"


def _runs(offsets: Sequence[int]) -> str:
    """'3..7, 9, 12..13' for sorted offsets."""
    out, i = [], 0
    offsets = list(offsets)
    while i < len(offsets):
        j = i
        while j + 1 < len(offsets) and offsets[j + 1] == offsets[j] + 1:
            j += 1
        out.append(str(offsets[i]) if i == j else f"{offsets[i]}..{offsets[j]}")
        i = j + 1
        if len(out) >= OFFSETS_SHOWN:
            if i < len(offsets):
                out.append("…")
            break
    return ", ".join(out)


@dataclass(frozen=True)
class CompareSettings:
    """What every executor needs to compare a topic-partition (pickled into the cogroup)."""

    cfg: SinkConfig
    key_prefix: str
    constraints: bool  # the model gives constraints, not objects


def audit_topic_partition(settings: CompareSettings, records: Any, others: Any) -> TopicPartitionAudit:
    """Compare one topic-partition: `records` (pandas: RECORD_COLUMNS), `others` (pandas:
    OTHER_DDL rows: the model's manifest rows and the observed objects, kind 'observed')."""
    import pandas as pd

    cfg = settings.cfg
    if len(records):
        topic, partition = str(records["topic"].iloc[0]), int(records["partition"].iloc[0])
    elif len(others) and others["topic"].notna().iloc[0]:
        topic, partition = str(others["topic"].iloc[0]), int(others["partition"].iloc[0])
    else:
        topic, partition = None, None
    out = TopicPartitionAudit(topic, partition, constraints=settings.constraints)
    tp = TopicPartitionRecords(cfg, topic or "", partition or 0, records if len(records) else
                               pd.DataFrame({c: pd.Series(dtype=object) for c in RECORD_COLUMNS}))
    out.duplicate_offsets = tp.duplicate_offsets
    out.records = tp.n
    kinds = others["kind"].to_numpy(dtype=object) if len(others) else np.array([], dtype=object)
    observed: dict[str, tuple[str, bytes, int | None]] = {}
    for r in others[kinds == "observed"].itertuples(index=False):
        observed[r.key] = (r.view, bytes(r.content), None if pd.isna(r.first_offset) else int(r.first_offset))
    out.observed_objects = len(observed)

    if topic is None:
        # keys that name no topic-partition: nothing to compare them with
        for key in sorted(observed):
            out.unexpected += 1
            out.add("unexpected-object", Witness("unexpected-object", keys=(key,), observed=f"{len(observed[key][1])} bytes",
                                                 explanation="its key does not name a topic-partition and start offset (R5.1)"))
        return out

    to_match: list[tuple[str, bytes, int | None]] = []
    unexpected_info: dict[str, dict[str, Any]] = {}

    if settings.constraints:
        vals = tp.values
        tp.status[np.array([v is not None and v != "null" for v in vals], dtype=bool)] = 4
        for key, (view, data, start) in sorted(observed.items()):
            if view == "value":
                to_match.append((key, data, start))
    else:
        failure = others[kinds == "failure"]
        if len(failure):
            f = failure.iloc[0]
            out.failure = {"rule": f["rule"], "message": f["message"],
                           "offset": None if pd.isna(f["failure_offset"]) else int(f["failure_offset"])}
        for r in others[kinds == "open"].itertuples(index=False):
            pos = tp.positions(np.asarray(r.offsets, dtype=np.int64))
            pos = pos[pos >= 0]
            tp.status[pos] = 3
        for r in others[kinds == "object"].itertuples(index=False):
            offs = (np.asarray(r.offsets, dtype=np.int64) if r.offsets is not None
                    else np.arange(int(r.first_offset), int(r.last_offset) + 1, dtype=np.int64))
            views = ([("value", r.key)] if r.value_object else []) + sorted(
                (v, k) for v, k in json.loads(r.siblings or "{}").items())
            if not all(k.startswith(settings.key_prefix) for _, k in views):
                out.outside_prefix += 1
                continue
            out.expected_objects += 1
            pos = tp.positions(offs)
            if (pos < 0).any():
                raise ValueError(f"the model's object {r.key} holds offsets missing from the records")
            certain = bool(r.certain)  # as the model's failure resolution settled it (R1.4)
            if r.value_object:
                tp.model_key[pos] = len(tp.model_keys)
                tp.model_keys.append(r.key)
                tp.status[pos] = 1 if certain else 2
                if certain:
                    out.committed += len(pos)
                else:
                    out.uncertain += len(pos)
            all_exact = True
            for view, key in views:
                got = observed.pop(key, None)
                if got is None:
                    all_exact = False
                    if certain:
                        out.missing += 1
                        out.add("missing-object", Witness(
                            "missing-object", tuple(_at(topic, partition, int(o)) for o in offs[:OFFSETS_SHOWN]), (key,),
                            expected=f"{_records_text(len(offs))}, offsets {_runs(offs.tolist())}", observed="no such object",
                            explanation=f"the model commits this {view} object ({r.rotation}); it is not in the bucket"))
                    continue
                same, why = tp.same_as_model(pos, view, got[1])
                if same:
                    if view == "value":
                        tp.counts[pos] += 1
                        tp.exact_key[pos] = len(tp.exact_keys)
                        tp.exact_keys.append(key)
                    continue
                all_exact = False
                if why and "model" in why:
                    # the model itself cannot write these records: nothing to hold the sink to
                    out.model_errors += 1
                    tp.status[pos] = 0
                    out.add("model-error", Witness("model-error", keys=(key,), observed=why,
                                                   explanation="the model cannot encode this object's records"))
                    continue
                out.different += 1
                if why and "undecodable" in why:
                    out.undecodable += 1
                out.add("different-object", Witness(
                    "different-object", tuple(_at(topic, partition, int(o)) for o in offs[:OFFSETS_SHOWN]), (key,),
                    expected=f"{_records_text(len(offs))}, offsets {_runs(offs.tolist())}", observed=why,
                    explanation=f"the {view} object at the model's key holds other contents than the model's"))
                if view == "value":
                    to_match.append((key, got[1], int(offs[0])))
            if all_exact:
                out.exact_objects += 1
        for key, (view, data, start) in sorted(observed.items()):
            out.unexpected += 1
            unexpected_info[key] = {"view": view, "bytes": len(data)}
            if view == "value":
                to_match.append((key, data, start))
    out.open_tail = int((tp.status == 3).sum())

    for key, data, start in to_match:
        got = tp.match_rows(key, data, start)
        info = unexpected_info.get(key)
        if got is None:
            if info is not None:
                info["undecodable"] = True
                out.undecodable += 1
            continue
        matched, foreign = got
        out.foreign_rows += foreign
        if info is not None:
            offs = sorted(int(tp.offsets[p]) for p in matched)
            info.update({"rows": len(matched) + foreign, "records": _runs(offs) if offs else "none",
                         "rows_matching_no_record": foreign})
    for key, info in unexpected_info.items():
        out.add("unexpected-object", Witness("unexpected-object", keys=(key,), observed=info,
                                             explanation="the model has no object with this key"))

    _account(tp, out)
    return out


def _account(tp: TopicPartitionRecords, out: TopicPartitionAudit) -> None:
    """Lost, duplicated and not-yet-visible records from the counts."""
    topic, partition = tp.topic, tp.partition
    absent = tp.counts == 0
    if out.constraints:
        seen = np.flatnonzero(tp.counts > 0)
        last_seen = int(seen[-1]) if len(seen) else -1
        # offsets are committed in order (R4.1): an absent record before a visible one is lost
        lost = np.flatnonzero(absent & (tp.status == 4) & (np.arange(tp.n) < last_seen))
        pending = np.flatnonzero(absent & (tp.status == 4) & (np.arange(tp.n) > last_seen))
    else:
        lost = np.flatnonzero(absent & (tp.status == 1))
        pending = np.flatnonzero(absent & ((tp.status == 2) | (tp.status == 3)))
        out.extra_visible = int(((tp.counts > 0) & ((tp.status == 0) | (tp.status == 3))).sum())
    out.lost = len(lost)
    out.not_yet_visible = len(pending)
    if len(pending):
        out.not_yet_visible_range = (int(tp.offsets[pending[0]]), int(tp.offsets[pending[-1]]))
    # one witness per object the lost records belong to (or per run of offsets)
    groups: dict[str, list[int]] = {}
    for p in lost.tolist():
        groups.setdefault(_expected_key_of(tp, p), []).append(int(tp.offsets[p]))
    for key, offs in groups.items():
        why = ("a later record of this topic-partition is visible, and offsets commit in order (R4.1)"
               if out.constraints else "the model commits them; no object in the bucket holds them")
        out.add("lost", Witness("lost", tuple(_at(topic, partition, o) for o in offs[:OFFSETS_SHOWN]),
                                (key,) if key else (), expected=f"{_records_text(len(offs))} visible", observed="absent",
                                explanation=f"{_records_text(len(offs))} (offsets {_runs(offs)}) absent: {why}"))
    dup = np.flatnonzero(tp.counts > 1)
    out.duplicated = len(dup)
    dgroups: dict[tuple[str, ...], list[int]] = {}
    for p in dup.tolist():
        dgroups.setdefault(tuple(sorted(set(tp.keys_holding(p)))), []).append(p)
    for keys, ps in dgroups.items():
        offs = [int(tp.offsets[p]) for p in ps]
        times = sorted({int(tp.counts[p]) for p in ps})
        out.add("duplicated", Witness("duplicated", tuple(_at(topic, partition, o) for o in offs[:OFFSETS_SHOWN]), keys,
                                      expected="each record once", observed=f"{'/'.join(map(str, times))} times",
                                      explanation=f"{_records_text(len(offs))} (offsets {_runs(offs)}) held more than once"))


def _expected_key_of(tp: TopicPartitionRecords, p: int) -> str:
    return tp.model_keys[tp.model_key[p]] if tp.model_key[p] >= 0 else ""
