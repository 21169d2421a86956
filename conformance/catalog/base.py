"""The connector config every named scenario about Confluent's connector starts from: JSON
objects in, JSON objects out, keys as text."""
from __future__ import annotations

JSON = "io.confluent.connect.s3.format.json.JsonFormat"
BASE = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "format.class": JSON,
    "s3.bucket.name": "sinkcheck",
    # keys are text, values schemaless JSON objects: what the named scenarios' records are written in
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
}
