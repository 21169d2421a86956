"""What goes into an object, and its name: records through their converters, value lines
(R10.1, R10.2), keys and headers lines (R11.3), FieldPartitioner partitions (R6.2) and object
keys (R5.1)."""
from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any

from adapters.pysink.converters import ConversionError, RecordConverter
from adapters.pysink.errors import TaskFailed
from adapters.pysink.jsonwrite import WriteError, headers_record_line, json_record_line
from adapters.pysink.log import TP, LogRecord
from adapters.pysink.settings import SinkSettings


# --- values ---------------------------------------------------------------------------------------

def convert(conv: RecordConverter, raw: bytes | None, rec: LogRecord, what: str) -> tuple[Any, Any, bool]:
    """(schema, payload, has_schema) of a record's key or value through its converter; a value
    the converter refuses stops the task (Connect's errors.tolerance=none)."""
    try:
        return conv.read(raw, rec.topic)
    except ConversionError as e:
        raise TaskFailed(f"offset {rec.offset}: {rec.topic}-{rec.partition}: the {what} converter refused the "
                         f"record: {e}") from None


_FIELD_TYPES = {"int8", "int16", "int32", "int64", "string", "boolean"}


def field_ep(schema: Any, payload: Any, names: tuple[str, ...], offset: int, delim: str = "/") -> str:
    """R6.2: `name=value` per field (dotted names reach nested structs), joined by directory.delim.
    Values must be Structs; unsupported types or missing fields stop the task."""
    if not isinstance(schema, dict) or schema.get("type") != "struct" or not isinstance(payload, dict):
        raise TaskFailed(f"offset {offset}: FieldPartitioner needs a Struct value (a value with a schema)")
    parts = []
    for name in names:
        sch, val = schema, payload
        for step in name.split("."):
            fields = {f.get("field"): f for f in (sch or {}).get("fields", [])}
            if step not in fields:
                raise TaskFailed(f"offset {offset}: field {name!r} is not in the value's schema")
            sch = fields[step]
            val = val.get(step) if isinstance(val, dict) else None
        typ = sch.get("type")
        if typ not in _FIELD_TYPES or sch.get("name"):  # logical types are not partitionable here
            raise TaskFailed(f"offset {offset}: field {name!r} has type {sch.get('name') or typ}, "
                             "which FieldPartitioner cannot encode")
        text = "null" if val is None else ("true" if val is True else "false" if val is False else str(val))
        parts.append(f"{name}={text}")
    return delim.join(parts)


def schema_key(schema: Any) -> tuple:
    """A JsonConverter schema as Connect compares it (`Schema.equals`): type, optional,
    default, name, version, doc, parameters, and the field/item/key/value schemas in order."""
    if not isinstance(schema, dict):
        return ("?", json.dumps(schema, sort_keys=True, default=str))
    t = schema.get("type")
    if t == "struct":
        sub: tuple = tuple((f.get("field"), schema_key(f)) for f in schema.get("fields") or [])
    elif t == "array":
        sub = (schema_key(schema.get("items")),)
    elif t == "map":
        sub = (schema_key(schema.get("keys")), schema_key(schema.get("values")))
    else:
        sub = ()
    params = tuple(sorted((str(k), str(v)) for k, v in (schema.get("parameters") or {}).items()))
    return (t, bool(schema.get("optional", False)), json.dumps(schema.get("default"), sort_keys=True, default=str),
            schema.get("name"), schema.get("version"), schema.get("doc"), params, sub)


def json_line(schema: Any, payload: Any, has_schema: bool, decimal_format: str, offset: int) -> bytes:
    """R10.1: the JsonFormat line the connector writes for this view value."""
    try:
        return json_record_line(schema, payload, has_schema, decimal_format)
    except WriteError as e:
        raise TaskFailed(f"offset {offset}: JsonFormat cannot write the record: {e} (the task dies)") from None


DECIMAL = "org.apache.kafka.connect.data.Decimal"


def bytes_value(schema: Any, payload: Any, has_schema: bool, offset: int) -> bytes:
    """R10.2: ByteArrayFormat takes a `byte[]` with a BYTES schema (JsonConverter: an envelope
    `{"schema":{"type":"bytes"},"payload":"<base64>"}`); anything else is a DataException."""
    if (not has_schema or not isinstance(schema, dict) or schema.get("type") != "bytes"
            or schema.get("name") == DECIMAL or not isinstance(payload, str)):
        what = (f"a {schema.get('name') or schema.get('type')} value" if has_schema and isinstance(schema, dict)
                else f"a schemaless {type(payload).__name__} value")
        raise TaskFailed(f"offset {offset}: ByteArrayFormat needs a bytes value (a BYTES schema), got {what}: "
                         "DataException, and the Python sink has no DLQ (R10.2, R13)")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise TaskFailed(f"offset {offset}: the bytes payload is not base64 (JsonConverter cannot read it)") from None


# --- keys and headers (R11) -----------------------------------------------------------------------

def key_line(rec: LogRecord, conv: RecordConverter, decimal_format: str = "BASE64") -> bytes:
    """R11.3: the key as its converter reads it, written by JsonFormat. R11.4: a null key is a
    DataException (the Python sink has no DLQ: the task dies)."""
    schema, payload, has_schema = convert(conv, rec.key, rec, "key")
    if payload is None:
        raise TaskFailed(f"offset {rec.offset}: Key cannot be null with store.kafka.keys=true (R11.4 DataException; "
                         "the Python sink has no DLQ, so the task dies)")
    return json_line(schema, payload, has_schema, decimal_format, rec.offset)


def header_strings(rec: LogRecord) -> list[tuple[str, str]]:
    """R11.3: every header of the record, in its order, its value stringified (its UTF-8 text).
    R11.4: a record without headers is a DataException; so is a null header value (the value
    field of a header struct is a required string; spec open question 11)."""
    if not rec.headers:
        raise TaskFailed(f"offset {rec.offset}: Headers cannot be null with store.kafka.headers=true (R11.4 "
                         "DataException; the Python sink has no DLQ, so the task dies)")
    out = []
    for k, v in rec.headers:
        if v is None:
            raise TaskFailed(f"offset {rec.offset}: header {k!r} has a null value, which the headers struct cannot "
                             "hold (a required string): DataException, the task dies")
        out.append((k, v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)))
    return out


def headers_line(rec: LogRecord) -> bytes:
    """R11.3: `{"headers":[{"key":k,"value":v}, …]}` (JsonFormat's headers line)."""
    return headers_record_line(header_strings(rec))




# --- object names (R5.1) and their compression (R5.3) ---------------------------------------------

def value_key(s: SinkSettings, tp: TP, ep: str, start: int) -> str:
    """R5.1: `<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<start offset>` and the
    value format's extension, the offset zero-padded to filename.offset.zero.pad.width."""
    t, p = tp
    d, f = s.dir_delim, s.file_delim
    prefix = f"{s.topics_dir}{d}" if s.topics_dir.strip() else ""
    return f"{prefix}{t}{d}{ep}{d}{t}{f}{p}{f}{start:0{s.pad}d}" + s.value_ext


def gzip_stream(level: int) -> Any:
    """A gzip stream at s3.compression.level (-1: zlib's default, 6)."""
    return zlib.compressobj(6 if level < 0 else level, zlib.DEFLATED, 31)
