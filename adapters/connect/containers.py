"""The Kafka Connect target over containers, for hosts with a Docker engine: an Apache Kafka
container (KRaft), the `confluentinc/cp-kafka-connect` image with the Confluent S3 sink
installed by `confluent-hub install`, and MinIO as the S3 server.

The container specs are built by pure functions (`kafka_spec`, `connect_spec`, `minio_spec`)
so they are tested without Docker. `ContainerStack` runs them with testcontainers and offers
the same surface as `adapters.processes.stack.KafkaStack`, so `KafkaConnectTarget(stack=...)` runs
unchanged on it. Without an engine, `docker_unavailable_reason()` says why, and the target
raises `EnvironmentUnavailable` (tests skip with that reason).
"""
from __future__ import annotations

import os
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from adapters.processes.managed import LOOPBACK, free_port, wait_until
from adapters.target import TargetError

KAFKA_IMAGE = "apache/kafka:4.1.1"
CONNECT_IMAGE = "confluentinc/cp-kafka-connect:7.9.2"
CONFLUENT_S3_VERSION = "10.6.7"
MINIO_IMAGE = "minio/minio:RELEASE.2025-04-22T22-12-26Z"
CONNECT_PLUGIN_PATH = "/usr/share/java,/usr/share/confluent-hub-components"


class EnvironmentUnavailable(TargetError):
    """What the target needs (a Docker engine) is not on this host: a reason to skip."""


@dataclass(frozen=True)
class ContainerSpec:
    name: str  # also the network alias
    image: str
    env: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] | None = None
    ports: Mapping[int, int] = field(default_factory=dict)  # container port -> host port
    ready_log: str | None = None  # a line that says the container is up


def docker_unavailable_reason() -> str | None:
    """None when a Docker engine answers; else why not (for skip messages)."""
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("tcp://"):
        hp = host[len("tcp://"):].split("/")[0]
        h, _, p = hp.partition(":")
        try:
            with socket.create_connection((h, int(p or 2375)), timeout=2):
                return None
        except OSError as e:
            return f"no Docker engine: DOCKER_HOST={host} does not answer ({e})"
    path = host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"
    if not os.path.exists(path):
        return (f"no Docker engine on this host: {path} does not exist and DOCKER_HOST is "
                f"{'unset' if not host else host!r}")
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(path)
        s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
        ok = b"OK" in s.recv(1024)
        s.close()
    except OSError as e:
        return f"no Docker engine: {path} exists but does not answer ({e})"
    return None if ok else f"no Docker engine: {path} did not answer /_ping with OK"


def kafka_spec(host_port: int, *, image: str = KAFKA_IMAGE, alias: str = "kafka") -> ContainerSpec:
    """A single-node KRaft broker reachable as `<alias>:9092` inside the network and as
    127.0.0.1:<host_port> from the host (the same port number on both sides of the binding)."""
    return ContainerSpec(
        name=alias,
        image=image,
        env={
            "KAFKA_NODE_ID": "1",
            "KAFKA_PROCESS_ROLES": "broker,controller",
            "KAFKA_CONTROLLER_QUORUM_VOTERS": f"1@{alias}:9093",
            "KAFKA_LISTENERS": f"INTERNAL://:9092,CONTROLLER://:9093,HOST://:{host_port}",
            "KAFKA_ADVERTISED_LISTENERS": f"INTERNAL://{alias}:9092,HOST://{LOOPBACK}:{host_port}",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT,HOST:PLAINTEXT",
            "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
            "KAFKA_INTER_BROKER_LISTENER_NAME": "INTERNAL",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
            "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "1",
            "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
            "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
            "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
            "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
            "KAFKA_HEAP_OPTS": "-Xms128m -Xmx512m",
        },
        ports={host_port: host_port},
        ready_log="Kafka Server started",
    )


