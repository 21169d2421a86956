"""Contents (R10): each object's bytes against the model's, its views (keys, headers) included,
with the first difference as the witness."""
from __future__ import annotations

from typing import Any

from adapters.observation import S3Object
from conformance.judging.claims import C1, C4
from conformance.judging.verdicts import UNKNOWN, Verdict, Witness
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.contents import decode_view, encode_view, view_format_class
from conformance.judging.checks.base import (RunData, _at, _committed_past, _sibling, _sink_internal, _verdict,
    check)
from conformance.judging.checks.evolution import projection_witness


def first_difference(expected: bytes, observed: bytes, context: int = 24) -> dict[str, Any]:
    """Where two byte strings first differ: the byte offset, the record (line) it falls in, and
    the bytes around it on each side."""
    at = next((i for i, (a, b) in enumerate(zip(expected, observed)) if a != b), min(len(expected), len(observed)))
    lo = max(0, at - context)
    return {"at": at, "record": expected.count(b"\n", 0, at),
            "expected": expected[lo:at + context], "observed": observed[lo:at + context],
            "lengths": (len(expected), len(observed))}


def _content_witness(obj_key: str, view: str, expected: bytes, observed: bytes, fmt: str) -> Witness | None:
    from reference_impl.formats.compression import decompress

    exp_raw, obs_raw = decompress(expected), decompress(observed)
    if (expected[:2] == b"\x1f\x8b") != (observed[:2] == b"\x1f\x8b"):
        return Witness("wrong-compression", keys=(obj_key,),
                       expected="gzip" if expected[:2] == b"\x1f\x8b" else "uncompressed",
                       observed="gzip" if observed[:2] == b"\x1f\x8b" else "uncompressed",
                       explanation=f"the {view} object is not compressed as s3.compression.type says (R10.1)")
    if exp_raw == obs_raw:
        return None
    diff = first_difference(exp_raw, obs_raw)
    return Witness("different-bytes", keys=(obj_key,), expected=repr(diff["expected"]), observed=repr(diff["observed"]),
                   explanation=f"the {view} object differs from the model's {fmt} encoding of its records at byte "
                               f"{diff['at']} (record {diff['record']}; {diff['lengths'][0]} bytes expected, "
                               f"{diff['lengths'][1]} observed)")


def _rows_witness(d: RunData, obj_key: str, view: str, expected: bytes, observed: bytes, fmt: str) -> Witness | None:
    from reference_impl.engine.contents import jsonable

    try:
        got = jsonable(decode_view(d.cfg, observed, view))
    except Exception as e:  # noqa: BLE001 - an object its own format cannot read
        return Witness("undecodable-object", keys=(obj_key,), explanation=f"the {view} object is no {fmt} file: {e}")
    want = jsonable(decode_view(d.cfg, expected, view))
    if got == want:
        return _schema_witness(d, obj_key, view, expected, observed, fmt)
    i = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    return Witness("different-rows", keys=(obj_key,), expected=want[i] if i < len(want) else f"{len(want)} rows",
                   observed=got[i] if i < len(got) else f"{len(got)} rows",
                   explanation=f"row {i} of the {view} object differs from the model's {fmt} encoding of its records")


def _schema_witness(d: RunData, obj_key: str, view: str, expected: bytes, observed: bytes, fmt: str) -> Witness | None:
    """The writer schema the object declares against the model's (R10.3, R10.4: AvroData's
    schema of the file's first record), in the parts a reader reads the data by: a timestamp
    written as a plain long reads back as the same number, and is still not the same data."""
    from reference_impl.engine.contents import writer_schema_shape

    want = writer_schema_shape(d.cfg, expected, view)
    got = writer_schema_shape(d.cfg, observed, view)
    if want is None or got is None or want == got:
        return None  # a Parquet file without parquet-avro's footer schema has no Avro schema to compare
    expected_at, observed_at = _first_schema_difference(want, got)
    return Witness("different-schema", keys=(obj_key,), expected=expected_at, observed=observed_at,
                   explanation=f"the {view} object's {fmt} writer schema differs from the model's (AvroData's schema "
                               "of the file's first record): its rows read back differently typed")


