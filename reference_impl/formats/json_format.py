"""JsonFormat (R10.1, E10): one JSON value per record, each followed by a line separator.

Structs are written as Kafka's JsonConverter with schemas.enable=false writes them: the
payload only, compact, fields in schema order; Timestamp as epoch ms, Date as days, Time as
ms of day, Decimal as base64 of the unscaled two's-complement bytes (or a number with
json.decimal.format=NUMERIC), bytes as base64. Other values as Jackson writes them."""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Struct
from reference_impl.formats import FormatOptions
from reference_impl.formats.compression import compress, decompress


def decimal_bytes(d: decimal.Decimal, scale: int) -> bytes:
    """Java BigInteger.toByteArray of the unscaled value: minimal two's complement."""
    unscaled = int(d.scaleb(scale).to_integral_value())
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True)


def to_json_value(value: Any, schema: Schema | None, decimal_format: str = "BASE64") -> Any:
    if value is None:
        return None
    if schema is not None:
        if schema.name == DECIMAL:
            scale = int(schema.params.get("scale", "0"))
            if decimal_format == "NUMERIC":
                return _JsonNumber(str(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale))))
            return base64.b64encode(decimal_bytes(decimal.Decimal(value), scale)).decode()
        if schema.name in (TIMESTAMP, TIME, DATE):
            if isinstance(value, dt.datetime):
                return int(value.timestamp() * 1000)
            return int(value)
        if schema.type == "struct" and isinstance(value, Struct):
            return {f.name: to_json_value(value.values[f.name], f.schema, decimal_format) for f in schema.fields}
        if schema.type == "array":
            return [to_json_value(v, schema.items, decimal_format) for v in value]
        if schema.type == "map":
            return {str(k): to_json_value(v, schema.values, decimal_format) for k, v in value.items()}
    if isinstance(value, Struct):
        return to_json_value(value, value.schema, decimal_format)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict):
        return {str(k): to_json_value(v, None, decimal_format) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v, None, decimal_format) for v in value]
    if isinstance(value, decimal.Decimal):
        return _JsonNumber(str(value))
    return value


class _JsonNumber(float):
    """A number written with its exact decimal spelling (NUMERIC decimals)."""

    def __new__(cls, text: str) -> "_JsonNumber":
        obj = super().__new__(cls, text)
        obj.text = text  # type: ignore[attr-defined]
        return obj

    def __repr__(self) -> str:
        return self.text  # type: ignore[attr-defined]


class _Encoder(json.JSONEncoder):
    def iterencode(self, o: Any, _one_shot: bool = False):  # type: ignore[override]
        return super().iterencode(o, _one_shot=False)


def _dumps(v: Any) -> str:
    # float.__repr__ is what json uses for floats; _JsonNumber overrides it with its text
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False, cls=_Encoder)


class JsonFormat:
    name = "json"
    supports_compression = True

    def extension(self, opts: FormatOptions) -> str:
        return ".json" + (".gz" if opts.compression == "gzip" else "")

    def check_writable(self, value: Any, schema: Schema | None, view: str) -> None:
        return None  # Jackson writes any value

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        lines = []
        for value, schema in items:
            if view == "headers":
                value = {"headers": value}  # R11.3: JSON headers are enveloped
                schema = None
            lines.append(_dumps(to_json_value(value, schema, opts.json_decimal_format)) + "\n")
        return compress("".join(lines).encode("utf-8"), opts)

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        text = decompress(data).decode("utf-8")
        # split on the separator only: str.splitlines would also cut at U+0085 and U+2028 inside strings
        return [json.loads(line, parse_float=decimal.Decimal) for line in text.split("\n") if line.strip()]


FORMAT = JsonFormat()