def connect_spec(rest_host_port: int, *, bootstrap: str = "kafka:9092",
                 image: str = CONNECT_IMAGE, s3_connector_version: str = CONFLUENT_S3_VERSION,
                 alias: str = "connect", group_id: str = "sinkcheck-connect",
                 offset_flush_interval_ms: int = 2000) -> ContainerSpec:
    """cp-kafka-connect with `confluent-hub install confluentinc/kafka-connect-s3:<version>`
    run before the worker starts; REST on 8083, bound to 127.0.0.1:<rest_host_port>."""
    install = (f"confluent-hub install --no-prompt "
               f"confluentinc/kafka-connect-s3:{s3_connector_version}")
    return ContainerSpec(
        name=alias,
        image=image,
        env={
            "CONNECT_BOOTSTRAP_SERVERS": bootstrap,
            "CONNECT_REST_PORT": "8083",
            "CONNECT_REST_ADVERTISED_HOST_NAME": alias,
            "CONNECT_GROUP_ID": group_id,
            "CONNECT_CONFIG_STORAGE_TOPIC": f"{group_id}-configs",
            "CONNECT_OFFSET_STORAGE_TOPIC": f"{group_id}-offsets",
            "CONNECT_STATUS_STORAGE_TOPIC": f"{group_id}-status",
            "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "1",
            "CONNECT_OFFSET_STORAGE_PARTITIONS": "1",
            "CONNECT_STATUS_STORAGE_PARTITIONS": "1",
            "CONNECT_KEY_CONVERTER": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "CONNECT_VALUE_CONVERTER": "org.apache.kafka.connect.converters.ByteArrayConverter",
            "CONNECT_OFFSET_FLUSH_INTERVAL_MS": str(offset_flush_interval_ms),
            "CONNECT_PLUGIN_PATH": CONNECT_PLUGIN_PATH,
            "CONNECT_CONNECTOR_CLIENT_CONFIG_OVERRIDE_POLICY": "All",
            "CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS": "0",
            "CONNECT_CONSUMER_SESSION_TIMEOUT_MS": "6000",
            "CONNECT_CONSUMER_HEARTBEAT_INTERVAL_MS": "1500",
            "KAFKA_HEAP_OPTS": "-Xms128m -Xmx768m",
        },
        command=("bash", "-c", f"{install} && exec /etc/confluent/docker/run"),
        ports={8083: rest_host_port},
        ready_log="Kafka Connect started",
    )


def minio_spec(host_port: int, *, image: str = MINIO_IMAGE, alias: str = "minio",
               access_key: str = "sinkcheck", secret_key: str = "sinkcheck-secret") -> ContainerSpec:
    return ContainerSpec(
        name=alias,
        image=image,
        env={"MINIO_ROOT_USER": access_key, "MINIO_ROOT_PASSWORD": secret_key},
        command=("server", "/data", "--address", ":9000"),
        ports={9000: host_port},
        ready_log="API:",
    )


def connector_s3_endpoint(minio: ContainerSpec) -> str:
    """The endpoint the connector (inside the network) uses for S3."""
    return f"http://{minio.name}:9000"


# --------------------------------------------------------------------------- running them

class _ContainerProc:
    """Duck-types `ManagedProcess` for faults: kill (docker kill), restart, pause/resume."""

    def __init__(self, container):
        self.container = container

    @property
    def alive(self) -> bool:
        c = self.container.get_wrapped_container()
        c.reload()
        return c.status == "running"

    @property
    def pid(self):
        return self.container.get_container_id()[:12]


class _ContainerWorker:
    def __init__(self, stack: "ContainerStack", container, rest_port: int, name: str):
        self.stack, self.container, self.port, self.name = stack, container, rest_port, name
        self.proc = _ContainerProc(container)
        self.log_path = stack.run_dir / f"{name}.log"

    @property
    def rest_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    def wait_ready(self, timeout_s: float = 300) -> None:
        def ok():
            try:
                with urllib.request.urlopen(self.rest_url + "/connectors", timeout=5) as r:
                    return r.status == 200
            except (urllib.error.URLError, OSError):
                return False
        wait_until(ok, timeout_s, f"the Connect container {self.name} REST API at {self.rest_url}",
                   log=self.log_path)

    def kill(self) -> None:
        self.container.get_wrapped_container().kill()

    def restart(self) -> None:
        self.container.get_wrapped_container().start()
        self.wait_ready()

    def pause(self) -> None:
        self.container.get_wrapped_container().pause()

    def resume(self) -> None:
        self.container.get_wrapped_container().unpause()

    def stop(self) -> None:
        try:
            self.log_path.write_bytes(b"".join(self.container.get_logs()))
        except Exception:  # noqa: BLE001
            pass
        self.container.stop()


