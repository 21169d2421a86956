"""Kafka Connect converters: the bytes of a Kafka record's key or value → the Connect data the
sink's put() receives. A connector config names them (`key.converter`, `value.converter`, with
their settings under `key.converter.*` / `value.converter.*`); a record the converter refuses
never reaches the sink (Connect's error handling decides: the task dies, or the record is
skipped under `errors.tolerance=all`).

Three converters ship with Kafka and are modelled (Kafka 4.1 sources):

* `org.apache.kafka.connect.json.JsonConverter`: `schemas.enable` (default true) requires the
  envelope `{"schema": …, "payload": …}` (exactly those two fields) on every non-null value;
  with it off any JSON is read schemaless (connect_data.schemaless). Null bytes are the null
  value with no schema. Its types and logical types: connect_data.parse_schema/convert_payload.
* `org.apache.kafka.connect.storage.StringConverter`: the bytes as UTF-8 text (`encoding`,
  default UTF-8; malformed input is replaced, as `new String(bytes, UTF_8)` does) with the
  schema OPTIONAL_STRING, also for null bytes.
* `org.apache.kafka.connect.converters.ByteArrayConverter`: the bytes as they are, schema
  OPTIONAL_BYTES, also for null bytes.

One converter that reads Confluent's Schema Registry wire format is modelled
(reference_impl.avro_data, schema-registry 7.7.x):

* `io.confluent.connect.avro.AvroConverter`: magic byte 0, the schema id, the Avro binary; the
  writer schema from the registry by id, the version under which the record's subject holds it
  (`key.subject.name.strategy` / `value.subject.name.strategy`, TopicNameStrategy by default),
  then AvroData. `schema.registry.url` is required (ConfigException without it). Null bytes are
  the null value with no schema (SchemaAndValue.NULL).

* `io.confluent.connect.protobuf.ProtobufConverter`: magic byte 0, the schema id, the message
  indexes, the protobuf binary; the writer schema (proto3) from the registry by id, its version
  under the record's subject, then ProtobufData with the converter's defaults
  (reference_impl.protobuf_data). `schema.registry.url` is required. Null bytes are the null value
  with no schema.

JsonSchemaConverter is refused by name.
"""
from __future__ import annotations

import codecs
import decimal
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from reference_impl.connect_data import (ConnectValue, Schema, SchemaError, convert_payload, is_envelope,
                                         parse_schema, schemaless)

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
BYTEARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
PROTOBUF_CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
CONVERTERS = {"JsonConverter": JSON_CONVERTER, "StringConverter": STRING_CONVERTER,
              "ByteArrayConverter": BYTEARRAY_CONVERTER, "AvroConverter": AVRO_CONVERTER,
              "ProtobufConverter": PROTOBUF_CONVERTER}
# converters that read a schema registry's wire format, and those the model does not read
REGISTRY_CONVERTERS = {"AvroConverter": AVRO_CONVERTER, "ProtobufConverter": PROTOBUF_CONVERTER}
UNREAD_REGISTRY_CONVERTERS = {"JsonSchemaConverter": "io.confluent.connect.json.JsonSchemaConverter"}
OPTIONAL_STRING = Schema("string", optional=True)
OPTIONAL_BYTES = Schema("bytes", optional=True)


_MISSING = object()


class ConverterError(SchemaError):
    """What the converter throws as a DataException for one record's bytes."""


class UnknownConverter(ValueError):
    """A converter class the model does not know; says which property names it."""


