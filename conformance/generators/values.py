"""Hypothesis strategies for the record space: what a record's value, key and headers can be,
written in the notation of the scenario's converters (conformance.inputs.wire).

Values carry the record's `seq` (how checkers find a record in S3), its `region` (what
FieldPartitioner reads) and its `ts` (what RecordField reads), plus fields of every Connect type
and logical type JsonConverter reads: int8/16/32/64, float and double, boolean, string, bytes,
Decimal, Date, Time, Timestamp, arrays, maps with string and int keys, nested and optional
structs. Numbers are ones whose Java spelling is its shortest digits (Java 17's
Double.toString prints more digits for a few doubles; no connector claim rests on that).
Keys are null, strings, schemaless maps or Structs; headers none, one or several, with text,
control-character bytes or null values. Every strategy shrinks toward the plainest value.
"""
from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "org.apache.kafka.connect.data.Date"
TIME = "org.apache.kafka.connect.data.Time"
TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"

DOUBLES = (0.5, -1.25, 0.1, 3.75, 1e-05, 123.456, 15000000000.0, 0.002, 1e21, 6.02e23, -7.0, 0.0)
FLOATS = (0.5, 0.1, -1.25, 3.5, 0.001, 1024.0, 1e10)
# text a JSON, Avro or Parquet writer must carry as it is: markup HTML-escaping writers change
# (`< > & '`), quotes and backslashes, control characters, the line and paragraph separators
# (raw in JSON, line ends to JavaScript), astral characters (surrogate pairs in Java), and text
# that looks like a number, a boolean or null (a writer guessing types turns it into one)
TEXTS = ("eu", "üñï ©ode", 'quote " and \\ back', "tab\tnew\nline", "\u0001ctl", "", "a/b=c",
         "<a href='x'>&amp;</a> & <", "line\u2028sep\u2029para", "clef \U0001d11e smile \U0001f600", "123", "null",
         "-0.50e3", "true", "\u007f\u001f\u0000end")

# the text of a field FieldPartitioner may read (configs.PARTITION_FIELDS' origin.zone): what an
# object key can hold, some of it what a path would need escaped (a space, '=', '/', non-ASCII)
PATH_TEXTS = ("DE", "eu central", "k=v", "x/y", "Ünï")

