"""The audit: a topic's records beside the bucket a sink wrote, checked after the fact on Spark.

    records ──► the model's engine (fold_manifest) ──► expected objects, open tail ─┐
    s3a://bucket/prefix ──► every object's bytes (Spark's S3A) ─────────────────────┼─► per topic-partition
    records ─────────────────────────────────────────────────────────────────────────┘   comparison

Everything heavy runs on Spark executors, one topic-partition per group: the records of a
topic-partition, its expected objects and the objects found under its keys meet in one
`cogroup`. Each object the model commits is encoded from its records with the model's format
code and compared with the object at that key; objects that differ, and objects the model
has no key for, are decoded and their rows matched to records by content: the digest of a
row as the model's format decodes it, per topic-partition (records carry no `seq` marker in a
real audit). Only per-topic-partition summaries with capped witness lists reach the driver.

What counts as what, per topic-partition:
* lost: a record in an object the model commits (certain) that no object in the bucket holds;
* not yet visible: a record of the model's open tail (or of an object the model is unsure
  about because its task dies) that no object holds; reported, never a failure;
* duplicated: a record held by two or more objects (or twice by one);
* different-object / missing-object / unexpected-object: keys or contents that differ from
  the model's objects (exact-object-set). With scheduled rotation or the Wallclock extractor
  the model gives constraints, not objects: exact-object-set is unknown, and a record is lost
  only when a later record of its topic-partition is visible (offsets commit in order, R4).

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
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import unquote, urlparse

import numpy as np

from conformance.claims import Claim, claim_for
from conformance.runner import RunResult
from conformance.scenario import Scenario
from conformance.verdicts import FAIL, PASS, UNKNOWN, Verdict, Witness
from reference_impl.config import SinkConfig

WITNESS_CAP = 20  # witnesses kept per anomaly and topic-partition; counts are always exact
OFFSETS_SHOWN = 10  # offsets listed in one witness
SUMMARY_DDL = "topic string, partition int, summary string"
# the model's manifest rows and the observed objects travel together into the cogroup
OTHER_DDL = ("kind string, topic string, partition int, key string, first_offset long, last_offset long, "
             "offsets array<long>, siblings string, value_object boolean, certain boolean, rotation string, "
             "rule string, message string, failure_offset long, view string, content binary")
_OTHER_COLUMNS = [c.split()[0] for c in OTHER_DDL.split(", ")]
RECORD_COLUMNS = ("topic", "partition", "offset", "timestamp", "key", "value", "headers")


class AuditInputError(ValueError):
    """Bad audit input (bucket URL, records, S3 access): the message says what to fix."""


# --- where to look ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BucketLocation:
    """`s3://bucket/prefix`: the prefix is a directory (S3A lists it as one); '' is the bucket."""

    bucket: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> "BucketLocation":
        u = urlparse(url)
        if u.scheme not in ("s3", "s3a") or not u.netloc:
            raise AuditInputError(f"--bucket {url!r}: give s3://BUCKET/PREFIX (e.g. s3://my-bucket/topics)")
        if u.query or u.fragment:
            raise AuditInputError(f"--bucket {url!r}: no '?' or '#' parts; give s3://BUCKET/PREFIX")
        if not re.fullmatch(r"[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9]", u.netloc):
            raise AuditInputError(f"--bucket {url!r}: {u.netloc!r} is not a valid S3 bucket name "
                                  "(3-63 characters: lower-case letters, digits, '.' and '-')")
        prefix = u.path.strip("/")
        if "//" in prefix:
            raise AuditInputError(f"--bucket {url!r}: the prefix has an empty path segment, which S3A cannot address")
        return cls(u.netloc, prefix)

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    @property
    def s3a_url(self) -> str:
        return f"s3a://{self.bucket}/{self.prefix}"

    @property
    def key_prefix(self) -> str:
        """What every key under the location starts with."""
        return f"{self.prefix}/" if self.prefix else ""


@dataclass(frozen=True)
class S3Access:
    """How Spark's S3A reaches the bucket. Nothing set means S3A's defaults (AWS, its
    credential chain)."""

    endpoint: str | None = None
    region: str | None = None
    path_style: bool | None = None
    access_key: str | None = None
    secret_key: str | None = None

    @classmethod
    def resolve(cls, connector: dict[str, str], endpoint: str | None = None,
                env: dict[str, str] | None = None) -> "S3Access":
        """--s3-endpoint, else the connector's `store.url`; credentials from the environment
        (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY), else the connector's own keys, so that the
        audit reads with what the sink wrote with unless told otherwise."""
        env = dict(os.environ) if env is None else env
        endpoint = endpoint or connector.get("store.url") or None
        if endpoint is not None:
            u = urlparse(endpoint)
            if u.scheme not in ("http", "https") or not u.netloc:
                raise AuditInputError(f"S3 endpoint {endpoint!r}: give http://HOST:PORT or https://HOST")
        key: str | None = None
        secret: str | None = None
        for where, k, sk in (("AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", env.get("AWS_ACCESS_KEY_ID"),
                              env.get("AWS_SECRET_ACCESS_KEY")),
                             ("aws.access.key.id/aws.secret.access.key in the config", connector.get("aws.access.key.id"),
                              connector.get("aws.secret.access.key"))):
            if bool(k) != bool(sk):
                raise AuditInputError(f"S3 credentials: {where}: an access key id needs its secret key and the other "
                                      "way round")
            if k and key is None:
                key, secret = k, sk  # a pair from one place, never one half from each
        region = connector.get("s3.region") or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None
        style = connector.get("s3.path.style.access.enabled")
        path_style = None if style is None else style.strip().lower() == "true"
        if path_style is None and endpoint is not None:
            path_style = True  # S3-compatible servers on a host:port rarely resolve bucket subdomains
        return cls(endpoint, region, path_style, key, secret)

    def client(self) -> Any:
        """A boto3 client for the same endpoint and credentials (S3's listing, the few objects
        Spark's file sources skip, and the reachability check before Spark starts)."""
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region or "us-east-1",
                            aws_access_key_id=self.access_key, aws_secret_access_key=self.secret_key,
                            config=Config(s3={"addressing_style": "path" if self.path_style else "auto"},
                                          connect_timeout=5, read_timeout=30, retries={"max_attempts": 3}))

    def hadoop_conf(self) -> dict[str, str]:
        conf: dict[str, str] = {}
        if self.endpoint:
            conf["fs.s3a.endpoint"] = self.endpoint
            conf["fs.s3a.connection.ssl.enabled"] = "true" if self.endpoint.startswith("https:") else "false"
        if self.region:
            conf["fs.s3a.endpoint.region"] = self.region
        elif self.endpoint:
            conf["fs.s3a.endpoint.region"] = "us-east-1"  # S3A needs a region to sign for a custom endpoint
        if self.path_style is not None:
            conf["fs.s3a.path.style.access"] = "true" if self.path_style else "false"
        if self.access_key:
            conf["fs.s3a.access.key"] = self.access_key
            conf["fs.s3a.secret.key"] = self.secret_key or ""
            conf["fs.s3a.aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        return conf


# --- what one topic-partition's comparison returns ----------------------------------------------

@dataclass
class TopicPartitionAudit:
    """One topic-partition's audit, as counted on an executor. `topic` None holds the objects
    whose keys name no topic-partition (R5.1)."""

    topic: str | None
    partition: int | None
    records: int = 0
    committed: int = 0  # records in objects the model commits
    uncertain: int = 0  # records in objects the model may or may not commit (its task dies)
    open_tail: int = 0  # records of the model's open files
    expected_objects: int = 0
    observed_objects: int = 0
    exact_objects: int = 0
    lost: int = 0
    duplicated: int = 0
    not_yet_visible: int = 0
    extra_visible: int = 0  # records visible that the model does not commit (yet)
    missing: int = 0
    different: int = 0
    unexpected: int = 0
    undecodable: int = 0
    model_errors: int = 0  # objects of the model whose records its format code cannot encode
    foreign_rows: int = 0  # rows matching no record of this topic-partition
    outside_prefix: int = 0  # expected objects whose keys lie outside the audited prefix
    duplicate_offsets: int = 0  # offsets given twice in the records (the first is kept)
    constraints: bool = False
    failure: dict[str, Any] | None = None
    not_yet_visible_range: tuple[int, int] | None = None
    witnesses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return "(objects outside any topic-partition)" if self.topic is None else f"{self.topic}-{self.partition}"

    def to_json(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["not_yet_visible_range"] = list(self.not_yet_visible_range) if self.not_yet_visible_range else None
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "TopicPartitionAudit":
        d = dict(d)
        r = d.get("not_yet_visible_range")
        d["not_yet_visible_range"] = tuple(r) if r else None
        return cls(**d)

    def add(self, anomaly: str, w: Witness) -> None:
        ws = self.witnesses.setdefault(anomaly, [])
        if len(ws) < WITNESS_CAP:
            ws.append(w.to_json())


# --- comparing one topic-partition (runs on executors) ------------------------------------------

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


def _at(topic: str, partition: int, offset: int) -> str:
    return f"{topic}-{partition}@{offset}"


def _records_text(n: int) -> str:
    return f"{n} record" if n == 1 else f"{n} records"


def _runs(offsets: Sequence[int]) -> str:
    """'3..7, 9, 12..13' for sorted offsets."""
    out, i = [], 0
    offsets = list(offsets)
    while i < len(offsets):
        j = i
        while j + 1 < len(offsets) and offsets[j + 1] == offsets[j] + 1:
            j += 1
        out.append(str(offsets[i]) if i == j else f"{offsets[i]}..{offsets[j]}")
        i = j + 1
        if len(out) >= OFFSETS_SHOWN:
            if i < len(offsets):
                out.append("…")
            break
    return ", ".join(out)


@dataclass(frozen=True)
class CompareSettings:
    """What every executor needs to compare a topic-partition (pickled into the cogroup)."""

    cfg: SinkConfig
    key_prefix: str
    constraints: bool  # the model gives constraints, not objects
    others_uncertain: bool  # the model's task dies elsewhere: objects of healthy topic-partitions may not exist
    failing: frozenset[tuple[str, int]] = frozenset()


class _TopicPartition:
    """The records of one topic-partition, sorted by offset, and how often each was seen."""

    def __init__(self, settings: CompareSettings, topic: str, partition: int, records: Any, out: TopicPartitionAudit):
        self.cfg = settings.cfg
        self.topic, self.partition = topic, partition
        recs = records.sort_values("offset", kind="stable")
        dup = recs["offset"].duplicated(keep="first")
        out.duplicate_offsets = int(dup.sum())
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
        self.shortcut = settings.cfg is not None and _json_value_objects(settings.cfg)
        self.shortcut_checked = False

    def positions(self, offsets: np.ndarray) -> np.ndarray:
        """Positions of `offsets` among the records (-1 where the records lack one)."""
        if self.n == 0:
            return np.full(len(offsets), -1, dtype=np.int64)
        p = np.searchsorted(self.offsets, offsets)
        ok = (p < self.n) & (self.offsets[np.minimum(p, self.n - 1)] == offsets)
        return np.where(ok, p, -1)

    def records_at(self, pos: np.ndarray) -> list[Any]:
        from reference_impl.columns import record_from_row

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
        from reference_impl.contents import decode_view, encode_view
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
        from reference_impl.contents import decode_view, encode_view

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
        from reference_impl.contents import decode_view

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


def audit_topic_partition(settings: CompareSettings, records: Any, others: Any) -> TopicPartitionAudit:
    """Compare one topic-partition: `records` (pandas: RECORD_COLUMNS), `others` (pandas:
    OTHER_DDL rows: the model's manifest rows and the observed objects, kind 'observed')."""
    import pandas as pd

    cfg = settings.cfg
    if len(records):
        topic, partition = str(records["topic"].iloc[0]), int(records["partition"].iloc[0])
    elif len(others) and others["topic"].notna().iloc[0]:
        topic, partition = str(others["topic"].iloc[0]), int(others["partition"].iloc[0])
    else:
        topic, partition = None, None
    out = TopicPartitionAudit(topic, partition, constraints=settings.constraints)
    tp = _TopicPartition(settings, topic or "", partition or 0, records if len(records) else
                         pd.DataFrame({c: pd.Series(dtype=object) for c in RECORD_COLUMNS}), out)
    out.records = tp.n
    kinds = others["kind"].to_numpy(dtype=object) if len(others) else np.array([], dtype=object)
    observed: dict[str, tuple[str, bytes, int | None]] = {}
    for r in others[kinds == "observed"].itertuples(index=False):
        observed[r.key] = (r.view, bytes(r.content), None if pd.isna(r.first_offset) else int(r.first_offset))
    out.observed_objects = len(observed)

    if topic is None:
        # keys that name no topic-partition: nothing to compare them with
        for key in sorted(observed):
            out.unexpected += 1
            out.add("unexpected-object", Witness("unexpected-object", keys=(key,), observed=f"{len(observed[key][1])} bytes",
                                                 explanation="its key does not name a topic-partition and start offset (R5.1)"))
        return out

    to_match: list[tuple[str, bytes, int | None]] = []
    unexpected_info: dict[str, dict[str, Any]] = {}

    if settings.constraints:
        vals = tp.values
        tp.status[np.array([v is not None and v != "null" for v in vals], dtype=bool)] = 4
        for key, (view, data, start) in sorted(observed.items()):
            if view == "value":
                to_match.append((key, data, start))
    else:
        failure = others[kinds == "failure"]
        if len(failure):
            f = failure.iloc[0]
            out.failure = {"rule": f["rule"], "message": f["message"],
                           "offset": None if pd.isna(f["failure_offset"]) else int(f["failure_offset"])}
        # the model's task dies in another topic-partition's writer: with everything in one
        # put, whether this writer ran first is not fixed (R1.4), as model.resolve_failure says
        uncertain_here = settings.others_uncertain and (topic, partition) not in settings.failing
        for r in others[kinds == "open"].itertuples(index=False):
            pos = tp.positions(np.asarray(r.offsets, dtype=np.int64))
            pos = pos[pos >= 0]
            tp.status[pos] = 3
        for r in others[kinds == "object"].itertuples(index=False):
            offs = (np.asarray(r.offsets, dtype=np.int64) if r.offsets is not None
                    else np.arange(int(r.first_offset), int(r.last_offset) + 1, dtype=np.int64))
            views = ([("value", r.key)] if r.value_object else []) + sorted(
                (v, k) for v, k in json.loads(r.siblings or "{}").items())
            if not all(k.startswith(settings.key_prefix) for _, k in views):
                out.outside_prefix += 1
                continue
            out.expected_objects += 1
            pos = tp.positions(offs)
            if (pos < 0).any():
                raise ValueError(f"the model's object {r.key} holds offsets missing from the records")
            certain = bool(r.certain) and not uncertain_here
            if r.value_object:
                tp.model_key[pos] = len(tp.model_keys)
                tp.model_keys.append(r.key)
                tp.status[pos] = 1 if certain else 2
                if certain:
                    out.committed += len(pos)
                else:
                    out.uncertain += len(pos)
            all_exact = True
            for view, key in views:
                got = observed.pop(key, None)
                if got is None:
                    all_exact = False
                    if certain:
                        out.missing += 1
                        out.add("missing-object", Witness(
                            "missing-object", tuple(_at(topic, partition, int(o)) for o in offs[:OFFSETS_SHOWN]), (key,),
                            expected=f"{_records_text(len(offs))}, offsets {_runs(offs.tolist())}", observed="no such object",
                            explanation=f"the model commits this {view} object ({r.rotation}); it is not in the bucket"))
                    continue
                same, why = tp.same_as_model(pos, view, got[1])
                if same:
                    if view == "value":
                        tp.counts[pos] += 1
                        tp.exact_key[pos] = len(tp.exact_keys)
                        tp.exact_keys.append(key)
                    continue
                all_exact = False
                if why and "model" in why:
                    # the model itself cannot write these records: nothing to hold the sink to
                    out.model_errors += 1
                    tp.status[pos] = 0
                    out.add("model-error", Witness("model-error", keys=(key,), observed=why,
                                                   explanation="the model cannot encode this object's records"))
                    continue
                out.different += 1
                if why and "undecodable" in why:
                    out.undecodable += 1
                out.add("different-object", Witness(
                    "different-object", tuple(_at(topic, partition, int(o)) for o in offs[:OFFSETS_SHOWN]), (key,),
                    expected=f"{_records_text(len(offs))}, offsets {_runs(offs.tolist())}", observed=why,
                    explanation=f"the {view} object at the model's key holds other contents than the model's"))
                if view == "value":
                    to_match.append((key, got[1], int(offs[0])))
            if all_exact:
                out.exact_objects += 1
        for key, (view, data, start) in sorted(observed.items()):
            out.unexpected += 1
            unexpected_info[key] = {"view": view, "bytes": len(data)}
            if view == "value":
                to_match.append((key, data, start))
    out.open_tail = int((tp.status == 3).sum())

    for key, data, start in to_match:
        got = tp.match_rows(key, data, start)
        info = unexpected_info.get(key)
        if got is None:
            if info is not None:
                info["undecodable"] = True
                out.undecodable += 1
            continue
        matched, foreign = got
        out.foreign_rows += foreign
        if info is not None:
            offs = sorted(int(tp.offsets[p]) for p in matched)
            info.update({"rows": len(matched) + foreign, "records": _runs(offs) if offs else "none",
                         "rows_matching_no_record": foreign})
    for key, info in unexpected_info.items():
        out.add("unexpected-object", Witness("unexpected-object", keys=(key,), observed=info,
                                             explanation="the model has no object with this key"))

    _account(tp, out)
    return out


def _account(tp: _TopicPartition, out: TopicPartitionAudit) -> None:
    """Lost, duplicated and not-yet-visible records from the counts."""
    topic, partition = tp.topic, tp.partition
    absent = tp.counts == 0
    if out.constraints:
        seen = np.flatnonzero(tp.counts > 0)
        last_seen = int(seen[-1]) if len(seen) else -1
        # offsets are committed in order (R4.1): an absent record before a visible one is lost
        lost = np.flatnonzero(absent & (tp.status == 4) & (np.arange(tp.n) < last_seen))
        pending = np.flatnonzero(absent & (tp.status == 4) & (np.arange(tp.n) > last_seen))
    else:
        lost = np.flatnonzero(absent & (tp.status == 1))
        pending = np.flatnonzero(absent & ((tp.status == 2) | (tp.status == 3)))
        out.extra_visible = int(((tp.counts > 0) & ((tp.status == 0) | (tp.status == 3))).sum())
    out.lost = len(lost)
    out.not_yet_visible = len(pending)
    if len(pending):
        out.not_yet_visible_range = (int(tp.offsets[pending[0]]), int(tp.offsets[pending[-1]]))
    # one witness per object the lost records belong to (or per run of offsets)
    groups: dict[str, list[int]] = {}
    for p in lost.tolist():
        groups.setdefault(_expected_key_of(tp, p), []).append(int(tp.offsets[p]))
    for key, offs in groups.items():
        why = ("a later record of this topic-partition is visible, and offsets commit in order (R4.1)"
               if out.constraints else "the model commits them; no object in the bucket holds them")
        out.add("lost", Witness("lost", tuple(_at(topic, partition, o) for o in offs[:OFFSETS_SHOWN]),
                                (key,) if key else (), expected=f"{_records_text(len(offs))} visible", observed="absent",
                                explanation=f"{_records_text(len(offs))} (offsets {_runs(offs)}) absent: {why}"))
    dup = np.flatnonzero(tp.counts > 1)
    out.duplicated = len(dup)
    dgroups: dict[tuple[str, ...], list[int]] = {}
    for p in dup.tolist():
        dgroups.setdefault(tuple(sorted(set(tp.keys_holding(p)))), []).append(p)
    for keys, ps in dgroups.items():
        offs = [int(tp.offsets[p]) for p in ps]
        times = sorted({int(tp.counts[p]) for p in ps})
        out.add("duplicated", Witness("duplicated", tuple(_at(topic, partition, o) for o in offs[:OFFSETS_SHOWN]), keys,
                                      expected="each record once", observed=f"{'/'.join(map(str, times))} times",
                                      explanation=f"{_records_text(len(offs))} (offsets {_runs(offs)}) held more than once"))


def _expected_key_of(tp: _TopicPartition, p: int) -> str:
    return tp.model_keys[tp.model_key[p]] if tp.model_key[p] >= 0 else ""


# --- the Spark job ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Listing:
    listed: int  # objects under the prefix (S3 ListObjectsV2)
    read_by_spark: int  # of those, read by Spark's file source through S3A
    read_on_driver: int  # the ones Spark's file source skips (see observed_objects)


def list_objects(access: S3Access, location: BucketLocation) -> dict[str, int]:
    """Every key under the prefix with its size, from S3's own listing (metadata only)."""
    client = access.client()
    out: dict[str, int] = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=location.bucket, Prefix=location.key_prefix):
        for o in page.get("Contents", []):
            if not o["Key"].endswith("/"):  # a directory marker, not an object a sink wrote
                out[o["Key"]] = int(o["Size"])
    return out


def observed_objects(spark: Any, cfg: SinkConfig, location: BucketLocation, access: S3Access) -> tuple[Any, Listing]:
    """Every object under the prefix as (kind='observed', topic, partition, key, first_offset =
    the start offset its name gives, view, content). Spark reads them through S3A, except
    those its file sources skip, which S3's listing reveals and the driver reads: zero-byte
    objects, names starting with '_' or '.' (anywhere in the key), and keys with an empty
    path segment (S3A normalises `a//b` to `a/b`, a different key)."""
    from pyspark.errors import AnalysisException

    listed = list_objects(access, location)
    head = f"s3a://{location.bucket}/"
    spark_keys: set[str] = set()
    df = spark.createDataFrame([], "path string, content binary")
    if listed:
        try:
            df = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                  .option("ignoreMissingFiles", "true").load(location.s3a_url).select("path", "content"))
            # inputFiles() are URIs: percent-encoded, with '+' left as it is
            spark_keys = {unquote(f[len(head):]) for f in df.inputFiles() if f.startswith(head)}
        except AnalysisException:
            pass  # only names Spark's file index skips
    rest = sorted(k for k, size in listed.items() if size == 0 or k not in spark_keys)
    if rest:
        client = access.client()
        rows = [(head + k, b"" if listed[k] == 0 else client.get_object(Bucket=location.bucket, Key=k)["Body"].read())
                for k in rest]
        df = df.unionByName(spark.createDataFrame(rows, "path string, content binary"))
    read_by_spark = sum(1 for k, size in listed.items() if size > 0 and k in spark_keys)
    return _shape(spark, cfg, location, df), Listing(len(listed), read_by_spark, len(rest))


