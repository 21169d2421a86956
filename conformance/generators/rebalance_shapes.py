"""The shapes a rebalance takes in Kafka Connect, for the generator and the named scenarios.

* eager or cooperative: a sink connector's consumers use the group's default assignor list,
  whose first (RangeAssignor) revokes every partition at each rebalance, unless the connector
  sets `consumer.override.partition.assignment.strategy` (sinkcheck's workers allow overrides:
  `connector.client.config.override.policy=All`). With CooperativeStickyAssignor a rebalance
  revokes only the partitions that move, and the task closes only those (SinkTask.close gets
  the revoked ones); its kept partitions keep their writers and open files.
* partitions moving between tasks: tasks.max above one, one task restarted (its consumer leaves
  and rejoins; the other takes its partitions meanwhile and gives them back).
* a worker joining (`add-worker`: the Connect group spreads the tasks over both workers, each
  moved task's consumer leaves and rejoins the sink's group) and one leaving gracefully
  (`remove-worker`: its tasks move to the worker that stays), with records between the two;
  and the short `rebalance` fault (a worker joins and leaves ten seconds later).

None of them changes what the sink must write: a task that takes a partition over resumes from
the committed offsets (R1.2) and, with deterministic boundaries, writes the same files (§16).
Where a connector closes every writer on a cooperative revocation (R1.7) the task that keeps
partitions dies at their next record: the known bug conformance.catalog.known_bugs names.
"""
from __future__ import annotations

from hypothesis import strategies as st

from conformance.inputs.scenario import FaultStep, Scenario

ASSIGNOR_OVERRIDE = "consumer.override.partition.assignment.strategy"
COOPERATIVE_ASSIGNOR = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
# the generated shapes; `worker-joins-leaves` adds a worker and removes that one again, so the
# stack a run shares with the next ones has its own workers back at the end
SHAPES = ("rebalance", "worker-joins-leaves", "task-moves")


def cooperative(config: dict[str, str]) -> bool:
    """Whether the connector's consumers rebalance cooperatively (the first assignor it names)."""
    first = str(config.get(ASSIGNOR_OVERRIDE, "")).split(",")[0].strip()
    return first.rsplit(".", 1)[-1] == "CooperativeStickyAssignor"


def tasks_max(config: dict[str, str]) -> int:
    try:
        return max(1, int(str(config.get("tasks.max", "1")).strip()))
    except ValueError:
        return 1


@st.composite
def assignors(draw: st.DrawFn, cfg: dict[str, str]) -> dict[str, str]:
    """`cfg`, with CooperativeStickyAssignor in one draw in two where several tasks share the
    partitions (with one task every rebalance moves all of them). Shrinks to the eager default."""
    if tasks_max(cfg) < 2 or not draw(st.booleans()):
        return cfg
    return {**cfg, ASSIGNOR_OVERRIDE: COOPERATIVE_ASSIGNOR}


@st.composite
def rebalance_shape(draw: st.DrawFn, cfg: dict[str, str], n_records: int) -> list[FaultStep]:
    """One rebalance of SHAPES as the steps that stage it: placed after drawn numbers of
    records, settled first (files committed, tails open) or mid-stream."""
    kinds = SHAPES if tasks_max(cfg) > 1 else SHAPES[:2]
    kind = draw(st.sampled_from(kinds))
    at = draw(st.integers(0, n_records))
    settle = [FaultStep(at, "quiet", {"seconds": 30})] if draw(st.booleans()) else []
    if kind == "rebalance":
        return settle + [FaultStep(at, "rebalance")]
    if kind == "task-moves":
        return settle + [FaultStep(at, "restart-task", {"task": draw(st.integers(0, tasks_max(cfg) - 1))})]
    later = draw(st.integers(at, n_records))
    return settle + [FaultStep(at, "add-worker"), FaultStep(later, "remove-worker")]


@st.composite
def rebalances(draw: st.DrawFn, cfg: dict[str, str], n_records: int) -> list[FaultStep]:
    """No rebalance in most draws, one (rebalance_shape) in one draw in four."""
    return draw(rebalance_shape(cfg, n_records)) if draw(st.integers(0, 3)) == 0 else []


def with_rebalance_shapes(draw: st.DrawFn, sc: Scenario, generated_config: bool, with_faults: bool) -> Scenario:
    """A generated scenario with an assignor drawn (for a generated config: a user's is kept)
    and, `with_faults`, maybe a rebalance added to its faults."""
    from dataclasses import replace

    cfg = draw(assignors(sc.connector)) if generated_config else sc.connector
    extra = draw(rebalances(cfg, len(sc.records))) if with_faults else []
    faults = sorted(sc.faults + extra, key=lambda f: f.after) if extra else sc.faults
    return replace(sc, connector=cfg, faults=faults)

