"""The Python sink as a Target. In-process mode (the embedded default) reads an in-process log
and needs no JVM; S3 is moto's server (started here unless `s3_endpoint` is given, e.g. the
fault front)."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord,
                                  S3Object, StatusSample)
from adapters.pysink import VARIANTS
from adapters.pysink.log import InProcessLog
from adapters.pysink.sink import PySink, SinkConfigError, SinkSettings
from adapters.target import Fault, RecordToProduce, Target, TargetError, TargetInfo

FAULTS = ("crash", "restart", "restart-task", "pause", "resume", "rebalance", "update-config")


def _now_ms() -> int:
    return int(time.time() * 1000)


def _flat(config: Mapping[str, Any] | str) -> dict[str, str]:
    if isinstance(config, str):
        config = json.loads(config)
    c = config.get("config", config) if isinstance(config, Mapping) else config
    return {str(k): str(v) for k, v in c.items()}


class PySinkTarget(Target):
    semantics = "pysink"

    def __init__(self, run_dir: Path | str, mode: str = "inprocess", variant: str | None = None,
                 s3_endpoint: str | None = None, sample_interval_s: float = 0.15):
        if mode not in ("inprocess", "broker"):
            raise TargetError(f"pysink mode {mode!r}: use 'inprocess' (pysink) or 'broker' (pysink:broker)")
        self.mode = mode
        self._broker = None
        if variant not in (None, "correct") and variant not in VARIANTS:
            raise TargetError(f"unknown pysink variant {variant!r}; known: {', '.join(VARIANTS)}")
        self.run_dir = Path(run_dir)
        self.variant = None if variant == "correct" else variant
        self.s3_endpoint = s3_endpoint
        self.sample_interval_s = sample_interval_s
        self.log: Any = InProcessLog()
        self.sink: PySink | None = None
        self.zombies: list[PySink] = []
        self.obs = Observation()
        self._moto = None
        self._stop = threading.Event()
        self._sampler: threading.Thread | None = None
        self._bodies: dict[tuple[str, str], bytes] = {}
        self._config: dict[str, str] = {}

    # --- lifecycle -----------------------------------------------------------------------
    def start(self, connector_config: Mapping[str, Any] | str, topics: Mapping[str, int]) -> None:
        import boto3
        from botocore.config import Config

        self._config = _flat(connector_config)
        try:
            self.settings = SinkSettings.from_config(self._config)
        except SinkConfigError as e:
            raise TargetError(f"connector config rejected by the Python sink: {e}") from None
        endpoint = self.s3_endpoint
        if endpoint is None:
            from adapters.supervisor import MotoS3Server

            self._moto = MotoS3Server(self.run_dir / "s3", bucket=self.settings.bucket).start()
            endpoint = self._moto.endpoint
        cfg = Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1, "mode": "standard"},
                     read_timeout=120, connect_timeout=10)
        self.s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="sinkcheck",
                               aws_secret_access_key="sinkcheck", config=cfg)
        self._sample_s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                       aws_access_key_id="sinkcheck", aws_secret_access_key="sinkcheck", config=cfg)
        try:
            self.s3.create_bucket(Bucket=self.settings.bucket)
        except Exception:
            pass  # already there
        if self.mode == "broker":
            from adapters.pysink.kafka_log import KafkaLog
            from adapters.supervisor import KafkaBroker

            self._broker = KafkaBroker(self.run_dir / "kafka").start()
            name = str(connector_config.get("name", "pysink")) if isinstance(connector_config, Mapping) else "pysink"
            self.log = KafkaLog(self._broker.bootstrap, f"connect-{name}")
        self.log.create(dict(topics))
        self.sink = PySink(self.log, self.s3, self.settings, variant=self.variant).start()
        self._sampler = threading.Thread(target=self._sample_loop, name="pysink-sampler", daemon=True)
        self._sampler.start()

    def stop(self) -> None:
        self._stop.set()
        for s in [self.sink, *self.zombies]:
            if s is not None:
                s.kill()
        for s in [self.sink, *self.zombies]:
            if s is not None and s.thread.is_alive():
                s.thread.join(timeout=5)
        if self._sampler is not None:
            self._sampler.join(timeout=5)
            self._sampler = None
        if self._moto is not None:
            self._moto.stop()
            self._moto = None
        if self._broker is not None:
            try:
                self.log.close()
            except Exception:
                pass
            self._broker.stop()
            self._broker = None

    def info(self) -> TargetInfo:
        return TargetInfo(name="pysink" + (f":{self.variant}" if self.variant else ""),
                          connector_class="sinkcheck Python sink", connector_version="0.1.0",
                          kafka_version="Apache Kafka 4.1.1 (KRaft, Maven jars)" if self.mode == "broker" else "in-process log",
                          s3_server="moto")

    # --- produce -------------------------------------------------------------------------
    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        offsets = []
        for r in records:
            off = self.log.append(r.topic, r.partition, r.timestamp, r.key, r.value, r.headers)
            offsets.append(off)
            self.obs.produced.append(ProducedRecord(r.topic, r.partition, off, r.timestamp, r.key, r.value,
                                                    r.headers, _now_ms()))
        return offsets

    # --- faults --------------------------------------------------------------------------
    def _new_instance(self) -> None:
        self.sink = PySink(self.log, self.s3, self.settings, variant=self.variant).start()

    def apply_fault(self, fault: Fault) -> None:
        at = _now_ms()
        kind = fault.kind
        if kind not in FAULTS:
            raise TargetError(f"fault {kind!r} is not supported by the Python sink; supported: {', '.join(FAULTS)}")
        assert self.sink is not None
        if kind in ("crash", "restart", "restart-task", "rebalance"):
            self.sink.kill()
            self._new_instance()
        elif kind == "pause":
            self.sink.pause()
            self.zombies.append(self.sink)
            time.sleep(float(fault.params.get("takeover_after_s", 0.2)))
            self._new_instance()  # the group moves on: another member takes the partitions
        elif kind == "resume":
            for z in self.zombies:
                z.resume()
        elif kind == "update-config":
            self._config.update({str(k): str(v) for k, v in dict(fault.params.get("config", {})).items()})
            self.settings = SinkSettings.from_config(self._config)
            self.sink.kill()
            self._new_instance()
        self.obs.faults.append(FaultEvent(kind, dict(fault.params), True, at, _now_ms(), f"pysink {kind}"))

    # --- observing -----------------------------------------------------------------------
    def _sample(self) -> None:
        # offsets first, listing after: whatever was committed must already be in the listing
        committed = {f"{t}-{p}": o for (t, p), o in self.log.committed().items()}
        self.obs.offset_samples.append(OffsetSample(_now_ms(), committed, self.log.owner()))
        b = self.settings.bucket
        objs = []
        token = None
        while True:
            kw = {"Bucket": b, **({"ContinuationToken": token} if token else {})}
            page = self._sample_s3.list_objects_v2(**kw)
            for o in page.get("Contents", []):
                k = (o["Key"], o["ETag"])
                if k not in self._bodies:
                    try:
                        self._bodies[k] = self._sample_s3.get_object(Bucket=b, Key=o["Key"])["Body"].read()
                    except Exception:
                        continue  # replaced meanwhile; the next sample sees the new one
                objs.append(S3Object(o["Key"], o["Size"], o["ETag"], self._bodies[k],
                                     int(o["LastModified"].timestamp() * 1000)))
            if not page.get("IsTruncated"):
                break
            token = page["NextContinuationToken"]
        ups = self._sample_s3.list_multipart_uploads(Bucket=b).get("Uploads", [])
        self.obs.bucket_samples.append(BucketSample(_now_ms(), tuple(objs), tuple((u["Key"], u["UploadId"]) for u in ups)))

    def _sample_loop(self) -> None:
        while not self._stop.wait(self.sample_interval_s):
            try:
                self._sample()
            except Exception:
                pass  # S3 briefly unreachable (a fault): the next sample will tell

    def wait_until_quiet(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        last, since = None, time.monotonic()
        while time.monotonic() < deadline:
            s = self.sink
            assert s is not None
            if s.error:
                self.obs.quiet, self.obs.still_moving = True, ""
                return True
            at_end = all(s.positions.get(tp, 0) >= self.log.end(tp) for tp in self.log.partitions())
            pending = any(w.to_commit is not None for w in list(s.writers.values()))
            state = (self.log.committed(), at_end, s.busy, pending)
            stable_s = 2.0 if self.mode == "broker" else 1.0
            if state != last:
                last, since = state, time.monotonic()
            elif at_end and not s.busy and not pending and time.monotonic() - since >= stable_s:
                self.obs.quiet, self.obs.still_moving = True, ""
                return True
            time.sleep(0.05)
        s = self.sink
        behind = {f"{t}-{p}": self.log.end((t, p)) - s.positions.get((t, p), 0) for t, p in self.log.partitions()} if s else {}
        self.obs.quiet = False
        self.obs.still_moving = f"after {timeout_s:.0f}s the sink was still moving: records behind per partition {behind}, busy={s.busy if s else None}"
        return False

    def observe(self) -> Observation:
        try:
            self._sample()
        except Exception as e:
            self.obs.still_moving += f" (final sample failed: {e})"
        s = self.sink
        state = "FAILED" if s is not None and s.error else "RUNNING"
        self.obs.statuses.append(StatusSample(_now_ms(), state, (state,), s.error if s else None))
        return self.obs
