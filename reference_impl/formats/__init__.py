"""Object formats (R10, R11.3, R5.3): encode what a committed file must hold, decode what a
real connector wrote. The model builds expected contents with `encode`; the checkers decode
real S3 objects with `decode`; comparing `decode(a) == decode(b)` is the semantic equality
of two objects (map key order, number spelling and codec choices do not matter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from reference_impl.connect_data import Field, Schema, SinkRecord

VIEWS = ("value", "keys", "headers")


class DataError(Exception):
    """What the connector's writer raises as a DataException for one record."""


@dataclass(frozen=True)
class FormatOptions:
    compression: str = "none"  # s3.compression.type: none|gzip
    compression_level: int = -1  # s3.compression.level
    avro_codec: str = "null"  # null|deflate|snappy|bzip2
    parquet_codec: str = "snappy"
    json_decimal_format: str = "BASE64"  # BASE64|NUMERIC
    bytearray_separator: bytes = b"\n"
    bytearray_extension: str = ".bin"


class Format(Protocol):
    name: str
    supports_compression: bool

    def extension(self, opts: FormatOptions) -> str: ...
    def check_writable(self, value: Any, schema: Schema | None, view: str) -> None: ...
    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes: ...
    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]: ...


HEADER_SCHEMA = Schema(
    "array",
    items=Schema("struct", fields=(Field("key", Schema("string")), Field("value", Schema("string", optional=True)))),
)


def view_of(record: SinkRecord, view: str) -> tuple[Any, Schema | None]:
    """The value a view's writer receives: the value, the key, or the headers as a list of
    {key, value} strings (R11.3)."""
    if view == "value":
        return record.value, record.value_schema
    if view == "keys":
        return record.key, record.key_schema
    if view == "headers":
        return [{"key": k, "value": v} for k, v in (record.headers or ())], HEADER_SCHEMA
    raise ValueError(f"unknown view {view!r}; one of {VIEWS}")


def detect_compression(data: bytes) -> str:
    return "gzip" if data[:2] == b"\x1f\x8b" else "none"


_CLASSES = {
    "JsonFormat": "json",
    "ByteArrayFormat": "bytearray",
    "AvroFormat": "avro",
    "ParquetFormat": "parquet",
}


def format_for(format_class: str) -> Format:
    """The format of a `format.class` (full class name or short name)."""
    short = (format_class or "").strip().rsplit(".", 1)[-1]
    name = _CLASSES.get(short)
    if name is None:
        raise ValueError(f"unknown format class {format_class!r}; known: {', '.join(sorted(_CLASSES))}")
    from reference_impl.formats import avro, bytearray_format, json_format, parquet

    return {"json": json_format.FORMAT, "bytearray": bytearray_format.FORMAT,
            "avro": avro.FORMAT, "parquet": parquet.FORMAT}[name]
