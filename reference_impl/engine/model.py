"""The reference model: (connector config, records, optional put schedule, version) → Expectation.

The steps that span topic-partitions live here and run the same for both engines:
1. task-start problems (R6.3) end the run before any record;
2. the null-value policy runs in put() before any writer (R1.4 step 1), so a fatal null
   ends the task at that put for every topic-partition;
3. each topic-partition is folded (`fold.fold_topic_partition`) by an engine;
4. the earliest task failure cuts every topic-partition at its put.
"""
from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Iterator, Sequence

from reference_impl.config import SinkConfig
from reference_impl.config_keys import invalid_topic_reason
from reference_impl.connect_data import SchemaError, SinkRecord
from reference_impl.errors import ConnectorError
from reference_impl.engine.expectation import (ExpectedObject, Expectation, SkippedRecord, TaskFailure,
    TopicPartitionConstraints)
from reference_impl.engine.fold import fold_topic_partition
from reference_impl.engine.fold_data import FoldResult, Put
from reference_impl.naming import directory
from reference_impl.partitioning import build_partitioner
from reference_impl.s3_errors import STARTUP_RULE


class InputError(ValueError):
    """RECORDS.jsonl or PUTS.jsonl is malformed; says which line."""


@dataclass(frozen=True)
class PutSpec:
    at_ms: int
    count: int


# --- inputs ---------------------------------------------------------------------------------

def parse_records_lines(lines: Iterable[str], source: str = "records") -> list[SinkRecord]:
    out: list[SinkRecord] = []
    last: dict[tuple[str, int], int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}: line {n}, column {e.colno}: {e.msg}") from None
        try:
            r = SinkRecord.from_json(obj, f"{source}: line {n}")
        except SchemaError as e:
            raise InputError(str(e)) from None
        problem = record_order_problem(r, last)
        if problem:
            raise InputError(f"{source}: line {n}: {problem}")
        out.append(r)
    return out


def record_order_problem(r: SinkRecord, last: dict[tuple[str, int], int]) -> str | None:
    """Why Kafka could not have given `r` after the records before it (a topic no topic can be,
    an offset that does not go forward in its topic-partition), or None; `last` is updated."""
    reason = invalid_topic_reason(r.topic)
    if reason:
        return f"{reason}; fix the record's topic"
    tp = (r.topic, r.partition)
    if tp in last and r.offset <= last[tp]:
        word = "repeats" if r.offset == last[tp] else "goes back from"
        return (f"offset {r.offset} {word} offset {last[tp]} in {r.topic}-{r.partition}: Kafka gives each "
                "topic-partition's records once, in increasing offset order; remove or reorder the record")
    last[tp] = r.offset
    return None


def parse_puts_lines(lines: Iterable[str], source: str = "puts") -> list[PutSpec]:
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}: line {n}, column {e.colno}: {e.msg}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("at"), int) or not isinstance(obj.get("count"), int) or obj["count"] < 0:
            raise InputError(f"{source}: line {n}: a put is {{\"at\": <wall-clock ms>, \"count\": <records, >= 0>}}")
        out.append(PutSpec(obj["at"], obj["count"]))
    for a, b in zip(out, out[1:]):
        if b.at_ms < a.at_ms:
            raise InputError(f"{source}: puts go forward in time; {b.at_ms} comes after {a.at_ms}")
    return out


def put_boundaries(puts: Sequence[PutSpec], n_records: int) -> list[int]:
    """Cumulative record counts: record number `seq` belongs to put `bisect_right(b, seq)`."""
    total, bounds = 0, []
    for p in puts:
        total += p.count
        bounds.append(total)
    if total > n_records:
        raise InputError(f"the put schedule carries {total} records but only {n_records} were given")
    return bounds


def put_index_of(bounds: Sequence[int], seq: int) -> int | None:
    i = bisect.bisect_right(bounds, seq)
    return i if i < len(bounds) else None  # None: never put


# --- the null-value policy (R1.4 step 1, R12) ------------------------------------------------

