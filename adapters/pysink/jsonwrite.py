"""The Python sink's JsonFormat writer (R10.1): one line per record, as the connector writes it.

Written from the connector's JsonRecordWriterProvider and Kafka's JsonConverter, independently
of the reference model. The converter hands the sink Java objects; the line is what the JVM
writes for them:

* a Struct goes through JsonConverter with schemas off: fields in schema order, a missing or
  null field takes its default (a required one with none stops the task), Decimal as base64 of
  the unscaled value (or a number with `json.decimal.format=NUMERIC`), Date as days, Time as ms
  of day, Timestamp as epoch ms;
* anything else goes through Jackson: a JSON object or a MAP is a `java.util.HashMap`, written
  in its iteration order; a Date/Time/Timestamp is a `java.util.Date` (epoch ms); a Decimal is
  a BigDecimal written as `toString()`; a Struct inside such a value cannot be written (the
  task dies).

Numbers: Java's `Double.toString`/`Float.toString` spelling (`1.0E10`, `0.001`, `1.0E-4`); a
JSON number read without a schema is a BigDecimal turned into a double (so `-0.0` is `0.0`);
integers wrap to their Java width.
"""
from __future__ import annotations

import base64
import binascii
import decimal
import math
import re
import struct
from typing import Any

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_DAY = 86_400_000


class WriteError(ValueError):
    """The connector cannot write this value (a DataException or Jackson failing): the task dies."""


# --- java.util.HashMap's iteration order ----------------------------------------------------------

def _hash_code(key: Any, key_type: str | None) -> int:
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        if key_type in ("int8", "int16", "int32"):
            return key & 0xFFFFFFFF
        u = key & 0xFFFFFFFFFFFFFFFF
        return (u ^ (u >> 32)) & 0xFFFFFFFF
    if isinstance(key, float):
        if key_type == "float32":
            return struct.unpack("<I", struct.pack("<f", key))[0]
        u = struct.unpack("<Q", struct.pack("<d", key))[0]
        return (u ^ (u >> 32)) & 0xFFFFFFFF
    h = 0
    for unit in struct.unpack(f">{len(str(key).encode('utf-16-be', 'surrogatepass')) // 2}H",
                              str(key).encode("utf-16-be", "surrogatepass")):
        h = (h * 31 + unit) & 0xFFFFFFFF
    return h


class SizedMap(dict):
    """A map payload that came from a Java map made `new HashMap<>(capacity)` (AvroData's are
    sized to their entries), not `new HashMap<>()`: it iterates in that table's order."""

    capacity: int | None = None


class SizedPairs(list):
    """The same for a map whose keys are not strings, carried as [[key, value], …]."""

    capacity: int | None = None


def capacity_of(payload: Any) -> int | None:
    return getattr(payload, "capacity", None)


def hashmap_entries(pairs: list[tuple[Any, Any]], key_type: str | None = None,
                    initial_capacity: int | None = None) -> list[tuple[Any, Any]]:
    """The entries of a HashMap filled with `pairs` in order, as it iterates them (a repeated
    key keeps its first place and takes the last value); `new HashMap<>(initial_capacity)` where
    given (its table starts at the power of two at least that large)."""
    values: dict[Any, Any] = {}
    for k, v in pairs:
        values[k] = v  # a dict keeps the first place of a key
    n, size = 16, 0
    if initial_capacity is not None:
        n = 1
        while n < initial_capacity:
            n *= 2
    table: dict[int, list[tuple[int, Any]]] = {}

    def grow() -> None:
        nonlocal n, table
        n *= 2
        old, table = table, {}
        for i in sorted(old):
            for h, k in old[i]:
                table.setdefault((h ^ (h >> 16)) & (n - 1), []).append((h, k))

    for k in values:
        h = _hash_code(k, key_type)
        slot = table.setdefault((h ^ (h >> 16)) & (n - 1), [])
        slot.append((h, k))
        if len(slot) > 8 and n < 64:  # a 9th entry in one bin of a small table: resize, not a tree
            grow()
        size += 1
        if size > n * 3 // 4:
            grow()
    return [(k, values[k]) for i in sorted(table) for _, k in table[i]]


# --- numbers ---------------------------------------------------------------------------------------

