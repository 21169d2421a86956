"""`sinkcheck run`: saved failures first, then the named scenarios, then Hypothesis-generated
ones (shrunk on failure), against one or more targets; writes report.html, junit.xml,
results.json and a reproducer per failure; exit code per sinkcheck.exitcodes.

Also home of what `gate` shares with it: executing one scenario on a target spec (including
`model@VERSION`, the reference model standing in for a sink at a connector version), the
terminal (always redacted), budgets and profiles.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import re
import shutil
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from sinkcheck.exitcodes import Exit

PROFILES = {
    # generated scenarios per target, derandomized (fixed seed), max records per generated scenario
    "ci": (10, True, 30),
    "default": (25, False, 40),
    "thorough": (100, False, 40),
}
# generated scenarios for a simulated target (the embedded default: milliseconds a scenario)
SIMULATED_EXAMPLES = {"ci": 100, "default": 250, "thorough": 1000}
FAILURES_DIR = ".sinkcheck/failures"


from sinkcheck.cli import UsageError  # noqa: E402  (exit 4; the message says what to fix)


# --- terminal ----------------------------------------------------------------------------------

class Terminal:
    """Every line sinkcheck prints goes through the redactor."""

    def __init__(self, redactor: Any) -> None:
        self.redactor = redactor
        self.tty = sys.stderr.isatty()
        self._progress_shown = False

    def out(self, text: str = "") -> None:
        self._clear()
        print(self.redactor.text(text), file=sys.stdout, flush=True)

    def err(self, text: str) -> None:
        self._clear()
        print(self.redactor.text(text), file=sys.stderr, flush=True)

    def progress(self, text: str) -> None:
        text = self.redactor.text(text)
        if self.tty:
            sys.stderr.write("\r\x1b[K" + text[:200])
            sys.stderr.flush()
            self._progress_shown = True
        else:
            print(text, file=sys.stderr, flush=True)

    def _clear(self) -> None:
        if self._progress_shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self._progress_shown = False


def parse_budget(text: str | None) -> float | None:
    """'10m', '90s', '1h30m', '45' (seconds) -> seconds; None -> no budget."""
    if text is None:
        return None
    t = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        return float(t)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", t)
    if not parts or "".join(a + b for a, b in parts) != t:
        raise UsageError(f"--budget {text!r}: give a duration such as 90s, 10m or 1h30m")
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def fmt_secs(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


# --- connector config --------------------------------------------------------------------------

def load_connector_config(path: str | None, flag: str = "--connector-config") -> dict[str, str] | None:
    if not path:
        return None
    from reference_impl.config import ConfigError, ConfigSyntaxError, load_config_text

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{flag}: file not found: {path}") from None
    except OSError as e:
        raise UsageError(f"{flag}: cannot read {path}: {e.strerror}") from None
    try:
        _, cfg = load_config_text(text, path)
    except ConfigSyntaxError as e:
        raise UsageError(f"{flag} {path}: malformed JSON at line {e.line}, column {e.column}; fix the file so it is "
                         "one JSON object, either {\"name\":…,\"config\":{…}} or a flat map of strings") from None
    except ConfigError as e:
        raise UsageError(f"{flag} {path}: {e}") from None
    return cfg


def validate_for_target(cfg: dict[str, str], target: str, version: str | None) -> None:
    """A config the connector would reject is a usage error before anything starts."""
    from conformance.claims import CONFLUENT_SEMANTICS
    from conformance.connector_config import sink_config
    from conformance.targets import target_kind
    from reference_impl.config import ConfigError
    from reference_impl.versions import VersionError

    kind = "confluent" if target.startswith("model@") else target_kind(target)
    if kind not in CONFLUENT_SEMANTICS:
        return
    try:
        sink_config(cfg, version)
    except ConfigError as e:
        raise UsageError(f"--connector-config is rejected for {target}: {e}") from None
    except VersionError as e:
        raise UsageError(f"connector version: {e}") from None


# --- executing one scenario ------------------------------------------------------------------------

def model_version(spec: str) -> str | None:
    if spec.startswith("model@"):
        return spec.split("@", 1)[1] or None
    return None


def check_target_spec(spec: str, plugin_path: Sequence[str] = (), progress: Callable[[str], None] | None = None,
                      version: str | None = None) -> None:
    """Fail early (exit 4) on a target that cannot be loaded or run: an unknown target or
    variant, a Kafka Connect plugin that is nowhere to be had (the message names the ways to
    provide it), a --connector-version other than the version that runs. A plugin from the
    shared layouts is laid out here, once, before the first scenario."""
    if spec.startswith("model@"):
        from reference_impl.versions import VersionError, parse_version

        try:
            parse_version(spec.split("@", 1)[1])
        except VersionError as e:
            raise UsageError(f"--target {spec}: {e}") from None
        return
    if spec == "model":
        return
    from conformance.targets import BUILTIN, TargetSpecError, check_spec, connect_profile, pysink_variant

    if spec.startswith("pysink"):
        from adapters.pysink import VARIANTS

        variant = pysink_variant(spec)
        if variant not in (None, "correct") and variant not in VARIANTS:
            raise UsageError(f"--target {spec}: no such Python sink variant {variant!r}; known: correct, "
                             f"{', '.join(VARIANTS)}")
        return
    if spec.startswith("kafka-connect:"):
        from adapters import jars, plugins

        try:
            check_spec(spec, list(plugin_path))
            profile, _ = connect_profile(spec)
            if profile in plugins.KINDS:
                runs = plugins.resolve(profile, connect_profile(spec)[1], plugin_path, progress=progress).version
                if profile == "confluent" and version and version != runs:
                    raise UsageError(f"--connector-version {version} is not the version {spec} runs ({runs}): the "
                                     "model holds a connector to the version that runs; drop --connector-version or "
                                     f"pick kafka-connect:{profile}@{version}")
            elif not plugin_path and not os.environ.get("SINKCHECK_PLUGIN_PATH"):
                from adapters.connectors import PROFILES

                jars.ensure(PROFILES[profile].jar_set or profile, quiet=progress is None)
        except (TargetSpecError, plugins.PluginUnavailable, jars.JarFetchError) as e:
            raise UsageError(str(e)) from None
        return
    if spec in BUILTIN:
        return
    if ":" in spec:
        import importlib

        module, _, cls_name = spec.partition(":")
        try:
            getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError) as e:
            raise UsageError(f"--target {spec}: cannot load {cls_name} from {module}: {e}; "
                             "give module:Class of a class implementing adapters.target.Target") from None
        return
    from importlib import metadata

    if not any(ep.name == spec for ep in metadata.entry_points(group="sinkcheck.targets")):
        raise UsageError(f"--target {spec!r}: not a known target; use pysink, kafka-connect:<aiven|camel|confluent>, "
                         "model@<version>, module:Class, or a name under the entry-point group sinkcheck.targets")


def run_model(scenario: Any, spec: str, run_dir: Path) -> Any:
    """The reference model as a target: the objects `reference_impl.model.expect` commits at the
    connector version of `spec` (`model@10.6.3`), shown to the checkers as an observation.
    The model applies no faults (a scenario with faults is unknown here) and has no clock
    (wall-clock rotation gives constraints, not objects: unknown)."""
    from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord,
                                      S3Object, StatusSample)
    from conformance.checkers import RunData, run_checks
    from conformance.claims import claim_for
    from conformance import wire
    from conformance.runner import RunResult, model_config
    from conformance.verdicts import PASS, UNKNOWN
    from reference_impl.contents import encode_view
    from reference_impl.model import expect

    started = time.monotonic()
    version = model_version(spec)
    if version:
        scenario = dataclasses.replace(scenario, connector_version=version)
    run_dir.mkdir(parents=True, exist_ok=True)
    claim = claim_for("confluent", scenario.connector, scenario.faults, scenario.connector_version)
    cfg = model_config(scenario, "confluent")
    t0 = 1_000_000
    next_off: dict[tuple[str, int], int] = {}
    produced, offsets = [], []
    for i, enc in enumerate(wire.records_to_produce(scenario.connector, scenario.records)):
        tp = (enc.topic, enc.partition)
        off = next_off.get(tp, 0)
        next_off[tp] = off + 1
        offsets.append(off)
        produced.append(ProducedRecord(enc.topic, enc.partition, off, enc.timestamp, enc.key, enc.value, enc.headers,
                                       at_ms=t0 + 10 * i))
    records = wire.sink_records(scenario.connector, scenario.records, offsets)
    at_of = {(p.topic, p.partition, p.offset): p.at_ms for p in produced}
    end = t0 + 10 * len(produced) + 10
    exp = expect(cfg, records)
    obs = Observation(produced=produced, quiet=True)
    by_off = {(r.topic, r.partition, r.offset): r for r in records}
    if exp.constraints is None:
        objects: list[tuple[int, S3Object, tuple[str, int], int]] = []
        for o in exp.objects:
            at = at_of.get((o.topic, o.partition, o.committed_offset), end)
            recs = [by_off[(o.topic, o.partition, x)] for x in o.offsets]
            views = ([(o.key, "value")] if o.value_object else []) + [(k, v) for v, k in o.sibling_keys]
            for key, view in views:
                body = encode_view(cfg, recs, view)
                objects.append((at, S3Object(key, len(body), hashlib.md5(body).hexdigest(), body, at),
                                (o.topic, o.partition), o.committed_offset))
        times = sorted({a for a, *_ in objects} | {end})
        for t in times:
            vis = [o for a, o, *_ in objects if a <= t]
            obs.bucket_samples.append(BucketSample(t, tuple(vis)))
            committed: dict[str, int] = {}
            for a, _, tp, k in objects:
                if a <= t:
                    name = f"{tp[0]}-{tp[1]}"
                    committed[name] = max(committed.get(name, 0), k)
            if t == end:
                committed.update(exp.committed_offsets)
            obs.offset_samples.append(OffsetSample(t, committed))
    else:
        obs.bucket_samples.append(BucketSample(end, ()))
    state = "FAILED" if exp.task_failure is not None else "RUNNING"
    obs.statuses.append(StatusSample(end, "RUNNING", (state,), exp.task_failure.message if exp.task_failure else None))
    for f in scenario.faults:
        if f.kind not in ("wait", "wait-fired", "release"):
            obs.faults.append(FaultEvent(f.kind, dict(f.params), False, detail="the model target applies no faults"))
    data = RunData(scenario, spec, obs, claim, cfg, exp, records)
    verdicts = run_checks(data)
    if exp.constraints is not None:
        verdicts = [dataclasses.replace(v, status=UNKNOWN, message="the model gives constraints, not objects, for this "
                                        f"config ({exp.constraints_reason}); would otherwise be: {v.message}")
                    if v.status == PASS else v for v in verdicts]
    return RunResult(scenario, spec, claim, obs, exp, verdicts, time.monotonic() - started, run_dir)


def execute(scenario: Any, spec: str, run_dir: Path, plugin_path: list[str] | None = None, stack: Any = None,
            tag: str | None = None) -> Any:
    """One run. On a warm stack the scenario's topics get `tag` appended (default: one of its
    own): other runs use the stack's broker at the same time. A gate gives both sides of a
    scenario the same tag, on stacks of their own, so their objects keep comparable keys."""
    if spec.startswith("model@") or spec == "model":
        return run_model(scenario, spec, run_dir)
    from conformance.runner import on_shared_stack, run_scenario

    if stack is not None:
        scenario = on_shared_stack(scenario, tag or f"-r{next(_STACK_RUNS)}")
    return run_scenario(scenario, spec, run_dir, plugin_path=plugin_path, stack=stack)


_STACK_RUNS = itertools.count(1)


def only_properties(result: Any, props: set[str] | None) -> Any:
    if not props:
        return result
    from conformance.runner import RunResult

    r = result
    return RunResult(r.scenario, r.target, r.claim, r.observation, r.expectation,
                     [v for v in r.verdicts if v.property in props], r.wall_s, r.run_dir)


def selected(scenario: Any, spec: str, props: set[str] | None) -> bool:
    """A scenario runs when the target's claim for it includes a selected property."""
    if not props:
        return True
    from conformance.claims import claim_for
    from conformance.targets import target_kind

    kind = "confluent" if spec.startswith("model") else target_kind(spec)
    claim = claim_for(kind, scenario.connector, scenario.faults, scenario.connector_version)
    return bool(claim.properties & props)


