"""Spark Structured Streaming as a Target: a query from Kafka to S3 (`spark-sql-kafka-0-10` at
pyspark's version, S3A to moto) with its checkpoint on local disk, in its own OS process.

    t = SparkStreamingTarget(run_dir)                          # its own broker and moto
    t = SparkStreamingTarget(run_dir, s3_endpoint=front.endpoint)  # S3 behind the fault front
    t.start({"output.prefix": "spark-out", "trigger.interval.ms": "500"}, {"t": 2})
    t.produce([...]); t.apply_fault(Fault("crash")); t.wait_until_quiet(120)
    obs = t.observe(); t.stop()

The "connector config" is this target's own flat map (unknown keys are an error):
    s3.bucket.name             the bucket (default sinkcheck)
    output.prefix              the output directory in it (default spark-out): s3a://<bucket>/<prefix>
    trigger.interval.ms        processing-time trigger (default 500; 0: the next batch at once)
    max.offsets.per.trigger    caps a batch (default: no cap)
    metadata.compact.interval  spark.sql.streaming.fileSink.log.compactInterval (default 10)

Objects: the `text` file sink, one line per non-null Kafka value (so one JSON value a line:
`object_format = "jsonl"`). The observation's bucket samples carry, in `committed_keys`, the
files the sink's `_spark_metadata` log lists at that moment (the log's own files are in the
sample with their bodies); its offset samples are the Kafka end offsets of the latest
*committed* batch (checkpoint `commits/` and `offsets/`).

Fault kinds: `crash` (SIGKILL the query's process group, driver JVM included, wherever it is;
start it again on the same checkpoint; params: downtime_s=0, restart=True).
"""
from __future__ import annotations

import json
import sys
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

from adapters.s3.bucket import BucketReader, settled_samples
from adapters.processes.jars import KAFKA_DESCRIPTION
from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord, S3Object,
                                  QuietWatch, StatusSample)
from adapters.spark_streaming.logs import METADATA_DIR, CheckpointState, read_checkpoint, read_metadata_log
from adapters.processes.managed import ManagedProcess, now_ms, tail, wait_until
from adapters.observation import RecordToProduce
from adapters.target import Fault, Target, TargetError, TargetInfo, UnsupportedFault

FAULTS = ("crash",)
ACCESS_KEY, SECRET_KEY, REGION = "sinkcheck", "sinkcheck-secret", "us-east-1"
CONFIG_KEYS = {
    "s3.bucket.name": "sinkcheck",
    "output.prefix": "spark-out",
    "trigger.interval.ms": "500",
    "max.offsets.per.trigger": "",
    "metadata.compact.interval": "10",
}


def spark_config(config: Mapping[str, Any] | str) -> tuple[str, dict[str, str]]:
    """(name, settings) from {"name", "config": {...}} or a flat map; unknown keys are an error
    that names them, bad values one that names the key."""
    if isinstance(config, str):
        config = json.loads(config)
    name = str(config.get("name") or "spark-streaming")
    flat = config["config"] if isinstance(config.get("config"), Mapping) else {k: v for k, v in config.items()
                                                                                if k != "name"}
    flat = {str(k): str(v) for k, v in flat.items()}
    unknown = sorted(set(flat) - set(CONFIG_KEYS))
    if unknown:
        raise TargetError(f"the Spark Structured Streaming target does not know the config key(s) "
                          f"{', '.join(repr(k) for k in unknown)}; it takes {', '.join(CONFIG_KEYS)}")
    out = {**CONFIG_KEYS, **flat}
    for k in ("trigger.interval.ms", "max.offsets.per.trigger", "metadata.compact.interval"):
        v = out[k]
        if v == "" and k == "max.offsets.per.trigger":
            continue
        if not v.isdigit() or (k != "trigger.interval.ms" and int(v) < 1):
            raise TargetError(f"config {k}={v!r}: a whole number"
                              + (" >= 1" if k != "trigger.interval.ms" else " >= 0") + " is needed")
    out["output.prefix"] = out["output.prefix"].strip("/")
    if not out["output.prefix"]:
        raise TargetError("config output.prefix is empty: the output must be a directory in the bucket")
    return name, out


