"""A scenario's records on the wire: the bytes a producer writes for each key and value, as the
scenario's converters read them.

A scenario states its converters in its connector config (`key.converter`, `value.converter`
and their settings, as a user POSTs them), and writes each record's key and value in the
notation of its converter:

| converter | a key or value in the scenario | the bytes produced |
|---|---|---|
| JsonConverter (`schemas.enable=true`, its default) | the envelope `{"schema": …, "payload": …}` | the JSON text |
| JsonConverter (`schemas.enable=false`) | any JSON value | the JSON text |
| StringConverter | a string | its UTF-8 |
| ByteArrayConverter | the bytes in base64 | the bytes |
| AvroConverter | `{"schema": <Avro schema>, "payload": …}` | the Schema Registry wire format (inputs.registry_wire) |
| ProtobufConverter | `{"schema": <proto3 text>, "payload": …}` | the Schema Registry wire format (inputs.protobuf_wire) |

`null` is a null key or value (a tombstone) for every converter. A scenario only produces what
its converters accept (`check_realizable`): a real deployment could have produced it. The model
reads the same bytes through the same converter (reference_impl.converters), so it sees what
the sink's put() sees.
"""
from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Mapping, Sequence

from adapters.processes.connect_worker import WORKER_CONVERTERS
from adapters.observation import RecordToProduce
from reference_impl.connect_data import SinkRecord
from reference_impl.converters import (BYTEARRAY_CONVERTER, JSON_CONVERTER, STRING_CONVERTER, Converter,
                                       ConverterError, UnknownConverter, converter_for)



# how a scenario for a sink that is no Kafka Connect connector (Spark Structured Streaming reads
# the Kafka values as they are) writes its records: JSON text
JSON_TEXT = {
    "key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "false",
    "value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "false",
}


class NotRealizable(ValueError):
    """A scenario whose records its own converters would refuse: no real deployment produces it."""


def with_worker_converters(config: Mapping[str, str], worker: Mapping[str, str] = WORKER_CONVERTERS) -> dict[str, str]:
    """`config` with the worker's converters filled in where it names none (a user's connector
    JSON usually leaves them to the worker): the scenario then says what the sink receives."""
    out = dict(config)
    for which in ("key", "value"):
        if not str(out.get(f"{which}.converter", "")).strip():
            out.update({k: v for k, v in worker.items() if k.startswith(which + ".")})
    return out


def converters(config: Mapping[str, str], worker: Mapping[str, str] = WORKER_CONVERTERS) -> tuple[Converter, Converter]:
    """(key, value) converters of a scenario's config, the worker's where it names none;
    NotRealizable for a converter the model does not know."""
    full = with_worker_converters(config, worker)
    try:
        return converter_for(full, "key"), converter_for(full, "value")
    except UnknownConverter as e:
        raise NotRealizable(str(e)) from None


def scratch_registry() -> Any:
    """A registry of its own for records produced outside a run (a check, the model alone): the
    in-memory one, with the Schema Registry's semantics."""
    from adapters.registry.memory import InMemoryRegistry

    return InMemoryRegistry()


def to_bytes(item: Any, conv: Converter, where: str = "value", topic: str | None = None,
             registry: Any = None) -> bytes | None:
    """One key or value in the scenario's notation → the bytes produced (a registry converter's
    registered with `registry` under the subject of `topic`)."""
    if item is None:
        return None
    if conv.reads_registry:
        from conformance.inputs.registry_wire import RegistryNotation, avro_bytes

        if topic is None or registry is None:
            raise NotRealizable(f"{where}: {conv.short} needs a topic and a schema registry to write its bytes")
        if conv.short == "ProtobufConverter":
            from conformance.inputs.protobuf_wire import ProtobufNotation, protobuf_bytes

            try:
                return protobuf_bytes(item, topic, where, registry, conv.subject_strategy(where))
            except ProtobufNotation as e:
                raise NotRealizable(f"{where}: {e}") from None
        try:
            return avro_bytes(item, topic, where, registry, conv.subject_strategy(where))
        except RegistryNotation as e:
            raise NotRealizable(f"{where}: {e}") from None
    if conv.short == "JsonConverter":
        return json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if not isinstance(item, str):
        raise NotRealizable(f"{where}: with {conv.short} a scenario gives a "
                            f"{'string' if conv.short == 'StringConverter' else 'base64 string of the bytes'}, "
                            f"not {type(item).__name__} {json.dumps(item)[:60]}")
    if conv.short == "StringConverter":
        return item.encode("utf-8")
    try:
        return base64.b64decode(item, validate=True)
    except (binascii.Error, ValueError):
        raise NotRealizable(f"{where}: with ByteArrayConverter a scenario gives the bytes in base64; "
                            f"{item[:40]!r} is not base64") from None


