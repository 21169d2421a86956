"""Records in the Schema Registry's wire format: the bytes a producer using Confluent's Avro
serializer writes for a scenario's key or value, registering its schema first.

A scenario whose converter is AvroConverter writes each key and value as
`{"schema": <an Avro schema>, "payload": <the value>}`: the schema a producer application
holds (an .avsc), and the value in JSON with these conventions: `bytes` and `fixed` as base64
text, a decimal as a number or its text ("12.34"), date as days, time-millis as milliseconds of
the day, timestamp-millis as epoch milliseconds, an enum as its symbol, a union's value as it is
(the serializer writes the first branch that takes it). `null` is a null key or value.

The producer registers the schema under the subject its subject name strategy names (the
converter's `<which>.subject.name.strategy`, TopicNameStrategy by default: `<topic>-value`), as
`auto.register.schemas=true` does, and writes magic byte 0, the id the registry gave (4 bytes,
big-endian) and the Avro binary of the value.
"""
from __future__ import annotations

import base64
import binascii
import decimal
import io
import json
from typing import Any, Protocol

from reference_impl.avro_data import subject_for


class ProducerRegistry(Protocol):
    """What a producer asks a registry: the id of a schema under a subject (registering it)."""

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> int: ...


class RegistryNotation(ValueError):
    """A key or value that is not `{"schema": <Avro schema>, "payload": …}`, or a payload its schema
    does not take: no producer could have written it."""


def _avro_datum(node: Any, payload: Any, named: dict[str, Any], ns: str | None = None) -> Any:
    """The scenario's JSON payload as the Python datum fastavro writes for `node`."""
    if payload is None:
        return None
    if isinstance(node, str):
        if node in named:
            return _avro_datum(named[node], payload, named, ns)
        full = f"{ns}.{node}" if ns and "." not in node else node
        if full in named:
            return _avro_datum(named[full], payload, named, ns)
        if node in ("bytes",):
            return _b64(payload)
        return payload
    if isinstance(node, list):
        for member in node:
            if member == "null":
                continue
            try:
                return _avro_datum(member, payload, named, ns)
            except (RegistryNotation, TypeError, ValueError, KeyError):
                continue
        return payload
    t = node.get("type")
    if isinstance(t, (dict, list)):
        return _avro_datum(t, payload, named, ns)
    if t in ("record", "error", "enum", "fixed"):
        name = node["name"]
        space = node.get("namespace", ns)
        full = name if "." in name or not space else f"{space}.{name}"
        named[full] = node
        ns = full.rpartition(".")[0] or None
    logical = node.get("logicalType")
    if logical == "decimal" and t in ("bytes", "fixed"):
        if isinstance(payload, bool) or not isinstance(payload, (int, float, str, decimal.Decimal)):
            raise RegistryNotation(f"a decimal is a number or its text, not {payload!r}")
        try:
            return decimal.Decimal(str(payload)).quantize(decimal.Decimal(1).scaleb(-int(node.get("scale", 0))))
        except decimal.InvalidOperation:
            raise RegistryNotation(f"{payload!r} is not a decimal") from None
    if t in ("bytes", "fixed"):
        return _b64(payload)
    if t == "record" or t == "error":
        if not isinstance(payload, dict):
            raise RegistryNotation(f"a record is a JSON object, not {payload!r}")
        return {f["name"]: _avro_datum(f["type"], payload.get(f["name"], f.get("default")), named, ns)
                for f in node["fields"]}
    if t == "array":
        if not isinstance(payload, list):
            raise RegistryNotation(f"an array is a JSON array, not {payload!r}")
        return [_avro_datum(node["items"], v, named, ns) for v in payload]
    if t == "map":
        if not isinstance(payload, dict):
            raise RegistryNotation(f"a map is a JSON object, not {payload!r}")
        return {k: _avro_datum(node["values"], v, named, ns) for k, v in payload.items()}
    return payload


