"""JsonFormat (R10.1, R11.3, E10): one JSON value per record, each followed by `\\n` (the
JVM line separator on Linux), including the last record.

The connector's writer (`JsonRecordWriterProvider.write`) has two paths, and so does this
module:

* **Struct values** (and the enveloped headers view, which is a Struct `RecordHeaders`) go
  through Kafka's JsonConverter with `schemas.enable=false`: the payload only, fields in
  schema order; null fields take the schema default (a required field with neither →
  DataException); Timestamp → epoch ms, Date → days, Time → ms of day; Decimal → base64 of
  the unscaled value's minimal two's complement (Java `BigInteger.toByteArray`) or, with
  `json.decimal.format=NUMERIC`, a JSON number spelled as `BigDecimal.toString`; bytes →
  base64; maps with STRING keys → object, other maps → array of `[key, value]` pairs.
* **Every other value** goes through a plain Jackson `ObjectMapper.writeObject`: the Java
  object as Jackson writes it. That differs from JsonConverter in a few places, which the
  model follows (inference from reading the code; not run against a connector):
  a top-level Decimal is a JSON number whatever `json.decimal.format` says; a top-level
  Date (a `java.util.Date` at midnight) is written as epoch *milliseconds*, not days; map
  keys are `toString()`ed; and a Struct nested inside a non-Struct value (e.g. an array of
  structs) makes Jackson fail (no bean properties), which is an IOException → ConnectException:
  the task dies. `check_writable` raises `WriterFailure` for that.

Text is written as Jackson writes it: compact, UTF-8 unescaped, `"` and `\\` escaped, control
characters as `\\b \\t \\n \\f \\r` or `\\u00XX` (upper-case hex); doubles as Java's
`Double.toString` (e.g. `1.0E10`), floats (float32) as `Float.toString`; NaN/±Infinity as
the strings "NaN"/"Infinity"/"-Infinity" (Jackson's default WRITE_NAN_AS_STRINGS).

`decode` parses each line with floats as `decimal.Decimal`, so two objects compare equal when
they hold the same JSON values whatever the number spelling or object key order.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math
import re
import struct as _struct
from typing import Any

from reference_impl.connect_data import DATE, DECIMAL, TIME, TIMESTAMP, Schema, Struct
from reference_impl.formats import DataError, FormatOptions, WriterFailure
from reference_impl.formats.compression import compress, decompress

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_MS = dt.timedelta(milliseconds=1)
_DAY_MS = 86_400_000


# --- numbers and logical values ---------------------------------------------------------------

def decimal_bytes(d: decimal.Decimal, scale: int) -> bytes:
    """Java BigInteger.toByteArray of the unscaled value: minimal two's complement, big-endian."""
    unscaled = int(decimal.Decimal(d).scaleb(scale).to_integral_value(rounding=decimal.ROUND_HALF_UP))
    # BigInteger.bitLength excludes the sign bit: -2^63 takes 63 bits and 8 bytes (Python's
    # bit_length of a negative number is its magnitude's, 64)
    length = (unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()) // 8 + 1
    return unscaled.to_bytes(length, "big", signed=True)


def _scaled(d: Any, scale: int) -> decimal.Decimal:
    """The BigDecimal Connect holds, at the schema's scale. `Decimal.fromLogical` (JsonConverter
    and AvroData alike) throws a DataException for a BigDecimal of another scale: JsonConverter
    reads a NUMERIC payload as written (`12.3` has scale 1), so such a record is refused by the
    writer. A float, which no converter produces, is taken at the schema's scale."""
    if isinstance(d, decimal.Decimal) and d.is_finite() and -d.as_tuple().exponent != scale:
        raise DataError(f"BigDecimal has mismatching scale value for given Decimal schema "
                        f"({d} has scale {-d.as_tuple().exponent}, the schema {scale})")
    d = decimal.Decimal(d)
    with decimal.localcontext() as ctx:
        ctx.prec = max(60, len(d.as_tuple().digits) + abs(scale) + 2)
        return d.quantize(decimal.Decimal(1).scaleb(-scale))


