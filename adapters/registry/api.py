"""What every Schema Registry here answers, real or in memory: the `SchemaRegistry` protocol, the
answers that cross rooms (`Registered`), and the errors, each carrying Confluent's HTTP status
and error code so that a caller handles the in-memory registry's refusals as a real one's.

The calls are the ones a producer's serializer makes (register, lookup, schema by id, latest)
and the ones the suite needs to set a registry up and record it (subjects, versions,
compatibility, snapshot); deleting is left out: no scenario deletes a schema.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Protocol, runtime_checkable

if TYPE_CHECKING:
    from adapters.registry.snapshot import RegistrySnapshot

SCHEMA_TYPES = ("AVRO", "PROTOBUF", "JSON")
# Confluent's compatibility levels; BACKWARD is its default
LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
DEFAULT_LEVEL = "BACKWARD"

# Confluent's error codes (io.confluent.kafka.schemaregistry.rest.exceptions)
SUBJECT_NOT_FOUND = 40401
VERSION_NOT_FOUND = 40402
SCHEMA_NOT_FOUND = 40403
INCOMPATIBLE = 409
INVALID_SCHEMA = 42201
INVALID_LEVEL = 42203


@dataclass(frozen=True)
class Registered:
    """One version of a subject: the answer of `latest` (and of GET /subjects/{s}/versions/{v})."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"


class RegistryError(RuntimeError):
    """A registry refused or failed a call: what was asked, the HTTP status and Confluent's error
    code (None where the answer carried none) and the registry's message."""

    def __init__(self, asked: str, status: int, error_code: int | None, message: str):
        self.asked = asked
        self.status = status
        self.error_code = error_code
        self.message = message
        code = f", error {error_code}" if error_code is not None and error_code != status else ""
        super().__init__(f"{asked}: HTTP {status}{code}: {message}")


class IncompatibleSchema(RegistryError):
    """409: the schema breaks the subject's compatibility level."""


class NotFound(RegistryError):
    """404: no such subject (40401), version (40402) or schema (40403)."""


class InvalidSchema(RegistryError):
    """422: the schema does not parse as its type (42201), or an unknown level (42203)."""


def error_for(asked: str, status: int, error_code: int | None, message: str) -> RegistryError:
    """The RegistryError subclass of an HTTP answer."""
    cls = {409: IncompatibleSchema, 404: NotFound, 422: InvalidSchema}.get(status, RegistryError)
    return cls(asked, status, error_code, message)


@runtime_checkable
class SchemaRegistry(Protocol):
    """A Schema Registry with Confluent's semantics. Subjects are any strings (topic names carry
    dots; `<topic>-value` is the default subject of a value); schema types are AVRO (the
    default), PROTOBUF and JSON."""

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO", normalize: bool = False) -> int:
        """The schema's id: the one it already has (no new version when the subject holds it),
        else a new version of the subject; IncompatibleSchema when the subject's level refuses it."""
        ...

    def schema(self, schema_id: int) -> tuple[str, str]:
        """(text, type) of the schema with this id; NotFound (40403) for an unknown id."""
        ...

    def lookup(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> tuple[int, int]:
        """(version, id) under which the subject holds this schema; NotFound otherwise."""
        ...

    def latest(self, subject: str) -> Registered:
        ...

    def version(self, subject: str, version: int | str) -> Registered:
        """One version of a subject (a number, or "latest"); NotFound (40401, 40402) otherwise."""
        ...

    def subjects(self) -> list[str]:
        ...

    def versions(self, subject: str) -> list[int]:
        ...

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        """The global level (subject None) or one subject's own."""
        ...

    def compatibility(self, subject: str | None = None) -> str:
        """The level a register in `subject` is checked against: its own, else the global one."""
        ...

    def snapshot(self, subjects: Iterable[str] | None = None) -> "RegistrySnapshot":
        """The registry's contents now; with `subjects`, those subjects only (the ones a run's
        topics use, on a registry other runs share) and the schemas they hold."""
        ...
