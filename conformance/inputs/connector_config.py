"""A connector config (what you POST to Kafka Connect, or a scenario's) as the reference model
reads it: the two properties sinkcheck's scenarios leave out get their defaults, and
`connector.class` is dropped (the target says which connector it is; the model checks the
S3 sink's own properties). And the one single message transform sinkcheck reads in a config:
Kafka's Filter of tombstones."""
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


FILTER = "org.apache.kafka.connect.transforms.Filter"
RECORD_IS_TOMBSTONE = "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"


def transform_names(cfg: Mapping[str, str]) -> list[str]:
    return [t.strip() for t in str(cfg.get("transforms", "")).split(",") if t.strip()]


def drops_tombstones(cfg: Mapping[str, str], name: str) -> bool:
    """Is transform `name` Kafka's Filter under the RecordIsTombstone predicate (not negated)?
    Then no tombstone reaches the sink."""
    p = str(cfg.get(f"transforms.{name}.predicate", "")).strip()
    return (str(cfg.get(f"transforms.{name}.type", "")).strip() == FILTER and bool(p)
            and p in [x.strip() for x in str(cfg.get("predicates", "")).split(",")]
            and str(cfg.get(f"predicates.{p}.type", "")).strip() == RECORD_IS_TOMBSTONE
            and str(cfg.get(f"transforms.{name}.negate", "false")).strip().lower() != "true")


def tombstones_dropped(cfg: Mapping[str, str]) -> bool:
    """Some transform of the chain drops every tombstone before the sink sees it."""
    return any(drops_tombstones(cfg, t) for t in transform_names(cfg))
