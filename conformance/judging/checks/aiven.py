"""The properties of Aiven's S3 sink that are its own, checked on what it wrote (no model: its
object boundaries follow Kafka Connect's offset flushes): its naming template, the bound
`file.max.records` puts on each object, and each record's fields as `format.output.fields`
asks for them. The config read is the one the sink ran under (RunData.connector).
"""
from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Any, Mapping

from conformance.judging.checks.base import RunData, _at, _verdict
from conformance.judging.objects import aiven_fields, aiven_groups_by_key, aiven_key, aiven_records, aiven_rows
from conformance.judging.verdicts import UNKNOWN, Verdict, Witness
from reference_impl.connect_data import SinkRecord


def _record_at(d: RunData) -> dict[tuple[str, int, int], SinkRecord]:
    return {(r.topic, r.partition, r.offset): r for r in d.records}


def _key_text(key: Any) -> str | None:
    if key is None:
        return None
    return key.decode("utf-8", "replace") if isinstance(key, (bytes, bytearray)) else str(key)


def first_row_offset(obj: Any, cfg: Mapping[str, str], first_record: int) -> int:
    """The offset of an object's first row where its fields carry one, else that of its first
    record (a tombstone is a row, written with an empty value, before the record after it)."""
    if obj.body is None or "offset" not in aiven_fields(cfg):
        return first_record
    try:
        rows = aiven_rows(obj.body, cfg)
        return int(rows[0]["offset"]) if rows else first_record
    except (ValueError, KeyError, TypeError):
        return first_record


def aiven_naming(d: RunData) -> Verdict:
    """Each key is Aiven's name for its first record: the template filled in (with the record's
    key for a `{{key}}` template), the default's extensions, or `aws.s3.prefix`'s legacy name."""
    cfg = d.connector
    by_key = aiven_groups_by_key(cfg)
    records = _record_at(d)
    w, checked = [], 0
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if not offs:
            continue
        (topic, p), start = offs[0]
        # the name's start offset is the file's first row, a tombstone (which holds no record) too
        start = first_row_offset(obj, cfg, start)
        rec = records.get((topic, p, start))
        want = aiven_key(cfg, topic, p, start, _key_text(rec.key) if by_key and rec is not None else None)
        if want is None:
            return Verdict("naming", UNKNOWN, False, message="file.name.template names files by a timestamp: "
                                                             "no name to predict")
        checked += 1
        if obj.key != want:
            w.append(Witness("bad-name", (_at((topic, p), start),), (obj.key,), expected=want, observed=obj.key,
                             explanation="the key is not Aiven's name for its first record (file.name.template, "
                                         "file.compression.type, aws.s3.prefix)"))
    return _verdict("naming", w, f"{checked} keys are Aiven's names for their first records",
                    f"{len(w)} objects misnamed")


def aiven_file_count(d: RunData) -> Verdict:
    """`file.max.records` splits each flush's records of a partition: no object holds more, and
    an object holds one partition's records in offset order."""
    # a config update may set it anew (the translation carries flush.size to file.max.records): the
    # records read after the update are split by the new bound, those before by the old one
    limits = [d.connector.get("file.max.records", "0")] + [
        dict(f.params.get("config", {})).get("file.max.records", "0")
        for f in d.observation.faults if f.fired and f.kind == "update-config"]
    limit = 0 if any(int(x or 0) == 0 for x in limits) else max(int(x) for x in limits)
    w, checked = [], 0
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if not offs:
            continue
        checked += 1
        tp, start = offs[0]
        if limit and len(offs) > limit:
            w.append(Witness("too-many-records", (_at(tp, start),), (obj.key,), expected=f"<= {limit}",
                             observed=len(offs), explanation=f"file.max.records is {limit}"))
        if not aiven_groups_by_key(d.connector) and (
                any(t != tp for t, _ in offs) or [o for _, o in offs] != sorted(o for _, o in offs)):
            w.append(Witness("mixed-object", (_at(tp, start),), (obj.key,), observed=[_at(t, o) for t, o in offs],
                             explanation="an object of the topic-partition grouping holds other partitions' "
                                         "records or records out of offset order"))
    bound = f"at most {limit} records each" if limit else "file.max.records unset: one object per partition per flush"
    return _verdict("file-count", w, f"{checked} objects, {bound}", f"{len(w)} objects break file.max.records")


def _iso(ts: int) -> str:
    """Java's DateTimeFormatter.ISO_INSTANT of epoch millis (no fraction when it is zero)."""
    t = datetime.fromtimestamp(ts / 1000, tz=timezone.utc)
    frac = f".{ts % 1000:03d}" if ts % 1000 else ""
    return t.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"


def _expected_field(name: str, rec: SinkRecord, kind: str) -> Any:
    """What Aiven writes for `name` of `rec` in a `kind` object (PlainOutputWriter for csv, the
    JSON field builders for json and jsonl)."""
    if name == "offset":
        return str(rec.offset) if kind == "csv" else rec.offset
    if name == "timestamp":
        if rec.timestamp is None:
            return None
        return str(rec.timestamp) if kind == "csv" else _iso(rec.timestamp)
    key = _key_text(rec.key)
    if key is None:
        return "" if kind == "csv" else None
    return base64.b64encode(key.encode()).decode() if kind == "csv" else rec.key


def aiven_contents(d: RunData) -> Verdict:
    """Every record of every object carries the fields `format.output.fields` names, as the
    record was produced: its offset, timestamp and (a text key) key; the value is how the record
    is found at all. Avro and parquet rows are read for their values only."""
    cfg = d.connector
    kind = cfg.get("format.output.type", "csv").lower()
    fields = [f for f in cfg.get("format.output.fields", "value").split(",") if f.strip() in ("offset", "timestamp", "key")]
    records = _record_at(d)
    w, checked = [], 0
    for obj in d.value_objects(d.observation.final_bucket):
        offs = d.offsets_of(obj)
        if offs is None or obj.body is None:
            w.append(Witness("undecodable-object", keys=(obj.key,),
                             explanation=f"not {kind} of {cfg.get('format.output.fields', 'value')} holding the records' values"))
            continue
        rows = aiven_records(obj.body, cfg)
        for ((topic, p), o), row in zip(offs, rows):
            rec = records[(topic, p, o)]
            checked += 1
            for f in (f.strip() for f in fields) if kind in ("csv", "json", "jsonl") else ():
                if f == "key" and not isinstance(rec.key, (str, type(None))):
                    continue
                want, got = _expected_field(f, rec, kind), row.get(f)
                if got != want:
                    w.append(Witness("wrong-field", (_at((topic, p), o),), (obj.key,), expected={f: want},
                                     observed={f: got}, explanation=f"the record's {f} as Aiven writes it in {kind}"))
    return _verdict("contents", w, f"{checked} records in {kind} with their fields as produced",
                    f"{len(w)} fields differ from the records'")