def key_pattern(cfg: SinkConfig) -> tuple[str, dict[str, str]]:
    """A Java regex over an object's file name: topic, partition, start offset, extension, and
    the extension of each view, all from the model's naming (R5.1, R5.3, R11.2)."""
    from reference_impl.naming import object_key

    exts: dict[str, str] = {}
    views = ["value"] + (["keys"] if cfg.store_kafka_keys else []) + (["headers"] if cfg.store_kafka_headers else [])
    for view in views:
        try:
            k = object_key(cfg, "t", 0, "ep", 0, view)
        except Exception:
            continue  # a width the connector cannot format (R5.1): no file is ever named
        stem = f"t{cfg.file_delim}0{cfg.file_delim}{0:0{cfg.zero_pad_width}d}"
        exts[view] = k[k.rindex(stem) + len(stem):]
    fd = re.escape(cfg.file_delim)
    alts = "|".join(re.escape(e) for e in sorted(exts.values(), key=len, reverse=True)) or r"\..*"
    return f"^(.+){fd}([0-9]+){fd}([0-9]+)({alts})$", exts


def _shape(spark: Any, cfg: SinkConfig, location: BucketLocation, df: Any) -> Any:
    from pyspark.sql import functions as F

    pattern, exts = key_pattern(cfg)
    head = f"s3a://{location.bucket}/"
    key = F.expr(f"substring(path, {len(head) + 1})")
    name = F.substring_index(key, cfg.directory_delim, -1) if cfg.directory_delim else key
    topic = F.regexp_extract(name, pattern, 1)
    ext = F.regexp_extract(name, pattern, 4)
    view = F.lit("value")
    for v, e in exts.items():
        if v != "value":
            view = F.when(ext == F.lit(e), F.lit(v)).otherwise(view)
    parsed = topic != F.lit("")
    return df.select(
        F.lit("observed").alias("kind"),
        F.when(parsed, topic).alias("topic"),
        F.when(parsed, F.regexp_extract(name, pattern, 2).cast("int")).alias("partition"),
        key.alias("key"),
        F.when(parsed, F.regexp_extract(name, pattern, 3).cast("long")).alias("first_offset"),
        F.lit(None).cast("long").alias("last_offset"), F.lit(None).cast("array<long>").alias("offsets"),
        F.lit(None).cast("string").alias("siblings"), F.lit(None).cast("boolean").alias("value_object"),
        F.lit(None).cast("boolean").alias("certain"), F.lit(None).cast("string").alias("rotation"),
        F.lit(None).cast("string").alias("rule"),
        F.lit(None).cast("string").alias("message"), F.lit(None).cast("long").alias("failure_offset"),
        F.when(parsed, view).alias("view"), F.col("content"),
    )


