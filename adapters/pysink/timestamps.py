"""Record time: RecordField timestamps (R6.5), time buckets (R6.3) and scheduled rotation
boundaries (R3.4), in Joda's arithmetic."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from adapters.pysink.errors import TaskFailed

TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"


def utc_offset_ms(utc_ms: int, tz: dt.tzinfo) -> int:
    off = dt.datetime.fromtimestamp(utc_ms / 1000, tz).utcoffset()
    return int(off.total_seconds() * 1000) if off else 0


def _local_to_utc(local_ms: int, tz: dt.tzinfo) -> int:
    """Joda's convertLocalToUTC(local, strict=false)."""
    probe = local_ms - utc_offset_ms(local_ms, tz)
    return local_ms - utc_offset_ms(probe, tz)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // b
    return q if a >= 0 else -q  # Java's integer division rounds toward zero


def time_bucket(ts: int, duration_ms: int, tz: dt.tzinfo) -> int:
    """R6.3: toUTC(floor(toLocal(ts) / d) * d)."""
    local = ts + utc_offset_ms(ts, tz)
    return _local_to_utc(_trunc_div(local, duration_ms) * duration_ms, tz)


def next_boundary(now: int, interval: int, tz: dt.tzinfo) -> int:
    """R3.4: the first boundary strictly after `now`: local midnight + k * interval, the last
    slot of a day cut at the next local midnight."""
    local_day = _trunc_div(now + utc_offset_ms(now, tz), 86_400_000) * 86_400_000
    start = _local_to_utc(local_day, tz)
    nxt = start + ((now - start) // interval + 1) * interval
    tomorrow = int((dt.datetime.fromtimestamp(start / 1000, tz) + dt.timedelta(days=1)).timestamp() * 1000)
    return min(nxt, tomorrow)


# --- RecordField timestamps (R6.5) -----------------------------------------------------------------

_DIGITS = re.compile(r"-?[0-9]{1,19}")
_FRAC = r"(?:[.,]([0-9]+))?"
_ISO_TIME = re.compile(r"([0-9]{2})(?::([0-9]{2})(?::([0-9]{2})" + _FRAC + r"|" + _FRAC + r")|" + _FRAC + r")")
_ISO_OFFSET = re.compile(r"(Z)|([+-])([0-9]{2})(?::?([0-9]{2})(?::?([0-9]{2})(?:[.,]([0-9]{3}))?)?)?")
_ISO_DATE = re.compile(r"([+-]?[0-9]{4,9})(?:-W([0-9]{2})(?:-([1-7]))?|-([0-9]{3})(?![0-9])|-([0-9]{2})(?:-([0-9]{2}))?)?")


def parse_iso_ms(text: str) -> int:
    """Joda's ISODateTimeFormat.dateTimeParser(): `date-opt-time | 'T' time`, a date being
    yyyy[-MM[-dd]], yyyy-DDD or xxxx-Www[-e]; a time HH[:mm[:ss]] with a fraction on its last
    element; an offset Z or +-HH[:mm]. Without an offset the string is read in UTC (the
    worker's zone; R6.5 says the JVM default zone). Raises ValueError."""
    pos, date = 0, dt.date(1970, 1, 1)
    time_only = text.startswith("T")
    if not time_only:
        m = _ISO_DATE.match(text)
        if not m:
            raise ValueError("no ISO date")
        year = int(m.group(1))
        if m.group(2):  # week date; a missing day keeps the base's (1970-01-01, a Thursday; inference)
            date = dt.date.fromisocalendar(year, int(m.group(2)), int(m.group(3) or 4))
        elif m.group(4):
            date = dt.date(year, 1, 1) + dt.timedelta(days=int(m.group(4)) - 1)
            if date.year != year:
                raise ValueError("day of year out of range")
        else:
            date = dt.date(year, int(m.group(5) or 1), int(m.group(6) or 1))
        pos = m.end()
        if pos == len(text):
            return _iso_ms(date, 0, None)
        if text[pos] != "T":
            raise ValueError(f"unexpected {text[pos:]!r}")
    pos += 1  # the 'T'
    micros = 0
    m = _ISO_TIME.match(text, pos)
    if m:
        hh, mm, ss, sf, mf, hf = m.groups()
        if int(hh) > 23 or (mm and int(mm) > 59) or (ss and int(ss) > 59):
            raise ValueError("time field out of range")
        unit = 3_600_000_000 if mm is None else 60_000_000 if ss is None else 1_000_000  # micros
        frac = sf or mf or hf
        micros = int(hh) * 3_600_000_000 + int(mm or 0) * 60_000_000 + int(ss or 0) * 1_000_000
        if frac:
            micros += int(frac[:9].ljust(9, "0")) * unit // 1_000_000_000
        micros -= micros % 1000  # Joda keeps milliseconds
        pos = m.end()
    elif time_only:
        raise ValueError("no time after 'T'")
    offset_ms = None
    if pos < len(text):
        o = _ISO_OFFSET.fullmatch(text, pos)
        if not o:
            raise ValueError(f"unexpected {text[pos:]!r}")
        if o.group(1):
            offset_ms = 0
        else:
            h, mi, se = int(o.group(3)), int(o.group(4) or 0), int(o.group(5) or 0)
            offset_ms = (h * 3600 + mi * 60 + se) * 1000 + int(o.group(6) or 0)
            offset_ms = -offset_ms if o.group(2) == "-" else offset_ms
    return _iso_ms(date, micros // 1000, offset_ms)


def _iso_ms(date: dt.date, ms_of_day: int, offset_ms: int | None) -> int:
    days = (date - dt.date(1970, 1, 1)).days
    return days * 86_400_000 + ms_of_day - (offset_ms or 0)


def _timestamp_of(value: Any, where: str) -> int:
    """A Map value's field: Number → ms (truncated), String → digits or ISO; else it dies."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TaskFailed(f"{where} is {'null' if value is None else type(value).__name__}, not a number or a string")
    if isinstance(value, (int, float)):
        return int(value)
    return _parse_ts_string(value, where)


def _parse_ts_string(text: str, where: str) -> int:
    if _DIGITS.fullmatch(text):
        n = int(text)
        if not -(2 ** 63) <= n < 2 ** 63:
            raise TaskFailed(f"{where} = {text!r} does not fit in a long")
        return n  # epoch milliseconds
    try:
        return parse_iso_ms(text)
    except ValueError as e:
        raise TaskFailed(f"{where} = {text!r} is neither epoch milliseconds nor an ISO-8601 date-time ({e})") from None


def record_field_ts(schema: Any, payload: Any, has_schema: bool, path: str, offset: int) -> int:
    """R6.5 RecordField: the value field `path` (dotted) as epoch ms. A missing or null field, or
    a type it cannot read, is an error outside the PartitionException handler: the task dies."""
    where = f"offset {offset}: timestamp.field {path!r}"
    rule = " (R6.5 RecordField: the task dies, even with a DLQ)"
    stype = schema.get("type") if has_schema and isinstance(schema, dict) else None
    if stype == "struct" and isinstance(payload, dict):
        sch, val = schema, payload
        for step in path.split("."):
            fields = {f.get("field"): f for f in (sch.get("fields") or [])} if isinstance(sch, dict) else {}
            if step not in fields:
                raise TaskFailed(f"{where} is not in the value's schema{rule}")
            if not isinstance(val, dict):
                raise TaskFailed(f"{where}: {step!r} is inside a null struct{rule}")
            sch, val = fields[step], val.get(step)
        if val is None:
            raise TaskFailed(f"{where} is null{rule}")
        if sch.get("name") == TIMESTAMP:
            return int(val)
        if sch.get("name") or sch.get("type") not in ("int32", "int64", "string"):
            raise TaskFailed(f"{where} has type {sch.get('name') or sch.get('type')}, which RecordField cannot "
                             f"read (INT32, INT64, STRING or Timestamp){rule}")
        try:
            return int(val) if sch.get("type") != "string" else _parse_ts_string(str(val), where)
        except TaskFailed as e:
            raise TaskFailed(f"{e}{rule}") from None
    if stype == "map" and isinstance(payload, list):  # JsonConverter's map with non-string keys: pairs
        payload = {str(p[0]): p[1] for p in payload if isinstance(p, list) and len(p) == 2}
    if stype in (None, "map") and isinstance(payload, dict):
        val: Any = payload
        for step in path.split("."):
            if not isinstance(val, dict) or val.get(step) is None:
                raise TaskFailed(f"{where} is missing or null{rule}")
            val = val[step]
        try:
            return _timestamp_of(val, where)
        except TaskFailed as e:
            raise TaskFailed(f"{e}{rule}") from None
    raise TaskFailed(f"offset {offset}: RecordField needs a Struct or Map value, got "
                     f"{'a ' + str(stype) if stype else 'a schemaless ' + type(payload).__name__} value{rule}")

