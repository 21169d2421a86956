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
import sys
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from reference_impl.config import SinkConfig
from reference_impl.config_keys import invalid_topic_reason
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.expectation import (ExpectedObject, Expectation, OpenFile, SkippedRecord,
    TaskFailure, TopicPartitionConstraints)
import numpy as np

from reference_impl.engine.fold import TopicPartitionFold, fold_topic_partition
from reference_impl.engine.fold_data import (FoldResult, Put, RecordColumns, columns_from_records,
    expected_object)
from reference_impl.formats import format_for
from reference_impl.engine.model import (FailureCut, PutSpec, assemble, build_puts, constraints_for,
    cut_at_failure, null_action, put_boundaries, put_index_of, tp_key, _NULL_MESSAGES, constraints_reason,
    failure_regardless_of_clock, start_failure)
from reference_impl.engine.columns import (RECORD_COLUMNS, columns_from_arrow, fold_arrow_batches,
    record_from_row)
from reference_impl.naming import object_key
from reference_impl.partitioning import build_partitioner

RECORD_DDL = (
    "topic string, partition int, offset long, timestamp long, "
    "key string, value string, headers string, seq long"
)
# One row per object / open file / topic-partition summary / failure / skipped record /
# conflict / overwrite. An object's offsets are first_offset..last_offset when contiguous
# (`offsets` is then null), else listed.
MANIFEST_DDL = (
    "kind string, topic string, partition int, key string, encoded_partition string, "
    "first_offset long, last_offset long, count long, offsets array<long>, rotation string, "
    "committed_offset long, put_index int, at_ms long, siblings string, value_object boolean, "
    "certain boolean, rule string, message string, failure_offset long, reported boolean, "
    "spark_partition int"
)


def spark_session(master: str | None = None, app: str = "sinkcheck-model", *,
                  jars: Sequence[str] = (), hadoop_conf: dict[str, str] | None = None,
                  conf: dict[str, str] | None = None):
    """An embedded `local[*]` session by default, bound to loopback; any `spark.master` works.

    `jars` are local jar files handed to the session (`spark.jars`: Spark serves them to its
    executors, so a cluster's workers need not have them); `hadoop_conf` becomes
    `spark.hadoop.*` (e.g. S3A's endpoint); `conf` is any other Spark setting. Jars only take
    effect in a new session; Hadoop settings are also applied to a session that already
    exists, for file systems it opens from then on."""
    from pyspark.sql import SparkSession

    master = master or os.environ.get("SINKCHECK_SPARK_MASTER") or "local[*]"
    # Python workers must run the driver's interpreter: `python3` on PATH may lack pandas and
    # pyarrow (a venv's packages are not the system's). A user's own PYSPARK_PYTHON wins.
    python = os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName(app)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", str(max(4, 2 * (os.cpu_count() or 2))))
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
        .config("spark.pyspark.python", python)
        .config("spark.pyspark.driver.python", sys.executable)
        # no call sites for DataFrame errors: capturing one walks the stack at every DataFrame
        # call, and imports IPython where it is installed (which raises the recursion limit
        # under a running Hypothesis test)
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
    )
    if master.startswith("local") or master.startswith(("spark://127.0.0.1:", "spark://localhost:")):
        # a cluster on loopback must reach the driver on loopback too, not on the host's name
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if jars:
        builder = builder.config("spark.jars", ",".join(jars))
    for k, v in (hadoop_conf or {}).items():
        builder = builder.config(f"spark.hadoop.{k}", v)
    for k, v in (conf or {}).items():
        builder = builder.config(k, v)
    session = builder.getOrCreate()
    if hadoop_conf:
        # getOrCreate returned a running session: its Hadoop configuration predates ours
        hc = session.sparkContext._jsc.hadoopConfiguration()
        for k, v in hadoop_conf.items():
            hc.set(k, v)
    return session


