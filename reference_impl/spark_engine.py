"""The Spark engine: the same fold, distributed over topic-partitions with PySpark.

Records come from a DataFrame (a JSONL file, a Parquet dump of a real topic, or anything with
the columns below), are grouped by topic-partition and folded by `fold_topic_partition` inside
`applyInPandas`. Records never travel to the driver: only the fold's results (objects, open
files, committed offsets, failures) do, and those can be written as a Parquet manifest.

Record columns: topic string, partition int, offset long, timestamp long (nullable),
key / value / headers string (JSON text; a value in JsonConverter's envelope is a Struct),
and optionally seq long (the record's place in the put order; required with a put schedule).
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterator, Sequence

from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.expectation import (
    ExpectedObject,
    Expectation,
    OpenFile,
    SkippedRecord,
    TaskFailure,
    TopicPartitionConstraints,
)
from reference_impl.fold import FoldResult, fold_topic_partition
from reference_impl.model import (
    PutSpec,
    assemble,
    build_puts,
    constraints_for,
    null_action,
    put_boundaries,
    put_index_of,
    tp_key,
    _NULL_MESSAGES,
    constraints_reason,
    resolve_failure,
    start_failure,
)
from reference_impl.partitioning import build_partitioner

RECORD_DDL = (
    "topic string, partition int, offset long, timestamp long, "
    "key string, value string, headers string, seq long"
)
MANIFEST_DDL = (
    "kind string, topic string, partition int, key string, encoded_partition string, "
    "offsets array<long>, rotation string, committed_offset long, put_index int, at_ms long, "
    "siblings string, value_object boolean, certain boolean, rule string, message string, "
    "failure_offset long, reported boolean, count long"
)


def spark_session(master: str | None = None, app: str = "sinkcheck-model"):
    """An embedded `local[*]` session by default, bound to loopback; any `spark.master` works."""
    from pyspark.sql import SparkSession

    master = master or os.environ.get("SINKCHECK_SPARK_MASTER") or "local[*]"
    builder = (
        SparkSession.builder.appName(app)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", str(max(4, 2 * (os.cpu_count() or 2))))
        .config("spark.python.worker.reuse", "true")
    )
    if master.startswith("local"):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    return builder.getOrCreate()


def records_dataframe(spark, path: str):
    """RECORDS.jsonl or a Parquet dump as a record DataFrame (key/value/headers as JSON text)."""
    from pyspark.sql import functions as F

    if path.endswith(".parquet") or os.path.isdir(path):
        df = spark.read.parquet(path)
    else:
        # A string-typed field keeps the raw JSON text of objects and arrays.
        schema = "topic string, partition int, offset long, timestamp long, key string, value string, headers string"
        df = spark.read.schema(schema).json(path)
        rdd = df.rdd.zipWithIndex().map(lambda t: (*t[0], t[1]))
        df = spark.createDataFrame(rdd, RECORD_DDL)
    if "seq" not in df.columns:
        df = df.withColumn("seq", F.lit(None).cast("long"))
    return df.select(*[c.split()[0] for c in RECORD_DDL.split(", ")])


def records_to_dataframe(spark, records: Sequence[SinkRecord] | Sequence[dict[str, Any]]):
    """Small inputs built in Python (tests): raw RECORDS.jsonl dicts, in put order."""
    rows = []
    for seq, r in enumerate(records):
        assert isinstance(r, dict), "pass the raw JSON objects, so values keep their envelope"
        rows.append((
            r["topic"], r["partition"], r["offset"], r.get("timestamp"),
            json.dumps(r.get("key")), json.dumps(r.get("value")),
            json.dumps(r.get("headers", [])), seq,
        ))
    return spark.createDataFrame(rows, RECORD_DDL)


def _record(row: dict[str, Any]) -> SinkRecord:
    def load(s: Any) -> Any:
        return None if s is None else json.loads(s)

    return SinkRecord.from_json({
        "topic": row["topic"], "partition": int(row["partition"]), "offset": int(row["offset"]),
        "timestamp": None if row["timestamp"] is None or row["timestamp"] != row["timestamp"] else int(row["timestamp"]),
        "key": load(row["key"]), "value": load(row["value"]),
        "headers": load(row["headers"]) if row["headers"] is not None else [],
    })


def _records_of(pdf) -> list[tuple[int, SinkRecord]]:
    pdf = pdf.sort_values(["seq", "offset"] if pdf["seq"].notna().all() else ["offset"])
    out = []
    for n, row in enumerate(pdf.to_dict("records")):
        seq = row["seq"]
        out.append((int(seq) if seq is not None and seq == seq else n, _record(row)))
    return out


def _fold_rows(res: FoldResult, skipped: list[SkippedRecord], undelivered: int) -> list[dict[str, Any]]:
    base = dict.fromkeys(c.split()[0] for c in MANIFEST_DDL.split(", "))
    rows = []
    for o in res.objects:
        rows.append({**base, "kind": "object", "topic": o.topic, "partition": o.partition, "key": o.key,
                     "encoded_partition": o.encoded_partition, "offsets": list(o.offsets), "rotation": o.rotation,
                     "committed_offset": o.committed_offset, "put_index": o.put_index, "at_ms": o.at_ms,
                     "siblings": json.dumps(dict(o.sibling_keys)), "value_object": o.value_object, "certain": o.certain})
    for f in res.open:
        rows.append({**base, "kind": "open", "topic": f.topic, "partition": f.partition,
                     "encoded_partition": f.encoded_partition, "offsets": list(f.offsets)})
    rows.append({**base, "kind": "tp", "topic": res.topic, "partition": res.partition,
                 "committed_offset": res.committed_offset, "count": undelivered})
    if res.failure is not None:
        f = res.failure
        rows.append({**base, "kind": "failure", "topic": f.topic, "partition": f.partition, "rule": f.rule,
                     "message": f.message, "failure_offset": f.offset, "put_index": f.put_index})
    for c in res.conflicts:
        rows.append({**base, "kind": "conflict", "topic": res.topic, "partition": res.partition, "key": c["key"],
                     "failure_offset": c["next_start"], "rule": c["rule"]})
    for k in res.overwritten:
        rows.append({**base, "kind": "overwrite", "topic": res.topic, "partition": res.partition, "key": k})
    for s in skipped + res.skipped:
        rows.append({**base, "kind": "skipped", "topic": s.topic, "partition": s.partition,
                     "failure_offset": s.offset, "rule": s.rule, "reported": s.reported})
    return rows


def fold_manifest(cfg: SinkConfig, df, puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                  stop_before: int | None = None, only: set[tuple[str, int]] | None = None,
                  existing_keys: frozenset[str] = frozenset()):
    """The fold as a DataFrame of manifest rows (kind = object | open | tp | failure | skipped)."""
    import pandas as pd
    from pyspark.sql import functions as F

    bounds = put_boundaries(puts, 1 << 62) if puts is not None else None
    if only is not None:
        cond = None
        for t, p in only:
            c = (F.col("topic") == t) & (F.col("partition") == p)
            cond = c if cond is None else (cond | c)
        df = df.filter(cond)
    columns = [c.split()[0] for c in MANIFEST_DDL.split(", ")]

    def fold_group(pdf: "pd.DataFrame") -> "pd.DataFrame":
        pairs = _records_of(pdf)
        topic, partition = pairs[0][1].topic, pairs[0][1].partition
        tp_puts, skipped, never = build_puts(cfg, pairs, puts, bounds, stop_before)
        res = fold_topic_partition(cfg, build_partitioner(cfg, jvm_zone), topic, partition, tp_puts, existing_keys)
        return pd.DataFrame(_fold_rows(res, skipped, never), columns=columns)

    return df.groupBy("topic", "partition").applyInPandas(fold_group, MANIFEST_DDL)


def _fatal_null(cfg: SinkConfig, df, bounds: Sequence[int] | None) -> TaskFailure | None:
    """R1.4 step 1 over the whole input; only null-valued rows are looked at."""
    import pandas as pd
    from pyspark.sql import functions as F

    nulls = df.filter(F.col("value").isNull() | (F.trim(F.col("value")) == "null"))

    def actions(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        for pdf in batches:
            out = []
            for row in pdf.to_dict("records"):
                act = null_action(cfg, _record(row))
                if act and act[0] == "kill":
                    out.append({"topic": row["topic"], "partition": row["partition"], "offset": row["offset"],
                                "seq": row["seq"], "rule": act[1]})
            yield pd.DataFrame(out, columns=["topic", "partition", "offset", "seq", "rule"])

    kills = nulls.mapInPandas(actions, "topic string, partition int, offset long, seq long, rule string")
    first = kills.orderBy(F.col("seq").asc_nulls_last(), "offset").limit(1).collect()
    if not first:
        return None
    r = first[0]
    put = None
    if bounds is not None:
        put = put_index_of(bounds, r["seq"])
        if put is None:
            return None
    return TaskFailure(r["offset"], r["rule"], _NULL_MESSAGES[r["rule"]], r["topic"], r["partition"], put)


def _results_from_rows(rows) -> tuple[list[FoldResult], list[SkippedRecord], dict[str, int]]:
    by_tp: dict[tuple[str, int], FoldResult] = {}
    skipped: list[SkippedRecord] = []
    undelivered: dict[str, int] = {}
    objects: dict[tuple[str, int], list[ExpectedObject]] = {}
    for r in rows:
        tp = (r["topic"], r["partition"])
        res = by_tp.setdefault(tp, FoldResult(*tp))
        kind = r["kind"]
        if kind == "object":
            objects.setdefault(tp, []).append(ExpectedObject(
                key=r["key"], topic=r["topic"], partition=r["partition"], encoded_partition=r["encoded_partition"],
                offsets=tuple(r["offsets"]), rotation=r["rotation"], committed_offset=r["committed_offset"],
                put_index=r["put_index"], at_ms=r["at_ms"], sibling_keys=tuple(json.loads(r["siblings"]).items()),
                value_object=r["value_object"], certain=r["certain"]))
        elif kind == "open":
            res.open.append(OpenFile(r["topic"], r["partition"], r["encoded_partition"], tuple(r["offsets"])))
        elif kind == "tp":
            res.committed_offset = r["committed_offset"]
            undelivered[tp_key(*tp)] = r["count"] or 0
        elif kind == "failure":
            res.failure = TaskFailure(r["failure_offset"], r["rule"], r["message"], r["topic"], r["partition"], r["put_index"])
        elif kind == "conflict":
            res.conflicts.append({"key": r["key"], "rule": r["rule"], "next_start": r["failure_offset"],
                                  "topic": r["topic"], "partition": r["partition"]})
        elif kind == "overwrite":
            res.overwritten.append(r["key"])
        elif kind == "skipped":
            skipped.append(SkippedRecord(r["topic"], r["partition"], r["failure_offset"], r["rule"], r["reported"]))
    for tp, objs in objects.items():
        # commit order within a topic-partition: the committed offset grows with every rotation
        by_tp[tp].objects = sorted(objs, key=lambda o: (o.committed_offset, o.put_index or 0))
    return list(by_tp.values()), skipped, undelivered


def expect_spark(cfg: SinkConfig, df, puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                 manifest_path: str | None = None, existing_keys: frozenset[str] = frozenset()) -> Expectation:
    """The model on Spark. With `manifest_path`, the expected-object manifest is also written
    there as Parquet (one row per object, open file, topic-partition summary, failure, skip)."""
    import pandas as pd

    engine = "spark"
    started = start_failure(cfg, engine)
    if started:
        return started
    bounds = put_boundaries(puts, 1 << 62) if puts is not None else None
    if puts is not None:
        n = df.count()
        put_boundaries(puts, n)  # the schedule must not carry more records than given

    if puts is None and cfg.wallclock_dependent:
        def constrain(pdf: "pd.DataFrame") -> "pd.DataFrame":
            pairs = _records_of(pdf)
            c = constraints_for(cfg, pairs[0][1].topic, pairs[0][1].partition, [r for _, r in pairs], jvm_zone)
            return pd.DataFrame([{"topic": c.topic, "partition": c.partition, "c": json.dumps(c.to_json())}])

        rows = df.groupBy("topic", "partition").applyInPandas(constrain, "topic string, partition int, c string").collect()
        exp = Expectation(cfg.version.text, engine, conditional_writes=cfg.conditional_writes_active)
        cons = []
        for r in sorted(rows, key=lambda r: (r["topic"], r["partition"])):
            j = json.loads(r["c"])
            eps = j["encoded_partitions"]
            cons.append(TopicPartitionConstraints(j["topic"], j["partition"], tuple(j["offsets"]),
                                                  j["max_records_per_commit"],
                                                  None if eps is None else {int(k): v for k, v in eps.items()},
                                                  j["key_pattern"]))
        exp.constraints = cons
        exp.constraints_reason = constraints_reason(cfg)
        return exp

    null_kill = _fatal_null(cfg, df, bounds)
    if puts is None and null_kill is not None:
        stop: int | None = 0
    else:
        stop = null_kill.put_index if null_kill is not None else None
    manifest = fold_manifest(cfg, df, puts, jvm_zone, stop, existing_keys=existing_keys)
    if manifest_path:
        manifest.write.mode("overwrite").parquet(manifest_path)
        manifest = manifest.sparkSession.read.parquet(manifest_path)
    results, skipped, undelivered = _results_from_rows(manifest.collect())
    if puts is None and null_kill is not None:
        # one put holding everything: the fatal null stops put() before any write()
        counts = df.groupBy("topic", "partition").count().collect()
        undelivered = {tp_key(r["topic"], r["partition"]): r["count"] for r in counts}
    results, failure = resolve_failure(
        results, null_kill,
        lambda k, only: _results_from_rows(fold_manifest(cfg, df, puts, jvm_zone, k, only, existing_keys).collect())[0],
    )
    return assemble(cfg, engine, results, skipped, undelivered, failure)