class SparkStreamingTarget(Target):
    semantics = "spark-streaming"
    object_format = "jsonl"  # one JSON value a line (the text sink writes each value as a line)

    def __init__(self, run_dir: Path | str, s3_endpoint: str | None = None, *, stack: Any = None,
                 sample_interval_s: float = 0.5, driver_memory: str = "768m", cores: int = 2,
                 start_timeout_s: float = 180, log_level: str = "WARN"):
        self.run_dir = Path(run_dir)
        self.s3_endpoint = s3_endpoint
        self.stack = stack
        self.sample_interval_s = sample_interval_s
        self.driver_memory = driver_memory
        self.cores = cores
        self.start_timeout_s = start_timeout_s
        self.log_level = log_level
        self.obs = Observation()
        self.name = "spark-streaming"
        self.settings: dict[str, str] = dict(CONFIG_KEYS)
        self.topics: dict[str, int] = {}
        self.proc: ManagedProcess | None = None
        self.crashes: list[dict[str, Any]] = []
        self.sampler_errors: list[str] = []
        self._own_stack = None
        self._producer = None
        self._offsets = None
        self._s3 = None
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._reader: BucketReader | None = None
        self.endpoint: str | None = None

    # --- paths -----------------------------------------------------------------------------------
    @property
    def query_dir(self) -> Path:
        return self.run_dir / "spark-query"

    @property
    def checkpoint(self) -> Path:
        return self.query_dir / "checkpoint"

    @property
    def status_path(self) -> Path:
        return self.query_dir / "status.json"

    @property
    def log_path(self) -> Path:
        return self.query_dir / "query.log"

    @property
    def bucket(self) -> str:
        return self.settings["s3.bucket.name"]

    @property
    def prefix(self) -> str:
        return self.settings["output.prefix"]

    @property
    def output(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}"

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self, connector_config: Mapping[str, Any] | str, topics: Mapping[str, int]) -> None:
        import boto3
        from botocore.config import Config

        self.name, self.settings = spark_config(connector_config)
        self.topics = dict(topics)
        self.query_dir.mkdir(parents=True, exist_ok=True)
        try:
            jars = self._jars()
            if self.stack is None:
                from adapters.processes.stack import KafkaStack

                self._own_stack = KafkaStack(self.run_dir / "kafka", workers=0, with_s3=self.s3_endpoint is None)
                self.stack = self._own_stack.start()
            self.endpoint = self.s3_endpoint or (self.stack.s3.endpoint if self.stack.s3 is not None else None)
            if self.endpoint is None:
                raise TargetError("no S3 endpoint: give s3_endpoint= or a stack with an S3 server")
            self._s3 = boto3.client("s3", endpoint_url=self.endpoint, region_name=REGION,
                                    aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                                    config=Config(s3={"addressing_style": "path"}, read_timeout=30,
                                                  connect_timeout=5, retries={"max_attempts": 3}))
            try:
                self._s3.create_bucket(Bucket=self.bucket)
            except Exception:  # noqa: BLE001 - already there
                pass
            self.obs.log_paths.update(self.stack.log_paths())
            self.obs.log_paths["spark-query"] = str(self.log_path)
            from adapters.kafka.produce import create_topics

            create_topics(self.stack.bootstrap, self.topics)
            self._write_query_file(jars)
            self.proc = ManagedProcess("spark-query", [sys.executable, "-m", "adapters.spark_streaming.query",
                                                       str(self.query_dir / "query.json")],
                                       self.log_path, env={"PYSPARK_PYTHON": sys.executable,
                                                           "SPARK_LOCAL_IP": "127.0.0.1"},
                                       cwd=Path(__file__).resolve().parents[2])
            self._start_query()
        except BaseException:
            self.stop()
            raise
        self._sampler = threading.Thread(target=self._sample_loop, name="spark-sampler", daemon=True)
        self._sampler.start()

    def _jars(self) -> list[str]:
        from adapters.processes.jars import JarFetchError, jar_files

        try:
            return jar_files("spark-kafka") + jar_files("spark-s3a")
        except JarFetchError as e:
            raise TargetError(f"Spark's Kafka source and S3A jars are not available: {e}") from None

    def _write_query_file(self, jars: list[str]) -> None:
        s = self.settings
        q = {
            "bootstrap": self.stack.bootstrap, "topics": sorted(self.topics), "output": self.output,
            "checkpoint": str(self.checkpoint), "status": str(self.status_path),
            "trigger_ms": int(s["trigger.interval.ms"]),
            "max_offsets_per_trigger": int(s["max.offsets.per.trigger"]) if s["max.offsets.per.trigger"] else None,
            "compact_interval": int(s["metadata.compact.interval"]),
            "endpoint": self.endpoint, "region": REGION, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY,
            "jars": jars, "local_dir": str(self.query_dir / "tmp"), "cores": self.cores,
            "driver_memory": self.driver_memory, "log_level": self.log_level,
        }
        (self.query_dir / "query.json").write_text(json.dumps(q, indent=1))

    def _status(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return None

    def _start_query(self) -> None:
        assert self.proc is not None
        self.status_path.unlink(missing_ok=True)
        self.proc.start()
        pid = self.proc.pid

        def active() -> bool:
            st = self._status()
            if st and st.get("pid") == pid and st.get("phase") == "failed":
                raise TargetError(f"the Spark query failed to start: {st.get('exception')}; log: {self.log_path}\n"
                                  f"{tail(self.log_path)}")
            return bool(st and st.get("pid") == pid and st.get("active"))

        wait_until(active, self.start_timeout_s,
                   f"the Spark query (run #{self.proc.starts}, pid {pid}) to become active",
                   log=self.log_path, proc=self.proc, interval_s=0.3, fatal=(TargetError,))
        with self._lock:
            self.obs.statuses.append(StatusSample(now_ms(), "RUNNING", ("RUNNING",)))

    def stop(self) -> None:
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join(timeout=15)
            self._sampler = None
        if self.proc is not None:
            self.proc.stop(timeout_s=5)
        if self._producer is not None:
            self._producer.flush(5)
            self._producer = None
        if self._offsets is not None:
            self._offsets.close()
            self._offsets = None
        if self._own_stack is not None:
            self._own_stack.stop()
            self._own_stack = None
            self.stack = None

    def info(self) -> TargetInfo:
        try:
            version = metadata.version("pyspark")
        except metadata.PackageNotFoundError:
            version = "unknown"
        return TargetInfo(name="spark-streaming",
                          connector_class="Spark Structured Streaming (Kafka source -> text file sink, S3A)",
                          connector_version=f"pyspark {version}", kafka_version=KAFKA_DESCRIPTION, s3_server="moto",
                          extra={"output": self.output, "checkpoint": str(self.checkpoint),
                                 "trigger.interval.ms": self.settings["trigger.interval.ms"],
                                 "metadata.compact.interval": self.settings["metadata.compact.interval"]})

    # --- Kafka -----------------------------------------------------------------------------------
    def log_ends(self) -> dict[str, int]:
        if self._offsets is None:
            from adapters.kafka.group_offsets import GroupOffsets

            # the query keeps its offsets in its checkpoint, not in a group: any id reads log ends
            self._offsets = GroupOffsets(self.stack.bootstrap, "sinkcheck-log-ends")
        return {f"{t}-{p}": o for (t, p), o in self._offsets.log_ends(self.topics).items()}

    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        from adapters.kafka.produce import new_producer, produce_records

        if self._producer is None:
            self._producer = new_producer(self.stack.bootstrap)
        offsets = produce_records(self._producer, records)
        with self._lock:
            self.obs.produced.extend(ProducedRecord.landed(records, offsets, now_ms()))
        return offsets

    # --- faults ----------------------------------------------------------------------------------
    def apply_fault(self, fault: Fault) -> None:
        kind, params = fault.kind, dict(fault.params)
        if kind not in FAULTS:
            raise UnsupportedFault(f"fault {kind!r} is not supported by the Spark Structured Streaming target; "
                              f"supported: {', '.join(FAULTS)}")
        if self.proc is None:
            raise TargetError("crash before start: the query is not running")
        ck = read_checkpoint(self.checkpoint)
        st = self._status() or {}
        pid, run = self.proc.pid, self.proc.starts
        was_alive = self.proc.alive
        at = now_ms()
        self.proc.kill()
        killed = now_ms()
        crash = {"at_ms": at, "pid": pid, "run": run, "was_alive": was_alive, "checkpoint": ck,
                 "in_flight": ck.in_flight, "query_status": (st.get("status") or {}).get("message")}
        self.crashes.append(crash)
        with self._lock:
            self.obs.statuses.append(StatusSample(killed, "RUNNING", ("KILLED",)))
        detail = (f"query process group (pid {pid}, run #{run}) SIGKILLed"
                  + ("" if was_alive else " (it had already exited)")
                  + f"; checkpoint at the kill: {ck.describe()}")
        time.sleep(float(params.get("downtime_s", 0)))
        if params.get("restart", True):
            self._start_query()
            detail += f"; restarted as run #{self.proc.starts} (pid {self.proc.pid}) on the same checkpoint"
        with self._lock:
            self.obs.faults.append(FaultEvent(kind, params, True, at, now_ms(), f"spark-streaming: {detail}"))

    # --- observing -------------------------------------------------------------------------------
    def sample_bucket(self) -> BucketSample:
        if self._reader is None:
            self._reader = BucketReader(self._s3, self.bucket)
        return self._reader.sample(self._log_keys)

    def _log_keys(self, objs: tuple[S3Object, ...]) -> tuple[str, ...] | None:
        """The data files the _spark_metadata log lists in this listing."""
        log = read_metadata_log({o.key: o.body for o in objs}, self.bucket, self.prefix)
        if log.problems and len(self.sampler_errors) < 100:
            self.sampler_errors.append(f"metadata log: {'; '.join(log.problems)}")
        return log.keys

    def _sample(self, final: bool = False) -> None:
        # the checkpoint first, the bucket after: a committed batch must already be in the listing
        ck = read_checkpoint(self.checkpoint)
        off = OffsetSample(now_ms(), dict(ck.committed_offsets), self.proc.starts if self.proc else None)
        with self._lock:  # in before a settling final listing lets the sampler add later ones
            self.obs.offset_samples.append(off)
        buckets = settled_samples(self.sample_bucket) if final else [self.sample_bucket()]
        with self._lock:
            self.obs.bucket_samples.extend(buckets)

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.sample_interval_s):
            try:
                self._sample()
            except Exception as e:  # noqa: BLE001 - S3 briefly unreachable: the next sample tells
                if len(self.sampler_errors) < 100:
                    self.sampler_errors.append(f"{type(e).__name__}: {e}")

    def checkpoint_state(self) -> CheckpointState:
        return read_checkpoint(self.checkpoint)

    def _moving(self) -> tuple[bool, str, Any]:
        """(settled?, what is still moving, state to compare over time)."""
        assert self.proc is not None
        if not self.proc.alive:
            return True, "", ("exited", self.proc.returncode)  # nothing moves; liveness says it died
        ck = read_checkpoint(self.checkpoint)
        ends = self.log_ends()
        behind = {tp: end - ck.committed_offsets.get(tp, 0) for tp, end in sorted(ends.items())
                  if ck.committed_offsets.get(tp, 0) < end}
        parts = []
        if behind:
            parts.append(f"records not in a committed batch per partition {behind}")
        if ck.in_flight is not None:
            parts.append(f"batch {ck.in_flight} in flight (offsets/{ck.in_flight} written, commits/{ck.in_flight} absent)")
        st = self._status() or {}
        if parts and st.get("status"):
            parts.append(f"query status: {st['status'].get('message')}")
        return not parts, "; ".join(parts), (ck.planned, ck.committed)

    def wait_until_quiet(self, timeout_s: float, stable_s: float = 1.0) -> bool:
        """Quiet: the latest committed batch of the checkpoint covers the log end of every
        partition, no batch is in flight, and that has held for `stable_s`. A query process
        that has exited is quiet too (nothing moves; the status says it failed)."""
        deadline = time.monotonic() + timeout_s
        watch = QuietWatch(self.obs, self._lock, time.monotonic())
        while True:
            try:
                settled, moving, state = self._moving()
            except Exception as e:  # noqa: BLE001
                settled, moving, state = False, f"could not sample: {e}", None
            now = time.monotonic()
            unchanged = watch.unchanged_for(state, now)
            if settled and unchanged >= stable_s:
                return watch.end(True)
            if now >= deadline:
                return watch.end(False, f"after {timeout_s:.0f}s the Spark query was still moving: "
                                        f"{moving or f'the checkpoint changed {unchanged:.1f}s ago'}")
            time.sleep(0.2)

    def observe(self) -> Observation:
        try:
            self._sample(final=True)
        except Exception as e:  # noqa: BLE001
            with self._lock:
                self.obs.still_moving += f" (final sample failed: {e})"
        st = self._status() or {}
        if self.proc is not None and not self.proc.alive:
            trace = st.get("exception") or f"the query process exited with code {self.proc.returncode}"
            status = StatusSample(now_ms(), "FAILED", ("FAILED",), f"{trace}; log: {self.log_path}")
        else:
            status = StatusSample(now_ms(), "RUNNING", ("RUNNING",))
        with self._lock:
            self.obs.statuses.append(status)
            self.obs.log_paths["spark-query-status"] = str(self.status_path)
            return Observation(list(self.obs.produced), list(self.obs.bucket_samples),
                               list(self.obs.offset_samples), list(self.obs.faults), list(self.obs.statuses),
                               self.obs.quiet, self.obs.still_moving, dict(self.obs.log_paths))
