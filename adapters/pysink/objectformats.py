"""The format one object of a data file is written in, as its bytes reach the multipart upload:
JSON and ByteArray lines (gzip-compressed or not, R10.1, R10.2), an Avro container file (R10.3)
or a Parquet file (R10.4).

Each object gets a fresh `ObjectFormat` when its file opens. A record goes in two steps, so the
objects of a file stay aligned (R11.4): `prepare` checks the record against what the object
already holds and returns what `add` appends (it changes nothing), `add` appends it and returns
the bytes ready for the upload; `close` returns the rest. `rebuild` gives the whole object for
some of its items (the faulty variants rewrite objects with it).

* Avro: the writer schema is the first record's (AvroRecordWriterProvider opens the file at
  its first write); every record is converted with it. Blocks reach the stream as
  DataFileWriter writes them (a 64000-byte sync interval), so a large file uploads its parts
  while it is open.
* Parquet: parquet-avro over the same Avro schema, keys in `RecordKey{key}` and headers in
  `RecordHeaders{headers}` (RecordViews with enveloped=true); parquet-mr buffers the file, so
  the bytes reach the stream when it closes. The footer carries the Avro schema as
  parquet-avro writes it (`parquet.avro.schema`, `writer.model.name=avro`).
"""
from __future__ import annotations

import datetime as dt
import decimal
import io
from dataclasses import dataclass
from typing import Any

from adapters.pysink.avrowrite import AvroWriteError, SchemaBuilder, datum, schema_text
from adapters.pysink.encoding import gzip_stream, schema_key

SYNC_INTERVAL = 64_000  # DataFileWriter's default (DataFileConstants.DEFAULT_SYNC_INTERVAL)
AVRO_CODECS = ("null", "deflate", "snappy", "bzip2")  # the connector's validator (AVRO_SUPPORTED_CODECS)
# parquet.codec → (the extension parquet-mr's CompressionCodecName gives, pyarrow's codec)
PARQUET_CODECS = {"none": ("", "NONE"), "uncompressed": ("", "NONE"), "snappy": (".snappy", "SNAPPY"),
                  "gzip": (".gz", "GZIP"), "zstd": (".zstd", "ZSTD")}

# the headers view (RecordViews.HeaderRecordView): an array of unnamed {key, value} string structs
HEADER_ITEM = {"type": "struct", "fields": [{"field": "key", "type": "string", "optional": False},
                                            {"field": "value", "type": "string", "optional": False}],
               "optional": False}
HEADERS_SCHEMA = {"type": "array", "items": HEADER_ITEM, "optional": False}


@dataclass(frozen=True)
class View:
    """One record's view as the view's writer receives it: its Connect schema in JsonConverter's
    shape (None: schemaless) and its payload."""

    schema: Any
    payload: Any


def headers_view(headers: list[tuple[str, str]]) -> View:
    return View(HEADERS_SCHEMA, [{"key": k, "value": v} for k, v in headers])


def enveloped(view: View, which: str) -> View:
    """RecordViews with enveloped=true (Parquet): keys in RecordKey{key}, headers in
    RecordHeaders{headers}; a null key schema cannot be a field (SchemaBuilderException)."""
    if which == "keys":
        if view.schema is None:
            raise AvroWriteError("DataException: ParquetFormat keys need a key schema: RecordKey{key} cannot have a "
                                 "field without a schema")
        field = {**view.schema, "field": "key"}
        return View({"type": "struct", "name": "RecordKey", "fields": [field], "optional": False}, {"key": view.payload})
    if which == "headers":
        return View({"type": "struct", "name": "RecordHeaders", "fields": [{**HEADERS_SCHEMA, "field": "headers"}],
                     "optional": False}, {"headers": view.payload})
    return view


class ObjectFormat:
    kind = "line"

    def prepare(self, item: Any) -> Any:
        return item

    def add(self, prepared: Any) -> bytes:
        raise NotImplementedError

    def close(self) -> bytes:
        raise NotImplementedError

    def rebuild(self, items: list[Any]) -> bytes:
        raise NotImplementedError


class Lines(ObjectFormat):
    """JsonFormat and ByteArrayFormat: each record's bytes as they are, through gzip where
    s3.compression.type=gzip (the stream is finished at commit)."""

    def __init__(self, gzip: bool, level: int):
        self.gzip, self.level = gzip, level
        self._gz: Any = None

    def add(self, prepared: bytes) -> bytes:
        if not self.gzip:
            return prepared
        if self._gz is None:
            self._gz = gzip_stream(self.level)
        return self._gz.compress(prepared)

    def close(self) -> bytes:
        if self._gz is None:
            return b""
        rest, self._gz = self._gz.flush(), None
        return rest

    def rebuild(self, items: list[bytes]) -> bytes:
        data = b"".join(items)
        if not self.gzip:
            return data
        c = gzip_stream(self.level)
        return c.compress(data) + c.flush()


