"""`sinkcheck audit`: after the fact, on Spark: did the sink that wrote this bucket lose or
duplicate any of these records, and is every object where the connector config says?

    sinkcheck audit --records RECORDS(.parquet|.jsonl|kafka://HOST:PORT/TOPIC) --bucket s3://BUCKET/PREFIX
                    --config CONNECTOR.json [--spark-master URL] [--s3-endpoint URL] --out DIR

Writes DIR/report.html, junit.xml and results.json (one result per topic-partition) through the
same writers as `run`; exit 0 all claimed properties pass, 1 one failed, 2 one is unknown,
4 bad input (the message says what to fix), 5 no records and no objects.
"""
from __future__ import annotations

import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from sinkcheck.exitcodes import Exit, UsageError
from sinkcheck.options import check_utf8, out_dir


def _connector(path: str, version: str | None, bucket: str) -> tuple[dict[str, str], Any]:
    from conformance.inputs.connector_config import sink_config
    from reference_impl.config import ConfigError
    from reference_impl.versions import VersionError
    from sinkcheck.options import load_connector_config, warn_config

    raw = dict(load_connector_config(path, "--config") or {})
    try:
        cfg = sink_config(raw, version, bucket)
        warn_config(raw, path)
        return raw, cfg
    except ConfigError as e:
        raise UsageError(f"--config {path}: {e}") from None
    except VersionError as e:
        raise UsageError(f"--connector-version: {e}") from None


def kafka_source(url: str, bootstrap: str | None) -> tuple[str, list[str]]:
    """`kafka://HOST:PORT[,HOST:PORT]/TOPIC[,TOPIC]`, or `kafka://TOPIC[,TOPIC]` with
    --kafka-bootstrap: (bootstrap servers, topics)."""
    rest = url[len("kafka://"):]
    servers, _, topics = rest.partition("/") if "/" in rest else ("", "", rest)
    servers = servers or bootstrap or ""
    names = [t for t in topics.split(",") if t]
    if not names:
        raise UsageError(f"--records {url}: name the topic: kafka://HOST:PORT/TOPIC (or kafka://TOPIC with --kafka-bootstrap)")
    if not servers:
        raise UsageError(f"--records {url}: where is the broker? give kafka://HOST:PORT/{topics} or --kafka-bootstrap HOST:PORT")
    bad = [t for t in names if not re.fullmatch(r"[A-Za-z0-9._-]{1,249}", t)]
    if bad:
        raise UsageError(f"--records {url}: {bad[0]!r} is not a Kafka topic name (letters, digits, '.', '_', '-')")
    return servers, names


BROKER_WAIT_S = 5.0


def check_broker(url: str, servers: str, topics: list[str], options: dict[str, str], wait_s: float = BROKER_WAIT_S) -> None:
    """Ask the broker for the topics once, for a few seconds, before Spark does: Spark's Kafka
    source retries an unreachable broker for minutes and then fails with a JVM stack trace."""
    import logging

    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    quiet = logging.getLogger("sinkcheck.audit.kafka")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    conf = {"bootstrap.servers": servers, "socket.timeout.ms": int(wait_s * 1000), **{k[len("kafka."):]: v for k, v in options.items()}}
    try:
        meta = AdminClient(conf, logger=quiet).list_topics(timeout=wait_s)
    except KafkaException as e:
        raise UsageError(f"--records {url}: no Kafka broker answered at {servers} within {wait_s:.0f} s "
                         f"({e.args[0].str() if e.args and hasattr(e.args[0], 'str') else e}); start the broker or fix "
                         "HOST:PORT (or --kafka-bootstrap, --kafka-option for its security settings)") from None
    missing = [t for t in topics if t not in meta.topics]
    if missing:
        raise UsageError(f"--records {url}: the broker at {servers} has no topic {', '.join(missing)}; "
                         f"it has {', '.join(sorted(t for t in meta.topics if not t.startswith('__'))[:10]) or 'none'}")


