"""Expected object contents: the bytes a committed file must hold, and their decoded form.

The model's content for a key is `encode(records of that file)`; a checker compares
`decode(observed bytes)` with `decode(expected bytes)`, so the comparison is semantic (map key
order and number spelling do not matter) and uses the same format code on both sides.
"""
from __future__ import annotations

import base64
import decimal
import gzip
from typing import Any, Mapping, Sequence

from reference_impl.config import SinkConfig
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.expectation import ExpectedObject
from reference_impl.formats import format_for, view_of
from reference_impl.naming import format_options
from reference_impl.schema_evolution import as_written


def view_format_class(cfg: SinkConfig, view: str) -> str:
    return {"value": cfg.format_class, "keys": cfg.keys_format_class, "headers": cfg.headers_format_class}[view]


def encode_view(cfg: SinkConfig, records: Sequence[SinkRecord], view: str) -> bytes:
    """The bytes of one file's `view` object holding `records` (in write order, from the file's
    first record: R14.7 projects the rest onto its value schema)."""
    fmt = format_for(view_format_class(cfg, view))
    if view == "value":
        records = as_written(cfg.schema_compatibility, records, cfg.version.schema_checks)
    return fmt.encode([view_of(r, view) for r in records], format_options(cfg), view)


def decode_view(cfg: SinkConfig, data: bytes, view: str) -> list[Any]:
    return format_for(view_format_class(cfg, view)).decode(data, format_options(cfg), view)


def writer_schema_shape(cfg: SinkConfig, data: bytes, view: str) -> Any:
    """The shape (formats.avro.schema_shape) of the Avro writer schema an Avro object declares,
    or a Parquet object carries from parquet-avro; None for other formats or where there is none."""
    name = format_for(view_format_class(cfg, view)).name
    if name not in ("avro", "parquet") or not data:
        return None
    from reference_impl.formats import avro, parquet

    schema = (avro if name == "avro" else parquet).writer_schema(data)
    return None if schema is None else avro.schema_shape(schema)


def jsonable(v: Any) -> Any:
    """Decoded values as plain JSON (Decimals as strings, bytes as base64)."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    return v


def object_contents(cfg: SinkConfig, obj: ExpectedObject, by_offset: Mapping[int, SinkRecord]) -> dict[str, Any]:
    """Decoded contents per view; `value_text` is the exact text of a JSON value object."""
    records = [by_offset[o] for o in obj.offsets]
    out: dict[str, Any] = {}
    views = (["value"] if obj.value_object else []) + [v for v, _ in obj.sibling_keys]
    for view in views:
        data = encode_view(cfg, records, view)
        out[view] = jsonable(decode_view(cfg, data, view))
        if view == "value" and format_for(cfg.format_class).name == "json":
            raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
            out["value_text"] = raw.decode("utf-8")
    return out