def _b64(payload: Any) -> bytes:
    if not isinstance(payload, str):
        raise RegistryNotation(f"bytes are written in base64 text, not {payload!r}")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise RegistryNotation(f"{payload[:40]!r} is not base64") from None


def schema_text(schema: Any) -> str:
    """The schema as the producer registers it (compact JSON, as Confluent's Java client sends it)."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def record_name(schema: Any) -> str | None:
    """The full name of a record schema (for the record name strategies), else None."""
    if isinstance(schema, dict) and schema.get("type") in ("record", "error"):
        name, ns = schema["name"], schema.get("namespace")
        return name if "." in name or not ns else f"{ns}.{name}"
    return None


def avro_bytes(item: Any, topic: str, which: str, registry: ProducerRegistry, strategy: str) -> bytes:
    """One key or value in the scenario's notation → the bytes the producer writes (registering
    its schema under its subject first). RegistryNotation where no producer could write it."""
    import fastavro
    from fastavro.validation import ValidationError, validate

    if not isinstance(item, dict) or set(item) != {"schema", "payload"}:
        raise RegistryNotation('with AvroConverter a scenario gives {"schema": <Avro schema>, "payload": <value>}, '
                               f"not {json.dumps(item)[:80]}")
    schema = item["schema"]
    try:
        parsed = fastavro.parse_schema(schema)
    except Exception as e:  # noqa: BLE001 - fastavro raises several kinds for a bad schema
        raise RegistryNotation(f"not an Avro schema: {e}") from None
    datum = _avro_datum(schema, item["payload"], {})
    try:
        validate(datum, parsed, raise_errors=True)
    except ValidationError as e:
        raise RegistryNotation(f"the payload does not fit its Avro schema: {e}") from None
    subject = subject_for(topic, which, strategy, record_name(schema))
    schema_id = registry.register(subject, schema_text(schema), "AVRO")
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, datum)
    return b"\x00" + int(schema_id).to_bytes(4, "big", signed=True) + buf.getvalue()


# --- the same records, written by a producer with an Avro schema ---------------------------------

def avro_notation(values: list[Any], topic: str, which: str) -> list[Any]:
    """Connect values (reference_impl.connect_data.ConnectValue) of one topic's keys or values
    as a producer writing Avro holds them: a schema'd value with the Avro schema AvroData makes
    of its Connect schema (what AvroConverter.fromConnectData registers), a schemaless one (a JSON
    object, say) with one record schema for the whole topic, every field optional with default
    null, in the order fields first appear. Null stays null."""
    from reference_impl.formats.avro import avro_schema, to_avro

    inferred = _inferred_schema([cv.value for cv in values if cv.value is not None and cv.schema is None],
                                _name(topic, which))
    out: list[Any] = []
    for cv in values:
        if cv.value is None:
            out.append(None)
        elif cv.schema is not None:
            out.append({"schema": avro_schema(cv.schema), "payload": _notation(to_avro(cv.value, cv.schema))})
        else:
            out.append({"schema": inferred, "payload": _notation(_fit(cv.value, inferred))})
    return out


def _name(topic: str, which: str) -> str:
    import re

    short = re.sub(r"[^A-Za-z0-9_]", "_", topic) or "topic"
    return f"sinkcheck.scenario.{'_' + short if short[0].isdigit() else short}.{which.capitalize()}"


def _notation(datum: Any) -> Any:
    if isinstance(datum, (bytes, bytearray)):
        return base64.b64encode(bytes(datum)).decode("ascii")
    if isinstance(datum, decimal.Decimal):
        return str(datum)
    if isinstance(datum, dict):
        return {k: _notation(v) for k, v in datum.items()}
    if isinstance(datum, list):
        return [_notation(v) for v in datum]
    return datum


def _kind(v: Any) -> Any:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "long"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (bytes, bytearray)):
        return "bytes"
    return None


def _inferred_schema(samples: list[Any], full_name: str) -> Any:
    """One Avro type that takes every sample (schemaless values of one topic)."""
    present = [s for s in samples if s is not None]
    if not present:
        return "string"
    if all(isinstance(s, dict) for s in present):
        order: list[str] = []
        for s in present:
            order += [k for k in s if k not in order]
        ns, _, short = full_name.rpartition(".")
        fields = []
        for k in order:
            field_type = _inferred_schema([s.get(k) for s in present], f"{full_name}_{_field_name(k)}")
            fields.append({"name": _field_name(k), "type": ["null", field_type], "default": None})
        return {"type": "record", "name": short, "namespace": ns, "fields": fields}
    if all(isinstance(s, list) for s in present):
        return {"type": "array", "items": ["null", _inferred_schema([x for s in present for x in s], f"{full_name}_item")]}
    kinds = {_kind(s) for s in present}
    if kinds == {"long", "double"}:
        return "double"
    return kinds.pop() if len(kinds) == 1 and None not in kinds else "string"


def _field_name(key: Any) -> str:
    import re

    name = re.sub(r"[^A-Za-z0-9_]", "_", str(key)) or "_"
    return "_" + name if name[0].isdigit() else name


def _fit(value: Any, schema: Any) -> Any:
    """A schemaless value as a datum of its inferred schema (keys renamed as the fields are)."""
    if value is None:
        return None
    if isinstance(schema, list):
        return _fit(value, next(m for m in schema if m != "null"))
    if isinstance(schema, dict) and schema.get("type") == "record":
        given = {_field_name(k): v for k, v in value.items()} if isinstance(value, dict) else {}
        return {f["name"]: _fit(given.get(f["name"]), f["type"]) for f in schema["fields"]}
    if isinstance(schema, dict) and schema.get("type") == "array":
        return [_fit(v, schema["items"]) for v in value] if isinstance(value, list) else []
    if schema == "string" and not isinstance(value, str):
        return json.dumps(value, separators=(",", ":"), default=str)
    if schema == "double" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _canonical(text: str, schema_type: str = "AVRO") -> str:
    """A schema as a registry compares it: an Avro schema as Java's toString() writes it (what
    a registry stores and serves: nested names relative to their namespace, Avro's key order)."""
    if schema_type == "AVRO":
        from adapters.registry.avro_schemas import AvroSchemaError, canonical_text

        try:
            return canonical_text(text)
        except AvroSchemaError:
            return text
    try:
        return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return text


