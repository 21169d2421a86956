"""After the supervisor stops, nothing it started is left: no child process, no listening
port; also when the stack is stopped while a worker is SIGSTOPped and when the `with` block
raised."""
from __future__ import annotations

import socket

import pytest

from adapters.connect.target import plugins_dir
from adapters.processes.connect_worker import ConnectWorker
from adapters.processes.managed import LOOPBACK, _ephemeral_range, child_pids, free_port, listening_ports, port_open
from adapters.processes.stack import KafkaStack

pytestmark = pytest.mark.kafka


class Boom(Exception):
    pass


def test_nothing_left_behind_after_stop(tmp_path):
    before = child_pids()
    pdir, _ = plugins_dir(tmp_path, ["filesink"])
    stack = KafkaStack(tmp_path, plugin_paths=[pdir])
    with pytest.raises(Boom):
        with stack:
            ours = child_pids() - before
            assert len(ours) >= 3, ours  # broker, moto, worker
            ports = stack.ports()
            assert ports <= listening_ports(), (ports, listening_ports())
            # two workers; the second's REST port is taken before it binds (another process
            # won the race for it): it starts on another port, and the log says why
            w2 = ConnectWorker(stack.run_dir, stack.bootstrap, stack.plugin_paths,
                               worker_name="worker-2", heap=stack.worker_heap)
            taken = w2.port
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
                squatter.bind((LOOPBACK, taken))
                squatter.listen()
                stack.workers.append(w2)
                w2.start()
            assert w2.port != taken and port_open(w2.port)
            assert (w2.dir / f"connect.port-taken-{taken}.log").exists()
            ports |= {w2.port}
            stack.workers[0].kill()  # one crashed
            stack.workers[0].restart()
            stack.workers[1].pause()  # one frozen at teardown
            raise Boom()
    left = child_pids() - before
    assert not left, f"processes left behind: {left}"
    still = ports & listening_ports()
    assert not still, f"ports still listening: {still}"
    assert not any(port_open(p) for p in ports)


def test_target_with_its_own_stack_stops_everything(tmp_path):
    """KafkaConnectTarget without a shared stack starts broker, S3 and worker itself (fetching
    jars on first use) and its stop() leaves nothing behind."""
    from adapters.connect.connector_config import default_config
    from adapters.connect.target import KafkaConnectTarget
    from adapters.observation import RecordToProduce

    before = child_pids()
    with KafkaConnectTarget(tmp_path, profile="filesink") as t:
        t.start(default_config("filesink", ["own"], None), {"own": 2})
        t.produce([RecordToProduce("own", i % 2, None, None, f"v{i}".encode()) for i in range(20)])
        assert t.wait_until_quiet(90), t.obs.still_moving
        ports = t.stack.ports()
        assert t.observe().final_offsets == {"own-0": 10, "own-1": 10}
        assert set(t.observe().log_paths) >= {"broker", "s3", "worker-1"}
    assert not (child_pids() - before)
    assert not (ports & listening_ports())


def test_unobtainable_plugin_is_reported_before_anything_starts(tmp_path):
    from adapters.connect.connector_config import default_config
    from adapters.connect.target import KafkaConnectTarget, PluginUnavailable

    before = child_pids()
    t = KafkaConnectTarget(tmp_path, profile="confluent")
    with pytest.raises(PluginUnavailable, match="plugin-path"):
        t.start(default_config("confluent", ["x"], None), {"x": 1})
    t.stop()
    assert not (child_pids() - before)


def test_free_ports_are_below_the_ephemeral_range_and_never_handed_out_twice():
    """Outgoing connections take their source ports from the ephemeral range: a server's port
    chosen there can be taken before the server binds it."""
    lo, _ = _ephemeral_range()
    ports = [free_port() for _ in range(200)]
    assert len(set(ports)) == len(ports)
    assert all(p < lo for p in ports)