def _same_shape(file_schema: Any, view_schema: Any) -> bool:
    """Whether AvroData converts a value of `view_schema` with the file's schema: a struct only
    with its own schema (`Mismatching struct schema`), any other type with its own type."""
    if file_schema is None or view_schema is None:
        return file_schema is None
    if file_schema.get("type") != view_schema.get("type") or file_schema.get("name") != view_schema.get("name"):
        return False
    t = file_schema.get("type")
    if t == "struct":
        return schema_key({**file_schema, "optional": False}) == schema_key({**view_schema, "optional": False})
    if t == "array":
        return _same_shape(file_schema.get("items"), view_schema.get("items"))
    if t == "map":
        return (_same_shape(file_schema.get("keys"), view_schema.get("keys"))
                and _same_shape(file_schema.get("values"), view_schema.get("values")))
    return True


class _AvroBased(ObjectFormat):
    """The first record's schema through AvroData; each record converted with it."""

    def __init__(self, meta: bool, enhanced: bool, optional_map_keys: bool):
        self.flags = (meta, enhanced, optional_map_keys)
        self.schema: Any = None  # the file's Connect schema (its first record's view schema)
        self.avro: Any = None  # and its Avro schema, once the file is open
        self.opened = False

    def prepare(self, item: View) -> tuple[Any, Any, Any]:
        """(Connect schema, Avro schema, datum) of the record, or AvroWriteError."""
        if self.opened:
            schema, avro = self.schema, self.avro
            if not _same_shape(schema, item.schema):
                what = "Mismatching struct schema" if (item.schema or {}).get("type") == "struct" else \
                    f"Invalid type for {str((schema or {}).get('type', 'schemaless')).upper()}"
                raise AvroWriteError(f"DataException: {what}: the file's schema is its first record's")
        else:
            schema, avro = item.schema, SchemaBuilder(*self.flags).build(item.schema)
        return schema, avro, datum(schema, item.payload)

    def _open(self, prepared: tuple[Any, Any, Any]) -> Any:
        if not self.opened:
            self.schema, self.avro, _ = prepared
            self.opened = True
        return prepared[2]


class Avro(_AvroBased):
    kind = "avro"

    def __init__(self, codec: str, meta: bool, enhanced: bool, optional_map_keys: bool):
        super().__init__(meta, enhanced, optional_map_keys)
        self.codec = codec
        self._out = io.BytesIO()
        self._writer: Any = None

    def _start(self, avro: Any) -> Any:
        import fastavro
        from fastavro.write import Writer

        return Writer(self._out, fastavro.parse_schema(avro), codec=self.codec, sync_interval=SYNC_INTERVAL)

    def add(self, prepared: tuple[Any, Any, Any]) -> bytes:
        value = self._open(prepared)
        if self._writer is None:
            self._writer = self._start(self.avro)
        self._writer.write(value)
        return self._drain()

    def close(self) -> bytes:
        if self._writer is not None:
            self._writer.flush()
        return self._drain()

    def _drain(self) -> bytes:
        data = self._out.getvalue()
        self._out.seek(0)
        self._out.truncate()
        return data

    def rebuild(self, items: list[tuple[Any, Any, Any]]) -> bytes:
        other = Avro(self.codec, *self.flags)
        return b"".join(other.add(p) for p in items) + other.close()


class Parquet(_AvroBased):
    kind = "parquet"

    def __init__(self, codec: str, which: str, meta: bool, enhanced: bool, optional_map_keys: bool):
        super().__init__(meta, enhanced, optional_map_keys)
        self.codec, self.which = codec, which
        self.rows: list[Any] = []

    def prepare(self, item: View) -> tuple[Any, Any, Any]:
        view = enveloped(item, self.which)
        if view.schema is None or view.schema.get("type") != "struct":
            raise AvroWriteError("DataException: ParquetFormat needs a Struct with a struct schema "
                                 f"(the {self.which} view is {'schemaless' if view.schema is None else view.schema.get('type')})")
        schema, avro, value = super().prepare(view)
        if not (schema.get("fields") or []):
            raise AvroWriteError("InvalidSchemaException: Cannot write a schema with an empty group")
        return schema, avro, value

    def add(self, prepared: tuple[Any, Any, Any]) -> bytes:
        self.rows.append(self._open(prepared))
        return b""

    def close(self) -> bytes:
        rows, self.rows = self.rows, []
        return parquet_bytes(self.avro, rows, self.codec) if self.opened else b""

    def rebuild(self, items: list[tuple[Any, Any, Any]]) -> bytes:
        return parquet_bytes(items[0][1], [p[2] for p in items], self.codec) if items else b""


# --- parquet-avro: the Avro schema as Parquet columns ---------------------------------------------

