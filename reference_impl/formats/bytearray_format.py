"""ByteArrayFormat (R10.2): the raw bytes, each followed by `format.bytearray.separator`
(also after the last record); gzip allowed.

The value goes through ByteArrayConverter: a schema other than null/BYTES, or a value that
is not bytes, is a DataException. Separators inside a payload are not escaped, so `decode`
(which splits on the separator) cannot give such payloads back as they were: a record
`b"a\nb"` with the default separator decodes as two records `b"a"`, `b"b"`. That is the
connector's own limitation; compare such objects by their raw bytes instead.
An empty separator makes `decode` return the whole payload as one item."""
from __future__ import annotations

from typing import Any

from reference_impl.connect_data import Schema
from reference_impl.formats import DataError, FormatOptions
from reference_impl.formats.compression import compress, decompress


class ByteArrayFormat:
    name = "bytearray"
    supports_compression = True

    def extension(self, opts: FormatOptions) -> str:
        return opts.bytearray_extension + (".gz" if opts.compression == "gzip" else "")

    def check_writable(self, value: Any, schema: Schema | None, view: str,
                       opts: FormatOptions | None = None) -> None:
        if value is None:
            return
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataError(f"ByteArrayFormat needs byte[] values, got {type(value).__name__}")
        if schema is not None and schema.type != "bytes":
            raise DataError(f"ByteArrayFormat needs a null or BYTES schema, got {schema.type}")

    def check_append(self, records_in_file: int, value: Any, schema: Schema | None, view: str,
                     opts: FormatOptions | None = None) -> None:
        return None

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        out = bytearray()
        for value, schema in items:
            self.check_writable(value, schema, view)
            out += bytes(value or b"") + opts.bytearray_separator
        return compress(bytes(out), opts)

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        raw = decompress(data)
        sep = opts.bytearray_separator
        if not sep:
            return [raw] if raw else []
        parts = raw.split(sep)
        if parts and parts[-1] == b"":
            parts.pop()  # the separator after the last record
        return parts


FORMAT = ByteArrayFormat()
