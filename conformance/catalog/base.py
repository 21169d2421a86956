"""What the named scenarios about Confluent's connector start from: the connector config (JSON
objects in, JSON objects out, keys as text) and plain records one second apart."""
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
PUBLIC_T = 1706713200000  # 2024-01-31T15:00:00Z


def _rec(seq: int, ts: int, topic: str = "events", partition: int = 0, pad: int = 0) -> dict:
    value: dict = {"seq": seq, "ts": ts}
    if pad:
        value["pad"] = "x" * pad
    return {"topic": topic, "partition": partition, "timestamp": ts, "key": f"k{seq}", "value": value, "headers": []}


def _small(n: int, topic: str = "events", step_ms: int = 1000, start: int = PUBLIC_T) -> list[dict]:
    return [_rec(i, start + i * step_ms, topic) for i in range(n)]
