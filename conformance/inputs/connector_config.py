"""A connector config (what you POST to Kafka Connect, or a scenario's) as the reference model
reads it: the two properties sinkcheck's scenarios leave out get their defaults, and
`connector.class` is dropped (the target says which connector it is; the model checks the
S3 sink's own properties)."""
from __future__ import annotations

from typing import Mapping

from reference_impl.config import SinkConfig, parse_config

DEFAULT_STORAGE_CLASS = "io.confluent.connect.s3.storage.S3Storage"


def sink_config(connector: Mapping[str, str], version: str | None = None, bucket: str = "sinkcheck") -> SinkConfig:
    """Raises reference_impl.config.ConfigError (naming the property) or VersionError."""
    cfg = {k: v for k, v in connector.items() if k != "connector.class"}
    cfg.setdefault("storage.class", DEFAULT_STORAGE_CLASS)
    cfg.setdefault("s3.bucket.name", bucket)
    return parse_config(cfg, version=version)