def _equality_key(text: str, schema_type: str) -> str:
    from adapters.registry.avro_schemas import AvroSchemaError, equality_key

    try:
        return equality_key(text)
    except AvroSchemaError:
        return text


class SnapshotRegistry:
    """A registry as a run left it, standing in for it when the scenario's records are written
    again (the model's input): registering a schema gives the id the run's producer got for it,
    and the snapshot is what a reader of the records sees."""

    def __init__(self, snapshot: Any):
        self._snapshot = snapshot

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> int:
        # as the registry answered the producer: a schema equal to one the subject holds but for
        # its docs and aliases (Avro's Schema.equals) is that one, under its id
        same = _equality_key if schema_type == "AVRO" else _canonical
        want = _canonical(schema_text, schema_type), same(schema_text, schema_type)
        held = [(sv.id, s) for sv in self._snapshot.subjects.get(subject, ())
                if (s := self._snapshot.schema(sv.id)) is not None and s.schema_type == schema_type]
        found = next((i for i, s in held if _canonical(s.text, schema_type) == want[0]), None)
        if found is None:
            found = next((i for i, s in held if same(s.text, schema_type) == want[1]), None)
        if found is None:
            raise RegistryNotation(f"the run's registry holds no such {schema_type} schema under {subject}: "
                                   f"{schema_text[:80]}")
        return found

    def snapshot(self) -> Any:
        return self._snapshot