def records_dataframe(spark, path: str):
    """RECORDS.jsonl or a Parquet dump as a record DataFrame (key/value/headers as JSON text)."""
    from pyspark.sql import functions as F

    if path.endswith(".parquet") or os.path.isdir(path):
        df = spark.read.parquet(path)
    else:
        # Parsed line by line in Python: Spark's JSON reader keeps the raw text of objects in a
        # string field but unquotes strings, so the key "123" and the key 123 would look alike.
        # Key, value and headers are kept as JSON text, as records_to_dataframe does.
        def row(pair: tuple[str, int]) -> tuple:
            r = json.loads(pair[0])
            return (r["topic"], int(r["partition"]), int(r["offset"]), r.get("timestamp"), json.dumps(r.get("key")),
                    json.dumps(r.get("value")), json.dumps(r.get("headers") or []), pair[1])

        lines = spark.read.text(path).rdd.map(lambda t: t[0]).filter(lambda line: line.strip())
        df = spark.createDataFrame(lines.zipWithIndex().map(row), RECORD_DDL)
    if "seq" not in df.columns:
        df = df.withColumn("seq", F.lit(None).cast("long"))
    return df.select(*[c.split()[0] for c in RECORD_DDL.split(", ")])


def records_problem(df) -> str | None:
    """What Kafka could not have given in a record DataFrame (a topic no topic can be, an
    offset twice in one topic-partition), or None: the same rules parse_records_lines applies
    to a local model's input, here over the whole dump."""
    from pyspark.sql import functions as F

    for (topic,) in df.select("topic").distinct().collect():
        reason = invalid_topic_reason(topic or "")
        if reason:
            return f"{reason}; fix the records' topic"
    twice = (df.groupBy("topic", "partition", "offset").count().filter(F.col("count") > 1)
             .select("topic", "partition", "offset").limit(1).collect())
    if twice:
        t, p, o = twice[0]
        return (f"offset {o} of {t}-{p} is there more than once: Kafka gives each topic-partition's records once, "
                "each at its own offset; remove the copies")
    return None


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


def _records_of(pdf) -> list[tuple[int, SinkRecord]]:
    pdf = pdf.sort_values(["seq", "offset"] if pdf["seq"].notna().all() else ["offset"])
    out = []
    for n, row in enumerate(pdf.to_dict("records")):
        seq = row["seq"]
        out.append((int(seq) if seq is not None and seq == seq else n, record_from_row(row)))
    return out


def _offset_fields(offsets: np.ndarray) -> dict[str, Any]:
    first, last, n = int(offsets[0]), int(offsets[-1]), len(offsets)
    contiguous = last - first + 1 == n
    return {"first_offset": first, "last_offset": last, "count": n,
            "offsets": None if contiguous else offsets.tolist()}


def _fold_rows(cfg: SinkConfig, res: FoldResult, skipped: list[SkippedRecord], undelivered: int,
               spark_partition: int | None = None) -> list[dict[str, Any]]:
    base = dict.fromkeys(c.split()[0] for c in MANIFEST_DDL.split(", "))
    rows = []
    for f in res.files:
        o = expected_object(cfg, res.topic, res.partition, f) if cfg.store_kafka_keys or cfg.store_kafka_headers else None
        key = o.key if o else object_key(cfg, res.topic, res.partition, f.ep, int(f.offsets[0]))
        rows.append({**base, "kind": "object", "topic": res.topic, "partition": res.partition, "key": key,
                     "encoded_partition": f.ep, **_offset_fields(f.offsets), "rotation": f.rotation,
                     "committed_offset": f.committed_offset, "put_index": f.put_index, "at_ms": f.at_ms,
                     "siblings": json.dumps(dict(o.sibling_keys)) if o else "{}",
                     "value_object": cfg.tombstone_encoded_partition not in key, "certain": True})
    for op in res.open:
        rows.append({**base, "kind": "open", "topic": op.topic, "partition": op.partition,
                     "encoded_partition": op.encoded_partition, "offsets": list(op.offsets)})
    rows.append({**base, "kind": "tp", "topic": res.topic, "partition": res.partition,
                 "committed_offset": res.committed_offset, "count": undelivered, "spark_partition": spark_partition})
    if res.failure is not None:
        f = res.failure
        rows.append({**base, "kind": "failure", "topic": f.topic, "partition": f.partition, "rule": f.rule,
                     "message": f.message, "failure_offset": f.offset, "put_index": f.put_index})
    for c in res.conflicts:
        rows.append({**base, "kind": "conflict", "topic": res.topic, "partition": res.partition, "key": c["key"],
                     "failure_offset": c["next_start"], "rule": c["rule"]})
    for k in res.overwritten:
        rows.append({**base, "kind": "overwrite", "topic": res.topic, "partition": res.partition, "key": k})
    for sk in skipped + res.skipped:
        rows.append({**base, "kind": "skipped", "topic": sk.topic, "partition": sk.partition,
                     "failure_offset": sk.offset, "rule": sk.rule, "reported": sk.reported})
    return rows


