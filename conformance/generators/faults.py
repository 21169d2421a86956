"""Strategies for fault schedules and pacing, and which drawn faults can fire: a fault waits for
an upload or a commit, so one that the records never reach is dropped."""
from __future__ import annotations

from typing import Any, Sequence

from hypothesis import strategies as st

from adapters.s3.rules import S3_STATUSES, s3_answers
from conformance.inputs.scenario import FaultStep
from conformance.generators.testable import placed_offsets
from conformance.generators.records import T0


FAULT_KINDS = ("crash", "crash-mid-upload", "lost-commit", "s3-503", "s3-500", "s3-error-200", "s3-drop-response",
               "zombie", "rebalance", "config-update", "s3-status", "s3-connection")
# the operations an `s3-status` fault answers with an error: the sink's own calls, and the two it
# makes only after another answer (AbortMultipartUpload after a failed part, HeadObject after a
# 412 on a conditional Complete), each drawn with the rule that makes the sink call it
STATUS_OPERATIONS = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload", "AbortMultipartUpload",
                     "HeadObject")
# a rule that waits for another's answer is named after it with this suffix
FOLLOWS = "-then"
# How long a generated schedule waits for an S3 rule to fire before going on. The rules kept
# (that_can_fire) have uploads to fire on, so the bound is rarely reached; on a real Kafka Connect
# worker the first upload after a crash waits for the dead consumer's session to expire and the
# group to rebalance (seen: over 6 s, which left a zombie's rule unfired and the run unknown).
FIRE_WAIT_S = 30.0