def slug(text: str) -> str:
    return re.sub(r"[^\w.@-]+", "_", text)[:80]


def scenario_id(scenario: Any) -> str:
    return hashlib.sha1(scenario.dumps().encode()).hexdigest()[:10]


# --- the run ---------------------------------------------------------------------------------

@dataclass
class Session:
    """State of one `sinkcheck run` (or one side of a gate)."""

    out: Path
    term: Terminal
    props: set[str] | None
    deadline: float | None
    plugin_path: list[str]
    results: list[Any] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    origins: dict[str, str] = field(default_factory=dict)
    reproducers: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    done: int = 0
    skipped_budget: int = 0
    total_hint: int = 0
    on_result: Callable[[Any], None] | None = None
    # one warm Kafka stack (broker, S3 server, worker) per Kafka Connect target, for all its runs
    stacks: dict[str, Any] = field(default_factory=dict)
    stack_startup_s: dict[str, float] = field(default_factory=dict)  # how long each warm stack took to start
    notes: list[str] = field(default_factory=list)  # for the report
    _lock: Any = field(default_factory=threading.RLock)  # runs on a warm stack go several at once
    _spare: Any = field(default_factory=threading.local)  # a thread's own stacks (spare_stacks)

    def stack_for(self, spec: str) -> Any:
        if not spec.startswith("kafka-connect:"):
            return None
        spare = getattr(self._spare, "stacks", None)
        if spare is not None and spec in spare:
            return spare[spec]
        if spec not in self.stacks:
            from conformance.targets import start_connect_stack

            self.term.progress(f"[sinkcheck] starting a Kafka broker, an S3 server and a Connect worker for {spec}…")
            t = time.monotonic()
            self.stacks[spec] = start_connect_stack(spec, self.out / "stacks" / slug(spec), self.plugin_path)
            self.stack_startup_s[spec] = time.monotonic() - t
        return self.stacks[spec]

    def spare_stacks(self, specs: list[str]) -> Any:
        """A context in which this thread's runs of `specs` go to stacks of their own, started
        on entry (in this thread: its processes die with it) and stopped on exit: conformance.
        runner.stack_schedule runs the items that need a stack alone on them while the shared ones run."""
        import contextlib

        @contextlib.contextmanager
        def spare() -> Any:
            from conformance.targets import start_connect_stack

            stacks: dict[str, Any] = {}
            try:
                for spec in dict.fromkeys(s for s in specs if s.startswith("kafka-connect:")):
                    stacks[spec] = start_connect_stack(spec, self.out / "stacks" / f"{slug(spec)}-spare",
                                                       self.plugin_path)
                self._spare.stacks = stacks
                yield
            finally:
                self._spare.stacks = None
                for stack in stacks.values():
                    try:
                        stack.stop()
                    except Exception as e:  # noqa: BLE001 - the others are stopped all the same
                        self.term.err(f"sinkcheck: stopping a spare Kafka stack: {e}")
        return spare

    def close(self) -> None:
        """Stop every stack the session started."""
        for stack in self.stacks.values():
            try:
                stack.stop()
            except Exception as e:  # noqa: BLE001 - the others are stopped all the same
                self.term.err(f"sinkcheck: stopping a Kafka stack: {e}")
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
        self.term.progress(f"[sinkcheck] {done} scenarios done, {self.failures()} failed, "
                           f"{len(self.errors)} errors" + (f", {left}" if left else "")
                           + f" · {current}")

    def run_one(self, scenario: Any, spec: str, origin: str, run_dir: Path, record: bool = True,
                tag: str | None = None) -> Any | None:
        with self._lock:
            self.show_progress(f"{scenario.name} on {spec}")
            stack = self.stack_for(spec)
        redacted = redacted_scenario(scenario, self.term.redactor)
        redacted.save(run_dir / "scenario.json")
        try:
            result = execute(scenario, spec, run_dir, self.plugin_path, stack, tag)
        except Exception as e:
            from conformance.scenario import ScenarioError
            from conformance.targets import TargetSpecError
            from reference_impl.config import ConfigError

            if isinstance(e, (TargetSpecError, ScenarioError)):
                raise UsageError(str(e)) from None
            if isinstance(e, ConfigError) and origin != "generated":
                raise UsageError(f"{scenario.name}: the connector config is rejected: {e}") from None
            with self._lock:
                self.errors.append({"scenario": scenario.name, "target": spec, "origin": origin,
                                    "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=8),
                                    "scenario_file": str(run_dir / "scenario.json")})
                self.done += 1
            return None
        result = only_properties(result, self.props)
        with self._lock:
            self.done += 1
            if record:
                self.record(result, origin)
        return result

    def record(self, result: Any, origin: str) -> None:
        self.results.append(result)
        self.origins[str(result.run_dir)] = origin
        if self.on_result:
            self.on_result(result)


