"""The records of one topic-partition on an executor, and how an audited object's rows are
matched to them: by the model's encoding of the records an object should hold, else by
content (the digest of a row as the model's format decodes it).

A JSON value object that is byte for byte the records' own JSON text, one per line, matches
without encoding when that text has no float literal and no envelope: for such text the
model's encoding decodes to the same JSON value (integers, strings, booleans and nulls
round-trip; only floats are re-spelled). The first such object of every topic-partition is
also compared the model's way, and a disagreement turns the shortcut off there.
"""
from __future__ import annotations

import decimal
import hashlib
import json
import re
from typing import Any

import numpy as np

from reference_impl.config import SinkConfig

RECORD_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "value", "headers")

_FLOAT_LITERAL = re.compile(r"\d[.eE]")


def _norm(v: Any) -> Any:
    """A decoded value in a form whose JSON text is equal exactly when the values are (`==`):
    integral Decimals as ints, others normalised; bytes as base64."""
    if isinstance(v, dict):
        return {str(k): _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return str(v)
        n = v.normalize()
        return int(n) if n == n.to_integral_value() else {"$decimal": str(n)}
    if isinstance(v, float):
        return _norm(decimal.Decimal(repr(v))) if v == v and v not in (float("inf"), float("-inf")) else repr(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        import base64

        return {"$bytes": base64.b64encode(bytes(v)).decode()}
    return v


def content_digest(row: Any) -> bytes:
    """The digest of one decoded row: equal rows (as the model's format decodes them) have
    equal digests whatever the key order or number spelling."""
    text = json.dumps(_norm(row), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class TopicPartitionRecords:
    """The records of one topic-partition, sorted by offset (the first of an offset given
    twice kept: `duplicate_offsets` says how many were dropped), and how often each was seen."""

    def __init__(self, cfg: SinkConfig, topic: str, partition: int, records: Any):
        self.cfg = cfg
        self.topic, self.partition = topic, partition
        recs = records.sort_values("offset", kind="stable")
        dup = recs["offset"].duplicated(keep="first")
        self.duplicate_offsets = int(dup.sum())
        self.recs = recs[~dup].reset_index(drop=True)
        self.offsets = self.recs["offset"].to_numpy(dtype=np.int64)
        self.n = len(self.offsets)
        self.values = self.recs["value"].to_numpy(dtype=object)
        self.counts = np.zeros(self.n, dtype=np.int32)
        # 0: the model writes it to no object, 1: committed, 2: uncertain, 3: open tail,
        # 4: must be written at some time (constraints)
        self.status = np.zeros(self.n, dtype=np.int8)
        self.exact_key = np.full(self.n, -1, dtype=np.int32)  # the exact object holding it
        self.exact_keys: list[str] = []
        self.model_key = np.full(self.n, -1, dtype=np.int32)  # the model's value object for it
        self.model_keys: list[str] = []
        self.seen_in: dict[int, list[str]] = {}  # positions matched by content -> object keys
        self._digests: dict[bytes, list[int]] | None = None
        self._cursor: dict[int, int] = {}  # id(candidate list) -> first index that may be unseen
        self._turn: dict[int, int] = {}  # id(candidate list) -> extra copies handed out so far
        self.shortcut = cfg is not None and _json_value_objects(cfg)
        self.shortcut_checked = False

    def positions(self, offsets: np.ndarray) -> np.ndarray:
        """Positions of `offsets` among the records (-1 where the records lack one)."""
        if self.n == 0:
            return np.full(len(offsets), -1, dtype=np.int64)
        p = np.searchsorted(self.offsets, offsets)
        ok = (p < self.n) & (self.offsets[np.minimum(p, self.n - 1)] == offsets)
        return np.where(ok, p, -1)

    def records_at(self, pos: np.ndarray) -> list[Any]:
        from reference_impl.engine.columns import record_from_row

        rows = self.recs.iloc[pos]
        return [record_from_row(r) for r in rows[list(RECORD_COLUMNS)].to_dict("records")]

    # -- one object the model commits, against the object at its key --
    def same_as_model(self, pos: np.ndarray, view: str, data: bytes) -> tuple[bool, Any]:
        """(equal, why not): compare the object's bytes with the model's encoding of the
        records at `pos`."""
        if view == "value" and self.shortcut:
            raw = self._raw_text(pos)
            if raw is not None and _plain_equal(raw, data):
                if self.shortcut_checked:
                    return True, None
                # once per topic-partition: the model's own encoding must agree with the shortcut
                self.shortcut_checked = True
                ok, why = self._model_compare(pos, view, data)
                if not ok:
                    self.shortcut = False
                return ok, why
        return self._model_compare(pos, view, data)

    def _raw_text(self, pos: np.ndarray) -> bytes | None:
        vals = self.values[pos]
        if any(v is None or v == "null" for v in vals):
            return None
        return ("\n".join(vals) + "\n").encode("utf-8")

    def _model_compare(self, pos: np.ndarray, view: str, data: bytes) -> tuple[bool, Any]:
        from reference_impl.engine.contents import decode_view, encode_view
        from reference_impl.formats.compression import decompress

        try:
            expected = encode_view(self.cfg, self.records_at(pos), view)
        except Exception as e:  # the model cannot write these records: not the sink's fault
            return False, {"model": f"cannot encode: {type(e).__name__}: {e}"}
        try:
            if decompress(expected) == decompress(data):
                return True, None
        except Exception:
            pass
        exp_rows = decode_view(self.cfg, expected, view)
        try:
            obs_rows = decode_view(self.cfg, data, view)
        except Exception as e:
            return False, {"undecodable": f"{type(e).__name__}: {str(e)[:200]}", "expected_rows": len(exp_rows)}
        if obs_rows == exp_rows:
            return True, None
        i = next((k for k, (a, b) in enumerate(zip(exp_rows, obs_rows)) if a != b), min(len(exp_rows), len(obs_rows)))
        return False, {
            "expected_rows": len(exp_rows), "observed_rows": len(obs_rows), "first_difference_at_row": i,
            "expected_row": _short(exp_rows[i]) if i < len(exp_rows) else None,
            "observed_row": _short(obs_rows[i]) if i < len(obs_rows) else None,
        }

    # -- matching rows to records by content --
    def digests(self) -> dict[bytes, list[int]]:
        """digest -> positions of the records whose model encoding decodes to that row."""
        if self._digests is not None:
            return self._digests
        from reference_impl.engine.contents import decode_view, encode_view

        out: dict[bytes, list[int]] = {}
        self._pos_digest: list[bytes | None] = [None] * self.n
        for p in range(self.n):
            v = self.values[p]
            try:
                if self.shortcut and v is not None and v != "null" and not _FLOAT_LITERAL.search(v) and '"schema"' not in v:
                    # the same JSON value the model's encoding decodes to (see the module doc)
                    d = content_digest(json.loads(v, parse_float=decimal.Decimal))
                else:
                    rows = decode_view(self.cfg, encode_view(self.cfg, self.records_at(np.array([p])), "value"), "value")
                    if len(rows) != 1:
                        continue
                    d = content_digest(rows[0])
            except Exception:
                continue  # a record the model cannot write matches no row
            out.setdefault(d, []).append(p)
            self._pos_digest[p] = d
        self._digests = out
        return out

    def match_rows(self, key: str, data: bytes, start: int | None) -> tuple[list[int], int] | None:
        """Count the rows of an object by content. Returns (matched positions, rows matching no
        record), or None when it does not decode. Among records with equal contents the one
        the key's start offset names (R5.1) is preferred, then the one seen least."""
        from reference_impl.engine.contents import decode_view

        try:
            rows = decode_view(self.cfg, data, "value")
        except Exception:
            return None
        by_digest = self.digests()
        start_pos = self.positions(np.array([start], dtype=np.int64))[0] if start is not None else -1
        matched, foreign = [], 0
        for i, row in enumerate(rows):
            d = content_digest(row)
            cands = by_digest.get(d)
            if not cands:
                foreign += 1
                continue
            hint = start_pos + i if start_pos >= 0 else -1
            p = hint if 0 <= hint < self.n and self._pos_digest[hint] == d else self._least_seen(cands)
            self.counts[p] += 1
            self.seen_in.setdefault(p, []).append(key)
            matched.append(p)
        return matched, foreign

    def _least_seen(self, cands: list[int]) -> int:
        """The first candidate not seen yet, else the candidates in turn, so that extra copies
        of equal records spread over them. Cursors keep a topic with many equal records
        (heartbeats) linear, not quadratic."""
        key = id(cands)
        i = self._cursor.get(key, 0)
        while i < len(cands) and self.counts[cands[i]] > 0:
            i += 1
        self._cursor[key] = i
        if i < len(cands):
            return cands[i]
        turn = self._turn.get(key, 0)
        self._turn[key] = turn + 1
        return cands[turn % len(cands)]

    def keys_holding(self, p: int) -> list[str]:
        keys = [self.exact_keys[self.exact_key[p]]] if self.exact_key[p] >= 0 else []
        return keys + self.seen_in.get(p, [])


def _json_value_objects(cfg: SinkConfig) -> bool:
    from reference_impl.formats import format_for

    return format_for(cfg.format_class).name == "json"


def _plain_equal(raw: bytes, data: bytes) -> bool:
    """The object is exactly the records' JSON text, and that text is one the model's encoding
    decodes to the same values (no float literal, no JsonConverter envelope)."""
    from reference_impl.formats.compression import decompress

    if data[:2] == b"\x1f\x8b":
        try:
            data = decompress(data)
        except Exception:
            return False
    if data != raw:
        return False
    text = raw.decode("utf-8")
    return not _FLOAT_LITERAL.search(text) and '"schema"' not in text


def _short(v: Any, limit: int = 300) -> str:
    text = json.dumps(_norm(v), sort_keys=True, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
