"""Time arithmetic as Joda-Time does it for the connector: zone offsets, time buckets (R6.3),
the scheduled-rotation boundary (R3.4, DTU) and Joda `DateTimeFormat` patterns."""
from __future__ import annotations

import datetime as dt
import functools
import zoneinfo

DAY_MS = 86_400_000
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@functools.lru_cache(maxsize=64)
def zone(tz_id: str) -> dt.tzinfo:
    if tz_id in ("UTC", "Z", ""):
        return dt.timezone.utc
    return zoneinfo.ZoneInfo(tz_id)


def offset_ms(instant_ms: int, tz: dt.tzinfo) -> int:
    t = _EPOCH + dt.timedelta(milliseconds=instant_ms)
    off = t.astimezone(tz).utcoffset()
    return int(off.total_seconds() * 1000) if off else 0


def utc_to_local(instant_ms: int, tz: dt.tzinfo) -> int:
    """Joda `convertUTCToLocal`: local epoch milliseconds."""
    return instant_ms + offset_ms(instant_ms, tz)


def local_to_utc(local_ms: int, tz: dt.tzinfo) -> int:
    """Joda `convertLocalToUTC(local, strict=false)` via `getOffsetFromLocal`: in a gap the
    later offset's instant, in an overlap the earlier offset (Joda prefers the earlier)."""
    off_local = offset_ms(local_ms, tz)
    off = offset_ms(local_ms - off_local, tz)
    if off_local != off:
        if off_local - off < 0:
            next_local = offset_ms(local_ms - off_local, tz)
            next_adjusted = offset_ms(local_ms - off, tz)
            if next_local != next_adjusted:
                return local_ms - off_local
    elif off_local >= 0:
        prev = offset_ms(local_ms - off_local - 1, tz)
        if prev > off_local:
            return local_ms - prev
    return local_ms - off


def _java_div(a: int, b: int) -> int:
    """Java's `/` truncates toward zero (negative timestamps land in the wrong bucket, R6.3)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def bucket_start(ts_ms: int, duration_ms: int, tz: dt.tzinfo) -> int:
    """R6.3: floor on local epoch milliseconds, back to UTC. `duration_ms == 0` divides by
    zero in the connector; callers turn ZeroDivisionError into the task failure."""
    local = utc_to_local(ts_ms, tz)
    return local_to_utc(_java_div(local, duration_ms) * duration_ms, tz)


def next_scheduled_rotation(now_ms: int, interval_ms: int, tz: dt.tzinfo) -> int:
    """R3.4/DTU `getNextTimeAdjustedByDay`: the first boundary strictly after `now`, where
    boundaries are local midnight + k × interval and the day's last slot ends at midnight."""
    local_day = _java_div(utc_to_local(now_ms, tz), DAY_MS)
    start_of_day = local_to_utc(local_day * DAY_MS, tz)
    next_start_of_day = local_to_utc((local_day + 1) * DAY_MS, tz)
    next_time = start_of_day + (_java_div(now_ms - start_of_day, interval_ms) + 1) * interval_ms
    return min(next_time, next_start_of_day)


# --- Joda DateTimeFormat patterns ----------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class PatternError(ValueError):
    pass


@functools.lru_cache(maxsize=256)
def compile_pattern(pattern: str) -> tuple[tuple[str, int | str], ...]:
    """Split a Joda pattern into ("lit", text) and (letter, count) tokens."""
    out: list[tuple[str, int | str]] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            j = i + 1
            if j < n and pattern[j] == "'":
                out.append(("lit", "'"))
                i += 2
                continue
            buf = []
            while j < n:
                if pattern[j] == "'":
                    if j + 1 < n and pattern[j + 1] == "'":
                        buf.append("'")
                        j += 2
                        continue
                    break
                buf.append(pattern[j])
                j += 1
            # Joda's parseToken toggles in and out of a quote and never checks it was closed:
            # an unterminated quote makes the rest of the pattern literal text
            out.append(("lit", "".join(buf)))
            i = j + 1
        elif c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            if c not in "GCYyxwewEDMdahKkHmsSzZ":
                raise PatternError(f"Illegal pattern component: {c * (j - i)}")
            out.append((c, j - i))
            i = j
        else:
            out.append(("lit", c))
            i += 1
    return tuple(out)


def format_instant(instant_ms: int, pattern: str, tz: dt.tzinfo) -> str:
    """Format like Joda `DateTimeFormat.forPattern(p).withZone(tz)` (English text fields)."""
    t = (_EPOCH + dt.timedelta(milliseconds=instant_ms)).astimezone(tz)
    iso_year, iso_week, iso_day = t.isocalendar()
    parts: list[str] = []
    for kind, count in compile_pattern(pattern):
        if kind == "lit":
            parts.append(str(count))
            continue
        assert isinstance(count, int)
        if kind in "yY":  # Joda: YYYY is year-of-era, same as yyyy for AD years (R6.3)
            parts.append(f"{t.year % 100:02d}" if count == 2 else f"{t.year:0{count}d}")
        elif kind == "x":
            parts.append(f"{iso_year % 100:02d}" if count == 2 else f"{iso_year:0{count}d}")
        elif kind == "C":
            parts.append(f"{t.year // 100:0{count}d}")
        elif kind == "w":
            parts.append(f"{iso_week:0{count}d}")
        elif kind == "e":
            parts.append(f"{iso_day:0{count}d}")
        elif kind == "E":
            name = _DAYS[iso_day - 1]
            parts.append(name if count >= 4 else name[:3])
        elif kind == "D":
            parts.append(f"{t.timetuple().tm_yday:0{count}d}")
        elif kind == "M":
            if count >= 4:
                parts.append(_MONTHS[t.month - 1])
            elif count == 3:
                parts.append(_MONTHS[t.month - 1][:3])
            else:
                parts.append(f"{t.month:0{count}d}")
        elif kind == "d":
            parts.append(f"{t.day:0{count}d}")
        elif kind == "a":
            parts.append("AM" if t.hour < 12 else "PM")
        elif kind == "h":
            parts.append(f"{(t.hour % 12) or 12:0{count}d}")
        elif kind == "K":
            parts.append(f"{t.hour % 12:0{count}d}")
        elif kind == "k":
            parts.append(f"{t.hour or 24:0{count}d}")
        elif kind == "H":
            parts.append(f"{t.hour:0{count}d}")
        elif kind == "m":
            parts.append(f"{t.minute:0{count}d}")
        elif kind == "s":
            parts.append(f"{t.second:0{count}d}")
        elif kind == "S":
            parts.append(f"{t.microsecond // 1000:03d}"[:count].ljust(count, "0"))
        elif kind == "G":
            parts.append("AD" if t.year > 0 else "BC")
        elif kind == "Z":
            off = t.utcoffset() or dt.timedelta(0)
            total = int(off.total_seconds() // 60)
            sign = "+" if total >= 0 else "-"
            hh, mm = divmod(abs(total), 60)
            parts.append(f"{sign}{hh:02d}{':' if count >= 2 else ''}{mm:02d}")
        elif kind == "z":
            parts.append(t.tzname() or "UTC")
    return "".join(parts)
