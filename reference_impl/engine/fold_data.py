"""What the rotation fold reads and yields: a put's records as columns (`RecordColumns`, from
`columns_from_records`), the puts, the files it commits and its `FoldResult`."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence
import numpy as np

from reference_impl.config import SinkConfig
from reference_impl.connect_data import Schema, SinkRecord
from reference_impl.errors import ConnectorError
from reference_impl.engine.expectation import ExpectedObject, OpenFile, SkippedRecord, TaskFailure
from reference_impl.formats import DataError as FormatDataError
from reference_impl.naming import format_options
from reference_impl.formats import WriterFailure, format_for, view_of
from reference_impl.naming import object_key
from reference_impl.partitioning import Partitioner


NO_CODE = -1  # the record needs the step-by-step path (an error, a null, a clock-dependent ep)


class SchemaCodes:
    """Small integers for value schemas: equal codes ⇔ `Schema.equals` (R14.2). Code 0 is
    "no schema" (schemaless values and nulls)."""

    def __init__(self) -> None:
        self._codes: dict[Any, int] = {None: 0}
        self.schemas: list[Schema | None] = [None]

    def code(self, schema: Schema | None) -> int:
        key: Any = schema
        try:
            hash(key)
        except TypeError:
            key = repr(schema)
        c = self._codes.get(key)
        if c is None:
            c = self._codes[key] = len(self.schemas)
            self.schemas.append(schema)
        return c


@dataclass
class RecordColumns:
    """One put's records for one topic-partition, as columns.

    `ep_codes[i]` indexes `eps` (NO_CODE: compute it step by step); `ts[i]` is the timestamp
    the writer would extract (valid where `ts_valid`); `simple[i]` says the record can be
    written without any check failing (not null, writable in every format stored)."""

    offsets: np.ndarray
    ts: np.ndarray
    ts_valid: np.ndarray
    ep_codes: np.ndarray
    eps: list[str]
    schema_codes: np.ndarray
    simple: np.ndarray
    record: Callable[[int], SinkRecord]

    def __len__(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True)
class Put:
    """One put() as this topic-partition's writer sees it: when, and its records."""

    index: int | None
    at_ms: int | None
    records: Sequence[SinkRecord] | None = None
    columns: RecordColumns | None = None


@dataclass(frozen=True)
class CommittedFile:
    """A file as its rotation committed it (R3.1); `offsets` in write order."""

    ep: str
    offsets: np.ndarray
    rotation: str
    committed_offset: int
    put_index: int | None
    at_ms: int | None


@dataclass
class FoldResult:
    topic: str
    partition: int
    files: list[CommittedFile] = field(default_factory=list)
    committed_offset: int | None = None
    open: list[OpenFile] = field(default_factory=list)
    failure: TaskFailure | None = None
    skipped: list[SkippedRecord] = field(default_factory=list)
    conflicts: list[dict] = field(default_factory=list)  # R8.2: 412 on commit, skipped ahead
    overwritten: list[str] = field(default_factory=list)  # R8.1 off: an existing key replaced
    cfg: SinkConfig | None = None

    @functools.cached_property
    def objects(self) -> list[ExpectedObject]:
        assert self.cfg is not None
        return [expected_object(self.cfg, self.topic, self.partition, f) for f in self.files]


def expected_object(cfg: SinkConfig, topic: str, partition: int, f: CommittedFile) -> ExpectedObject:
    start = int(f.offsets[0])
    key = object_key(cfg, topic, partition, f.ep, start)
    views = [v for v, on in (("keys", cfg.store_kafka_keys), ("headers", cfg.store_kafka_headers)) if on]
    return ExpectedObject(
        key=key, topic=topic, partition=partition, encoded_partition=f.ep,
        offsets=tuple(f.offsets.tolist()), rotation=f.rotation, committed_offset=f.committed_offset,
        put_index=f.put_index, at_ms=f.at_ms,
        sibling_keys=tuple((v, object_key(cfg, topic, partition, f.ep, start, v)) for v in views),
        value_object=cfg.tombstone_encoded_partition not in key,
    )


class TaskDeath(Exception):
    def __init__(self, failure: TaskFailure):
        self.failure = failure


class WriteConflict(Exception):
    """FileExistsException (R8.2): retriable, caught by put() (R1.5)."""

    def __init__(self, rewind_to: int):
        self.rewind_to = rewind_to


# --- columns from records -------------------------------------------------------------------

def columns_from_records(
    cfg: SinkConfig, partitioner: Partitioner, records: Sequence[SinkRecord], now: int | None,
    schema_codes: SchemaCodes,
) -> RecordColumns:
    """The per-record columns, by the partitioner's and formats' own rules."""
    n = len(records)
    offsets = np.fromiter((r.offset for r in records), dtype=np.int64, count=n)
    ts = np.zeros(n, dtype=np.int64)
    ts_valid = np.ones(n, dtype=bool)
    ep_codes = np.full(n, NO_CODE, dtype=np.int64)
    schemas = np.zeros(n, dtype=np.int64)
    simple = np.zeros(n, dtype=bool)
    eps: list[str] = []
    ep_index: dict[str, int] = {}
    timed = partitioner.time_based and partitioner.extractor is not None
    checks = _writability(cfg)
    for i, r in enumerate(records):
        schemas[i] = schema_codes.code(r.value_schema)
        try:
            t = partitioner.timestamp_for_rotation(r, now) if timed else None
            if timed:
                if t is None:
                    ts_valid[i] = False
                else:
                    ts[i] = t
            ep = partitioner.encode(r, now, t if timed else None)
        except ConnectorError:
            continue
        code = ep_index.get(ep)
        if code is None:
            code = ep_index[ep] = len(eps)
            eps.append(ep)
        ep_codes[i] = code
        simple[i] = r.value is not None and checks(r)
    return RecordColumns(offsets, ts, ts_valid, ep_codes, eps, schemas, simple, records.__getitem__)


def _writability(cfg: SinkConfig) -> Callable[[SinkRecord], bool]:
    """True when no writer check (R11.4, the formats' DataExceptions) can fail for a record."""
    fmts = [(v, format_for(c)) for v, c, on in (
        ("value", cfg.format_class, True),
        ("keys", cfg.keys_format_class, cfg.store_kafka_keys),
        ("headers", cfg.headers_format_class, cfg.store_kafka_headers)) if on]

    def ok(r: SinkRecord) -> bool:
        if cfg.store_kafka_keys and r.key is None:
            return False
        if cfg.store_kafka_headers and not r.headers:
            return False
        for view, fmt in fmts:
            value, schema = view_of(r, view)
            try:
                fmt.check_writable(value, schema, view, format_options(cfg))
                fmt.check_append(1, value, schema, view, format_options(cfg))  # a run appends to a file already started
            except (FormatDataError, WriterFailure):
                return False
        return True

    return ok
