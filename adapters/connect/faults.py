"""The faults a Kafka Connect target applies to its own workers and connector: SIGKILL and
SIGSTOP of a worker, a worker joining and leaving, a config update, a task or connector restart
and a lost offset commit, each waiting until the group has moved on before the run goes on.
KafkaConnectTarget takes them from ConnectFaults; they read its stack, REST client and state."""
from __future__ import annotations

import time
import urllib.parse
from typing import Any, Mapping

from adapters.observation import FaultEvent
from adapters.processes.connect_worker import ConnectWorker
from adapters.processes.managed import now_ms, wait_until
from adapters.target import Fault, TargetError, UnsupportedFault

FAULTS = ("crash", "kill-worker", "pause", "resume", "pause-worker", "add-worker", "remove-worker", "rebalance",
          "update-config", "restart-task", "restart-connector", "lose-offset-commit")


def consumer_client_id(connector: str, task: int | str) -> str:
    """The client id Kafka Connect gives a sink task's consumer (Worker: `connector-consumer-` and
    the task id, `<connector>-<task>`)."""
    return f"connector-consumer-{connector}-{task}"


def task_replaced(task: int, connector: str, members_before: Mapping[str, str], members: Mapping[str, str],
                  state_before: str | None, state: str | None) -> bool:
    """Whether `task` has been restarted as far as a run can tell from outside: a consumer of its
    client id that was not a member before, or no instance left consuming (FAILED before, so
    none to replace; or FAILED now after it ran)."""
    cid = consumer_client_id(connector, task)
    if any(c == cid and m not in members_before for m, c in members.items()):
        return True
    return state_before == "FAILED" or (state == "FAILED" and state_before != "FAILED")