def _f32(x: float) -> float:
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _java_spelling(digits: str, exp10: int, negative: bool) -> str:
    """`digits` × 10^(exp10 - len+1): plain within [1e-3, 1e7), else d.dddE±n."""
    sign = "-" if negative else ""
    if -3 <= exp10 < 7:
        if exp10 >= 0:
            whole = digits[: exp10 + 1].ljust(exp10 + 1, "0")
            return f"{sign}{whole}.{digits[exp10 + 1:] or '0'}"
        return f"{sign}0.{'0' * (-exp10 - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10}"


def java_double(x: float, single: bool = False) -> str:
    """Double.toString (Float.toString when `single`): the shortest digits that read back."""
    if single:
        x = _f32(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    text = repr(x) if not single else next(t for t in (f"{x:.{p}e}" for p in range(12)) if _f32(float(t)) == x)
    sign, digits, exponent = decimal.Decimal(text).as_tuple()
    ds = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(ds)  # the trailing zeros dropped
    return _java_spelling(ds, exponent + len(ds) - 1, bool(sign))


class _Num:
    """A number token, spelled already."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


def _wrap(n: int, bits: int) -> int:
    n &= (1 << bits) - 1
    return n - (1 << bits) if n >> (bits - 1) else n


# --- what the converter hands the sink, as Java objects ---------------------------------------------

def _decimal_of(schema: dict, payload: Any, decimal_format: str, in_struct: bool) -> Any:
    scale = int((schema.get("parameters") or {}).get("scale", "0"))
    if isinstance(payload, str):
        try:
            unscaled = int.from_bytes(base64.b64decode(payload, validate=True), "big", signed=True)
        except (binascii.Error, ValueError):
            raise WriteError("a Decimal's bytes are not base64") from None
        d = decimal.Decimal(unscaled).scaleb(-scale)
    elif isinstance(payload, (int, decimal.Decimal, float)) and not isinstance(payload, bool):
        d = decimal.Decimal(str(payload))
        if in_struct and -d.as_tuple().exponent != scale:  # Decimal.fromLogical refuses another scale
            raise WriteError(f"BigDecimal has mismatching scale value for given Decimal schema ({payload})")
    else:
        raise WriteError("a Decimal needs a number or base64 bytes")
    if not in_struct or decimal_format.upper() == "NUMERIC":
        return _Num(str(d))
    return base64.b64encode(java_unscaled_bytes(int(d.scaleb(scale)))).decode()


def java_unscaled_bytes(unscaled: int) -> bytes:
    """BigInteger.toByteArray: the fewest bytes holding the value and its sign bit (so -128 is
    one byte, 0x80, and -2^63 eight)."""
    size = 1
    while not -(1 << (8 * size - 1)) <= unscaled < (1 << (8 * size - 1)):
        size += 1
    return unscaled.to_bytes(size, "big", signed=True)


def _typed(schema: dict, payload: Any, decimal_format: str, in_struct: bool, where: str) -> Any:
    """A schema'd payload as the JSON tree the connector writes (in_struct: the JsonConverter
    path inside a Struct; else Jackson's view of the same Java object)."""
    if payload is None:
        if schema.get("default") is not None:
            payload = schema["default"]
        elif schema.get("optional") or not in_struct:
            return None
        else:
            raise WriteError(f"{where}: null for a required {schema.get('type')} field with no default")
    name, t = schema.get("name"), schema.get("type")
    if name == DECIMAL:
        return _decimal_of(schema, payload, decimal_format, in_struct)
    if name in (DATE, TIME, TIMESTAMP):
        n = int(payload)
        return n * _DAY if name == DATE and not in_struct else n
    if t in _BITS:
        return _wrap(int(payload), _BITS[t]) if not isinstance(payload, bool) else 0
    if t in ("float", "double"):
        x = 0.0 if isinstance(payload, bool) or not isinstance(payload, (int, float, decimal.Decimal)) else float(payload) + 0.0
        return _Num(java_double(x, single=t == "float"))
    if t == "boolean":
        return payload if isinstance(payload, bool) else False
    if t == "string":
        return payload if isinstance(payload, str) else None
    if t == "bytes":
        return base64.b64encode(base64.b64decode(payload)).decode() if isinstance(payload, str) else None
    if t == "array":
        items = schema.get("items") or {}
        return [_typed(items, v, decimal_format, in_struct, f"{where}[{i}]")
                for i, v in enumerate(payload if isinstance(payload, list) else [])]
    if t == "map":
        ks, vs = schema.get("keys") or {}, schema.get("values") or {}
        if ks.get("type") == "string":
            pairs = [(k, _typed(vs, v, decimal_format, in_struct, f"{where}.{k}")) for k, v in payload.items()]
            return {"__map__": hashmap_entries(pairs, "string", capacity_of(payload))}
        pairs = [(_java_key(ks, p[0]), _typed(vs, p[1], decimal_format, in_struct, where)) for p in payload]
        entries = hashmap_entries(pairs, ks.get("type"), capacity_of(payload))
        if in_struct:  # JsonConverter: a map with non-string keys is an array of [key, value]
            return [[_key_json(ks, k), v] for k, v in entries]
        return {"__map__": [(_key_text(k), v) for k, v in entries]}
    if t == "struct":
        if not in_struct:
            raise WriteError(f"{where}: Jackson cannot write a Struct inside a non-Struct value")
        fields = schema.get("fields") or []
        given = payload if isinstance(payload, dict) else {}
        return {"__map__": [(f["field"], _typed(f, given.get(f["field"]), decimal_format, True, f"{where}.{f['field']}"))
                            for f in fields]}
    raise WriteError(f"{where}: unsupported type {t}")


def _java_key(schema: dict, key: Any) -> Any:
    t = schema.get("type")
    if t in _BITS:
        return _wrap(int(key), _BITS[t])
    if t in ("float", "double"):
        return float(key)
    return key


def _key_json(schema: dict, key: Any) -> Any:
    if isinstance(key, float):
        return _Num(java_double(key, single=schema.get("type") == "float"))
    return key


def _key_text(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return java_double(key)
    return str(key)


def _schemaless(payload: Any) -> Any:
    """JsonConverter without a schema: objects → HashMap, integers → long, other numbers →
    double (through a BigDecimal)."""
    if isinstance(payload, dict):
        return {"__map__": hashmap_entries([(k, _schemaless(v)) for k, v in payload.items()], None, capacity_of(payload))}
    if isinstance(payload, list):
        return [_schemaless(v) for v in payload]
    if isinstance(payload, bool) or payload is None or isinstance(payload, str):
        return payload
    if isinstance(payload, int):
        return _wrap(payload, 64)
    return _Num(java_double(float(payload) + 0.0))


# --- text -------------------------------------------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# a character past U+FFFF is two UTF-16 units in Java, and Jackson's UTF-8 generator escapes
# each of them (\\uD83D\\uDE00) instead of writing the 4-byte UTF-8 sequence
_SPECIAL = re.compile('["\\\\\x00-\x1f\U00010000-\U0010ffff]')


def _escaped(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    units = ch.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04X}" for i in range(0, len(units), 2))


def _quote(s: str) -> str:
    return '"' + _SPECIAL.sub(lambda m: _escaped(m.group(0)), s) + '"'


def _text(tree: Any) -> str:
    if tree is None:
        return "null"
    if tree is True or tree is False:
        return "true" if tree else "false"
    if isinstance(tree, _Num):
        return tree.text
    if isinstance(tree, int):
        return str(tree)
    if isinstance(tree, str):
        return _quote(tree)
    if isinstance(tree, dict):
        return "{" + ",".join(f"{_quote(str(k))}:{_text(v)}" for k, v in tree["__map__"]) + "}"
    return "[" + ",".join(_text(v) for v in tree) + "]"


def json_record_line(schema: Any, payload: Any, has_schema: bool, decimal_format: str = "BASE64") -> bytes:
    """One record's line (its view value as the converter read it) with the line separator."""
    if not has_schema or schema is None:
        tree = _schemaless(payload)
    else:
        tree = _typed(schema, payload, decimal_format, schema.get("type") == "struct", "value")
    return (_text(tree) + "\n").encode("utf-8")


def headers_record_line(headers: list[tuple[str, str]]) -> bytes:
    """R11.3: the headers view, a Struct RecordHeaders{headers: [{key, value}]} through JsonConverter."""
    tree = {"__map__": [("headers", [{"__map__": [("key", k), ("value", v)]} for k, v in headers])]}
    return (_text(tree) + "\n").encode("utf-8")