def from_bytes(data: bytes | None, conv: Converter) -> Any:
    """The inverse of `to_bytes`: the scenario's notation for bytes read with `conv`."""
    if data is None:
        return None
    if conv.short == "JsonConverter":
        return json.loads(data)
    if conv.short == "StringConverter":
        return data.decode("utf-8")
    return base64.b64encode(data).decode("ascii")


def reexpress(records: Sequence[Mapping[str, Any]], old: Mapping[str, str], new: Mapping[str, str],
              worker: Mapping[str, str] = WORKER_CONVERTERS) -> list[dict[str, Any]]:
    """The same records for a config with other converters (a named scenario run under a user's
    connector config): each key and value read by its old converter and written the way the new
    one reads it, as that converter's `fromConnectData` would have written it. Text and bytes
    that are not text or bytes already carry the JSON of the value, so its seq stays findable."""
    old_k, old_v = converters(old, worker)
    new_k, new_v = converters(new, worker)
    if _same(old_k, new_k) and _same(old_v, new_v):
        return [dict(r) for r in records]
    registry = scratch_registry() if old_k.reads_registry or old_v.reads_registry else None
    out = [dict(r) for r in records]
    for what, was, now in (("key", old_k, new_k), ("value", old_v, new_v)):
        if _same(was, now):
            continue
        read = [was.to_connect(data := to_bytes(r.get(what), was, what, r["topic"], registry), r["topic"],
                               registry.snapshot() if registry is not None and data is not None else None, what)
                for r in records]
        if now.short == "ProtobufConverter":  # a producer of Protobuf: one message a topic for schemaless values
            for topic in {r["topic"] for r in records}:
                at = [i for i, r in enumerate(records) if r["topic"] == topic]
                for i, item in zip(at, _protobuf_notation([read[i] for i in at], what)):
                    out[i][what] = item
            continue
        if now.reads_registry:  # a producer of Avro: one schema a topic for schemaless values
            from conformance.inputs.registry_wire import avro_notation

            for topic in {r["topic"] for r in records}:
                at = [i for i, r in enumerate(records) if r["topic"] == topic]
                for i, item in zip(at, avro_notation([read[i] for i in at], topic, what)):
                    out[i][what] = item
            continue
        for i, cv in enumerate(read):
            if records[i].get(what) is not None:
                out[i][what] = _written_as(cv, now)
    return out


def _protobuf_notation(values: list[Any], what: str) -> list[Any]:
    """Connect values of one topic's keys or values as a Protobuf producer writes them: a Struct as
    the message of its schema, a schemaless JSON object as a message of one schema inferred for the
    topic, a primitive (text, bytes, a number, a boolean) as the bare wrapper of its type; an array
    or a map is no message: NotRealizable."""
    from conformance.inputs.protobuf_notation import (fitted_payload, inferred_schema, producer_payload,
                                                      producer_schema)
    from reference_impl.connect_data import schema_to_json
    from reference_impl.formats.json_format import to_json_value

    plain = [cv.value for cv in values if cv.value is not None and cv.schema is None and isinstance(cv.value, dict)]
    inferred = inferred_schema(plain, what) if plain else None
    out: list[Any] = []
    for cv in values:
        wrapper = _bare_wrapper(cv)
        if cv.value is None:
            out.append(None)
        elif wrapper is not None:
            out.append(wrapper)
        elif cv.schema is None and isinstance(cv.value, dict):
            assert inferred is not None
            out.append({"schema": producer_schema(inferred),
                        "payload": producer_payload(inferred, fitted_payload(inferred, cv.value))})
        elif cv.schema.type == "struct":
            schema = schema_to_json(cv.schema)
            out.append({"schema": producer_schema(schema),
                        "payload": producer_payload(schema, to_json_value(cv.value, cv.schema))})
        else:
            kind = cv.schema.type if cv.schema is not None else type(cv.value).__name__
            raise NotRealizable(f"{what}.converter=ProtobufConverter: a {kind} {what} is no Protobuf message (a "
                                "Struct, a JSON object or a primitive is)")
    return out


_WRAPPER_OF = {"string": "StringValue", "bytes": "BytesValue", "boolean": "BoolValue", "int8": "Int32Value",
               "int16": "Int32Value", "int32": "Int32Value", "int64": "Int64Value", "float32": "FloatValue",
               "float64": "DoubleValue"}


