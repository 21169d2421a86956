"""The real parts of one run directory together: a Kafka broker (KRaft, single node), Kafka
Connect workers (distributed mode), moto's S3 server and, once a run asks for it, a Schema
Registry (adapters.processes.registry), all on 127.0.0.1 with free ports.

    with KafkaStack(run_dir) as stack:          # broker + S3 server + one worker
        stack.bootstrap, stack.s3.endpoint, stack.workers[0].rest_url
        w2 = stack.add_worker()                 # a rebalance
        stack.workers[0].kill(); stack.workers[0].restart()
        stack.schema_registry().url             # started on first use, stopped with the stack

Each part is a process of its own (adapters.processes.managed); its faults are the process's:
`ManagedProcess.kill()` (SIGKILL of the group), `pause()`/`resume()` (SIGSTOP/SIGCONT), `restart()`.
"""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping

from adapters.processes import jars
from adapters.target import TargetError
from adapters.processes.broker import KafkaBroker
from adapters.processes.connect_worker import ConnectWorker
from adapters.processes.managed import ManagedProcess
from adapters.processes.moto import MotoS3Server


class KafkaStack:
    """Broker + S3 server + Connect workers for one run directory; a context manager whose
    exit stops everything, also on error."""

    def __init__(self, run_dir: Path | str, *, plugin_paths: Iterable[Path | str] = (),
                 broker_heap: str = "512m", worker_heap: str = "768m",
                 offset_flush_interval_ms: int = 2000, workers: int = 1,
                 with_s3: bool = True, worker_props: Mapping[str, object] | None = None):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.plugin_paths = [str(p) for p in plugin_paths]
        self.worker_heap = worker_heap
        self.offset_flush_interval_ms = offset_flush_interval_ms
        self.worker_props = dict(worker_props or {})
        self.n_workers = workers
        self.broker = KafkaBroker(self.run_dir, heap=broker_heap)
        self.s3 = MotoS3Server(self.run_dir) if with_s3 else None
        self.workers: list[ConnectWorker] = []
        self._worker_seq = 0
        self.started = False
        self.registry: Any = None  # adapters.processes.registry.SchemaRegistryServer, once asked for
        self._registry_lock = threading.Lock()

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    def start(self) -> "KafkaStack":
        try:
            jars.ensure("kafka")
            if self.s3:
                # moto starts while the broker boots (a Python process, cheap)
                self.s3.start()
            self.broker.start()
            for _ in range(self.n_workers):
                self.add_worker()
        except BaseException:
            self.stop()
            raise
        self.started = True
        return self

    def add_worker(self, **kwargs) -> ConnectWorker:
        self._worker_seq += 1
        w = ConnectWorker(self.run_dir, self.bootstrap, self.plugin_paths,
                          worker_name=f"worker-{self._worker_seq}", heap=self.worker_heap,
                          offset_flush_interval_ms=self.offset_flush_interval_ms,
                          extra_props=self.worker_props, **kwargs)
        self.workers.append(w)
        w.start()
        return w

    def schema_registry(self) -> Any:
        """The stack's Schema Registry, started on first use (the runs on a warm stack share it:
        each run's subjects are its own topics'); a registry process costs a few seconds and
        about 250 MB, so a stack whose runs never read the registry's wire format has none."""
        with self._registry_lock:
            if self.registry is None:
                from adapters.processes.registry import SchemaRegistryServer

                self.registry = SchemaRegistryServer(self.run_dir).start()
            return self.registry

    def remove_worker(self, worker: ConnectWorker) -> None:
        worker.stop()
        self.workers.remove(worker)

    def processes(self) -> list[ManagedProcess]:
        ps = [w.proc for w in self.workers] + [self.broker.proc] + [self.s3.proc if self.s3 else None]
        ps.append(self.registry.proc if self.registry is not None else None)
        return [p for p in ps if p is not None]

    def ports(self) -> set[int]:
        ports = {self.broker.port, self.broker.controller_port} | {w.port for w in self.workers}
        if self.s3:
            ports.add(self.s3.port)
        if self.registry is not None:
            ports |= set(self.registry.ports())
        return ports

    def log_paths(self) -> dict[str, str]:
        out = {"broker": str(self.broker.log_path)}
        if self.s3:
            out["s3"] = str(self.s3.log_path)
        for w in self.workers:
            out[w.name] = str(w.log_path)
        if self.registry is not None:
            out["schema-registry"] = str(self.registry.log_path)
        return out

    def startup_times(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {"broker": self.broker.startup_s}
        if self.s3:
            out["s3"] = self.s3.startup_s
        for w in self.workers:
            out[w.name] = w.startup_s
        return out

    def stop(self) -> None:
        errors = []
        for w in reversed(self.workers):
            try:
                w.stop()
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        for part in (self.broker, self.s3, self.registry):
            if part is None:
                continue
            try:
                part.stop()
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        self.started = False
        if errors:
            raise TargetError(f"errors while stopping the stack: {errors}")

    def __enter__(self) -> "KafkaStack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def describe(stack: KafkaStack) -> str:
    return json.dumps({"bootstrap": stack.bootstrap, "s3": stack.s3.endpoint if stack.s3 else None,
                       "workers": [w.rest_url for w in stack.workers],
                       "logs": stack.log_paths()}, indent=2)
