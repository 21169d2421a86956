"""Lenses' S3 sink (stream-reactor) naming, checked on what it wrote: each data object (outside
`.indexes/`) is named `<prefix>/<topic>/<partition>/<offset of its last record, 12 digits>_<earliest
record timestamp>_<latest record timestamp>.<ext>` (CloudKeyNamer with OffsetFileNamer and the
default LeftPad of 12), the prefix being KCQL's `INSERT INTO bucket:prefix`.
"""
from __future__ import annotations

import re

from conformance.judging.checks.base import RunData, _at, _verdict
from conformance.judging.objects import lenses_format, lenses_key
from conformance.judging.verdicts import Verdict, Witness

_INTO = re.compile(r"INSERT\s+INTO\s+`?[^:`\s]+`?(?::(\S+))?", re.IGNORECASE)


def lenses_prefix(config: dict[str, str]) -> str:
    m = _INTO.search(config.get("connect.s3.kcql", ""))
    return (m.group(1) or "").strip("`/") if m else ""


def lenses_naming(d: RunData) -> Verdict:
    cfg = d.connector
    prefix, ext = lenses_prefix(cfg), lenses_format(cfg).lower()
    stamps = {(r.topic, r.partition, r.offset): r.timestamp for r in d.records}
    w, checked = [], 0
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if not offs:
            continue
        (topic, p), last = offs[-1]
        ts = [stamps.get((t, q, o)) or 0 for (t, q), o in offs]
        want = lenses_key(prefix, topic, p, last, min(ts), max(ts), ext)
        checked += 1
        if obj.key != want:
            w.append(Witness("bad-name", (_at((topic, p), last),), (obj.key,), expected=want, observed=obj.key,
                             explanation="the key is not Lenses' name for its records (last offset, earliest and "
                                         "latest timestamps)"))
    return _verdict("naming", w, f"{checked} keys are Lenses' names for their records", f"{len(w)} objects misnamed")
