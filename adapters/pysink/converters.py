"""How the Python sink reads a record's key and value bytes: the converter its connector config
names (`key.converter` / `value.converter`, with `*.schemas.enable`), else the worker's.

Written from Kafka's converters, independently of the reference model. The sink works on
JsonConverter's shape of data throughout: (schema as a JSON schema object or None, payload as
JSON, whether there is a schema):

* JsonConverter with `schemas.enable=true` (its default): every non-null value must be the
  envelope `{"schema", "payload"}` and nothing else; the schema's type names are JsonConverter's
  (`float`, `double`, ...). With `schemas.enable=false` any JSON is a schemaless value.
* StringConverter: the UTF-8 text, with an optional string schema (also for null bytes).
* ByteArrayConverter: the bytes (carried as base64 text, as JsonConverter carries bytes), with
  an optional bytes schema (also for null bytes).
* AvroConverter: the Schema Registry wire format, read with the registry the sink was given
  (adapters/pysink/avroread.py); `schema.registry.url` is required, as the converter requires it.
* ProtobufConverter: the same wire format with message indexes and a proto3 schema
  (adapters/pysink/protoread.py), with the same registry and `schema.registry.url`.

A record its converter refuses stops the task: Connect fails the task on a conversion error
unless `errors.tolerance=all`, which the Python sink does not support.
"""
from __future__ import annotations

import base64
import decimal
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from adapters.processes.connect_worker import WORKER_CONVERTERS

JSON_TYPES = {"boolean", "int8", "int16", "int32", "int64", "float", "double", "bytes", "string", "array", "map",
              "struct"}
KINDS = {"JsonConverter": "json", "StringConverter": "string", "ByteArrayConverter": "bytearray",
         "AvroConverter": "avro", "ProtobufConverter": "protobuf"}
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"


class ConversionError(ValueError):
    """The converter refused the bytes (a DataException in Connect)."""


@dataclass(frozen=True)
class RecordConverter:
    kind: str  # json | string | bytearray | avro | protobuf
    schemas: bool = True  # JsonConverter's schemas.enable
    which: str = "value"
    registry_url: str = ""  # AvroConverter's schema.registry.url
    strategy: str = "io.confluent.kafka.serializers.subject.TopicNameStrategy"
    registry: Any = field(default=None, compare=False)  # what the sink asks the registry through

    @classmethod
    def from_config(cls, config: Mapping[str, str], which: str) -> "RecordConverter":
        """Raises ValueError naming the property for a converter the sink does not read."""
        prop = f"{which}.converter"
        given = str(config.get(prop, "")).strip()
        source = config if given else WORKER_CONVERTERS
        name = str(source[prop]).strip()
        kind = KINDS.get(name.rsplit(".", 1)[-1])
        if kind is None:
            raise ValueError(f"{prop}={name}: the Python sink reads JsonConverter, StringConverter, "
                             f"ByteArrayConverter, AvroConverter ({AVRO_CONVERTER}) and ProtobufConverter data; set one of those")
        if kind in ("avro", "protobuf"):
            url = str(source.get(f"{prop}.schema.registry.url", "")).strip()
            if not url:
                raise ValueError(f"{prop}={name} needs {prop}.schema.registry.url (Missing required configuration "
                                 "\"schema.registry.url\")")
            strategy = str(source.get(f"{prop}.{which}.subject.name.strategy",
                                      "io.confluent.kafka.serializers.subject.TopicNameStrategy")).strip()
            return cls(kind, True, which, url, strategy)
        flag = str(source.get(f"{prop}.schemas.enable", "true")).strip().lower()
        if flag not in ("true", "false"):
            raise ValueError(f"{prop}.schemas.enable={flag!r} is not a boolean: use true or false")
        return cls(kind, flag == "true", which)

    def read(self, raw: bytes | None, topic: str = "") -> tuple[Any, Any, bool]:
        """(schema, payload, has_schema) of one key or value, or ConversionError."""
        if self.kind == "protobuf":
            if raw is None:
                return None, None, False
            if self.registry is None:
                raise ConversionError(f"ProtobufConverter has no registry to read from ({self.registry_url})")
            from adapters.pysink.protoread import ProtoReadError, read as read_protobuf

            try:
                schema, payload = read_protobuf(raw, self.registry, topic, self.which, self.strategy)
            except (ProtoReadError, ValueError, KeyError, IndexError) as e:
                raise ConversionError(f"Failed to deserialize data for topic {topic} to Protobuf: {e}") from None
            return schema, payload, True
        if self.kind == "avro":
            if raw is None:
                return None, None, False
            if self.registry is None:
                raise ConversionError(f"AvroConverter has no registry to read from ({self.registry_url})")
            from adapters.pysink.avroread import AvroReadError, read

            try:
                schema, payload = read(raw, self.registry, topic, self.which, self.strategy)
            except AvroReadError as e:
                raise ConversionError(f"Converting byte[] to Kafka Connect data failed due to serialization "
                                      f"error: {e}") from None
            return schema, payload, schema is not None
        if self.kind == "string":
            return {"type": "string", "optional": True}, None if raw is None else raw.decode("utf-8", "replace"), True
        if self.kind == "bytearray":
            return {"type": "bytes", "optional": True}, None if raw is None else base64.b64encode(raw).decode(), True
        if raw is None:
            return None, None, False
        try:
            v = json.loads(raw, parse_float=decimal.Decimal)  # JsonConverter reads numbers as written
        except ValueError as e:
            raise ConversionError(f"not JSON ({e})") from None
        if not self.schemas:
            return None, v, False
        if not (isinstance(v, dict) and set(v) == {"schema", "payload"}):
            raise ConversionError("JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and "
                                  "may not contain additional fields")
        schema, payload = v["schema"], v["payload"]
        if schema is None:
            return None, payload, False
        _check_schema(schema, "schema")
        if payload is None and schema.get("default") is None and schema.get("optional") is not True:
            raise ConversionError(f"Invalid null value for required {schema.get('type')} field")
        return schema, payload, True


def _check_schema(node: Any, where: str) -> None:
    if not isinstance(node, dict) or node.get("type") not in JSON_TYPES:
        got = node.get("type") if isinstance(node, dict) else node
        raise ConversionError(f"{where}: Unknown schema type: {got}")
    t = node["type"]
    if t == "struct":
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise ConversionError(f"{where}: Struct schema's \"fields\" argument is not an array.")
        for f in fields:
            if not isinstance(f, dict) or not isinstance(f.get("field"), str):
                raise ConversionError(f"{where}: Struct schema's field name not specified properly")
            _check_schema(f, f"{where}.{f['field']}")
    elif t == "array":
        _check_schema(node.get("items"), f"{where}.items")
    elif t == "map":
        _check_schema(node.get("keys"), f"{where}.keys")
        _check_schema(node.get("values"), f"{where}.values")
