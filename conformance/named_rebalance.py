"""Named scenarios for the shapes of a rebalance (conformance.rebalance_shapes): partitions
moving between two tasks under the cooperative assignor, and a worker joining and leaving with
records flowing between the two. Each must leave the objects the model names (R1.2, R1.8, §16)."""
from __future__ import annotations

from typing import Any, Callable

from conformance.rebalance_shapes import ASSIGNOR_OVERRIDE, COOPERATIVE_ASSIGNOR


def _two_tasks(n: int) -> tuple[dict[str, str], list[dict[str, Any]]]:
    from conformance.named import BASE, _small

    cfg = {**BASE, "flush.size": "3", "tasks.max": "2"}
    return cfg, [{**r, "partition": r["value"]["seq"] % 4} for r in _small(n)]


def cooperative_task_moves() -> Any:
    """tasks.max=2 on 4 partitions with CooperativeStickyAssignor; task 1 restarted with files
    open. Its consumer leaves (task 0 is given its partitions, nothing revoked from it), then
    rejoins, and the partitions move back: task 0 is revoked only those two, and must close only
    their writers (SinkTask.close gets the revoked partitions); its own two keep their open files
    and go on. The objects are those of an undisturbed run (§16)."""
    from conformance.scenario import FaultStep, Scenario

    cfg, recs = _two_tasks(28)
    return Scenario("cooperative-task-moves", {**cfg, ASSIGNOR_OVERRIDE: COOPERATIVE_ASSIGNOR}, {"events": 4}, recs,
                    faults=[FaultStep(14, "quiet", {"seconds": 30}), FaultStep(14, "restart-task", {"task": 1})],
                    notes="Confluent (R1.7, #649): close() drops every writer, so task 0 dies at the next record of a "
                          "partition it kept (\"No writer found\"); PR #950 closes only the revoked ones")


def worker_joins_then_leaves() -> Any:
    """tasks.max=2 on 4 partitions (eager assignor): a second Connect worker joins the group
    after 10 records (a task moves to it; the sink's group rebalances), 10 more records flow
    over both workers, then that worker stops gracefully (its task moves back) and the rest
    follow. Every move restarts a task from the committed offsets (R1.2) with every writer
    closed (R1.8): the same objects as an undisturbed run."""
    from conformance.scenario import FaultStep, Scenario

    cfg, recs = _two_tasks(30)
    return Scenario("worker-joins-then-leaves", cfg, {"events": 4}, recs,
                    faults=[FaultStep(10, "quiet", {"seconds": 30}), FaultStep(10, "add-worker"),
                            FaultStep(20, "quiet", {"seconds": 30}), FaultStep(20, "remove-worker")])


REBALANCE_SHAPES: dict[str, Callable[[], Any]] = {
    "cooperative-task-moves": cooperative_task_moves,
    "worker-joins-then-leaves": worker_joins_then_leaves,
}
