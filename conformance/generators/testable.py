"""Generated streams that give the checkers an object to compare (conformance.judging.untested: a run
with none tested nothing). Both changes are made after Hypothesis drew the stream, so every
stream that already writes an object stays what the seed drew."""
from __future__ import annotations

import base64
import json
import re
from dataclasses import replace
from typing import Any, Callable, Sequence

from conformance.generators import values
from conformance.inputs.scenario import FaultStep, Scenario


def first_written(records: list[dict[str, Any]], keys: bool, headers: bool, fatal_nulls: bool,
                   key_kind: str) -> list[dict[str, Any]]:
    """The stream with a record the sink writes first: one that would kill the task at the first
    record (kills_task) leaves no object to compare, so the first record that kills nothing goes
    ahead of it (the rule is still met later in the stream); where every record kills, the first
    gets a plain key and text for its null headers (a header where it has none). Changed after
    drawing, so every other stream a seed draws stays the same."""
    def kills(r: dict[str, Any]) -> bool:
        return kills_task(r, keys, headers, fatal_nulls)

    if not records or not kills(records[0]):
        return records
    j = next((i for i, r in enumerate(records) if not kills(r)), None)
    if j is not None:
        return [records[j]] + records[:j] + records[j + 1:]
    first = dict(records[0])
    if keys and first["key"] is None:
        first["key"] = values.plain_key(key_kind, 0)
    if headers:
        first["headers"] = [[h[0], "" if h[1] is None else h[1]] for h in first["headers"] or []] or [["h", "0"]]
    return [first] + records[1:]


def kills_task(record: dict[str, Any], keys: bool, headers: bool, fatal_nulls: bool) -> bool:
    """Whether a record kills the task that reads it: a null key with keys stored, no headers
    with headers stored (R11.4), a null header value with headers stored (R10), a null value
    under behavior.on.null.values=fail (R12.1)."""
    return ((keys and record["key"] is None) or (fatal_nulls and record["value"] is None)
            or (headers and (not record["headers"] or any(h[1] is None for h in record["headers"]))))


def kills_task_under(cfg: dict[str, str]) -> Callable[[dict[str, Any]], bool]:
    """kills_task with what `cfg` stores (keys, headers) and does with a null value."""
    keys = cfg.get("store.kafka.keys", "false").lower() == "true"
    headers = cfg.get("store.kafka.headers", "false").lower() == "true"
    fatal_nulls = cfg.get("behavior.on.null.values", "fail").lower() == "fail"
    return lambda record: kills_task(record, keys, headers, fatal_nulls)


def fatal_after_a_commit(cfg: dict[str, str], records: list[dict[str, Any]],
                         faults: Sequence[FaultStep] = ()) -> tuple[list[dict[str, Any]], int | None]:
    """The stream with its first task-killing record (kills_task) in a later put than records
    that commit an object, and where that put starts (None: unchanged). A put that holds a
    fatal null fails before any writer runs (R1.4), so a stream whose records all come with its
    first fatal record in one put leaves nothing to compare. As in a deployment where a bad
    record arrives after others were written: the fewest records that commit an object by
    themselves (flush.size and the other record-driven rules; under scheduled rotation any one
    record, which the boundary commits while the sink is quiet) go first, in their order, and
    the run lets the sink settle before the rest. Streams whose other records commit nothing
    stay as drawn.

    They are read as the run plays them: at a wall clock past every record's timestamp
    (PLAYED_AT), and, where `faults` (the schedule drawn for the stream) update the config
    before that put, under each config they may be read with (a config update restarts the
    task, which reads what it had not committed again under the new one, C3). --profile thorough
    drew both: a tombstone that opened a Wallclock file under behavior.on.null.values=write,
    which the next record's time (the clock's, not the tombstone's) rotates alone (R3.2, R6.7);
    and flush.size raised from 5 to 6 before the put the head was to commit in (its sixth record,
    appended for the update, came after the fatal one: settled_before_the_fatal_put). Where no head
    commits under an updated config, the one the drawn config commits goes first still."""
    kills = kills_task_under(cfg)
    fatal = [kills(r) for r in records]
    if not any(fatal):
        return records, None
    good = [r for r, f in zip(records, fatal) if not f]
    lo = _fewest_committing(cfg, good)
    if lo is None:
        return records, None
    read_with = [cfg]
    while True:
        ahead = {id(r) for r in good[:lo]}
        stream = good[:lo] + [r for r in records if id(r) not in ahead]
        fatal_put = next(i for i, r in enumerate(stream) if kills(r))
        configs = [cfg] + _updated_before(cfg, faults, fatal_put)
        if configs == read_with:
            return stream, fatal_put
        longer = [_fewest_committing(c, good) for c in configs]
        if any(k is None for k in longer):
            return stream, fatal_put
        lo, read_with = max(k for k in longer if k is not None), configs


def settled_before_the_fatal_put(cfg: dict[str, str], sc: Scenario, settle: bool = True) -> Scenario:
    """A generated scenario whose stream is complete (the records closing_a_file appends for the
    config an update sets included) with its records reordered by fatal_after_a_commit under the
    drawn config `cfg` and the updates its faults make, and, `settle`, a `quiet` step where the
    fatal put starts: the sink settles on what it can write before the record that kills its task
    comes. The step goes first among those after as many records, where it stood when it was
    placed before the faults were drawn."""
    records, fatal_put = fatal_after_a_commit(cfg, list(sc.records), sc.faults)
    sc = replace(sc, records=records)
    if not settle or fatal_put is None:
        return sc
    return replace(sc, faults=sorted([FaultStep(fatal_put, "quiet", {"seconds": 30})] + list(sc.faults),
                                     key=lambda f: f.after))


