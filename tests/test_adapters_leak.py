"""After the supervisor stops, nothing it started is left: no child process, no listening
port; also when the stack is stopped while a worker is SIGSTOPped and when the `with` block
raised."""
from __future__ import annotations

import pytest

from adapters.kafka_connect import plugins_dir
from adapters.supervisor import KafkaStack, child_pids, listening_ports, port_open

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
            w2 = stack.add_worker()  # two workers
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