class _MinioS3:
    ACCESS_KEY = "sinkcheck"
    SECRET_KEY = "sinkcheck-secret"
    REGION = "us-east-1"

    def __init__(self, port: int, spec: ContainerSpec):
        self.port = port
        self.spec = spec
        self.log_path = Path("/dev/null")

    @property
    def endpoint(self) -> str:
        # what the connector is told; the suite itself reaches MinIO on the host port
        return connector_s3_endpoint(self.spec)

    def client(self):
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=f"http://{LOOPBACK}:{self.port}",
                            region_name=self.REGION, aws_access_key_id=self.ACCESS_KEY,
                            aws_secret_access_key=self.SECRET_KEY,
                            config=Config(s3={"addressing_style": "path"}))

    def create_bucket(self, name: str) -> None:
        c = self.client()
        try:
            c.create_bucket(Bucket=name)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass


class ContainerStack:
    """Kafka + Connect (with the Confluent S3 sink) + MinIO in containers; the same surface
    as `KafkaStack` (bootstrap, s3, workers, add_worker, log_paths, stop)."""

    def __init__(self, run_dir: Path | str, *, s3_connector_version: str = CONFLUENT_S3_VERSION,
                 connect_image: str = CONNECT_IMAGE, offset_flush_interval_ms: int = 2000):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.s3_connector_version = s3_connector_version
        self.connect_image = connect_image
        self.offset_flush_interval_ms = offset_flush_interval_ms
        self.kafka_port = free_port()
        self.plugin_paths = [CONNECT_PLUGIN_PATH]
        self.workers: list[_ContainerWorker] = []
        self._containers: list = []
        self._network = None
        self.s3: _MinioS3 | None = None

    @property
    def bootstrap(self) -> str:
        return f"{LOOPBACK}:{self.kafka_port}"

    def _run(self, spec: ContainerSpec):
        from testcontainers.core.container import DockerContainer

        c = DockerContainer(spec.image).with_network(self._network) \
            .with_network_aliases(spec.name).with_envs(**dict(spec.env))
        for cport, hport in spec.ports.items():
            c = c.with_bind_ports(cport, (LOOPBACK, hport))
        if spec.command:
            c = c.with_command(list(spec.command))
        c.start()
        self._containers.append(c)
        return c

    def start(self) -> "ContainerStack":
        reason = docker_unavailable_reason()
        if reason:
            raise EnvironmentUnavailable(reason)
        from testcontainers.core.network import Network

        try:
            self._network = Network()
            self._network.create()
            minio = minio_spec(free_port())
            self._run(minio)
            self.s3 = _MinioS3(minio.ports[9000], minio)
            wait_until(lambda: self.s3.client().list_buckets() is not None, 60,
                       "MinIO to answer ListBuckets")
            self._run(kafka_spec(self.kafka_port))
            from confluent_kafka.admin import AdminClient

            wait_until(lambda: AdminClient({"bootstrap.servers": self.bootstrap})
                       .describe_cluster(request_timeout=5).result(timeout=8).nodes, 120,
                       f"the Kafka container at {self.bootstrap}")
            self.add_worker()
        except BaseException:
            self.stop()
            raise
        return self

    def add_worker(self) -> _ContainerWorker:
        n = len(self.workers) + 1
        spec = connect_spec(free_port(), image=self.connect_image, alias=f"connect-{n}",
                            s3_connector_version=self.s3_connector_version,
                            offset_flush_interval_ms=self.offset_flush_interval_ms)
        c = self._run(spec)
        w = _ContainerWorker(self, c, spec.ports[8083], spec.name)
        self.workers.append(w)
        w.wait_ready()
        return w

    def remove_worker(self, w: _ContainerWorker) -> None:
        w.stop()
        self.workers.remove(w)

    def log_paths(self) -> dict[str, str]:
        return {w.name: str(w.log_path) for w in self.workers}

    def stop(self) -> None:
        for w in list(self.workers):
            try:
                w.stop()
            except Exception:  # noqa: BLE001
                pass
        for c in self._containers:
            try:
                c.stop()
            except Exception:  # noqa: BLE001
                pass
        self._containers.clear()
        if self._network is not None:
            try:
                self._network.remove()
            except Exception:  # noqa: BLE001
                pass
            self._network = None

    def __enter__(self) -> "ContainerStack":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def container_target(run_dir: Path | str, **kwargs):
    """A `KafkaConnectTarget` for the Confluent profile on a `ContainerStack` (started here;
    stopped by the target's `stop`). Raises EnvironmentUnavailable without a Docker engine."""
    from adapters.connect.target import KafkaConnectTarget

    stack = ContainerStack(run_dir, **kwargs).start()
    t = KafkaConnectTarget(Path(run_dir) / "target", stack=stack, profile="confluent")
    t._own_stack = True  # the target stops the containers
    return t