# the fields a value always has, then the extra ones drawn from EXTRA_FIELDS
_TS_FIELDS = {
    "int64": {"field": "ts", "type": "int64", "optional": False},
    "timestamp": {"field": "ts", "type": "int64", "name": TIMESTAMP, "version": 1, "optional": False},
    "string": {"field": "ts", "type": "string", "optional": False},
}
EXTRA_FIELDS: dict[str, dict[str, Any]] = {
    "i8": {"type": "int8", "optional": False},
    "i16": {"type": "int16", "optional": True},
    "i32": {"type": "int32", "optional": False},
    "flag": {"type": "boolean", "optional": False},
    "f32": {"type": "float", "optional": False},
    "f64": {"type": "double", "optional": True},
    "note": {"type": "string", "optional": True},
    "raw": {"type": "bytes", "optional": True},
    "amount": {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": "2"}, "optional": False},
    "price": {"type": "bytes", "name": DECIMAL, "version": 1, "parameters": {"scale": "4"}, "optional": True},
    "day": {"type": "int32", "name": DATE, "version": 1, "optional": True},
    "clock": {"type": "int32", "name": TIME, "version": 1, "optional": False},
    "ints": {"type": "array", "items": {"type": "int32", "optional": False}, "optional": False},
    "points": {"type": "array", "items": {"type": "struct", "name": "point", "optional": False,
                                          "fields": [{"field": "x", "type": "int16", "optional": False},
                                                     {"field": "y", "type": "double", "optional": True}]},
               "optional": True},
    "tags": {"type": "map", "keys": {"type": "string", "optional": False},
             "values": {"type": "double", "optional": False}, "optional": False},
    "codes": {"type": "map", "keys": {"type": "int32", "optional": False},
              "values": {"type": "string", "optional": True}, "optional": True},
    # four levels of Structs, and a map of Structs under int keys (written as [key, value] pairs
    # by JsonConverter, as key/value records by AvroData)
    "deep": {"type": "struct", "name": "l1", "optional": False,
             "fields": [{"field": "l2", "type": "struct", "name": "l2", "optional": False,
                         "fields": [{"field": "l3", "type": "struct", "name": "l3", "optional": True,
                                     "fields": [{"field": "l4", "type": "struct", "name": "l4", "optional": False,
                                                 "fields": [{"field": "leaf", "type": "string", "optional": True}]},
                                                {"field": "n", "type": "int32", "optional": False}]}]}]},
    "by_id": {"type": "map", "keys": {"type": "int64", "optional": False},
              "values": {"type": "struct", "name": "line", "optional": False,
                         "fields": [{"field": "sku", "type": "string", "optional": False},
                                    {"field": "qty", "type": "int16", "optional": True}]}, "optional": True},
    "meta": {"type": "struct", "name": "meta", "optional": True,
             "fields": [{"field": "source", "type": "string", "optional": False},
                        {"field": "inner", "type": "struct", "name": "inner", "optional": True,
                         "fields": [{"field": "level", "type": "int64", "optional": False}]}]},
}


@st.composite
def value_schemas(draw: st.DrawFn, ts_types: tuple[str, ...] = tuple(_TS_FIELDS)) -> dict[str, Any]:
    """A JsonConverter Struct schema: seq, region, ts (one of `ts_types`: int64, Timestamp or an
    ISO/epoch string), and 0–6 extra fields of other types. Shrinks toward seq, region and the
    first of `ts_types`."""
    ts = draw(st.sampled_from(ts_types))
    extras = draw(st.lists(st.sampled_from(tuple(EXTRA_FIELDS)), max_size=6, unique=True))
    if "codes" in extras and "by_id" in extras:
        # AvroData names every map with other than string keys io.confluent.connect.avro.MapEntry:
        # two of other types in one schema cannot be written as Avro (SchemaParseException)
        extras.remove("by_id")
    fields = [{"field": "seq", "type": "int64", "optional": False},
              {"field": "region", "type": "string", "optional": True}, dict(_TS_FIELDS[ts])]
    fields += [{"field": name, **EXTRA_FIELDS[name]} for name in extras]
    return {"type": "struct", "name": "order", "optional": False, "fields": fields}


def _decimal_b64(unscaled: int) -> str:
    size = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(size, "big", signed=True)).decode()


@st.composite
def _payload(draw: st.DrawFn, schema: dict[str, Any], name: str = "value") -> Any:
    """A JsonConverter payload for `schema` (optional fields null now and then)."""
    if schema.get("optional") and draw(st.integers(0, 4)) == 0:
        return None
    t, logical = schema["type"], schema.get("name")
    if logical == DECIMAL:
        return _decimal_b64(draw(st.integers(-10**8, 10**8)))
    if logical == DATE:
        return draw(st.integers(18_000, 21_000))
    if logical == TIME:
        return draw(st.integers(0, 86_399_999))
    if t in ("int8", "int16", "int32", "int64"):
        bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}[t]
        return draw(st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1))
    if t == "float":
        return draw(st.sampled_from(FLOATS))
    if t == "double":
        return draw(st.sampled_from(DOUBLES))
    if t == "boolean":
        return draw(st.booleans())
    if t == "string":
        return draw(st.sampled_from(PATH_TEXTS if name == "zone" else TEXTS))
    if t == "bytes":  # an empty byte array one time in three
        size = draw(st.sampled_from((3, 0, 6)))
        return base64.b64encode(bytes(draw(st.lists(st.integers(0, 255), min_size=size, max_size=size)))).decode()
    if t == "array":
        return [draw(_payload(schema["items"])) for _ in range(draw(st.integers(0, 3)))]
    if t == "map":
        keys = draw(st.lists(st.sampled_from(("k", "alpha", "zeta", "mid", "Aa", "BB")) if schema["keys"]["type"] == "string"
                             else st.integers(-50, 5000), max_size=4, unique=True))
        values = [draw(_payload(schema["values"])) for _ in keys]
        if schema["keys"]["type"] == "string":
            return dict(zip(keys, values))
        return [[k, v] for k, v in zip(keys, values)]  # JsonConverter: non-string keys as pairs
    if t == "struct":
        return {f["field"]: draw(_payload(f, f["field"])) for f in schema["fields"]}
    raise ValueError(f"{name}: no payload for {t}")


