"""The Structured Streaming query the Spark target runs, as its own OS process (so that it can be
SIGKILLed mid-batch and started again on the same checkpoint):

    python -m adapters.spark_streaming.query QUERY.json

QUERY.json (written by `SparkStreamingTarget`): bootstrap, topics, output (an s3a:// URL),
checkpoint (a local directory), trigger_ms, max_offsets_per_trigger, compact_interval, the S3A
endpoint and credentials, spark.jars, status (a file this process rewrites every half second
with the query's status: `{"pid", "active", "status", "last_batch", "exception"}`).

The query: Kafka source (`spark-sql-kafka-0-10`, startingOffsets earliest) → each non-null
value as one line of the `text` file sink. The file sink writes a micro-batch's files, then
appends the batch to `<output>/_spark_metadata/<batchId>`; the checkpoint's `offsets/<id>` is
written before a batch runs and `commits/<id>` after it is in the metadata log.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def spark_conf(q: dict[str, Any]) -> dict[str, str]:
    """The session's configuration: loopback only, no UI, S3A on the given endpoint."""
    s3a = "spark.hadoop.fs.s3a."
    return {
        "spark.master": f"local[{int(q.get('cores', 2))}]",
        "spark.app.name": "sinkcheck-spark-streaming",
        "spark.jars": ",".join(q["jars"]),
        "spark.driver.memory": str(q.get("driver_memory", "768m")),
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.local.dir": str(q["local_dir"]),
        "spark.sql.shuffle.partitions": "2",
        "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
        "spark.sql.streaming.fileSink.log.compactInterval": str(int(q["compact_interval"])),
        s3a + "endpoint": q["endpoint"],
        s3a + "endpoint.region": q["region"],
        s3a + "path.style.access": "true",
        s3a + "connection.ssl.enabled": "false",
        s3a + "access.key": q["access_key"],
        s3a + "secret.key": q["secret_key"],
        s3a + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        s3a + "attempts.maximum": "3",
        s3a + "retry.limit": "3",
        s3a + "connection.establish.timeout": "15s",
        s3a + "connection.timeout": "60s",
    }


def write_status(path: Path, status: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(status, default=str))
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m adapters.spark_streaming.query QUERY.json", file=sys.stderr)
        return 4
    q = json.loads(Path(argv[0]).read_text())
    status_path = Path(q["status"])
    base: dict[str, Any] = {"pid": os.getpid(), "active": False, "status": None, "last_batch": None,
                            "exception": None}
    write_status(status_path, {**base, "phase": "starting"})
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for k, v in spark_conf(q).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(q.get("log_level", "WARN"))

    stopping = {"flag": False}

    def on_term(signum: int, frame: Any) -> None:  # noqa: ARG001
        stopping["flag"] = True

    signal.signal(signal.SIGTERM, on_term)

    reader = (spark.readStream.format("kafka")
              .option("kafka.bootstrap.servers", q["bootstrap"])
              .option("subscribe", ",".join(q["topics"]))
              .option("startingOffsets", "earliest")
              .option("failOnDataLoss", "true"))
    if q.get("max_offsets_per_trigger"):
        reader = reader.option("maxOffsetsPerTrigger", str(int(q["max_offsets_per_trigger"])))
    lines = reader.load().where("value IS NOT NULL").selectExpr("CAST(value AS STRING) AS value")
    writer = (lines.writeStream.format("text")
              .option("path", q["output"])
              .option("checkpointLocation", q["checkpoint"])
              .queryName("sinkcheck")
              .outputMode("append"))
    trigger_ms = int(q.get("trigger_ms", 0))
    if trigger_ms > 0:
        writer = writer.trigger(processingTime=f"{trigger_ms} milliseconds")
    query = writer.start()
    print(f"sinkcheck: query {query.id} run {query.runId} started (pid {os.getpid()})", flush=True)

    code = 0
    try:
        while True:
            progress = query.lastProgress
            write_status(status_path, {**base, "phase": "running", "active": query.isActive,
                                       "status": query.status,
                                       "last_batch": progress.get("batchId") if progress else None,
                                       "at_ms": int(time.time() * 1000)})
            if stopping["flag"]:
                query.stop()
                break
            if not query.isActive or query.awaitTermination(0.5):
                break
        exc = query.exception()
        if exc is not None:
            code = 1
            msg = str(exc.desc) if hasattr(exc, "desc") else str(exc)
            print(f"sinkcheck: the query failed: {msg}", flush=True)
            write_status(status_path, {**base, "phase": "failed", "exception": msg[:4000]})
        else:
            write_status(status_path, {**base, "phase": "stopped"})
    except Exception as e:  # noqa: BLE001 - the status file and the log say it
        if stopping["flag"]:  # SIGTERM reached the JVM too (one process group): it is gone
            print("sinkcheck: stopped (SIGTERM)", flush=True)
            write_status(status_path, {**base, "phase": "stopped"})
            return 0
        code = 1
        traceback.print_exc()
        write_status(status_path, {**base, "phase": "failed", "exception": f"{type(e).__name__}: {e}"[:4000]})
    finally:
        try:
            spark.stop()
        except BaseException:  # noqa: BLE001 - the JVM may be gone already
            pass
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