@dataclass
class ModelOutcome:
    manifest: Any | None  # DataFrame of manifest rows, None with constraints
    constraints_reason: str | None = None
    task_failure: dict[str, Any] | None = None  # where the model's task dies
    failing: frozenset[tuple[str, int]] = frozenset()


def model_manifest(cfg: SinkConfig, records: Any, clustered: bool = False) -> ModelOutcome:
    """The model's objects for the records, from its Spark engine, kept (cached) as a
    DataFrame; only failure rows come to the driver. Without a put schedule everything is
    one put, as for `sinkcheck model --engine spark`."""
    from reference_impl.connect_data import SinkRecord
    from reference_impl.model import constraints_reason, null_action, start_failure
    from reference_impl.spark_engine import fold_manifest, verify_clustered

    if cfg.wallclock_dependent:
        return ModelOutcome(None, constraints_reason(cfg).split(";")[0] +
                            "; the objects depend on when the sink's puts happened, which the records do not say")
    started = start_failure(cfg, "spark")
    if started is not None:
        f = started.task_failure
        manifest = fold_manifest(cfg, records, stop_before=0).persist()
        return ModelOutcome(manifest, task_failure={"rule": f.rule, "message": f.message, "offset": None})
    kill = null_action(cfg, SinkRecord("t", 0, 0, None))
    if kill and kill[0] == "kill" and records.filter("value is null or trim(value) = 'null'").limit(1).count():
        # a fatal null stops put() before any write (R1.4 step 1): with one put, nothing is written
        manifest = fold_manifest(cfg, records, stop_before=0).persist()
        return ModelOutcome(manifest, task_failure={"rule": kill[1], "message": "a null value kills the task before any write",
                                                    "offset": None})
    manifest = fold_manifest(cfg, records, clustered=clustered).persist()
    if clustered and verify_clustered(manifest):
        manifest.unpersist()
        manifest = fold_manifest(cfg, records).persist()
    failures = manifest.filter("kind = 'failure'").select("topic", "partition", "rule", "message", "failure_offset").collect()
    if not failures:
        return ModelOutcome(manifest)
    first = min(failures, key=lambda r: (r["topic"], r["partition"]))
    return ModelOutcome(manifest, task_failure={"rule": first["rule"], "message": first["message"],
                                                "offset": first["failure_offset"], "topic": first["topic"],
                                                "partition": first["partition"]},
                        failing=frozenset((r["topic"], r["partition"]) for r in failures))