def logical_int(value: Any, name: str) -> int:
    """Timestamp → epoch ms, Date → days, Time → ms of day (ints pass through)."""
    if isinstance(value, bool):
        raise DataError(f"{name}: a boolean is not a {name.rsplit('.', 1)[-1]}")
    if isinstance(value, int):
        return value
    if isinstance(value, dt.datetime):
        v = value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
        ms = (v - _EPOCH) // _MS
        if name == DATE:
            return ms // _DAY_MS
        if name == TIME:
            return ms % _DAY_MS
        return ms
    if isinstance(value, dt.date):
        days = (value - dt.date(1970, 1, 1)).days
        return days if name == DATE else days * _DAY_MS
    if isinstance(value, dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    raise DataError(f"{name}: unsupported value {value!r}")


def to_float32(x: float) -> float:
    """x rounded to the nearest IEEE float32 (±inf beyond its range), as Java's (float) cast."""
    try:
        return _struct.unpack("<f", _struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _shortest_float32(x: float) -> str:
    """repr-like shortest digits that round-trip through an IEEE float32."""
    target = to_float32(x)
    for p in range(1, 10):
        s = f"{target:.{p}g}"
        if to_float32(float(s)) == target:
            return s
    return repr(target)


def java_float_text(x: float, float32: bool = False) -> str:
    """Java's Double.toString / Float.toString (shortest digits, JDK 19+): plain for
    1e-3 <= |x| < 1e7 with at least one fraction digit, else `d.dddE±n` without a '+'."""
    if float32:
        x = to_float32(x)
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    text = _shortest_float32(x) if float32 else repr(float(x))
    sign, digits, exp = decimal.Decimal(text).normalize().as_tuple()
    ds = "".join(map(str, digits)) or "0"
    e = exp + len(ds) - 1  # scientific exponent
    neg = "-" if sign else ""
    if -3 <= e < 7:
        if e >= 0:
            whole = ds[: e + 1].ljust(e + 1, "0")
            frac = ds[e + 1:] or "0"
        else:
            whole, frac = "0", "0" * (-e - 1) + ds
        return f"{neg}{whole}.{frac}"
    return f"{neg}{ds[0]}.{ds[1:] or '0'}E{e}"


class _Raw:
    """A JSON token written verbatim (numbers spelled the Java way)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _number(x: float, float32: bool, raw: bool) -> Any:
    if float32:
        x = to_float32(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if not raw:
        return x
    return _Raw(java_float_text(x, float32))


def _decimal_number(d: decimal.Decimal, raw: bool) -> Any:
    # BigDecimal.toString and Python's str(Decimal) agree (scientific below 1E-6 or for
    # negative scales, "E+n" with a sign). Unverified: whether JsonConverter's NUMERIC path
    # writes BigDecimal plain (WRITE_BIGDECIMAL_AS_PLAIN); the default is off.
    return _Raw(str(d)) if raw else d


def _b64(b: bytes) -> str:
    return base64.b64encode(bytes(b)).decode("ascii")


# --- JsonConverter (Struct path) ---------------------------------------------------------------

def _converter(value: Any, schema: Schema, fmt: str, raw: bool, where: str) -> Any:
    """JsonConverter.convertToJson with schemas.enable=false."""
    if value is None:
        if schema.default is not None:
            value = schema.default
        elif schema.optional:
            return None
        else:
            raise DataError(f"{where}: null value for a required {schema.type} with no default")
    name = schema.name
    if name == DECIMAL:
        scale = int(schema.params.get("scale", "0"))
        if not isinstance(value, (decimal.Decimal, int)) or isinstance(value, bool):
            raise DataError(f"{where}: a Decimal needs a decimal value, got {type(value).__name__}")
        d = _scaled(value, scale)
        if fmt == "NUMERIC":
            return _decimal_number(d, raw)
        return _b64(decimal_bytes(d, scale))
    if name in (TIMESTAMP, DATE, TIME):
        return logical_int(value, name)
    t = schema.type
    if t in ("int8", "int16", "int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataError(f"{where}: {t} needs an integer, got {type(value).__name__}")
        return value
    if t in ("float32", "float64"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise DataError(f"{where}: {t} needs a number, got {type(value).__name__}")
        return _number(float(value), t == "float32", raw)
    if t == "boolean":
        if not isinstance(value, bool):
            raise DataError(f"{where}: boolean needs a bool")
        return value
    if t == "string":
        if not isinstance(value, str):
            raise DataError(f"{where}: string needs a str, got {type(value).__name__}")
        return value
    if t == "bytes":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataError(f"{where}: bytes needs bytes, got {type(value).__name__}")
        return _b64(bytes(value))
    if t == "array":
        assert schema.items is not None
        if not isinstance(value, (list, tuple)):
            raise DataError(f"{where}: array needs a list")
        return [_converter(v, schema.items, fmt, raw, f"{where}[{i}]") for i, v in enumerate(value)]
    if t == "map":
        assert schema.keys is not None and schema.values is not None
        if not isinstance(value, dict):
            raise DataError(f"{where}: map needs a dict")
        if schema.keys.type == "string":
            return {str(_converter(k, schema.keys, fmt, False, where)): _converter(v, schema.values, fmt, raw, f"{where}.{k}")
                    for k, v in value.items()}
        return [[_converter(k, schema.keys, fmt, raw, where), _converter(v, schema.values, fmt, raw, where)]
                for k, v in value.items()]
    if t == "struct":
        if not isinstance(value, Struct):
            raise DataError(f"{where}: struct needs a Struct")
        if value.schema != schema:
            raise DataError(f"{where}: mismatching schema")
        return {f.name: _converter(value.values[f.name], f.schema, fmt, raw, f"{where}.{f.name}") for f in schema.fields}
    raise DataError(f"{where}: unsupported type {t}")


# --- Jackson ObjectMapper (every other value) -------------------------------------------------

def _java_key(k: Any) -> str:
    if k is None:
        raise WriterFailure("Jackson cannot write a null map key (JsonMappingException → ConnectException)")
    if isinstance(k, bool):
        return "true" if k else "false"
    if isinstance(k, float):
        return java_float_text(k)
    if isinstance(k, (bytes, bytearray)):
        raise WriterFailure("Jackson has no key serializer for byte[] map keys")
    return str(k)


def _jackson(value: Any, schema: Schema | None, raw: bool, where: str) -> Any:
    """ObjectMapper.writeObject of the Java object Connect holds for this value."""
    if value is None:
        return None
    if isinstance(value, Struct):
        raise WriterFailure(f"{where}: Jackson cannot serialize a Struct nested in a non-Struct value "
                            "(InvalidDefinitionException → ConnectException: the task dies)")
    name = schema.name if schema is not None else None
    if name == DECIMAL or isinstance(value, decimal.Decimal):
        d = decimal.Decimal(value)
        if schema is not None and name == DECIMAL:
            d = _scaled(d, int(schema.params.get("scale", "0")))
        return _decimal_number(d, raw)
    if name in (TIMESTAMP, DATE, TIME):
        # the Java value is a java.util.Date; Jackson writes its epoch milliseconds
        n = logical_int(value, name)
        return n * _DAY_MS if name == DATE else n
    if isinstance(value, bool) or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return _number(value, schema is not None and schema.type == "float32", raw)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _b64(bytes(value))
    if isinstance(value, (list, tuple)):
        items = schema.items if schema is not None and schema.type == "array" else None
        return [_jackson(v, items, raw, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        vals = schema.values if schema is not None and schema.type == "map" else None
        return {_java_key(k): _jackson(v, vals, raw, f"{where}.{k}") for k, v in value.items()}
    raise WriterFailure(f"{where}: Jackson has no serializer for {type(value).__name__}")


def to_json_value(value: Any, schema: Schema | None, decimal_format: str = "BASE64") -> Any:
    """The JSON value (plain Python: dict/list/str/int/float/Decimal/bool/None) the connector
    writes for one record's view value."""
    return _tree(value, schema, decimal_format, raw=False)


def _tree(value: Any, schema: Schema | None, fmt: str, raw: bool) -> Any:
    if isinstance(value, Struct):
        return _converter(value, schema if schema is not None else value.schema, fmt, raw, "value")
    return _jackson(value, schema, raw, "value")


# --- text -------------------------------------------------------------------------------------

_SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


# Jackson's UTF8JsonGenerator escapes each half of a surrogate pair (a character outside the
# BMP) as \\uXXXX (jackson-core #223; COMBINE_UNICODE_SURROGATES_IN_UTF8 is off by default):
# 12.1.9 writes U+1D11E as \\uD834\\uDD1E in values, keys and headers alike
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\U00010000-\U0010ffff]')


def _escape(m: "re.Match[str]") -> str:
    ch = m.group(0)
    if ord(ch) > 0xFFFF:
        hi, lo = divmod(ord(ch) - 0x10000, 0x400)
        return f"\\u{0xD800 + hi:04X}\\u{0xDC00 + lo:04X}"
    return _SHORT.get(ch) or f"\\u{ord(ch):04X}"


def _string(s: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, s) + '"'


def dumps(v: Any) -> str:
    """Compact JSON text as Jackson writes it."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, _Raw):
        return v.text
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return dumps(_number(v, False, True))
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, str):
        return _string(v)
    if isinstance(v, dict):
        return "{" + ",".join(_string(str(k)) + ":" + dumps(x) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(dumps(x) for x in v) + "]"
    raise TypeError(f"not JSON: {type(v).__name__}")


class JsonFormat:
    name = "json"
    supports_compression = True

    def extension(self, opts: FormatOptions) -> str:
        return ".json" + (".gz" if opts.compression == "gzip" else "")

    @staticmethod
    def _view_value(value: Any, schema: Schema | None, view: str) -> tuple[Any, Schema | None]:
        if view == "headers":
            # R11.3: the headers view is enveloped for JSON: Struct RecordHeaders{headers}
            from reference_impl.formats import HEADER_SCHEMA, headers_struct

            return headers_struct(value, schema or HEADER_SCHEMA)
        return value, schema

    def check_append(self, records_in_file: int, value: Any, schema: Schema | None, view: str,
                     opts: FormatOptions | None = None) -> None:
        return None  # each line stands alone: appending never fails where the first write did not

    def check_writable(self, value: Any, schema: Schema | None, view: str,
                       opts: FormatOptions | None = None) -> None:
        if view == "headers":
            from reference_impl.formats import check_headers

            check_headers(value)
        v, s = self._view_value(value, schema, view)
        _tree(v, s, "BASE64", raw=False)

    def line(self, value: Any, schema: Schema | None, opts: FormatOptions, view: str = "value") -> str:
        v, s = self._view_value(value, schema, view)
        return dumps(_tree(v, s, opts.json_decimal_format, raw=True)) + "\n"

    def encode(self, items: list[tuple[Any, Schema | None]], opts: FormatOptions, view: str = "value") -> bytes:
        text = "".join(self.line(v, s, opts, view) for v, s in items)
        return compress(text.encode("utf-8"), opts)

    def decode(self, data: bytes, opts: FormatOptions, view: str = "value") -> list[Any]:
        text = decompress(data).decode("utf-8")
        # split on "\n" only: str.splitlines would also cut at U+0085/U+2028 inside strings
        return [json.loads(line, parse_float=decimal.Decimal) for line in text.split("\n") if line.strip()]


FORMAT = JsonFormat()
