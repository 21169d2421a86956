"""conformance.playing.stack_sharing.stack_schedule: how runs share a warm stack. Plain functions stand in for
runs (this tests the schedule, not a stack): shared items at once, the others one at a time per
stack, a spare stack taking alone items from the start on a thread that outlives its runs."""
from __future__ import annotations

import contextlib
import threading
import time

from conformance.playing.stack_sharing import StackLanes, stack_schedule


class Log:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[str, str, float, float]] = []  # item, where, start, end
        self.local = threading.local()
        self.spare_threads: list[str] = []

    def spare(self, fail: bool = False):
        @contextlib.contextmanager
        def cm():
            with self.lock:
                self.spare_threads.append(threading.current_thread().name)
            if fail:
                raise RuntimeError("no second stack here")
            self.local.on = "spare"
            try:
                yield
            finally:
                self.local.on = None
                with self.lock:
                    self.spare_threads.append(threading.current_thread().name)
        return cm

    def run(self, item: str) -> str:
        where = getattr(self.local, "on", None) or "main"
        t = time.monotonic()
        if item == "boom":
            raise ValueError("a run that raises")
        time.sleep(0.15)
        with self.lock:
            self.spans.append((item, where, t, time.monotonic()))
        return f"{item}@{where}"


def _overlap(a, b) -> bool:
    return a[2] < b[3] and b[2] < a[3]


ITEMS = ["s1", "a1", "s2", "a2", "s3", "a3", "boom", "a4"]


def alone(item: str) -> bool:
    return item.startswith("a")


def test_results_in_order_and_an_exception_is_a_result():
    log = Log()
    out = stack_schedule(ITEMS, alone, log.run, workers=3)
    assert [o if isinstance(o, str) else type(o).__name__ for o in out] == [
        "s1@main", "a1@main", "s2@main", "a2@main", "s3@main", "a3@main", "ValueError", "a4@main"]
    runs_alone = [s for s in log.spans if alone(s[0])]
    assert not any(_overlap(x, y) for x in runs_alone for y in log.spans if x is not y)


def test_a_spare_stack_runs_alone_items_while_the_shared_ones_run():
    log = Log()
    out = stack_schedule(ITEMS, alone, log.run, workers=3, spare=log.spare())
    assert [o.split("@")[0] if isinstance(o, str) else "error" for o in out] == [
        "s1", "a1", "s2", "a2", "s3", "a3", "error", "a4"]
    on_spare = [s for s in log.spans if s[1] == "spare"]
    assert on_spare and all(alone(s[0]) for s in on_spare)
    # entered and left on one thread of its own, which ran the spare's items
    assert len(log.spare_threads) == 2 and len(set(log.spare_threads)) == 1
    assert log.spare_threads[0] != threading.current_thread().name
    # an alone item on the spare ran at the same time as shared ones; two on one stack never overlap
    shared = [s for s in log.spans if not alone(s[0])]
    assert any(_overlap(a, s) for a in on_spare for s in shared)
    for where in ("main", "spare"):
        mine = [s for s in log.spans if alone(s[0]) and s[1] == where]
        assert not any(_overlap(x, y) for x in mine for y in mine if x is not y)


def test_a_spare_that_cannot_start_leaves_its_items_to_the_callers_stack():
    log = Log()
    out = stack_schedule(ITEMS, alone, log.run, workers=3, spare=log.spare(fail=True))
    assert all(o.endswith("@main") for o in out if isinstance(o, str)) and len(log.spans) == 7


def test_no_spare_for_a_single_alone_item():
    log = Log()
    stack_schedule(["s1", "a1", "s2"], alone, log.run, workers=2, spare=log.spare())
    assert log.spare_threads == [] and {s[1] for s in log.spans} == {"main"}


def test_spare_stack_gives_each_thread_its_own_and_stops_it():
    from conformance.playing.stack_sharing import SpareStack

    class FakeStack:
        def __init__(self) -> None:
            self.stopped = False
            self.thread = threading.current_thread().name

        def stop(self) -> None:
            self.stopped = True

    made: list[FakeStack] = []
    spare = SpareStack(lambda: made.append(FakeStack()) or made[-1])
    seen: list[tuple[str, object]] = []

    def run(item: str) -> str:
        seen.append((item, spare.stack("main")))
        time.sleep(0.05)
        return item

    out = stack_schedule(["a1", "a2", "a3", "s1"], alone, run, workers=1, spare=spare.spare)
    assert out == ["a1", "a2", "a3", "s1"]
    assert len(made) == 1 and made[0].stopped and made[0].thread != threading.current_thread().name
    assert {where for item, where in seen if item == "s1"} == {"main"}
    assert any(where is made[0] for _, where in seen) and spare.stack("main") == "main"