# the forms of a RecordField string both the connector's parser (Joda's ISO dateTimeParser, R6.5)
# and the model read: epoch digits; an ISO date-time with Z, a fixed offset, the zone's own offset
# (with and without a colon) or none (read in the JVM's zone); to the millisecond (or past it, with
# a comma), the second, the minute or the hour; a date alone
TS_TEXT_FORMS = ("digits", "utc", "fixed-offset", "local", "local-seconds", "zone-offset", "local-minutes",
                 "local-hour", "date", "comma-micros", "zone-offset-compact")
OFFSETLESS_FORMS = ("local", "local-seconds", "local-minutes", "local-hour", "date")


def ts_text(ts: int, how: int | str, zone: str = "UTC") -> str:
    """A RecordField timestamp as a string of form `how` (TS_TEXT_FORMS, or its index): an
    offset-less form writes the wall time of `zone` at `ts` (as a user in that zone would), which
    the connector then reads in the JVM's zone, not in `zone`."""
    import datetime as dt
    import zoneinfo

    form = TS_TEXT_FORMS[how] if isinstance(how, int) else how
    if form == "digits":
        return str(ts)
    tz: dt.tzinfo = dt.timezone.utc if zone.upper() == "UTC" else zoneinfo.ZoneInfo(zone)
    at = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ts)
    if form == "utc":
        return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if form == "fixed-offset":
        return at.astimezone(dt.timezone(dt.timedelta(hours=2))).isoformat(timespec="milliseconds")
    if form == "comma-micros":
        return at.strftime("%Y-%m-%dT%H:%M:%S,%f") + "Z"
    local = at.astimezone(tz)
    if form.startswith("zone-offset"):
        text = local.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return text[:-3] + text[-2:] if form.endswith("compact") and text[-3] == ":" else text
    naive = local.replace(tzinfo=None)
    return {"local": naive.isoformat(timespec="milliseconds"), "local-seconds": naive.isoformat(timespec="seconds"),
            "local-minutes": naive.isoformat(timespec="minutes"), "local-hour": naive.strftime("%Y-%m-%dT%H"),
            "date": naive.strftime("%Y-%m-%d")}[form]


@st.composite
def ts_texts(draw: st.DrawFn, ts: int, zone: str = "UTC") -> str:
    """A RecordField string for `ts`: one form in two names no offset."""
    if draw(st.booleans()):
        return ts_text(ts, draw(st.sampled_from(OFFSETLESS_FORMS)), zone)
    return ts_text(ts, draw(st.sampled_from(TS_TEXT_FORMS)), zone)


@st.composite
def struct_payload(draw: st.DrawFn, schema: dict[str, Any], seq: int, region: str | None, ts: int,
                   zone: str = "UTC", region_fields: tuple[str, ...] = ()) -> dict[str, Any]:
    """The payload of a value of `schema` for one record: its seq, region and ts, the rest drawn.
    `region_fields`: other text fields FieldPartitioner reads, which hold the region too."""
    out: dict[str, Any] = {}
    for f in schema["fields"]:
        name = f["field"]
        if name == "seq":
            out[name] = seq
        elif name == "region" or name in region_fields:
            out[name] = region
        elif name == "ts":
            out[name] = draw(ts_texts(ts, zone)) if f["type"] == "string" else ts
        else:
            out[name] = draw(_payload(f, name))
    return out


@st.composite
def schemaless_extras(draw: st.DrawFn) -> dict[str, Any]:
    """More entries for a schemaless JSON value: nested maps and lists, doubles, booleans,
    nulls, text that needs escaping, many keys (a HashMap past 12 entries resizes)."""
    leaf = st.one_of(st.integers(-10**12, 10**12), st.sampled_from(DOUBLES), st.booleans(), st.none(),
                     st.sampled_from(TEXTS))
    tree = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(("a", "b", "zz", "Aa", "BB")),
                                                                       inner, max_size=3)), max_leaves=6)
    n = draw(st.sampled_from((0, 0, 1, 3, 14)))
    return {f"x{i}": draw(tree) for i in range(n)}


