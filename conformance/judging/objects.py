"""How the checkers read the objects of sinks whose layout is not the Confluent S3 sink's, and
how those sinks name them. Confluent-style objects are decoded with the model's format code
(reference_impl.engine.contents); these are the others, each declared by its target:

* `jsonl`: one JSON value a line (Spark Structured Streaming's text sink of Kafka values);
* `aiven`: Aiven's S3 sink (`format.output.type` csv, json, jsonl, avro or parquet,
  `format.output.fields`, the value's encoding, `file.compression.type`), its documented
  defaults: gzip, CSV, the value only, base64;
* `camel`: Camel's aws-s3-sink, one object per record holding the value's bytes;
* `iceberg`: Apache Iceberg's sink, Parquet data files whose rows are the values' fields (read
  only where the table's current snapshot lists them: the claim's view "log").
"""
from __future__ import annotations

import base64
import gzip
import io
import json
import re
from typing import Any, Callable, Mapping

Decoder = Callable[[bytes, Mapping[str, str]], list[Any]]


AIVEN_COMPRESSIONS = ("gzip", "snappy", "zstd", "none")
_AIVEN_EXTENSIONS = {"gzip": ".gz", "snappy": ".snappy", "zstd": ".zst", "none": ""}


_XERIAL_SNAPPY = b"\x82SNAPPY\x00"


def _unsnappy(body: bytes) -> bytes:
    """snappy-java's SnappyOutputStream: a 16-byte header, then blocks of a 4-byte big-endian
    length and a raw snappy block (whose own varint prefix gives its uncompressed size)."""
    import pyarrow as pa

    out, i = [], 16
    while i + 4 <= len(body):
        n = int.from_bytes(body[i:i + 4], "big")
        block = body[i + 4:i + 4 + n]
        size, shift, j = 0, 0, 0
        while True:
            b = block[j]
            size |= (b & 0x7F) << shift
            shift, j = shift + 7, j + 1
            if b < 0x80:
                break
        out.append(pa.decompress(block, decompressed_size=size, codec="snappy").to_pybytes())
        i += 4 + n
    return b"".join(out)


def decompress(body: bytes) -> bytes:
    """A whole-stream compressed object (gzip, zstd, snappy-java's stream) by its magic bytes;
    anything else as it is."""
    if body[:2] == b"\x1f\x8b":
        return gzip.decompress(body)
    if body[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    if body[:8] == _XERIAL_SNAPPY:
        return _unsnappy(body)
    return body


def decode_jsonl(body: bytes, config: Mapping[str, str]) -> list[Any]:
    from reference_impl.formats import FormatOptions, format_for

    return format_for("JsonFormat").decode(body, FormatOptions(), "value")


def aiven_fields(config: Mapping[str, str]) -> list[str]:
    """`format.output.fields` (default: the value only)."""
    return [f.strip() for f in config.get("format.output.fields", "value").split(",") if f.strip()]


def aiven_rows(body: bytes, config: Mapping[str, str]) -> list[dict[str, Any]]:
    """The records of an Aiven object, each a map of its `format.output.fields`: csv columns in
    that order, a json array or json lines of objects, avro or parquet rows. `key` and `value`
    are as written (base64 text where the encoding is base64, in csv)."""
    fields = aiven_fields(config)
    kind = config.get("format.output.type", "csv").lower()
    if kind == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(body)).to_pylist()
    text = decompress(body)
    if kind == "avro":
        import fastavro

        return list(fastavro.reader(io.BytesIO(text)))
    if kind == "jsonl":
        # split on "\n" only: str.splitlines would also cut at U+0085/U+2028 inside strings
        return [json.loads(line) for line in text.decode("utf-8").split("\n") if line.strip()]
    if kind == "json":
        return list(json.loads(text.decode("utf-8"))) if text.strip() else []
    return [_aiven_csv_row(line, fields, config) for line in text.decode("utf-8").split("\n") if line]


def _aiven_csv_row(line: str, fields: list[str], config: Mapping[str, str]) -> dict[str, Any]:
    """One line of Aiven's csv (PlainOutputStreamWriter): the fields joined by commas, unquoted,
    none of them holding one (base64 key and value, digits, headers as base64 `k:v;`) but a
    value written raw (`format.output.fields.value.encoding=none`), which takes what lies between
    the fields before and after it. A line of another column count is no row of these fields:
    ValueError (an empty column is a null field, a tombstone's value; a missing one is not)."""
    cols = line.split(",")
    raw_value = "value" in fields and config.get("format.output.fields.value.encoding", "base64").lower() == "none"
    if raw_value and len(cols) > len(fields):
        i = fields.index("value")
        after = len(fields) - i - 1
        cols = cols[:i] + [",".join(cols[i:len(cols) - after])] + cols[len(cols) - after:]
    if len(cols) != len(fields):
        raise ValueError(f"a csv row of {len(cols)} columns where format.output.fields names {len(fields)} "
                         f"({','.join(fields)}): {line[:80]!r}")
    return dict(zip(fields, cols))


