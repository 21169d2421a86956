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
    """What the connector's writer raises as a DataException (or another exception the task
    sends to the DLQ, R13: Avro SchemaParseException) for one record."""


class WriterFailure(Exception):
    """What the connector's writer raises as something other than a DataException (an
    IOException turned ConnectException, an AvroRuntimeException): not DLQ-able, the task
    dies even with errors.tolerance=all. Raised where the model knows the real writer
    fails this way (JSON: a Struct nested in a non-Struct value; Avro: a second schemaless
    record in one file)."""


@dataclass(frozen=True)
class FormatOptions:
    compression: str = "none"  # s3.compression.type: none|gzip
    compression_level: int = -1  # s3.compression.level
    avro_codec: str = "null"  # null|deflate|snappy|bzip2
    parquet_codec: str = "snappy"
    json_decimal_format: str = "BASE64"  # BASE64|NUMERIC
    bytearray_separator: bytes = b"\n"
    bytearray_extension: str = ".bin"
    # AvroData names unnamed structs ConnectDefault, ConnectDefault2, … (VersionProfile)
    avro_default_names_indexed: bool = True
    # AvroRecordWriterProvider opens its DataFileWriter once per file, whatever the schema (#801)
    avro_writer_opens_once: bool = True


class Format(Protocol):
    name: str  # "json" | "bytearray" | "avro" | "parquet"
    supports_compression: bool  # R10.5: only json and bytearray

    def extension(self, opts: FormatOptions) -> str: ...
    def check_writable(self, value: Any, schema: Schema | None, view: str,
                       opts: FormatOptions | None = None) -> None: ...
    # Raise WriterFailure where appending this record to a file that already holds
    # `records_in_file` records kills the writer (only Avro with schemaless records does, before #801).
    def check_append(self, records_in_file: int, value: Any, schema: Schema | None, view: str,
                     opts: FormatOptions | None = None) -> None: ...
    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes: ...
    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]: ...


# RecordViews.HeaderRecordView: SINGLE_HEADER_SCHEMA is an unnamed struct with two
# *required* strings, so a header whose value is null (Values.convertToString(null) = null)
# fails Struct.put with a DataException (answers spec open question 11; read, not run).
SINGLE_HEADER_SCHEMA = Schema("struct", fields=(Field("key", Schema("string")), Field("value", Schema("string"))))
HEADER_SCHEMA = Schema("array", items=SINGLE_HEADER_SCHEMA)
RECORD_HEADERS_SCHEMA = Schema("struct", name="RecordHeaders", fields=(Field("headers", HEADER_SCHEMA),))


def check_headers(value: Any) -> None:
    """DataError where building the headers view fails (a null header value)."""
    for h in value or ():
        if h.get("value") is None:
            raise DataError(f"header {h.get('key')!r} has a null value: RecordHeaders' value field is a required string")


def headers_struct(value: Any, schema: Schema = HEADER_SCHEMA) -> tuple[Any, Schema]:
    """The enveloped headers view (JSON and Parquet): Struct RecordHeaders{headers: [...]}."""
    from reference_impl.connect_data import Struct

    check_headers(value)
    items = [h if isinstance(h, Struct) else Struct(SINGLE_HEADER_SCHEMA, h) for h in value or ()]
    outer = Schema("struct", name="RecordHeaders", fields=(Field("headers", schema),))
    return Struct(outer, {"headers": items}), outer


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
    """"gzip" when the bytes start with the gzip magic, else "none"."""
    return "gzip" if data[:2] == b"\x1f\x8b" else "none"


_CLASSES = {
    "JsonFormat": "json",
    "ByteArrayFormat": "bytearray",
    "AvroFormat": "avro",
    "ParquetFormat": "parquet",
}


def format_for(format_class: str) -> Format:
    """The format of a `format.class`: the connector's full class name
    (io.confluent.connect.s3.format.json.JsonFormat, ...bytearray.ByteArrayFormat,
    ...avro.AvroFormat, ...parquet.ParquetFormat) or the short name. Like
    reference_impl.config's validation, any `<package>.JsonFormat` is taken as JsonFormat."""
    short = (format_class or "").strip().rsplit(".", 1)[-1]
    name = _CLASSES.get(short)
    if name is None:
        raise ValueError(f"unknown format class {format_class!r}; known: {', '.join(sorted(_CLASSES))}")
    from reference_impl.formats import avro, bytearray_format, json_format, parquet

    return {"json": json_format.FORMAT, "bytearray": bytearray_format.FORMAT,
            "avro": avro.FORMAT, "parquet": parquet.FORMAT}[name]
