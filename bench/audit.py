"""Benchmark: records/s of `sinkcheck audit` beside a plain Spark read-and-count of the same
objects (the floor), in the same run, on moto's S3 server on loopback.

Setup (not timed): N records over 16 topic-partitions, generated in Spark and dumped to Parquet
per topic-partition in offset order (as a topic's log is kept); the model's manifest says
which objects a Confluent S3 sink writes (DefaultPartitioner, JsonFormat, flush.size =
N / objects); executors upload each object's JSON lines to moto. The first object of every
topic-partition is also encoded by the model's format code and must be byte-identical.

Timed, each on the same SparkSession and bucket:
  floor   spark.read.text(s3a://…).count(): every object read through S3A, lines counted;
  audit   conformance.auditing.auditor.run_audit: the model's fold over the dump, every object read, the
          per-topic-partition comparison (it must find nothing wrong);
the floor is taken before and after the audit (on a shared machine one reading can be far
off) and the ratio is to their mean. To show where the audit's time goes: the model's fold
alone, and every object read through S3A into Python and dropped (a no-op decode). Figures
are printed with the load average, never asserted. Target: audit within 2x of the floor.

    python bench/audit.py [--records 10000000] [--objects 10000] [--partitions 16] [--master local[*]]
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BUCKET = "sinkcheck-bench"


def records_df(spark, n: int, tps: int):
    """n records over `tps` topic-partitions, generated inside Spark (nothing on the driver)."""
    from pyspark.sql import functions as F

    offset = F.floor(F.col("id") / tps)
    return spark.range(n).select(
        F.lit("bench").alias("topic"),
        (F.col("id") % tps).cast("int").alias("partition"),
        offset.cast("long").alias("offset"),
        (F.lit(1714557600000) + offset * 10).cast("long").alias("timestamp"),
        F.lit(None).cast("string").alias("key"),
        # the keys in java.util.HashMap's order, as JsonConverter's schemaless map is written (R10.1)
        F.concat(F.lit('{"ok":true,"user":"u'), (F.col("id") % 9973).cast("string"), F.lit('","n":'),
                 F.col("id").cast("string"), F.lit('}')).alias("value"),
        F.lit("[]").alias("headers"),
    )


def upload(spark, cfg, dump: str, endpoint: str) -> tuple[int, int]:
    """Write every object of the model's manifest to moto from the executors. Returns
    (objects, bytes)."""
    import pandas as pd
    from pyspark.sql import functions as F

    from reference_impl.engine.spark import fold_manifest

    records = spark.read.parquet(dump)
    manifest = fold_manifest(cfg, records, clustered=True).filter("kind = 'object'").select(
        "topic", "partition", "key", "first_offset", "last_offset")

    def put(recs: pd.DataFrame, objs: pd.DataFrame) -> pd.DataFrame:
        from concurrent.futures import ThreadPoolExecutor

        import boto3
        import numpy as np
        from botocore.config import Config

        from reference_impl.engine.columns import record_from_row
        from reference_impl.engine.contents import encode_view

        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="sinkcheck",
                          aws_secret_access_key="sinkcheck-secret", config=Config(s3={"addressing_style": "path"},
                                                                                  max_pool_connections=8))
        recs = recs.sort_values("offset")
        offsets = recs["offset"].to_numpy()
        values = recs["value"].to_numpy(dtype=object)
        jobs, checked = [], False
        for o in objs.sort_values("first_offset").itertuples(index=False):
            a, b = np.searchsorted(offsets, [o.first_offset, o.last_offset])
            body = ("\n".join(values[a:b + 1]) + "\n").encode()
            if not checked:
                # the bench writes the records' own JSON lines; the model must agree byte for byte
                rows = recs.iloc[a:b + 1].to_dict("records")
                model = encode_view(cfg, [record_from_row(r) for r in rows], "value")
                assert model == body, f"the model encodes {o.key} differently from the records' JSON lines"
                checked = True
            jobs.append((o.key, body))
        with ThreadPoolExecutor(8) as ex:
            list(ex.map(lambda kb: s3.put_object(Bucket=BUCKET, Key=kb[0], Body=kb[1]), jobs))
        return pd.DataFrame([{"objects": len(jobs), "bytes": sum(len(b) for _, b in jobs)}])

    rows = (records.groupBy("topic", "partition").cogroup(manifest.groupBy("topic", "partition"))
            .applyInPandas(put, "objects long, bytes long").agg(F.sum("objects"), F.sum("bytes")).collect())
    return int(rows[0][0]), int(rows[0][1])


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=16, help="topic-partitions")
    ap.add_argument("--master", default=None, help="spark.master (default local[*])")
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--no-breakdown", action="store_true", help="time only the floor and the audit")
    args = ap.parse_args()

    from adapters.processes.jars import jar_files
    from adapters.processes.moto import MotoS3Server
    from conformance.auditing.auditor import BucketLocation, S3Access, run_audit
    from reference_impl.config import parse_config
    from reference_impl.engine.spark import fold_manifest, spark_session

    n, tps = args.records, args.partitions
    flush = max(1, n // args.objects)
    cfg = parse_config({"format.class": "JsonFormat", "storage.class": "S3Storage", "s3.bucket.name": BUCKET,
                        "flush.size": str(flush)})
    tmp = Path(tempfile.mkdtemp(prefix="sinkcheck-bench-audit-"))
    moto = MotoS3Server(tmp, bucket=BUCKET).start()
    spark = None
    try:
        access = S3Access(moto.endpoint, "us-east-1", True, moto.ACCESS_KEY, moto.SECRET_KEY)
        spark = spark_session(args.master, "sinkcheck-bench-audit", jars=jar_files("spark-s3a"),
                              hadoop_conf=access.hadoop_conf(), conf={"spark.driver.memory": args.driver_memory})
        spark.sparkContext.setLogLevel("ERROR")
        print(f"Spark {spark.version}, master {spark.sparkContext.master}, {os.cpu_count()} cores; moto at {moto.endpoint}")
        dump = str(tmp / "records.parquet")
        t0 = time.perf_counter()
        (records_df(spark, n, tps).repartition(tps, "partition").sortWithinPartitions("partition", "offset")
         .write.parquet(dump))
        objects, size = upload(spark, cfg, dump, moto.endpoint)
        print(f"setup: {n:,} records in {objects:,} objects ({size / 1e6:,.0f} MB, flush.size={flush}) over {tps} "
              f"topic-partitions in {time.perf_counter() - t0:.0f}s")
        location = BucketLocation(BUCKET, "topics")
        url = location.s3a_url

        spark.read.text(url + "/bench/partition=0").count()  # warm S3A and the JVM before timing

        def load() -> str:
            return "load %.1f" % os.getloadavg()[0]  # others share the machine: say how busy it was

        # the floor before and after the audit: on a shared machine one reading can be far off
        floor1, lines = timed(lambda: spark.read.text(url).count())
        print(f"floor   read+count  {floor1:8.1f}s  {n / floor1:>12,.0f} records/s  ({lines:,} lines; {load()})", flush=True)
        audit_s, outcome = timed(lambda: run_audit(spark, cfg, spark.read.parquet(dump), location, access, clustered=True))
        bad = [t.name for t in outcome.topic_partitions if t.lost or t.duplicated or t.missing or t.different or t.unexpected]
        exact = sum(t.exact_objects for t in outcome.topic_partitions)
        print(f"audit               {audit_s:8.1f}s  {n / audit_s:>12,.0f} records/s  ({exact:,} objects exact, "
              f"{len(bad)} topic-partitions with findings; {load()})", flush=True)
        print("        phases      " + ", ".join(f"{k} {v:.1f}s" for k, v in outcome.timings.items()), flush=True)
        floor2, _ = timed(lambda: spark.read.text(url).count())
        print(f"floor   again       {floor2:8.1f}s  {n / floor2:>12,.0f} records/s  ({load()})", flush=True)
        floor_s = (floor1 + floor2) / 2
        print(f"ratio audit/floor   {audit_s / floor_s:8.2f}x  (mean floor; {audit_s / max(floor1, floor2):.2f}x to "
              f"{audit_s / min(floor1, floor2):.2f}x; target <= 2x)", flush=True)
        if not args.no_breakdown:
            def model_only():
                fold_manifest(cfg, spark.read.parquet(dump), clustered=True).write.format("noop").mode("overwrite").save()

            def read_into_python():
                import pandas as pd

                def drop(batches):
                    total = 0
                    for b in batches:
                        total += int(b["content"].map(len).sum())
                    yield pd.DataFrame({"bytes": [total]})

                return (spark.read.format("binaryFile").option("recursiveFileLookup", "true").load(url)
                        .select("content").mapInPandas(drop, "bytes long").groupBy().sum().collect()[0][0])

            s, _ = timed(model_only)
            print(f"  model fold alone          {s:8.1f}s  {s / floor_s:5.2f}x floor  ({load()})", flush=True)
            s, got = timed(read_into_python)
            print(f"  objects read into Python  {s:8.1f}s  {s / floor_s:5.2f}x floor  (no-op decode, {got / 1e6:,.0f} MB; {load()})",
                  flush=True)
    finally:
        if spark is not None:
            spark.stop()
        moto.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