def plain_rows(cfg: SinkConfig, df):
    """Mark, in Spark, the rows the fold can take as columns (schemaless, not null, with the
    key and headers the config needs) and drop their key/value/headers text, so that only
    the rows needing a closer look cross into Python with their text."""
    from pyspark.sql import functions as F

    v = F.col("value")
    plain = v.isNotNull() & (v != "null") & ~v.startswith('{"schema"')
    if cfg.store_kafka_keys:
        plain &= F.col("key").isNotNull() & (F.col("key") != "null")
    if cfg.store_kafka_headers:
        plain &= F.col("headers").isNotNull() & (F.regexp_replace(F.col("headers"), " ", "") != "[]")
    return df.select("topic", "partition", "offset", "timestamp",
                     *[F.when(~plain, F.col(c)).alias(c) for c in ("key", "value", "headers")],
                     plain.alias("sc_plain"))


def fold_manifest(cfg: SinkConfig, df, puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                  stop_before: int | None = None, only: set[tuple[str, int]] | None = None,
                  existing_keys: frozenset[str] = frozenset(), clustered: bool = False):
    """The fold as a DataFrame of manifest rows (see MANIFEST_DDL).

    `clustered=True` says each topic-partition's records sit whole, in offset order, in one
    Spark partition (a dump written per topic-partition, as Kafka keeps its log): the fold
    then streams through the partitions with no shuffle. `verify_clustered` checks the
    claim on the result."""
    import pandas as pd

    bounds = put_boundaries(puts, 1 << 62) if puts is not None else None
    if only is not None:
        df = df.filter(_of_topic_partitions(only))
    columns = [c.split()[0] for c in MANIFEST_DDL.split(", ")]

    if clustered and puts is None and stop_before is None and only is None:
        partitioner_proto = build_partitioner(cfg, jvm_zone)

        def fold_stream(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa
            from pyspark import TaskContext

            pid = TaskContext.get().partitionId()
            schema = _manifest_arrow_schema()
            out: list[dict[str, Any]] = []
            for res, skipped, unclustered in fold_arrow_batches(cfg, build_partitioner(cfg, jvm_zone), batches, existing_keys):
                out.extend(_fold_rows(cfg, res, skipped, 0, pid))
                if unclustered:
                    out.append({**dict.fromkeys(columns), "kind": "unclustered", "topic": res.topic,
                                "partition": res.partition, "spark_partition": pid})
                if len(out) > 10_000:
                    yield pa.RecordBatch.from_pylist(out, schema=schema)
                    out = []
            yield pa.RecordBatch.from_pylist(out, schema=schema)

        vectorised = (partitioner_proto.encodes_many and format_for(cfg.format_class).name == "json"
                      and cfg.behavior_on_null_values != "write"
                      and all(format_for(c).name == "json" for c, on in (
                          (cfg.keys_format_class, cfg.store_kafka_keys),
                          (cfg.headers_format_class, cfg.store_kafka_headers)) if on))
        return (plain_rows(cfg, df) if vectorised else df).mapInArrow(fold_stream, MANIFEST_DDL)

    def fold_group(pdf: "pd.DataFrame") -> "pd.DataFrame":
        partitioner = build_partitioner(cfg, jvm_zone)
        topic, partition = str(pdf["topic"].iloc[0]), int(pdf["partition"].iloc[0])
        if puts is None and stop_before is None and not pdf["value"].isna().any() and not (pdf["value"] == "null").any():
            # one put holding every record: read the rows as columns
            fold = TopicPartitionFold(cfg, partitioner, topic, partition, existing_keys)
            put = Put(None, None)
            import pyarrow as pa

            table = pa.Table.from_pandas(pdf.sort_values("offset"), preserve_index=False)
            fold.feed(put, columns_from_arrow(cfg, partitioner, fold, table, None))
            fold.end_put(put)
            return pd.DataFrame(_fold_rows(cfg, fold.finish(), [], 0), columns=columns)
        pairs = _records_of(pdf)
        tp_puts, skipped, never = build_puts(cfg, pairs, puts, bounds, stop_before)
        res = fold_topic_partition(cfg, partitioner, topic, partition, tp_puts, existing_keys)
        return pd.DataFrame(_fold_rows(cfg, res, skipped, never), columns=columns)

    return df.groupBy("topic", "partition").applyInPandas(fold_group, MANIFEST_DDL)


def _of_topic_partitions(tps: set[tuple[str, int]] | frozenset[tuple[str, int]]):
    """A Spark condition: the row's topic-partition is one of `tps`."""
    from pyspark.sql import functions as F

    cond = F.lit(False)
    for t, p in sorted(tps):
        cond = cond | ((F.col("topic") == t) & (F.col("partition") == p))
    return cond


def _manifest_arrow_schema():
    import pyarrow as pa

    types = {"string": pa.string(), "int": pa.int32(), "long": pa.int64(), "boolean": pa.bool_(),
             "array<long>": pa.list_(pa.int64())}
    return pa.schema([(c.split(" ", 1)[0], types[c.split(" ", 1)[1]]) for c in MANIFEST_DDL.split(", ")])


def verify_clustered(manifest) -> list[str]:
    """Problems with a `clustered=True` fold: a topic-partition split across Spark partitions
    or out of offset order. Empty when the streaming fold saw every topic-partition whole."""
    from pyspark.sql import functions as F

    problems = [f"{r['topic']}-{r['partition']} is not in offset order in its Spark partition"
                for r in manifest.filter("kind = 'unclustered'").select("topic", "partition").distinct().collect()]
    split = (manifest.filter("kind = 'tp'").groupBy("topic", "partition")
             .agg(F.countDistinct("spark_partition").alias("n")).filter("n > 1").collect())
    problems += [f"{r['topic']}-{r['partition']} spans {r['n']} Spark partitions" for r in split]
    return problems


def _fatal_null(cfg: SinkConfig, df, bounds: Sequence[int] | None) -> tuple[TaskFailure | None, int | None]:
    """R1.4 step 1 over the whole input (only null-valued rows are looked at): the failure and
    the input position (`seq`) of the null that causes it."""
    import pandas as pd
    from pyspark.sql import functions as F

    nulls = df.filter(F.col("value").isNull() | (F.trim(F.col("value")) == "null"))

    def actions(batches: Iterator["pd.DataFrame"]) -> Iterator["pd.DataFrame"]:
        for pdf in batches:
            out = []
            for row in pdf.to_dict("records"):
                act = null_action(cfg, record_from_row(row))
                if act and act[0] == "kill":
                    out.append({"topic": row["topic"], "partition": row["partition"], "offset": row["offset"],
                                "seq": row["seq"], "rule": act[1]})
            yield pd.DataFrame(out, columns=["topic", "partition", "offset", "seq", "rule"])

    kills = nulls.mapInPandas(actions, "topic string, partition int, offset long, seq long, rule string")
    first = kills.orderBy(F.col("seq").asc_nulls_last(), "offset").limit(1).collect()
    if not first:
        return None, None
    r = first[0]
    put = None
    if bounds is not None:
        put = put_index_of(bounds, r["seq"])
        if put is None:
            return None, None
    return TaskFailure(r["offset"], r["rule"], _NULL_MESSAGES[r["rule"]], r["topic"], r["partition"], put), r["seq"]


def _results_from_rows(rows) -> tuple[list[FoldResult], list[SkippedRecord], dict[str, int]]:
    by_tp: dict[tuple[str, int], FoldResult] = {}
    skipped: list[SkippedRecord] = []
    undelivered: dict[str, int] = {}
    objects: dict[tuple[str, int], list[ExpectedObject]] = {}
    for r in rows:
        tp = (r["topic"], r["partition"])
        res = by_tp.setdefault(tp, FoldResult(*tp))
        res.objects = objects.setdefault(tp, [])
        kind = r["kind"]
        if kind == "object":
            objects[tp].append(ExpectedObject(
                key=r["key"], topic=r["topic"], partition=r["partition"], encoded_partition=r["encoded_partition"],
                offsets=tuple(r["offsets"]) if r["offsets"] is not None else tuple(range(r["first_offset"], r["last_offset"] + 1)),
                rotation=r["rotation"], committed_offset=r["committed_offset"],
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
        objs.sort(key=lambda o: (o.committed_offset, o.put_index or 0))
    return list(by_tp.values()), skipped, undelivered


@dataclass(frozen=True)
class ResolvedFold:
    """The model's fold on Spark with the task's death resolved (`model.cut_at_failure`):
    `manifest` holds MANIFEST_DDL rows whose objects' `certain` is final, `cut` says where the
    task dies (`cut.failure`: rule, message, topic, partition, offset, put) and which writers'
    part of the failing put counts as not made (`cut.others`, `cut.put_index`; every one with
    `cut.put_unknown`); `put` holds the records put() received (those before a fatal null
    when no put schedule says when it came). `release()` frees the cached fold."""

    manifest: Any
    cut: FailureCut
    put: Any
    cached: Any = None

    @property
    def failure(self) -> TaskFailure | None:
        return self.cut.failure

    def release(self) -> None:
        if self.cached is not None:
            self.cached.unpersist()


def resolve_failures(cfg: SinkConfig, df, manifest, null_kill: TaskFailure | None,
                     puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                     existing_keys: frozenset[str] = frozenset()) -> ResolvedFold:
    """`model.resolve_failure` on a manifest DataFrame: only the writers' failure and summary
    rows reach the driver, where `model.cut_at_failure` decides; the others are re-folded up to
    the failing put (from `df`, the records put) and their objects marked by `cut.certain`
    on the executors. `manifest` should be cached: it is read twice."""
    rows = manifest.filter("kind in ('failure', 'tp')").select(
        "kind", "topic", "partition", "rule", "message", "failure_offset", "put_index").collect()
    failures = [TaskFailure(r["failure_offset"], r["rule"], r["message"], r["topic"], r["partition"], r["put_index"])
                for r in rows if r["kind"] == "failure"]
    cut = cut_at_failure(failures, {(r["topic"], r["partition"]) for r in rows}, null_kill, scheduled=puts is not None)
    resolved = manifest
    if cut.refold:
        again = fold_manifest(cfg, df, puts, jvm_zone, cut.put_index + 1, set(cut.others), existing_keys)  # type: ignore[operator]
        resolved = resolved.filter(~_of_topic_partitions(cut.others)).unionByName(again)
    if cut.put_unknown or cut.others:
        resolved = _mark_certain(resolved, cut)
    return ResolvedFold(resolved, cut, df, manifest)


def _mark_certain(manifest, cut: FailureCut):
    """Each object row's `certain` as `cut.certain` says (other rows as they are)."""
    def mark(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for b in batches:
            at = b.schema.get_field_index("certain")
            kind, topic, partition, put, certain = (b.column(c).to_pylist() for c in
                                                    ("kind", "topic", "partition", "put_index", "certain"))
            marked = [c and cut.certain(t, p, k) if kd == "object" else c
                      for kd, t, p, k, c in zip(kind, topic, partition, put, certain)]
            cols = list(b.columns)
            cols[at] = pa.array(marked, pa.bool_())
            yield pa.RecordBatch.from_arrays(cols, schema=b.schema)

    return manifest.mapInArrow(mark, MANIFEST_DDL)


def fold_resolved(cfg: SinkConfig, df, puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                  existing_keys: frozenset[str] = frozenset(), clustered: bool = False) -> ResolvedFold:
    """The model's steps that span topic-partitions, on Spark: a task-start problem (R6.3)
    folds nothing; a fatal null (R1.4 step 1) stops the puts at its own; every topic-partition
    is folded (`fold_manifest`, cached); `resolve_failures` settles the earliest failure.
    Not for configs whose boundaries depend on the wall clock without a put schedule."""
    from pyspark.sql import functions as F

    started = start_failure(cfg, "spark")
    if started is not None:
        manifest = fold_manifest(cfg, df, stop_before=0).persist()
        return ResolvedFold(manifest, FailureCut(started.task_failure), df.limit(0), manifest)
    bounds = put_boundaries(puts, 1 << 62) if puts is not None else None
    null_kill, null_seq = _fatal_null(cfg, df, bounds)
    stop = null_kill.put_index if null_kill is not None else None
    if puts is None and null_kill is not None:
        # no put schedule: only the records before the fatal null can have been put (earlier puts)
        df = df.filter(F.col("seq") < F.lit(null_seq)) if null_seq is not None else df.limit(0)
    stream = clustered and puts is None and null_kill is None
    manifest = fold_manifest(cfg, df, puts, jvm_zone, stop, existing_keys=existing_keys, clustered=stream).persist()
    if stream and verify_clustered(manifest):
        # the input was not laid out by topic-partition after all: fold it the general way
        manifest.unpersist()
        manifest = fold_manifest(cfg, df, puts, jvm_zone, stop, existing_keys=existing_keys).persist()
    return resolve_failures(cfg, df, manifest, null_kill, puts, jvm_zone, existing_keys)


def expect_spark(cfg: SinkConfig, df, puts: Sequence[PutSpec] | None = None, jvm_zone: str = "UTC",
                 manifest_path: str | None = None, existing_keys: frozenset[str] = frozenset(),
                 clustered: bool = False) -> Expectation:
    """The model on Spark. With `manifest_path`, the expected-object manifest is also written
    there as Parquet (one row per object, open file, topic-partition summary, failure, skip)."""
    import pandas as pd

    engine = "spark"
    started = start_failure(cfg, engine)
    if started:
        return started
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
        n = df.count()
        if n:
            exp.task_failure = failure_regardless_of_clock(
                expect_spark(cfg, df, [PutSpec(0, n)], jvm_zone, existing_keys=existing_keys).task_failure)
        return exp

    fold = fold_resolved(cfg, df, puts, jvm_zone, existing_keys, clustered)
    manifest = fold.manifest
    if manifest_path:
        manifest.write.mode("overwrite").parquet(manifest_path)
        manifest = manifest.sparkSession.read.parquet(manifest_path)
    results, skipped, undelivered = _results_from_rows(manifest.collect())
    if fold.cut.put_unknown:
        put = {tp_key(r["topic"], r["partition"]): r["count"] for r in fold.put.groupBy("topic", "partition").count().collect()}
        undelivered = {tp_key(r["topic"], r["partition"]): r["count"] - put.get(tp_key(r["topic"], r["partition"]), 0)
                       for r in df.groupBy("topic", "partition").count().collect()}
    fold.release()
    return assemble(cfg, engine, results, skipped, undelivered, fold.failure)
