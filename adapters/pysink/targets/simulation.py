"""The Python sink in a deterministic simulation: the embedded default target.

Nothing waits on the wall clock. A virtual clock (ManualClock) is the sink's `clock()`; the S3
it writes to lives in memory with the fault front's rules (adapters.s3.memory); its records come
from the in-process log. Each sink instance runs its poll loop on a thread of its own, but only
when the scheduler hands it a turn (`Turns`): one poll per instance per tick, instances in the
order they were started, the clock moved one tick after each round, the bucket and the committed
offsets sampled then. A call a hang rule holds parks its instance until the rule is released
(the call takes effect then, whatever became of its caller), and the scheduler goes on with the
others: zombies, crashes and hangs are steps of the schedule. One scenario therefore gives one
interleaving, and the same verdicts every time.

A scenario's `wait` advances the virtual clock tick by tick (scheduled rotation fires as it
would); `wait-fired` and `quiet` run ticks until their condition holds or their bound (in
virtual seconds) runs out. The real-time in-process mode stays available as `pysink:realtime`.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any, Callable, Mapping

from adapters.s3.memory import MemoryS3, MemoryS3Client, Parked
from adapters.observation import FaultEvent, PutSample, QuietWatch
from adapters.pysink.log import InProcessLog
from adapters.pysink.sink import InProcessSink, ManualClock, SinkInstance
from adapters.pysink.targets.target import PySinkTarget, flat_config
from adapters.target import Fault, TargetError, TargetInfo

# the virtual clock starts here: a fixed instant, so Wallclock partitions and scheduled
# boundaries come out the same in every run (2026-01-01T00:00:00.250Z)
SIM_START_MS = 1_767_225_600_250
TICK_MS = 50  # the real-time sink polls every 50 ms
# Kafka Connect's quiet window while the committed offsets are behind the log end, at least 8 s
# (adapters.connect.target.KafkaConnectTarget.wait_until_quiet's `settled_s`)
BEHIND_STABLE_MS = 8_000
TURN_TIMEOUT_S = 60.0  # a real-time bound on one poll of one instance (a sink stuck in a loop)


class Turns:
    """The baton between the scheduler and one instance's loop thread."""

    def __init__(self, name: str):
        self.name = name
        self._cv = threading.Condition()
        self._instance_turn = False
        self.state = "idle"  # idle | parked | exited
        self.parked: Parked | None = None

    # the instance's side
    def wait(self) -> None:
        """Before each poll: hand back the turn it holds (its last poll is done), wait for the next."""
        with self._cv:
            if self._instance_turn:
                self.state = "idle"
                self._instance_turn = False
                self._cv.notify_all()
            while not self._instance_turn:
                self._cv.wait()

    def _give_back(self, state: str) -> None:
        with self._cv:
            self.state = state
            self._instance_turn = False
            self._cv.notify_all()

    def exit(self) -> None:
        self._give_back("exited")

    def park(self, p: Parked) -> None:
        """A hung call: hand the turn back, wait for the release, then for the next turn."""
        self.parked = p
        self._give_back("parked")
        p.released.wait()
        with self._cv:
            while not self._instance_turn:
                self._cv.wait()
        self.parked = None

    # the scheduler's side
    def runnable(self) -> bool:
        return self.state != "exited" and (self.parked is None or self.parked.released.is_set())

    def turn(self) -> str:
        """Let the instance run until it polled once, parked or exited."""
        with self._cv:
            self.state = "running"
            self._instance_turn = True
            self._cv.notify_all()
            deadline = time.monotonic() + TURN_TIMEOUT_S
            while self._instance_turn:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TargetError(f"{self.name}: one poll took over {TURN_TIMEOUT_S:.0f}s of real time")
                self._cv.wait(left)
            return self.state

    def __call__(self, p: Parked) -> None:  # the S3 client's park hook
        self.park(p)


