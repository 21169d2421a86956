"""A Kafka broker in KRaft mode, single node, on a free loopback port."""
from __future__ import annotations

import base64
import shutil
import subprocess
import time
import uuid
from pathlib import Path
from typing import Mapping

from adapters.processes import jars
from adapters.target import TargetError
from adapters.processes.managed import (DEFAULT_JVM_FLAGS, LOG4J2_PROPERTIES, LOOPBACK, ManagedProcess,
    _write_props, free_port, java, port_open, tail, wait_until)


class KafkaBroker:
    """A single-node KRaft broker+controller (Kafka 4.x, Maven jars)."""

    def __init__(self, run_dir: Path, *, heap: str = "512m", log_level: str = "INFO",
                 extra_props: Mapping[str, object] | None = None, start_timeout_s: float = 90):
        self.dir = Path(run_dir) / "broker"
        self.port = free_port()
        self.controller_port = free_port()
        self.heap = heap
        self.log_level = log_level
        self.extra_props = dict(extra_props or {})
        self.start_timeout_s = start_timeout_s
        self.proc: ManagedProcess | None = None
        self.startup_s: float | None = None

    @property
    def bootstrap(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "broker.log"

    def properties(self) -> dict[str, object]:
        props: dict[str, object] = {
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.bootstrap.servers": f"{LOOPBACK}:{self.controller_port}",
            "listeners": f"PLAINTEXT://{LOOPBACK}:{self.port},CONTROLLER://{LOOPBACK}:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": self.dir / "data",
            "num.partitions": 1,
            "num.recovery.threads.per.data.dir": 1,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "group.initial.rebalance.delay.ms": 0,
            "auto.create.topics.enable": "false",
            # scenarios carry record timestamps from the past (2024): time-based retention would
            # delete their segments while a test runs (seen: OffsetOutOfRange ~30 s in)
            "log.retention.ms": -1,
            # records up to adapters.kafka.produce.MAX_MESSAGE_BYTES (the multipart stories: 200 KiB)
            "message.max.bytes": 10 * 1024 * 1024,
            "replica.fetch.max.bytes": 10 * 1024 * 1024,
        }
        props.update(self.extra_props)
        return props

    def _jvm(self, main: str, *args: str) -> list[str]:
        return [java(), f"-Xms128m", f"-Xmx{self.heap}", *DEFAULT_JVM_FLAGS,
                f"-Dlog4j2.configurationFile={self.dir / 'log4j2.properties'}",
                f"-Dkafka.logs.dir={self.dir / 'logs'}",
                "-cp", jars.classpath("kafka"), main, *args]

    def start(self) -> "KafkaBroker":
        t0 = time.monotonic()
        self.dir.mkdir(parents=True, exist_ok=True)
        # a new broker every time: an earlier run's log dirs (the same --out reused) would carry
        # another cluster id, which the format step refuses
        shutil.rmtree(self.dir / "data", ignore_errors=True)
        (self.dir / "log4j2.properties").write_text(LOG4J2_PROPERTIES.format(level=self.log_level))
        cfg = _write_props(self.dir / "server.properties", self.properties())
        cluster_id = "-"
        while cluster_id.startswith("-"):  # like Kafka's Uuid.randomUuid: never a leading dash
            cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        fmt_log = self.dir / "storage-format.log"
        with open(fmt_log, "wb") as out:
            try:
                rc = subprocess.run(self._jvm("kafka.tools.StorageTool", "format", "--standalone",
                                              f"--cluster-id={cluster_id}", "-c", str(cfg)),
                                    stdout=out, stderr=subprocess.STDOUT, timeout=120,
                                    start_new_session=True).returncode
            except subprocess.TimeoutExpired:
                raise TargetError(f"timed out after 120s waiting for the broker's storage format "
                                  f"(kafka.tools.StorageTool format); log: {fmt_log}") from None
        if rc != 0:
            raise TargetError(f"broker storage format failed with code {rc}; log: {fmt_log}\n"
                              f"{tail(fmt_log)}")
        self.proc = ManagedProcess("kafka-broker", self._jvm("kafka.Kafka", str(cfg)),
                                   self.log_path).start()
        try:
            wait_until(self._ready, self.start_timeout_s,
                       f"the Kafka broker at {self.bootstrap} to answer describe_cluster",
                       log=self.log_path, proc=self.proc, interval_s=0.5)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def _ready(self) -> bool:
        if not port_open(self.port):
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "log_level": 0})
        desc = admin.describe_cluster(request_timeout=5).result(timeout=8)
        return bool(desc.nodes)

    def admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def stop(self) -> None:
        if self.proc:
            self.proc.stop()
