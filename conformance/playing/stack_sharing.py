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
    ahead), played on warm stacks as stack_schedule plays a list: those that touch only their own
    connector `workers` at a time on the session's stack, those that need a stack alone one by
    one on a spare stack (`spare()`: entered on the first of them, left at `close`), in a thread
    of their own that lasts as long as the lanes do, so that a crashed worker's restart lives on.
    `submit` gives a future of `run(item)`; `processes` is how many runs go at once."""

    def __init__(self, run: Callable[[Any], Any], alone: Callable[[Any], bool], workers: int = STACK_WORKERS,
                 spare: Callable[[], Any] | None = None):
        import concurrent.futures

        self.processes = workers + 1
        self._run, self._alone, self._spare_factory = run, alone, spare
        self._spare: Any = None  # the entered spare() context, on the lone lane's thread
        self._spare_failed: Exception | None = None
        self._shared = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="sinkcheck-stack-run")
        self._lone = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="sinkcheck-spare-stack")
        self._pending: set[Any] = set()

    def submit(self, item: Any) -> Any:
        future = (self._lone.submit(self._on_spare, item) if self._alone(item)
                  else self._shared.submit(self._run, item))
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future

    def _on_spare(self, item: Any) -> Any:
        if self._spare is None and self._spare_factory is not None:
            # a spare that cannot start fails the runs that need it: never one alone beside the shared ones
            if self._spare_failed is not None:
                raise self._spare_failed
            entered = self._spare_factory()
            try:
                entered.__enter__()
            except Exception as e:
                self._spare_failed = RuntimeError(f"the spare stack for the runs that need a stack alone "
                                                  f"did not start: {type(e).__name__}: {e}")
                raise self._spare_failed from e
            self._spare = entered
        return self._run(item)

    def close(self) -> None:
        """Wait for the runs under way, then stop the spare stack in the thread that started it.
        Runs not taken yet at close mean the command was stopped: those not started are dropped."""
        stopping = any(not f.done() for f in list(self._pending))
        self._shared.shutdown(wait=True, cancel_futures=stopping)
        if self._spare is not None:
            spare, self._spare = self._spare, None
            self._lone.submit(spare.__exit__, None, None, None)
        self._lone.shutdown(wait=True, cancel_futures=stopping)