# when a run plays a stream: the embedded sink's virtual clock starts here (its SIM_START_MS,
# 2026-01-01T00:00:00.250Z) and a real worker's clock is later still; every drawn record's
# timestamp lies before it (records.T0 is in 2024)
PLAYED_AT = 1_767_225_600_250


def _fewest_committing(cfg: dict[str, str], good: list[dict[str, Any]]) -> int | None:
    """The fewest records at the head of `good` that commit an object by themselves under `cfg`,
    read in one put at PLAYED_AT, or None where all of them commit none."""
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.wire import sink_records
    from reference_impl.config import ConfigError
    from reference_impl.engine.model import PutSpec, expect

    try:
        config = sink_config(cfg)
    except (ConfigError, ValueError):
        return None
    scheduled = config.rotate_schedule_interval_ms > 0

    def commits(k: int) -> bool:
        """Whether the first k records that kill nothing commit an object by themselves."""
        head = good[:k]
        try:
            exp = expect(config, sink_records(cfg, head, placed_offsets(head)), [PutSpec(PLAYED_AT, k)])
        except (ConfigError, ValueError):
            return False
        if exp.task_failure is not None:
            return False
        return any(o.value_object for o in exp.objects) or (scheduled and any(r["value"] is not None for r in head))

    if not good or not commits(len(good)):
        return None
    lo, hi = 1, len(good)  # a longer head commits what a shorter one did (rotations look only back)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if commits(mid) else (mid + 1, hi)
    return lo


def _updated_before(cfg: dict[str, str], faults: Sequence[FaultStep], at: int) -> list[dict[str, str]]:
    """The configs the update-config steps of `faults` before record `at` give, one after another."""
    out, current = [], cfg
    for f in sorted(faults, key=lambda f: f.after):
        if f.kind == "update-config" and f.after < at:
            current = {**current, **{str(k): str(v) for k, v in dict(f.params.get("config", {})).items()}}
            if current not in out and current != cfg:
                out.append(current)
    return out


def placed_offsets(records: list[dict[str, Any]]) -> list[int]:
    """The offset each record gets when the stream is produced to empty topics, in order."""
    offsets: dict[tuple[str, int], int] = {}
    placed = []
    for r in records:
        tp = (r["topic"], int(r["partition"]))
        placed.append(offsets.get(tp, 0))
        offsets[tp] = placed[-1] + 1
    return placed


# how many records a stream may grow by to fill its open file up to flush.size
MAX_FILL = 40


def closing_a_file(cfg: dict[str, str], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A stream whose records the model leaves in open files only (no object, no task death)
    gets copies of its last record (same topic-partition, time, key and headers, so the same
    encoded partition; new seqs) until that file holds flush.size records (R3.8): then one object
    is committed. Where rotation follows the wall clock, the stream is read as one put (no time
    passes): a rotation the clock brings on writes an object before flush.size does, so the
    copies make one either way (--profile ci on 12.1.9: Wallclock with rotate.interval.ms=1000,
    four records within 0.8 s, tested nothing). Streams that would need more than MAX_FILL stay."""
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.wire import sink_records
    from reference_impl.config import ConfigError
    from reference_impl.engine.model import PutSpec, expect

    # records that kill the task go after a committed object (fatal_after_a_commit), which the
    # others must make: they are what is read here
    kills = kills_task_under(cfg)
    whole, records = records, [r for r in records if not kills(r)]
    try:
        config = sink_config(cfg)
        received = sink_records(cfg, records, placed_offsets(records))
        exp = expect(config, received)
        if exp.constraints is not None and exp.task_failure is None and received:
            exp = expect(config, received, [PutSpec(0, len(received))])
    except (ConfigError, ValueError):
        return whole
    if (exp.constraints is not None or exp.task_failure is not None or exp.open == []
            or any(o.value_object for o in exp.objects)):
        return whole
    last_of = {(r["topic"], int(r["partition"])): r for r in records if r.get("value") is not None}
    f = next((o for o in exp.open if (o.topic, o.partition) in last_of), None)
    need = config.flush_size - len(f.offsets) if f is not None else 0
    if f is None or not 0 < need <= MAX_FILL:
        return whole
    last = last_of[(f.topic, f.partition)]
    seq = max((s for s in (_seq(r.get("value")) for r in whole) if s is not None), default=-1) + 1
    fill = [{**last, "value": _with_seq(last["value"], seq + i)} for i in range(need)]
    if any(_seq(r["value"]) != seq + i for i, r in enumerate(fill)):
        return whole  # a value that cannot carry another seq: the checkers could not tell them apart
    return whole + fill


def _seq(value: Any) -> int | None:
    from conformance.inputs.scenario import record_seq

    return record_seq(value)


def _with_seq(value: Any, seq: int) -> Any:
    """`value` (in its converter's notation) carrying `seq` instead of its own."""
    if isinstance(value, dict) and "payload" in value and "schema" in value:
        return {**value, "payload": _with_seq(value["payload"], seq)}
    if isinstance(value, dict):
        return {**value, "seq": seq}
    if isinstance(value, str) and re.match(r"seq=\d+", value):
        return re.sub(r"^seq=\d+", f"seq={seq}", value)
    if isinstance(value, str):
        try:
            raw = json.loads(base64.b64decode(value, validate=True))
            return base64.b64encode(json.dumps({**raw, "seq": seq}, separators=(",", ":")).encode()).decode()
        except (ValueError, TypeError):
            return value
    return value