def kafka_records(spark: Any, servers: str, topics: list[str], options: dict[str, str]) -> Any:
    """A topic read whole by Spark's Kafka source, as the model's record DataFrame: keys,
    values and header values are taken as the UTF-8 JSON text JsonConverter reads. Each
    topic-partition arrives whole and in offset order in one Spark partition, as a dump
    written per topic-partition does (the audit streams the fold through it)."""
    from pyspark.sql import functions as F

    reader = (spark.read.format("kafka").option("kafka.bootstrap.servers", servers)
              .option("subscribe", ",".join(topics)).option("startingOffsets", "earliest")
              .option("endingOffsets", "latest").option("includeHeaders", "true"))
    for k, v in options.items():
        reader = reader.option(k, v)
    df = reader.load()
    headers = F.coalesce(F.to_json(F.transform("headers", lambda h: F.array(h["key"], h["value"].cast("string")))),
                         F.lit("[]"))
    return df.select(F.col("topic"), F.col("partition").cast("int"), F.col("offset").cast("long"),
                     F.unix_millis("timestamp").alias("timestamp"), F.col("key").cast("string").alias("key"),
                     F.col("value").cast("string").alias("value"), headers.alias("headers"),
                     F.lit(None).cast("long").alias("seq"))


def _records(spark: Any, source: str, kafka: tuple[str, list[str]] | None = None,
             kafka_options: dict[str, str] | None = None) -> Any:
    """The records as the model's record DataFrame; a usage error names what is wrong.
    Returns (records, laid out per topic-partition in offset order)."""
    from pyspark.errors import AnalysisException

    from reference_impl.engine.spark import records_dataframe, records_problem

    if kafka is not None:
        try:
            df = kafka_records(spark, kafka[0], kafka[1], kafka_options or {})
        except AnalysisException as e:
            raise UsageError(f"--records {source}: Spark cannot read the topic: {str(e).splitlines()[0]}") from None
        return df, True
    if not os.path.exists(source):
        raise UsageError(f"--records: file not found: {source}")
    parquet = source.endswith(".parquet") or os.path.isdir(source)
    if not parquet and not source.endswith((".jsonl", ".json", ".ndjson")):
        raise UsageError(f"--records {source}: give RECORDS.jsonl or a Parquet dump (.parquet file or directory)")
    try:
        if parquet:
            cols = set(spark.read.parquet(source).columns)
            missing = [c for c in ("topic", "partition", "offset", "timestamp", "key", "value", "headers") if c not in cols]
            if missing:
                raise UsageError(f"--records {source}: the Parquet dump lacks the column(s) {', '.join(missing)}; "
                                 "it needs topic, partition, offset, timestamp, key, value, headers")
        df = records_dataframe(spark, source)
        if not parquet:
            # JSONL goes through Python once (it numbers the lines); the audit reads it four times
            df = df.persist()
        bad = df.filter("topic is null or partition is null or offset is null").count()
    except AnalysisException as e:
        raise UsageError(f"--records {source}: Spark cannot read it: {str(e).splitlines()[0]}") from None
    if bad:
        raise UsageError(f"--records {source}: {bad} records lack topic, partition or offset (malformed lines?); "
                         "each record is {\"topic\":…, \"partition\":…, \"offset\":…, \"timestamp\":…, \"key\":…, "
                         "\"value\":…, \"headers\":[…]}")
    problem = records_problem(df)
    if problem:
        raise UsageError(f"--records {source}: {problem}")
    return df, parquet


def _check_bucket(access: Any, location: Any) -> None:
    """Reach the bucket once before Spark does: S3A retries a wrong endpoint or a refused
    request for minutes, and its errors name neither the flag nor the fix."""
    from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

    client = access.client()
    where = access.endpoint or "AWS S3"
    try:
        client.head_bucket(Bucket=location.bucket)
    except EndpointConnectionError:
        raise UsageError(f"cannot reach the S3 endpoint {where}; check --s3-endpoint (or store.url in the config)") from None
    except ClientError as e:
        code = str(e.response.get("Error", {}).get("Code", ""))
        if code in ("404", "NoSuchBucket"):
            raise UsageError(f"--bucket {location.url}: no bucket {location.bucket!r} at {where}") from None
        if code in ("403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"):
            raise UsageError(f"--bucket {location.url}: access denied at {where}; check AWS_ACCESS_KEY_ID / "
                             "AWS_SECRET_ACCESS_KEY (or aws.access.key.id / aws.secret.access.key in the config)") from None
        raise UsageError(f"--bucket {location.url}: {where} answered {code or e}") from None
    except BotoCoreError as e:
        raise UsageError(f"cannot reach the S3 endpoint {where}: {e}") from None


