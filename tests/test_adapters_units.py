"""Adapters without a JVM: connector profiles, config parsing, jar cache stamps, container
specs, bounded waits and process-group supervision."""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters.connect import containers
from adapters.processes import jars
from adapters.connect.connector_config import (ConnectorConfigError, default_config, fill_config,
    parse_connector_config, profile_for, redact)
from adapters.connect.profiles import CAMEL_PREFIX, PROFILES, S3Location
from adapters.connect.target import format_config_errors, validation_errors
from adapters.processes.managed import ManagedProcess, child_pids, listening_ports, wait_until
from adapters.target import TargetError

S3 = S3Location("http://127.0.0.1:5555", "bkt", "AK", "SK", "us-east-1")


def test_adapters_never_import_reference_impl():
    root = Path(__file__).resolve().parents[1] / "adapters"
    for f in root.rglob("*.py"):
        text = f.read_text()
        assert "import reference_impl" not in text and "from reference_impl" not in text, f


# ------------------------------------------------------------------ connector profiles

def test_confluent_profile_points_at_local_s3_path_style():
    p = PROFILES["confluent"]
    cfg = default_config(p, ["t"], S3)
    assert cfg["connector.class"] == "io.confluent.connect.s3.S3SinkConnector"
    assert cfg["store.url"] == S3.endpoint
    assert cfg["s3.path.style.access.enabled"] == "true"
    assert cfg["s3.bucket.name"] == "bkt" and cfg["s3.region"] == "us-east-1"
    assert cfg["aws.access.key.id"] == "AK" and cfg["aws.secret.access.key"] == "SK"
    assert cfg["storage.class"] == "io.confluent.connect.s3.storage.S3Storage"
    assert cfg["topics"] == "t" and "flush.size" in cfg
    assert p.jar_set is None  # only from a user's plugin directory
    assert "partition=" in p.naming and "10 digits" in p.naming


def test_aiven_profile_keys():
    cfg = default_config("aiven", ["a", "b"], S3)
    assert cfg["connector.class"] == "io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector"
    for k, v in {"aws.s3.endpoint": S3.endpoint, "aws.s3.bucket.name": "bkt",
                 "aws.access.key.id": "AK", "aws.secret.access.key": "SK",
                 "aws.s3.region": "us-east-1", "format.output.type": "jsonl",
                 "file.compression.type": "gzip", "topics": "a,b"}.items():
        assert cfg[k] == v, k
    assert "{{topic}}-{{partition}}-{{start_offset}}" in PROFILES["aiven"].naming


def test_camel_profile_keys():
    cfg = default_config("camel", "t", S3)
    assert cfg["connector.class"] == \
        "org.apache.camel.kafkaconnector.awss3sink.CamelAwss3sinkSinkConnector"
    assert cfg[CAMEL_PREFIX + "overrideEndpoint"] == "true"
    assert cfg[CAMEL_PREFIX + "uriEndpointOverride"] == S3.endpoint
    assert cfg[CAMEL_PREFIX + "forcePathStyle"] == "true"
    assert cfg[CAMEL_PREFIX + "bucketNameOrArn"] == "bkt"
    assert cfg[CAMEL_PREFIX + "accessKey"] == "AK" and cfg[CAMEL_PREFIX + "secretKey"] == "SK"
    assert "one object per record" in PROFILES["camel"].naming


def test_user_config_used_as_given_only_endpoint_bucket_credentials_filled():
    user = {"name": "mine", "config": {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector", "topics": "x",
        "flush.size": 7, "rotate.interval.ms": "60000", "s3.bucket.name": "theirs",
        "store.url": "https://s3.example.invalid", "behavior.on.null.values": "ignore"}}
    name, cfg = parse_connector_config(json.dumps(user))
    assert name == "mine"
    prof = profile_for(cfg)
    assert prof.name == "confluent"
    out = fill_config(cfg, prof, S3)
    changed = {k for k in out if out.get(k) != cfg.get(k)}
    assert changed <= set(prof.endpoint_keys())
    assert out["flush.size"] == "7" and out["rotate.interval.ms"] == "60000"
    assert out["behavior.on.null.values"] == "ignore"
    assert out["s3.bucket.name"] == "bkt" and out["store.url"] == S3.endpoint