def null_action(cfg: SinkConfig, record: SinkRecord) -> tuple[str, str] | None:
    """What put() does with a null value before buffering: None (buffer it), ("skip", rule),
    ("skip-reported", rule) or ("kill", rule)."""
    if record.value is not None:
        return None
    if not cfg.version.null_value_policy:
        return ("kill", "R12.1")
    policy = cfg.behavior_on_null_values
    if policy == "fail":
        return ("kill", "R12.1")
    if policy == "ignore":
        reports = cfg.has_errant_record_reporter and (
            cfg.report_null_values_to_dlq or not cfg.version.report_null_values_flag
        )
        if not reports:
            return ("skip", "R12.2")
        return ("skip-reported", "R12.2") if cfg.errors_tolerance == "all" else ("kill", "R12.2")
    return None  # write: goes to the tombstone partition (R12.3)


_NULL_MESSAGES = {
    "R12.1": "null value with behavior.on.null.values=fail: put() throws and the task dies",
    "R12.2": "null value ignored, but reporting it under errors.tolerance=none throws 'Tolerance exceeded'",
}


def first_fatal_null(cfg: SinkConfig, records: Sequence[SinkRecord], bounds: Sequence[int] | None) -> TaskFailure | None:
    found = fatal_null_at(cfg, records)
    if found is None:
        return None
    seq, r, rule = found
    put = put_index_of(bounds, seq) if bounds is not None else None
    if bounds is not None and put is None:
        return None  # never put
    return TaskFailure(r.offset, rule, _NULL_MESSAGES[rule], r.topic, r.partition, put)


def fatal_null_at(cfg: SinkConfig, records: Sequence[SinkRecord]) -> tuple[int, SinkRecord, str] | None:
    """(position in the input, record, rule) of the first null that kills the task (R12)."""
    for seq, r in enumerate(records):
        act = null_action(cfg, r)
        if act and act[0] == "kill":
            return seq, r, act[1]
    return None


# --- per-topic-partition inputs ---------------------------------------------------------------