def _session(master: str | None, hadoop_conf: dict[str, str], kafka: bool = False) -> tuple[Any, bool]:
    """A session with S3A (and the Kafka source): jars handed over as local files. Returns
    (session, created here)."""
    from pyspark.sql import SparkSession

    from adapters.processes.jars import JarFetchError, jar_files
    from reference_impl.engine.spark import spark_session

    try:
        jars = jar_files("spark-s3a") + (jar_files("spark-kafka") if kafka else [])
    except JarFetchError as e:
        raise UsageError(f"Spark's jars are not available: {e}") from None
    existed = SparkSession.getActiveSession() is not None
    # on a terminal Spark's own stage bar shows how far each stage got, as spark-shell's does
    spark = spark_session(master, "sinkcheck-audit", jars=jars, hadoop_conf=hadoop_conf,
                          conf={"spark.ui.showConsoleProgress": str(sys.stderr.isatty()).lower()})
    return spark, not existed


def cmd_audit(args: Any) -> int:
    from conformance.auditing.auditor import (AuditInputError, BucketLocation, S3Access, audit_results,
        run_audit)
    from reports import ReportContext, write_reports
    from reports.redact import Redactor
    from sinkcheck.terminal import Terminal, exit_for

    started = time.monotonic()
    try:
        location = BucketLocation.parse(args.bucket)
    except AuditInputError as e:
        raise UsageError(str(e)) from None
    out = out_dir(args.out)
    raw, cfg = _connector(args.config, args.connector_version, location.bucket)
    try:
        access = S3Access.resolve(raw, args.s3_endpoint)
    except AuditInputError as e:
        raise UsageError(str(e)) from None
    redactor = Redactor.from_configs(raw, {"aws.secret.access.key": access.secret_key})
    term = Terminal(redactor)
    kafka = kafka_source(args.records, args.kafka_bootstrap) if args.records.startswith("kafka://") else None
    kafka_options = {}
    for opt in args.kafka_option or []:
        k, eq, v = opt.partition("=")
        if not eq or not k.startswith("kafka."):
            raise UsageError(f"--kafka-option {opt!r}: give kafka.<consumer property>=VALUE, e.g. kafka.security.protocol=SSL")
        kafka_options[k] = v
        redactor.add_config({k: v})
    if kafka is None and not os.path.exists(args.records):
        raise UsageError(f"--records: file not found: {args.records}")
    if kafka is not None:
        check_broker(args.records, kafka[0], kafka[1], kafka_options)
    elif not args.records.endswith(".parquet") and os.path.isfile(args.records):
        check_utf8(args.records, "--records")
    _check_bucket(access, location)

    term.progress("[sinkcheck] audit: starting Spark…")
    with term.ticking():  # no stage runs yet: Spark shows nothing
        spark, created = _session(args.spark_master, access.hadoop_conf(), kafka=kafka is not None)
    try:
        records, parquet = _records(spark, args.records, kafka, kafka_options)
        term.err(f"auditing {location.url} against {args.records} on {spark.sparkContext.master}")
        try:
            with term.ticking(spark=True):
                outcome = run_audit(spark, cfg, records, location, access, clustered=parquet, progress=term.progress)
        except Exception as e:
            msg = str(e)
            if "AccessDenied" in msg or "NoSuchBucket" in msg or "UnknownHost" in msg or "Connection refused" in msg:
                first = next((ln for ln in msg.splitlines() if "Exception" in ln), msg.splitlines()[0])
                raise UsageError(f"cannot read {location.url} through S3A ({first.strip()[:300]}); check --s3-endpoint, "
                                 "the bucket name and the credentials") from None
            raise
        finally:
            records.unpersist()
        master = spark.sparkContext.master
        spark_version = spark.version
    finally:
        if created:
            spark.stop()
    term.progress("")

    reproduce = command_line(args)
    results = audit_results(outcome, raw, args.connector_version, out / "topic-partitions", reproduce)
    if not results:
        term.err(f"sinkcheck audit: nothing to audit: {args.records} holds no records and {location.url} no objects")
        return Exit.NOTHING_SELECTED
    import platform

    import sinkcheck

    env = {"sinkcheck version": sinkcheck.__version__, "python": platform.python_version(),
           "Spark": f"{spark_version} on {master}", "records": args.records, "bucket": location.url,
           "S3 endpoint": access.endpoint or "AWS (S3A default)",
           "connector version (model)": cfg.version.text,
           "objects listed": outcome.listing.listed, "records audited": outcome.records,
           "audit phases": ", ".join(f"{k} {v:.1f}s" for k, v in outcome.timings.items())}
    ctx = ReportContext(command="audit", duration_s=time.monotonic() - started, environment=env,
                        notes=list(outcome.notes), redactor=redactor)
    if outcome.constraints_reason:
        ctx.notes.append(f"exact objects cannot be checked: {outcome.constraints_reason}")
    if outcome.task_failure:
        f = outcome.task_failure
        ctx.notes.append(f"the model's task dies ({f['rule']}: {f['message']}); objects it may or may not have "
                         "committed are not counted as lost")
    paths = write_reports(out, results, ctx)

    shown = sorted(results, key=lambda r: {"fail": 0, "unknown": 1, "pass": 2}[r.status])
    for r in shown[:20]:
        a = r.audit
        term.out(f"{r.status.upper():<7} {r.scenario.name}: {a['records']} records, {a['observed_objects']} objects; "
                 f"{a['lost']} lost, {a['duplicated']} duplicated, {a['not_yet_visible']} not yet visible; objects: "
                 f"{a['missing']} missing, {a['different']} different, {a['unexpected']} unexpected")
        for v in r.failed():
            for w in v.witnesses[:3]:
                term.out(f"          {w.anomaly}: {' '.join(w.keys)[:120]} {w.explanation[:160]}")
    if len(shown) > 20:
        term.out(f"... and {len(shown) - 20} more topic-partitions (all in the report)")
    for n in ctx.notes:
        term.out(f"note: {n}")
    code = exit_for(results, [])
    word = {Exit.OK: "PASS", Exit.FAILED: "FAIL", Exit.UNKNOWN: "UNKNOWN"}[code]
    term.out(f"{word}: audit of {location.url}: {len(results)} topic-partitions, {outcome.records} records, "
             f"{outcome.listing.listed} objects in {time.monotonic() - started:.1f}s")
    for k, p in paths.items():
        term.out(f"  {k:<5} {p}")
    return code