def _first_schema_difference(want: Any, got: Any, path: str = "") -> tuple[Any, Any]:
    """The innermost record field where two schema shapes differ, each side with its path."""
    if (isinstance(want, list) and isinstance(got, list) and want[:1] == got[:1] == ["record"]
            and want[1] == got[1] and len(want[2]) == len(got[2])):
        for (name_a, a), (name_b, b) in zip(want[2], got[2]):
            if name_a == name_b and a != b:
                return _first_schema_difference(a, b, f"{path}/{name_a}")
    if isinstance(want, list) and isinstance(got, list) and want[:1] == got[:1] == ["union"] and len(want[1]) == len(got[1]):
        for i, (a, b) in enumerate(zip(want[1], got[1])):
            if a != b:
                return _first_schema_difference(a, b, f"{path}[{i}]")
    return {"at": path or "/", "schema": want}, {"at": path or "/", "schema": got}


def _tombstone_run(d: RunData, obj: S3Object, model_recs: list[SinkRecord], view: str) -> list[SinkRecord] | None:
    """The tombstones a tombstone file holds where the model's file boundaries do not bind (C1, a
    zombie across an update): its topic-partition's null values from the offset its key names,
    as many as the object holds (R3.3: a change to or from the tombstone partition rotates
    nothing, so they need not be consecutive offsets). None when no such run encodes as it."""
    from reference_impl.formats.compression import decompress

    first = model_recs[0] if model_recs else None
    if first is None or obj.body is None or d.cfg is None:
        return None
    tail = sorted((r for r in d.records if r.tp == first.tp and r.offset >= first.offset and r.value is None),
                  key=lambda r: r.offset)
    body = decompress(obj.body)
    for k in range(1, len(tail) + 1):
        try:
            if decompress(encode_view(d.cfg, tail[:k], view)) == body:
                return tail[:k]
        except Exception:  # noqa: BLE001 - records the model cannot write: compare() says so
            return None
    return None