KEY_TEXTS = ("k0", "k1", "user-7", "ü-key", "", '<k&"1">', "\\key\U0001f511", "42", "null")


@st.composite
def record_keys(draw: st.DrawFn, kind: str, seq: int, nullable: bool) -> Any:
    """A record key in the notation of a key converter of `kind`: null (when `nullable`), a
    string, a schemaless map (JsonConverter without schemas) or a Struct (with schemas)."""
    if nullable and draw(st.integers(0, 5)) == 0:
        return None
    text = draw(st.sampled_from(KEY_TEXTS)) if draw(st.booleans()) else f"k{seq % 5}"
    if kind == "json-schemas":
        if draw(st.booleans()):
            return {"schema": {"type": "string", "optional": True}, "payload": text}
        return {"schema": {"type": "struct", "name": "key", "optional": False,
                           "fields": [{"field": "id", "type": "int32", "optional": False},
                                      {"field": "name", "type": "string", "optional": True}]},
                "payload": {"id": seq % 5, "name": text or None}}
    if kind == "json":
        return text if draw(st.booleans()) else {"id": seq % 5, "name": text, "tags": ["a", "b"][: seq % 3]}
    if kind == "bytearray":
        return base64.b64encode(text.encode()).decode()
    if kind == "avro":  # a producer's Avro key: a string, or a record
        if draw(st.booleans()):
            return {"schema": "string", "payload": text}
        return {"schema": AVRO_KEY, "payload": {"id": seq % 5, "name": text or None}}
    return text


# the record key schema a producer writing Avro keys registers
AVRO_KEY = {"type": "record", "name": "OrderKey", "namespace": "com.acme.orders",
            "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": ["null", "string"], "default": None}]}


def plain_key(kind: str, seq: int) -> Any:
    """The plainest non-null key of `kind` (what record_keys draws first when not null)."""
    text = f"k{seq % 5}"
    if kind == "json-schemas":
        return {"schema": {"type": "string", "optional": True}, "payload": text}
    if kind == "avro":
        return {"schema": "string", "payload": text}
    return base64.b64encode(text.encode()).decode() if kind == "bytearray" else text


HEADER_NAMES = ("h", "trace", "source", "X-Trace.Id", "content_type")
# header texts that come back as they are through SimpleHeaderConverter (no leading zeros, no
# float, date or JSON-like text, no "null": those it parses into other types)
HEADER_TEXTS = ("1", "42", "-3", "abc", "trace-7", "ü ñ", "", "a b c", "true", '<b>bold</b> & "q"', "clef \U0001d11e")


@st.composite
def header_lists(draw: st.DrawFn, seq: int, stored: bool) -> list[list[Any]]:
    """A record's headers: none, one, several or (one record in forty) eight, names repeated; a
    value is text (HEADER_TEXTS: numbers and booleans, markup, astral characters), bytes that
    are no printable text (`{"base64": …}`), or null. Where headers are stored, a record without
    headers or with a null value stops the task (R11.4, R11.3): those come in one record in ten
    there."""
    if stored and draw(st.integers(0, 9)) > 0:
        n = draw(st.integers(1, 3))
        nulls = False
    else:
        n = draw(st.sampled_from((0, 1, 1, 2, 3)))
        nulls = True
    if draw(st.integers(0, 39)) == 20:  # eight headers now and then (a middle value: Hypothesis favours the ends)
        n = 8
    out: list[list[Any]] = [["h", str(seq)]] if n else []
    for i in range(1, n):
        kind = draw(st.integers(0, 5))
        name = draw(st.sampled_from(HEADER_NAMES))
        if kind == 0 and nulls:
            out.append([name, None])
        elif kind == 1:
            out.append([name, {"base64": base64.b64encode(b"\x00\x01\x7f" + bytes([i])).decode()}])
        else:
            out.append([name, draw(st.sampled_from(HEADER_TEXTS))])
    return out
