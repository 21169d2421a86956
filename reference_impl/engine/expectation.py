"""What the model expects: the data that crosses from `reference_impl` to the checkers.

`Expectation.to_json()` is the stable contract of `sinkcheck model --out EXPECTED.json`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ExpectedObject:
    """One committed file: the value object and its keys/headers siblings (R11.1)."""

    key: str
    topic: str
    partition: int
    encoded_partition: str
    offsets: tuple[int, ...]
    rotation: str  # the rule that closed it, e.g. "R3.8 flush.size"
    committed_offset: int  # offsetToCommit set by the rotation that committed it (R4.1)
    put_index: int | None = None  # which put committed it (None: no put schedule)
    at_ms: int | None = None  # wall-clock time of that put
    sibling_keys: tuple[tuple[str, str], ...] = ()  # (view, key) for "keys"/"headers"
    value_object: bool = True  # False for a tombstone file: only keys/headers exist (R12.3)
    certain: bool = True  # False: the task died in this put and this writer may not have run (R1.4)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "key": self.key,
            "topic": self.topic,
            "partition": self.partition,
            "encoded_partition": self.encoded_partition,
            "offsets": list(self.offsets),
            "rotation": self.rotation,
        }
        if self.sibling_keys:
            d["siblings"] = {view: k for view, k in self.sibling_keys}
        if not self.value_object:
            d["value_object"] = False
        if self.put_index is not None:
            d["put"] = self.put_index
            d["at"] = self.at_ms
        if not self.certain:
            d["certain"] = False
        return d


@dataclass(frozen=True)
class OpenFile:
    topic: str
    partition: int
    encoded_partition: str
    offsets: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "encoded_partition": self.encoded_partition,
            "offsets": list(self.offsets),
        }


@dataclass(frozen=True)
class TaskFailure:
    """Where the connector's task dies: the offset (None at task start), the rule, why."""

    offset: int | None
    rule: str
    message: str
    topic: str | None = None
    partition: int | None = None
    put_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"offset": self.offset, "rule": self.rule, "message": self.message}
        if self.topic is not None:
            d["topic"], d["partition"] = self.topic, self.partition
        if self.put_index is not None:
            d["put"] = self.put_index
        return d


@dataclass(frozen=True)
class SkippedRecord:
    """A record that never reaches a file: ignored null (R12.2) or DLQ'd (§13)."""

    topic: str
    partition: int
    offset: int
    rule: str
    reported: bool  # sent to the errant-record reporter (DLQ / error log)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TopicPartitionConstraints:
    """Scheduled rotation or the Wallclock extractor without a put schedule: the boundaries
    depend on wall-clock time, so only these hold."""

    topic: str
    partition: int
    offsets: tuple[int, ...]  # every offset that must be written to some file
    max_records_per_commit: int  # a commit set never holds more (flush.size, R2.4)
    encoded_partitions: dict[int, str] | None  # offset -> ep, None when it depends on the clock
    key_pattern: str  # how every key of this TP looks, with {ep} and {start} placeholders

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offsets": list(self.offsets),
            "max_records_per_commit": self.max_records_per_commit,
            "encoded_partitions": (
                None if self.encoded_partitions is None
                else {str(k): v for k, v in self.encoded_partitions.items()}
            ),
            "key_pattern": self.key_pattern,
            "rules": [
                "each object holds records of one encoded partition, in offset order",
                "each object's key names its first offset",
                "the objects of one topic-partition never overlap",
                "offsets are committed only at rotation: committed = last written offset of a commit set + 1",
            ],
        }


@dataclass
class Expectation:
    connector_version: str
    engine: str
    objects: list[ExpectedObject] = field(default_factory=list)
    committed_offsets: dict[str, int] = field(default_factory=dict)
    open: list[OpenFile] = field(default_factory=list)
    task_failure: TaskFailure | None = None
    skipped: list[SkippedRecord] = field(default_factory=list)
    constraints: list[TopicPartitionConstraints] | None = None
    constraints_reason: str | None = None
    conditional_writes: bool = False
    undelivered: dict[str, int] = field(default_factory=dict)  # tp -> records never put
    conflicts: list[dict[str, Any]] = field(default_factory=list)  # R8.2 conditional-write conflicts
    overwritten: list[str] = field(default_factory=list)  # existing keys replaced (R8.1 off)
    # objects an earlier config phase may have made visible above the next phase's restart
    # point: that phase writes their records again, over the same key with other records or
    # under other keys (C3)
    superseded: list[ExpectedObject] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"connector_version": self.connector_version, "engine": self.engine}
        if self.constraints is not None:
            out["objects"] = {
                "constraints": True,
                "reason": self.constraints_reason,
                "topic_partitions": [c.to_json() for c in self.constraints],
            }
        else:
            out["objects"] = [o.to_json() for o in self.objects]
        out["committed_offsets"] = dict(sorted(self.committed_offsets.items()))
        out["open"] = [o.to_json() for o in self.open]
        out["task_failure"] = self.task_failure.to_json() if self.task_failure else None
        out["skipped"] = [s.to_json() for s in self.skipped]
        out["conditional_writes"] = self.conditional_writes
        out["conflicts"] = self.conflicts
        out["overwritten"] = self.overwritten
        if self.undelivered:
            out["undelivered"] = dict(sorted(self.undelivered.items()))
        if self.superseded:
            out["superseded"] = [o.to_json() for o in self.superseded]
        return out
