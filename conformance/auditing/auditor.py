"""The audit: a topic's records beside the bucket a sink wrote, checked after the fact on Spark.

    records ──► the model's engine (fold_resolved) ──► expected objects, open tail ─┐
    s3a://bucket/prefix ──► every object's bytes (Spark's S3A) ─────────────────────┼─► per topic-partition
    records ─────────────────────────────────────────────────────────────────────────┘   comparison

Everything heavy runs on Spark executors, one topic-partition per group: the records of a
topic-partition, its expected objects and the objects found under its keys meet in one
`cogroup`. Each object the model commits is encoded from its records with the model's format
code and compared with the object at that key; objects that differ, and objects the model
has no key for, are decoded and their rows matched to records by content: the digest of a
row as the model's format decodes it, per topic-partition (records carry no `seq` marker in a
real audit). Only per-topic-partition summaries with capped witness lists reach the driver.

What counts as what, per topic-partition:
* lost: a record in an object the model commits (certain) that no object in the bucket holds;
* not yet visible: a record of the model's open tail (or of an object the model is unsure
  about because its task dies) that no object holds; reported, never a failure;
* duplicated: a record held by two or more objects (or twice by one);
* different-object / missing-object / unexpected-object: keys or contents that differ from
  the model's objects (exact-object-set). With scheduled rotation or the Wallclock extractor
  the model gives constraints, not objects: exact-object-set is unknown, and a record is lost
  only when a later record of its topic-partition is visible (offsets commit in order, R4).

The model's steps across topic-partitions (a task-start problem, a fatal null, the earliest
writer failure and what it leaves of the others' writes, R1.4) are the Spark engine's
(`reference_impl.engine.spark.fold_resolved`); the comparison reads the result from the
manifest. Modules: `audit_bucket` (where to look, what is there), `audit_match` (records and
rows matched to them), `audit_compare` (one topic-partition's comparison), this one (the
Spark job and the run results).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conformance.auditing.bucket import (AuditInputError, BucketLocation, Listing, S3Access, key_pattern,
    list_objects, observed_objects)
from conformance.auditing.compare import (OFFSETS_SHOWN, OTHER_COLUMNS, OTHER_DDL, WITNESS_CAP,
    CompareSettings, TopicPartitionAudit, audit_topic_partition)
from conformance.auditing.match import RECORD_COLUMNS, TopicPartitionRecords, content_digest
from conformance.judging.claims import Claim, claim_for
from conformance.playing.runner import RunResult
from conformance.inputs.scenario import Scenario
from conformance.judging.verdicts import FAIL, PASS, UNKNOWN, Verdict, Witness
from reference_impl.config import SinkConfig

__all__ = [
    "AuditInputError", "AuditOutcome", "AuditResult", "BucketLocation", "CompareSettings", "Listing", "ModelOutcome",
    "OFFSETS_SHOWN", "OTHER_DDL", "RECORD_COLUMNS", "S3Access", "SUMMARY_DDL", "TopicPartitionAudit",
    "TopicPartitionRecords", "WITNESS_CAP", "audit_results", "audit_topic_partition", "compare_dataframe",
    "content_digest", "key_pattern", "list_objects", "model_manifest", "observed_objects", "run_audit",
]

SUMMARY_DDL = "topic string, partition int, summary string"


# --- the Spark job ------------------------------------------------------------------------------

@dataclass
class ModelOutcome:
    fold: Any | None  # reference_impl.engine.spark.ResolvedFold; None with constraints
    constraints_reason: str | None = None
    task_failure: dict[str, Any] | None = None  # where the model's task dies (TaskFailure.to_json)

    @property
    def manifest(self) -> Any | None:
        """The model's manifest rows (DataFrame), objects' `certain` settled; None with constraints."""
        return None if self.fold is None else self.fold.manifest


def model_manifest(cfg: SinkConfig, records: Any, clustered: bool = False) -> ModelOutcome:
    """The model's objects for the records, from its Spark engine (`fold_resolved`, cached);
    only failure and summary rows come to the driver. Without a put schedule everything is
    one put, as for `sinkcheck model --engine spark`."""
    from reference_impl.engine.model import constraints_reason
    from reference_impl.engine.spark import fold_resolved

    if cfg.wallclock_dependent:
        return ModelOutcome(None, constraints_reason(cfg).split(";")[0] +
                            "; the objects depend on when the sink's puts happened, which the records do not say")
    fold = fold_resolved(cfg, records, clustered=clustered)
    return ModelOutcome(fold, task_failure=None if fold.failure is None else fold.failure.to_json())


@dataclass
class AuditOutcome:
    location: BucketLocation
    topic_partitions: list[TopicPartitionAudit]
    listing: Listing
    constraints_reason: str | None
    task_failure: dict[str, Any] | None
    records: int
    wall_s: float
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase


def compare_dataframe(settings: CompareSettings, records: Any, manifest: Any | None, observed: Any) -> Any:
    """The per-topic-partition comparison as a DataFrame of SUMMARY_DDL rows (lazy)."""
    import pandas as pd
    from pyspark.sql import functions as F

    others = observed
    if manifest is not None:
        m = manifest.filter(F.col("kind").isin("object", "open", "failure"))
        others = m.select(*[F.col(c) if c in m.columns else F.lit(None).alias(c) for c in OTHER_COLUMNS[:-2]],
                          F.lit(None).cast("string").alias("view"), F.lit(None).cast("binary").alias("content"))
        others = others.select(*[F.col(c).cast(t) for c, t in (x.split(" ", 1) for x in OTHER_DDL.split(", "))])
        others = others.unionByName(observed)

    def compare(recs: "pd.DataFrame", rows: "pd.DataFrame") -> "pd.DataFrame":
        res = audit_topic_partition(settings, recs, rows)
        return pd.DataFrame([{"topic": res.topic, "partition": res.partition,
                              "summary": json.dumps(res.to_json(), default=str)}])

    recs = records.select(*RECORD_COLUMNS)
    return (recs.groupBy("topic", "partition").cogroup(others.groupBy("topic", "partition"))
            .applyInPandas(compare, SUMMARY_DDL))


def run_audit(spark: Any, cfg: SinkConfig, records: Any, location: BucketLocation, access: S3Access, *,
              clustered: bool = False, progress: Callable[[str], None] = lambda text: None) -> AuditOutcome:
    """Audit the bucket against the records: everything heavy on Spark, summaries back.
    `progress` hears of each of its three phases as it starts."""
    started = time.monotonic()
    progress("[sinkcheck] audit 1/3: the model over the records…")
    model = model_manifest(cfg, records, clustered)
    t_model = time.monotonic()
    progress(f"[sinkcheck] audit 2/3: listing {location.url}…")
    observed, listing = observed_objects(spark, cfg, location, access)
    t_list = time.monotonic()
    progress(f"[sinkcheck] audit 3/3: reading {listing.listed} objects and comparing them with the model…")
    settings = CompareSettings(cfg, location.key_prefix, model.manifest is None)
    rows = compare_dataframe(settings, records, model.manifest, observed).collect()
    if model.fold is not None:
        model.fold.release()
    timings = {"model": t_model - started, "listing": t_list - t_model, "read and compare": time.monotonic() - t_list}
    tps = [TopicPartitionAudit.from_json(json.loads(r["summary"])) for r in rows]
    tps.sort(key=lambda t: (t.topic is None, t.topic or "", t.partition or 0))
    notes = []
    read = sum(t.observed_objects for t in tps)
    if read < listing.listed:
        notes.append(f"{listing.listed - read} of the {listing.listed} objects listed under {location.url} were gone "
                     "when Spark came to read them")
    if listing.read_on_driver:
        notes.append(f"{listing.read_on_driver} objects that Spark's file sources skip (zero bytes, names starting with "
                     "'_' or '.', empty path segments) were read on the driver")
    outside = sum(t.outside_prefix for t in tps)
    if outside:
        notes.append(f"{outside} objects of the model lie outside {location.url} and were not audited")
    dups = sum(t.duplicate_offsets for t in tps)
    if dups:
        notes.append(f"the records give {dups} offsets twice; the first of each was used")
    return AuditOutcome(location, tps, listing, model.constraints_reason, model.task_failure,
                        sum(t.records for t in tps), time.monotonic() - started, notes, timings)


# --- as run results, for the report writers -----------------------------------------------------

@dataclass
class AuditResult(RunResult):
    """One topic-partition of an audit as a run result: the report writers show it like a run
    (scenario = the topic-partition, target = the bucket), with its counts and the command
    that repeats it."""

    record_count: int = 0
    audit: dict[str, Any] = field(default_factory=dict)
    reproduce: str = ""


def _verdicts(t: TopicPartitionAudit, claim: Claim, reason: str | None) -> list[Verdict]:
    def ws(*anomalies: str) -> tuple[Witness, ...]:
        out = []
        for a in anomalies:
            for w in t.witnesses.get(a, []):
                out.append(Witness(w["anomaly"], tuple(w["offsets"]), tuple(w["keys"]), w["expected"], w["observed"],
                                   w["explanation"]))
        return tuple(out)

    def v(prop: str, status: str, rule: str, message: str, witnesses: tuple[Witness, ...] = (), **details: Any) -> Verdict:
        return Verdict(prop, status, claim.claims(prop), rule, message, witnesses, details)

    pending = ""
    if t.not_yet_visible:
        lo, hi = t.not_yet_visible_range or (None, None)
        pending = f"; {t.not_yet_visible} records not yet visible (offsets {lo}..{hi}: the model's open tail)"
    if t.topic is None:
        return [v("exact-object-set", FAIL if t.unexpected else PASS, "R5.1",
                  f"{t.unexpected} objects whose keys name no topic-partition", ws("unexpected-object"),
                  unexpected=t.unexpected)]
    counts = {"records": t.records, "committed": t.committed, "uncertain": t.uncertain, "open_tail": t.open_tail,
              "not_yet_visible": t.not_yet_visible, "not_yet_visible_range": t.not_yet_visible_range}
    if t.lost:
        no_loss = v("no-loss", FAIL, "P-NOLOSS", f"{t.lost} records lost{pending}", ws("lost"), lost=t.lost, **counts)
    elif t.undecodable:
        no_loss = v("no-loss", UNKNOWN, "P-NOLOSS", f"{t.undecodable} objects could not be decoded{pending}",
                    ws("different-object", "unexpected-object"), **counts)
    else:
        checked = t.records if t.constraints else t.committed
        no_loss = v("no-loss", PASS, "P-NOLOSS", f"all {checked} records the model commits are visible{pending}", **counts)
    dup = (v("no-duplicates", FAIL, "P-NODUP", f"{t.duplicated} records duplicated", ws("duplicated"), duplicated=t.duplicated)
           if t.duplicated else v("no-duplicates", PASS, "P-NODUP", "every visible record appears once"))
    if t.constraints:
        exact = v("exact-object-set", UNKNOWN, "§16", f"the model gives constraints, not an exact object set: {reason}")
    else:
        bad = t.missing + t.different + t.unexpected
        if t.model_errors and not bad:
            return [no_loss, dup, v("exact-object-set", UNKNOWN, "§16", f"the model cannot encode {t.model_errors} of "
                                    "its objects' records", ws("model-error"), model_errors=t.model_errors)]
        details = {"expected_objects": t.expected_objects, "observed_objects": t.observed_objects,
                   "exact_objects": t.exact_objects, "missing": t.missing, "different": t.different,
                   "unexpected": t.unexpected, "extra_visible_records": t.extra_visible}
        exact = (v("exact-object-set", FAIL, "§16", f"{bad} objects differ from the model ({t.missing} missing, "
                   f"{t.different} different, {t.unexpected} unexpected)",
                   ws("missing-object", "different-object", "unexpected-object"), **details)
                 if bad else v("exact-object-set", PASS, "§16", f"{t.exact_objects} objects exactly as the model", **details))
    return [no_loss, dup, exact]


def audit_results(outcome: AuditOutcome, connector: dict[str, str], connector_version: str | None,
                  run_dir: Path, reproduce: str) -> list[AuditResult]:
    claim = claim_for("confluent", connector, [])
    target = outcome.location.url
    out = []
    for t in outcome.topic_partitions:
        name = t.name
        topics = {} if t.topic is None else {t.topic: (t.partition or 0) + 1}
        note = f"audit of {target}"
        if outcome.task_failure:
            note += f"; the model's task dies ({outcome.task_failure['rule']}: {outcome.task_failure['message']})"
        scenario = Scenario(name, dict(connector), topics, [], [], None, connector_version, note)
        verdicts = _verdicts(t, claim, outcome.constraints_reason)
        d = run_dir / re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        out.append(AuditResult(scenario, target, claim, _empty_observation(), None, verdicts, outcome.wall_s, d,
                               record_count=t.records, audit=t.to_json(), reproduce=reproduce))
    return out


def _empty_observation() -> Any:
    from adapters.observation import Observation

    # an audit sees the bucket once, after the fact: no history to draw a timeline from
    return Observation(quiet=True)
