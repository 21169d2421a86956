"""Process supervision for the real parts: a Kafka broker (KRaft, single node), Kafka Connect
workers (distributed mode) and moto's S3 server, all on 127.0.0.1 with free ports.

Every process runs in its own process group (`start_new_session`) with its output in a log
file of the run directory; stopping kills the whole group. Every wait is bounded and, when it
runs out, says what it waited for and which log to read.

    with KafkaStack(run_dir) as stack:          # broker + S3 server + one worker
        stack.bootstrap, stack.s3.endpoint, stack.workers[0].rest_url
        w2 = stack.add_worker()                 # a rebalance
        stack.workers[0].kill(); stack.workers[0].restart()

Faults on processes: `ManagedProcess.kill()` (SIGKILL of the group), `pause()`/`resume()`
(SIGSTOP/SIGCONT), `restart()`.
"""
from __future__ import annotations

import atexit
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

from adapters.processes import jars
from adapters.connect.profiles import JSON_CONVERTER
from adapters.target import TargetError

LOOPBACK = "127.0.0.1"
# the converters of sinkcheck's Kafka Connect workers, for connectors whose config names none:
# Kafka's own sample worker config (config/connect-distributed.properties)
WORKER_CONVERTERS = {
    "key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "true",
    "value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "true",
}

# Process groups started by this Python process and not yet stopped: killed at exit as a last
# resort (a test that crashed before its finalizer ran).
_LIVE: dict[int, "ManagedProcess"] = {}
_LIVE_LOCK = threading.Lock()


def _kill_leftovers() -> None:
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for p in procs:
        try:
            p.stop(timeout_s=3)
        except Exception:
            pass


atexit.register(_kill_leftovers)


def now_ms() -> int:
    return int(time.time() * 1000)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def port_open(port: int, host: str = LOOPBACK, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def tail(path: Path | str | None, n: int = 15) -> str:
    if not path:
        return ""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + ln for ln in lines[-n:])


def wait_until(predicate: Callable[[], object], timeout_s: float, what: str, *,
               log: Path | str | None = None, proc: "ManagedProcess | None" = None,
               interval_s: float = 0.25,
               fatal: tuple[type[BaseException], ...] = ()) -> object:
    """Poll `predicate` until it returns a truthy value (returned) or raise TargetError naming
    `what`, the time waited and the log. Stops early when `proc` has exited; an exception of a
    `fatal` type raised by the predicate ends the wait at once."""
    deadline = time.monotonic() + timeout_s
    last_exc: Exception | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # noqa: BLE001 - reported below
            if fatal and isinstance(e, fatal):
                raise
            last_exc = e
        if proc is not None and proc.returncode is not None:
            raise TargetError(
                f"{proc.name} exited with code {proc.returncode} while waiting for {what}; "
                f"log: {proc.log_path}\n{tail(proc.log_path)}")
        if time.monotonic() >= deadline:
            why = f" (last error: {last_exc})" if last_exc else ""
            where = f"; log: {log}\n{tail(log)}" if log else ""
            raise TargetError(f"timed out after {timeout_s:.0f}s waiting for {what}{why}{where}")
        time.sleep(interval_s)


def _dies_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the kernel SIGKILLs it when the thread that started it dies: a test
    process that crashes (a segfault, a SIGKILL) then leaves no broker or worker behind to eat
    the machine. setpriv (util-linux, on every Debian) sets that and execs `argv` in place, so
    the pid stays the child's; preexec_fn would do the same but is unsafe in a threaded parent.
    Processes are started from the caller's thread (never from a sampler), which lives as long
    as the run."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


class ManagedProcess:
    """One OS process in its own process group, output to `log_path`."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, *,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None):
        self.name = name
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.popen: subprocess.Popen | None = None
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> "ManagedProcess":
        if self.alive:
            raise TargetError(f"{self.name} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(self.log_path, "ab")
        out.write(f"\n===== sinkcheck: start #{self.starts + 1} of {self.name} at {now_ms()}: "
                  f"{' '.join(self.argv)}\n".encode())
        out.flush()
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        try:
            self.popen = subprocess.Popen(_dies_with_parent(self.argv), stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=env, cwd=self.cwd,
                                          start_new_session=True)
        finally:
            out.close()
        self.starts += 1
        with _LIVE_LOCK:
            _LIVE[self.popen.pid] = self
        return self

    def signal(self, sig: int) -> None:
        """Send `sig` to the whole process group."""
        if self.popen is None:
            raise TargetError(f"{self.name} was never started")
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the process group and reap it (a crash)."""
        if self.popen is None:
            return
        self.signal(signal.SIGKILL)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise TargetError(f"{self.name} (pid {self.pid}) survived SIGKILL for 10s") from None
        self._forget()

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.signal(signal.SIGCONT)

    def stop(self, timeout_s: float = 15) -> None:
        """SIGTERM the group, then SIGKILL after `timeout_s`. Safe to call at any time."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.signal(signal.SIGCONT)  # a paused process cannot handle SIGTERM
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        # the leader may be gone while others in its group live on: always sweep the group
        self.signal(signal.SIGKILL)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._forget()

    def _forget(self) -> None:
        with _LIVE_LOCK:
            if self.popen is not None:
                _LIVE.pop(self.popen.pid, None)


# --------------------------------------------------------------------------- /proc helpers

def child_pids(root: int | None = None) -> set[int]:
    """All live descendants of `root` (default: this process), from /proc."""
    root = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields and fields[0] == "Z":
            continue  # a zombie holds nothing; it is reaped by its parent
        parent[int(d)] = int(fields[1])
    out: set[int] = set()
    frontier = [root]
    while frontier:
        p = frontier.pop()
        for c, pp in parent.items():
            if pp == p and c not in out:
                out.add(c)
                frontier.append(c)
    return out


def listening_ports() -> set[int]:
    """TCP ports in LISTEN state on this host (IPv4 and IPv6), from /proc/net/tcp*."""
    ports: set[int] = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "0A":
                        ports.add(int(parts[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


# --------------------------------------------------------------------------- components

def java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return "java"


LOG4J2_PROPERTIES = """\
status = warn
rootLogger.level = {level}
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""