@st.composite
def one_fault(draw: st.DrawFn, n_records: int, index: int) -> list[FaultStep]:
    """One fault of FAULT_KINDS as the steps that stage it, placed after a drawn number of
    records. `index` makes the names of its S3 rules unique within the schedule."""
    kind = draw(st.sampled_from(FAULT_KINDS))
    at = draw(st.integers(0, n_records))
    name = f"f{index}-{kind}"
    if kind == "crash":
        # settled first (files committed, an open tail held) or at once (mid-poll)
        return ([FaultStep(at, "quiet", {"seconds": 30})] if draw(st.booleans()) else []) + [FaultStep(at, "crash")]
    if kind == "crash-mid-upload":
        # the k-th UploadPart hangs; the sink dies while it waits; the hung request then goes
        # on (or not) after the restart has begun
        k = draw(st.integers(1, 3))
        later = draw(st.integers(min(at + 1, n_records), n_records))  # records to upload come first
        return [FaultStep(at, "s3", {"operation": "UploadPart", "action": "hang", "nth": k, "name": name}),
                FaultStep(later, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(later, "crash"), FaultStep(later, "release", {"rule": name})]
    if kind == "lost-commit":
        # CompleteMultipartUpload is applied but its answer never arrives; the sink dies before
        # it commits the offset, so the restart uploads the same file again
        later = draw(st.integers(min(at + 1, n_records), n_records))
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "drop-response",
                                     "nth": draw(st.integers(1, 2)), "name": name}),
                FaultStep(later, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(later, "crash")]
    if kind in ("s3-503", "s3-500"):
        op = draw(st.sampled_from(["CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload"]))
        return [FaultStep(at, "s3", {"operation": op, "action": "fail", "status": int(kind[3:]),
                                     "nth": draw(st.integers(1, 2)), "name": name})]
    if kind == "s3-error-200":
        # S3 answers Complete with 200 at once and the outcome later: the error may come after
        # the upload completed (forward) or instead of it
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "error-200", "status": 200,
                                     "nth": draw(st.integers(1, 2)), "forward": draw(st.booleans()), "name": name})]
    if kind == "s3-drop-response":
        # S3 applies the request and the answer never reaches the sink (a broken connection)
        op = draw(st.sampled_from(["UploadPart", "CompleteMultipartUpload", "CreateMultipartUpload"]))
        return [FaultStep(at, "s3", {"operation": op, "action": "drop-response", "nth": draw(st.integers(1, 2)),
                                     "name": name})]
    if kind == "zombie":
        # paused mid-complete past the poll interval, another member takes over, then the
        # paused one wakes up and finishes what it was doing; the records that close the file it
        # hangs in come between the rule and the pause
        hung = draw(st.integers(min(at + 1, n_records), n_records))
        later = draw(st.integers(hung, n_records))
        return [FaultStep(at, "s3", {"operation": "CompleteMultipartUpload", "action": "hang", "nth": 1,
                                     "name": name}),
                FaultStep(hung, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(hung, "pause"), FaultStep(later, "wait", {"seconds": 1.0}),
                FaultStep(later, "release", {"rule": name}), FaultStep(later, "resume")]
    if kind == "s3-status":
        return draw(status_fault(at, name))
    if kind == "s3-connection":
        # the connection fails mid-exchange: reset before S3 has the request, reset in the middle of
        # the answer to a request S3 applied, or an answer that stops mid-body for a while
        op = draw(st.sampled_from(S3_UPLOAD_OPERATIONS))
        nth = draw(st.integers(1, 2))
        if draw(st.booleans()):
            return [FaultStep(at, "s3", {"operation": op, "action": "reset", "forward": draw(st.booleans()),
                                         "nth": nth, "name": name})]
        later = draw(st.integers(min(at + 1, n_records), n_records))
        return [FaultStep(at, "s3", {"operation": op, "action": "stall", "nth": nth, "name": name}),
                FaultStep(later, "wait-fired", {"rule": name, "seconds": FIRE_WAIT_S}),
                FaultStep(later, "wait", {"seconds": 1.0}), FaultStep(later, "release", {"rule": name})]
    if kind == "rebalance":
        return [FaultStep(at, "rebalance")]
    # config-update: a new flush.size mid-stream (C3: boundaries move, so exactly-once is off)
    return [FaultStep(at, "update-config", {"config": {"flush.size": str(draw(st.integers(1, 8)))}})]


def status_params(status: int, code: str, operation: str, name: str, nth: int = 1, state: str = "") -> dict[str, Any]:
    """A `fail` rule answering `operation` with S3's `status` and `code` (and the state it implies:
    a NoSuchUpload on an upload call comes after the upload was aborted)."""
    if code == "NoSuchUpload" and operation in ("UploadPart", "CompleteMultipartUpload") and not state:
        state = "aborted"
    p: dict[str, Any] = {"operation": operation, "action": "fail", "status": status, "code": code, "nth": nth,
                         "name": name}
    if state:
        p["state"] = state
    return p


@st.composite
def status_fault(draw: st.DrawFn, at: int, name: str) -> list[FaultStep]:
    """One of S3's error answers (S3_STATUSES) on one of the sink's calls (STATUS_OPERATIONS) that
    S3 answers with it (adapters.s3.rules.s3_answers: no 412 on a call without a condition). A
    412 on Complete comes with the object there (S3 applied the request) or not; HeadObject is
    asked only after a 412 on a conditional Complete, and AbortMultipartUpload after a part
    failed, so their rules come after such an answer (named FOLLOWS)."""
    status, code = draw(st.sampled_from(S3_STATUSES))
    op = draw(st.sampled_from([o for o in STATUS_OPERATIONS if s3_answers(code, o)]))
    nth = draw(st.integers(1, 2))
    if op == "HeadObject":
        return [FaultStep(at, "s3", status_params(412, "PreconditionFailed", "CompleteMultipartUpload", name, nth,
                                                  "applied")),
                FaultStep(at, "s3", status_params(status, code, op, name + FOLLOWS))]
    if op == "AbortMultipartUpload":
        return [FaultStep(at, "s3", status_params(400, "IncompleteBody", "UploadPart", name, nth)),
                FaultStep(at, "s3", status_params(status, code, op, name + FOLLOWS))]
    state = draw(st.sampled_from(["applied", ""])) if code == "PreconditionFailed" and op == "CompleteMultipartUpload" else ""
    return [FaultStep(at, "s3", status_params(status, code, op, name, nth, state))]


@st.composite
def fault_schedules(draw: st.DrawFn, n_records: int, max_faults: int = 2) -> list[FaultStep]:
    """0–`max_faults` faults (FAULT_KINDS): a crash, a crash at the k-th UploadPart, a lost
    offset commit, 503/500 on an S3 call, a 200 carrying an error on Complete, a response
    dropped after S3 applied the request, a zombie, a rebalance, a config update, one of S3's
    error answers on one of the sink's calls (status_fault), a connection reset or an answer
    stalled mid-body. Shrinks toward
    fewer faults and earlier ones."""
    steps: list[FaultStep] = []
    for i in range(draw(st.integers(0, max_faults))):
        drawn = draw(one_fault(n_records, i))
        if any(may_stop_the_task(f) for f in drawn):
            # an answer a sink may die on (R7.3) stands alone: a fault after it would never fire,
            # and its run would have tested nothing of it
            return drawn
        steps += drawn
    return sorted(steps, key=lambda f: f.after)  # stable: a fault's own steps keep their order


# S3's error answers every S3 client retries (5xx, throttling, a request timeout, a clock skew)
RETRIED_STATUSES = {500, 502, 503, 504, 429}
RETRIED_CODES = {"RequestTimeout", "RequestTimeTooSkewed", "SlowDown"}


def may_stop_the_task(step: FaultStep) -> bool:
    """Whether a fault step is an S3 error answer some sink takes as fatal (anything but what
    every client retries: reference_impl.s3_errors says which release dies on which)."""
    p = step.params
    return (step.kind == "s3" and p.get("action") == "fail" and int(p.get("status") or 0) not in RETRIED_STATUSES
            and p.get("code") not in RETRIED_CODES)


def first_request_answered(step: FaultStep, cfg: dict[str, str], records: list[dict[str, Any]],
                           batch_starts: Sequence[int] = ()) -> int:
    """The first matching request (counted from when it is armed) an upload rule may answer. An
    answer a sink may die on (may_stop_the_task) that takes the very first one can kill the task
    before any object lands, and the run then tested nothing (conformance.judging.untested), so it
    answers a later one (after_an_upload). 1 for every other rule, and for a 412 S3 applied (its
    object is there). `batch_starts`: where the schedule's steps let the sink poll (uploads_after)."""
    if not may_stop_the_task(step) or step.params.get("state") == "applied":
        return 1
    return after_an_upload(step, cfg, records, batch_starts)


def after_an_upload(step: FaultStep, cfg: dict[str, str], records: list[dict[str, Any]],
                    batch_starts: Sequence[int] = ()) -> int:
    """The first matching request (counted from when the rule is armed) that comes after a value
    object landed: the Create or Complete after the first value object's upload (its keys and
    headers files follow it, R11.1), or the UploadPart after its parts (a record larger than
    s3.part.size takes more than one). The uploads that may come before it (a tombstone's keys
    and headers files under behavior.on.null.values=write, which have no value object:
    uploads_before_a_value_object) come first: --profile thorough drew a 409 on the second Create
    after a tombstone, which took the tombstone's headers file, and the task died with no value
    object in the bucket."""
    ahead = uploads_before_a_value_object(cfg, records, min(step.after, len(records)), batch_starts)
    if step.params.get("operation") != "UploadPart":
        return ahead + 2
    part = int(cfg.get("s3.part.size", "26214400") or 26214400)
    largest = max((len(str(r.get("value"))) for r in records), default=0)
    return ahead + 2 + largest // part


# pauses between records where the wall clock decides boundaries: a put then comes at a time no
# boundary is aligned with (the simulation starts 250 ms past a second), and a file opens there
PACING_S = (0.35, 0.8, 1.3, 2.15)


def wall_clock_config(cfg: dict[str, str]) -> bool:
    """Whether the wall clock decides a config's boundaries (scheduled rotation, the Wallclock
    extractor of a time-based partitioner)."""
    time_based = cfg.get("partitioner.class", "").rsplit(".", 1)[-1] in (
        "TimeBasedPartitioner", "HourlyPartitioner", "DailyPartitioner")
    return (int(cfg.get("rotate.schedule.interval.ms", "-1") or -1) > 0
            or (time_based and cfg.get("timestamp.extractor", "Wallclock") == "Wallclock"))


@st.composite
def pacing(draw: st.DrawFn, cfg: dict[str, str], n_records: int) -> list[FaultStep]:
    """0–3 `wait` steps between records of a wall-clock config, so its puts spread over
    unaligned times; under scheduled rotation, one time in three, short gaps between all the
    records (a steady stream across an interval where enough records come), and a last wait past
    a whole interval, so a boundary commits what is open before the run ends (and an S3 rule on
    that upload fires). None elsewhere (they would only slow a real run)."""
    if not wall_clock_config(cfg):
        return []
    interval_ms = int(cfg.get("rotate.schedule.interval.ms", "-1") or -1)
    steps = [FaultStep(draw(st.integers(1, max(1, n_records))), "wait", {"seconds": draw(st.sampled_from(PACING_S))})
             for _ in range(draw(st.integers(0, 3)))]
    if interval_ms > 0 and n_records > 2 and draw(st.integers(0, 2)) == 2:  # shrinks to none
        # a steady stream across a whole interval: records keep coming in short gaps, so a put
        # holding records meets a boundary with a file open before an empty put (one per offset
        # flush) rotates it (11.0.1 dies there without a bare time-based partitioner: known bug
        # confluent-scheduled-rotation-npe; a single pause mostly ends after an empty put)
        gap = round(max(0.25, min(1.0, (interval_ms / 1000 + 0.5) / (n_records - 1))), 2)
        steps += [FaultStep(i, "wait", {"seconds": gap}) for i in range(1, n_records)]
    if interval_ms > 0:
        steps.append(FaultStep(n_records, "wait", {"seconds": interval_ms / 1000 + 0.5}))
    return steps


S3_UPLOAD_OPERATIONS = ("CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload")


def uploads_per_file(config: Any) -> int:
    """The uploads one committed file makes: its value object and its keys and headers siblings."""
    return 1 + (config.store_kafka_keys and 1) + (config.store_kafka_headers and 1)


def reaches_writer(config: Any, record: dict[str, Any]) -> bool:
    """Whether a record reaches its topic-partition's writer (a null value only under `write`)."""
    return record.get("value") is not None or config.behavior_on_null_values == "write"


def uploads_after(cfg: dict[str, str], records: list[dict[str, Any]], batch_starts: Sequence[int] = ()) -> list[int]:
    """For each position i in the stream (0..n), how many multipart uploads the model says the
    sink makes when records produced from position i on arrive (each value/keys/headers file is
    one upload, made when the record whose processing commits it arrives); [] where the model
    rejects the config. Where the wall clock decides boundaries (Wallclock, scheduled rotation) it counts
    what the records close by themselves (one put: flush.size and the other record-driven
    rules), and under scheduled rotation also one file per topic-partition that still gets a
    record from i on (a boundary commits what is pending) where the task does not die: a lower
    bound either way."""
    return _uploads(cfg, records, batch_starts)[0]


def uploads_before_a_value_object(cfg: dict[str, str], records: list[dict[str, Any]], start: int,
                                  batch_starts: Sequence[int] = ()) -> int:
    """How many of the uploads the records from position `start` on make may come before the
    first value object among them lands: the files closed by earlier records (a tombstone's under
    behavior.on.null.values=write is a keys and a headers file with no value object, R12.3), and
    the files without a value object that the same record closes (a rotation commits all of a
    topic-partition's open files, R3.1, in no order a reader of the bucket can count on; a value
    object's own keys and headers files follow it, R11.1). 0 where the model counts no value
    object among them (its one put sees no boundary of the wall clock): nothing later to wait for."""
    files = [(t, value, n) for t, value, n in _uploads(cfg, records, batch_starts)[1] if t >= start]
    first = min((t for t, value, _ in files if value), default=None)
    if first is None:
        return 0
    return sum(n for t, value, n in files if t < first or (t == first and not value))


def _uploads(cfg: dict[str, str], records: list[dict[str, Any]],
             batch_starts: Sequence[int]) -> tuple[list[int], list[tuple[int, bool, int]]]:
    """uploads_after's counts, and the files they count: (position of the record whose processing
    commits the file, whether it has a value object, its uploads) for each file the model is sure
    of that is committed before the task dies."""
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.wire import sink_records as to_sink_records
    from reference_impl.config import ConfigError
    from reference_impl.engine.model import PutSpec, expect

    try:
        placed = placed_offsets(records)
        config = sink_config(cfg)
        sink_recs = to_sink_records(cfg, records, placed)
        exp = expect(config, sink_recs)
        wallclock = exp.constraints is not None
        if wallclock:
            exp = expect(config, sink_recs, [PutSpec(T0, len(records))])
    except (ConfigError, ValueError):
        return [], []
    per_file = uploads_per_file(config)
    index = {(r["topic"], int(r["partition"]), off): i for i, (r, off) in enumerate(zip(records, placed))}
    written = [reaches_writer(config, r) for r in records]

    def trigger(o: Any) -> int:
        """The position of the record whose processing commits `o` (R3.1: a rotation commits
        every open file of the topic-partition at once): the last record written for a
        flush.size rotation, else the next record that reaches the writer."""
        if o.rotation.startswith("R3.8"):
            return index[(o.topic, o.partition, o.committed_offset - 1)]
        later = [i for (t, p, off), i in index.items()
                 if (t, p) == (o.topic, o.partition) and off >= o.committed_offset and written[i]]
        return min(later, default=len(records))

    dies = exp.task_failure
    alive = len(records) if dies is None or dies.offset is None else next(
        (i for i, (r, off) in enumerate(zip(records, placed))
         if (r["topic"], int(r["partition"]), off) == (dies.topic, dies.partition, dies.offset)), len(records))
    # the batch the task dies in (`batch_starts`: where the schedule's steps cut the stream):
    # no later put comes to commit what it holds on a scheduled boundary
    # the model names one failing writer (R1.4 shuffles them): the task dies in the first batch
    # holding any writer's failing record
    first_death = min([alive] + [first_failure(config, [(i, sr) for i, sr in enumerate(sink_recs)
                                                        if (sr.topic, sr.partition) == tp], index, records)
                                 for tp in {(sr.topic, sr.partition) for sr in sink_recs}] if dies is not None else [alive])
    dying_batch = alive if dies is None else max((b for b in batch_starts if b <= first_death), default=0)
    if dies is not None and dies.rule in ("R12.1", "R12.2"):
        # a fatal null fails its put before any writer runs (R1.4): its batch is never written
        alive = dying_batch
    # a file of the put the task dies in may never be uploaded
    files = [(trigger(o), o.value_object, (1 if o.value_object else 0) + len(o.sibling_keys))
             for o in exp.objects if o.certain]
    files = [f for f in files if f[0] < alive]
    counts = [sum(n for t, _, n in files if t >= i) for i in range(len(records) + 1)]
    # a boundary commits what is pending before the batch the task dies in (the put that kills
    # it may come before any boundary of its own batch)
    if wallclock and config.rotate_schedule_interval_ms > 0:
        for i in range(len(records) + 1):
            pending = {(r["topic"], r["partition"]) for r in records[i:dying_batch] if r.get("value") is not None}
            counts[i] = max(counts[i], len(pending) * per_file)
    return counts, files


def first_failure(config: Any, tp_records: list[tuple[int, Any]], index: dict, records: list[dict[str, Any]]) -> int:
    """The stream position of the record one topic-partition's writer dies at, alone (the model
    on its records in one put), or past the end."""
    from reference_impl.engine.model import PutSpec, expect

    f = expect(config, [r for _, r in tp_records], [PutSpec(T0, len(tp_records))]).task_failure
    if f is None or f.offset is None:
        return len(records)
    return index.get((f.topic, f.partition, f.offset), len(records))


def dies_at(cfg: dict[str, str], records: list[dict[str, Any]]) -> int | None:
    """The stream position of the first record that kills the task (a fatal null, a writer's
    own failure: each writer alone, as R1.4 shuffles them), or None."""
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.wire import sink_records as to_sink_records
    from reference_impl.config import ConfigError
    from reference_impl.engine.model import PutSpec, expect

    try:
        placed = placed_offsets(records)
        config = sink_config(cfg)
        sink_recs = to_sink_records(cfg, records, placed)
        dies = expect(config, sink_recs, [PutSpec(T0, len(records))]).task_failure
    except (ConfigError, ValueError):
        return None
    if dies is None or dies.offset is None:
        return None
    index = {(r["topic"], int(r["partition"]), off): i for i, (r, off) in enumerate(zip(records, placed))}
    return min([index.get((dies.topic, dies.partition, dies.offset), len(records))]
               + [first_failure(config, [(i, sr) for i, sr in enumerate(sink_recs) if (sr.topic, sr.partition) == tp],
                                index, records) for tp in {(sr.topic, sr.partition) for sr in sink_recs}])


# steps after which the sink starts over from the committed offsets
RESTARTS = ("crash", "restart", "restart-task", "restart-connector", "kill-worker", "rebalance", "update-config")
POLLS = ("quiet", "wait", "wait-fired", "pause")


def dying_restart(cfg: dict[str, str], records: list[dict[str, Any]], faults: list[FaultStep]) -> int | None:
    """The index of the first restart whose first put reads the record that kills the task: it
    re-reads from the committed offsets everything produced until it first polls (the next step
    that lets it), dies before any write (R1.4), and nothing is uploaded after it."""
    if not any(f.kind in RESTARTS for f in faults):
        return None  # no restart: the model's run to the record that kills the task is not needed
    death = dies_at(cfg, records)
    if death is None:
        return None
    n = len(records)
    for j, f in enumerate(faults):
        if f.kind in RESTARTS:
            polled = next((min(g.after, n) for g in faults[j + 1:] if g.kind in POLLS), n)
            if death < polled:
                return j
    return None


def before_restart(faults: list[FaultStep], i: int, dead: int, n: int) -> int | None:
    """Where the uploads the rule `faults[i]` can fire on end when the restart `faults[dead]`
    dies at once: the records the sink read at the last step before it that lets it poll (or
    at the rule's own wait before it), and before a hang that holds the sink at the restart (a
    crash mid-upload's); None: no upload comes for it (armed after the restart, or nothing
    lets the sink read between)."""
    if i > dead:
        return None
    names = {str(f.params.get("name")): j for j, f in enumerate(faults) if f.kind == "s3"}
    waited = {str(f.params.get("rule")): j for j, f in enumerate(faults) if f.kind == "wait-fired"}
    released = {str(f.params.get("rule")): j for j, f in enumerate(faults) if f.kind == "release"}
    # a hang that fired before the restart and is released after it parks the sink from its firing on
    holds = [j for name, j in names.items() if faults[j].params.get("action") == "hang" and j != i
             and waited.get(name, len(faults)) < dead < released.get(name, len(faults))]
    if any(j < i for j in holds):
        return None
    bound = min([dead] + holds)
    own = waited.get(str(faults[i].params.get("name")))
    if own is not None and own < bound:
        return min(faults[own].after, n)
    polls = [min(f.after, n) for f in faults[i + 1:bound] if f.kind in POLLS]
    return polls[-1] if polls else None


def clock_free_uploads(cfg: dict[str, str], records: list[dict[str, Any]], start: int, end: int) -> int | None:
    """The uploads the records produced in [start, end) close by flush.size alone where the wall
    clock moves boundaries (the Wallclock extractor): a time rotation before `start` may
    have left a topic-partition's open file at any count (R3.1: every rotation starts a new
    count), so only floor(m / flush.size) of its m records there are sure to close a file, each
    with its keys and headers siblings. None where the records alone decide every boundary (the
    model's count is exact there)."""
    from conformance.inputs.connector_config import sink_config
    from reference_impl.config import ConfigError

    try:
        config = sink_config(cfg)
    except (ConfigError, ValueError):
        return None
    if not config.wallclock_dependent or config.rotate_schedule_interval_ms > 0 or config.flush_size <= 0:
        return None  # a schedule's boundaries commit what is pending: uploads_after counts them
    written: dict[tuple[str, int], int] = {}
    for r in records[start:end]:
        if reaches_writer(config, r):
            tp = (r["topic"], int(r["partition"]))
            written[tp] = written.get(tp, 0) + 1
    return sum(m // config.flush_size for m in written.values()) * uploads_per_file(config)


def answers_a_condition(step: FaultStep) -> bool:
    """A 412 PreconditionFailed on CompleteMultipartUpload: S3 answers it only to a request that
    carries a condition (If-None-Match)."""
    p = step.params
    return (step.kind == "s3" and p.get("operation") == "CompleteMultipartUpload"
            and (int(p.get("status") or 0) == 412 or p.get("code") == "PreconditionFailed"))


def without_unconditional_412(cfg: dict[str, str], faults: list[FaultStep]) -> list[FaultStep]:
    """The schedule without 412s on a Complete the config does not make conditional (R8.1:
    scheduled rotation, conditional writes on, no keys or headers stored), and without the
    answers that follow them (HeadObject after the 412): S3 never answers an unconditional
    request 412, so such a run is not one production can have."""
    if not any(answers_a_condition(f) for f in faults) or conditional_complete(cfg):
        return faults
    gone = {str(f.params.get("name")) for f in faults if answers_a_condition(f)}
    gone |= {g + FOLLOWS for g in gone}
    return [f for f in faults if not (f.kind == "s3" and str(f.params.get("name")) in gone)
            and not (f.kind in ("wait-fired", "release") and str(f.params.get("rule")) in gone)]


def that_can_fire(cfg: dict[str, str], records: list[dict[str, Any]], faults: list[FaultStep]) -> list[FaultStep]:
    """The schedule without S3 rules that cannot fire: a rule on an upload request armed after
    `after` records waits for its `nth` matching request, and the model says how many uploads
    come after that point (and before the step that waits for the rule, if one does). Such a
    rule is made to wait for the last of them, or, where none comes, dropped with the steps that
    wait for or release it (a crash it staged stays); an answer a sink may die on waits for a
    later request than the first (first_request_answered), or is dropped where none comes. A
    schedule whose rule never fires, or fires before any object could land, would end `unknown`
    for a reason of the generator's making."""
    if not any(f.kind == "s3" for f in faults):
        return faults  # no rule waits for a request: no need for the model's count of uploads
    faults = without_unconditional_412(cfg, faults)
    # where the sink has read what came before: only a step that lets it poll (a fault that
    # restarts it at once may come before it read anything, its successor reads it all again)
    cuts = sorted({min(f.after, len(records)) for f in faults if f.kind in POLLS})
    counts = uploads_after(cfg, records, cuts)
    updated = {**cfg, **{str(k): str(v) for f in faults if f.kind == "update-config"
                         for k, v in dict(f.params.get("config", {})).items()}}
    if counts and updated != cfg:
        # the records before an update may be read only after it (no poll came between), and
        # are then written under the new config: count what both configs upload
        after_update = uploads_after(updated, records, cuts)
        counts = [min(a, b) for a, b in zip(counts, after_update)] if after_update else counts
    if not counts:
        return faults
    n = len(records)
    # a rule a step waits for must fire on uploads of records produced before that wait
    waits = {str(f.params.get("rule")): min(f.after, n) for f in faults if f.kind == "wait-fired"}
    dropped: set[str] = set()
    # a hang parks the sink: a second hang armed before the first is released waits for
    # requests that never come while it is parked
    releases = {str(f.params.get("rule")): i for i, f in enumerate(faults) if f.kind == "release"}
    hung_until = -1
    # after a restart that dies at once only the uploads before it come (before_restart)
    dead = dying_restart(cfg, records, faults)
    out = []
    for i, f in enumerate(faults):
        until = waits.get(str(f.params.get("name")))
        if dead is not None and f.kind == "s3" and f.params.get("operation") in S3_UPLOAD_OPERATIONS:
            until = before_restart(faults, i, dead, n)
            if until is None:
                dropped.add(str(f.params.get("name")))
                continue
        if f.kind == "s3" and f.params.get("action") in ("hang", "stall"):
            if i < hung_until:
                dropped.add(str(f.params.get("name")))
                continue
            hung_until = releases.get(str(f.params.get("name")), len(faults))
        if f.kind == "s3" and f.params.get("operation") in S3_UPLOAD_OPERATIONS:
            name = str(f.params.get("name"))
            available = counts[min(f.after, n)] - (counts[until] if until is not None else 0)
            # the model's boundaries hold for one put at one instant; the clock may have moved them
            sure = [u for c in ([cfg] if updated == cfg else [cfg, updated])
                    if (u := clock_free_uploads(c, records, min(f.after, n), n if until is None else until)) is not None]
            if sure:
                available = min([available] + sure)
            least = first_request_answered(f, cfg, records, cuts)
            if dead is not None and i < dead and f.params.get("action") in ("hang", "stall") \
                    and releases.get(name, len(faults)) > dead:
                # a sink parked until a restart that dies at once writes nothing after it: an
                # object lands before the rule parks it, or the run tested nothing
                least = max(least, after_an_upload(f, cfg, records, cuts))
            if available < least:
                dropped.add(str(f.params.get("name")))
                continue
            if int(f.params.get("nth", 1)) < least:
                f = FaultStep(f.after, f.kind, {**f.params, "nth": least})
            if int(f.params.get("nth", 1)) > available:
                f = FaultStep(f.after, f.kind, {**f.params, "nth": available})
        elif f.kind in ("wait-fired", "release") and str(f.params.get("rule")) in dropped:
            continue
        out.append(f)
    if any(n.endswith("-zombie") for n in dropped):  # a zombie without its hung Complete is no zombie
        out = [f for f in out if f.kind not in ("pause", "resume")]
    # a rule that waits for another's answer goes with it (HeadObject after a 412 where the Complete
    # is not conditional went with its 412 first: without_unconditional_412)
    return [f for f in out if not (f.kind == "s3" and str(f.params.get("name", "")).endswith(FOLLOWS)
                                   and str(f.params["name"])[: -len(FOLLOWS)] in dropped)]


def conditional_complete(cfg: dict[str, str]) -> bool:
    """R8.1: whether CompleteMultipartUpload carries If-None-Match under this config."""
    from conformance.inputs.connector_config import sink_config
    from reference_impl.config import ConfigError

    try:
        return bool(sink_config(cfg).conditional_writes_active)
    except (ConfigError, ValueError):
        return False
