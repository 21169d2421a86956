"""The Target interface every sink adapter implements, and the data that crosses into it.

A target runs one scenario: it starts from a connector config, receives records to produce,
applies faults, waits until the sink is quiet and hands back an `Observation` (recorded raw:
checkers decode it later). Implementations: Kafka Connect workers running a connector plugin,
sinkcheck's own Python sink, and third-party sinks loaded by `module:Class` or the entry-point
group `sinkcheck.targets`.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

# RecordToProduce is part of this interface (produce's argument); it lives beside the
# ProducedRecord it becomes
from adapters.observation import Observation, RecordToProduce


@dataclass(frozen=True)
class Fault:
    """A fault to apply now. `kind` names it (e.g. `kill-worker`, `pause-worker`, `rebalance`,
    `update-config`, `restart-task`); `params` carries what that kind needs."""

    kind: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetInfo:
    """What a report needs to say about the target (never any secret)."""

    name: str
    connector_class: str | None = None
    connector_version: str | None = None
    kafka_version: str | None = None
    s3_server: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)


class TargetError(RuntimeError):
    """The target could not do what was asked (a process did not start, a wait ran out)."""


class UnsupportedFault(TargetError):
    """A fault kind this target cannot apply: the scenario asks what the target does not offer."""


class Target(abc.ABC):
    """A sink under test. Call order: start, then produce/apply_fault/wait_until_quiet any
    number of times, then observe, then stop. `stop` must be safe to call at any point and
    must leave no process or port behind."""

    # set by the runner before start() where the sink's task may fail its own start by design (a
    # rule on the start-up bucket check, R1.3): a task FAILED at start is then what the run
    # observes, and start() returns once the start has settled either way
    start_may_fail: bool = False

    @abc.abstractmethod
    def start(self, connector_config: Mapping[str, Any], topics: Mapping[str, int]) -> None:
        """Create the topics (name -> partition count) and start the sink with this config."""

    @abc.abstractmethod
    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        """Produce records in order; return the offset each one was written at."""

    @abc.abstractmethod
    def apply_fault(self, fault: Fault) -> None:
        """Apply a fault now and record it (with the time it fired) in the observation."""

    @abc.abstractmethod
    def wait_until_quiet(self, timeout_s: float) -> bool:
        """Wait until committed offsets are stable and no upload is in flight.
        Returns False when the timeout ran out; the observation says what was still moving."""

    @abc.abstractmethod
    def observe(self) -> Observation:
        """Everything recorded so far, plus a final sample of the bucket and the offsets."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop every process this target started."""

    @abc.abstractmethod
    def info(self) -> TargetInfo:
        """Describe the target for reports."""

    def __enter__(self) -> "Target":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
