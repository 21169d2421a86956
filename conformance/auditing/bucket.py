"""Where an audit looks and what is there: the bucket and prefix (`s3://bucket/prefix`), how
Spark's S3A and boto3 reach it, and every object under the prefix as a DataFrame of
(kind='observed', topic, partition, key, start offset, view, content) rows, with the topic,
partition, start offset and view read from the key by the model's naming (R5.1, R5.3, R11.2).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from reference_impl.config import SinkConfig

class AuditInputError(ValueError):
    """Bad audit input (bucket URL, records, S3 access): the message says what to fix."""


# --- where to look ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BucketLocation:
    """`s3://bucket/prefix`: the prefix is a directory (S3A lists it as one); '' is the bucket."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> "BucketLocation":
        u = urlparse(url)
        if u.scheme not in ("s3", "s3a") or not u.netloc:
            raise AuditInputError(f"--bucket {url!r}: give s3://BUCKET/PREFIX (e.g. s3://my-bucket/topics)")
        if u.query or u.fragment:
            raise AuditInputError(f"--bucket {url!r}: no '?' or '#' parts; give s3://BUCKET/PREFIX")
        if not re.fullmatch(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]", u.netloc):
            raise AuditInputError(f"--bucket {url!r}: {u.netloc!r} is not a valid S3 bucket name "
                                  "(3-63 characters: lower-case letters, digits, '.' and '-')")
        prefix = u.path.strip("/")
        if "//" in prefix:
            raise AuditInputError(f"--bucket {url!r}: the prefix has an empty path segment, which S3A cannot address")
        return cls(u.netloc, prefix)

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    @property
    def s3a_url(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}"

    @property
    def key_prefix(self) -> str:
        """What every key under the location starts with."""
        return f"{self.prefix}/" if self.prefix else ""


@dataclass(frozen=True)
class S3Access:
    """How Spark's S3A reaches the bucket. Nothing set means S3A's defaults (AWS, its
    credential chain)."""

    endpoint: str | None = None
    region: str | None = None
    path_style: bool | None = None
    access_key: str | None = None
    secret_key: str | None = None

    @classmethod
    def resolve(cls, connector: dict[str, str], endpoint: str | None = None,
                env: dict[str, str] | None = None) -> "S3Access":
        """--s3-endpoint, else the connector's `store.url`; credentials from the environment
        (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), else the connector's own keys, so that the
        audit reads with what the sink wrote with unless told otherwise."""
        env = dict(os.environ) if env is None else env
        endpoint = endpoint or connector.get("store.url") or None
        if endpoint is not None:
            u = urlparse(endpoint)
            if u.scheme not in ("http", "https") or not u.netloc:
                raise AuditInputError(f"S3 endpoint {endpoint!r}: give http://HOST:PORT or https://HOST")
        key: str | None = None
        secret: str | None = None
        for where, k, sk in (("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", env.get("AWS_ACCESS_KEY_ID"),
                              env.get("AWS_SECRET_ACCESS_KEY")),
                             ("aws.access.key.id/aws.secret.access.key in the config", connector.get("aws.access.key.id"),
                              connector.get("aws.secret.access.key"))):
            if bool(k) != bool(sk):
                raise AuditInputError(f"S3 credentials: {where}: an access key id needs its secret key and the other "
                                      "way round")
            if k and key is None:
                key, secret = k, sk  # a pair from one place, never one half from each
        region = connector.get("s3.region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
        style = connector.get("s3.path.style.access.enabled")
        path_style = None if style is None else style.strip().lower() == "true"
        if path_style is None and endpoint is not None:
            path_style = True  # S3-compatible servers on a host:port rarely resolve bucket subdomains
        return cls(endpoint, region, path_style, key, secret)

    def client(self) -> Any:
        """A boto3 client for the same endpoint and credentials (S3's listing, the few objects
        Spark's file sources skip, and the reachability check before Spark starts)."""
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region or "us-east-1",
                            aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key,
                            config=Config(s3={"addressing_style": "path" if self.path_style else "auto"},
                                          connect_timeout=5, read_timeout=30, retries={"max_attempts": 3}))

    def hadoop_conf(self) -> dict[str, str]:
        conf: dict[str, str] = {}
        if self.endpoint:
            conf["fs.s3a.endpoint"] = self.endpoint
            conf["fs.s3a.connection.ssl.enabled"] = "true" if self.endpoint.startswith("https:") else "false"
        if self.region:
            conf["fs.s3a.endpoint.region"] = self.region
        elif self.endpoint:
            conf["fs.s3a.endpoint.region"] = "us-east-1"  # S3A needs a region to sign for a custom endpoint
        if self.path_style is not None:
            conf["fs.s3a.path.style.access"] = "true" if self.path_style else "false"
        if self.access_key:
            conf["fs.s3a.access.key"] = self.access_key
            conf["fs.s3a.secret.key"] = self.secret_key or ""
            conf["fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        return conf



# --- what is there ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Listing:
    listed: int  # objects under the prefix (S3 ListObjectsV2)
    read_by_spark: int  # of those, read by Spark's file source through S3A
    read_on_driver: int  # the ones Spark's file source skips (see observed_objects)


def list_objects(access: S3Access, location: BucketLocation) -> dict[str, int]:
    """Every key under the prefix with its size, from S3's own listing (metadata only)."""
    client = access.client()
    out: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=location.bucket, Prefix=location.key_prefix):
        for o in page.get("Contents", []):
            if not o["Key"].endswith("/"):  # a directory marker, not an object a sink wrote
                out[o["Key"]] = int(o["Size"])
    return out