@dataclass
class AuditOutcome:
    location: BucketLocation
    topic_partitions: list[TopicPartitionAudit]
    listing: Listing
    constraints_reason: str | None
    task_failure: dict[str, Any] | None
    records: int
    wall_s: float
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per phase


def compare_dataframe(settings: CompareSettings, records: Any, manifest: Any | None, observed: Any) -> Any:
    """The per-topic-partition comparison as a DataFrame of SUMMARY_DDL rows (lazy)."""
    import pandas as pd
    from pyspark.sql import functions as F

    others = observed
    if manifest is not None:
        m = manifest.filter(F.col("kind").isin("object", "open", "failure"))
        others = m.select(*[F.col(c) if c in m.columns else F.lit(None).alias(c) for c in _OTHER_COLUMNS[:-2]],
                          F.lit(None).cast("string").alias("view"), F.lit(None).cast("binary").alias("content"))
        others = others.select(*[F.col(c).cast(t) for c, t in (x.split(" ", 1) for x in OTHER_DDL.split(", "))])
        others = others.unionByName(observed)

    def compare(recs: "pd.DataFrame", rows: "pd.DataFrame") -> "pd.DataFrame":
        res = audit_topic_partition(settings, recs, rows)
        return pd.DataFrame([{"topic": res.topic, "partition": res.partition,
                              "summary": json.dumps(res.to_json(), default=str)}])

    recs = records.select(*RECORD_COLUMNS)
    return (recs.groupBy("topic", "partition").cogroup(others.groupBy("topic", "partition"))
            .applyInPandas(compare, SUMMARY_DDL))


