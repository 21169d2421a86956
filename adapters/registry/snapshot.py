"""A Schema Registry's contents at one moment, as an Observation carries them: the schemas by id,
each subject's versions in order with their ids, and the compatibility each subject is checked
against. Checkers decode a record's schema id (Confluent's wire format: magic byte 0, a 4-byte
id) with it, offline, never asking the registry itself.

The compatibility recorded per subject is the one in force (its own level, else the global
one): a real registry does not always say which of the two it is (Apicurio answers GET
/config/{subject} with its configured default when the subject has none), and what a register
was checked against is what a reader needs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from adapters.registry.api import DEFAULT_LEVEL


@dataclass(frozen=True)
class SchemaText:
    text: str
    schema_type: str = "AVRO"


@dataclass(frozen=True)
class SubjectVersion:
    version: int
    id: int


@dataclass(frozen=True)
class RegistrySnapshot:
    schemas: Mapping[int, SchemaText] = field(default_factory=dict)
    subjects: Mapping[str, tuple[SubjectVersion, ...]] = field(default_factory=dict)
    compatibility: Mapping[str, str] = field(default_factory=dict)  # subject -> the level in force
    global_compatibility: str = DEFAULT_LEVEL

    def schema(self, schema_id: int) -> SchemaText | None:
        return self.schemas.get(schema_id)

    def version_of(self, subject: str, schema_id: int) -> int | None:
        """The version under which `subject` holds the schema `schema_id`, or None."""
        for sv in self.subjects.get(subject, ()):
            if sv.id == schema_id:
                return sv.version
        return None

    def latest(self, subject: str) -> SubjectVersion | None:
        versions = self.subjects.get(subject, ())
        return versions[-1] if versions else None

    def to_json(self) -> dict[str, Any]:
        return {
            "schemas": [{"id": i, "schema": s.text, "schemaType": s.schema_type}
                        for i, s in sorted(self.schemas.items())],
            "subjects": {subject: [{"version": sv.version, "id": sv.id} for sv in versions]
                         for subject, versions in sorted(self.subjects.items())},
            "compatibility": dict(sorted(self.compatibility.items())),
            "global_compatibility": self.global_compatibility,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "RegistrySnapshot":
        return cls(
            schemas={int(s["id"]): SchemaText(s["schema"], s.get("schemaType", "AVRO")) for s in d.get("schemas", ())},
            subjects={subject: tuple(SubjectVersion(int(v["version"]), int(v["id"])) for v in versions)
                      for subject, versions in d.get("subjects", {}).items()},
            compatibility=dict(d.get("compatibility", {})),
            global_compatibility=d.get("global_compatibility", DEFAULT_LEVEL),
        )
