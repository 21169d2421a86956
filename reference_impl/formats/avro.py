"""AvroFormat (R10.3): an Avro container file whose writer schema is the Connect schema of the
file's first record, converted as Confluent's AvroData does (connect.meta.data on)."""
from __future__ import annotations

import decimal
import io
from typing import Any

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Struct
from reference_impl.formats import DataError, FormatOptions

NAMESPACE = "io.confluent.connect.avro"
_PRIMS = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float32": "float",
          "float64": "double", "boolean": "boolean", "string": "string", "bytes": "bytes"}


def avro_schema(schema: Schema, names: dict[str, int] | None = None) -> Any:
    """Connect schema → Avro schema (AvroData.fromConnectSchema, simplified to what changes
    the data: optional → union with null, logical types, record names)."""
    names = {} if names is None else names
    if schema.name == DECIMAL:
        scale = int(schema.params.get("scale", "0"))
        prec = int(schema.params.get("connect.decimal.precision", "64"))
        t: Any = {"type": "bytes", "logicalType": "decimal", "precision": prec, "scale": scale}
    elif schema.name == TIMESTAMP:
        t = {"type": "long", "logicalType": "timestamp-millis"}
    elif schema.name == DATE:
        t = {"type": "int", "logicalType": "date"}
    elif schema.name == TIME:
        t = {"type": "int", "logicalType": "time-millis"}
    elif schema.type in _PRIMS:
        t = _PRIMS[schema.type]
        if schema.type in ("int8", "int16"):
            t = {"type": "int", "connect.type": schema.type}
    elif schema.type == "array":
        assert schema.items is not None
        t = {"type": "array", "items": avro_schema(schema.items, names)}
    elif schema.type == "map":
        assert schema.keys is not None and schema.values is not None
        if schema.keys.type == "string" and not schema.keys.optional:
            t = {"type": "map", "values": avro_schema(schema.values, names)}
        else:
            n = names.setdefault("MapEntry", 0)
            names["MapEntry"] = n + 1
            t = {"type": "array", "items": {
                "type": "record", "name": "MapEntry" + (str(n) if n else ""), "namespace": NAMESPACE,
                "fields": [{"name": "key", "type": avro_schema(schema.keys, names)},
                           {"name": "value", "type": avro_schema(schema.values, names)}]}}
    elif schema.type == "struct":
        full = schema.name or f"{NAMESPACE}.ConnectDefault"
        n = names.get(full, 0)
        names[full] = n + 1
        ns, _, short = full.rpartition(".")
        t = {"type": "record", "name": short + (str(n + 1) if n else ""), "fields": [
            {"name": f.name, "type": avro_schema(f.schema, names),
             **({"default": None} if f.schema.optional else {})} for f in schema.fields]}
        if ns:
            t["namespace"] = ns
    else:
        raise DataError(f"unsupported Connect type {schema.type}")
    if schema.optional:
        return ["null", t]
    return t


def _to_avro(value: Any, schema: Schema) -> Any:
    if value is None:
        return None
    if schema.name == DECIMAL:
        return decimal.Decimal(value)
    if isinstance(value, Struct):
        return {f.name: _to_avro(value.values[f.name], f.schema) for f in schema.fields}
    if schema.type == "array":
        return [_to_avro(v, schema.items) for v in value]  # type: ignore[arg-type]
    if schema.type == "map":
        if schema.keys.type == "string" and not schema.keys.optional:  # type: ignore[union-attr]
            return {k: _to_avro(v, schema.values) for k, v in value.items()}  # type: ignore[arg-type]
        return [{"key": _to_avro(k, schema.keys), "value": _to_avro(v, schema.values)} for k, v in value.items()]  # type: ignore[arg-type]
    return value


def _plain(v: Any) -> Any:
    """Decoded Avro values in one comparable shape (timestamps and dates as numbers)."""
    import datetime as dt

    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dt.datetime):
        return int(v.timestamp() * 1000)
    if isinstance(v, dt.date):
        return (v - dt.date(1970, 1, 1)).days
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return v


class AvroFormat:
    name = "avro"
    supports_compression = False

    def extension(self, opts: FormatOptions) -> str:
        return ".avro"  # whatever avro.codec is

    def check_writable(self, value: Any, schema: Schema | None, view: str) -> None:
        if schema is None and value is not None and not isinstance(value, (str, bytes, bool, int, float)):
            # Spec open question 4: AvroData with no Connect schema is unverified; the model
            # takes the writer's failure as a DataException rather than guess a schema.
            raise DataError("AvroFormat needs a Connect schema for structured values (schemaless JSON)")

    def _schema_for(self, value: Any, schema: Schema | None) -> Schema:
        if schema is not None:
            return schema
        # schemaless primitives: AvroData infers the primitive type, optional
        t = {str: "string", bytes: "bytes", bool: "boolean", int: "int64", float: "float64"}.get(type(value), "string")
        return Schema(t, optional=True)

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        import fastavro

        if opts.compression != "none":
            raise ValueError("s3.compression.type=gzip is not allowed with AvroFormat (R10.5)")
        if not items:
            return b""
        first_value, first_schema = items[0]
        schema = self._schema_for(first_value, first_schema)
        parsed = fastavro.parse_schema(avro_schema(schema))
        buf = io.BytesIO()
        codec = opts.avro_codec
        try:
            fastavro.writer(buf, parsed, [_to_avro(v, schema) for v, _ in items], codec=codec)
        except ValueError as e:
            raise ValueError(f"avro.codec={codec!r}: {e}") from None
        return buf.getvalue()

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        import fastavro

        if not data:
            return []
        return [_plain(r) for r in fastavro.reader(io.BytesIO(data))]


FORMAT = AvroFormat()