def _bare_wrapper(cv: Any) -> dict[str, Any] | None:
    """A primitive value as a producer writes it bare: the google.protobuf wrapper of its type (which
    the converter reads back as that primitive, wrapper.for.raw.primitives)."""
    from conformance.inputs.protobuf_wire import WRAPPERS_PROTO

    v, s = cv.value, cv.schema
    if v is None or isinstance(v, (dict, list)) or (s is not None and (s.type not in _WRAPPER_OF or s.name)):
        return None
    if s is not None:
        kind = s.type
    elif isinstance(v, bool):
        kind = "boolean"
    elif isinstance(v, int):
        kind = "int64"
    elif isinstance(v, (bytes, bytearray)):
        kind = "bytes"
    elif isinstance(v, str):
        kind = "string"
    else:
        kind = "float64"
    payload = base64.b64encode(bytes(v)).decode("ascii") if kind == "bytes" else float(v) if kind.startswith(
        "float") else v
    return {"schema": WRAPPERS_PROTO, "message": f"google.protobuf.{_WRAPPER_OF[kind]}", "payload": payload}


def _same(a: Converter, b: Converter) -> bool:
    """Whether two converters write a scenario's keys or values alike (two AvroConverters do,
    whatever registry each names)."""
    return a == b or (a.reads_registry and a.short == b.short)


def _written_as(cv: Any, conv: Converter) -> Any:
    from reference_impl.connect_data import schema_to_json
    from reference_impl.formats.json_format import to_json_value

    if conv.short == "StringConverter":
        return cv.value if isinstance(cv.value, str) else json.dumps(_plain(to_json_value(cv.value, cv.schema)))
    if conv.short == "ByteArrayConverter":
        raw = cv.value if isinstance(cv.value, bytes) else json.dumps(_plain(to_json_value(cv.value, cv.schema))).encode()
        return base64.b64encode(raw).decode("ascii")
    payload = _plain(to_json_value(cv.value, cv.schema))
    if not conv.schemas_enabled:
        return payload
    return {"schema": None if cv.schema is None else schema_to_json(cv.schema), "payload": payload}


def _plain(v: Any) -> Any:
    """JSON-serialisable: Decimals as numbers."""
    import decimal

    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def header_value_bytes(value: Any) -> bytes | None:
    """A header value in a scenario: null, text (its UTF-8), or `{"base64": …}` for bytes."""
    if value is None:
        return None
    if isinstance(value, dict):
        try:
            return base64.b64decode(str(value["base64"]), validate=True)
        except (KeyError, binascii.Error, ValueError):
            raise NotRealizable(f"a header value {json.dumps(value)[:60]} is text, null or {{\"base64\": …}}") from None
    return str(value).encode("utf-8")


def header_text(value: Any) -> str | None:
    """What the sink holds for a header value: SimpleHeaderConverter reads the bytes as UTF-8
    text (and scenarios carry only text it gives back as it is)."""
    raw = header_value_bytes(value)
    return None if raw is None else raw.decode("utf-8", "replace")


def _header_bytes(headers: Any) -> tuple[tuple[str, bytes | None], ...]:
    return tuple((h[0], header_value_bytes(h[1])) for h in headers or [])


def record_to_produce(r: Mapping[str, Any], key_conv: Converter, value_conv: Converter,
                      registry: Any = None) -> RecordToProduce:
    """A scenario record → the Kafka record a producer writes (its schemas registered with
    `registry` where its converters read a registry's wire format)."""
    topic = r["topic"]
    return RecordToProduce(topic, int(r["partition"]), r.get("timestamp"),
                           to_bytes(r.get("key"), key_conv, "key", topic, registry),
                           to_bytes(r.get("value"), value_conv, "value", topic, registry),
                           _header_bytes(r.get("headers")))


def uses_registry(config: Mapping[str, str], worker: Mapping[str, str] = WORKER_CONVERTERS) -> bool:
    """Whether a config's converters read a Schema Registry's wire format."""
    return any(c.reads_registry for c in converters(config, worker))


def records_to_produce(config: Mapping[str, str], records: Sequence[Mapping[str, Any]],
                       worker: Mapping[str, str] = WORKER_CONVERTERS, registry: Any = None) -> list[RecordToProduce]:
    key_conv, value_conv = converters(config, worker)
    if registry is None and (key_conv.reads_registry or value_conv.reads_registry):
        registry = scratch_registry()
    return [record_to_produce(r, key_conv, value_conv, registry) for r in records]


