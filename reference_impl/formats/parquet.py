"""ParquetFormat (R10.4): needs Struct values; keys and headers are wrapped in a struct
(`RecordKey{key}`, `RecordHeaders{headers}`)."""
from __future__ import annotations

import decimal
import io
from typing import Any

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Field, Schema, Struct
from reference_impl.formats import DataError, FormatOptions

# parquet-mr's codec extensions; only snappy, gzip and none are confirmed (spec open question 7)
_EXT = {"snappy": ".snappy", "gzip": ".gz", "none": "", "uncompressed": "", "lz4": ".lz4", "zstd": ".zstd",
        "brotli": ".br", "lzo": ".lzo"}


def _arrow_type(schema: Schema):
    import pyarrow as pa

    if schema.name == DECIMAL:
        return pa.decimal128(38, int(schema.params.get("scale", "0")))
    if schema.name == TIMESTAMP:
        return pa.int64()
    if schema.name in (DATE, TIME):
        return pa.int32()
    t = schema.type
    simple = {"int8": pa.int8(), "int16": pa.int16(), "int32": pa.int32(), "int64": pa.int64(),
              "float32": pa.float32(), "float64": pa.float64(), "boolean": pa.bool_(),
              "string": pa.string(), "bytes": pa.binary()}
    if t in simple:
        return simple[t]
    if t == "array":
        return pa.list_(_arrow_type(schema.items))  # type: ignore[arg-type]
    if t == "map":
        return pa.map_(_arrow_type(schema.keys), _arrow_type(schema.values))  # type: ignore[arg-type]
    if t == "struct":
        return pa.struct([pa.field(f.name, _arrow_type(f.schema), nullable=f.schema.optional) for f in schema.fields])
    raise DataError(f"unsupported Connect type {t}")


def _py(value: Any, schema: Schema) -> Any:
    if value is None:
        return None
    if isinstance(value, Struct):
        return {f.name: _py(value.values[f.name], f.schema) for f in schema.fields}
    if schema.type == "array":
        return [_py(v, schema.items) for v in value]  # type: ignore[arg-type]
    if schema.type == "map":
        return list((k, _py(v, schema.values)) for k, v in value.items())  # type: ignore[arg-type]
    if schema.name == DECIMAL:
        return decimal.Decimal(value)
    return value


def _wrap(value: Any, schema: Schema | None, view: str) -> tuple[Any, Schema]:
    if view == "keys":
        inner = schema or Schema("string", optional=True)
        s = Schema("struct", name="RecordKey", fields=(Field("key", inner),))
        return Struct(s, {"key": value}), s
    if view == "headers":
        assert schema is not None
        s = Schema("struct", name="RecordHeaders", fields=(Field("headers", schema),))
        return Struct(s, {"headers": value}), s
    if schema is None or schema.type != "struct":
        raise DataError("ParquetFormat needs values with a struct schema")
    return value, schema


class ParquetFormat:
    name = "parquet"
    supports_compression = False

    def extension(self, opts: FormatOptions) -> str:
        return _EXT.get(opts.parquet_codec, "." + opts.parquet_codec) + ".parquet"

    def check_writable(self, value: Any, schema: Schema | None, view: str) -> None:
        if value is None and view == "value":
            return
        _wrap(value, schema, view)

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if opts.compression != "none":
            raise ValueError("s3.compression.type=gzip is not allowed with ParquetFormat (R10.5)")
        if not items:
            return b""
        wrapped = [_wrap(v, s, view) for v, s in items]
        schema = wrapped[0][1]
        arrow_schema = pa.schema([pa.field(f.name, _arrow_type(f.schema), nullable=f.schema.optional)
                                  for f in schema.fields])
        rows = [_py(v, schema) for v, _ in wrapped]
        table = pa.Table.from_pylist(rows, schema=arrow_schema)
        buf = io.BytesIO()
        codec = {"none": "NONE", "uncompressed": "NONE"}.get(opts.parquet_codec, opts.parquet_codec.upper())
        pq.write_table(table, buf, compression=codec)
        return buf.getvalue()

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        import pyarrow.parquet as pq

        if not data:
            return []
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
        return [_plain(r) for r in rows]


def _plain(v: Any) -> Any:
    import datetime as dt

    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [tuple(_plain(x) for x in e) if isinstance(e, tuple) else _plain(e) for e in v]
    if isinstance(v, dt.datetime):
        return int(v.timestamp() * 1000)
    return v


FORMAT = ParquetFormat()
