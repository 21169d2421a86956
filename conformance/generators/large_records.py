"""A record larger than a part (R7.1): one value bigger than `s3.part.size` at its smallest (5
MiB), so the sink uploads a part in the middle of that record and the rest with the next. The
object must still be the file's records, whole, once (no record split across files).

Drawn after everything else of a generated scenario, like the other shapes: it pads one value
of an existing record and sets the smallest part size, so every step drawn before keeps its
place. The broker sinkcheck starts takes records up to 10 MiB (message.max.bytes), as a
deployment raising it for such a topic does; Kafka's default of 1 MiB would refuse one.
"""
from __future__ import annotations

import base64
import binascii
import json
from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from conformance.inputs.scenario import Scenario, converter_kind

MIN_PART_SIZE = 5 * 1024 * 1024
# a value this much larger than the part: its first 5 MiB fill a part, the rest goes on
LARGE_VALUE_BYTES = MIN_PART_SIZE + 512 * 1024


def padded(value: Any, size: int, converter: str = "json") -> Any:
    """`value` grown past `size` bytes where its notation allows without changing its kind or
    schema: a schemaless map gains a `pad` text, text (StringConverter's, or a JSON string)
    gains a tail, bytes holding a JSON object (ByteArrayConverter's base64) gain a `pad` in
    it. None where it cannot (a Struct, a null)."""
    if isinstance(value, dict) and "schema" not in value and "payload" not in value:
        return {**value, "pad": "x" * size}
    if isinstance(value, str) and converter in ("string", "json"):
        return value + " " + "x" * size
    if isinstance(value, str) and converter == "bytearray":
        try:
            body = json.loads(base64.b64decode(value, validate=True))
        except (ValueError, binascii.Error):
            return None
        if not isinstance(body, dict):
            return None
        return base64.b64encode(json.dumps({**body, "pad": "x" * size}, separators=(",", ":")).encode()).decode()
    return None


def with_a_large_record(draw: st.DrawFn, sc: Scenario, allowed: bool) -> Scenario:
    """In about one draw in ten where `allowed` (a generated config of a sink that reads
    s3.part.size), a record whose value can grow (padded) made larger than a part, and
    s3.part.size at its minimum."""
    converter = converter_kind(sc.connector)
    fits = [i for i, r in enumerate(sc.records) if padded(r["value"], 1, converter) is not None]
    if not allowed or not fits or draw(st.integers(0, 9)) != 4:  # a middle value: Hypothesis favours the ends
        return sc
    at = draw(st.sampled_from(fits))
    records = list(sc.records)
    records[at] = {**records[at], "value": padded(records[at]["value"], LARGE_VALUE_BYTES, converter)}
    return replace(sc, records=records, connector={**sc.connector, "s3.part.size": str(MIN_PART_SIZE)})

