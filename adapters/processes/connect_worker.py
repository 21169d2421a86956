"""A Kafka Connect worker in distributed mode: its REST port, plugin path and converters, and
its faults as a process (kill, pause, restart)."""
from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterable, Mapping

from adapters.processes import jars
from adapters.processes.managed import (DEFAULT_JVM_FLAGS, LOG4J2_PROPERTIES, LOOPBACK, ManagedProcess,
    _write_props, free_port, java, port_taken_in, wait_until)
from adapters.target import TargetError


JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
# the converters of sinkcheck's Kafka Connect workers, for connectors whose config names none:
# Kafka's own sample worker config (config/connect-distributed.properties)
WORKER_CONVERTERS = {
    "key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "true",
    "value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "true",
}


class ConnectWorker:
    """A Kafka Connect worker in distributed mode, REST on a free loopback port."""

    def __init__(self, run_dir: Path, bootstrap: str, plugin_paths: Iterable[Path | str], *,
                 group_id: str = "sinkcheck-connect", worker_name: str = "worker-1",
                 heap: str = "768m", offset_flush_interval_ms: int = 2000,
                 log_level: str = "INFO", extra_props: Mapping[str, object] | None = None,
                 start_timeout_s: float = 120):
        self.name = worker_name
        self.dir = Path(run_dir) / worker_name
        self.bootstrap = bootstrap
        self.plugin_paths = [str(p) for p in plugin_paths]
        self.group_id = group_id
        self.heap = heap
        self.port = free_port()
        self.offset_flush_interval_ms = offset_flush_interval_ms
        self.log_level = log_level
        self.extra_props = dict(extra_props or {})
        self.start_timeout_s = start_timeout_s
        self.proc: ManagedProcess | None = None
        self.startup_s: float | None = None

    @property
    def rest_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "connect.log"

    def properties(self) -> dict[str, object]:
        g = self.group_id
        props: dict[str, object] = {
            "bootstrap.servers": self.bootstrap,
            "group.id": g,
            **WORKER_CONVERTERS,
            "config.storage.topic": f"{g}-configs",
            "offset.storage.topic": f"{g}-offsets",
            "status.storage.topic": f"{g}-status",
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
            "offset.storage.partitions": 1,
            "status.storage.partitions": 1,
            "offset.flush.interval.ms": self.offset_flush_interval_ms,
            "listeners": self.rest_url,
            "rest.advertised.host.name": LOOPBACK,
            "rest.advertised.port": self.port,
            "plugin.path": ",".join(self.plugin_paths),
            "connector.client.config.override.policy": "All",
            # a lost worker's tasks move at once (default waits 5 minutes)
            "scheduled.rebalance.max.delay.ms": 0,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 2000,
            "task.shutdown.graceful.timeout.ms": 5000,
            # a killed worker's sink consumers leave the group in seconds (default 45 s)
            "consumer.session.timeout.ms": 6000,
            "consumer.heartbeat.interval.ms": 1500,
        }
        props.update(self.extra_props)
        return props

    def start(self) -> "ConnectWorker":
        t0 = time.monotonic()
        first_start = self.proc is None
        for attempt in range(3):
            if self.proc is None:
                self._prepare()
            self.proc.start()
            try:
                wait_until(self._ready, self.start_timeout_s,
                           f"the Kafka Connect worker {self.name} REST API at {self.rest_url}/connectors",
                           log=self.log_path, proc=self.proc, interval_s=0.5)
                break
            except TargetError:
                self.stop()
                # another process took the REST port between its choice and the bind: a new one,
                # only before the worker was ever up (a restart keeps its advertised URL)
                if first_start and attempt < 2 and port_taken_in(self.log_path):
                    self.log_path.replace(self.log_path.with_name(f"connect.port-taken-{self.port}.log"))
                    self.port = free_port()
                    self.proc = None
                    continue
                raise
            except BaseException:
                self.stop()
                raise
        self.startup_s = time.monotonic() - t0
        return self

    def _prepare(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "log4j2.properties").write_text(
            LOG4J2_PROPERTIES.format(level=self.log_level))
        cfg = _write_props(self.dir / "worker.properties", self.properties())
        argv = [java(), "-Xms128m", f"-Xmx{self.heap}", *DEFAULT_JVM_FLAGS,
                f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                f"-Dkafka.logs.dir={self.dir / 'logs'}",
                "-cp", jars.classpath("kafka"),
                "org.apache.kafka.connect.cli.ConnectDistributed", str(cfg)]
        self.proc = ManagedProcess(f"connect-{self.name}", argv, self.log_path)

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.rest_url}/connectors", timeout=5) as r:
                return r.status == 200
        except urllib.error.HTTPError:
            return False  # 404/409/503 while the herder starts

    # process faults -------------------------------------------------------------------
    def kill(self) -> None:
        if self.proc:
            self.proc.kill()

    def restart(self) -> None:
        """Start again after a kill or stop, with the same config and REST port."""
        self.start()

    def pause(self) -> None:
        if self.proc:
            self.proc.pause()

    def resume(self) -> None:
        if self.proc:
            self.proc.resume()

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()