@check("contents", "R10")
def contents(d: RunData) -> Verdict:
    """Every object of the final listing holds the model's encoding of the records it holds,
    byte for byte after decompression (JSON, ByteArray; Avro and Parquet row for row), and a
    data file's keys and headers objects (R11) sit beside its value object with the same
    records: none missing, none without its value object."""
    from reference_impl.formats import format_for
    from reference_impl.naming import sibling_key, view_extension, views_stored

    final = d.observation.final_bucket
    if d.cfg is None and d.claim.naming == "aiven" and final is not None:
        from conformance.judging.checks.aiven import aiven_contents

        return aiven_contents(d)
    if d.cfg is None or final is None:
        return Verdict("contents", UNKNOWN, False, message="no connector format to encode records with")
    cfg = d.cfg
    listed = {o.key: o for o in final.objects if not _sink_internal(o.key)}
    by_offset = {(r.topic, r.partition, r.offset): r for r in d.records}
    exact = d.expectation is not None and d.expectation.constraints is None
    model = {o.key: o for o in d.expectation.objects} if exact else {}
    tombstone_siblings = {k: o for o in model.values() if not o.value_object for _, k in o.sibling_keys}
    w: list[Witness] = []
    checked, unencodable = 0, 0
    st = d.observation.statuses
    task_died = (d.expectation is not None and d.expectation.task_failure is not None) or (
        bool(st) and ("FAILED" in st[-1].task_states or st[-1].connector_state == "FAILED"))

    def compare(obj: S3Object, recs: list[SinkRecord], view: str) -> None:
        nonlocal checked, unencodable
        if obj.body is None:
            return
        fmt = format_for(view_format_class(cfg, view)).name
        try:
            expected = encode_view(cfg, recs, view)
        except Exception:  # noqa: BLE001 - records the model cannot write: other checkers say so
            unencodable += 1
            return
        checked += 1
        found = (_content_witness(obj.key, view, expected, obj.body, fmt) if fmt in ("json", "bytearray")
                 else _rows_witness(d, obj.key, view, expected, obj.body, fmt))
        if found is not None and view == "value":
            found = _projection(obj, recs, expected) or found
        if found is not None:
            w.append(found)

    def _projection(obj: S3Object, recs: list[SinkRecord], expected: bytes) -> Witness | None:
        from reference_impl.engine.contents import jsonable

        try:
            want, got = jsonable(decode_view(cfg, expected, "value")), jsonable(decode_view(cfg, obj.body, "value"))
        except Exception:  # noqa: BLE001 - an object its own format cannot read: the first witness says so
            return None
        return projection_witness(cfg, obj.key, recs, want, got, _at)

    value_keys = set()
    for obj in d.value_objects(final):
        value_keys.add(obj.key)
        m = model.get(obj.key) if d.boundaries else None
        if m is not None and m.value_object:
            recs = [by_offset[(m.topic, m.partition, o)] for o in m.offsets if (m.topic, m.partition, o) in by_offset]
        else:
            offs = d.offsets_of(obj)
            if not offs:
                continue  # undecodable or unknown records: no-loss and atomic-visibility say so
            recs = [by_offset[(tp[0], tp[1], o)] for tp, o in offs if (tp[0], tp[1], o) in by_offset]
        compare(obj, recs, "value")
        for view in views_stored(cfg):
            sk = sibling_key(cfg, obj.key, view)
            if sk is None:
                continue
            if sk not in listed:
                if task_died or not _committed_past(d, obj):
                    # a dead task leaves a file set half committed (R11.1: not atomic); a set cut
                    # by a retriable error is written again whole once its records come round
                    # (R1.5), which an open tail after quiet still waits for
                    continue
                w.append(Witness("missing-sibling", keys=(obj.key, sk), expected=sk, observed=None,
                                 explanation=f"the data file's {view} object is not in the bucket beside its value "
                                             "object after quiet (R11.1)"))
            elif C4 not in d.claim.caveats:
                # under C4 a zombie's value object can replace its successor's and leave the
                # successor's keys and headers beside it: they are compared with nothing
                compare(listed[sk], recs, view)
    value_ext = view_extension(cfg, "value")
    for key, obj in sorted(listed.items()):
        if not _sibling(key):
            continue
        view = "keys" if ".keys." in key else "headers"
        m = tombstone_siblings.get(key)
        if m is not None:  # a tombstone file: keys (and headers) only (R12.3)
            recs = [by_offset[(m.topic, m.partition, o)] for o in m.offsets]
            if not d.boundaries:  # it starts where its key says; where it ends, the run decided
                recs = _tombstone_run(d, obj, recs, view) or recs
            compare(obj, recs, view)
            continue
        suffix = f".{view}{view_extension(cfg, view)}"
        owner = key[: -len(suffix)] + value_ext if key.endswith(suffix) else None
        if owner in value_keys:
            continue
        # a tombstone file holds keys (and headers) only (R12.3); where the model's boundaries do
        # not bind (C1, a zombie across an update) one may start at another offset than its
        if (exact and d.boundaries) or cfg.tombstone_encoded_partition not in key:
            w.append(Witness("orphan-sibling", keys=(key,), expected=owner, observed=None,
                             explanation=f"a {view} object without the value object it belongs beside (R11.1)"
                                         if not exact else f"a {view} object the model has no file for"))
    return _verdict("contents", w, f"{checked} objects hold the model's encoding of their records",
                    f"{len(w)} objects differ from the model's encoding or stand without their siblings",
                    checked=checked, unencodable=unencodable)