def sink_record(r: Mapping[str, Any], offset: int, key_conv: Converter, value_conv: Converter,
                read_with: tuple[Converter, Converter] | None = None, registry: Any = None,
                view: Any = None) -> SinkRecord:
    """What the sink's put() receives for scenario record `r` at `offset`: its bytes through the
    converters (ConverterError where a converter refuses them), or through `read_with` where the
    connector was given other converters than those the scenario writes its records for.
    Headers are their text (SimpleHeaderConverter parses and the sink stringifies them again; for
    the header values scenarios carry, text that round-trips). A registry converter's records are
    written with `registry` and read with `view` (its schemas and subjects: the registry's snapshot
    after they were produced)."""
    p = record_to_produce(r, key_conv, value_conv, registry)
    read_key, read_value = read_with or (key_conv, value_conv)
    if view is None and registry is not None:
        view = registry.snapshot()
    key = read_key.to_connect(p.key, p.topic, view, "key")
    value = read_value.to_connect(p.value, p.topic, view, "value")
    headers = r.get("headers")
    return SinkRecord(
        topic=p.topic, partition=p.partition, offset=offset, timestamp=p.timestamp,
        key=key.value, key_schema=key.schema, value=value.value, value_schema=value.schema,
        headers=None if headers is None else tuple((h[0], header_text(h[1])) for h in headers))


def sink_records(config: Mapping[str, str], records: Sequence[Mapping[str, Any]], offsets: Sequence[int],
                 worker: Mapping[str, str] = WORKER_CONVERTERS,
                 read_config: Mapping[str, str] | None = None, registry: Any = None) -> list[SinkRecord]:
    """Each scenario record at its offset, as the sink receives it (the model's input): produced
    as `config`'s converters write it, read by `read_config`'s (default: the same). Records of a
    registry converter are written with `registry` (a run's: their schemas are there already;
    else a scratch one, filled in the records' order) and read with its snapshot."""
    key_conv, value_conv = converters(config, worker)
    read_with = None if read_config is None else converters(read_config, worker)
    convs = (key_conv, value_conv) + (read_with or ())
    view = None
    if any(c.reads_registry for c in convs):
        registry = registry if registry is not None else scratch_registry()
        produced = [record_to_produce(r, key_conv, value_conv, registry) for r in records]
        del produced  # every schema registered before any is read: the versions a reader sees
        view = registry.snapshot()
    return [sink_record(r, off, key_conv, value_conv, read_with, registry, view) for r, off in zip(records, offsets)]


def registry_accepts(config: Mapping[str, str], records: Sequence[Mapping[str, Any]],
                     worker: Mapping[str, str] = WORKER_CONVERTERS) -> bool:
    """Whether a Schema Registry checking each subject's default compatibility (BACKWARD)
    takes every schema the records' producers register, in the records' order: one it refuses
    (HTTP 409) is a record no producer could write."""
    from adapters.registry.api import IncompatibleSchema

    key_conv, value_conv = converters(config, worker)
    if not (key_conv.reads_registry or value_conv.reads_registry):
        return True
    registry = scratch_registry()
    try:
        for r in records:
            for what, conv in (("key", key_conv), ("value", value_conv)):
                if conv.reads_registry:
                    to_bytes(r.get(what), conv, what, r.get("topic"), registry)
    except IncompatibleSchema:
        return False
    except (NotRealizable, ConverterError):
        return True  # refused otherwise: check_realizable says how
    return True


def check_realizable(config: Mapping[str, str], records: Sequence[Mapping[str, Any]],
                     worker: Mapping[str, str] = WORKER_CONVERTERS) -> None:
    """NotRealizable naming the first record whose key or value its converter refuses, or whose
    schema the Schema Registry refuses to register (a producer's write fails there)."""
    from adapters.registry.api import IncompatibleSchema

    key_conv, value_conv = converters(config, worker)
    registry = scratch_registry() if key_conv.reads_registry or value_conv.reads_registry else None
    for i, r in enumerate(records):
        for what, conv in (("key", key_conv), ("value", value_conv)):
            try:
                data = to_bytes(r.get(what), conv, what, r.get("topic"), registry)
                conv.to_connect(data, r.get("topic"), registry.snapshot() if registry is not None else None, what)
            except IncompatibleSchema as e:
                raise NotRealizable(f"record #{i} ({r.get('topic')}-{r.get('partition')}): its producer cannot "
                                    f"register its {what} schema: {e}") from None
            except NotRealizable as e:
                raise NotRealizable(f"record #{i} ({r.get('topic')}-{r.get('partition')}): {e}") from None
            except ConverterError as e:
                named = "" if config.get(f"{what}.converter") else " (the worker's; the config names none)"
                raise NotRealizable(f"record #{i} ({r.get('topic')}-{r.get('partition')}): its {what} is refused by "
                                    f"{what}.converter={conv.describe()}{named}: {e}") from None


__all__ = ["BYTEARRAY_CONVERTER", "JSON_CONVERTER", "JSON_TEXT", "NotRealizable", "STRING_CONVERTER", "WORKER_CONVERTERS",
           "check_realizable", "converters", "from_bytes", "reexpress", "record_to_produce", "records_to_produce",
           "scratch_registry", "sink_record", "sink_records", "to_bytes", "uses_registry", "with_worker_converters"]