def test_two_spares_run_three_alone_items_at_once_and_no_more_spares_than_items_left():
    log = Log()
    items = ["a1", "a2", "a3", "a4", "s1"]
    stack_schedule(items, alone, log.run, workers=1, spare=log.spare(), spares=2)
    assert len(set(log.spare_threads)) == 2  # each entered and left on a thread of its own
    runs_alone = [s for s in log.spans if alone(s[0])]
    assert max(sum(1 for y in runs_alone if _overlap(x, y)) for x in runs_alone) >= 2
    few = Log()
    stack_schedule(["a1", "a2", "s1"], alone, few.run, workers=1, spare=few.spare(), spares=5)
    assert len(set(few.spare_threads)) == 1


def _taken(futures):
    out = []
    for f in futures:
        try:
            out.append(f.result())
        except ValueError:
            out.append("error")
    return out


def test_lanes_run_shared_items_at_once_and_alone_ones_one_by_one_per_stack():
    """StackLanes: runs handed over one at a time (a batch of generated scenarios drawn ahead),
    each future giving its run's result. The runs alone go on the spare (entered on its lane's
    first run and left at close, both on that lane's thread) and on the session's stack, there
    only while no shared run is going: never beside another run on the same stack."""
    log = Log()
    lanes = StackLanes(log.run, alone, workers=3, spare=log.spare())
    out = _taken([lanes.submit(item) for item in ITEMS])
    lanes.close()
    assert [o.split("@")[0] for o in out] == ["s1", "a1", "s2", "a2", "s3", "a3", "error", "a4"]
    assert all(o.endswith("@main") for o in out if o.startswith("s"))
    assert len(log.spare_threads) == 2 and len(set(log.spare_threads)) == 1
    assert log.spare_threads[0] != threading.current_thread().name
    on_spare = [s for s in log.spans if s[1] == "spare"]
    on_main = [s for s in log.spans if s[1] == "main"]
    assert on_spare and all(alone(s[0]) for s in on_spare)
    assert not any(_overlap(x, y) for x in on_spare for y in on_spare if x is not y)
    alone_on_main = [s for s in on_main if alone(s[0])]
    assert not any(_overlap(a, y) for a in alone_on_main for y in on_main if a is not y)
    shared = [s for s in on_main if not alone(s[0])]
    assert any(_overlap(x, y) for x in shared for y in shared if x is not y)
    assert any(_overlap(a, s) for a in on_spare for s in shared)


def test_lanes_with_many_runs_alone_use_both_stacks_at_once():
    log = Log()
    lanes = StackLanes(log.run, alone, workers=3, spare=log.spare())
    out = _taken([lanes.submit(f"a{i}") for i in range(6)])
    lanes.close()
    assert {o.split("@")[1] for o in out} == {"main", "spare"}
    spans = {w: [s for s in log.spans if s[1] == w] for w in ("main", "spare")}
    assert any(_overlap(x, y) for x in spans["main"] for y in spans["spare"])


def test_lanes_leave_the_runs_alone_to_the_session_stack_when_no_spare_starts():
    log = Log()
    lanes = StackLanes(log.run, alone, workers=3, spare=log.spare(fail=True))
    futures = [lanes.submit(item) for item in ("a1", "s1", "s2", "a2")]
    out = _taken(futures)
    lanes.close()
    assert out == ["a1@main", "s1@main", "s2@main", "a2@main"]
    for a in [s for s in log.spans if alone(s[0])]:
        assert not any(_overlap(a, y) for y in log.spans if y is not a)


def test_a_session_plays_a_kafka_connect_targets_submitted_runs_on_lanes_unless_it_has_one_process(tmp_path):
    """Session.pool_for: the lanes of the target's warm stacks for a Kafka Connect target (its
    generated runs, drawn a batch ahead), started once; SINKCHECK_RUN_PROCESSES=1 (one process)
    plays them one at a time. Nothing is started until a run needs a stack."""
    from conformance.playing.session import Session

    spec = "kafka-connect:confluent@12.1.9"
    sess = Session(tmp_path, None, None, [], processes=2)
    lanes = sess.pool_for(spec)
    assert isinstance(lanes, StackLanes) and sess.pool_for(spec) is lanes
    sess.close()
    assert not any(t.is_alive() for t in lanes._lanes) and sess.stacks == {}
    assert Session(tmp_path, None, None, [], processes=1).pool_for(spec) is None
