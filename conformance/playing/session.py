"""A session of the suite: target specs × scenarios → results. What `sinkcheck run`, `sinkcheck
gate` and the pytest plugin share: the profiles, executing one scenario on a target spec
(`model@VERSION` included: the reference model standing in for a sink), the warm Kafka stacks
of Kafka Connect targets, the named and saved scenarios a target plays, the errors and the
environment the report shows. Generated scenarios (drawn, shrunk, replayed) are in
conformance.playing.generated. Printing, arguments and exit codes are the command line's.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

PROFILES = {
    # generated scenarios per target, derandomized (fixed seed), max records per generated scenario
    "ci": (10, True, 30),
    "default": (25, False, 40),
    "thorough": (100, False, 40),
}
# generated scenarios for a simulated target (the embedded default: milliseconds a scenario)
SIMULATED_EXAMPLES = {"ci": 100, "default": 250, "thorough": 1000}
FAILURES_DIR = ".sinkcheck/failures"


class InputError(ValueError):
    """Input the user must fix (the command line exits 4 with the message): a scenario that
    cannot be played, a named scenario that does not exist, a target that cannot run."""


class Unproducible(InputError):
    """A scenario whose records no producer could write under the given connector config: its
    converters refuse them (wire.NotRealizable), or its Schema Registry does (a schema change
    the subject's compatibility level rejects, HTTP 409). A named one is not applicable there."""

    def __init__(self, scenario: str, reason: str) -> None:
        super().__init__(f"{scenario} under the given connector config: {reason}")
        self.reason = reason


def fmt_secs(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"



def execute(scenario: Any, spec: str, run_dir: Path, plugin_path: list[str] | None = None, stack: Any = None,
            tag: str | None = None) -> Any:
    """One run. On a warm stack the scenario's topics get `tag` appended (default: one of its
    own): other runs use the stack's broker at the same time. A gate gives both sides of a
    scenario the same tag, on stacks of their own, so their objects keep comparable keys."""
    if spec.startswith("model@") or spec == "model":
        from conformance.playing.model_target import run_model

        return run_model(scenario, spec, run_dir)
    from conformance.playing.runner import run_scenario
    from conformance.playing.stack_sharing import on_shared_stack

    if stack is not None:
        scenario = on_shared_stack(scenario, tag or f"-r{next(_STACK_RUNS)}")
    return run_scenario(scenario, spec, run_dir, plugin_path=plugin_path, stack=stack)


_STACK_RUNS = itertools.count(1)


def executed(scenario: Any, spec: str, run_dir: Path, plugin_path: list[str] | None = None, stack: Any = None,
             tag: str | None = None) -> Any:
    """execute's run as a conformance.playing.workers.Outcome: its result, or how it failed (the
    session reports that as the run's error)."""
    from conformance.playing.workers import Outcome, failed

    try:
        return Outcome(execute(scenario, spec, run_dir, plugin_path, stack, tag))
    except Exception as e:  # noqa: BLE001 - the run's error, reported beside the results
        return failed(e)


def only_properties(result: Any, props: set[str] | None) -> Any:
    if not props:
        return result
    from conformance.playing.runner import RunResult

    r = result
    return RunResult(r.scenario, r.target, r.claim, r.observation, r.expectation,
                     [v for v in r.verdicts if v.property in props], r.wall_s, r.run_dir, untested=r.untested)


def claimed_properties(scenario: Any, spec: str) -> set[str]:
    """The properties the target's claim for the scenario includes."""
    from conformance.judging.claims import claim_for
    from conformance.inputs.targets import target_kind

    kind = "confluent" if spec.startswith("model") else target_kind(spec)
    return set(claim_for(kind, scenario.connector, scenario.faults, scenario.connector_version).properties)


def selected(scenario: Any, spec: str, props: set[str] | None) -> bool:
    """A scenario runs when the target's claim for it includes a selected property."""
    if not props:
        return True
    return bool(claimed_properties(scenario, spec) & props)


def slug(text: str) -> str:
    return re.sub(r"[^\w.@-]+", "_", text)[:80]


@dataclass
class Session:
    """State of one `sinkcheck run` (or one side of a gate)."""

    out: Path
    props: set[str] | None
    deadline: float | None
    plugin_path: list[str]
    # where a long run says how far it got, and what goes wrong beside the results
    progress: Callable[[str], None] = lambda text: None
    warn: Callable[[str], None] = lambda text: None
    redactor: Any = None  # reports.redact.Redactor: secrets out of every saved scenario
    results: list[Any] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    reproducers: dict[str, str] = field(default_factory=dict)
    # each run's scenario by run directory as it was given to the run, before a warm stack's topic
    # tag: what a reproducer saves, so the same failure found again has the same file
    given: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    done: int = 0
    skipped_budget: int = 0
    total_hint: int = 0
    on_result: Callable[[Any], None] | None = None
    # one warm Kafka stack (broker, S3 server, worker) per Kafka Connect target, for all its runs
    stacks: dict[str, Any] = field(default_factory=dict)
    stack_startup_s: dict[str, float] = field(default_factory=dict)  # how long each warm stack took to start
    notes: list[str] = field(default_factory=list)  # for the report
    # scenarios not run: their point cannot survive the user's config (conformance.judging.verdicts.NotApplicable)
    not_applicable: list[Any] = field(default_factory=list)
    _lock: Any = field(default_factory=threading.RLock)  # runs on a warm stack go several at once
    _spares: dict[str, Any] = field(default_factory=dict)  # stack_sharing.SpareStack by spec (spare_stacks)
    # the specs whose warm stacks start a Schema Registry (and, for Kafka Connect, load the registry
    # converter plugins): set before the first stack_for (conformance.playing.target_run.run_target)
    registry_converters: set[str] = field(default_factory=set)
    # processes playing a simulated target's runs (conformance.playing.workers): 1, all in this one
    processes: int = 1
    # what the reports derive from each run (reports.context.prepare_report: the command line's),
    # as the run ends: in the worker that played it, beside the other runs, not after them all
    prepare_report: Callable[[Any], Any] | None = None
    _pool: Any = None  # conformance.playing.workers.RunPool, started by pool_for
    _lanes: dict[str, Any] = field(default_factory=dict)  # stack_sharing.StackLanes by spec, started by pool_for

    def stack_for(self, spec: str, key: str | None = None) -> Any:
        """The warm stack `spec`'s runs share, started on first use: a broker, an S3 server and a
        Connect worker for a Kafka Connect target, a broker and an S3 server for the Python sink
        over a broker; None for targets that bring everything themselves. `key` (default: the
        spec) names the stack: a gate of a target against itself gives each side its own, so
        that the two runs of a scenario, under the same topic names, never meet on one broker."""
        if not spec.startswith(("kafka-connect:", "pysink:broker")):
            return None
        key = key or spec
        spare = self._spares[key].stack(None) if key in self._spares else None
        if spare is not None:  # this thread runs on a spare stack of its own
            return spare
        if key not in self.stacks:
            from conformance.inputs.targets import start_broker_stack, start_connect_stack

            t = time.monotonic()
            if spec.startswith("pysink:broker"):
                self.progress(f"[sinkcheck] starting a Kafka broker and an S3 server for {key}…")
                self.stacks[key] = start_broker_stack(self.out / "stacks" / slug(key), spec in self.registry_converters)
            else:
                self.progress(f"[sinkcheck] starting a Kafka broker, an S3 server and a Connect worker for {key}…")
                self.stacks[key] = start_connect_stack(spec, self.out / "stacks" / slug(key), self.plugin_path,
                                                       spec in self.registry_converters)
            self.stack_startup_s[key] = time.monotonic() - t
        return self.stacks[key]

    def spare_stacks(self, specs: list[str], keys: list[str] | None = None) -> Any:
        """A context in which this thread's runs of `specs` go to stacks of their own, started
        on entry (in this thread: its processes die with it) and stopped on exit:
        conformance.playing.stack_sharing.stack_schedule runs the items that need a stack alone on
        them while the shared ones run. One conformance.playing.stack_sharing.SpareStack per Kafka
        Connect spec (per key of `stack_for`, where `keys` gives them)."""
        import contextlib

        from conformance.playing.stack_sharing import SpareStack
        from conformance.inputs.targets import start_connect_stack

        def starter(spec: str, key: str) -> Callable[[], Any]:
            return lambda: start_connect_stack(spec, self.out / "stacks" / f"{slug(key)}-spare", self.plugin_path,
                                               spec in self.registry_converters)

        named = dict(zip(keys or specs, specs))
        for key, spec in named.items():
            if spec.startswith("kafka-connect:"):
                self._spares.setdefault(key, SpareStack(starter(spec, key)))
        chosen = [self._spares[k] for k in named if k in self._spares]

        @contextlib.contextmanager
        def spare() -> Any:
            with contextlib.ExitStack() as entered:
                for one in chosen:
                    entered.enter_context(one.spare())
                yield
        return spare

    def close(self) -> None:
        """Stop every stack and worker process the session started."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.close()
        for lanes in self._lanes.values():
            lanes.close()
        self._lanes.clear()
        for stack in self.stacks.values():
            try:
                stack.stop()
            except Exception as e:  # noqa: BLE001 - the others are stopped all the same
                self.warn(f"sinkcheck: stopping a Kafka stack: {e}")
        self.stacks.clear()

    def time_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def over_budget(self) -> bool:
        left = self.time_left()
        return left is not None and left <= 0

    def failures(self) -> int:
        return sum(1 for r in self.results if r.failed())

    def estimated_left(self) -> str | None:
        """The budget's remainder when there is one; otherwise the mean time per scenario so far
        times the scenarios still to run (a shrink or a saved failure can make it run over)."""
        left = self.time_left()
        if left is not None:
            return f"{fmt_secs(left)} left"
        if self.done and self.total_hint > self.done:
            mean = (time.monotonic() - self.started) / self.done
            return f"~{fmt_secs(mean * (self.total_hint - self.done))} left"
        return None

    def show_progress(self, current: str) -> None:
        done = f"{self.done}/{self.total_hint}" if self.total_hint >= self.done else str(self.done)
        left = self.estimated_left()
        self.progress(f"[sinkcheck] {done} scenarios done, {self.failures()} failed, "
                           f"{len(self.errors)} errors" + (f", {left}" if left else "")
                           + f" · {current}")

    def run_one(self, scenario: Any, spec: str, origin: str, run_dir: Path, record: bool = True,
                tag: str | None = None, stack_key: str | None = None) -> Any | None:
        stack = self.begin(scenario, spec, run_dir, stack_key)
        outcome = executed(scenario, spec, run_dir, self.plugin_path, stack, tag)
        return self.finish(scenario, spec, origin, run_dir, outcome, record)

    def begin(self, scenario: Any, spec: str, run_dir: Path, stack_key: str | None = None, save: bool = True) -> Any:
        """What comes before a run: its progress line, its stack (None for a target without one)
        and, where `save`, its scenario.json (saved_scenario; a worker saves its runs' own)."""
        with self._lock:
            self.show_progress(f"{scenario.name} on {spec}")
            stack = self.stack_for(spec, stack_key)
        if save:
            self.saved_scenario(scenario, spec).save(run_dir / "scenario.json")
        return stack

    def saved_scenario(self, scenario: Any, spec: str) -> Any:
        """The scenario as a run's scenario.json holds it: redacted, with the target it is played
        on (`sinkcheck replay` of it plays it on `spec` again)."""
        return dataclasses.replace(redacted_scenario(scenario, self.redactor), played_on={"target": spec})

    def finish(self, scenario: Any, spec: str, origin: str, run_dir: Path, outcome: Any, record: bool = True
               ) -> Any | None:
        """A run's conformance.playing.workers.Outcome taken into the session: its result (kept
        with its scenario, recorded where `record`), or its error; InputError for a scenario,
        target or (named) connector config the user must fix."""
        if outcome.given_scenario:
            outcome.result.scenario = scenario
        if outcome.kind == "input":
            raise InputError(outcome.message)
        if outcome.kind == "config" and origin != "generated":
            raise InputError(f"{scenario.name}: the connector config is rejected: {outcome.message}")
        if outcome.result is None:
            with self._lock:
                self.errors.append({"scenario": scenario.name, "target": spec, "origin": origin,
                                    "error": outcome.error, "traceback": outcome.traceback,
                                    "scenario_file": str(run_dir / "scenario.json")})
                self.done += 1
            return None
        if self.prepare_report is not None and not outcome.result.report_cache:
            self.prepare_report(outcome.result)
        result = only_properties(outcome.result, self.props)
        with self._lock:
            self.given[str(result.run_dir)] = scenario
            self.done += 1
            if record:
                self.record(result, origin)
        return result

    def pool_for(self, spec: str) -> Any:
        """What plays `spec`'s submitted runs several at once, started on first use: worker
        processes for a simulated target (conformance.playing.workers.RunPool), the lanes of its
        warm stacks for a Kafka Connect target (conformance.playing.stack_sharing.StackLanes:
        most of a real run is waiting); None where its runs go one at a time in this process: a
        session of one process, a simulated target's session of a few runs (over before the
        workers' interpreters would have started), or another target."""
        from conformance.inputs.targets import simulated

        if self.processes > 1 and spec.startswith("kafka-connect:"):
            if spec not in self._lanes:
                from conformance.playing.stack_sharing import StackLanes, needs_stack_alone

                self._lanes[spec] = StackLanes(lambda run: self._play_on_stack(spec, *run),
                                               lambda run: needs_stack_alone(run[0]),
                                               spare=self.spare_stacks([spec]))
            return self._lanes[spec]
        if self.processes <= 1 or self.total_hint < 4 * self.processes or not simulated(spec):
            return None
        if self._pool is None:
            from conformance.playing.workers import RunPool

            self._pool = RunPool(self.processes)
        return self._pool

    def submit(self, scenario: Any, spec: str, origin: str, run_dir: Path, record: bool = True) -> "PendingRun":
        """run_one, started in a worker process or on a warm stack's lane where `spec` has them
        (pool_for), else played here and now. Its PendingRun's `take` gives what run_one would have; the session's
        counts and results follow the order of the takes."""
        pool = self.pool_for(spec)
        if pool is None:
            result = self.run_one(scenario, spec, origin, run_dir, record)
            return PendingRun(self, scenario, spec, origin, run_dir, record, None, result)
        if spec in self._lanes:
            self.begin(scenario, spec, run_dir)  # the stack a lane's run goes to is the lane's (_play_on_stack)
            return PendingRun(self, scenario, spec, origin, run_dir, record, pool.submit((scenario, run_dir)))
        self.begin(scenario, spec, run_dir, save=False)  # writing a large stream's JSON is the worker's work too
        return PendingRun(self, scenario, spec, origin, run_dir, record,
                          pool.submit(scenario, self.saved_scenario(scenario, spec), spec, run_dir, self.plugin_path,
                                      self.prepare_report))

    def _play_on_stack(self, spec: str, scenario: Any, run_dir: Path) -> Any:
        """One run on a lane of StackLanes: on the stack this thread plays on (the spare on the
        lane of runs alone), its conformance.playing.workers.Outcome."""
        with self._lock:
            stack = self.stack_for(spec)
        return executed(scenario, spec, run_dir, self.plugin_path, stack)

    def run_all(self, spec: str, runs: Sequence[tuple[Any, str, Path]]) -> list[Any | None]:
        """run_one of each (scenario, origin, run directory), in order, those of a simulated
        target on every worker (a few ahead of the one taken); a run the budget leaves no time
        for is not started (None, counted as skipped)."""
        import collections

        pool = self.pool_for(spec)
        # runs started before the one taken: enough that a long one (a multipart stream's, seconds)
        # leaves the other workers runs to play; few enough that the budget stops what is not started
        ahead = 4 * pool.processes if pool is not None else 0
        out: list[Any | None] = []
        pending: collections.deque[PendingRun | None] = collections.deque()
        for scenario, origin, run_dir in runs:
            if self.over_budget():
                with self._lock:
                    self.skipped_budget += 1
                pending.append(None)
            else:
                pending.append(self.submit(scenario, spec, origin, run_dir))
            while len(pending) > ahead:
                p = pending.popleft()
                out.append(p.take() if p is not None else None)
        out += [p.take() if p is not None else None for p in pending]
        return out

    def record(self, result: Any, origin: str) -> None:
        self.results.append(result)
        self.origins[str(result.run_dir)] = origin
        if self.on_result:
            self.on_result(result)


class PendingRun:
    """A run Session.submit started: `take` waits for it and gives its result (or None, its error
    recorded) as run_one would; `discard` forgets it, directory and all, as if never started."""

    def __init__(self, sess: Session, scenario: Any, spec: str, origin: str, run_dir: Path, record: bool,
                 future: Any = None, result: Any = None):
        self.sess, self.scenario, self.spec, self.origin = sess, scenario, spec, origin
        self.run_dir, self.record, self.future, self.result = run_dir, record, future, result

    def take(self) -> Any | None:
        if self.future is not None:
            from conformance.playing.workers import Outcome, handed_over

            got, self.future = self.future.result(), None
            outcome = got if isinstance(got, Outcome) else handed_over(got)  # a lane's, or a worker process's file
            self.result = self.sess.finish(self.scenario, self.spec, self.origin, self.run_dir, outcome, self.record)
        return self.result

    def discard(self) -> None:
        """Only for a run not taken: its worker's writes end before its directory goes."""
        import shutil

        if self.future is not None and not self.future.cancel():
            self.future.result()
        self.future = None
        shutil.rmtree(self.run_dir, ignore_errors=True)


def redacted_scenario(scenario: Any, redactor: Any) -> Any:
    return dataclasses.replace(scenario, connector=redactor.config(scenario.connector)) if redactor else scenario


def prepare(scenario: Any, *, connector: dict[str, str] | None, version: str | None, seed: int | None,
            fit: bool = True) -> Any:
    """The scenario as this run plays it: under the user's connector config (its records
    re-expressed for that config's converters, put on its topics with the fields it reads:
    conformance.playing.user_config.fit, and kept to its point: conformance.playing.adapt; unless not
    `fit`: a gate's side plays its baseline's records),
    at the run's connector version and seed."""
    from conformance.inputs import wire
    from conformance.playing import adapt, user_config

    changes: dict[str, Any] = {}
    if connector is not None:
        from adapters.registry.api import IncompatibleSchema

        try:
            records = wire.reexpress(scenario.records, scenario.connector, connector)
            fitted = dataclasses.replace(scenario, connector=dict(connector), records=records)
            fitted = adapt.adapted(scenario, user_config.fit(fitted, connector)) if fit else fitted
        except (wire.NotRealizable, IncompatibleSchema) as e:
            conv = str(connector.get("value.converter", "")).rsplit(".", 1)[-1] or "(not set)"
            raise Unproducible(scenario.name, f"value.converter={conv}: no producer could write its records under "
                                              f"this config ({e})") from None
        except ValueError as e:
            raise InputError(f"{scenario.name} under the given connector config: {e}") from None
        changes.update(connector=fitted.connector, records=fitted.records, topics=fitted.topics, notes=fitted.notes,
                       faults=fitted.faults)
    if version is not None and scenario.connector_version is None:
        changes["connector_version"] = version
    if seed is not None and scenario.seed is None:
        changes["seed"] = seed
    return dataclasses.replace(scenario, **changes) if changes else scenario


def held_to_release(sc: Any, spec: str) -> Any:
    """`sc` with the release the target spec names (kafka-connect:confluent@V, model@V) where no
    --connector-version gave one: the release whose answers decide what the run can test."""
    from conformance.inputs.targets import named_release

    release = named_release(spec) if sc.connector_version is None else None
    return dataclasses.replace(sc, connector_version=release) if release else sc


def planned(scenario: Any, spec: str, *, connector: dict[str, str] | None, version: str | None, seed: int | None,
            origin: str = "named") -> Any:
    """`prepare`d for the run, or conformance.judging.verdicts.NotApplicable where the user's
    connector config leaves nothing of the scenario's point (conformance.playing.applicable):
    decided here, before anything runs, so it costs nothing."""
    from conformance.judging.verdicts import NotApplicable
    from conformance.playing.applicable import inapplicable, sink_inapplicable

    try:
        sc = prepare(scenario, connector=connector, version=version, seed=seed)
    except Unproducible as e:
        if origin != "named":
            raise
        return NotApplicable(scenario.name, spec, e.reason, origin, ())
    # with its own config a scenario is held only to the release's answers (the aspects compare
    # its config with itself), which may still leave nothing of its point
    why = sink_inapplicable(scenario.name, spec, scenario) or inapplicable(scenario, held_to_release(sc, spec))
    if why is None:
        return sc
    return NotApplicable(scenario.name, spec, why, origin, tuple(sorted(claimed_properties(sc, spec))))


def named_scenarios(names: Sequence[str] | None) -> list[Any]:
    """The named scenarios picked by --scenario, else the suite every target plays."""
    from conformance.catalog.named import ALL_NAMED, SUITE

    if names:
        unknown = [n for n in names if n not in ALL_NAMED]
        if unknown:
            raise InputError(f"--scenario {', '.join(unknown)}: no such named scenario; choose from {', '.join(ALL_NAMED)}")
        return [ALL_NAMED[n]() for n in names]
    return [f() for f in SUITE.values()]


def own_named_scenarios(spec: str) -> list[Any]:
    """The named scenarios about the target's own connector (conformance.catalog.named.CONNECTOR_OWN)."""
    from conformance.catalog.named import CONNECTOR_OWN
    from conformance.inputs.targets import target_kind

    return [f() for f in CONNECTOR_OWN.get(target_kind(spec), {}).values()]


def failed_properties(result: Any) -> list[str]:
    return sorted({v.property for v in result.failed()})


def failure_scenario(result: Any, redactor: Any, given: Any = None) -> Any:
    """The scenario of a failed run as its reproducer is saved: the one `given` to the run
    (without the topic tag of a warm stack, which its replay adds again; default: the run's),
    redacted, with the target it failed on, the connector version that ran there, the
    properties that failed and the known bugs it reproduced (conformance.catalog.known_bugs)."""
    from conformance.catalog.known_bugs import reproduced

    info = getattr(result, "target_info", None)
    bugs = [b.id for b in reproduced(result)]
    played = {"target": result.target, **({"connector": info.connector_version} if info and info.connector_version else {}),
              "failed": failed_properties(result), **({"known_bugs": bugs} if bugs else {})}
    scenario = dataclasses.replace(given, notes=result.scenario.notes) if given is not None else result.scenario
    return dataclasses.replace(redacted_scenario(scenario, redactor), played_on=played)


def failure_file_name(saved: Any) -> str:
    """One file per failure signature: what is played (connector config, topics, records,
    faults, connector version; not its name, seed or notes), the target and the properties that
    failed. A failure found again, under another name or seed, replaces its file."""
    body = {k: v for k, v in saved.to_json().items() if k not in ("name", "seed", "notes", "played_on", "connector")}
    body["connector"] = saved.connector
    body["target"] = saved.played_on["target"]
    body["failed"] = saved.played_on.get("failed", [])
    digest = hashlib.sha1(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"{slug(saved.played_on['target'])}--{slug(scenario_label(saved.name))}-{digest}.json"


def scenario_label(name: str) -> str:
    """A scenario's name as its failures are told apart: a generated one's is its origin alone
    (generated-017, generated-004-shrunk: draws of a search differ in name only by their index)."""
    return "generated" if name.startswith("generated") else name


def fails_alike(a: Any, b: Any) -> bool:
    """Do two saved reproducers fail the same way, as their `played_on` records it: on the same
    target, reproducing the same known bugs where both reproduce some, else (one reproduces none,
    or was saved before they were recorded), of the same scenario (scenario_label), failing the
    same claimed properties. A file that records no failed property is like no other."""
    pa, pb = a.played_on or {}, b.played_on or {}
    if pa.get("target") != pb.get("target"):
        return False
    bugs_a, bugs_b = set(pa.get("known_bugs") or ()), set(pb.get("known_bugs") or ())
    if bugs_a and bugs_b:
        return bugs_a == bugs_b
    failed = sorted(pa.get("failed") or ())
    return bool(failed) and scenario_label(a.name) == scenario_label(b.name) and failed == sorted(pb.get("failed") or ())


def saved_twin(saved: Any, file_name: str, kept: Sequence[tuple[Path, Any]]) -> Path | None:
    """The saved reproducer among `kept` that `saved` (a failure about to be saved as
    `file_name`) would copy: another file failing the same way (fails_alike). None where its own
    file is among them (found again, it replaces its file) or none fails alike."""
    if any(p.name == file_name for p, _ in kept):
        return None
    return next((p for p, other in kept if fails_alike(saved, other)), None)


def alike_groups(saved: Sequence[tuple[Path, Any]]) -> list[list[tuple[Path, Any]]]:
    """Saved failures grouped by how they fail (fails_alike with the group's first), in order:
    a group is one failure, however many runs saved a reproducer of it."""
    groups: list[list[tuple[Path, Any]]] = []
    for item in saved:
        group = next((g for g in groups if fails_alike(g[0][1], item[1])), None)
        if group is None:
            groups.append([item])
        else:
            group.append(item)
    return groups


def saved_failures(failures_dir: Path, spec: str, names: Sequence[str] | None = None,
                   warn: Callable[[str], None] = lambda text: None) -> list[tuple[Path, Any]]:
    """The saved failures `spec` replays first: those that failed on it (by the target the file
    records; by its file name when it records none), of the named scenarios `names` only when
    given (a run of picked scenarios replays their failures, no others)."""
    from conformance.inputs.scenario import Scenario, ScenarioError

    if not failures_dir.is_dir():
        return []
    out = []
    for f in sorted(failures_dir.glob("*.json")):
        try:
            sc = Scenario.load(f)
        except ScenarioError as e:
            warn(f"ignoring saved failure {f}: {e}")
            continue
        on = (sc.played_on or {}).get("target")
        if (on != spec) if on else not f.name.startswith(f"{slug(spec)}--"):
            continue
        if names and sc.name not in names:
            continue
        out.append((f, sc))
    return out


def retire_if_passing(path: Path, saved: Any, result: Any | None, spec: str, warn: Callable[[str], None]) -> None:
    """A saved failure whose failed properties all pass on replay is retired: its file goes."""
    if result is None:
        return
    failed = (saved.played_on or {}).get("failed")
    now = [v for v in result.all_verdicts() if v.claimed and v.property in (failed or ())]
    if (failed and {v.property for v in now} == set(failed) and all(v.status == "pass" for v in now)
            or not failed and result.status == "pass"):
        path.unlink(missing_ok=True)
        warn(f"saved failure {path.name} ({saved.name}: {', '.join(failed or ['every property'])}) passes now on "
             f"{spec}: retired, file removed")


def environment(targets: Sequence[str], connector_versions: set[str], results: Sequence[Any] = ()) -> dict[str, Any]:
    """The report's environment: what each target said of itself (TargetInfo) where it ran,
    sinkcheck's own defaults where it did not."""
    import platform
    from importlib.metadata import PackageNotFoundError, version as installed

    try:  # the installed distribution's: the suite does not reach into the command line's package
        own = installed("sinkcheck")
    except PackageNotFoundError:
        own = "unknown (not installed)"
    infos = [r.target_info for r in results if getattr(r, "target_info", None) is not None]

    def told(what: Callable[[Any], str | None]) -> str:
        return "; ".join(sorted({v for v in map(what, infos) if v}))

    env: dict[str, Any] = {"sinkcheck version": own, "python": platform.python_version(),
                           "targets": ", ".join(targets)}
    connectors = told(lambda i: " ".join(x for x in (i.connector_class, i.connector_version) if x) or None)
    if connectors:
        env["connector"] = connectors
    env["model's connector version"] = ", ".join(sorted(connector_versions)) or "default (model 12.1.9)"
    for said in ("schema registry", "registry converters"):  # where a run's converters read a registry
        where = told(lambda i: (i.extra or {}).get(said) or None)
        if where:
            env[said] = where
    model_only = all(t.startswith("model") for t in targets)
    env["Kafka"] = told(lambda i: i.kafka_version) or (
        "none (the reference model is the target)" if model_only else "per target")
    if model_only:
        env["S3 server"] = "none (objects come from the model)"
        return env
    try:
        from importlib.metadata import version

        moto = f"moto {version('moto')}"
    except Exception:
        moto = "moto"
    servers = told(lambda i: None if i.s3_server is None
                   else (f"{moto} (sinkcheck's, on 127.0.0.1)" if i.s3_server.startswith("moto") else i.s3_server))
    env["S3 server"] = servers or f"{moto} (sinkcheck's default, on 127.0.0.1)"
    return env