def tp_key(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def build_puts(
    cfg: SinkConfig,
    records: Sequence[tuple[int, SinkRecord]],
    puts: Sequence[PutSpec] | None,
    bounds: Sequence[int] | None,
    stop_before: int | None,
) -> tuple[list[Put], list[SkippedRecord], int]:
    """One topic-partition's puts from its (seq, record) pairs. Null-policy skips are taken out
    here (they never reach the writer). Returns (puts, skipped, records never put)."""
    skipped: list[SkippedRecord] = []
    kept: list[tuple[int, SinkRecord]] = []
    for seq, r in records:
        act = null_action(cfg, r)
        if act and act[0].startswith("skip"):
            skipped.append(SkippedRecord(r.topic, r.partition, r.offset, act[1], act[0] == "skip-reported"))
        elif not act:
            kept.append((seq, r))
    if puts is None:
        if stop_before is not None and stop_before <= 0:
            return [], skipped, len(kept)
        return [Put(None, None, [r for _, r in kept])], skipped, 0
    assert bounds is not None
    per_put: list[list[SinkRecord]] = [[] for _ in puts]
    undelivered = 0
    for seq, r in kept:
        i = put_index_of(bounds, seq)
        if i is None:
            undelivered += 1
        else:
            per_put[i].append(r)
    n = len(puts) if stop_before is None else min(stop_before, len(puts))
    return [Put(i, puts[i].at_ms, per_put[i]) for i in range(n)], skipped, undelivered


def failure_regardless_of_clock(probe: TaskFailure | None) -> TaskFailure | None:
    """Where the task dies when the boundaries depend on the wall clock: what kills it (a null,
    an extractor, a partitioner or a format refusing a record) depends on the records alone, so
    a fold of every record in one put finds it; that put's index means nothing and is dropped."""
    return None if probe is None else replace(probe, put_index=None)


def constraints_for(cfg: SinkConfig, topic: str, partition: int, records: Sequence[SinkRecord], jvm_zone: str) -> TopicPartitionConstraints:
    """Scheduled rotation or Wallclock without put times: what holds whatever the clock does."""
    p = build_partitioner(cfg, jvm_zone)
    eps: dict[int, str] | None = None
    if not (cfg.time_based and cfg.timestamp_extractor == "wallclock"):
        eps = {}
        for r in records:
            try:
                ts = p.timestamp_for_rotation(r, None) if p.extractor is not None else None
                eps[r.offset] = p.encode(r, None, ts)
            except ConnectorError:
                continue
    offsets = tuple(r.offset for r in records if null_action(cfg, r) is None)
    f = cfg.file_delim
    pattern = f"{directory(cfg, topic, '{ep}')}{cfg.directory_delim}{topic}{f}{partition}{f}{{start:0{cfg.zero_pad_width}d}}"
    return TopicPartitionConstraints(topic, partition, offsets, max(cfg.flush_size, 1), eps, pattern)


# --- engines ----------------------------------------------------------------------------------

FoldTask = tuple[str, int, list[Put]]


def fold_local(cfg: SinkConfig, tasks: Iterable[FoldTask], jvm_zone: str,
               existing_keys: frozenset[str] = frozenset()) -> Iterator[FoldResult]:
    partitioner = build_partitioner(cfg, jvm_zone)
    for topic, partition, puts in tasks:
        yield fold_topic_partition(cfg, partitioner, topic, partition, puts, existing_keys)


def group_by_tp(records: Sequence[SinkRecord]) -> dict[tuple[str, int], list[tuple[int, SinkRecord]]]:
    groups: dict[tuple[str, int], list[tuple[int, SinkRecord]]] = {}
    for seq, r in enumerate(records):
        groups.setdefault(r.tp, []).append((seq, r))
    return groups


def assemble(
    cfg: SinkConfig,
    engine: str,
    results: list[FoldResult],
    skipped: list[SkippedRecord],
    undelivered: dict[str, int],
    failure: TaskFailure | None,
) -> Expectation:
    exp = Expectation(connector_version=cfg.version.text, engine=engine,
                      conditional_writes=cfg.conditional_writes_active)
    results = sorted(results, key=lambda r: (r.topic, r.partition))
    objects: list[tuple[Any, ...]] = []
    for res in results:
        for n, o in enumerate(res.objects):
            objects.append((o.put_index if o.put_index is not None else -1, res.topic, res.partition, n, o))
        if res.committed_offset is not None:
            exp.committed_offsets[tp_key(res.topic, res.partition)] = res.committed_offset
        exp.open.extend(res.open)
        exp.conflicts.extend(res.conflicts)
        exp.overwritten.extend(res.overwritten)
        skipped = skipped + res.skipped
    exp.objects = [o for *_, o in sorted(objects, key=lambda t: t[:4])]
    exp.skipped = sorted(skipped, key=lambda s: (s.topic, s.partition, s.offset))
    exp.task_failure = failure
    exp.undelivered = {k: v for k, v in undelivered.items() if v}
    return exp



def start_failure(cfg: SinkConfig, engine: str) -> Expectation | None:
    """R6.3: the connector is accepted but every task fails at start, before any record."""
    if not cfg.task_start_problems:
        return None
    p = cfg.task_start_problems[0]
    return Expectation(cfg.version.text, engine, task_failure=TaskFailure(None, "R6.3", str(p)),
                       conditional_writes=cfg.conditional_writes_active)


def refused_start(cfg: SinkConfig, engine: str, refusal: str) -> Expectation:
    """R1.3: start() refused the bucket its check was answered for (reference_impl.s3_errors.start_up):
    the task dies before it reads a record, so nothing is written and nothing committed."""
    return Expectation(cfg.version.text, engine, task_failure=TaskFailure(None, STARTUP_RULE, refusal),
                       conditional_writes=cfg.conditional_writes_active)


def constraints_reason(cfg: SinkConfig) -> str:
    why = ("rotate.schedule.interval.ms rotates on wall-clock time" if cfg.rotate_schedule_interval_ms > 0
           else "the Wallclock extractor partitions by the time of each put")
    return why + "; give a put schedule (--puts) for exact objects"


@dataclass(frozen=True)
class FailureCut:
    """What the task's death leaves of the writers' work (R1.4): it dies at `failure`; the
    writers in `others` may or may not have run their part of put `put_index` (None: the one
    put there is), and nothing after it happened. `put_unknown`: a fatal null without a put
    schedule, whose put is unknown, so any file may or may not have been committed earlier."""

    failure: TaskFailure | None
    put_index: int | None = None
    others: frozenset[tuple[str, int]] = frozenset()
    put_unknown: bool = False
    # several writers fail in the failing put: whichever the shuffle runs first dies before the
    # others write, so the named one's part of that put is not certain either
    contested: bool = False

    def certain(self, topic: str, partition: int, put_index: int | None) -> bool:
        """Whether an object this writer committed in put `put_index` exists for certain."""
        return not self.put_unknown and (
            ((topic, partition) not in self.others and not self.contested) or put_index != self.put_index)

    @property
    def refold(self) -> bool:
        """The others must be re-folded up to the failing put (nothing after it happened)."""
        return self.put_index is not None and bool(self.others)


def cut_at_failure(failures: Iterable[TaskFailure], tps: Iterable[tuple[str, int]], null_kill: TaskFailure | None,
                   scheduled: bool = True) -> FailureCut:
    """The task dies at the earliest failure. A fatal null stops puts before any write, so a
    writer's failure always comes first. Writers run in a shuffled order (R1.4): another
    writer's part of the failing put may or may not have happened, and nothing after it did.
    Without a put schedule (`scheduled=False`) a fatal null's put is unknown: each file the
    records before it commit may or may not have been committed in an earlier put (the null's
    own put dies before any write), so none is certain. `failures` are the writers' own,
    `tps` every writer's topic-partition."""
    put_unknown = null_kill is not None and not scheduled
    failures = list(failures)
    if not failures:
        return FailureCut(null_kill, put_unknown=put_unknown)
    # which writer dies first within one put is not fixed (R1.4); name the first by topic-partition
    failure = min(failures, key=lambda f: (f.put_index if f.put_index is not None else -1,
                                           f.topic or "", f.partition or 0, f.offset or 0))
    # every other writer, also one whose own failure would come in a later put: that put never
    # happens, and its part of put k may or may not have
    others = frozenset(tps) - {(failure.topic, failure.partition)}
    contested = sum(1 for f in failures if f.put_index == failure.put_index) > 1
    return FailureCut(failure, failure.put_index, others, put_unknown, contested)


def resolve_failure(
    results: list[FoldResult],
    null_kill: TaskFailure | None,
    rerun: Callable[[int, set[tuple[str, int]]], list[FoldResult]],
    scheduled: bool = True,
) -> tuple[list[FoldResult], TaskFailure | None]:
    """`cut_at_failure` on folded writers: the others are re-folded up to the failing put and
    the objects that are not certain marked so."""
    cut = cut_at_failure([r.failure for r in results if r.failure is not None],
                         [(r.topic, r.partition) for r in results], null_kill, scheduled)
    if cut.refold:
        by_tp = {(r.topic, r.partition): r for r in rerun(cut.put_index + 1, set(cut.others))}  # type: ignore[operator]
        results = [by_tp.get((r.topic, r.partition), r) for r in results]
    for r in results:
        r.objects = [o if cut.certain(r.topic, r.partition, o.put_index) else replace(o, certain=False) for o in r.objects]
    return results, cut.failure


def expect(
    cfg: SinkConfig,
    records: Sequence[SinkRecord],
    puts: Sequence[PutSpec] | None = None,
    engine: str = "local",
    jvm_zone: str = "UTC",
    existing_keys: Iterable[str] = (),
) -> Expectation:
    """Run the model in-process. `existing_keys` are objects already in the bucket (R8)."""
    existing = frozenset(existing_keys)
    started = start_failure(cfg, engine)
    if started:
        return started
    bounds = put_boundaries(puts, len(records)) if puts is not None else None
    groups = group_by_tp(records)

    if puts is None and cfg.wallclock_dependent:
        exp = Expectation(cfg.version.text, engine, conditional_writes=cfg.conditional_writes_active)
        exp.constraints = [constraints_for(cfg, t, p, [r for _, r in rs], jvm_zone) for (t, p), rs in sorted(groups.items())]
        exp.constraints_reason = constraints_reason(cfg)
        if records:
            exp.task_failure = failure_regardless_of_clock(
                expect(cfg, records, [PutSpec(0, len(records))], engine, jvm_zone, existing).task_failure)
        return exp

    null_kill = first_fatal_null(cfg, records, bounds)
    stop = null_kill.put_index if null_kill else None
    # no put schedule and a fatal null: only the records before it can have been put (earlier)
    null_seq = fatal_null_at(cfg, records)[0] if puts is None and null_kill is not None else None  # type: ignore[index]

    def run(stop_before: int | None, only: set[tuple[str, int]] | None = None) -> tuple[list[FoldResult], list[SkippedRecord], dict[str, int]]:
        tasks, skipped, undelivered = [], [], {}
        for (t, p), rs in sorted(groups.items()):
            if only is not None and (t, p) not in only:
                continue
            if null_seq is not None:
                before = [(seq, r) for seq, r in rs if seq < null_seq]
                tp_puts, tp_skipped, _ = build_puts(cfg, before, None, None, None)
                never = len(rs) - len(before)
            else:
                tp_puts, tp_skipped, never = build_puts(cfg, rs, puts, bounds, stop_before)
            tasks.append((t, p, tp_puts))
            skipped += tp_skipped
            undelivered[tp_key(t, p)] = never
        return list(fold_local(cfg, tasks, jvm_zone, existing)), skipped, undelivered

    results, skipped, undelivered = run(stop)
    results, failure = resolve_failure(results, null_kill, lambda k, only: run(k, only)[0], scheduled=puts is not None)
    return assemble(cfg, engine, results, skipped, undelivered, failure)


def expect_phases(phases: Sequence[tuple[SinkConfig, dict[str, int]]], records: Sequence[SinkRecord],
                  jvm_zone: str = "UTC") -> Expectation:
    """The outcome when the task restarts with another config mid-stream (a config update,
    spec C3). Each phase is (config, the committed offsets it restarts from, "topic-partition"
    -> offset; the first phase's are empty) and runs the model on the records from there: a new
    task re-reads from the committed offsets (R1.2) with fresh writers. A phase keeps the objects
    that lie wholly below the next phase's restart offset (those it committed before it stopped);
    the last phase decides what is committed and open in the end."""
    if not phases:
        raise ValueError("expect_phases needs at least one phase")
    if len(phases) == 1:
        return expect(phases[0][0], records, jvm_zone=jvm_zone)
    runs = []
    for cfg, starts in phases:
        mine = [r for r in records if r.offset >= starts.get(tp_key(r.topic, r.partition), 0)]
        runs.append(expect(cfg, mine, jvm_zone=jvm_zone))
    last = runs[-1]
    if any(r.constraints is not None for r in runs):
        # boundaries depend on the wall clock in some phase: only the last phase's constraints,
        # over every offset, can be stated
        return expect(phases[-1][0], records, jvm_zone=jvm_zone)
    out = Expectation(last.connector_version, last.engine, conditional_writes=last.conditional_writes)
    for i, run in enumerate(runs):
        nxt = phases[i + 1][1] if i + 1 < len(phases) else None

        def before_next(tp: str, offset: int) -> bool:
            return nxt is None or offset < nxt.get(tp, 0)

        kept = [o for o in run.objects if all(before_next(tp_key(o.topic, o.partition), x) for x in o.offsets)]
        out.objects += kept
        if nxt is not None:
            out.superseded += [o for o in run.objects if o not in kept]
        out.skipped += [s for s in run.skipped if before_next(tp_key(s.topic, s.partition), s.offset)]
        out.conflicts += run.conflicts
        out.overwritten += run.overwritten
        f = run.task_failure
        if out.task_failure is None and f is not None and (
                f.offset is None or f.topic is None or before_next(tp_key(f.topic, f.partition), f.offset)):
            out.task_failure = f
    for tp in {tp_key(r.topic, r.partition) for r in records}:
        restart = phases[-1][1].get(tp, 0)
        out.committed_offsets[tp] = max(last.committed_offsets.get(tp, restart), restart)
    out.open = list(last.open)
    out.undelivered = dict(last.undelivered)
    return out