class SimFront:
    """The fault front of a simulated run: the in-memory S3's rules, with waits in virtual time."""

    def __init__(self, target: "SimulatedPySinkTarget"):
        self.target, self.store = target, target.store

    def add_rule(self, rule: Any) -> str:
        return self.store.add_rule(rule)

    def release(self, rule_id: str | None = None) -> None:
        self.store.release(rule_id)

    def wait_fired(self, rule_id: str, timeout_s: float) -> bool:
        st = self.store._rules[rule_id]
        return self.target.run_until(lambda: bool(st.firings), timeout_s)

    def events(self) -> list[FaultEvent]:
        return self.store.events()

    def stop(self) -> None:
        self.store.release()


class SimulatedPySinkTarget(PySinkTarget):
    """PySinkTarget (in-process) under a virtual clock, an in-memory S3 and a scheduler."""

    simulated = True

    def __init__(self, run_dir: Path | str, variant: str | None = None, s3_endpoint: str | None = None, **kw: Any):
        if s3_endpoint is not None:
            raise TargetError("the simulated Python sink has its S3 in memory: it takes no S3 endpoint "
                              "(pysink:realtime writes to a real S3 server)")
        self.sim_clock = ManualClock(SIM_START_MS)
        super().__init__(run_dir, mode="inprocess", variant=variant, clock=self.sim_clock, **kw)
        self.store = MemoryS3(self.sim_clock, self.sim_clock.advance)
        self.fault_front = SimFront(self)
        self.turns: dict[int, Turns] = {}
        self._listed: tuple[int, Any] | None = None  # (the store's change count, the listing then)
        self.paused: set[int] = set()

    def _now(self) -> int:
        return self.sim_clock()

    def info(self) -> TargetInfo:
        base = super().info()
        return dataclasses.replace(base, kafka_version="in-process log (simulated, virtual clock)",
                                   s3_server="S3 in memory (simulated, the fault front's rules)")

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self, connector_config: Mapping[str, Any] | str, topics: Mapping[str, int]) -> None:
        self.name, self._config = flat_config(connector_config)
        self.schema_registry = None
        self.settings = self._settings(self._config)
        self.schema_registry = self._registry(self.settings.registry_url)
        if self.schema_registry is not None:
            self.settings.attach_registry(self.schema_registry)
        self.topics = dict(topics)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.endpoint = "memory"
        self.store.create_bucket(Bucket=self.settings.bucket)
        self._sample_s3 = MemoryS3Client(self.store, faults=False)
        self.log = InProcessLog()
        self.log.create(self.topics)
        self.obs.puts = []
        self._new_instance()

    def _new_instance(self) -> SinkInstance:
        assert self.log is not None
        turns = Turns(f"{self.name}-{len(self.instances) + 1}")
        client = MemoryS3Client(self.store, park=turns)
        inst = InProcessSink(self.log, client, self.settings, group=self.group, clock=self.clock,
                             task_class=self.task_class, scratch=self.scratch, journal=self.journal, name=self.name,
                             on_put=self._put_made)
        self.instances.append(inst)
        self.turns[id(inst)] = turns
        self.sink = inst
        inst.start(turns)
        return inst

    def _put_made(self, instance: str, now: int, batch: list[Any]) -> None:
        """The virtual clock gives every put its time: the observation keeps the schedule, so the
        model can fold the same puts (exact objects under scheduled rotation and Wallclock)."""
        with self._lock:
            assert self.obs.puts is not None
            self.obs.puts.append(PutSample(now, instance, tuple((r.topic, r.partition, r.offset) for r in batch)))

    def stop(self) -> None:
        self.store.release()
        for inst in self.instances:
            inst.kill()
        for inst in self.instances:
            t = self.turns.get(id(inst))
            if t is not None and t.runnable():
                try:
                    t.turn()
                except TargetError:
                    pass
            if inst.thread is not None:
                inst.thread.join(timeout=5)

    def sample_bucket(self) -> Any:
        """A listing of the in-memory bucket: listed again only where the store changed since the
        last (a run samples it every tick, and it changes at a few of them)."""
        if self._listed is not None and self._listed[0] == self.store.changes:
            return dataclasses.replace(self._listed[1], at_ms=self._now())
        sample = super().sample_bucket()
        self._listed = (self.store.changes, sample)
        return sample

    # --- the schedule ---------------------------------------------------------------------------
    def tick(self) -> None:
        """One round: a poll of every running instance in the order they were started, the clock
        one tick on, a sample."""
        for inst in list(self.instances):
            t = self.turns[id(inst)]
            if id(inst) in self.paused or not t.runnable():
                continue
            t.turn()
            if inst.error and inst is self.sink:
                break
        self.sim_clock.advance(TICK_MS)
        self._sample()

    def run_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Ticks until `done()` holds (True) or `timeout_s` of virtual time went by (False)."""
        deadline = self.sim_clock() + int(timeout_s * 1000)
        while not done():
            if self.sim_clock() >= deadline:
                return False
            self.tick()
        return True

    def advance(self, seconds: float) -> None:
        """A scenario's `wait`: the sink polls on while the virtual clock moves `seconds` on."""
        end = self.sim_clock() + int(seconds * 1000)
        while self.sim_clock() < end:
            self.tick()

    # --- faults ---------------------------------------------------------------------------------
    def apply_fault(self, fault: Fault) -> None:
        kind = fault.kind
        if kind == "pause":
            old = self.sink
            assert old is not None
            self.paused.add(id(old))
            self.zombies.append(old)
            self.advance(float(fault.params.get("takeover_after_s", 0.2)))
            new = self._new_instance()
            with self._lock:
                self.obs.faults.append(FaultEvent(kind, dict(fault.params), True, self._now(), self._now(),
                                                  f"pysink: {old.name} paused; {new.name} takes the partitions"))
            return
        if kind == "resume":
            names = [z.name for z in self.zombies]
            for z in self.zombies:
                self.paused.discard(id(z))
                z.was_paused = True  # its next poll finds out whether the group moved on
            self.zombies = []
            with self._lock:
                self.obs.faults.append(FaultEvent(kind, dict(fault.params), True, self._now(), self._now(),
                                                  f"pysink: resumed {names}"))
            return
        super().apply_fault(fault)

    def _stop_instance(self, inst: SinkInstance) -> None:
        """A graceful stop within the schedule: the instance's next turns close its writers."""
        inst.stopping.set()
        t = self.turns[id(inst)]
        while t.runnable() and id(inst) not in self.paused:
            t.turn()

    def _still_running(self, inst: SinkInstance) -> bool:
        t = self.turns.get(id(inst))
        return t is not None and t.state != "exited" and id(inst) not in self.paused and not inst.killed.is_set()

    # --- settling -------------------------------------------------------------------------------
    def wait_until_quiet(self, timeout_s: float, stable_s: float | None = None) -> bool:
        """Quiet as in real time (read to the log end, nothing pending, committed offsets and the
        journal unchanged for `stable_s`, default 0.6 s), counted in virtual time. While the
        committed offsets are behind the log end (records held in open files), the window is
        Kafka Connect's (`BEHIND_STABLE_MS`): work the sink has scheduled, a scheduled rotation
        or the rewrite of a file whose completion failed (R1.5, R3.4), happens within the run,
        as it does on a real worker."""
        stable_ms = int((0.6 if stable_s is None else stable_s) * 1000)
        deadline = self.sim_clock() + int(timeout_s * 1000)
        watch = QuietWatch(self.obs, self._lock, self.sim_clock())
        while True:
            self.tick()
            settled, moving, state = self._moving()
            now = self.sim_clock()
            need = max(stable_ms, BEHIND_STABLE_MS) if self._committed_behind() else stable_ms
            if watch.unchanged_for(state, now) >= need and settled:
                return watch.end(True)
            if now >= deadline:
                return watch.end(False, f"after {timeout_s:.0f}s (virtual) the Python sink was still moving: "
                                        f"{moving or 'committed offsets changed'}")

    def _committed_behind(self) -> bool:
        committed = self.committed()
        return any(committed.get(tp, 0) < end for tp, end in self.log_ends().items())

    def _final_samples(self) -> list[Any]:
        """Ticks until the open uploads agree twice in a row, 1.5 virtual seconds apart (as
        adapters.s3.bucket.settled_samples does in real time), at most 20 virtual seconds."""
        out = [self.sample_bucket()]
        for _ in range(13):
            if not out[-1].open_uploads:
                break
            self.advance(1.5)
            out.append(self.sample_bucket())
            if set(out[-1].open_uploads) == set(out[-2].open_uploads):
                break
        return out
