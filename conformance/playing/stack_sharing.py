"""How runs share a warm Kafka Connect stack: which scenarios need a stack to themselves (their
faults touch the worker, not only their own connector), the renaming that gives a scenario topics
of its own on a broker others use at the same time, and the schedule that plays the shared ones
a few at a time while spare stacks take the others one by one."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable

from conformance.inputs.scenario import Scenario

# faults that touch the whole Kafka Connect worker (or the group of workers), not only the run's
# own connector: a run with one of them has a shared stack to itself
WORKER_FAULTS = ("crash", "pause", "resume", "rebalance", "add-worker", "remove-worker")
# runs at once on one warm stack, by default (two cores: the worker is the bottleneck)
STACK_WORKERS = 3
# spare stacks for the runs that need a stack alone (sinkcheck run and gate); on two cores a
# second spare was slower (Confluent's 13 named fault scenarios: 141.6 s with one, 150.2 s with two)
SPARE_STACKS = 1


def needs_stack_alone(scenario: Scenario) -> bool:
    return any(f.kind in WORKER_FAULTS for f in scenario.faults) or "topics.regex" in scenario.connector


def on_shared_stack(scenario: Scenario, tag: str) -> Scenario:
    """The scenario with topics of its own on a broker that other runs use at the same time:
    `tag` appended to each topic name (its topics, its records, a `topics` property, and a
    `topics.regex` property: it then matches what it matched with the tag after it)."""
    rename = {t: f"{t}{tag}" for t in scenario.topics}
    connector = dict(scenario.connector)
    if "topics" in connector:
        connector["topics"] = ",".join(rename.get(t.strip(), t.strip()) for t in connector["topics"].split(","))
    if str(connector.get("topics.regex", "")).strip():
        connector["topics.regex"] = f"(?:{connector['topics.regex'].strip()}){re.escape(tag)}"
    return replace(scenario, connector=connector, topics={rename[t]: n for t, n in scenario.topics.items()},
                   records=[{**r, "topic": rename.get(r["topic"], r["topic"])} for r in scenario.records])


class SpareStack:
    """stack_schedule's `spare` for callers holding one stack: `spare` starts a second stack
    with `start()` on entry (on the spare's own thread, which outlives every run on it) and
    stops it on exit; `stack(default)` is the calling thread's spare, else `default`."""

    def __init__(self, start: Callable[[], Any]):
        import threading

        self._start = start
        self._local = threading.local()

    def spare(self) -> Any:
        import contextlib

        @contextlib.contextmanager
        def entered() -> Any:
            self._local.stack = self._start()
            try:
                yield
            finally:
                stack, self._local.stack = self._local.stack, None
                stack.stop()
        return entered()

    def stack(self, default: Any) -> Any:
        return getattr(self._local, "stack", None) or default


def stack_schedule(items: list[Any], alone: Callable[[Any], bool], run: Callable[[Any], Any],
                   workers: int = STACK_WORKERS, spare: Callable[[], Any] | None = None,
                   spares: int = 1) -> list[Any]:
    """`run(item)` for each item, in the order given back: items that touch only their own
    connector `workers` at a time, and the others one by one (in the caller's thread). An
    exception a run raises is its result. The shared items run on pool threads that end with
    the call, so they must not start processes (sinkcheck's die with the thread that started
    them: start the stack before); the others may.

    `spare`: a context manager factory under which `run` uses a second stack of its own (it
    starts it lazily and stops it on exit). With it and two or more items to run alone, a
    thread of its own (outliving every run on it, so that a crash's restarted worker lives on)
    takes alone items from the start, while the shared ones run, and the caller's thread joins
    in once they are done: two items alone at once, each on a stack nothing else uses. `spares`
    such threads (each entering `spare()` for a stack of its own), fewer where fewer alone items
    are left for them."""
    import collections
    import concurrent.futures
    import threading

    def guarded(item: Any) -> Any:
        try:
            return run(item)
        except Exception as e:  # noqa: BLE001 - the caller decides
            return e

    out: dict[int, Any] = {}
    shared = [i for i, item in enumerate(items) if not alone(item)]
    queue = collections.deque(i for i in range(len(items)) if i not in set(shared))
    take = threading.Lock()

    def drain() -> None:
        while True:
            with take:
                if not queue:
                    return
                i = queue.popleft()
            out[i] = guarded(items[i])

    def on_spare() -> None:
        try:
            with spare():  # type: ignore[misc]
                drain()
        except Exception:  # noqa: BLE001 - a spare stack that fails leaves its items to the caller's
            pass

    helpers = [threading.Thread(target=on_spare, name=f"sinkcheck-spare-stack-{n}", daemon=True)
               for n in range(min(spares, len(queue) - 1) if spare is not None else 0)]
    for helper in helpers:
        helper.start()
    with concurrent.futures.ThreadPoolExecutor(max(1, workers)) as pool:
        try:
            for i, r in zip(shared, pool.map(lambda i: guarded(items[i]), shared)):
                out[i] = r
        except BaseException:  # a signal: the runs under way finish, none starts
            pool.shutdown(wait=False, cancel_futures=True)
            with take:
                queue.clear()
            raise
    try:
        drain()
    except BaseException:
        with take:
            queue.clear()  # the spare stacks' threads take none after the one under way
        raise
    for helper in helpers:
        helper.join()
    return [out[i] for i in range(len(items))]


class StackLanes:
    """Runs handed over one at a time (Session.submit: a batch of generated scenarios drawn
    ahead), played on warm stacks as stack_schedule plays a list: those that touch only their
    own connector `workers` at a time on the session's stack; those that need a stack alone one
    by one on each of two lanes: a spare stack (`spare()`, entered on its lane's first run and
    left at `close`; one that cannot start leaves its runs to the other lane), and the session's
    stack while no shared run is going or waiting (the shared ones wait for it). Each lane of
    runs alone is a thread that lasts as long as the lanes do, so that a crashed worker's
    restart lives on. `submit` gives a future of `run(item)`; `processes` is how many runs go
    at once."""

    def __init__(self, run: Callable[[Any], Any], alone: Callable[[Any], bool], workers: int = STACK_WORKERS,
                 spare: Callable[[], Any] | None = None):
        import collections
        import concurrent.futures
        import threading

        self.processes = workers + 1
        self._run, self._alone, self._spare_factory = run, alone, spare
        self._shared = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="sinkcheck-stack-run")
        self._cv = threading.Condition()
        self._shared_waiting = 0  # shared runs submitted and not started
        self._shared_going = 0
        self._stack_alone = False  # a run alone holds the session's stack
        self._queue: collections.deque[tuple[Any, concurrent.futures.Future[Any]]] = collections.deque()
        self._closing = False
        self._pending: set[Any] = set()
        self._lanes = [threading.Thread(target=self._lane, args=(on_spare,), daemon=True,
                                        name=f"sinkcheck-{'spare' if on_spare else 'session'}-stack-alone")
                       for on_spare in ((True, False) if spare is not None else (False,))]
        for lane in self._lanes:
            lane.start()

    def submit(self, item: Any) -> Any:
        import concurrent.futures

        if self._alone(item):
            future: concurrent.futures.Future[Any] = concurrent.futures.Future()
            with self._cv:
                self._queue.append((item, future))
                self._cv.notify_all()
        else:
            with self._cv:
                self._shared_waiting += 1
            future = self._shared.submit(self._shared_run, item)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future

    def _shared_run(self, item: Any) -> Any:
        with self._cv:
            self._cv.wait_for(lambda: not self._stack_alone)
            self._shared_waiting -= 1
            self._shared_going += 1
        try:
            return self._run(item)
        finally:
            with self._cv:
                self._shared_going -= 1
                self._cv.notify_all()

    def _lane(self, on_spare: bool) -> None:
        import contextlib

        with contextlib.ExitStack() as entered:
            if on_spare:
                with self._cv:  # the spare starts with the first run that needs it
                    self._cv.wait_for(lambda: self._queue or self._closing)
                    if self._closing:
                        return
                try:
                    entered.enter_context(self._spare_factory())  # type: ignore[misc]
                except Exception:  # noqa: BLE001 - its runs go to the session's stack
                    return

            def free() -> bool:  # a run alone to take, and (on the session's stack) no shared run going or waiting
                return bool(self._queue) and (on_spare or not (self._shared_going or self._shared_waiting))

            while True:
                with self._cv:
                    self._cv.wait_for(lambda: free() or self._closing)
                    if not free():
                        return
                    item, future = self._queue.popleft()
                    if not on_spare:
                        self._stack_alone = True
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(self._run(item))
                    except BaseException as e:  # noqa: BLE001 - the run's error is its future's
                        future.set_exception(e)
                if not on_spare:
                    with self._cv:
                        self._stack_alone = False
                        self._cv.notify_all()

    def close(self) -> None:
        """Wait for the runs under way, then stop the spare stack in the thread that started it.
        Runs not taken yet at close mean the command was stopped: those not started are dropped."""
        stopping = any(not f.done() for f in list(self._pending))
        if stopping:
            with self._cv:
                for _, future in self._queue:
                    future.cancel()
                self._queue.clear()
        self._shared.shutdown(wait=True, cancel_futures=stopping)
        with self._cv:
            self._closing = True
            self._cv.notify_all()
        for lane in self._lanes:
            lane.join()