def redacted_scenario(scenario: Any, redactor: Any) -> Any:
    return dataclasses.replace(scenario, connector=redactor.config(scenario.connector))


def prepare(scenario: Any, *, connector: dict[str, str] | None, version: str | None, seed: int | None) -> Any:
    """The scenario as this run plays it: under the user's connector config (its records
    re-expressed for that config's converters), at the run's connector version and seed."""
    from conformance import wire

    changes: dict[str, Any] = {}
    if connector is not None:
        changes["connector"] = dict(connector)
        try:
            changes["records"] = wire.reexpress(scenario.records, scenario.connector, connector)
        except wire.NotRealizable as e:
            raise UsageError(f"{scenario.name} under the given connector config: {e}") from None
    if version is not None and scenario.connector_version is None:
        changes["connector_version"] = version
    if seed is not None and scenario.seed is None:
        changes["seed"] = seed
    return dataclasses.replace(scenario, **changes) if changes else scenario


def named_scenarios(names: Sequence[str] | None) -> list[Any]:
    """The named scenarios picked by --scenario, else the suite every target plays."""
    from conformance.named import ALL_NAMED, SUITE

    if names:
        unknown = [n for n in names if n not in ALL_NAMED]
        if unknown:
            raise UsageError(f"--scenario {', '.join(unknown)}: no such named scenario; choose from {', '.join(ALL_NAMED)}")
        return [ALL_NAMED[n]() for n in names]
    return [f() for f in SUITE.values()]


