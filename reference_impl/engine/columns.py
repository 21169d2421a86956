"""Record columns from Arrow data: the shared reading path of both engines for a topic's
records without a put schedule (one put holding everything, R1.4).

The Spark engine streams Arrow batches from `mapInArrow`; the local engine reads a Parquet
dump with pyarrow. Both hand the rows to `fold_arrow_batches`, which cuts them into
topic-partitions (each whole and in offset order, as a topic's log is kept) and feeds the
same fold."""
from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

import numpy as np

from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.expectation import SkippedRecord
from reference_impl.engine.fold import TopicPartitionFold
from reference_impl.engine.fold_data import FoldResult, Put, RecordColumns, columns_from_records
from reference_impl.formats import format_for
from reference_impl.engine.model import null_action

if False:  # typing only
    from reference_impl.engine.expectation import Expectation
from reference_impl.partitioning import Partitioner

RECORD_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "value", "headers")


def record_from_row(row: dict[str, Any]) -> SinkRecord:
    def load(s: Any) -> Any:
        return None if s is None else json.loads(s)

    return SinkRecord.from_json({
        "topic": row["topic"], "partition": int(row["partition"]), "offset": int(row["offset"]),
        "timestamp": None if row["timestamp"] is None or row["timestamp"] != row["timestamp"] else int(row["timestamp"]),
        "key": load(row["key"]), "value": load(row["value"]),
        "headers": load(row["headers"]) if row["headers"] is not None else [],
    })


def _null_values(table) -> np.ndarray:
    """Which rows have a null value (a JSON `null` is a null record value too). Rows marked
    `sc_plain` were checked by Spark and carry no value."""
    import pyarrow.compute as pc

    value = table.column("value")
    nulls = pc.fill_null(pc.or_(pc.is_null(value), pc.equal(value, "null")), True).to_numpy(zero_copy_only=False)
    if "sc_plain" in table.column_names:
        nulls = nulls & ~table.column("sc_plain").to_numpy(zero_copy_only=False)
    return nulls