class ConnectFaults:
    """apply_fault and what it needs, for KafkaConnectTarget (see adapters.connect.target)."""

    def _worker(self, params: Mapping[str, Any]) -> ConnectWorker:
        """Worker `params["worker"]` (an index), else the one running task 0."""
        if "worker" not in params:
            return self._task_worker() or self.stack.workers[0]
        idx = int(params["worker"])
        try:
            return self.stack.workers[idx]
        except IndexError:
            raise TargetError(f"no worker #{idx}; the stack has {len(self.stack.workers)}") from None

    def _members(self) -> dict[str, str]:
        """Member id -> client id of the sink's consumer group now (none if it cannot be read)."""
        try:
            return self._offsets().member_clients()
        except Exception:  # noqa: BLE001 - the group may not exist yet
            return {}

    def _before_restart(self) -> tuple[dict[str, str], dict[int, str]]:
        """What a restart is measured against: the group's members and the tasks' states."""
        return self._members(), self._task_states()

    def _wait_task_replaced(self, before: tuple[dict[str, str], dict[int, str]], what: str,
                            tasks: list[int] | None = None, config: Mapping[str, str] | None = None) -> None:
        """Wait until each restarted task (`tasks`, default all of the connector's) has a
        consumer in the sink's group that was not there `before`, found by the client id Kafka
        Connect gives a task's consumer (`consumer_client_id`): the instance that consumed so far
        has stopped and a new one took its partitions (the REST calls return before that
        happens; producing on at once would feed the old instance). The other tasks' members stay
        and are no sign either way. A task that was FAILED before, or is FAILED now after
        RUNNING, has no instance consuming to be replaced: its records' fate is the run's
        result, not something to wait for. With `config` (properties just changed), first
        until every task config carries it."""
        members_before, states_before = before
        cname = urllib.parse.quote(self.name)
        log = self.stack.workers[0].log_path if self.stack.workers else None

        def tasks_carry_config() -> bool:
            tasks = self.rest.request("GET", f"/connectors/{cname}/tasks")
            return bool(tasks) and all(t.get("config", {}).get(k) == v for t in tasks for k, v in config.items())

        def replaced() -> bool:
            members, states = self._members(), self._task_states()
            ids = tasks if tasks is not None else sorted(states)
            return bool(ids) and all(task_replaced(t, self.name, members_before, members, states_before.get(t),
                                                   states.get(t)) for t in ids)

        if config:
            wait_until(tasks_carry_config, self.running_timeout_s,
                       f"the task configs of {self.name!r} to carry {sorted(config)}", log=log)
        which = ", ".join(consumer_client_id(self.name, t) for t in tasks) if tasks is not None else \
            consumer_client_id(self.name, "<task>")
        wait_until(replaced, self.running_timeout_s,
                   f"{what} (a new member in group {self.group} with client id {which}, or the task FAILED; "
                   f"members before: {sorted(members_before.values())})", log=log)

    def _wait_settled(self) -> None:
        """After a restart: every task RUNNING, or FAILED (a record that stops it is the run's
        result, which the checkers judge; wait_running would call it the harness's error)."""
        def settled() -> bool:
            st = self.status()
            states = [t.get("state") for t in st.get("tasks", [])]
            return st["connector"]["state"] == "RUNNING" and bool(states) and all(
                s in ("RUNNING", "FAILED") for s in states)

        wait_until(settled, self.running_timeout_s, f"connector {self.name!r} and its tasks to be RUNNING "
                   "(or a task FAILED)", log=self.stack.workers[0].log_path if self.stack.workers else None)

    def _task_worker(self, task: int = 0) -> ConnectWorker | None:
        """The worker the status topic says runs `task` (RUNNING), if any."""
        try:
            tasks = self.status().get("tasks", [])
        except Exception:  # noqa: BLE001 - no worker answers right now
            return None
        for t in tasks:
            if t.get("id") == task and t.get("state") == "RUNNING":
                port = str(t.get("worker_id", "")).rsplit(":", 1)[-1]
                return next((w for w in self.stack.workers if str(w.port) == port), None)
        return None

    def _wait_takeover(self, paused: ConnectWorker, timeout_s: float) -> str:
        """Wait until another worker runs task 0; what happened, for the fault's detail."""
        t0 = time.monotonic()
        others = [w for w in self.stack.workers if w is not paused and w.proc is not None and w.proc.alive]
        if not others:
            return "; no other worker to take the task over (a zombie needs workers=2)"
        def taken_over() -> ConnectWorker | None:
            w = self._task_worker()
            return w if w is not None and w is not paused else None

        try:
            w = wait_until(taken_over, timeout_s, f"another worker to run the task of {self.name!r} after "
                           f"{paused.name} stopped", log=others[0].log_path)
        except TargetError as e:
            return f"; no takeover: {str(e).splitlines()[0]}"
        return f"; task 0 RUNNING on {w.name} after {time.monotonic() - t0:.1f}s"

    def apply_fault(self, fault: Fault) -> None:
        kind, params = fault.kind, dict(fault.params)
        t0 = now_ms()
        detail = ""
        restart_from = None
        asked = kind  # recorded as the scenario named it
        if kind == "crash":  # the worker dies and comes back
            kind, params = "kill-worker", {"restart": True, **params}
        if kind == "kill-worker":
            w = self._worker(params)
            pid = w.proc.pid if w.proc else None
            w.kill()
            detail = f"SIGKILL to {w.name} (pid {pid})"
            time.sleep(float(params.get("downtime_s", 0)))
            if params.get("restart", True):
                w.restart()
                detail += f"; restarted as pid {w.proc.pid}"
        elif kind == "pause-worker":
            w = self._worker(params)
            w.pause()
            self._paused.append(w)
            time.sleep(float(params.get("duration_s", 5)))
            w.resume()
            self._paused.remove(w)
            detail = f"SIGSTOP/SIGCONT {w.name} (pid {w.proc.pid})"
        elif kind == "pause":  # a zombie: SIGSTOP, and it stays stopped until `resume`
            w = self._worker(params)
            w.pause()
            self._paused.append(w)
            detail = f"SIGSTOP {w.name} (pid {w.proc.pid})" + self._wait_takeover(
                w, float(params.get("takeover_timeout_s", 120)))
        elif kind == "resume":
            woke = [w for w in self._paused if w.proc is not None and w.proc.alive]
            for w in woke:
                w.resume()
            self._paused = []
            detail = f"SIGCONT {[w.name for w in woke]}"
        elif kind == "add-worker":
            w = self.stack.add_worker()
            detail = f"started {w.name} at {w.rest_url}"
        elif kind == "remove-worker":
            w = self._worker({"worker": params.get("worker", -1)})
            self.stack.remove_worker(w)
            detail = f"stopped {w.name}"
        elif kind == "rebalance":
            w = self.stack.add_worker()
            time.sleep(float(params.get("duration_s", 10)))
            self.stack.remove_worker(w)
            detail = f"{w.name} joined and left"
        elif kind == "update-config":
            changes = {str(k): str(v) for k, v in dict(params.get("config", {})).items()}
            new = self.updated_config(changes)
            before = self._before_restart()
            sent = self._submit_config(new)
            changed = new != self.config
            self.config = new
            if changed:  # Connect restarts the task only when its config changes
                self._wait_task_replaced(before, "the tasks to restart with the new config",
                                         config={k: sent[k] for k in changes})
            self._wait_settled()
            # the restarted task resumes from the group's committed offsets (R1.2)
            restart_from = self.committed_offsets()
            detail = f"PUT config with {sorted(params.get('config', {}))}; the task restarted from {restart_from}"
        elif kind == "restart-task":
            task = int(params.get("task", 0))
            before = self._before_restart()
            self.rest.request("POST", f"/connectors/{urllib.parse.quote(self.name)}/tasks/{task}/restart")
            self._wait_task_replaced(before, f"task {task} to restart", tasks=[task])
            self._wait_settled()
            restart_from = self.committed_offsets()
            detail = f"task {task} restarted from {restart_from}"
        elif kind == "restart-connector":
            before = self._before_restart()
            self.rest.request("POST", f"/connectors/{urllib.parse.quote(self.name)}/restart"
                                      f"?includeTasks=true")
            self._wait_task_replaced(before, "the connector and its tasks to restart")
            self._wait_settled()
            restart_from = self.committed_offsets()
            detail = f"connector and tasks restarted from {restart_from}"
        elif kind == "lose-offset-commit":
            restart_from = self._lose_offset_commit()
            detail = f"connector stopped, its group's offsets set back to {restart_from} (KIP-875), resumed"
        else:
            raise UnsupportedFault(f"fault {kind!r} is not supported by the Kafka Connect target; supported: "
                              f"{', '.join(FAULTS)}")
        with self._lock:
            self.obs.faults.append(FaultEvent(asked, params, True, t0, now_ms(), detail, restart_from=restart_from))
        self.obs.log_paths.update(self.stack.log_paths())

    def _lose_offset_commit(self) -> dict[str, int]:
        """The group's last offset commit lost, as when its offsets expire while the connector
        is stopped or a tool resets them: the connector is stopped, each partition's committed
        offset set back to the one committed before it (none before: the partition's start),
        and the connector resumed. Kafka Connect's own REST API does it (KIP-875: stop, PATCH
        offsets, resume); the tasks then read again from there."""
        now = self.committed_offsets()
        with self._lock:
            history = [s.committed for s in sorted(self.obs.offset_samples, key=lambda s: s.at_ms)]
        back = {}
        for tp, k in now.items():
            earlier = [h[tp] for h in history if h.get(tp) is not None and h[tp] < k]
            back[tp] = earlier[-1] if earlier else 0
        cname = urllib.parse.quote(self.name)
        self.rest.request("PUT", f"/connectors/{cname}/stop")
        wait_until(lambda: self.status().get("connector", {}).get("state") == "STOPPED" and not self.status().get("tasks"),
                   self.running_timeout_s, f"connector {self.name!r} to stop (PUT /connectors/{self.name}/stop)")
        body = {"offsets": [{"partition": {"kafka_topic": tp.rsplit("-", 1)[0], "kafka_partition": int(tp.rsplit("-", 1)[1])},
                             "offset": {"kafka_offset": k}} for tp, k in sorted(back.items())]}
        self.rest.request("PATCH", f"/connectors/{cname}/offsets", body)
        self.rest.request("PUT", f"/connectors/{cname}/resume")
        self.wait_running(self.running_timeout_s)
        return back
