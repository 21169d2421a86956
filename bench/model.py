"""Benchmark: records/s of the model's local and Spark engines, beside the Spark floor.

For 10^5, 10^6 and 10^7 records over 16 topic-partitions, two configs:
  A. DefaultPartitioner, flush.size=1000;
  B. HourlyPartitioner (Record extractor), rotate.interval.ms=60000, 5% of records 1 s to 2 min late.
The records are a Parquet dump written per topic-partition in offset order, as a topic's log
is kept. The floor is a plain `groupBy(topic, partition).count()` over the same DataFrame,
measured in the same run. Target: the Spark model within 3x of the floor at 10^7 records. The
Spark model streams through the dump (`clustered=True`, checked by `verify_clustered`), writes
its manifest to Parquet and brings no record to the driver. The shuffle path (any input
layout) is timed too.

    python bench/model.py [--sizes 100000,1000000,10000000] [--local-max 1000000]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from reference_impl.config import parse_config  # noqa: E402

T0 = 1714557600000
TPS = 16
BASE = {"format.class": "JsonFormat", "storage.class": "S3Storage", "s3.bucket.name": "b"}
CONFIGS = {
    "A default flush.size=1000": {**BASE, "flush.size": "1000"},
    "B hourly rotate.interval.ms, 5% late": {
        **BASE, "flush.size": "100000", "partitioner.class": "HourlyPartitioner", "timestamp.extractor": "Record",
        "locale": "en-US", "timezone": "UTC", "rotate.interval.ms": "60000"},
}


def records_df(spark, n: int):
    """n records over 16 topic-partitions, generated inside Spark (nothing on the driver)."""
    from pyspark.sql import functions as F

    per_tp = F.floor(F.col("id") / TPS)
    ts = F.lit(T0) + per_tp * 100
    late = (F.abs(F.hash(F.col("id"))) % 20) == 0  # 5% of records come 1 s to 2 min late
    lateness = (F.abs(F.hash(F.col("id"), F.lit(7))) % 119_000) + 1_000
    return spark.range(n).select(
        F.lit("bench").alias("topic"),
        (F.col("id") % TPS).cast("int").alias("partition"),
        per_tp.cast("long").alias("offset"),
        F.when(late, ts - lateness).otherwise(ts).cast("long").alias("timestamp"),
        F.lit(None).cast("string").alias("key"),
        F.concat(F.lit('{"n":'), F.col("id").cast("string"), F.lit("}")).alias("value"),
        F.lit("[]").alias("headers"),
        F.lit(None).cast("long").alias("seq"),
    )


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,1000000,10000000")
    ap.add_argument("--local-max", type=int, default=10_000_000, help="largest size run on the local engine")
    ap.add_argument("--shuffle-max", type=int, default=10_000_000, help="largest size timed on the shuffle path")
    ap.add_argument("--master", default=None)
    args = ap.parse_args()
    from reference_impl.engine.spark import fold_manifest, spark_session, verify_clustered

    spark = spark_session(args.master, app="sinkcheck-bench")
    tmp = tempfile.mkdtemp(prefix="sinkcheck-bench-")
    print(f"Spark {spark.version}, master {spark.sparkContext.master}, {os.cpu_count()} cores")
    print(f"{'records':>10} {'config':<38} {'floor s':>8} {'spark s':>8} {'spark rec/s':>12} {'x floor':>8} "
          f"{'shuffle s':>9} {'x floor':>8} {'local rec/s':>12}")
    try:
        for n in [int(s) for s in args.sizes.split(",")]:
            src = os.path.join(tmp, f"records-{n}.parquet")
            (records_df(spark, n).repartition(TPS, "partition").sortWithinPartitions("partition", "offset")
             .write.mode("overwrite").parquet(src))
            for name, raw in CONFIGS.items():
                cfg = parse_config(raw)
                df = spark.read.parquet(src)
                floor_s, _ = timed(lambda: df.groupBy("topic", "partition").count().collect())
                out = os.path.join(tmp, "manifest")
                spark_s, _ = timed(lambda: fold_manifest(cfg, df, clustered=True).write.mode("overwrite").parquet(out))
                problems = verify_clustered(spark.read.parquet(out))
                if problems:
                    print("  input not clustered:", problems[:3])
                shuffle_s = float("nan")
                if n <= args.shuffle_max:
                    shuffle_s, _ = timed(lambda: fold_manifest(cfg, df).write.mode("overwrite").parquet(out + "-s"))
                local = "-"
                if n <= args.local_max:
                    import pyarrow.parquet as pq

                    from reference_impl.engine.columns import expect_arrow

                    local_s, _ = timed(lambda: expect_arrow(cfg, pq.read_table(src)))
                    local = f"{n / local_s:,.0f}"
                print(f"{n:>10,} {name:<38} {floor_s:>8.2f} {spark_s:>8.2f} {n / spark_s:>12,.0f} "
                      f"{spark_s / floor_s:>8.1f} {shuffle_s:>9.2f} {shuffle_s / floor_s:>8.1f} {local:>12}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