def add_audit_parser(sub: Any) -> None:
    a = sub.add_parser("audit", help="check a bucket a sink wrote against the records it was given (on Spark)")
    a.add_argument("--records", required=True,
                   help="RECORDS.jsonl, a Parquet dump of the topic (topic, partition, offset, timestamp, key, value, "
                        "headers), or kafka://HOST:PORT/TOPIC[,TOPIC] (read whole with Spark's Kafka source)")
    a.add_argument("--kafka-bootstrap", default=None, help="bootstrap servers for --records kafka://TOPIC")
    a.add_argument("--kafka-option", action="append", default=None, metavar="kafka.PROP=VALUE",
                   help="a consumer property for Spark's Kafka source (repeatable), e.g. kafka.security.protocol=SSL")
    a.add_argument("--bucket", required=True, help="s3://BUCKET/PREFIX: where the sink wrote (the prefix is a directory)")
    a.add_argument("--config", required=True, help="the connector JSON the sink ran with ({\"name\":…,\"config\":{…}} or flat)")
    a.add_argument("--connector-version", default=None, help="the Confluent S3 sink version the model holds the sink to")
    a.add_argument("--spark-master", default=None, help="spark.master (default: embedded local[*]); e.g. spark://host:7077")
    a.add_argument("--s3-endpoint", default=None, help="an S3-compatible endpoint (default: the config's store.url, else AWS)")
    a.add_argument("--out", required=True, help="where report.html, junit.xml and results.json go")
    a.set_defaults(func=cmd_audit)


def command_line(args: Any) -> str:
    """The command that repeats this audit (the report's 'reproduce' line)."""
    parts = ["sinkcheck", "audit", "--records", args.records, "--bucket", args.bucket, "--config", args.config]
    for flag, value in (("--connector-version", args.connector_version), ("--spark-master", args.spark_master),
                        ("--s3-endpoint", args.s3_endpoint), ("--kafka-bootstrap", args.kafka_bootstrap)):
        if value:
            parts += [flag, value]
    return " ".join(shlex.quote(p) for p in parts + ["--out", args.out])