def own_named_scenarios(spec: str) -> list[Any]:
    """The named scenarios about the target's own connector (conformance.named.CONNECTOR_OWN)."""
    from conformance.named import CONNECTOR_OWN
    from conformance.targets import target_kind

    return [f() for f in CONNECTOR_OWN.get(target_kind(spec), {}).values()]


def generated_scenarios(n: int, seed: int | None, derandomize: bool, max_records: int, with_faults: bool = True) -> list[Any]:
    """A deterministic list of generated scenarios for a seed (used by the gate: same input
    on both sides), drawn in the batches `sinkcheck run` draws them in."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    from conformance.strategies import scenarios

    out: list[Any] = []
    seen: set[str] = set()

    def collect(sc: Any) -> None:
        if len(out) < n and sc.dumps() not in seen:
            seen.add(sc.dumps())
            out.append(sc)

    for batch_seed, size in generation_batches(n, seed, derandomize):
        hseed(batch_seed)(settings(database=None, max_examples=size, derandomize=False, deadline=None,
                                   phases=[Phase.generate], suppress_health_check=list(HealthCheck),
                                   verbosity=Verbosity.quiet)(given(scenarios(max_records=max_records,
                                                                             with_faults=with_faults))(collect)))()
    return [dataclasses.replace(sc, name=f"generated-{i:03d}", seed=seed) for i, sc in enumerate(out)]


# generated scenarios come in batches of this many, each from a seed of its own: Hypothesis
# draws each next example near the ones before it, so one long run repeats configs (80
# examples held 23 configs; eight batches of ten, 70)
GENERATION_BATCH = 10


def generation_batches(n: int, seed: int | None, derandomize: bool) -> list[tuple[int, int]]:
    """(Hypothesis seed, examples) of each batch: fixed seeds under a derandomized profile,
    else seeds from the run's seed (printed in every summary)."""
    base = 0 if derandomize or seed is None else seed * 10_007
    return [(base + b, min(GENERATION_BATCH, n - b * GENERATION_BATCH))
            for b in range((n + GENERATION_BATCH - 1) // GENERATION_BATCH)]


class _ClaimedFailure(Exception):
    def __init__(self, result: Any) -> None:
        super().__init__(f"{result.scenario.name}: claimed property failed")
        self.result = result


def run_generated(sess: Session, spec: str, n: int, seed: int | None, derandomize: bool, max_records: int,
                  connector: dict[str, str] | None, version: str | None, with_faults: bool = True) -> None:
    """Generated scenarios through Hypothesis `@given`, so a failing one is shrunk; the
    budget bounds generation and shrinking alike."""
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import seed as hseed
    from hypothesis.errors import HypothesisException

    from conformance.strategies import formats_for, scenarios, value_kinds_for
    from conformance.targets import target_kind
    from conformance.verdicts import failure_signatures

    if n <= 0:
        return
    gen_dir = sess.out / "runs" / slug(spec)
    attempts: dict[str, Any] = {"n": 0, "errored": False, "first_fail": None, "signature": None, "other": 0}
    runs: list[Any] = []
    best: list[Any] = []  # the latest (smallest) failing result seen while shrinking
    seen: set[str] = set()
    strategy = scenarios(max_records=max_records, with_faults=with_faults and not spec.startswith("model"),  # the model applies none
                         formats=formats_for(target_kind(spec)), connector=connector,
                         kinds=value_kinds_for(target_kind(spec)))

    def body(sc: Any) -> None:
        if attempts["errored"] or sess.over_budget():
            if sess.over_budget() and attempts["first_fail"] is None:
                sess.skipped_budget += 1
            return
        sc = prepare(sc, connector=connector, version=version, seed=seed)
        if not selected(sc, spec, sess.props):
            return
        shrinking = attempts["first_fail"] is not None
        if not shrinking:  # every batch starts with the plainest scenario: run it once
            if sc.dumps() in seen:
                return
            seen.add(sc.dumps())
        k = attempts["n"]
        attempts["n"] += 1
        sc = dataclasses.replace(sc, name=f"generated-{k:03d}" + ("-shrink" if shrinking else ""))
        n_err = len(sess.errors)
        result = sess.run_one(sc, spec, "generated", gen_dir / f"gen-{k:03d}", record=False)
        if result is None:
            if len(sess.errors) > n_err:
                attempts["errored"] = True  # no shrinking of internal errors
            return
        runs.append(result)
        signatures = failure_signatures(result.all_verdicts())
        if not signatures:
            return
        if attempts["signature"] is None:
            attempts["first_fail"] = len(runs) - 1
            attempts["signature"] = signatures[0]
        elif attempts["signature"] not in signatures:
            attempts["other"] += 1  # a smaller scenario failing otherwise is another failure: not this one
            return
        best[:] = [result]
        raise _ClaimedFailure(result)

    final = None
    for batch_seed, size in generation_batches(n, seed, derandomize):
        test = hseed(batch_seed)(
            settings(database=None, max_examples=size, derandomize=False, deadline=None, report_multiple_bugs=False,
                     suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)(
                given(strategy)(body)))
        try:
            test()
        except _ClaimedFailure as e:
            final = e.result
        except HypothesisException:
            final = best[0] if best else None  # e.g. Flaky: the budget ran out while re-checking the shrunk example
        except BaseException as e:  # a failure inside hypothesis carrying our failure in a group
            inner = getattr(e, "exceptions", None)
            found = [x for x in inner or [] if isinstance(x, _ClaimedFailure)]
            if not found and not best:
                raise
            final = found[0].result if found else best[0]
        if final is not None or attempts["errored"] or sess.over_budget():
            break
    first = attempts["first_fail"]
    keep = runs if first is None else runs[:first]
    for r in keep:
        sess.record(r, "generated")
    if final is not None:
        original = runs[first] if first is not None else final
        chosen = confirmed_failure(sess, spec, original, final, attempts["signature"] or failure_signatures(
            final.all_verdicts())[0], gen_dir)
        if chosen is not original:
            shrunk = dataclasses.replace(chosen.scenario, name=original.scenario.name + "-shrunk",
                                         notes=f"shrunk by Hypothesis from {len(original.scenario.records)} records and "
                                               f"{len(original.scenario.faults)} faults")
            chosen.scenario = shrunk
            redacted_scenario(shrunk, sess.term.redactor).save(chosen.run_dir / "scenario.json")
        if attempts["other"]:
            sess.notes.append(f"{spec}: while shrinking {original.scenario.name} ({' / '.join(attempts['signature'] or ())}), "
                              f"{attempts['other']} smaller scenarios failed otherwise; they were not taken as its reproducer")
        sess.record(chosen, "generated")
    kept = {str(r.run_dir) for r in sess.results}
    for r in runs:  # shrink attempts that are not reported
        if str(r.run_dir) not in kept:
            shutil.rmtree(r.run_dir, ignore_errors=True)


# how many times a failure found by generation is replayed before it is shown as the reproducer
REPLAYS = 2


def confirmed_failure(sess: Session, spec: str, original: Any, shrunk: Any, signature: tuple[str, str],
                      gen_dir: Path, replays: int = REPLAYS) -> Any:
    """The failing run to show: the shrunk one when its scenario fails the same way (property
    and anomaly) on every replay, else the first one found. A failure that does not come back on
    every replay is marked flaky with how often it did (`result.flaky`): it is never the
    reproducer without saying so."""
    from conformance.verdicts import fails_as

    def reproduced(result: Any, tag: str) -> int:
        hits = 0
        for i in range(replays):
            again = sess.run_one(dataclasses.replace(result.scenario, name=f"{result.scenario.name}-replay{i + 1}"),
                                 spec, "generated", gen_dir / f"{tag}-replay-{i + 1}", record=False)
            hits += 1 if again is not None and fails_as(again.all_verdicts(), signature) else 0
            if again is not None:
                shutil.rmtree(again.run_dir, ignore_errors=True)
        return hits

    candidates = [(shrunk, "shrunk")] + ([(original, "first")] if original is not shrunk else [])
    tried: list[tuple[Any, int]] = []
    for result, tag in candidates:  # the shrunk scenario first
        tried.append((result, reproduced(result, tag)))
        if tried[-1][1] == replays:
            break
    result, hits = max(tried, key=lambda t: t[1])
    if result is not shrunk:
        sess.notes.append(f"{spec}: the shrunk scenario of {original.scenario.name} failed as {' / '.join(signature)} "
                          f"in {tried[0][1]} of {replays} replays; the first one is shown instead")
    result.flaky = None if hits == replays else {
        "reproduced": hits, "replays": replays, "signature": list(signature),
        "note": "; ".join(f"the {tag} scenario failed as {' / '.join(signature)} in {h} of {replays} replays"
                          for (_, tag), (_, h) in zip(candidates, tried))}
    return result


def saved_failures(failures_dir: Path, spec: str) -> list[Path]:
    if not failures_dir.is_dir():
        return []
    return sorted(failures_dir.glob(f"{slug(spec)}--*.json"))


def environment(targets: Sequence[str], connector_versions: set[str], results: Sequence[Any] = ()) -> dict[str, Any]:
    """The report's environment: what each target said of itself (TargetInfo) where it ran,
    sinkcheck's own defaults where it did not."""
    import platform

    import sinkcheck

    infos = [r.target_info for r in results if getattr(r, "target_info", None) is not None]

    def told(what: Callable[[Any], str | None]) -> str:
        return "; ".join(sorted({v for v in map(what, infos) if v}))

    env: dict[str, Any] = {"sinkcheck version": sinkcheck.__version__, "python": platform.python_version(),
                           "targets": ", ".join(targets)}
    connectors = told(lambda i: " ".join(x for x in (i.connector_class, i.connector_version) if x) or None)
    if connectors:
        env["connector"] = connectors
    env["model's connector version"] = ", ".join(sorted(connector_versions)) or "default (model 12.1.9)"
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


def own_preflight(out: Path, term: "Terminal") -> list[dict[str, Any]]:
    """Preflight the kind of S3 server the targets write to (sinkcheck's moto), so the report
    says what the verdicts rest on even when no --preflight file is given."""
    from dataclasses import asdict

    from adapters.supervisor import MotoS3Server
    from sinkcheck.preflight_cmd import preflight

    term.progress("[sinkcheck] preflight of the S3 server…")
    server = MotoS3Server(out / "preflight-s3", bucket="sinkcheck-preflight").start()
    try:
        return [{**asdict(c), "endpoint": "sinkcheck's moto"} for c in preflight(server.endpoint, "sinkcheck-preflight")]
    finally:
        server.stop()


def load_preflight(path: str | None) -> list[dict[str, Any]] | None:
    if not path:
        return None
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise UsageError(f"--preflight: file not found: {path} (write it with sinkcheck preflight --out FILE)") from None
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError(f"--preflight {path}: not a preflight result file: {e}") from None
    checks = doc.get("checks") if isinstance(doc, dict) else doc
    if not isinstance(checks, list):
        raise UsageError(f"--preflight {path}: expected {{\"checks\": [...]}} as written by sinkcheck preflight --out")
    return checks


def resolve_profile(args: Any) -> tuple[str, int, bool, int]:
    profile = args.profile or ("ci" if os.environ.get("CI") else "default")
    n, derandomize, max_records = PROFILES[profile]
    if args.examples is not None:
        if args.examples < 0:
            raise UsageError("--examples must be 0 or more")
        n = args.examples
    if args.seed is not None:
        derandomize = False
    return profile, n, derandomize, max_records


def examples_for(spec: str, profile: str, args: Any) -> int:
    """Generated scenarios for one target: the profile's, many more for a simulated target
    (`--examples` sets it for every target)."""
    from conformance.targets import simulated

    if args.examples is not None:
        return args.examples
    return SIMULATED_EXAMPLES[profile] if simulated(spec) else PROFILES[profile][0]


def resolve_props(props: Sequence[str] | None) -> set[str] | None:
    if not props:
        return None
    from conformance.claims import PROPERTIES

    bad = [p for p in props if p not in PROPERTIES]
    if bad:
        raise UsageError(f"--property {', '.join(bad)}: unknown property; choose from {', '.join(PROPERTIES)}")
    return set(props)


def exit_for(results: list[Any], errors: list[dict[str, Any]]) -> Exit:
    if errors:
        return Exit.INTERNAL
    statuses = {r.status for r in results}
    if "fail" in statuses:
        return Exit.FAILED
    if "unknown" in statuses:
        return Exit.UNKNOWN
    return Exit.OK


def print_outcome(term: Terminal, results: list[Any], errors: list[dict[str, Any]], paths: dict[str, Path],
                  seed: int | None, profile: str, elapsed: float, extra: str = "") -> None:
    from conformance.pytest_plugin import failure_block

    for r in results:
        if r.failed():
            term.out(failure_block(r))
            term.out("  steps:\n" + "\n".join("    " + ln for ln in r.scenario.steps().splitlines()))
            term.out()
    for e in errors:
        term.out(f"ERROR {e['scenario']} on {e['target']}: {e['error']}\n  scenario: {e.get('scenario_file')}")
    n_fail = sum(1 for r in results if r.status == "fail")
    n_unk = sum(1 for r in results if r.status == "unknown")
    n_pass = sum(1 for r in results if r.status == "pass")
    code = exit_for(results, errors)
    word = {Exit.OK: "PASS", Exit.FAILED: "FAIL", Exit.UNKNOWN: "UNKNOWN", Exit.INTERNAL: "ERROR"}[code]
    term.out(f"{word}: {len(results)} runs: {n_pass} passed, {n_fail} failed, {n_unk} unknown, {len(errors)} errors "
             f"in {elapsed:.1f}s · seed {seed} · profile {profile}{extra}")
    for k, p in paths.items():
        term.out(f"  {k:<5} {p}")


def run_target(sess: Session, spec: str, failures_dir: Path, named: list[Any], connector: dict[str, str] | None,
               args: Any, seed: int | None, n_examples: int, derandomize: bool, max_records: int) -> None:
    """One target's share of `sinkcheck run`: saved failures (self-healing), named, generated."""
    runs = sess.out / "runs" / slug(spec)
    # 1. saved failures first; one that now passes is removed (self-healing)
    from conformance.scenario import Scenario, ScenarioError

    for f in saved_failures(failures_dir, spec):
        if sess.over_budget():
            sess.skipped_budget += 1
            continue
        try:
            sc = Scenario.load(f)
        except ScenarioError as e:
            sess.term.err(f"ignoring saved failure {f}: {e}")
            continue
        sc = prepare(sc, connector=connector, version=args.connector_version, seed=None)
        if not selected(sc, spec, sess.props):
            continue
        r = sess.run_one(sc, spec, "saved-failure", runs / f"saved-{f.stem[-12:]}")
        if r is not None and r.status == "pass":
            f.unlink(missing_ok=True)
            sess.term.err(f"saved failure {f.name} passes now: removed")
    # 2. named scenarios, then those about this target's own connector
    if named and not args.scenario:
        named = named + own_named_scenarios(spec)
    todo = [prepare(sc, connector=connector, version=args.connector_version, seed=seed) for sc in named]
    todo = [sc for sc in todo if selected(sc, spec, sess.props)]

    def run_named(sc: Any) -> Any:
        if sess.over_budget():
            with sess._lock:
                sess.skipped_budget += 1
            return None
        return sess.run_one(sc, spec, "named", runs / slug(sc.name))

    if spec.startswith("kafka-connect:"):  # a warm stack: runs that touch only their connector go at once
        from conformance.runner import SPARE_STACKS, needs_stack_alone, stack_schedule

        try:
            sess.stack_for(spec)  # started here: a process dies with the thread that started it
        except Exception as e:  # noqa: BLE001 - the run reports it; the scenarios cannot run
            sess.errors.append({"scenario": "(warm stack)", "target": spec, "origin": "named",
                                "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=8)})
            return
        for r in stack_schedule(todo, needs_stack_alone, run_named, spare=sess.spare_stacks([spec]),
                                spares=SPARE_STACKS):
            if isinstance(r, UsageError):
                raise r
    else:
        for sc in todo:
            run_named(sc)
    # 3. generated scenarios, shrunk on failure
    run_generated(sess, spec, n_examples, seed, derandomize, max_records, connector, args.connector_version,
                  with_faults=not args.no_faults)


def cmd_run(args: Any) -> int:
    from reports import ReportContext, write_reports
    from reports.redact import Redactor

    started = time.monotonic()
    connector = load_connector_config(args.connector_config)
    redactor = Redactor.from_configs(connector)
    term = Terminal(redactor)
    targets = args.target or ["pysink"]
    for t in targets:
        check_target_spec(t, args.plugin_path, term.err, args.connector_version)
        if connector is not None:
            validate_for_target(connector, t, model_version(t) or args.connector_version)
    props = resolve_props(args.property)
    budget = parse_budget(args.budget)
    profile, n_examples, derandomize, max_records = resolve_profile(args)
    seed = args.seed if args.seed is not None else (0 if derandomize else int.from_bytes(os.urandom(3), "big"))
    preflight = load_preflight(args.preflight)
    from conformance.targets import simulated

    needs_s3 = any(not t.startswith("model") and not simulated(t) for t in targets)  # a real S3 server to preflight
    baseline = None
    if args.baseline_results:
        try:
            baseline = json.loads(Path(args.baseline_results).read_text())["results"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UsageError(f"--baseline-results {args.baseline_results}: not a sinkcheck results.json ({e})") from None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures_dir = Path(args.failures_dir)
    named = [] if args.no_named else named_scenarios(args.scenario)
    sess = Session(out, term, props, None if budget is None else started + budget, args.plugin_path)
    examples = {spec: examples_for(spec, profile, args) for spec in targets}
    sess.total_hint = sum(len(saved_failures(failures_dir, spec)) + len(named) + (len(own_named_scenarios(spec)) if named and not args.scenario else 0) + examples[spec] for spec in targets)
    term.err(f"sinkcheck run: {', '.join(targets)} · profile {profile} · seed {seed} · "
             f"{len(named)} named + " + ", ".join(sorted({str(n) for n in examples.values()}))
             + " generated scenarios per target"
             + (f" · budget {fmt_secs(budget)}" if budget is not None else ""))

    try:
        for spec in targets:
            run_target(sess, spec, failures_dir, named, connector, args, seed, examples[spec], derandomize, max_records)
            sess.close()  # a target's stack is done with once its scenarios ran
    finally:
        sess.close()
    if preflight is None and needs_s3 and args.preflight_s3 and (sess.results or sess.errors):
        try:
            preflight = own_preflight(out, term)
        except Exception as e:  # noqa: BLE001 - the report says why it has no preflight
            preflight = [{"check": "preflight of sinkcheck's S3 server", "status": "error", "detail": f"{type(e).__name__}: {e}"}]
    term.progress("")
    if not sess.results and not sess.errors:
        why = []
        if props:
            why.append(f"--property {', '.join(sorted(props))} is claimed by none of the scenarios for {', '.join(targets)}")
        if sess.skipped_budget:
            why.append(f"the budget ({args.budget}) ran out before any scenario ran")
        if not named and not any(examples.values()):
            why.append("no named scenario and --examples 0")
        term.err("sinkcheck run: nothing selected: " + ("; ".join(why) or "no scenario matched") +
                 ". Widen the selection (drop --property, raise --budget or --examples).")
        return Exit.NOTHING_SELECTED

    # reproducers: DIR/failures and .sinkcheck/failures (replayed first next time)
    (out / "failures").mkdir(exist_ok=True)
    reproducers: dict[str, str] = {}
    for r in sess.results:
        if not r.failed():
            continue
        red = redacted_scenario(r.scenario, redactor)
        name = f"{slug(r.target)}--{slug(r.scenario.name)}-{scenario_id(red)}.json"
        p = red.save(out / "failures" / name)
        reproducers[str(r.run_dir)] = str(p)
        if args.save_failures:
            red.save(failures_dir / name)
    for e in sess.errors:
        f = Path(e["scenario_file"])
        if f.exists():
            shutil.copy(f, out / "failures" / f"error--{slug(e['target'])}--{slug(e['scenario'])}.json")
    if args.fixtures:
        from conformance import fidelity

        for r in sess.results:
            if r.target_info is not None and r.target_info.connector_version:
                fidelity.save(r, Path(args.fixtures))
    versions = {r.scenario.connector_version for r in sess.results if r.scenario.connector_version}
    ctx = ReportContext(command="run", seed=seed, profile=profile, duration_s=time.monotonic() - started,
                        environment=environment(targets, versions, sess.results), preflight=preflight, errors=sess.errors,
                        origins=sess.origins, reproducers=reproducers, redactor=redactor, notes=list(sess.notes))
    for spec, secs in sess.stack_startup_s.items():
        ctx.environment[f"warm stack start-up ({spec})"] = f"{secs:.1f} s"
    if sess.skipped_budget:
        ctx.notes.append(f"{sess.skipped_budget} scenarios were not run: the budget ({args.budget}) ran out")
    if baseline is not None:
        from reports.context import entry
        from reports.diff import diff_entries

        ctx.baseline = diff_entries(baseline, [entry(r, ctx) for r in sess.results])
    paths = write_reports(out, sess.results, ctx)
    extra = f" · budget ran out, {sess.skipped_budget} not run" if sess.skipped_budget else ""
    print_outcome(term, sess.results, sess.errors, paths, seed, profile, time.monotonic() - started, extra)
    return exit_for(sess.results, sess.errors)


def add_run_parser(sub: Any) -> None:
    r = sub.add_parser("run", help="run named and generated scenarios against targets and write the reports")
    r.add_argument("--target", action="append", default=None,
                   help="pysink[:broker][:<variant>], kafka-connect:<aiven|camel|confluent>, model@<version>, module:Class "
                        "(repeatable; default pysink)")
    r.add_argument("--connector-config", default=None, help="connector JSON used for every scenario instead of its own")
    r.add_argument("--connector-version", default=None, help="the connector version the model holds the sink to")
    r.add_argument("--profile", choices=tuple(PROFILES), default=None,
                   help="ci (fixed seed, 10 generated), default (25), thorough (100); ci when $CI is set")
    r.add_argument("--budget", default=None, help="wall-clock budget, e.g. 10m; scenarios left when it runs out are not run")
    r.add_argument("--seed", type=int, default=None, help="the seed for generated scenarios (printed in every summary)")
    r.add_argument("--examples", type=int, default=None, help="how many generated scenarios per target (overrides the profile)")
    r.add_argument("--scenario", action="append", default=None, help="run only these named scenarios (repeatable)")
    r.add_argument("--no-named", action="store_true", help="run no named scenarios")
    r.add_argument("--no-faults", action="store_true", help="generated scenarios without fault schedules")
    r.add_argument("--property", action="append", default=None,
                   help="only scenarios whose claim includes this property, and only its verdicts (repeatable)")
    r.add_argument("--preflight", default=None, help="a preflight result file (sinkcheck preflight --out) to embed "
                                                   "instead of preflighting sinkcheck's own S3 server")
    r.add_argument("--no-preflight", dest="preflight_s3", action="store_false",
                   help="do not preflight sinkcheck's S3 server after the run")
    r.add_argument("--baseline-results", default=None, help="an earlier results.json: the report shows changes since it")
    r.add_argument("--failures-dir", default=FAILURES_DIR, help=f"saved failures, replayed first (default {FAILURES_DIR})")
    r.add_argument("--no-save-failures", dest="save_failures", action="store_false", help="do not save failures for next time")
    r.add_argument("--plugin-path", action="append", default=[], help="Kafka Connect plugin directory (Confluent)")
    r.add_argument("--fixtures", default=None, help="write each real connector's run as a fidelity fixture here "
                                                  "(conformance.fidelity: replayed offline through the model)")
    r.add_argument("--out", required=True, help="where report.html, junit.xml, results.json and failures/ go")
    r.set_defaults(func=cmd_run)
