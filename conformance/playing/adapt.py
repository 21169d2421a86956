"""A named scenario fitted to a user's connector config keeps its point where the config allows:
each scenario was written for a config of its own, and under the user's two of its parts can
test nothing.

- A tombstone the user's config answers by stopping the task (R12.1: behavior.on.null.values=
  fail, its default) where the scenario's own config wrote or skipped it: the records after it
  are never read, so a scenario about rotation amid tombstones tests one record. The tombstones
  are left out (the faults keep their place among the records that remain); a scenario whose own
  config already stopped at one is about that refusal and keeps them.
- A scenario about several tasks (its own tasks.max above the user's: a restart of task 1, a
  worker joining that takes a task over) keeps its own tasks.max: tasks.max decides which task
  writes a topic-partition, not what is written there (each task writes its partitions' files
  alone), and under the user's tasks.max=1 Connect answers a restart of task 1 with 404 Unknown
  task. The consumer assignor is not kept: it changes what the connector does (a known bug under
  the cooperative one), so a scenario about it is not applicable under a config without it.
- A record without headers, or with a null header value, where the user's config stores
  headers (store.kafka.headers: the task dies at it, R11.4, R10), or with a null key where it
  stores keys: where the scenario's own config stored them as well, that record is its point
  and stays; otherwise it gets a plain header (`h`: its seq) or key, and the notes say so
  (a scenario of headerless records under a config storing headers tested nothing at all).
- A config update mid-stream to values the user's config already has would change nothing (and
  Connect restarts no task for it): flush.size goes to the user's plus one instead.
- An S3 fault on part k of a multipart upload, where no file of the user's config can have k
  parts (flush.size records of the scenario's largest size within k-1 parts of s3.part.size):
  the rule never fires and the run is unknown. The fault goes on part 1, which every upload has
  (the connector writes each file as a multipart upload, R7.1).
- An S3 error answer a release dies on (reference_impl.s3_errors), armed where no upload of the
  user's config has completed yet (a scenario armed after its own first file of flush.size=3,
  under the user's flush.size=4): it would take the first file's request and kill the task before
  any object lands, and the run tests nothing. It answers a later request, as a generated
  schedule's does (conformance.generators.faults.first_request_answered); where no such request
  comes the scenario is not applicable (fatal_answer_before_any_object says why).

Every change is written into the scenario's notes, which the report shows.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

from conformance.inputs.connector_config import sink_config
from conformance.inputs.scenario import FaultStep, Scenario
from reference_impl.config import ConfigError, SinkConfig
from reference_impl.versions import VersionError
from reference_impl.engine.model import null_action

# what a file holds besides its records, at most (a Parquet footer with its Avro schema, an Avro
# header): bytes
FILE_OVERHEAD = 64 * 1024


def adapted(original: Scenario, fitted: Scenario) -> Scenario:
    """`fitted` (the `original` scenario under the user's config) with the tombstones the config
    kills the task at left out and its part-k faults on part 1 where no file has k parts."""
    try:
        own = sink_config(original.connector, original.connector_version)
        users = sink_config(fitted.connector, fitted.connector_version)
    except (ConfigError, VersionError):
        return fitted  # the connector's validator (or the target's translation) says what is wrong
    fitted = _with_what_is_stored(_on_existing_parts(_without_fatal_tombstones(fitted, own, users), users), own, users)
    fitted = _fatal_answers_after_an_object(fitted, users)
    return _with_effective_update(_with_own_tasks(original, fitted), users)


def kills(cfg: SinkConfig, record: dict[str, Any]) -> bool:
    """Does the config stop the task at this record (a tombstone under behavior.on.null.values=fail)?"""
    act = null_action(cfg, _Tombstone(record.get("value")))  # type: ignore[arg-type]
    return act is not None and act[0] == "kill"


@dataclasses.dataclass(frozen=True)
class _Tombstone:
    """What null_action reads of a record: its value (None for a tombstone, whatever the converter)."""
    value: Any


def _without_fatal_tombstones(sc: Scenario, own: SinkConfig, users: SinkConfig) -> Scenario:
    dropped = [i for i, r in enumerate(sc.records) if kills(users, r) and not kills(own, r)]
    if not dropped or len(dropped) == len(sc.records) or any(kills(own, r) for r in sc.records):
        return sc
    gone = set(dropped)
    records = [r for i, r in enumerate(sc.records) if i not in gone]
    faults = [dataclasses.replace(f, after=f.after - sum(1 for i in dropped if i < f.after)) for f in sc.faults]
    line = (f"under the given connector config: its {len(dropped)} tombstone(s) left out "
            f"(behavior.on.null.values={users.behavior_on_null_values}: the task would stop at the first, R12.1)")
    return dataclasses.replace(sc, records=records, faults=faults, notes=f"{sc.notes}\n{line}".strip())


def _largest_record(records: Sequence[dict[str, Any]]) -> int:
    def size(v: Any) -> int:
        return len(v) if isinstance(v, (str, bytes)) else len(json.dumps(v, default=str))
    return max((size(r.get("value")) + size(r.get("key")) for r in records), default=0)


def most_parts(cfg: SinkConfig, records: Sequence[dict[str, Any]]) -> int:
    """The most parts a file of `cfg` can have with these records: flush.size of the largest
    (twice its JSON text: no format writes a value longer than that), plus a file's overhead."""
    most_bytes = cfg.flush_size * 2 * _largest_record(records) + FILE_OVERHEAD
    return max(1, -(-most_bytes // cfg.part_size))


def _on_existing_parts(sc: Scenario, cfg: SinkConfig) -> Scenario:
    parts = most_parts(cfg, sc.records)
    renamed: dict[str, str] = {}
    faults: list[FaultStep] = []
    for f in sc.faults:
        k = int(f.params.get("part_number") or 1) if f.kind == "s3" else 1
        if k <= parts:
            faults.append(f)
            continue
        params = {**f.params, "part_number": 1}
        if "name" in params:
            renamed[str(params["name"])] = params["name"] = str(params["name"]).replace(f"part {k}", "part 1")
        faults.append(dataclasses.replace(f, params=params))
        line = (f"under the given connector config: the S3 fault on part {k} goes on part 1 (flush.size="
                f"{cfg.flush_size}, s3.part.size={cfg.part_size}: no file has more than {parts} part(s))")
        sc = dataclasses.replace(sc, notes=f"{sc.notes}\n{line}".strip())
    if not renamed and faults == sc.faults:
        return sc
    faults = [dataclasses.replace(f, params={**f.params, "rule": renamed[f.params["rule"]]})
              if f.kind in ("wait-fired", "release") and f.params.get("rule") in renamed else f for f in faults]
    return dataclasses.replace(sc, faults=faults)


def _tasks_max(cfg: dict[str, str]) -> int:
    try:
        return max(1, int(str(cfg.get("tasks.max", "1")).strip()))
    except ValueError:
        return 1


def _with_own_tasks(original: Scenario, sc: Scenario) -> Scenario:
    own, users = _tasks_max(original.connector), _tasks_max(sc.connector)
    connector = dict(sc.connector)
    lines = []
    if own > users:
        connector["tasks.max"] = str(own)
        lines.append(f"tasks.max={own} kept from the scenario, which is about {own} tasks (the given config's "
                     f"tasks.max={users} runs {users}); tasks.max decides which task writes a topic-partition, not what "
                     "is written there")
    if not lines:
        return sc
    notes = "\n".join([sc.notes] + [f"under the given connector config: {ln}" for ln in lines]).strip()
    return dataclasses.replace(sc, connector=connector, notes=notes)


def _with_effective_update(sc: Scenario, cfg: SinkConfig) -> Scenario:
    faults, lines = [], []
    for f in sc.faults:
        new = f.params.get("config") if f.kind == "update-config" else None
        if isinstance(new, dict) and new and all(str(sc.connector.get(k, "")).strip() == str(v).strip()
                                                 for k, v in new.items()):
            bumped = str(cfg.flush_size + 1)
            faults.append(dataclasses.replace(f, params={**f.params, "config": {**new, "flush.size": bumped}}))
            lines.append(f"under the given connector config: the update to {', '.join(f'{k}={v}' for k, v in new.items())} "
                         f"changes nothing there, so it sets flush.size={bumped}")
        else:
            faults.append(f)
    if not lines:
        return sc
    return dataclasses.replace(sc, faults=faults, notes="\n".join([sc.notes] + lines).strip())


def _with_what_is_stored(sc: Scenario, own: SinkConfig, users: SinkConfig) -> Scenario:
    from conformance.generators.values import plain_key
    from conformance.inputs.scenario import ScenarioError, converter_kind, record_seq

    headers = users.store_kafka_headers and not own.store_kafka_headers
    keys = users.store_kafka_keys and not own.store_kafka_keys
    if not headers and not keys:
        return sc
    try:
        key_kind = converter_kind(sc.connector, "key")
    except ScenarioError:
        return sc
    records, given_headers, given_keys = [], 0, 0
    for i, r in enumerate(sc.records):
        r = dict(r)
        seq = record_seq(r.get("value"))
        seq = i if seq is None else seq
        if headers and (not r.get("headers") or any(h[1] is None for h in r["headers"])):
            r["headers"] = [[h[0], "" if h[1] is None else h[1]] for h in r.get("headers") or []] or [["h", str(seq)]]
            given_headers += 1
        if keys and r.get("key") is None:
            r["key"] = plain_key(key_kind, seq)
            given_keys += 1
        records.append(r)
    lines = []
    if given_headers:
        lines.append(f"under the given connector config: {given_headers} record(s) given a header (store.kafka.headers="
                     "true: the task would stop at a record without one, or with a null one, R11.4)")
    if given_keys:
        lines.append(f"under the given connector config: {given_keys} record(s) given a key (store.kafka.keys=true: the "
                     "task would stop at a null key)")
    if not lines:
        return sc
    return dataclasses.replace(sc, records=records, notes="\n".join([sc.notes] + lines).strip())


def _fatal_rules(sc: Scenario) -> tuple[list[int], list[int]]:
    """The positions of the upload rules a release may die on, and what the model counts of the
    uploads made by the records from each position on (conformance.generators.faults.uploads_after:
    [] where it rejects the config)."""
    from conformance.generators.faults import POLLS, S3_UPLOAD_OPERATIONS, may_stop_the_task, uploads_after

    fatal = [i for i, f in enumerate(sc.faults) if may_stop_the_task(f) and f.params.get("state") != "applied"
             and f.params.get("operation") in S3_UPLOAD_OPERATIONS]
    if not fatal:
        return [], []
    cuts = sorted({min(f.after, len(sc.records)) for f in sc.faults if f.kind in POLLS})
    return fatal, uploads_after(sc.connector, list(sc.records), cuts)


def _placed(sc: Scenario) -> tuple[Scenario, list[str]]:
    """`sc` with each fatal rule armed before any upload completed made to wait for a later
    request (conformance.generators.faults.that_can_fire decides which), and the names of those
    no later request comes for."""
    from conformance.generators.faults import that_can_fire

    fatal, counts = _fatal_rules(sc)
    n = len(sc.records)
    # a rule armed after records that already made an upload (the quiet step before it let the
    # sink write it) may take the first request: an object is there whatever it does to the task
    early = [i for i in fatal if counts and counts[0] - counts[min(sc.faults[i].after, n)] == 0]
    if not early:
        return sc, []
    fitted = {str(f.params.get("name")): f for f in that_can_fire(sc.connector, list(sc.records), list(sc.faults))
              if f.kind == "s3"}
    faults, unplaced = list(sc.faults), []
    for i in early:
        name = str(sc.faults[i].params.get("name"))
        if name not in fitted:
            unplaced.append(name)
        else:
            faults[i] = dataclasses.replace(sc.faults[i], params={**sc.faults[i].params,
                                                                  "nth": fitted[name].params.get("nth", 1)})
    return dataclasses.replace(sc, faults=faults), unplaced


def _fatal_answers_after_an_object(sc: Scenario, cfg: SinkConfig) -> Scenario:
    placed, unplaced = _placed(sc)
    if unplaced:
        return sc  # not applicable: fatal_answer_before_any_object says why
    lines = [f"under the given connector config: the {f.params.get('status')} {f.params.get('code')} on "
             f"{f.params.get('operation')} answers request {g.params.get('nth')} after it is armed, not "
             f"{f.params.get('nth', 1)} (flush.size={cfg.flush_size}: no upload has completed there, and the task "
             "would die before any object, R7.4)"
             for f, g in zip(sc.faults, placed.faults) if f.params.get("nth", 1) != g.params.get("nth", 1)]
    if not lines:
        return sc
    return dataclasses.replace(placed, notes="\n".join([sc.notes] + lines).strip())


def fatal_answer_before_any_object(sc: Scenario, cfg: SinkConfig) -> str | None:
    """Why a fitted scenario's S3 answer a release dies on can only come before any object lands
    under its config (no upload completes before it is armed, none after the first comes for it
    to answer instead), or None. Such a run would test nothing (conformance.judging.untested)."""
    _, unplaced = _placed(sc)
    if not unplaced:
        return None
    f = next(f for f in sc.faults if str(f.params.get("name")) == unplaced[0])
    return (f"flush.size={cfg.flush_size}: the {f.params.get('status')} {f.params.get('code')} on "
            f"{f.params.get('operation')} would answer the first file's upload, and no later one comes among the "
            f"{len(sc.records)} records, so the task dies before any object (R7.4)")