class _Named:
    """The named types (records, enums, fixed) met so far, by full name, for references."""

    def __init__(self) -> None:
        self.types: dict[str, Any] = {}

    def resolve(self, avro: Any, ns: str | None) -> Any:
        if isinstance(avro, str) and avro not in _PRIMITIVES:
            if "." not in avro and ns and f"{ns}.{avro}" in self.types:
                return self.types[f"{ns}.{avro}"]
            return self.types.get(avro, avro)
        if isinstance(avro, dict) and avro.get("type") in ("record", "enum", "fixed"):
            name, space = avro["name"], avro.get("namespace", ns)
            self.types[name if "." in name or not space else f"{space}.{name}"] = avro
        return avro


_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def _arrow(avro: Any, named: _Named, ns: str | None) -> tuple[Any, bool]:
    """(pyarrow type, nullable) of an Avro type as parquet-avro's AvroSchemaConverter writes it."""
    import pyarrow as pa

    avro = named.resolve(avro, ns)
    if isinstance(avro, list):
        members = [m for m in avro if m != "null"]
        if len(members) == 1:
            return _arrow(members[0], named, ns)[0], True
        return pa.struct([pa.field(f"member{i}", _arrow(m, named, ns)[0], nullable=True)
                          for i, m in enumerate(members)]), "null" in avro
    t = avro if isinstance(avro, str) else avro.get("type")
    logical = avro.get("logicalType") if isinstance(avro, dict) else None
    if isinstance(t, (dict, list)):
        return _arrow(t, named, ns)
    if t in ("bytes", "fixed") and logical == "decimal":
        p, s = int(avro.get("precision", 64)), int(avro.get("scale", 0))
        return (pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s)), False
    if t == "int":
        return {"date": pa.date32(), "time-millis": pa.time32("ms")}.get(logical, pa.int32()), False
    if t == "long":
        return (pa.timestamp("ms", tz="UTC") if logical == "timestamp-millis" else pa.int64()), False
    simple = {"boolean": pa.bool_(), "float": pa.float32(), "double": pa.float64(), "bytes": pa.binary(),
              "string": pa.string(), "enum": pa.string()}
    if t in simple:
        return simple[t], False
    if t == "fixed":
        return pa.binary(int(avro["size"])), False
    if t == "array":
        item, nullable = _arrow(avro["items"], named, ns)
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if t == "map":
        value, nullable = _arrow(avro["values"], named, ns)
        return pa.map_(pa.string(), pa.field("value", value, nullable=nullable)), False
    if t == "record":
        space = avro.get("namespace", ns)
        fields = []
        for f in avro["fields"]:
            ft, nullable = _arrow(f["type"], named, space)
            fields.append(pa.field(f["name"], ft, nullable=nullable))
        return pa.struct(fields), False
    raise AvroWriteError(f"DataException: Parquet cannot write the Avro type {t}")


def _row(avro: Any, v: Any, named: _Named, ns: str | None) -> Any:
    """An Avro datum as pyarrow takes it for _arrow's type."""
    if v is None:
        return None
    avro = named.resolve(avro, ns)
    if isinstance(avro, list):
        members = [m for m in avro if m != "null"]
        if len(members) == 1:
            return _row(members[0], v, named, ns)
        return _union_row(members, v, named, ns)
    t = avro if isinstance(avro, str) else avro.get("type")
    logical = avro.get("logicalType") if isinstance(avro, dict) else None
    if isinstance(t, (dict, list)):
        return _row(t, v, named, ns)
    if logical == "decimal":
        return decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-int(avro.get("scale", 0)))
    if logical == "date":
        return dt.date(1970, 1, 1) + dt.timedelta(days=v)
    if logical == "time-millis":
        return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=v)).time()
    if t == "array":
        return [_row(avro["items"], x, named, ns) for x in v]
    if t == "map":
        return [(k, _row(avro["values"], x, named, ns)) for k, x in v.items()]
    if t == "record":
        space = avro.get("namespace", ns)
        return {f["name"]: _row(f["type"], v.get(f["name"]), named, space) for f in avro["fields"]}
    return v


def _union_row(members: list[Any], v: Any, named: _Named, ns: str | None) -> dict[str, Any]:
    import fastavro

    out: dict[str, Any] = {f"member{i}": None for i in range(len(members))}
    for i, m in enumerate(members):
        try:
            if fastavro.validate(v, fastavro.parse_schema(named.resolve(m, ns)), raise_errors=False):
                out[f"member{i}"] = _row(m, v, named, ns)
                return out
        except Exception:  # noqa: BLE001 - a member that does not parse alone is not the branch
            continue
    return out


def parquet_bytes(avro: Any, rows: list[Any], codec: str) -> bytes:
    """A Parquet file of `rows` (Avro data of the record schema `avro`), compressed with `codec`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    named = _Named()
    record, _ = _arrow(avro, named, None)
    schema = pa.schema(list(record), metadata={"parquet.avro.schema": schema_text(avro), "writer.model.name": "avro"})
    named_rows = _Named()
    _arrow(avro, named_rows, None)  # the same named types for the rows
    table = pa.Table.from_pylist([_row(avro, r, named_rows, None) for r in rows], schema=schema)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression=PARQUET_CODECS[codec][1])
    return buf.getvalue()
