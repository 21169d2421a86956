"""The Python sink as a Target.

    PySinkTarget(run_dir)                                  # in-process log, its own moto
    PySinkTarget(run_dir, mode="broker")                   # a real KRaft broker (own KafkaStack)
    PySinkTarget(run_dir, mode="broker", stack=stack)      # a started KafkaStack (its broker, its S3)
    PySinkTarget(run_dir, variant="commit-before-upload")  # a faulty variant (adapters.pysink.VARIANTS)
    PySinkTarget(run_dir, s3_endpoint=front.endpoint)      # S3 behind the fault front

In-process only: `clock=ManualClock(t0)` makes put() times deterministic, and
`threaded=False` leaves the polling to the caller: `step(at_ms)` sets the clock and runs one
poll (a put() with whatever the log holds, possibly nothing).

Fault kinds: `crash` (the instance dies where it is: nothing closed, nothing committed; a new
one restarts from the committed offsets), `restart` / `restart-task` / `rebalance` /
`add-worker` / `remove-worker` (graceful: close, abort open uploads, commit nothing, restart;
the one instance that runs the task moves to the worker that joined or stays), `pause` (the
instance stops polling; another takes the partitions: in-process at once via the log's group
ownership, over a broker once the group evicts it; `takeover_after_s` waits before that), `resume` (paused instances
go on with what they were doing, then find themselves fenced), `update-config` (config={...},
then a graceful restart).
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from adapters.s3.bucket import BucketReader, settled_samples
from adapters.processes.jars import KAFKA_DESCRIPTION
from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord,
                                  QuietWatch, StatusSample)
from adapters.pysink import VARIANTS
from adapters.pysink.log import InProcessLog
from adapters.pysink.sink import (Clock, InProcessSink, ManualClock, SinkConfigError, SinkInstance, SinkSettings,
                                  wall_clock)
from adapters.pysink.targets.variants import task_class
from adapters.processes.managed import now_ms
from adapters.observation import RecordToProduce
from adapters.target import Fault, Target, TargetError, TargetInfo, UnsupportedFault

FAULTS = ("crash", "restart", "restart-task", "rebalance", "add-worker", "remove-worker", "pause", "resume",
          "update-config")
ACCESS_KEY, SECRET_KEY, REGION = "sinkcheck", "sinkcheck-secret", "us-east-1"


def flat_config(config: Mapping[str, Any] | str) -> tuple[str, dict[str, str]]:
    """(name, flat config) from Connect JSON ({name, config}) or a flat map."""
    if isinstance(config, str):
        config = json.loads(config)
    name = str(config.get("name") or "pysink")
    if isinstance(config.get("config"), Mapping):
        return name, {str(k): str(v) for k, v in config["config"].items()}
    return name, {str(k): str(v) for k, v in config.items() if k != "name"}


class PySinkTarget(Target):
    semantics = "pysink"

    def __init__(self, run_dir: Path | str, mode: str = "inprocess", variant: str | None = None,
                 stack: Any = None, s3_endpoint: str | None = None, *, sample_interval_s: float = 0.15,
                 clock: Clock | None = None, threaded: bool = True, consumer_config: Mapping[str, Any] | None = None,
                 min_part_size: int = 5 * 1024 * 1024):
        if mode not in ("inprocess", "broker"):
            raise TargetError(f"pysink mode {mode!r}: use 'inprocess' (pysink) or 'broker' (pysink:broker)")
        if variant not in (None, "correct") and variant not in VARIANTS:
            raise TargetError(f"unknown pysink variant {variant!r}; known: correct, {', '.join(VARIANTS)}")
        if mode == "broker" and (clock is not None or not threaded):
            raise TargetError("clock= and threaded=False are for the in-process mode only")
        self.run_dir = Path(run_dir)
        self.mode, self.stack, self.s3_endpoint = mode, stack, s3_endpoint
        self.variant = None if variant == "correct" else variant
        self.task_class = task_class(self.variant)  # what the sink's instances run (a variant's own)
        self.sample_interval_s = sample_interval_s
        self.clock: Clock = clock or wall_clock
        self.threaded = threaded
        self.consumer_config = dict(consumer_config or {})
        self.min_part_size = min_part_size
        self.obs = Observation()
        self.sink: SinkInstance | None = None
        self.instances: list[SinkInstance] = []
        self.zombies: list[SinkInstance] = []
        self.scratch: dict = {}  # a sink's local state, kept across its restarts (only a faulty variant uses it)
        self.journal: list = []
        self.log: InProcessLog | None = None
        self.name = "pysink"
        self.topics: dict[str, int] = {}
        self._own_stack = None
        self._moto = None
        self._producer = None
        self._group_offsets = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._reader: BucketReader | None = None
        self.sampler_errors: list[str] = []
        self._config: dict[str, str] = {}
        self.schema_registry: Any = None

    def _now(self) -> int:
        """The time samples and events are stamped with (the simulation's is virtual)."""
        return now_ms()

    @property
    def group(self) -> str:
        return f"connect-{self.name}"

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self, connector_config: Mapping[str, Any] | str, topics: Mapping[str, int]) -> None:
        import boto3
        from botocore.config import Config

        self.name, self._config = flat_config(connector_config)
        self.schema_registry = None
        self.settings = self._settings(self._config)
        self.topics = dict(topics)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self.mode == "broker" and self.stack is None:
                from adapters.processes.stack import KafkaStack

                self._own_stack = KafkaStack(self.run_dir / "kafka", workers=0, with_s3=self.s3_endpoint is None)
                self._own_stack.broker.extra_props["group.min.session.timeout.ms"] = 1000
                self.stack = self._own_stack.start()
            self.schema_registry = self._registry(self.settings.registry_url)
            if self.schema_registry is not None:
                self.settings.attach_registry(self.schema_registry)
            endpoint = self.s3_endpoint
            if endpoint is None and self.stack is not None and self.stack.s3 is not None:
                endpoint = self.stack.s3.endpoint
            if endpoint is None:
                from adapters.processes.moto import MotoS3Server

                self._moto = MotoS3Server(self.run_dir / "s3", bucket=self.settings.bucket).start()
                endpoint = self._moto.endpoint
            self.endpoint = endpoint
            kw = dict(endpoint_url=endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY,
                      aws_secret_access_key=SECRET_KEY)
            # the sink sees every S3 error (no SDK retries): it classifies them itself (R7.4)
            self.s3 = boto3.client("s3", **kw, config=Config(s3={"addressing_style": "path"}, read_timeout=120,
                                                             connect_timeout=10,
                                                             retries={"total_max_attempts": 1, "mode": "standard"}))
            self._sample_s3 = boto3.client("s3", **kw, config=Config(s3={"addressing_style": "path"}, read_timeout=30,
                                                                     connect_timeout=5, retries={"max_attempts": 3}))
            try:
                self._sample_s3.create_bucket(Bucket=self.settings.bucket)
            except Exception:
                pass  # already there
            if self.mode == "broker":
                self.obs.log_paths.update(self.stack.log_paths())
                from adapters.kafka.produce import create_topics, fresh_topics

                if self._own_stack is None:  # a warm stack: an earlier run's topics and objects go
                    fresh_topics(self.stack.bootstrap, self.topics)
                    self._empty_bucket()
                else:
                    create_topics(self.stack.bootstrap, self.topics)
            else:
                self.log = InProcessLog()
                self.log.create(self.topics)
            self._new_instance()
        except BaseException:
            self.stop()
            raise
        self._sampler = threading.Thread(target=self._sample_loop, name="pysink-sampler", daemon=True)
        self._sampler.start()

    def _registry(self, url: str | None) -> Any:
        """The Schema Registry its converters read from: in process, one in memory of its own (the
        producer registers its schemas there); over a broker, the stack's real one, which the
        config's URL stands for (a user's registry is never contacted)."""
        if url is None:
            return None
        if self.mode == "inprocess":
            from adapters.registry.memory import InMemoryRegistry

            return InMemoryRegistry()
        from adapters.registry.recording import stack_registry

        return stack_registry(self.stack.schema_registry(), self._config)

    def _empty_bucket(self) -> None:
        c, bucket = self._sample_s3, self.settings.bucket
        for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                c.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
        for u in c.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            c.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])

    def _settings(self, cfg: dict[str, str]) -> SinkSettings:
        try:
            settings = SinkSettings.from_config(cfg, min_part_size=self.min_part_size)
        except SinkConfigError as e:
            raise TargetError(f"connector config rejected by the Python sink: {e}") from None
        if self.schema_registry is not None:  # a config update keeps the registry the records are in
            settings.attach_registry(self.schema_registry)
        return settings

    def _new_instance(self) -> SinkInstance:
        kw = dict(task_class=self.task_class, scratch=self.scratch, journal=self.journal, name=self.name)
        if self.mode == "broker":
            from adapters.pysink.kafka import KafkaSink, assignment_strategy, consumer_timeouts

            short = self._own_stack is not None or str(
                getattr(getattr(self.stack, "broker", None), "extra_props", {}).get("group.min.session.timeout.ms")) == "1000"
            cc = {**consumer_timeouts(short), **assignment_strategy(self._config), **self.consumer_config}
            inst: SinkInstance = KafkaSink(self.stack.bootstrap, self.s3, self.settings, group=self.group,
                                           topics=sorted(self.topics), consumer_config=cc,
                                           name=f"{self.name}-{len(self.instances) + 1}",
                                           **{k: v for k, v in kw.items() if k != "name"})
        else:
            assert self.log is not None
            inst = InProcessSink(self.log, self.s3, self.settings, group=self.group, clock=self.clock, **kw)
        self.instances.append(inst)
        self.sink = inst
        if self.threaded:
            inst.start()
        return inst

    def stop(self) -> None:
        self._stop.set()
        for s in self.instances:
            s.kill()
        for s in self.instances:
            if s.thread is not None and s.thread.is_alive():
                s.thread.join(timeout=10)
        if self._sampler is not None:
            self._sampler.join(timeout=10)
            self._sampler = None
        if self._producer is not None:
            self._producer.flush(5)
            self._producer = None
        if self._group_offsets is not None:
            self._group_offsets.close()
            self._group_offsets = None
        if self._moto is not None:
            self._moto.stop()
            self._moto = None
        if self._own_stack is not None:
            self._own_stack.stop()
            self._own_stack = None
            self.stack = None

    def info(self) -> TargetInfo:
        return TargetInfo(name="pysink" + (":broker" if self.mode == "broker" else "")
                          + (f":{self.variant}" if self.variant else ""),
                          connector_class="sinkcheck Python sink", connector_version="0.2.0",
                          kafka_version=KAFKA_DESCRIPTION if self.mode == "broker"
                          else "in-process log", s3_server="moto",
                          extra={"variant": self.variant or "correct",
                                 **({"variant.description": VARIANTS[self.variant]} if self.variant else {}),
                                 **({"schema registry": self._registry_description()}
                                    if self.schema_registry is not None else {})})

    def _registry_description(self) -> str:
        url = self.settings.registry_url
        if self.mode == "inprocess":
            return (f"sinkcheck's in-memory Schema Registry (Confluent's semantics: ids, subjects, versions, "
                    f"compatibility), held to the real one by tests/test_registry.py; the config's "
                    f"schema.registry.url={url} is not contacted")
        return str(self.schema_registry.describe)

    # --- Kafka helpers (broker mode) ---------------------------------------------------------
    def _offsets(self):
        if self._group_offsets is None:
            from adapters.kafka.group_offsets import GroupOffsets

            self._group_offsets = GroupOffsets(self.stack.bootstrap, self.group)
        return self._group_offsets

    def committed(self) -> dict[tuple[str, int], int]:
        if self.mode != "broker":
            assert self.log is not None
            return self.log.committed(self.group)
        return self._offsets().committed(self.topics)

    def log_ends(self) -> dict[tuple[str, int], int]:
        if self.mode != "broker":
            assert self.log is not None
            return self.log.ends()
        return self._offsets().log_ends(self.topics)

    # --- produce -----------------------------------------------------------------------------
    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        if self.mode == "broker":
            offsets = self._produce_kafka(records)
        else:
            assert self.log is not None
            offsets = [self.log.append(r.topic, r.partition, r.timestamp, r.key, r.value, tuple(r.headers))
                       for r in records]
        with self._lock:
            self.obs.produced.extend(ProducedRecord.landed(records, offsets, self._now()))
        return offsets

    def _produce_kafka(self, records: Sequence[RecordToProduce]) -> list[int]:
        from adapters.kafka.produce import new_producer, produce_records

        if self._producer is None:
            self._producer = new_producer(self.stack.bootstrap)
        return produce_records(self._producer, records)

    # --- faults ------------------------------------------------------------------------------
    def apply_fault(self, fault: Fault) -> None:
        kind, params = fault.kind, dict(fault.params)
        if kind not in FAULTS:
            raise UnsupportedFault(f"fault {kind!r} is not supported by the Python sink; supported: {', '.join(FAULTS)}")
        assert self.sink is not None
        at = self._now()
        old = self.sink
        restart_from = None
        if kind == "crash":
            old.kill()  # where it is: nothing closed, nothing committed
            self._new_instance()
            detail = f"{old.name} killed; {self.sink.name} restarts from the committed offsets"
        elif kind in ("restart", "restart-task", "rebalance", "add-worker", "remove-worker"):
            # one instance runs the task: a worker joining or leaving moves it, a rebalance
            self._stop_instance(old)
            self._new_instance()
            detail = f"{old.name} closed (open uploads aborted, nothing committed); {self.sink.name} started"
        elif kind == "update-config":
            self._config.update({str(k): str(v) for k, v in dict(params.get("config", {})).items()})
            self.settings = self._settings(self._config)
            self._stop_instance(old)
            restart_from = {f"{t}-{p}": o for (t, p), o in self.committed().items()}
            self._new_instance()
            detail = f"config updated ({sorted(params.get('config', {}))}); {self.sink.name} started"
        elif kind == "pause":
            old.pause()
            self.zombies.append(old)
            time.sleep(float(params.get("takeover_after_s", 0.2 if self.mode == "inprocess" else 0)))
            new = self._new_instance()
            detail = f"{old.name} paused; {new.name} takes the partitions"
            if self.mode == "broker" and params.get("wait_takeover", True):
                limit = float(params.get("takeover_timeout_s", 30))
                deadline = time.monotonic() + limit
                while time.monotonic() < deadline and len(new.positions) < sum(self.topics.values()):
                    time.sleep(0.1)
                detail += f" (assigned {len(new.positions)} partition(s) after {time.monotonic() - deadline + limit:.1f}s)"
        else:  # resume
            for z in self.zombies:
                z.resume()
            detail = f"resumed {[z.name for z in self.zombies]}"
            self.zombies = []
        with self._lock:
            self.obs.faults.append(FaultEvent(kind, params, True, at, self._now(), f"pysink: {detail}",
                                              restart_from=restart_from))

    def _stop_instance(self, inst: SinkInstance) -> None:
        """A graceful stop: the instance closes its writers (aborting their uploads) and exits."""
        inst.stop()

    # --- in-process stepping -------------------------------------------------------------------
    def step(self, at_ms: int | None = None) -> None:
        """threaded=False: set the ManualClock (if given) and run one poll of the current instance."""
        if self.threaded:
            raise TargetError("step() is for threaded=False targets")
        if at_ms is not None:
            if not isinstance(self.clock, ManualClock):
                raise TargetError("step(at_ms) needs clock=ManualClock(...)")
            self.clock.set(at_ms)
        assert self.sink is not None
        try:
            self.sink.poll_once()
        except Exception as e:
            if self.sink.error is None:
                self.sink.error = f"{type(e).__name__}: {e}"
            raise

    # --- observing ---------------------------------------------------------------------------
    def sample_bucket(self) -> BucketSample:
        if self._reader is None:
            self._reader = BucketReader(self._sample_s3, self.settings.bucket, clock=self._now)
        return self._reader.sample()

    def _sample(self, final: bool = False) -> None:
        # offsets first, listing after: whatever was committed must already be in the listing
        committed = {f"{t}-{p}": o for (t, p), o in self.committed().items()}
        gen = self.log.owner(self.group) if self.log is not None else None
        with self._lock:  # in before the listing: samples taken meanwhile (a settling final) come after it
            self.obs.offset_samples.append(OffsetSample(self._now(), committed, gen))
        buckets = self._final_samples() if final else [self.sample_bucket()]
        with self._lock:
            self.obs.bucket_samples.extend(buckets)

    def _final_samples(self) -> list[BucketSample]:
        return settled_samples(self.sample_bucket)

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.sample_interval_s):
            try:
                self._sample()
            except Exception as e:  # S3 or the broker briefly unreachable: the next sample tells
                if len(self.sampler_errors) < 100:
                    self.sampler_errors.append(f"{type(e).__name__}: {e}")

    def _moving(self) -> tuple[bool, str, Any]:
        """(settled?, what is still moving, state to compare over time)."""
        s = self.sink
        assert s is not None
        if s.error:
            return True, "", ("failed", s.error)
        ends = self.log_ends()
        behind = {f"{t}-{p}": e - s.positions[(t, p)] if (t, p) in s.positions else "unassigned"
                  for (t, p), e in ends.items() if (t, p) not in s.positions or s.positions[(t, p)] < e}
        awake = [z.name for z in self.instances if z is not s and self._still_running(z)]
        pending = s.pending()
        committed = self.committed()
        parts = []
        if behind:
            parts.append(f"records behind per partition {behind}")
        if pending:
            parts.append("a put or a commit is pending")
        if awake:
            parts.append(f"resumed instances still running: {awake}")
        return not (behind or pending or awake), "; ".join(parts), (sorted(committed.items()), len(self.journal))

    def _still_running(self, inst: SinkInstance) -> bool:
        """An instance other than the current one still at work (a resumed zombie)."""
        return (inst.thread is not None and inst.thread.is_alive() and inst.running.is_set()
                and not inst.killed.is_set())

    def wait_until_quiet(self, timeout_s: float, stable_s: float | None = None) -> bool:
        """Quiet: the sink has read to the log end, nothing is pending, no resumed zombie is
        still running, and the committed offsets (and the sink's journal) have not moved for
        `stable_s` (0.6 s in-process, 2 s over a broker). Records that cannot be committed
        yet (the open tail) do not count."""
        stable_s = stable_s if stable_s is not None else (2.0 if self.mode == "broker" else 0.6)
        deadline = time.monotonic() + timeout_s
        watch = QuietWatch(self.obs, self._lock, time.monotonic())
        steps = 0
        while True:
            if not self.threaded and steps < 10_000 and self.sink is not None and not self.sink.error:
                try:
                    self.sink.poll_once()
                except Exception as e:
                    self.sink.error = f"{type(e).__name__}: {e}"
                steps += 1
            try:
                settled, moving, state = self._moving()
            except Exception as e:  # noqa: BLE001
                settled, moving, state = False, f"could not sample: {e}", None
            now = time.monotonic()
            unchanged = watch.unchanged_for(state, now)
            if settled and (unchanged >= stable_s or not self.threaded):
                return watch.end(True)
            if now >= deadline:
                return watch.end(False, f"after {timeout_s:.0f}s the Python sink was still moving: "
                                        f"{moving or f'committed offsets changed {unchanged:.1f}s ago'}")
            time.sleep(0.05 if self.threaded else 0)

    def observe(self) -> Observation:
        try:
            self._sample(final=True)
        except Exception as e:  # noqa: BLE001
            with self._lock:
                self.obs.still_moving += f" (final sample failed: {e})"
        s = self.sink
        state = "FAILED" if s is not None and s.error else "RUNNING"
        tasks = tuple("FAILED" if i.error else "RUNNING" if not i.exited else "UNASSIGNED" for i in self.instances[-1:])
        path = self.run_dir / "pysink-journal.jsonl"
        try:
            with open(path, "w") as f:
                for ev in list(self.journal):
                    f.write(json.dumps(ev, default=str) + "\n")
        except (OSError, TypeError, ValueError):
            pass
        with self._lock:
            self.obs.statuses.append(StatusSample(self._now(), state, tasks, s.error if s else None))
            self.obs.log_paths["pysink-journal"] = str(path)
            obs = Observation(list(self.obs.produced), list(self.obs.bucket_samples), list(self.obs.offset_samples),
                              list(self.obs.faults), list(self.obs.statuses), self.obs.quiet, self.obs.still_moving,
                              dict(self.obs.log_paths))
            obs.puts = list(self.obs.puts) if self.obs.puts is not None else None
        reg = getattr(self, "schema_registry", None)
        obs.registry = reg.snapshot() if reg is not None else None
        return obs