def observed_objects(spark: Any, cfg: SinkConfig, location: BucketLocation, access: S3Access) -> tuple[Any, Listing]:
    """Every object under the prefix as (kind='observed', topic, partition, key, first_offset =
    the start offset its name gives, view, content). Spark reads them through S3A, except
    those its file sources skip, which S3's listing reveals and the driver reads: zero-byte
    objects, names starting with '_' or '.' (anywhere in the key), and keys with an empty
    path segment (S3A normalises `a//b` to `a/b`, a different key)."""
    from pyspark.errors import AnalysisException

    listed = list_objects(access, location)
    head = f"s3a://{location.bucket}/"
    spark_keys: set[str] = set()
    df = spark.createDataFrame([], "path string, content binary")
    if listed:
        try:
            df = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                  .option("ignoreMissingFiles", "true").load(location.s3a_url).select("path", "content"))
            # inputFiles() are URIs: percent-encoded, with '+' left as it is
            spark_keys = {unquote(f[len(head):]) for f in df.inputFiles() if f.startswith(head)}
        except AnalysisException:
            pass  # only names Spark's file index skips
    rest = sorted(k for k, size in listed.items() if size == 0 or k not in spark_keys)
    if rest:
        client = access.client()
        rows = [(head + k, b"" if listed[k] == 0 else client.get_object(Bucket=location.bucket, Key=k)["Body"].read())
                for k in rest]
        df = df.unionByName(spark.createDataFrame(rows, "path string, content binary"))
    read_by_spark = sum(1 for k, size in listed.items() if size > 0 and k in spark_keys)
    return _shape(spark, cfg, location, df), Listing(len(listed), read_by_spark, len(rest))


def key_pattern(cfg: SinkConfig) -> tuple[str, dict[str, str]]:
    """A Java regex over an object's file name: topic, partition, start offset, extension, and
    the extension of each view, all from the model's naming (R5.1, R5.3, R11.2)."""
    from reference_impl.naming import object_key

    exts: dict[str, str] = {}
    views = ["value"] + (["keys"] if cfg.store_kafka_keys else []) + (["headers"] if cfg.store_kafka_headers else [])
    for view in views:
        try:
            k = object_key(cfg, "t", 0, "ep", 0, view)
        except Exception:
            continue  # a width the connector cannot format (R5.1): no file is ever named
        stem = f"t{cfg.file_delim}0{cfg.file_delim}{0:0{cfg.zero_pad_width}d}"
        exts[view] = k[k.rindex(stem) + len(stem):]
    fd = re.escape(cfg.file_delim)
    alts = "|".join(re.escape(e) for e in sorted(exts.values(), key=len, reverse=True)) or r"\..*"
    return f"^(.+){fd}([0-9]+){fd}([0-9]+)({alts})$", exts


def _shape(spark: Any, cfg: SinkConfig, location: BucketLocation, df: Any) -> Any:
    from pyspark.sql import functions as F

    pattern, exts = key_pattern(cfg)
    head = f"s3a://{location.bucket}/"
    key = F.expr(f"substring(path, {len(head) + 1})")
    name = F.substring_index(key, cfg.directory_delim, -1) if cfg.directory_delim else key
    topic = F.regexp_extract(name, pattern, 1)
    ext = F.regexp_extract(name, pattern, 4)
    view = F.lit("value")
    for v, e in exts.items():
        if v != "value":
            view = F.when(ext == F.lit(e), F.lit(v)).otherwise(view)
    parsed = topic != F.lit("")
    return df.select(
        F.lit("observed").alias("kind"),
        F.when(parsed, topic).alias("topic"),
        F.when(parsed, F.regexp_extract(name, pattern, 2).cast("int")).alias("partition"),
        key.alias("key"),
        F.when(parsed, F.regexp_extract(name, pattern, 3).cast("long")).alias("first_offset"),
        F.lit(None).cast("long").alias("last_offset"), F.lit(None).cast("array<long>").alias("offsets"),
        F.lit(None).cast("string").alias("siblings"), F.lit(None).cast("boolean").alias("value_object"),
        F.lit(None).cast("boolean").alias("certain"), F.lit(None).cast("string").alias("rotation"),
        F.lit(None).cast("string").alias("rule"),
        F.lit(None).cast("string").alias("message"), F.lit(None).cast("long").alias("failure_offset"),
        F.when(parsed, view).alias("view"), F.col("content"),
    )