def run_audit(spark: Any, cfg: SinkConfig, records: Any, location: BucketLocation, access: S3Access, *,
              clustered: bool = False) -> AuditOutcome:
    """Audit the bucket against the records: everything heavy on Spark, summaries back."""
    started = time.monotonic()
    model = model_manifest(cfg, records, clustered)
    t_model = time.monotonic()
    observed, listing = observed_objects(spark, cfg, location, access)
    t_list = time.monotonic()
    settings = CompareSettings(cfg, location.key_prefix, model.manifest is None,
                               others_uncertain=bool(model.failing), failing=model.failing)
    rows = compare_dataframe(settings, records, model.manifest, observed).collect()
    if model.manifest is not None:
        model.manifest.unpersist()
    timings = {"model": t_model - started, "listing": t_list - t_model, "read and compare": time.monotonic() - t_list}
    tps = [TopicPartitionAudit.from_json(json.loads(r["summary"])) for r in rows]
    tps.sort(key=lambda t: (t.topic is None, t.topic or "", t.partition or 0))
    notes = []
    read = sum(t.observed_objects for t in tps)
    if read < listing.listed:
        notes.append(f"{listing.listed - read} of the {listing.listed} objects listed under {location.url} were gone "
                     "when Spark came to read them")
    if listing.read_on_driver:
        notes.append(f"{listing.read_on_driver} objects that Spark's file sources skip (zero bytes, names starting with "
                     "'_' or '.', empty path segments) were read on the driver")
    outside = sum(t.outside_prefix for t in tps)
    if outside:
        notes.append(f"{outside} objects of the model lie outside {location.url} and were not audited")
    dups = sum(t.duplicate_offsets for t in tps)
    if dups:
        notes.append(f"the records give {dups} offsets twice; the first of each was used")
    return AuditOutcome(location, tps, listing, model.constraints_reason, model.task_failure,
                        sum(t.records for t in tps), time.monotonic() - started, notes, timings)


