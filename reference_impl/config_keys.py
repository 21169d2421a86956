"""What Kafka and Kafka Connect accept before the S3 sink sees a config or a record: the keys a
connector config may carry, and the names a Kafka topic may have.

The known keys are the S3 sink's own (S3SinkConnectorConfig, with storage-common's
StorageCommonConfig, StorageSinkConnectorConfig and PartitionerConfig, as of 12.1.x) and
Kafka Connect's connector-level ones (ConnectorConfig, SinkConnectorConfig). Connect does not
refuse an unknown key: it logs "The configuration '…' was supplied but isn't a known config."
and goes on, so a typo (`flush.sise`) silently leaves the default in force.
"""
from __future__ import annotations

from typing import Iterable, Mapping

S3_SINK_KEYS = frozenset({
    # S3SinkConnectorConfig
    "s3.bucket.name", "s3.object.tagging", "s3.object.tagging.key.value.pairs", "s3.object.behavior.on.tagging.error",
    "s3.ssea.name", "s3.sse.customer.key", "s3.sse.kms.key.id", "s3.part.size", "s3.wan.mode",
    "enable.conditional.writes", "max.files.scan.limit", "s3.credentials.provider.class", "aws.access.key.id",
    "aws.secret.access.key", "s3.region", "s3.acl.canned", "s3.compression.type", "s3.send.digest",
    "s3.compression.level", "s3.part.retries", "format.bytearray.extension", "format.bytearray.separator",
    "s3.proxy.url", "s3.proxy.user", "s3.proxy.password", "s3.http.send.expect.continue", "behavior.on.null.values",
    "report.null.values.to.dlq", "max.write.duration.ms", "rotate.file.on.partition.change", "s3.retry.backoff.ms",
    "s3.path.style.access.enabled", "json.decimal.format", "store.kafka.keys", "store.kafka.headers",
    "keys.format.class", "headers.format.class", "s3.elastic.buffer.enable", "s3.elastic.buffer.init.capacity",
    "tombstone.encoded.partition", "partitioner.max.open.files", "s3.schema.partition.affix.type",
    "filename.offset.zero.pad.width",
    # StorageCommonConfig, StorageSinkConnectorConfig (with the Avro data settings it takes)
    "storage.class", "store.url", "topics.dir", "directory.delim", "file.delim", "format.class", "flush.size",
    "rotate.interval.ms", "rotate.schedule.interval.ms", "retry.backoff.ms", "shutdown.timeout.ms",
    "enhanced.avro.schema.support", "connect.meta.data", "avro.codec", "parquet.codec", "schema.compatibility",
    "schemas.cache.config",
    # JsonFormat's own
    "schemas.cache.size",
    # PartitionerConfig
    "partitioner.class", "partition.field.name", "partition.duration.ms", "path.format", "locale", "timezone",
    "timestamp.extractor", "timestamp.field",
})
# the credentials provider's own settings (S3SinkConnectorConfig.CREDENTIALS_PROVIDER_CONFIG_PREFIX)
S3_SINK_PREFIXES = ("s3.credentials.provider.",)

CONNECT_KEYS = frozenset({
    "name", "connector.class", "tasks.max", "tasks.max.enforce", "topics", "topics.regex", "key.converter",
    "value.converter", "header.converter", "config.action.reload", "transforms", "predicates", "plugin.version",
})
CONNECT_PREFIXES = ("key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.", "errors.",
                    "consumer.override.", "producer.override.", "admin.override.")

TOPIC_LEGAL_CHARS = "[a-zA-Z0-9._-]"
TOPIC_MAX_LENGTH = 249
TOPICS_EXCLUSIVE = "topics and topics.regex are mutually exclusive options, but both are set."


def known_key(key: str) -> bool:
    return (key in S3_SINK_KEYS or key in CONNECT_KEYS
            or key.startswith(S3_SINK_PREFIXES) or key.startswith(CONNECT_PREFIXES))


def unknown_keys(config: Mapping[str, str]) -> list[str]:
    """The keys neither the S3 sink nor Kafka Connect defines, in the config's order."""
    return [k for k in config if not known_key(k)]


def unknown_key_warning(key: str) -> str:
    """What Connect logs for it (AbstractConfig.logUnused)."""
    return f"The configuration '{key}' was supplied but isn't a known config."


def invalid_topic_reason(name: str) -> str | None:
    """Why Kafka refuses `name` as a topic (org.apache.kafka.common.internals.Topic.validate, its
    wording), or None for a legal name."""
    if not name:
        return "Topic name is invalid: the empty string is not allowed"
    if name in (".", ".."):
        return f"Topic name is invalid: '{name}' is not allowed"
    if len(name) > TOPIC_MAX_LENGTH:
        return (f"Topic name is invalid: the length of '{name[:40]}…' is longer than the max allowed length "
                f"{TOPIC_MAX_LENGTH}")
    if not all(c.isascii() and (c.isalnum() or c in "._-") for c in name):
        return (f"Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, "
                "'.', '_' and '-'")
    return None


def first_invalid_topic(names: Iterable[str]) -> str | None:
    """The reason the first illegal name among `names` is refused, or None."""
    return next((r for r in map(invalid_topic_reason, names) if r is not None), None)
