"""Run `sinkcheck model` the way a user does (files in, EXPECTED.json out) for tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from sinkcheck.cli import main

JSON_FORMAT = "io.confluent.connect.s3.format.json.JsonFormat"
BASE = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "storage.class": "io.confluent.connect.s3.storage.S3Storage",
    "format.class": JSON_FORMAT,
    "s3.bucket.name": "bucket",
    "topics": "t",
}


def connector(**config: Any) -> dict[str, Any]:
    """A connector as a user POSTs it, values as strings."""
    merged = {**BASE, **{k.replace("_", "."): str(v) for k, v in config.items()}}
    return {"name": "s3-sink", "config": merged}


def record(offset: int, value: Any = "v", ts: int | None = 0, key: Any = None, headers=None,
           topic: str = "t", partition: int = 0) -> dict[str, Any]:
    return {"topic": topic, "partition": partition, "offset": offset, "timestamp": ts,
            "key": key, "value": value, "headers": headers or []}


def struct(fields: dict[str, str], payload: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "struct", "optional": False,
                              "fields": [{"field": f, "type": t, "optional": True} for f, t in fields.items()]}
    if name:
        schema["name"] = name
    return {"schema": schema, "payload": payload}


def run_model(tmp: Path, config: dict[str, Any], records: Sequence[dict[str, Any]],
              puts: Sequence[dict[str, int]] | None = None, *extra: str) -> dict[str, Any]:
    cfg_path, rec_path, out = tmp / "connector.json", tmp / "records.jsonl", tmp / "expected.json"
    cfg_path.write_text(json.dumps(config, indent=2))
    rec_path.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = ["model", "--config", str(cfg_path), "--records", str(rec_path), "--out", str(out), *extra]
    if puts is not None:
        (tmp / "puts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in puts))
        argv += ["--puts", str(tmp / "puts.jsonl")]
    code = main(argv)
    assert code == 0, f"sinkcheck model exited {code}"
    return json.loads(out.read_text())


def keys_and_offsets(expected: dict[str, Any]) -> list[tuple[str, list[int]]]:
    return [(o["key"], o["offsets"]) for o in expected["objects"]]
