"""The Observation: what happened during one run, recorded raw as a history.

Checkers read it offline and never talk to the system under test. Objects are kept as raw
bytes; decoding them is the checkers' job (with the model's format code).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence


@dataclass(frozen=True)
class RecordToProduce:
    """One record as a scenario asks for it; `partition` is explicit, never hashed."""

    topic: str
    partition: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(frozen=True)
class ProducedRecord:
    topic: str
    partition: int
    offset: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    at_ms: int = 0

    @classmethod
    def landed(cls, records: Sequence[RecordToProduce], offsets: Sequence[int], at_ms: int) -> list["ProducedRecord"]:
        """What a target records of a produce call: each record at the offset it landed at."""
        return [cls(r.topic, r.partition, off, r.timestamp, r.key, r.value, tuple(r.headers), at_ms)
                for r, off in zip(records, offsets)]


@dataclass(frozen=True)
class S3Object:
    key: str
    size: int
    etag: str
    body: bytes | None = None
    last_modified_ms: int | None = None


@dataclass(frozen=True)
class BucketSample:
    """A listing of the bucket (with bodies where read) taken at `at_ms`.

    `committed_keys`: for a sink that keeps its own commit log next to the data (Spark's
    `_spark_metadata`), the data files that log lists at this moment, as a reader following the
    log sees them; None for sinks without one (a raw listing is all there is)."""

    at_ms: int
    objects: tuple[S3Object, ...]
    open_uploads: tuple[tuple[str, str], ...] = ()  # (key, upload id)
    committed_keys: tuple[str, ...] | None = None


@dataclass(frozen=True)
class TableSample:
    """A table sink's table at `at_ms` (Apache Iceberg's), read through its catalog before the
    bucket listing it goes with: every file it references is already in that listing.

    `data_files`: the bucket keys of the data files of the current snapshot; `snapshots`: every
    snapshot so far, oldest first, as (id, commit time ms, record count added, the summary)."""

    at_ms: int
    table: str
    snapshot_id: int | None
    data_files: tuple[str, ...]
    record_count: int
    snapshots: tuple[tuple[int, int, int, tuple[tuple[str, str], ...]], ...] = ()
    metadata_location: str | None = None


@dataclass(frozen=True)
class OffsetSample:
    """The sink's committed offsets ("topic-partition" -> next offset to read) at `at_ms`."""

    at_ms: int
    committed: dict[str, int]
    generation: int | None = None


@dataclass(frozen=True)
class FaultEvent:
    """A fault as applied: `fired` is False when its trigger never matched."""

    kind: str
    params: dict[str, Any]
    fired: bool
    at_ms: int | None = None
    until_ms: int | None = None
    detail: str = ""
    # for faults after which the sink starts over (a restart, a config update): the committed
    # offsets ("topic-partition" -> offset) it restarted from, when the target knows them
    restart_from: dict[str, int] | None = None


@dataclass(frozen=True)
class PutSample:
    """One put() as the consumer side made it: the wall-clock time it was handed (R2.1's `now`),
    the instance, and the records of its batch as (topic, partition, offset), in batch order."""

    at_ms: int
    instance: str
    records: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class StatusSample:
    at_ms: int
    connector_state: str
    task_states: tuple[str, ...]
    trace: str | None = None


@dataclass
class Observation:
    produced: list[ProducedRecord] = field(default_factory=list)
    bucket_samples: list[BucketSample] = field(default_factory=list)
    offset_samples: list[OffsetSample] = field(default_factory=list)
    faults: list[FaultEvent] = field(default_factory=list)
    statuses: list[StatusSample] = field(default_factory=list)
    quiet: bool | None = None
    still_moving: str = ""
    log_paths: dict[str, str] = field(default_factory=dict)
    # a table sink's table over time (TableSample), and the offsets of its own Kafka topics
    # ("control topic log end", "coordinator group committed", ...: name -> topic-partition -> offset)
    table_samples: list[TableSample] = field(default_factory=list)
    control_offsets: dict[str, dict[str, int]] = field(default_factory=dict)
    # every put() with its wall-clock time, where the target knows them (a simulation's virtual
    # clock); None where it does not (a real worker's puts are not observable one by one)
    puts: list[PutSample] | None = None
    # the Schema Registry's schemas and subjects after the run (adapters.registry.snapshot
    # RegistrySnapshot), where the records were written in its wire format; the checkers read
    # the records' schemas from it
    registry: Any = None

    @property
    def final_bucket(self) -> BucketSample | None:
        return self.bucket_samples[-1] if self.bucket_samples else None

    @property
    def final_offsets(self) -> dict[str, int]:
        return dict(self.offset_samples[-1].committed) if self.offset_samples else {}


class QuietWatch:
    """wait_until_quiet's bookkeeping, one per wait: how long the sampled state has stayed the
    same (in the caller's clock: wall seconds, or a simulation's virtual milliseconds), and the
    outcome recorded in the observation under the target's lock."""

    def __init__(self, obs: Observation, lock: Any, now: float):
        self.obs, self.lock = obs, lock
        self.last: Any = None
        self.since = now

    def unchanged_for(self, state: Any, now: float) -> float:
        if state != self.last:
            self.last, self.since = state, now
        return now - self.since

    def end(self, quiet: bool, still_moving: str = "") -> bool:
        with self.lock:
            self.obs.quiet, self.obs.still_moving = quiet, still_moving
        return quiet