def test_flat_config_and_file(tmp_path):
    f = tmp_path / "c.json"
    f.write_text(json.dumps({"name": "flat", "connector.class": "AivenKafkaConnectS3SinkConnector",
                             "topics": "t", "tasks.max": 2, "x.flag": True}))
    name, cfg = parse_connector_config(f)
    assert name == "flat" and "name" not in cfg
    assert cfg["tasks.max"] == "2" and cfg["x.flag"] == "true"
    assert profile_for(cfg).name == "aiven"


@pytest.mark.parametrize("bad", ["not json", "[1, 2]"])
def test_bad_config_text(bad):
    with pytest.raises(ConnectorConfigError):
        parse_connector_config(bad)


def test_unknown_connector_class_names_the_profiles():
    with pytest.raises(ConnectorConfigError, match="confluent, aiven, camel"):
        profile_for({"connector.class": "com.acme.S3Sink"})


def test_redact_hides_secrets():
    cfg = default_config("camel", "t", S3)
    r = redact(cfg, PROFILES["camel"])
    assert r[CAMEL_PREFIX + "secretKey"] == "****" and "SK" not in json.dumps(r)
    assert redact({"aws.secret.access.key": "x"})["aws.secret.access.key"] == "****"


def test_validation_errors_name_property_and_reason():
    answer = {"name": "c", "error_count": 2, "configs": [
        {"definition": {}, "value": {"name": "tasks.max", "errors": [
            "Invalid value abc for configuration tasks.max: Not a number of type INT"]}},
        {"definition": {}, "value": {"name": "topics", "errors": []}},
        {"definition": {}, "value": {"name": "aws.s3.bucket.name", "errors": ["Missing required configuration"]}},
    ]}
    errs = validation_errors(answer)
    assert set(errs) == {"tasks.max", "aws.s3.bucket.name"}
    msg = format_config_errors("c", errs)
    assert "tasks.max: Invalid value abc" in msg and "aws.s3.bucket.name: Missing" in msg


# ------------------------------------------------------------------ jar cache

def test_jar_stamp_follows_pom_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("SINKCHECK_JAR_CACHE", str(tmp_path))
    assert not jars.is_cached("kafka")
    d = tmp_path / "kafka"
    d.mkdir()
    (d / jars.STAMP).write_text(jars.pom_hash("kafka") + "\n")
    assert jars.is_cached("kafka")
    assert jars.ensure("kafka") == d  # no Maven call with a matching stamp
    (d / jars.STAMP).write_text("stale\n")
    assert not jars.is_cached("kafka")
    assert jars.pom_hash("kafka") != jars.pom_hash("iceberg")


def test_every_jar_set_is_a_pom_profile():
    pom = jars.POM.read_text()
    for name in jars.JAR_SETS:
        assert f"<id>{name}</id>" in pom
    # Aiven's S3 sink is on no Maven repository: its plugin comes from adapters.connect.plugins only
    assert "io.aiven" not in pom and "aiven" not in jars.JAR_SETS


def test_unknown_jar_set():
    with pytest.raises(jars.JarFetchError, match="unknown jar set"):
        jars.ensure("nope")


# ------------------------------------------------------------------ containers (no Docker)

def test_kafka_container_spec():
    s = containers.kafka_spec(19092)
    assert s.image.startswith("apache/kafka:4.")
    assert s.ports == {19092: 19092}
    assert "HOST://127.0.0.1:19092" in s.env["KAFKA_ADVERTISED_LISTENERS"]
    assert "INTERNAL://kafka:9092" in s.env["KAFKA_ADVERTISED_LISTENERS"]
    assert s.env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert s.env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"


