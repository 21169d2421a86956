"""A user's own connector config (`--connector-config`), read one way on every target.

Two things happen to a scenario run under a user's config, and one check comes first:

- `refusal`: what the config asks that sinkcheck cannot honour (a single message transform the
  model does not apply, a converter that needs a schema registry, a partitioner class it has no
  model of, a format or partitioner the config's value converter gives no Struct for) is refused
  before anything runs, naming the property and what to change. `model`, `run`, `gate`,
  `replay` and the pytest plugin ask this one function.
- `fit`: the scenario's records go where the config reads (its `topics`, or names its
  `topics.regex` matches: scenario topic i onto config topic i mod k) and carry every field the
  config reads (`timestamp.field` for RecordField, `partition.field.name` for FieldPartitioner,
  dotted paths nested), as Structs where the format or the partitioner needs a schema. The
  mapping is written into the scenario's notes, which the report shows.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from typing import Any, Mapping, Sequence

from conformance.inputs.connector_config import drops_tombstones, transform_names
from conformance.inputs.scenario import Scenario, converter_kind, record_seq
from conformance.inputs.wire import with_worker_converters
from reference_impl.converters import JSON_CONVERTER, UnknownConverter, converter_for

FIELD_PARTITIONER = "FieldPartitioner"
TIME_PARTITIONERS = ("TimeBasedPartitioner", "DailyPartitioner", "HourlyPartitioner")
KNOWN_PARTITIONERS = ("DefaultPartitioner", FIELD_PARTITIONER) + TIME_PARTITIONERS
STRUCT_FORMATS = ("AvroFormat", "ParquetFormat")
# when a record has no timestamp of its own, the field RecordField reads counts from here
BASE_T = 1706713200000  # 2024-01-31T15:00:00Z


def _short(value: Any, default: str = "") -> str:
    return str(value or default).strip().rsplit(".", 1)[-1]


# --- the check --------------------------------------------------------------------------------
def refusal(config: Mapping[str, str], s3_sink: bool = True, converted: bool = True) -> str | None:
    """Why sinkcheck cannot test a sink under `config`, naming the property and what to change;
    None when it can. `s3_sink`: the config is the S3 sink's (its format and partitioner are
    modelled); for other connectors only the Kafka Connect properties are checked. `converted`:
    records reach the sink through the config's converters (not so for `sinkcheck model`, whose
    records are Connect values already)."""
    cfg = {str(k): str(v) for k, v in config.items()}
    transforms = transform_names(cfg)
    # Kafka's Filter of tombstones is honoured where no model of the sink's files applies (Iceberg,
    # Camel, Aiven, Lenses): their checkers never ask a null value to be written. The S3 sink's
    # model would have to drop them before its fold
    if transforms and not (not s3_sink and all(drops_tombstones(cfg, t) for t in transforms)):
        named = ", ".join(f"{t} ({cfg.get(f'transforms.{t}.type', 'no type')})" for t in transforms)
        return (f"transforms={cfg['transforms']}: {named}: sinkcheck's model applies no single message transform, so it "
                "cannot say what the sink must write after one; remove `transforms` and the `transforms.*` properties "
                "to test the sink on the records as they are produced")
    full = with_worker_converters(cfg)
    for which in ("key", "value") if converted else ():
        try:
            converter_for(full, which)
        except UnknownConverter as e:
            return (f"{e}. sinkcheck's model reads the records of JsonConverter (with "
                    f"{which}.converter.schemas.enable=true for Structs), StringConverter, ByteArrayConverter and "
                    "AvroConverter or ProtobufConverter (with the Schema Registry sinkcheck runs)")
    if not s3_sink:
        return None
    part = _short(cfg.get("partitioner.class"), "DefaultPartitioner")
    if part not in KNOWN_PARTITIONERS:
        return (f"partitioner.class={cfg['partitioner.class']}: sinkcheck's model has no partitioner of that class, so "
                "it cannot say where objects go; use one of io.confluent.connect.storage.partitioner."
                f"{{{','.join(KNOWN_PARTITIONERS)}}}")
    return _converter_refusal(full, part) if converted else None


def _converter_refusal(cfg: dict[str, str], part: str) -> str | None:
    from conformance.generators.configs import value_kinds

    if value_kinds(cfg):
        return None
    fmt = _short(cfg.get("format.class"), "JsonFormat")
    kind = converter_kind(cfg)
    conv = cfg.get("value.converter", "")
    gives = ("JsonConverter with value.converter.schemas.enable=false gives maps without a schema"
             if kind == "json" else f"value.converter={conv} gives {'text' if kind == 'string' else 'bytes'}")
    if fmt == "ByteArrayFormat":
        return (f"format.class=ByteArrayFormat writes a value's bytes and {gives}: set "
                "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter")
    if fmt in STRUCT_FORMATS or part == FIELD_PARTITIONER:
        needs = (f"format.class={fmt} needs a value schema (Structs)" if fmt in STRUCT_FORMATS
                 else f"partitioner.class={part} reads partition.field.name from a Struct")
        return (f"{needs}; {gives}: set value.converter={JSON_CONVERTER} and value.converter.schemas.enable=true, "
                "so records carry their schema")
    return (f"timestamp.extractor=RecordField reads timestamp.field from a Struct or a map; {gives}: set "
            f"value.converter={JSON_CONVERTER}")


def checked(cfg: Mapping[str, str], target: str, version: str | None, what: str = "--connector-config") -> list[str]:
    """What the command line and the pytest plugin both say of a user's config for `target`
    before anything runs: a ValueError whose message is the one refusal (what sinkcheck cannot
    honour, what the connector, Kafka or Kafka Connect would reject, what the Python sink cannot
    write), else the warnings Connect would only log (keys nobody defines, a path.format whose
    quote never closes), each "WHAT: warning"."""
    from conformance.judging.claims import CONFLUENT_SEMANTICS
    from conformance.inputs.connector_config import sink_config
    from conformance.inputs.targets import target_kind
    from reference_impl.config import ConfigError, config_warnings
    from reference_impl.versions import VersionError

    cfg = {str(k): str(v) for k, v in cfg.items()}
    kind = "confluent" if target.startswith("model") else target_kind(target)
    why = refusal(cfg, kind in CONFLUENT_SEMANTICS)
    if why:
        raise ValueError(f"{what}: {why}")
    if kind not in CONFLUENT_SEMANTICS:
        return []
    try:
        sink_config(cfg, version)
    except ConfigError as e:
        raise ValueError(f"{what} is rejected for {target}: {e}") from None
    except VersionError as e:
        raise ValueError(f"connector version: {e}") from None
    warnings = [f"{what}: {w}" for w in config_warnings(cfg)]
    if kind == "pysink":  # what the Python sink cannot write is refused here, not once per scenario
        from adapters.pysink.errors import SinkConfigError
        from adapters.pysink.settings import SinkSettings

        try:
            SinkSettings.from_config({"s3.bucket.name": "sinkcheck", "flush.size": "1", **cfg})
        except SinkConfigError as e:
            raise ValueError(f"{what} is rejected by the Python sink ({target}): {e}") from None
    return warnings


# --- topics -----------------------------------------------------------------------------------
def config_topics(config: Mapping[str, str]) -> list[str]:
    return [t.strip() for t in str(config.get("topics", "")).split(",") if t.strip()]


def unread_topics(topics: Sequence[str], config: Mapping[str, str]) -> list[str]:
    """The topics among `topics` a connector with `config` does not read (its `topics`, or
    names its `topics.regex` matches whole; a config naming neither reads every topic)."""
    named = config_topics(config)
    regex = str(config.get("topics.regex", "")).strip()
    if named:
        return [t for t in topics if t not in named]
    if regex:
        try:
            pattern = re.compile(regex)
        except re.error:
            return []  # the connector's validator says what is wrong with it
        return [t for t in topics if not pattern.fullmatch(t)]
    return []


def topic_mapping(topics: Sequence[str], config: Mapping[str, str]) -> dict[str, str]:
    """Each scenario topic → the topic the config reads it from: topic i onto the config's topic
    i mod k, or onto a name its `topics.regex` matches (the topic's own where it matches);
    itself where the config names neither. ValueError for a regex sinkcheck finds no name for."""
    named = config_topics(config)
    if named:
        return {t: (t if t in named else named[i % len(named)]) for i, t in enumerate(topics)}
    regex = str(config.get("topics.regex", "")).strip()
    if not regex:
        return {t: t for t in topics}
    return {t: _matching_name(regex, t) for t in topics}


def _matching_name(regex: str, topic: str) -> str:
    """A Kafka topic name `regex` matches whole (Kafka Connect's Pattern.matcher().matches()):
    the topic's own, else the regex read as a literal with its wildcards filled in."""
    pattern = re.compile(regex)
    if pattern.fullmatch(topic):
        return topic
    body = regex.removeprefix("^").removesuffix("$")
    filled = [
        re.sub(r"\\d[+*]?|\[0-9\][+*]?", "1",
               re.sub(r"\.[*+]\??|\[[^\]]*\][*+]|\\w[*+]", topic, body)),
        re.sub(r"\((?:\?:)?([^|()]*)\|[^()]*\)", r"\1", body),
    ]
    for text in filled + [re.sub(r"\\(.)", r"\1", f) for f in filled]:
        candidate = re.sub(r"[^A-Za-z0-9._-]", "", text.replace("\\.", "."))
        if candidate and pattern.fullmatch(candidate):
            return candidate
    raise ValueError(f"topics.regex={regex}: sinkcheck found no topic name it matches to produce the scenario's "
                     "records to; give the topics as `topics` instead")


def _mapped_topics(scenario: Scenario, config: Mapping[str, str]) -> tuple[dict[str, int], dict[str, str]]:
    mapping = topic_mapping(list(scenario.topics), config)
    topics: dict[str, int] = {}
    for t, n in scenario.topics.items():
        topics[mapping[t]] = max(n, topics.get(mapping[t], 0))
    for t in config_topics(config):  # a topic the connector reads that gets no record still exists
        topics.setdefault(t, 1)
    return topics, mapping


# --- the fields the config reads --------------------------------------------------------------
def fields_read(config: Mapping[str, str]) -> list[str]:
    """The value fields (dotted paths) the config's partitioner or extractor reads."""
    part = _short(config.get("partitioner.class"), "DefaultPartitioner")
    out = []
    if part in TIME_PARTITIONERS and str(config.get("timestamp.extractor", "")).strip() == "RecordField":
        out.append(str(config.get("timestamp.field", "timestamp")).strip() or "timestamp")
    if part == FIELD_PARTITIONER:
        out += [f.strip() for f in str(config.get("partition.field.name", "")).split(",") if f.strip()]
    return list(dict.fromkeys(out))


def needs_structs(config: Mapping[str, str]) -> bool:
    return (_short(config.get("format.class"), "JsonFormat") in STRUCT_FORMATS
            or _short(config.get("partitioner.class")) == FIELD_PARTITIONER)


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _field_value(path: str, ts_field: str | None, ms: int, seq: int | None) -> Any:
    """What a record holds in a field the config reads: RecordField's field is the record's
    time, in one of the forms RecordField parses (R6.5: an ISO-8601 date-time string, or epoch
    ms as a number in a schemaless map); another field FieldPartitioner reads is the record's
    UTC day, so records share a few partitions."""
    if path == ts_field:
        return ms if (seq or 0) % 2 else _iso(ms)
    return _iso(ms)[:10]


def _set_path(value: dict[str, Any], path: str, item: Any) -> None:
    *parents, last = path.split(".")
    cur = value
    for name in parents:
        if not isinstance(cur.get(name), dict):
            cur[name] = {}
        cur = cur[name]
    cur.setdefault(last, item)


def infer_schema(payload: Any) -> tuple[dict[str, Any], Any]:
    """A JsonConverter schema for a schemaless JSON value and the payload it types (a list of
    mixed items becomes its JSON text)."""
    if isinstance(payload, bool):
        return {"type": "boolean", "optional": False}, payload
    if isinstance(payload, int):
        return {"type": "int64", "optional": False}, payload
    if isinstance(payload, float):
        return {"type": "double", "optional": False}, payload
    if isinstance(payload, str):
        return {"type": "string", "optional": False}, payload
    if payload is None:
        return {"type": "string", "optional": True}, None
    if isinstance(payload, dict):
        fields, out = [], {}
        for k, v in payload.items():
            s, out[k] = infer_schema(v)
            fields.append({"field": str(k), **s})
        return {"type": "struct", "fields": fields, "optional": False}, out
    items = [infer_schema(x) for x in payload]
    kinds = {json.dumps(s, sort_keys=True) for s, _ in items}
    if len(kinds) == 1:
        return {"type": "array", "items": items[0][0], "optional": False}, [p for _, p in items]
    return {"type": "string", "optional": False}, json.dumps(payload, separators=(",", ":"))


def _as_map(value: Any) -> dict[str, Any]:
    """A value that is no map, wrapped in one that still carries its seq."""
    if isinstance(value, dict):
        return dict(value)
    seq = record_seq(value)
    return {**({"seq": seq} if seq is not None else {}), "value": value}


def with_fields(records: Sequence[Mapping[str, Any]], config: Mapping[str, str],
                time_field: str | None = None) -> list[dict[str, Any]]:
    """The records (in the notation of the config's value converter) with every field the
    config reads present, and Structs where it needs a schema; a record that has a field
    keeps it (the scenario may be about that field's value). RecordField's field is the
    record's time: the value of the top-level `time_field` as it is (its type and form) where
    a value has one, else the record's timestamp."""
    cfg = with_worker_converters(config)
    paths = fields_read(cfg)
    structs = needs_structs(cfg)
    kind = converter_kind(cfg)
    if (not paths and not structs) or kind not in ("json", "json-schemas"):
        return [dict(r) for r in records]
    ts_field = paths[0] if paths and _short(cfg.get("partitioner.class")) in TIME_PARTITIONERS else None
    out = []
    for i, r in enumerate(records):
        r = dict(r)
        value = r.get("value")
        if value is None:
            out.append(r)
            continue
        ms = r.get("timestamp") if isinstance(r.get("timestamp"), int) else BASE_T + i * 60_000
        envelope = kind == "json-schemas"
        schema = value.get("schema") if envelope and isinstance(value, dict) else None
        payload = value.get("payload") if envelope and isinstance(value, dict) else value
        if envelope and schema is not None and schema.get("type") == "struct":
            payload = dict(payload or {})
            schema = _with_struct_fields(schema, payload, paths, ts_field, ms, record_seq(payload), time_field)
            r["value"] = {"schema": schema, "payload": payload}
        elif paths or structs:
            payload = _as_map(payload)
            for p in paths:
                own = p == ts_field and time_field is not None and time_field in payload
                _set_path(payload, p, payload[time_field] if own else
                          _field_value(p, ts_field, ms, record_seq(payload) if not envelope else None))
            if envelope:
                typed, payload = infer_schema(payload)
                r["value"] = {"schema": typed, "payload": payload}
            else:
                r["value"] = payload
        out.append(r)
    return out


def _with_struct_fields(schema: dict[str, Any], payload: dict[str, Any], paths: list[str], ts_field: str | None,
                        ms: int, seq: int | None, time_field: str | None = None) -> dict[str, Any]:
    """A Struct's schema and payload (changed in place) with the fields at `paths` added where
    missing: a string field (RecordField parses its ISO-8601 text), or for RecordField's a copy
    of the top-level `time_field` where the Struct has one."""
    schema = json.loads(json.dumps(schema))
    own = next((f for f in schema.get("fields", []) if f.get("field") == time_field), None)
    for path in paths:
        if path == ts_field and "." not in path and own is not None and time_field in payload:
            if not any(x.get("field") == path for x in schema.get("fields", [])):
                schema.setdefault("fields", []).append({**own, "field": path})
                payload[path] = payload[time_field]
            continue
        *parents, last = path.split(".")
        s, p = schema, payload
        for name in parents:
            f = next((x for x in s.get("fields", []) if x.get("field") == name), None)
            if f is None:
                f = {"field": name, "type": "struct", "fields": [], "optional": False}
                s.setdefault("fields", []).append(f)
                p[name] = {}
            if f.get("type") != "struct" or not isinstance(p.get(name), dict):
                break  # a field of another type on the path: the config's meaning for it stands
            p[name] = dict(p[name])
            s, p = f, p[name]
        else:
            if not any(x.get("field") == last for x in s.get("fields", [])):
                s.setdefault("fields", []).append({"field": last, "type": "string", "optional": False})
                p[last] = str(_field_value(path, ts_field, ms, 0))
    return schema


# --- the scenario under the config ------------------------------------------------------------
def fit(scenario: Scenario, config: Mapping[str, str]) -> Scenario:
    """`scenario` (its records already in the config's converters, its connector the config)
    with its topics mapped onto the config's, its records carrying the fields the config reads,
    and where the config would leave them all in open files, a file's worth more of them.
    ValueError where no topic name fits the config's `topics.regex`."""
    from conformance.generators.testable import closing_a_file

    topics, mapping = _mapped_topics(scenario, config)
    records = [{**r, "topic": mapping.get(r["topic"], r["topic"])} for r in with_fields(scenario.records, config)]
    # records the config leaves in open files only get a file's worth more (conformance.generators.testable)
    records = closing_a_file(with_worker_converters(config), records)
    moved = [f"{a} → {b}" for a, b in mapping.items() if a != b]
    notes = scenario.notes
    if moved:
        line = "under the given connector config: scenario topic " + ", ".join(moved)
        notes = f"{notes}\n{line}".strip() if line not in notes else notes
    return dataclasses.replace(scenario, topics=topics, records=records, notes=notes)


def mapping_note(scenario: Scenario) -> str | None:
    """The topic mapping `fit` wrote into a scenario's notes, if any."""
    found = [ln for ln in scenario.notes.splitlines() if ln.startswith("under the given connector config:")]
    return found[0] if found else None
