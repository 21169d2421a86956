"""Real processes: a KRaft broker, a Kafka Connect worker and moto's S3 server, shared by this
module. Jars are fetched from Maven on first use.

The S3 sinks (Camel, Confluent) run when their plugins resolve (the shared layouts, or their
plugin directories given in SINKCHECK_PLUGIN_PATH); otherwise they skip with the resolver's
reason. Aiven's sink has its own module on warm stacks (tests/test_aiven.py). Apache
Kafka's FileStreamSink, which always resolves, proves the worker, the offsets and the process
faults end to end.
"""
from __future__ import annotations

import threading
import time

import pytest

from adapters.connect.connector_config import ConnectorConfigError, default_config
from adapters.pytest_fixtures import connect_target, kafka_stack  # noqa: F401
from adapters.observation import RecordToProduce
from adapters.target import Fault

pytestmark = pytest.mark.kafka

TS0 = 1_700_000_000_000


def make_records(topic: str, n: int, partitions: int, start: int = 0) -> list[RecordToProduce]:
    return [RecordToProduce(topic, i % partitions, TS0 + i, f"k{i}".encode(),
                            f"value-{i}".encode(), (("h", f"{i}".encode()),))
            for i in range(start, start + n)]


def expected_values(n: int, start: int = 0) -> set[str]:
    return {f"value-{i}" for i in range(start, start + n)}


def require_plugin(stack, set_name: str) -> None:
    """Skip unless the worker has the plugin (from the jar set or SINKCHECK_PLUGIN_PATH)."""
    from adapters.connect.profiles import PROFILES
    from adapters.connect.target import ConnectRest

    cls = PROFILES[set_name].connector_class
    installed = {p["class"] for p in ConnectRest(stack.workers).request(
        "GET", "/connector-plugins?connectorsOnly=true")}
    if cls not in installed:
        why = stack.missing_plugins.get(set_name, "not in plugin.path")
        pytest.skip(f"{set_name} connector plugin unavailable on this machine: {why}")


def file_values(target) -> list[str]:
    with open(target.config["file"]) as fh:
        return [ln for ln in fh.read().splitlines() if ln]


def assert_committed_at_log_end(target) -> None:
    obs = target.observe()
    ends = target.log_end_offsets()
    assert obs.final_offsets == ends, (obs.final_offsets, ends, obs.still_moving)


def test_stack_started_and_timed(kafka_stack, capsys):
    times = kafka_stack.startup_times()
    assert all(v is not None and v > 0 for v in times.values()), times
    with capsys.disabled():
        print(f"\n[sinkcheck] start-up seconds: "
              + ", ".join(f"{k}={v:.1f}" for k, v in times.items()))
    # loopback only
    assert kafka_stack.bootstrap.startswith("127.0.0.1:")
    assert kafka_stack.s3.endpoint.startswith("http://127.0.0.1:")
    assert kafka_stack.workers[0].rest_url.startswith("http://127.0.0.1:")


def test_filesink_1000_records_3_partitions(connect_target):
    t0 = time.monotonic()
    t = connect_target()
    t.start(default_config("filesink", ["fs-orders"], None), {"fs-orders": 3})
    offsets = t.produce(make_records("fs-orders", 1000, 3))
    assert sorted(offsets)[-1] == 333 and len(offsets) == 1000
    assert t.wait_until_quiet(120), t.obs.still_moving
    values = file_values(t)
    assert set(values) == expected_values(1000)
    assert_committed_at_log_end(t)
    obs = t.observe()
    assert len(obs.produced) == 1000
    assert {(r.partition, r.offset) for r in obs.produced} == {
        (p, o) for p in range(3) for o in range(334 if p == 0 else 333)}
    assert obs.statuses and obs.statuses[-1].connector_state == "RUNNING"
    assert obs.offset_samples and obs.quiet is True
    print(f"[sinkcheck] filesink 1000 records wall {time.monotonic() - t0:.1f}s")


def test_filesink_worker_sigkill_mid_stream_loses_nothing(connect_target):
    t = connect_target()
    t.start(default_config("filesink", ["fs-kill"], None), {"fs-kill": 3})
    t.produce(make_records("fs-kill", 500, 3))
    time.sleep(2.5)  # let a flush/commit happen, so the crash lands mid-stream
    t.apply_fault(Fault("kill-worker", {"worker": 0, "downtime_s": 1}))
    t.produce(make_records("fs-kill", 500, 3, start=500))
    assert t.wait_until_quiet(120), t.obs.still_moving
    values = file_values(t)
    assert set(values) == expected_values(1000)  # at-least-once: duplicates allowed
    assert_committed_at_log_end(t)
    ev = t.observe().faults[0]
    assert ev.kind == "kill-worker" and ev.fired and "SIGKILL" in ev.detail
    assert ev.until_ms >= ev.at_ms