def columns_from_arrow(cfg: SinkConfig, partitioner, fold: TopicPartitionFold, table, now: int | None) -> RecordColumns:
    """A slice of one topic-partition's rows (a pyarrow Table) as fold columns. Schemaless
    JSON records whose encoded partition `Partitioner.encode_many` gives are read as columns,
    with no Python object per record; any other slice is parsed record by record
    (`columns_from_records`)."""
    import pyarrow.compute as pc

    n = table.num_rows

    def record(i: int) -> SinkRecord:
        return record_from_row({c: table.column(c)[i].as_py() for c in RECORD_COLUMNS})

    value = table.column("value")
    is_null = _null_values(table)
    stripped = "sc_plain" in table.column_names
    envelope = False if stripped else pc.any(pc.fill_null(pc.starts_with(value, '{"schema"'), False)).as_py()
    json_views = format_for(cfg.format_class).name == "json" and all(
        format_for(c).name == "json" for c, on in ((cfg.keys_format_class, cfg.store_kafka_keys),
                                                    (cfg.headers_format_class, cfg.store_kafka_headers)) if on)
    ts_col = table.column("timestamp")
    ts_valid = pc.is_valid(ts_col).to_numpy(zero_copy_only=False)
    ts = pc.fill_null(ts_col, 0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    many = None
    if json_views and not envelope and cfg.behavior_on_null_values != "write":
        many = partitioner.encode_many(int(table.column("partition")[0].as_py()), ts)
    if many is None:
        if stripped:
            raise AssertionError("plain rows were stripped of their values, but encode_many does not apply")
        return columns_from_records(cfg, partitioner, [record(i) for i in range(n)], now, fold.codes)
    # JSON writes any schemaless value (R10.1); only nulls, missing keys and headers remain
    codes, eps = many
    simple = table.column("sc_plain").to_numpy(zero_copy_only=False).copy() if stripped else ~is_null
    if partitioner.time_based and partitioner.extractor is not None:
        simple &= ts_valid
    else:
        ts_valid = np.ones(n, dtype=bool)
    if cfg.store_kafka_keys and not stripped:
        key = table.column("key")
        simple &= ~pc.fill_null(pc.or_(pc.is_null(key), pc.equal(key, "null")), True).to_numpy(zero_copy_only=False)
    if cfg.store_kafka_headers and not stripped:
        h = pc.replace_substring(table.column("headers"), " ", "")
        simple &= ~pc.fill_null(pc.or_(pc.is_null(h), pc.equal(h, "[]")), True).to_numpy(zero_copy_only=False)
    codes = np.where(simple, codes, -1)
    offsets = table.column("offset").to_numpy().astype(np.int64, copy=False)
    return RecordColumns(offsets, ts, ts_valid, codes, eps, np.zeros(n, dtype=np.int64), simple, record)


def fold_arrow_batches(
    cfg: SinkConfig, partitioner: Partitioner, batches: Iterable[Any], existing_keys: frozenset[str] = frozenset(),
) -> Iterator[tuple[FoldResult, list[SkippedRecord], bool]]:
    """Fold Arrow record batches whose topic-partitions come whole and in offset order.
    Yields (result, null-policy skips, out-of-order seen) per topic-partition."""
    import pyarrow as pa
    import pyarrow.compute as pc

    put = Put(None, None)
    fold: TopicPartitionFold | None = None
    skipped: list[SkippedRecord] = []
    last_offset = -1
    unclustered = False
    for batch in batches:
        if batch.num_rows == 0:
            continue
        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        part = table.column("partition").to_numpy(zero_copy_only=False)
        topic_col = table.column("topic")
        change = np.zeros(len(part), dtype=bool)
        change[0] = True
        if len(part) > 1:
            change[1:] = (part[1:] != part[:-1]) | pc.not_equal(
                topic_col.slice(1), topic_col.slice(0, len(part) - 1)).to_numpy(zero_copy_only=False)
        cuts = np.flatnonzero(change).tolist() + [len(part)]
        for a, b in zip(cuts, cuts[1:]):
            seg = table.slice(a, b - a)
            topic, partition = seg.column("topic")[0].as_py(), int(part[a])
            if fold is None or (fold.topic, fold.partition) != (topic, partition):
                if fold is not None:
                    fold.end_put(put)
                    yield fold.finish(), skipped, unclustered
                fold = TopicPartitionFold(cfg, partitioner, topic, partition, existing_keys)
                skipped, last_offset, unclustered = [], -1, False
            offs = seg.column("offset").to_numpy(zero_copy_only=False)
            if offs[0] <= last_offset or (len(offs) > 1 and (np.diff(offs) <= 0).any()):
                unclustered = True
            last_offset = int(offs[-1])
            nulls = _null_values(seg)
            if nulls.any():
                first = int(np.flatnonzero(nulls)[0])
                act = null_action(cfg, record_from_row({c: seg.column(c)[first].as_py() for c in RECORD_COLUMNS}))
                if act and act[0].startswith("skip"):
                    skipped += [SkippedRecord(topic, partition, int(o), act[1], act[0] == "skip-reported")
                                for o in offs[nulls]]
                    seg = seg.filter(pa.array(~nulls))
            if seg.num_rows:
                fold.feed(put, columns_from_arrow(cfg, partitioner, fold, seg, None))
    if fold is not None:
        fold.end_put(put)
        yield fold.finish(), skipped, unclustered


def expect_arrow(cfg: SinkConfig, table: Any, jvm_zone: str = "UTC") -> "Expectation":
    """The local engine over an Arrow table of records (e.g. a Parquet dump read with
    pyarrow), one put holding everything: sorted by topic-partition and offset, then folded
    like the Spark engine's streaming path."""
    from reference_impl.engine.model import assemble, first_fatal_null, resolve_failure, start_failure, tp_key
    from reference_impl.partitioning import build_partitioner

    started = start_failure(cfg, "local")
    if started:
        return started
    if cfg.wallclock_dependent:
        raise ValueError("this config depends on wall-clock time: give the records as JSONL with a put schedule")
    table = table.sort_by([("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")])
    nulls = _null_values(table)
    if nulls.any():
        idx = np.flatnonzero(nulls)
        kill = first_fatal_null(cfg, [record_from_row({c: table.column(c)[int(i)].as_py() for c in RECORD_COLUMNS})
                                      for i in idx[:1]], None)
        if kill is not None:
            return assemble(cfg, "local", [], [], {}, kill)
    results, skipped = [], []
    for res, sk, _ in fold_arrow_batches(cfg, build_partitioner(cfg, jvm_zone), table.to_batches(max_chunksize=100_000)):
        results.append(res)
        skipped += sk
    # a dump has no put order: everything is one put, so nothing is re-folded (R1.4)
    results, failure = resolve_failure(results, None, lambda k, only: [])
    return assemble(cfg, "local", results, skipped, {}, failure)
