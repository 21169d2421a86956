"""Named scenarios for the shapes of a rebalance (conformance.generators.rebalance_shapes): a worker
joining and leaving with records flowing between the two, under the eager and the cooperative
assignor (partitions moving between two tasks). Each must leave the objects the model names (R1.2, R1.8, §16)."""
from __future__ import annotations

from typing import Any, Callable

from conformance.generators.rebalance_shapes import ASSIGNOR_OVERRIDE, COOPERATIVE_ASSIGNOR


def _two_tasks(n: int) -> tuple[dict[str, str], list[dict[str, Any]]]:
    from conformance.catalog.base import BASE, _small

    cfg = {**BASE, "flush.size": "3", "tasks.max": "2"}
    return cfg, [{**r, "partition": r["value"]["seq"] % 4} for r in _small(n)]


def _joins_then_leaves(name: str, cfg: dict[str, str], recs: list[dict[str, Any]], notes: str = "") -> Any:
    from conformance.inputs.scenario import FaultStep, Scenario

    return Scenario(name, cfg, {"events": 4}, recs, notes=notes,
                    faults=[FaultStep(10, "quiet", {"seconds": 30}), FaultStep(10, "add-worker"),
                            FaultStep(20, "quiet", {"seconds": 30}), FaultStep(20, "remove-worker")])


def worker_joins_then_leaves() -> Any:
    """tasks.max=2 on 4 partitions (eager assignor): a second Connect worker joins the group
    after 10 records (a task moves to it; the sink's group rebalances), 10 more records flow
    over both workers, then that worker stops gracefully (its task moves back) and the rest
    follow. Every move restarts a task from the committed offsets (R1.2) with every writer
    closed (R1.8): the same objects as an undisturbed run."""
    cfg, recs = _two_tasks(30)
    return _joins_then_leaves("worker-joins-then-leaves", cfg, recs)


def cooperative_worker_joins_then_leaves() -> Any:
    """The same with CooperativeStickyAssignor. The task that moves to the new worker stops
    first (its consumer leaves: the other task is given its partitions, nothing revoked from
    it) and starts there a moment later (it rejoins, and the two partitions move back: the
    other task is revoked only those). SinkTask.close gets the revoked partitions; the kept
    ones keep their writers and open files and go on. The objects are an undisturbed run's
    (§16)."""
    cfg, recs = _two_tasks(30)
    return _joins_then_leaves("cooperative-worker-joins-then-leaves", {**cfg, ASSIGNOR_OVERRIDE: COOPERATIVE_ASSIGNOR},
                              recs, notes="Confluent (R1.7, #649): close() drops every writer, so the task that kept "
                                          "partitions dies at their next record (\"No writer found\"); #950 closes "
                                          "only the revoked ones")


REBALANCE_SHAPES: dict[str, Callable[[], Any]] = {
    "cooperative-worker-joins-then-leaves": cooperative_worker_joins_then_leaves,
    "worker-joins-then-leaves": worker_joins_then_leaves,
}