def test_connect_container_spec_installs_confluent_s3():
    s = containers.connect_spec(18083, s3_connector_version="10.6.7")
    assert s.image.startswith("confluentinc/cp-kafka-connect:")
    cmd = " ".join(s.command)
    assert "confluent-hub install --no-prompt confluentinc/kafka-connect-s3:10.6.7" in cmd
    assert cmd.endswith("exec /etc/confluent/docker/run")
    assert s.ports == {8083: 18083}
    assert s.env["CONNECT_BOOTSTRAP_SERVERS"] == "kafka:9092"
    assert s.env["CONNECT_OFFSET_FLUSH_INTERVAL_MS"] == "2000"
    assert "/usr/share/confluent-hub-components" in s.env["CONNECT_PLUGIN_PATH"]
    for k in ("CONFIG", "OFFSET", "STATUS"):
        assert s.env[f"CONNECT_{k}_STORAGE_REPLICATION_FACTOR"] == "1"


def test_minio_spec_and_endpoint():
    s = containers.minio_spec(19000)
    assert s.command[:2] == ("server", "/data") and s.ports == {9000: 19000}
    assert s.env["MINIO_ROOT_USER"] == "sinkcheck"
    assert containers.connector_s3_endpoint(s) == "http://minio:9000"


def test_docker_reason_names_the_missing_engine(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
    reason = containers.docker_unavailable_reason()
    assert reason and "Docker engine" in reason and "docker.sock" in reason


# ------------------------------------------------------------------ supervision

def test_wait_until_says_what_and_where(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("line one\nboom\n")
    with pytest.raises(TargetError) as e:
        wait_until(lambda: False, 0.3, "the frobnicator to answer", log=log, interval_s=0.05)
    msg = str(e.value)
    assert "the frobnicator to answer" in msg and str(log) in msg and "boom" in msg


def test_wait_until_stops_when_the_process_died(tmp_path):
    p = ManagedProcess("dies", [sys.executable, "-c", "import sys; print('bye'); sys.exit(3)"],
                       tmp_path / "dies.log").start()
    with pytest.raises(TargetError, match="exited with code 3"):
        wait_until(lambda: False, 30, "never", proc=p, interval_s=0.05)
    p.stop()


def test_process_group_is_killed_with_its_children(tmp_path):
    before = child_pids()
    # a shell that leaves a grandchild behind: only a group kill gets it
    p = ManagedProcess("sh", ["sh", "-c", "sleep 300 & sleep 300"], tmp_path / "sh.log").start()
    wait_until(lambda: len(child_pids() - before) >= 2, 10, "the shell and its child")
    p.pause()
    p.stop(timeout_s=2)  # SIGCONT + SIGTERM + SIGKILL to the group
    wait_until(lambda: not (child_pids() - before), 10, "no child process left")
    assert p.returncode is not None


def test_listening_ports_sees_a_listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port = s.getsockname()[1]
    assert port in listening_ports()
    s.close()
    assert port not in listening_ports()


class _FakeWorker:
    """Stands in for a ConnectWorker: this tests how the target routes fault names, not Kafka
    Connect (tests/test_adapters_kafka.py drives real workers)."""

    def __init__(self, name: str):
        self.name, self.calls = name, []
        self.proc = type("P", (), {"pid": 4242, "alive": True})()

    def kill(self):
        self.calls.append("kill")

    def restart(self):
        self.calls.append("restart")

    def pause(self):
        self.calls.append("SIGSTOP")

    def resume(self):
        self.calls.append("SIGCONT")


def test_scenario_fault_names_reach_the_connect_worker(tmp_path):
    from adapters.connect.target import KafkaConnectTarget
    from adapters.target import Fault

    t = KafkaConnectTarget(tmp_path)
    w = _FakeWorker("worker-1")
    t.stack = type("S", (), {"workers": [w], "log_paths": lambda self: {}})()
    for kind in ("crash", "pause", "resume"):
        t.apply_fault(Fault(kind))
    assert w.calls == ["kill", "restart", "SIGSTOP", "SIGCONT"]
    assert [f.kind for f in t.obs.faults] == ["crash", "pause", "resume"] and all(f.fired for f in t.obs.faults)
    with pytest.raises(TargetError, match="not supported by the Kafka Connect target; supported: crash"):
        t.apply_fault(Fault("no-such-fault"))


def test_a_managed_process_dies_when_the_process_that_started_it_is_killed(tmp_path):
    """A test runner that crashes (SIGKILL, a segfault) runs no teardown: its brokers and workers
    must still not outlive it."""
    import subprocess

    code = ("import os, signal, sys, time; from pathlib import Path; from adapters.processes.managed import ManagedProcess; "
            f"p = ManagedProcess('sleeper', ['sleep', '300'], Path({str(tmp_path)!r}) / 'sleeper.log').start(); "
            "print(p.pid, flush=True); time.sleep(0.5); os.kill(os.getpid(), signal.SIGKILL)")
    parent = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert parent.returncode == -signal.SIGKILL
    child = int(parent.stdout.split()[0])
    wait_until(lambda: not os.path.exists(f"/proc/{child}") or
               open(f"/proc/{child}/stat").read().split()[2] == "Z", 10, f"pid {child} to die with its parent")


def test_the_poms_spark_and_hadoop_versions_are_pysparks_own():
    """S3A and the Kafka source load into pyspark's JVM: hadoop-aws must be the Hadoop pyspark
    bundles and spark-sql-kafka its exact version, or classes clash at the first read."""
    import re

    import pyspark

    pom = jars.POM.read_text()
    prop = {k: v for k, v in re.findall(r"<([a-z.]+)\.version>([^<]+)</\1\.version>", pom)}
    bundled = sorted(Path(pyspark.__file__).parent.joinpath("jars").glob("hadoop-client-api-*.jar"))
    assert bundled, "pyspark ships no hadoop-client-api jar"
    assert prop["hadoop"] == bundled[0].name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    assert prop["spark"] == pyspark.__version__
    assert jars.JAR_SETS["spark-s3a"].coordinates.endswith(":" + prop["hadoop"])
    assert jars.JAR_SETS["spark-kafka"].coordinates.endswith(":" + prop["spark"])
    assert prop["kafka"] == jars.KAFKA_VERSION


def test_a_rebalance_callbacks_error_reaches_the_task_as_an_exception():
    """The callback plumbing only: a scripted consumer calls on_assign from consume() the way
    librdkafka's binding does. An error in the callback must come out of poll_once as an
    Exception (the task's handlers catch it), not escape into the binding, which on Python < 3.12
    re-raises a C-raised KafkaException as a bare KafkaError that no `except Exception` sees."""
    from confluent_kafka import KafkaError, KafkaException

    from adapters.pysink.kafka import KafkaSink
    from adapters.pysink.sink import SinkSettings

    class ScriptedConsumer:
        def __init__(self, on_assign):
            self.on_assign = on_assign

        def committed(self, partitions, timeout):
            raise KafkaException(KafkaError(KafkaError._AUTHENTICATION))  # not retriable

        def consume(self, num_messages, timeout):
            self.on_assign(self, [])
            return []

    settings = SinkSettings.from_config({"flush.size": "1", "s3.bucket.name": "b",
                                         "format.class": "io.confluent.connect.s3.format.json.JsonFormat"})
    from adapters.s3.memory import MemoryS3, MemoryS3Client

    store = MemoryS3(clock=lambda: 0)
    store.create_bucket(Bucket="b")  # the task's start checks its bucket before its first poll (R1.3)
    sink = KafkaSink("127.0.0.1:1", MemoryS3Client(store), settings, group="g", topics=["t"])
    sink.consumer = ScriptedConsumer(sink._guarded(sink._on_assign))
    with pytest.raises(KafkaException):
        sink.poll_once()
    sink.consumer.on_assign = sink._guarded(lambda c, ps: None)
    sink.poll_once()  # the kept error was raised once, then cleared


def test_a_record_with_timestamp_0_is_refused_before_librdkafka_sends_it_as_now():
    """librdkafka (sinkcheck's producer) replaces a timestamp of 0 with the time of sending, so
    such a record would land in today's buckets: the producer refuses it naming the record. No
    broker is involved: the refusal comes before the first produce call."""
    from adapters.kafka.produce import produce_records
    from adapters.observation import RecordToProduce
    from adapters.target import TargetError

    class NoProducer:
        def produce(self, *a, **kw):
            raise AssertionError("nothing may be produced")

    with pytest.raises(TargetError, match=r"record #1 \(orders-0\) has timestamp 0"):
        produce_records(NoProducer(), [RecordToProduce("orders", 0, 1, b"k", b"v"),
                                       RecordToProduce("orders", 0, 0, b"k", b"v")])


def test_iceberg_quiet_waits_a_commit_round_for_records_a_running_task_has_not_committed(tmp_path):
    """iceberg-kill-after-data-file under load (three stacks): the worker restarted, its task read
    the 300 records again and its new coordinator started a round, whose answer took longer than
    Connect's 8 s settle window; the run ended quiet with nothing committed (commit-progress
    failed). A task commits only in a commit round (interval plus timeout), so while it runs
    behind the log end the wait is that long; a task that is not running adds nothing."""
    from adapters.connect.iceberg import IcebergConnectTarget
    from adapters.observation import ProducedRecord

    t = IcebergConnectTarget(tmp_path)
    t.config = {"iceberg.control.commit.interval-ms": "2000", "iceberg.control.commit.timeout-ms": "10000"}
    t.obs.produced = [ProducedRecord("events", 0, o, None, None, b'{"seq": 1}') for o in range(3)]
    t.status = lambda: {"tasks": [{"id": 0, "state": "RUNNING"}]}
    why, bound = t._pending({})
    assert "3 records not committed while the task runs" in why and bound == 20.0
    assert "table holds 0 rows of the 3 records committed" in t._pending({"events-0": 3})[0]
    from adapters.observation import TableSample

    t.obs.table_samples = [TableSample(1, "sinkcheck.events", 7, ("d.parquet",), 3)]
    assert t._pending({"events-0": 3}) is None
    t.status = lambda: {"tasks": [{"id": 0, "state": "FAILED"}]}
    assert t._pending({}) is None


from adapters.connect.target import KafkaConnectTarget


class _StalledConnectTarget(KafkaConnectTarget):
    """What wait_until_quiet reads of a Kafka Connect target, frozen: committed offsets behind the
    log end, nothing moving, the tasks in the states given (no broker, no worker). The real
    target's class, so what its other mix-ins define is what the wait reads (ConnectFaults once
    shadowed the task states it reads, and the short windows never applied)."""

    def __init__(self, task_states: list[str]):
        import threading

        from adapters.observation import Observation

        self.task_states = task_states
        self.offset_flush_interval_ms = 1000
        self.obs = Observation(produced=[], bucket_samples=[], offset_samples=[], faults=[])
        self._lock = threading.Lock()
        self.name = "connect-stub"
        self.topics = {"orders": 1}

    def committed_offsets(self):
        return {"orders-0": 3}

    def log_end_offsets(self):
        return {"orders-0": 10}

    def sample_bucket(self):
        return None

    def _upload_parts(self, uploads):
        return ()

    def _pending(self, committed):
        return None

    def status(self):
        return {"connector": {"state": "RUNNING"},
                "tasks": [{"id": i, "state": s} for i, s in enumerate(self.task_states)]}

    def _offsets(self):
        # the group as the broker would describe it: Stable, its one member owning every partition
        from types import SimpleNamespace

        return SimpleNamespace(settled=lambda topics: frozenset({"member-0"}))


def _quiet_after(task_states: list[str], stable_s: float) -> float:
    t = _StalledConnectTarget(task_states)
    t0 = time.monotonic()
    assert t.wait_until_quiet(timeout_s=30, stable_s=stable_s)
    return time.monotonic() - t0


def test_every_task_failed_is_quiet_after_the_short_window():
    """A FAILED task stays FAILED until someone restarts it (Connect restarts none), so a run
    whose tasks all FAILED is not waited on for the rebalance window a crashed task needs."""
    assert _quiet_after(["FAILED"], stable_s=6) < 4.5
    assert _quiet_after(["FAILED", "UNASSIGNED"], stable_s=6) >= 6


def test_a_running_task_in_a_settled_group_behind_the_log_end_is_quiet_after_the_settled_window():
    """Records buffered short of a rotation: every task RUNNING in a Stable group waits the
    settled window (three flush intervals, at least 8 s), not the rebalance window."""
    assert 8 <= _quiet_after(["RUNNING"], stable_s=15) < 12


def test_with_no_fault_played_and_no_retried_put_the_settled_window_is_two_flush_intervals(tmp_path):
    """Where the run played no fault, no task of its connector logged a RetriableException and
    the sink has no wall-clock flush of its own, nothing moves without a record: the settled
    window is two flush intervals (at least 4 s). A task's RetriableException in a worker's log,
    a fault played, a timer of the sink's (Lenses' flush.interval, Confluent's
    rotate.schedule.interval.ms) brings back the 8 s; a sink that has neither committed nor
    written anything yet waits the long window (stable_s)."""
    from adapters.connect.profiles import PROFILES

    def stalled(log_text: str, faults_played: bool, profile: str = "confluent", config=None,
                committed=None) -> float:
        log = tmp_path / "connect.log"
        log.write_text("")
        t = _StalledConnectTarget(["RUNNING"])
        if committed is not None:
            t.committed_offsets = lambda: committed
        t.profile, t.config = PROFILES[profile], config or {}
        t.stack = SimpleNamespace(log_paths=lambda: {"worker-1": str(log), "broker": str(tmp_path / "nope")})
        t.faults_played = faults_played
        t._mark_worker_logs()
        log.write_text(log_text)
        t0 = time.monotonic()
        assert t.wait_until_quiet(timeout_s=30, stable_s=15)
        return time.monotonic() - t0

    other = "ERROR WorkerSinkTask{id=another-run-0} RetriableException from SinkTask:\n"
    assert 4 <= stalled(other, faults_played=False) < 7
    mine = "ERROR WorkerSinkTask{id=connect-stub-0} RetriableException from SinkTask:\n"
    assert stalled(other + mine, faults_played=False) >= 8
    assert stalled("", faults_played=True) >= 8
    # a sink's own wall-clock timer may write after 4 s of nothing: Lenses' flush.interval did
    assert stalled("", faults_played=False, profile="lenses") >= 8
    assert stalled("", faults_played=False, config={"rotate.schedule.interval.ms": "60000"}) >= 8
    # nothing committed and nothing written yet: the sink may still be starting (an Avro
    # converter's first registry lookups under load took some 9 s): the long window
    assert stalled("", faults_played=False, committed={}) >= 15


def _connect_rest_answering(answers: list[int]):
    """A Connect REST API stand-in (this tests the client's retry, not Connect) that answers the
    given statuses in turn, then 204."""
    import http.server
    import threading
    from types import SimpleNamespace

    from adapters.connect.rest import ConnectRest

    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            seen.append(self.path)
            code = answers.pop(0) if answers else 204
            message = ("IO Error trying to forward REST request: java.net.ConnectException: Connection refused"
                       if code == 500 else "Cannot complete request momentarily due to stale configuration")
            body = json.dumps({"error_code": code, "message": message}).encode() if code != 204 else b""
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    worker = SimpleNamespace(rest_url=f"http://127.0.0.1:{server.server_address[1]}", proc=SimpleNamespace(alive=True))
    return ConnectRest([worker]), seen, server


def test_a_change_answered_409_is_sent_again_until_connect_takes_it():
    """Connect answers 409 while a rebalance or a config change settles and applies nothing: a
    task restart sent then is sent again (seen on real 12.1.9: a run ended in ERROR on it)."""
    rest, seen, server = _connect_rest_answering([409, 500, 409])
    try:
        # 500 from a worker that could not forward to a leader that just left: nothing applied
        rest.request("POST", "/connectors/c/tasks/0/restart", busy_wait_s=15)
        assert len(seen) == 4
        rest2, _, server2 = _connect_rest_answering([409] * 50)
        try:
            with pytest.raises(TargetError, match="every worker answered 409 for 2s"):
                rest2.request("POST", "/connectors/c/tasks/0/restart", busy_wait_s=2)
            with pytest.raises(TargetError, match="409"):
                rest2.request("GET", "/connectors/c/status")  # a GET's caller polls: no retry here
        finally:
            server2.shutdown()
    finally:
        server.shutdown()