# Small-heap, quick-start JVM flags for a 2-core test machine.
DEFAULT_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def _write_props(path: Path, props: Mapping[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


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
        if self.proc is None:
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
        self.proc.start()
        try:
            wait_until(self._ready, self.start_timeout_s,
                       f"the Kafka Connect worker {self.name} REST API at {self.rest_url}/connectors",
                       log=self.log_path, proc=self.proc, interval_s=0.5)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

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


def s3_client(endpoint: str):
    """A boto3 S3 client for sinkcheck's S3 server at `endpoint` (or the fault front before
    it): path-style, moto's credentials, short timeouts."""
    import boto3
    from botocore.config import Config

    return boto3.client("s3", endpoint_url=endpoint, region_name=MotoS3Server.REGION,
                        aws_access_key_id=MotoS3Server.ACCESS_KEY,
                        aws_secret_access_key=MotoS3Server.SECRET_KEY,
                        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2},
                                      connect_timeout=5, read_timeout=30))


class MotoS3Server:
    """moto's S3 server as a subprocess on a free loopback port, with one bucket."""

    ACCESS_KEY = "sinkcheck"
    SECRET_KEY = "sinkcheck-secret"
    REGION = "us-east-1"

    def __init__(self, run_dir: Path, *, bucket: str = "sinkcheck", start_timeout_s: float = 60):
        self.dir = Path(run_dir) / "s3"
        self.port = free_port()
        self.bucket = bucket
        self.start_timeout_s = start_timeout_s
        self.proc: ManagedProcess | None = None
        self.startup_s: float | None = None

    @property
    def endpoint(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.dir / "moto.log"

    def client(self):
        return s3_client(self.endpoint)

    def start(self) -> "MotoS3Server":
        t0 = time.monotonic()
        self.proc = ManagedProcess(
            "moto-s3", [sys.executable, "-m", "moto.server", "-H", LOOPBACK, "-p", str(self.port)],
            self.log_path, env={"MOTO_PORT": str(self.port)}).start()
        try:
            wait_until(lambda: self._get("/moto-api/data.json") is not None, self.start_timeout_s,
                       f"moto's S3 server at {self.endpoint}", log=self.log_path, proc=self.proc)
            self.create_bucket(self.bucket)
        except BaseException:
            self.stop()
            raise
        self.startup_s = time.monotonic() - t0
        return self

    def _get(self, path: str) -> bytes | None:
        try:
            with urllib.request.urlopen(self.endpoint + path, timeout=5) as r:
                return r.read()
        except (urllib.error.URLError, OSError):
            return None

    def create_bucket(self, name: str) -> None:
        c = self.client()
        try:
            c.create_bucket(Bucket=name)
        except c.exceptions.BucketAlreadyOwnedByYou:
            pass

    def reset(self) -> None:
        """Drop all state (POST /moto-api/reset) and recreate the bucket."""
        req = urllib.request.Request(self.endpoint + "/moto-api/reset", method="POST", data=b"")
        urllib.request.urlopen(req, timeout=10).read()
        self.create_bucket(self.bucket)

    def stop(self) -> None:
        if self.proc:
            self.proc.stop(timeout_s=5)


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

    def remove_worker(self, worker: ConnectWorker) -> None:
        worker.stop()
        self.workers.remove(worker)

    def processes(self) -> list[ManagedProcess]:
        ps = [w.proc for w in self.workers] + [self.broker.proc] + [self.s3.proc if self.s3 else None]
        return [p for p in ps if p is not None]

    def ports(self) -> set[int]:
        ports = {self.broker.port, self.broker.controller_port} | {w.port for w in self.workers}
        if self.s3:
            ports.add(self.s3.port)
        return ports

    def log_paths(self) -> dict[str, str]:
        out = {"broker": str(self.broker.log_path)}
        if self.s3:
            out["s3"] = str(self.s3.log_path)
        for w in self.workers:
            out[w.name] = str(w.log_path)
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
        for part in (self.broker, self.s3):
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