@dataclass(frozen=True)
class Converter:
    """One converter as configured for keys or values."""

    class_name: str  # the full class name
    settings: Mapping[str, str] = field(default_factory=dict)  # its own properties, prefix removed

    @property
    def short(self) -> str:
        return self.class_name.rsplit(".", 1)[-1]

    @property
    def schemas_enabled(self) -> bool:
        return self.short == "JsonConverter" and str(self.settings.get("schemas.enable", "true")).strip().lower() == "true"

    @property
    def reads_registry(self) -> bool:
        """Whether the converter reads the Schema Registry wire format (its records need a registry)."""
        return self.short in REGISTRY_CONVERTERS

    def subject_strategy(self, which: str) -> str:
        """`<which>.subject.name.strategy` of a registry converter (TopicNameStrategy by default)."""
        from reference_impl.avro_data import TOPIC_NAME_STRATEGY

        return str(self.settings.get(f"{which}.subject.name.strategy", TOPIC_NAME_STRATEGY)).strip()

    def describe(self) -> str:
        if self.short == "JsonConverter":
            return f"JsonConverter (schemas.enable={'true' if self.schemas_enabled else 'false'})"
        return self.short

    def to_connect(self, data: bytes | None, topic: str | None = None, registry: Any = None,
                   which: str = "value") -> ConnectValue:
        """`Converter.toConnectData`. Raises ConverterError where the converter would throw. A
        registry converter needs the record's `topic` and the registry (`registry`: anything
        with `schema(id)` and `version_of(subject, id)`, reference_impl.avro_data.RegistryView)."""
        short = self.short
        if short == "ProtobufConverter":
            if data is None:
                return ConnectValue(None, None)
            if registry is None or topic is None:
                raise ConverterError("ProtobufConverter reads the schema of every record from the Schema Registry: "
                                     "no registry was given to read it from")
            from reference_impl.protobuf_data import ProtobufDataError, protobuf_to_connect

            try:
                value, schema = protobuf_to_connect(bytes(data), registry, topic, which, self.subject_strategy(which))
            except ProtobufDataError as e:
                raise ConverterError(f"Failed to deserialize data for topic {topic} to Protobuf: {e}") from None
            return ConnectValue(value, schema)
        if short == "AvroConverter":
            if data is None:
                return ConnectValue(None, None)
            if registry is None or topic is None:
                raise ConverterError("AvroConverter reads the schema of every record from the Schema Registry: "
                                     "no registry was given to read it from")
            from reference_impl.avro_data import AvroDataError, avro_to_connect

            try:
                value, schema = avro_to_connect(bytes(data), registry, topic, which, self.subject_strategy(which))
            except AvroDataError as e:
                raise ConverterError(f"Converting byte[] to Kafka Connect data failed due to serialization error: "
                                     f"{e}") from None
            return ConnectValue(value, schema)
        if short == "StringConverter":
            if data is None:
                return ConnectValue(None, OPTIONAL_STRING)
            encoding = str(self.settings.get("encoding", "UTF-8"))
            try:
                return ConnectValue(bytes(data).decode(_python_codec(encoding), errors="replace"), OPTIONAL_STRING)
            except LookupError:
                raise ConverterError(f"StringConverter: unknown encoding {encoding!r}") from None
        if short == "ByteArrayConverter":
            return ConnectValue(None if data is None else bytes(data), OPTIONAL_BYTES)
        if data is None:
            return ConnectValue(None, None)  # a tombstone: SchemaAndValue.NULL
        if not bytes(data).strip():
            # Jackson reads no document as a MissingNode: a null value without schemas, and
            # not the envelope with them
            node: object = _MISSING
        else:
            try:
                # numbers as written (JsonConverter's USE_BIG_DECIMAL_FOR_FLOATS): a Decimal
                # payload keeps its scale
                node = json.loads(bytes(data).decode("utf-8"), parse_float=decimal.Decimal)
            except (UnicodeDecodeError, ValueError) as e:
                raise ConverterError(f"Converting byte[] to Kafka Connect data failed due to serialization error: "
                                     f"{e}") from None
        if node is _MISSING:
            if not self.schemas_enabled:
                return ConnectValue(None, None)
            node = None
        if not self.schemas_enabled:
            return ConnectValue(schemaless(node), None)
        if not is_envelope(node):
            raise ConverterError(
                "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain "
                "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in "
                "your converter configuration.")
        if node["schema"] is None:
            return ConnectValue(schemaless(node["payload"]), None)
        try:
            schema = parse_schema(node["schema"])
            return ConnectValue(convert_payload(schema, node["payload"]), schema)
        except ConverterError:
            raise
        except SchemaError as e:
            raise ConverterError(str(e)) from None


def _python_codec(java_name: str) -> str:
    """A Java charset name (UTF-8, ISO-8859-1, UTF-16BE, ...) as Python's codec name."""
    return codecs.lookup(java_name.replace("_", "-")).name


def converter_for(config: Mapping[str, str], which: str) -> Converter:
    """The converter a connector config sets for `which` ("key" or "value"): `<which>.converter`
    and its `<which>.converter.*` settings. Raises UnknownConverter for a missing or unmodelled
    class (the property and the ones the model knows are named)."""
    prop = f"{which}.converter"
    raw = str(config.get(prop, "")).strip()
    if not raw:
        raise UnknownConverter(f"{prop} is not set: the converter decides what the sink receives, so a scenario "
                               f"states it (one of {', '.join(CONVERTERS.values())})")
    short = raw.rsplit(".", 1)[-1]
    if short in UNREAD_REGISTRY_CONVERTERS and raw in (short, UNREAD_REGISTRY_CONVERTERS[short]):
        raise UnknownConverter(f"{prop}={raw}: the model reads the Schema Registry wire format of "
                               f"{AVRO_CONVERTER} and {PROTOBUF_CONVERTER} only, not {short}'s; use AvroConverter, "
                               "ProtobufConverter, JsonConverter, StringConverter or ByteArrayConverter")
    if short not in CONVERTERS or raw not in (short, CONVERTERS[short]):
        raise UnknownConverter(f"{prop}={raw}: the model knows {', '.join(CONVERTERS.values())}")
    prefix = prop + "."
    settings = {k[len(prefix):]: str(v) for k, v in config.items() if k.startswith(prefix)}
    if short in REGISTRY_CONVERTERS and not settings.get("schema.registry.url", "").strip():
        raise UnknownConverter(f"{prop}={raw}: it needs {prop}.schema.registry.url (without it the converter's "
                               "configure() throws ConfigException, Missing required configuration "
                               "\"schema.registry.url\", and the connector's task cannot start); give the registry's URL")
    return Converter(CONVERTERS[short], settings)


def converters_for(config: Mapping[str, str]) -> tuple[Converter, Converter]:
    """(key converter, value converter) of a connector config."""
    return converter_for(config, "key"), converter_for(config, "value")


def to_connect_record(key_conv: Converter, value_conv: Converter, key: bytes | None,
                      value: bytes | None, topic: str | None = None,
                      registry: Any = None) -> tuple[ConnectValue, ConnectValue]:
    """Key and value of one record through their converters (Connect converts the key first)."""
    return (key_conv.to_connect(key, topic, registry, "key"),
            value_conv.to_connect(value, topic, registry, "value"))


__all__ = ["AVRO_CONVERTER", "PROTOBUF_CONVERTER", "BYTEARRAY_CONVERTER", "CONVERTERS", "REGISTRY_CONVERTERS", "Converter", "ConverterError", "JSON_CONVERTER", "STRING_CONVERTER",
           "UnknownConverter", "converter_for", "converters_for", "to_connect_record"]
