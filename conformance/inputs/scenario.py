"""A scenario: plain, serialisable data, generated whole, run whole, checked afterwards.

It holds the connector config (the flat map a user POSTs as `config`, converters included),
the topics, the records to produce (each non-null value carries a `seq` that identifies it in
S3; keys and values written in the notation of their converter, conformance.inputs.wire), and a fault
schedule: each fault applies after a number of records has been produced. It serialises to
versioned JSON; `sinkcheck replay SCENARIO.json --target …` runs it again.

Format 2 states the converters; format 1 (before converters were part of a scenario) is
migrated on load: its keys and values were produced as JSON text, so the converter that read
them is JsonConverter, with schemas where every value is an envelope and without where none is.
A format-1 file mixing the two is refused: no real converter reads both.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCENARIO_FORMAT = "sinkcheck.scenario/2"
FORMAT_1 = "sinkcheck.scenario/1"


class ScenarioError(ValueError):
    pass


# the steps the runner plays itself, and the faults some target applies (each target says which
# of them it supports)
RUNNER_STEPS = ("s3", "release", "wait", "wait-fired", "quiet")
TARGET_FAULTS = ("crash", "restart", "kill-worker", "pause", "resume", "pause-worker", "add-worker", "remove-worker",
                 "rebalance", "update-config", "restart-task", "restart-connector", "lose-offset-commit")


@dataclass(frozen=True)
class FaultStep:
    """Apply `kind` once `after` records have been produced.

    kinds: `s3` (a rule for the S3 fault front: operation, action, part_number, nth, status,
    key, name), `crash` (the sink dies abruptly and restarts from its committed offsets), `pause`
    and `resume` (a zombie), `rebalance`, `update-config` (params: config overrides),
    `restart-task`, `lose-offset-commit` (Kafka Connect: the group's last offset commit lost,
    KIP-875 stop, offsets set back, resume), `release` (let hung S3 requests go on: every one,
    or those of `rule`), `wait`
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
    # where a saved scenario was played (a reproducer's target): {"target": spec, and, when known,
    # "connector": the version that ran, "failed": the properties that failed there}. `sinkcheck
    # replay` plays it on that target unless told otherwise; it is not part of what is played.
    played_on: dict[str, Any] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SCENARIO_FORMAT, "name": self.name, "seed": self.seed,
            "connector_version": self.connector_version, "notes": self.notes,
            **({"played_on": self.played_on} if self.played_on else {}),
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
        if isinstance(obj, dict) and obj.get("format") == FORMAT_1:
            obj = migrate_format_1(obj, source)
        if not isinstance(obj, dict) or obj.get("format") != SCENARIO_FORMAT:
            raise ScenarioError(f"{source}: not a sinkcheck scenario (expected \"format\": \"{SCENARIO_FORMAT}\", "
                                f"or the older \"{FORMAT_1}\")")
        try:
            conn = obj["connector"]
            config = conn["config"] if isinstance(conn, dict) and "config" in conn else conn
            faults = [FaultStep(int(f["after"]), str(f["kind"]), dict(f.get("params") or {})) for f in obj.get("faults", [])]
            sc = cls(
                name=str(obj["name"]), connector={str(k): str(v) for k, v in config.items()},
                topics={str(k): int(v) for k, v in obj["topics"].items()}, records=list(obj["records"]),
                faults=faults, seed=obj.get("seed"), connector_version=obj.get("connector_version"),
                notes=obj.get("notes", ""), played_on=_played_on(obj.get("played_on"), source),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise ScenarioError(f"{source}: malformed scenario ({type(e).__name__}: {e})") from None
        problem = sc.kafka_problem()
        if problem:
            raise ScenarioError(f"{source}: {problem}")
        return sc

    def kafka_problem(self) -> str | None:
        """What no run of this scenario could do: a fault kind nothing applies, a topic Kafka
        refuses, a record's offset (where one is given) that does not go forward."""
        from reference_impl.config_keys import invalid_topic_reason

        for i, f in enumerate(self.faults):
            if f.kind not in RUNNER_STEPS + TARGET_FAULTS:
                return (f"faults[{i}]: unknown fault kind {f.kind!r}; the kinds are "
                        f"{', '.join(RUNNER_STEPS + TARGET_FAULTS)}")
        for t in self.topics:
            reason = invalid_topic_reason(t)
            if reason:
                return f"topics: {reason}"
        last: dict[tuple[Any, Any], int] = {}
        for i, r in enumerate(self.records):
            if not isinstance(r, dict):
                return f"records[{i}]: a record is a JSON object"
            reason = invalid_topic_reason(str(r.get("topic", "")))
            if reason:
                return f"records[{i}]: {reason}"
            tp, off = (r.get("topic"), r.get("partition")), r.get("offset")
            if isinstance(off, int):
                if tp in last and off <= last[tp]:
                    return (f"records[{i}]: offset {off} does not go forward from {last[tp]} in "
                            f"{tp[0]}-{tp[1]}: Kafka gives a topic-partition's offsets once, in increasing order")
                last[tp] = off
        return None

    @classmethod
    def load(cls, path: str | Path) -> "Scenario":
        p = Path(path)
        try:
            obj = json.loads(p.read_bytes().decode("utf-8-sig"))
        except FileNotFoundError:
            raise ScenarioError(f"scenario file not found: {p}") from None
        except IsADirectoryError:
            raise ScenarioError(f"{p} is a directory; give a SCENARIO.json file") from None
        except UnicodeDecodeError as e:
            raise ScenarioError(f"{p}: not a sinkcheck scenario: byte {e.start} is not UTF-8 text ({e.reason}); "
                                "give a SCENARIO.json as saved by a run") from None
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


_SEQ_TEXT = re.compile(r"^seq=(\d+)(?: .*)?$", re.S)  # `seq=<n>`, maybe with more text after a space


def _is_envelope(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"schema", "payload"}


def migrate_format_1(obj: dict[str, Any], source: str) -> dict[str, Any]:
    """A format-1 scenario as format 2, producing the same bytes: format 1 wrote every key and
    value as JSON text. Converters the config names are kept (its values re-written in their
    notation); where it names none, JsonConverter with schemas when every value is an envelope,
    without when none is; a mix is refused."""
    out = dict(obj, format=SCENARIO_FORMAT)
    conn = obj.get("connector") or {}
    config = dict(conn["config"] if isinstance(conn, dict) and isinstance(conn.get("config"), dict) else conn)
    records = [dict(r) for r in obj.get("records") or [] if isinstance(r, dict)]
    for which in ("key", "value"):
        prop = f"{which}.converter"
        named = str(config.get(prop, "")).strip().rsplit(".", 1)[-1]
        items = [r.get(which) for r in records if r.get(which) is not None]
        if not named:
            enveloped = [i for i, v in enumerate(items) if _is_envelope(v)]
            if enveloped and len(enveloped) != len(items):
                plain = next(i for i, v in enumerate(items) if not _is_envelope(v))
                raise ScenarioError(
                    f"{source}: a {FORMAT_1} scenario whose {which}s mix JsonConverter envelopes (e.g. non-null "
                    f"{which} #{enveloped[0]}) and plain JSON (e.g. #{plain}); no real converter reads both. State "
                    f"{prop} in its connector config and give every {which} in that converter's notation "
                    f"(format {SCENARIO_FORMAT}), or split it into two scenarios")
            config[prop] = "org.apache.kafka.connect.json.JsonConverter"
            config[f"{prop}.schemas.enable"] = "true" if items and enveloped else "false"
        elif named != "JsonConverter":
            # the bytes were the JSON text: as a string, or as base64 of those bytes
            for r in records:
                if r.get(which) is not None:
                    text = json.dumps(r[which], separators=(",", ":"), ensure_ascii=False)
                    r[which] = text if named == "StringConverter" else base64.b64encode(text.encode()).decode()
    out["records"] = records
    out["connector"] = {**conn, "config": config} if isinstance(conn, dict) and "config" in conn else config
    return out


# value kinds (what the sink receives), each carrying a seq; which ones a value converter can
# produce, and how a scenario writes them in that converter's notation (conformance.inputs.wire)
VALUE_KINDS_BY_CONVERTER = {
    "avro": ("struct",),  # a producer's Avro records (inputs.registry_wire)
    "protobuf": ("struct",),  # a producer's Protobuf messages (inputs.protobuf_wire)
    "json-schemas": ("struct", "string", "bytes"),
    "json": ("map", "string"),
    "string": ("string",),
    "bytearray": ("bytes",),
}


def converter_kind(config: dict[str, str], which: str = "value") -> str:
    """"json-schemas", "json", "string", "bytearray", "avro" or "protobuf": the converter a config names for `which`."""
    cls = str(config.get(f"{which}.converter", "")).strip().rsplit(".", 1)[-1]
    if cls == "AvroConverter":
        return "avro"
    if cls == "ProtobufConverter":
        return "protobuf"
    if cls == "StringConverter":
        return "string"
    if cls == "ByteArrayConverter":
        return "bytearray"
    if cls == "JsonConverter":
        on = str(config.get(f"{which}.converter.schemas.enable", "true")).strip().lower() == "true"
        return "json-schemas" if on else "json"
    raise ScenarioError(f"{which}.converter={cls or '(not set)'}: a scenario's converter is JsonConverter, "
                        "StringConverter, ByteArrayConverter, AvroConverter or ProtobufConverter")


def seq_value(seq: int, kind: str, payload: dict[str, Any] | None = None, schema: dict[str, Any] | None = None,
              converter: str = "json") -> Any:
    """A record value of `kind` that carries `seq`, written in the notation of `converter`
    (converter_kind): "map" (a schemaless JSON object), "struct" (a Struct: JsonConverter's
    envelope with `schema`), "string" (text `seq=<n>`), "bytes" (bytes holding the JSON of
    the seq, what ByteArrayFormat writes raw)."""
    body = {"seq": seq, **(payload or {})}
    allowed = VALUE_KINDS_BY_CONVERTER[converter]
    if kind not in allowed:
        raise ValueError(f"a {converter} value converter gives no {kind!r} values (it gives {', '.join(allowed)})")
    if kind == "map":
        return body
    if kind == "struct":
        return {"schema": schema, "payload": body}
    if kind == "string":
        text = f"seq={seq}"
        return {"schema": {"type": "string", "optional": False}, "payload": text} if converter == "json-schemas" else text
    raw = json.dumps(body, separators=(",", ":")).encode()
    encoded = base64.b64encode(raw).decode()
    return {"schema": {"type": "bytes", "optional": True}, "payload": encoded} if converter == "json-schemas" else encoded


def record_seq(value: Any) -> int | None:
    """The `seq` a value carries, as produced or as decoded from an object: a map or a Struct
    payload with a `seq` field, text `seq=<n>`, text holding such a map as JSON, or bytes (raw,
    or base64 as JSON writes them) holding either."""
    if isinstance(value, (bytes, bytearray)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(value, str):
        m = _SEQ_TEXT.match(value)
        if m:
            return int(m.group(1))
        if not value:
            return None
        try:  # JSON text (a value re-expressed as a string), else base64 bytes holding it
            value = json.loads(value)
        except ValueError:
            try:
                return record_seq(base64.b64decode(value, validate=True))
            except (ValueError, binascii.Error):
                return None
    if isinstance(value, str):  # a JSON string: its text holds the seq (`"seq=3"`)
        return record_seq(value)
    if isinstance(value, dict):
        if "payload" in value and "schema" in value:
            return record_seq(value["payload"])
        s = value.get("seq")
        return s if isinstance(s, int) and not isinstance(s, bool) else None
    return None


def _played_on(obj: Any, source: str) -> dict[str, Any] | None:
    if obj is None:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("target"), str) or not obj["target"]:
        raise ScenarioError(f"{source}: \"played_on\" must be {{\"target\": \"<target spec>\", …}}")
    return dict(obj)