def decode_aiven(body: bytes, config: Mapping[str, str]) -> list[Any]:
    """The value of each record in an Aiven object; bytes where the value was encoded (base64)."""
    if "value" not in aiven_fields(config):
        raise ValueError("format.output.fields has no value: nothing to find the records by")
    encoded = config.get("format.output.fields.value.encoding", "base64").lower() == "base64"
    csv_out = config.get("format.output.type", "csv").lower() == "csv"
    out: list[Any] = []
    for row in aiven_records(body, config):
        v = row["value"]
        out.append(base64.b64decode(v) if csv_out and encoded else v.encode() if csv_out else v)
    return out


def aiven_records(body: bytes, config: Mapping[str, str]) -> list[dict[str, Any]]:
    """The rows of an Aiven object that hold a value: a null value (a tombstone) is written as
    an empty csv column or a JSON null, and holds no record to find."""
    return [row for row in aiven_rows(body, config) if row.get("value") not in (None, "")]


def decode_camel(body: bytes, config: Mapping[str, str]) -> list[Any]:
    return [body]


_STOREAS = re.compile(r"STOREAS\s+`?(\w+)`?", re.IGNORECASE)


def lenses_format(config: Mapping[str, str]) -> str:
    """The format Lenses' KCQL stores (STOREAS, upper case), JSON where it names none."""
    m = _STOREAS.search(config.get("connect.s3.kcql", ""))
    return m.group(1).upper() if m else "JSON"


def decode_lenses(body: bytes, config: Mapping[str, str]) -> list[Any]:
    """The values in a Lenses object: JSON one value a line (the value only, without
    'store.envelope'), or the rows of AVRO and PARQUET files."""
    fmt = lenses_format(config)
    if fmt == "PARQUET":
        import pyarrow.parquet as pq

        return pq.read_table(io.BytesIO(body)).to_pylist()
    if fmt == "AVRO":
        import fastavro

        return list(fastavro.reader(io.BytesIO(body)))
    return [v for v in (json.loads(line) for line in decompress(body).decode("utf-8").split("\n") if line.strip())
            if v is not None]


def lenses_key(prefix: str, topic: str, partition: int, last_offset: int, earliest_ts: int, latest_ts: int,
               extension: str) -> str:
    """Lenses' S3 sink 11.7.2 key for a file (CloudKeyNamer with OffsetFileNamer, LeftPad of 12):
    `<prefix>/<topic>/<partition>/<offset of the last record, 12 digits>_<earliest ts>_<latest ts>.<ext>`."""
    return f"{prefix}/{topic}/{partition}/{last_offset:012d}_{earliest_ts}_{latest_ts}.{extension}"


def decode_iceberg(body: bytes, config: Mapping[str, str]) -> list[Any]:
    """The rows of one of an Iceberg table's Parquet data files, each a dict of its columns."""
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(body)).to_pylist()


DECODERS: dict[str, Decoder] = {"jsonl": decode_jsonl, "aiven": decode_aiven, "camel": decode_camel,
                                "iceberg": decode_iceberg, "lenses": decode_lenses}

_AIVEN_DEFAULT_TEMPLATE = "{{topic}}-{{partition}}-{{start_offset}}"
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*(?::\s*(\w+)\s*=\s*(\w+)\s*)?\}\}")


def aiven_compression(config: Mapping[str, str]) -> str:
    """The compression Aiven's S3 sink writes with: `file.compression.type`, documented default gzip."""
    return config.get("file.compression.type", "gzip").strip().lower() or "gzip"


def aiven_key(config: Mapping[str, str], topic: str, partition: int, start_offset: int,
              key: str | None = None) -> str | None:
    """The key Aiven's S3 sink 3.4.2 gives a file of `topic`/`partition` starting at
    `start_offset` (and, for a `{{key}}` template, of the record key `key`, "null" for none),
    as documented and as S3SinkTask.newStreamFor does it: `file.name.template` as written, or
    the default template plus `.avro` for avro and the compression's extension (an explicit
    template gets no extension: FileNameFragment.getFilename); with `aws.s3.prefix` the legacy
    name `<prefix><topic>-<partition>-<20-digit offset>[.avro]<ext>`, the template ignored
    (S3SinkTask.oldFullKey). None when the template uses a variable the key cannot be predicted
    from (a timestamp)."""
    avro = ".avro" if config.get("format.output.type", "csv").lower() == "avro" else ""
    ext = _AIVEN_EXTENSIONS.get(aiven_compression(config), "")
    prefix = config.get("aws.s3.prefix")
    if prefix:
        return f"{prefix}{topic}-{partition}-{start_offset:020d}{avro}{ext}"
    template = config.get("file.name.template")
    if template is None:
        template = _AIVEN_DEFAULT_TEMPLATE + avro + ext
    values = {"topic": (topic, 0), "partition": (str(partition), 10), "start_offset": (str(start_offset), 20),
              "key": ("null" if key is None else key, 0)}

    def fill(m: re.Match[str]) -> str:
        name, padding = m.group(1), (m.group(2), m.group(3)) == ("padding", "true")
        if name not in values:
            raise KeyError(name)
        text, width = values[name]
        return text.zfill(width) if padding and width else text

    try:
        return _PLACEHOLDER.sub(fill, template)
    except KeyError:
        return None


def aiven_groups_by_key(config: Mapping[str, str]) -> bool:
    """Does the template group records by key (one object per key, each flush overwriting it)?"""
    return not config.get("aws.s3.prefix") and any(
        m.group(1) == "key" for m in _PLACEHOLDER.finditer(config.get("file.name.template", "")))
