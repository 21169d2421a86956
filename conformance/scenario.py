"""A scenario: plain, serialisable data, generated whole, run whole, checked afterwards.

It holds the connector config (the flat map a user POSTs as `config`), the topics, the
records to produce (each non-null value carries a `seq` that identifies it in S3), and a
fault schedule: each fault applies after a number of records has been produced. It
serialises to versioned JSON; `sinkcheck replay SCENARIO.json --target …` runs it again.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCENARIO_FORMAT = "sinkcheck.scenario/1"


class ScenarioError(ValueError):
    pass


@dataclass(frozen=True)
class FaultStep:
    """Apply `kind` once `after` records have been produced.

    kinds: `s3` (a rule for the S3 fault front: operation, action, part_number, nth, status,
    key, name), `crash` (the sink dies abruptly and restarts from its committed offsets), `pause`
    and `resume` (a zombie), `rebalance`, `update-config` (params: config overrides),
    `restart-task`, `release` (let hung S3 requests go on: every one, or those of `rule`), `wait`
    (seconds of wall-clock time, the sink polling meanwhile), `wait-fired` (until the S3 rule
    `rule` fired: its name, or its index among the s3 steps; bounded by `seconds`), `quiet` (until
    the sink is quiet: it has read everything produced so far and its commits settled)."""

    after: int
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"after": self.after, "kind": self.kind, "params": self.params}


@dataclass(frozen=True)
class Scenario:
    name: str
    connector: dict[str, str]
    topics: dict[str, int]
    records: list[dict[str, Any]]
    faults: list[FaultStep] = field(default_factory=list)
    seed: int | None = None
    connector_version: str | None = None
    notes: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SCENARIO_FORMAT, "name": self.name, "seed": self.seed,
            "connector_version": self.connector_version, "notes": self.notes,
            "connector": {"name": "sinkcheck-" + self.name.replace(" ", "-")[:40], "config": self.connector},
            "topics": self.topics, "records": self.records, "faults": [f.to_json() for f in self.faults],
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, sort_keys=False) + "\n"

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.dumps())
        return p

    @classmethod
    def from_json(cls, obj: Any, source: str = "scenario") -> "Scenario":
        if not isinstance(obj, dict) or obj.get("format") != SCENARIO_FORMAT:
            raise ScenarioError(f"{source}: not a sinkcheck scenario (expected \"format\": \"{SCENARIO_FORMAT}\")")
        try:
            conn = obj["connector"]
            config = conn["config"] if isinstance(conn, dict) and "config" in conn else conn
            faults = [FaultStep(int(f["after"]), str(f["kind"]), dict(f.get("params") or {})) for f in obj.get("faults", [])]
            return cls(
                name=str(obj["name"]), connector={str(k): str(v) for k, v in config.items()},
                topics={str(k): int(v) for k, v in obj["topics"].items()}, records=list(obj["records"]),
                faults=faults, seed=obj.get("seed"), connector_version=obj.get("connector_version"),
                notes=obj.get("notes", ""),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ScenarioError(f"{source}: malformed scenario ({type(e).__name__}: {e})") from None

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        p = Path(path)
        try:
            obj = json.loads(p.read_text())
        except FileNotFoundError:
            raise ScenarioError(f"scenario file not found: {p}") from None
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{p}: line {e.lineno}, column {e.colno}: {e.msg}") from None
        return cls.from_json(obj, str(p))

    def steps(self) -> str:
        """The scenario as a readable step list (for failure reports)."""
        lines = [f"connector {self.connector_version or 'default version'}: " +
                 ", ".join(f"{k}={v}" for k, v in sorted(self.connector.items()) if not _secret(k))]
        faults = sorted(self.faults, key=lambda f: f.after)
        fi = 0
        for i, r in enumerate(self.records):
            while fi < len(faults) and faults[fi].after == i:
                lines.append(f"  fault {faults[fi].kind} {faults[fi].params}")
                fi += 1
            lines.append(f"  produce {r['topic']}-{r['partition']} ts={r.get('timestamp')} value={json.dumps(r.get('value'))[:60]}")
        for f in faults[fi:]:
            lines.append(f"  fault {f.kind} {f.params}")
        return "\n".join(lines)


def _secret(key: str) -> bool:
    k = key.lower()
    return any(s in k for s in ("secret", "password", "token", "access.key", "accesskey", "secretkey"))


_SEQ_TEXT = re.compile(r"^seq=(\d+)$")


def seq_value(seq: int, kind: str, payload: dict[str, Any] | None = None, schema: dict[str, Any] | None = None) -> Any:
    """A record value of `kind` that carries `seq`, as a scenario writes it: "map" (schemaless
    JSON), "struct" (JsonConverter's {schema, payload}), "string" (text `seq=<n>`), "bytes" (a
    bytes envelope whose payload is JSON holding the seq, what ByteArrayFormat writes raw)."""
    body = {"seq": seq, **(payload or {})}
    if kind == "map":
        return body
    if kind == "struct":
        return {"schema": schema, "payload": body}
    if kind == "string":
        return f"seq={seq}"
    if kind == "bytes":
        raw = json.dumps(body, separators=(",", ":")).encode()
        return {"schema": {"type": "bytes", "optional": True}, "payload": base64.b64encode(raw).decode()}
    raise ValueError(f"unknown value kind {kind!r}")


def record_seq(value: Any) -> int | None:
    """The `seq` a value carries, as produced or as decoded from an object: a map or a Struct
    payload with a `seq` field, text `seq=<n>`, or bytes (raw, or base64 as JSON writes them)
    holding such a JSON map."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = json.loads(bytes(value))
        except ValueError:
            return None
    if isinstance(value, str):
        m = _SEQ_TEXT.match(value)
        if m:
            return int(m.group(1))
        try:
            value = json.loads(base64.b64decode(value, validate=True))
        except (ValueError, binascii.Error):
            return None
    if isinstance(value, dict):
        if "payload" in value and "schema" in value:
            return record_seq(value["payload"])
        s = value.get("seq")
        return s if isinstance(s, int) and not isinstance(s, bool) else None
    return None