def test_process_faults_pause_restart_update_rebalance(connect_target, kafka_stack):
    t = connect_target()
    t.start(default_config("filesink", ["fs-faults"], None), {"fs-faults": 2})
    t.produce(make_records("fs-faults", 100, 2))
    t.apply_fault(Fault("pause-worker", {"duration_s": 2}))  # a zombie task for 2 s
    t.apply_fault(Fault("restart-task", {"task": 0}))
    # a config update mid-stream (restarts the connector and its task); one task only, since
    # FileStreamSink tasks sharing one file would interleave partial lines
    t.apply_fault(Fault("update-config", {"config": {"consumer.override.max.poll.records": "50"}}))
    t.produce(make_records("fs-faults", 100, 2, start=100))
    t.apply_fault(Fault("rebalance", {"duration_s": 4}))  # a second worker joins and leaves
    assert len(kafka_stack.workers) == 1
    st = t.wait_running(90)
    assert len(st["tasks"]) == 1
    assert t.config["consumer.override.max.poll.records"] == "50"
    assert t.wait_until_quiet(120), t.obs.still_moving
    got = set(file_values(t))
    assert got == expected_values(200), (sorted(expected_values(200) - got)[:10],
                                         sorted(got - expected_values(200))[:10])
    kinds = [f.kind for f in t.observe().faults]
    assert kinds == ["pause-worker", "restart-task", "update-config", "rebalance"]
    assert all(f.fired for f in t.observe().faults)


def test_rejected_config_names_property_and_reason(connect_target):
    t = connect_target()
    cfg = default_config("filesink", ["fs-bad"], None, **{"tasks.max": "many"})
    with pytest.raises(ConnectorConfigError) as e:
        t.start(cfg, {"fs-bad": 1})
    assert "tasks.max" in e.value.errors
    assert "tasks.max" in str(e.value) and "many" in str(e.value)


def test_bucket_sampling_and_open_uploads_keep_it_not_quiet(connect_target, kafka_stack):
    """The S3 side of observation, without a connector: objects written to the target's bucket
    are sampled with bodies; a multipart upload that gets parts keeps it from being quiet and is
    reported; one left open without new parts (what a killed worker abandons) does not."""
    from dataclasses import replace

    from adapters.connect.target import KafkaConnectTarget

    t = connect_target()
    t.start(default_config("filesink", ["fs-s3"], None), {"fs-s3": 1})
    # give this target a bucket to watch, as an S3 sink profile would
    t.bucket = "observe-me"
    kafka_stack.s3.create_bucket(t.bucket)
    t.profile = replace(t.profile, writes_s3=True)
    c = kafka_stack.s3.client()
    c.put_object(Bucket=t.bucket, Key="a/one.jsonl", Body=b'{"v":1}\n')
    up = c.create_multipart_upload(Bucket=t.bucket, Key="a/two.jsonl")
    t.sample_once()
    b = t.observe().final_bucket
    assert [o.key for o in b.objects] == ["a/one.jsonl"]
    assert b.objects[0].body == b'{"v":1}\n'
    assert b.open_uploads == (("a/two.jsonl", up["UploadId"]),)
    stop = threading.Event()

    def parts():  # an upload in flight: a new part every half second
        n = 0
        while not stop.wait(0.5):
            n += 1
            c.upload_part(Bucket=t.bucket, Key="a/two.jsonl", UploadId=up["UploadId"], PartNumber=n, Body=b"x")

    feeder = threading.Thread(target=parts)
    feeder.start()
    try:
        assert not t.wait_until_quiet(4, stable_s=2)
        assert "multipart upload(s) open: a/two.jsonl" in t.observe().still_moving
    finally:
        stop.set()
        feeder.join()
    assert t.wait_until_quiet(30, stable_s=2)  # abandoned: open, no new part
    assert t.observe().final_bucket.open_uploads == (("a/two.jsonl", up["UploadId"]),)
    assert isinstance(t, KafkaConnectTarget)


# ------------------------------------------------------------------ the S3 sinks

def test_camel_1000_records_one_object_each(kafka_stack, connect_target):
    require_plugin(kafka_stack, "camel")
    t0 = time.monotonic()
    t = connect_target(profile="camel")
    t.start(default_config("camel", ["camel-orders"], None), {"camel-orders": 3})
    t.produce(make_records("camel-orders", 1000, 3))
    assert t.wait_until_quiet(240), t.obs.still_moving
    obs = t.observe()
    bodies = [o.body.decode() for o in obs.final_bucket.objects]
    assert set(bodies) == expected_values(1000)
    assert_committed_at_log_end(t)
    print(f"[sinkcheck] camel 1000 records wall {time.monotonic() - t0:.1f}s")


def test_confluent_from_plugin_dir(kafka_stack, connect_target):
    """Confluent's connector from SINKCHECK_PLUGIN_PATH, else the shared layouts: 300 records on
    3 partitions, flush.size 10, 30 objects named by partition, committed to the log end."""
    require_plugin(kafka_stack, "confluent")
    t = connect_target(profile="confluent")
    t.start(default_config("confluent", ["cf-orders"], None, **{"flush.size": "10"}),
            {"cf-orders": 3})
    t.produce(make_records("cf-orders", 300, 3))
    assert t.wait_until_quiet(180), t.obs.still_moving
    keys = [o.key for o in t.observe().final_bucket.objects]
    assert len(keys) == 30 and all("/partition=" in k for k in keys)
    assert_committed_at_log_end(t)


def test_confluent_in_containers(tmp_path):
    from adapters.connect import containers

    reason = containers.docker_unavailable_reason()
    if reason:
        pytest.skip(reason)
    t = containers.container_target(tmp_path)
    try:
        t.start(default_config("confluent", ["ct-orders"], None, **{"flush.size": "10"}),
                {"ct-orders": 3})
        t.produce(make_records("ct-orders", 300, 3))
        assert t.wait_until_quiet(300), t.obs.still_moving
        assert len(t.observe().final_bucket.objects) == 30
    finally:
        t.stop()