# --- as run results, for the report writers -----------------------------------------------------

@dataclass
class AuditResult(RunResult):
    """One topic-partition of an audit as a run result: the report writers show it like a run
    (scenario = the topic-partition, target = the bucket), with its counts and the command
    that repeats it."""

    record_count: int = 0
    audit: dict[str, Any] = field(default_factory=dict)
    reproduce: str = ""


def _verdicts(t: TopicPartitionAudit, claim: Claim, reason: str | None) -> list[Verdict]:
    def ws(*anomalies: str) -> tuple[Witness, ...]:
        out = []
        for a in anomalies:
            for w in t.witnesses.get(a, []):
                out.append(Witness(w["anomaly"], tuple(w["offsets"]), tuple(w["keys"]), w["expected"], w["observed"],
                                   w["explanation"]))
        return tuple(out)

    def v(prop: str, status: str, rule: str, message: str, witnesses: tuple[Witness, ...] = (), **details: Any) -> Verdict:
        return Verdict(prop, status, claim.claims(prop), rule, message, witnesses, details)

    pending = ""
    if t.not_yet_visible:
        lo, hi = t.not_yet_visible_range or (None, None)
        pending = f"; {t.not_yet_visible} records not yet visible (offsets {lo}..{hi}: the model's open tail)"
    if t.topic is None:
        return [v("exact-object-set", FAIL if t.unexpected else PASS, "R5.1",
                  f"{t.unexpected} objects whose keys name no topic-partition", ws("unexpected-object"),
                  unexpected=t.unexpected)]
    counts = {"records": t.records, "committed": t.committed, "uncertain": t.uncertain, "open_tail": t.open_tail,
              "not_yet_visible": t.not_yet_visible, "not_yet_visible_range": t.not_yet_visible_range}
    if t.lost:
        no_loss = v("no-loss", FAIL, "P-NOLOSS", f"{t.lost} records lost{pending}", ws("lost"), lost=t.lost, **counts)
    elif t.undecodable:
        no_loss = v("no-loss", UNKNOWN, "P-NOLOSS", f"{t.undecodable} objects could not be decoded{pending}",
                    ws("different-object", "unexpected-object"), **counts)
    else:
        checked = t.records if t.constraints else t.committed
        no_loss = v("no-loss", PASS, "P-NOLOSS", f"all {checked} records the model commits are visible{pending}", **counts)
    dup = (v("no-duplicates", FAIL, "P-NODUP", f"{t.duplicated} records duplicated", ws("duplicated"), duplicated=t.duplicated)
           if t.duplicated else v("no-duplicates", PASS, "P-NODUP", "every visible record appears once"))
    if t.constraints:
        exact = v("exact-object-set", UNKNOWN, "§16", f"the model gives constraints, not an exact object set: {reason}")
    else:
        bad = t.missing + t.different + t.unexpected
        if t.model_errors and not bad:
            return [no_loss, dup, v("exact-object-set", UNKNOWN, "§16", f"the model cannot encode {t.model_errors} of "
                                    "its objects' records", ws("model-error"), model_errors=t.model_errors)]
        details = {"expected_objects": t.expected_objects, "observed_objects": t.observed_objects,
                   "exact_objects": t.exact_objects, "missing": t.missing, "different": t.different,
                   "unexpected": t.unexpected, "extra_visible_records": t.extra_visible}
        exact = (v("exact-object-set", FAIL, "§16", f"{bad} objects differ from the model ({t.missing} missing, "
                   f"{t.different} different, {t.unexpected} unexpected)",
                   ws("missing-object", "different-object", "unexpected-object"), **details)
                 if bad else v("exact-object-set", PASS, "§16", f"{t.exact_objects} objects exactly as the model", **details))
    return [no_loss, dup, exact]


def audit_results(outcome: AuditOutcome, connector: dict[str, str], connector_version: str | None,
                  run_dir: Path, reproduce: str) -> list[AuditResult]:
    claim = claim_for("confluent", connector, [])
    target = outcome.location.url
    out = []
    for t in outcome.topic_partitions:
        name = t.name
        topics = {} if t.topic is None else {t.topic: (t.partition or 0) + 1}
        note = f"audit of {target}"
        if outcome.task_failure:
            note += f"; the model's task dies ({outcome.task_failure['rule']}: {outcome.task_failure['message']})"
        scenario = Scenario(name, dict(connector), topics, [], [], None, connector_version, note)
        verdicts = _verdicts(t, claim, outcome.constraints_reason)
        d = run_dir / re.sub(r"[^A-Za-z0-9._-]+", "_", name)
        out.append(AuditResult(scenario, target, claim, _empty_observation(), None, verdicts, outcome.wall_s, d,
                               record_count=t.records, audit=t.to_json(), reproduce=reproduce))
    return out


def _empty_observation() -> Any:
    from adapters.observation import Observation

    # an audit sees the bucket once, after the fact: no history to draw a timeline from
    return Observation(quiet=True)
