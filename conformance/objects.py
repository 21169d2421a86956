"""How the checkers read the objects of sinks whose layout is not the Confluent S3 sink's, and
how those sinks name them. Confluent-style objects are decoded with the model's format code
(reference_impl.contents); these are the others, each declared by its target:

* `jsonl`: one JSON value a line (Spark Structured Streaming's text sink of Kafka values);
* `aiven`: Aiven's S3 sink (`format.output.type` csv or jsonl, `format.output.fields`, the
  value's encoding, `file.compression.type`), its documented defaults: gzip, CSV, the value
  only, base64;
* `camel`: Camel's aws-s3-sink, one object per record holding the value's bytes;
* `iceberg`: Apache Iceberg's sink, Parquet data files whose rows are the values' fields (read
  only where the table's current snapshot lists them: the claim's view "log").
"""
from __future__ import annotations

import base64
import csv
import gzip
import io
import json
import re
from typing import Any, Callable, Mapping

Decoder = Callable[[bytes, Mapping[str, str]], list[Any]]


def _gunzip(body: bytes) -> bytes:
    return gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body


def decode_jsonl(body: bytes, config: Mapping[str, str]) -> list[Any]:
    from reference_impl.formats import FormatOptions, format_for

    return format_for("JsonFormat").decode(body, FormatOptions(), "value")


def decode_aiven(body: bytes, config: Mapping[str, str]) -> list[Any]:
    """The value of each record in an Aiven object; bytes where the value was encoded (base64)."""
    text = _gunzip(body).decode("utf-8")
    fields = [f.strip() for f in config.get("format.output.fields", "value").split(",") if f.strip()]
    encoded = config.get("format.output.fields.value.encoding", "base64").lower() == "base64"
    if "value" not in fields:
        raise ValueError("format.output.fields has no value: nothing to find the records by")
    out: list[Any] = []
    if config.get("format.output.type", "csv").lower() == "jsonl":
        for line in text.splitlines():
            if line.strip():
                v = json.loads(line).get("value")
                out.append(base64.b64decode(v) if encoded and isinstance(v, str) else v)
        return out
    column = fields.index("value")
    for row in csv.reader(io.StringIO(text)):
        if row:
            v = row[column]
            out.append(base64.b64decode(v) if encoded else v.encode())
    return out


def decode_camel(body: bytes, config: Mapping[str, str]) -> list[Any]:
    return [body]


def decode_iceberg(body: bytes, config: Mapping[str, str]) -> list[Any]:
    """The rows of one of an Iceberg table's Parquet data files, each a dict of its columns."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(body)).to_pylist()


DECODERS: dict[str, Decoder] = {"jsonl": decode_jsonl, "aiven": decode_aiven, "camel": decode_camel,
                                "iceberg": decode_iceberg}

_AIVEN_DEFAULT_TEMPLATE = "{{topic}}-{{partition}}-{{start_offset}}"
_AIVEN_EXTENSIONS = {"gzip": ".gz", "snappy": ".snappy", "zstd": ".zst", "none": ""}
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*(?::\s*padding\s*=\s*(true|false)\s*)?\}\}")


def aiven_key(config: Mapping[str, str], topic: str, partition: int, start_offset: int) -> str | None:
    """The key Aiven's sink gives a file of `topic`/`partition` starting at `start_offset`, from
    `file.name.prefix`, `file.name.template` and `file.compression.type`; None when the template
    uses a variable the key cannot be predicted from (a timestamp, a record key)."""
    template = config.get("file.name.template", _AIVEN_DEFAULT_TEMPLATE)
    values = {"topic": (topic, 0), "partition": (str(partition), 10), "start_offset": (str(start_offset), 20)}

    def fill(m: re.Match[str]) -> str:
        name, padding = m.group(1), m.group(2) == "true"
        if name not in values:
            raise KeyError(name)
        text, width = values[name]
        return text.zfill(width) if padding and width else text

    try:
        name = _PLACEHOLDER.sub(fill, template)
    except KeyError:
        return None
    ext = _AIVEN_EXTENSIONS.get(config.get("file.compression.type", "gzip").lower(), "")
    return config.get("file.name.prefix", "") + name + ext
