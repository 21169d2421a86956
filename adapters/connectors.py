"""Connector profiles: for each S3 sink plugin, its connector class, how to point it at the
local S3 server (endpoint, bucket, credentials), where its jars come from and how it names
objects.

A user's own connector config (`{"name": ..., "config": {...}}` or a flat map) is used as
given; `fill_config` only sets the endpoint, bucket and credentials keys of the profile.
`default_config` builds a small working config for the suite's own tests.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class S3Location:
    """Where and how a connector reaches the S3 server."""

    endpoint: str
    bucket: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"


@dataclass(frozen=True)
class ConnectorProfile:
    name: str
    connector_class: str
    jar_set: str | None  # adapters.jars set name; None: only from a user's --plugin-path
    naming: str  # how objects are named, for reports and readers
    fill: Callable[[S3Location], dict[str, str]] = field(repr=False)
    defaults: Mapping[str, str] = field(default_factory=dict)
    writes_s3: bool = True
    # keys whose values are secrets (redacted in reports)
    secret_keys: tuple[str, ...] = ()

    def endpoint_keys(self) -> tuple[str, ...]:
        return tuple(self.fill(S3Location("http://x", "b", "a", "s")).keys())


def _confluent(s3: S3Location) -> dict[str, str]:
    return {
        "store.url": s3.endpoint,
        "s3.path.style.access.enabled": "true",
        "s3.bucket.name": s3.bucket,
        "s3.region": s3.region,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
    }


def _aiven(s3: S3Location) -> dict[str, str]:
    # Setting aws.s3.endpoint makes the 2.x connector use path-style access.
    return {
        "aws.s3.endpoint": s3.endpoint,
        "aws.s3.bucket.name": s3.bucket,
        "aws.s3.region": s3.region,
        "aws.access.key.id": s3.access_key,
        "aws.secret.access.key": s3.secret_key,
    }


CAMEL_PREFIX = "camel.kamelet.aws-s3-sink."


def _camel(s3: S3Location) -> dict[str, str]:
    p = CAMEL_PREFIX
    return {
        p + "overrideEndpoint": "true",
        p + "uriEndpointOverride": s3.endpoint,
        p + "forcePathStyle": "true",
        p + "bucketNameOrArn": s3.bucket,
        p + "region": s3.region,
        p + "accessKey": s3.access_key,
        p + "secretKey": s3.secret_key,
    }


def _no_s3(s3: S3Location) -> dict[str, str]:
    return {}


PROFILES: dict[str, ConnectorProfile] = {
    p.name: p
    for p in (
        ConnectorProfile(
            name="confluent",
            connector_class="io.confluent.connect.s3.S3SinkConnector",
            jar_set=None,
            naming="<topics.dir=topics>/<topic>/partition=<p>/<topic>+<p>+<start offset, 10 digits>.<ext>",
            fill=_confluent,
            defaults={
                "storage.class": "io.confluent.connect.s3.storage.S3Storage",
                "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
                "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
                "flush.size": "100",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
                "schema.compatibility": "NONE",
            },
            secret_keys=("aws.secret.access.key",),
        ),
        ConnectorProfile(
            name="aiven",
            connector_class="io.aiven.kafka.connect.s3.AivenKafkaConnectS3SinkConnector",
            jar_set="aiven",
            naming="file.name.template, default {{topic}}-{{partition}}-{{start_offset}} "
                   "(+ .gz with gzip); one object per partition per offset flush",
            fill=_aiven,
            defaults={
                "format.output.type": "jsonl",
                "format.output.fields": "key,value,offset",
                "file.compression.type": "gzip",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            secret_keys=("aws.secret.access.key",),
        ),
        ConnectorProfile(
            name="camel",
            connector_class="org.apache.camel.kafkaconnector.awss3sink.CamelAwss3sinkSinkConnector",
            jar_set="camel",
            naming="one object per record; key = header 'file' or 'ce-file', else the Camel "
                   "exchange id (random), unless camel.kamelet.aws-s3-sink.keyName is set",
            fill=_camel,
            defaults={
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            secret_keys=(CAMEL_PREFIX + "secretKey", CAMEL_PREFIX + "accessKey"),
        ),
        ConnectorProfile(
            name="filesink",
            connector_class="org.apache.kafka.connect.file.FileStreamSinkConnector",
            jar_set="filesink",
            naming="no S3 objects: one local file (`file`), one line per record",
            fill=_no_s3,
            defaults={
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "value.converter": "org.apache.kafka.connect.storage.StringConverter",
            },
            writes_s3=False,
        ),
    )
}


class ConnectorConfigError(ValueError):
    """A connector config that cannot be used, or that the worker rejected. `errors` maps each
    property to its reasons."""

    def __init__(self, message: str, errors: Mapping[str, list[str]] | None = None):
        super().__init__(message)
        self.errors = dict(errors or {})


def parse_connector_config(data: str | bytes | Path | Mapping[str, Any],
                           default_name: str = "sinkcheck-sink") -> tuple[str, dict[str, str]]:
    """Accept `{"name": ..., "config": {...}}` or a flat map (JSON text, a file path, or a
    dict); return (name, config with string values)."""
    if isinstance(data, Path):
        data = data.read_text()
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise ConnectorConfigError(f"connector config is not valid JSON: {e}") from None
    if not isinstance(data, Mapping):
        raise ConnectorConfigError(
            f"connector config must be a JSON object, got {type(data).__name__}")
    if "config" in data and isinstance(data["config"], Mapping):
        name = str(data.get("name") or data["config"].get("name") or default_name)
        flat = dict(data["config"])
    else:
        flat = dict(data)
        name = str(flat.get("name") or default_name)
    flat.pop("name", None)
    return name, {str(k): _str(v) for k, v in flat.items()}


def _str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_str(x) for x in v)
    return str(v)


def profile_for(config: Mapping[str, str], profile: str | None = None) -> ConnectorProfile:
    """The profile named `profile`, else the one whose connector class the config names."""
    if profile:
        try:
            return PROFILES[profile]
        except KeyError:
            raise ConnectorConfigError(
                f"unknown connector profile {profile!r}; known: {', '.join(PROFILES)}") from None
    cls = config.get("connector.class", "")
    for p in PROFILES.values():
        if cls in (p.connector_class, p.connector_class.rsplit(".", 1)[-1]):
            return p
    raise ConnectorConfigError(
        f"connector.class {cls!r} matches no profile ({', '.join(PROFILES)}); "
        f"name one with profile=...")


def fill_config(config: Mapping[str, str], profile: ConnectorProfile,
                s3: S3Location | None, topics: Mapping[str, int] | None = None) -> dict[str, str]:
    """The user's config with only the endpoint, bucket and credentials keys set, and the
    topics the run created as `topics` where the config names neither `topics` nor
    `topics.regex` (a sink connector needs one of them)."""
    out = dict(config)
    out.setdefault("connector.class", profile.connector_class)
    if topics and not str(out.get("topics", "")).strip() and not str(out.get("topics.regex", "")).strip():
        out["topics"] = ",".join(topics)
    if s3 is not None:
        out.update(profile.fill(s3))
    return out


def default_config(profile: ConnectorProfile | str, topics: list[str] | str,
                   s3: S3Location | None, **overrides: str) -> dict[str, str]:
    """A small working config for `profile` (the profile's defaults, then overrides)."""
    if isinstance(profile, str):
        profile = PROFILES[profile]
    cfg = {"connector.class": profile.connector_class, "tasks.max": "1",
           "topics": topics if isinstance(topics, str) else ",".join(topics)}
    cfg.update(profile.defaults)
    cfg.update({k: _str(v) for k, v in overrides.items()})
    return fill_config(cfg, profile, s3)


def redact(config: Mapping[str, str], profile: ConnectorProfile | None = None) -> dict[str, str]:
    secret = set(profile.secret_keys) if profile else set()
    out = {}
    for k, v in config.items():
        lk = k.lower()
        if k in secret or "secret" in lk or "password" in lk:
            out[k] = "****"
        else:
            out[k] = v
    return out
