"""The in-memory Schema Registry of the simulation: Confluent's semantics without a process.

* An id per distinct schema, given once: the same schema under two subjects has one id. "The
  same" is the canonical text Confluent stores and looks ids up by: for Avro, Java's toString()
  (adapters.registry.avro_schemas: whitespace, key order and name splitting do not count; docs
  do), for JSON Schema the JSON written compact; Protobuf texts are compared as they are (no
  parser here; Confluent's reformats them). Ids count from 1 without gaps (Apicurio's have gaps:
  nothing may rely on their values, only on which are equal).
* Registering a schema a subject already holds (for Avro: equal but for docs and aliases, as
  Java's Schema.equals) answers its id and adds no version; versions count from 1 per subject.
* Compatibility per subject, else the global level (BACKWARD unless told), checked on register
  with Apache Avro's own checker: BACKWARD, the new schema reads what the latest wrote; FORWARD,
  the latest reads what the new one writes; FULL, both; *_TRANSITIVE, against every version;
  NONE, nothing. A schema of another type than the versions it is checked against is
  incompatible. Protobuf and JSON Schema evolutions are not checked (no checker here): accepted.
"""
from __future__ import annotations

import json
import threading
from typing import Iterable

from adapters.registry import avro_schemas
from adapters.registry.api import (DEFAULT_LEVEL, INCOMPATIBLE, INVALID_LEVEL, INVALID_SCHEMA, LEVELS, SCHEMA_NOT_FOUND,
    SCHEMA_TYPES, SUBJECT_NOT_FOUND, VERSION_NOT_FOUND, IncompatibleSchema, InvalidSchema, NotFound, Registered)
from adapters.registry.snapshot import RegistrySnapshot, SchemaText, SubjectVersion


class InMemoryRegistry:
    """The SchemaRegistry protocol in memory, safe to share between threads."""

    def __init__(self, compatibility: str = DEFAULT_LEVEL):
        self._check_level(compatibility, "the global level")
        self._global = compatibility
        self._lock = threading.RLock()
        self._schemas: dict[int, SchemaText] = {}
        self._ids: dict[tuple[str, str], int] = {}  # (type, canonical text) -> id
        self._subjects: dict[str, list[SubjectVersion]] = {}
        self._levels: dict[str, str] = {}

    @classmethod
    def from_snapshot(cls, snap: RegistrySnapshot) -> "InMemoryRegistry":
        """A registry holding what `snap` recorded (a replay's registry as the run left it)."""
        reg = cls(snap.global_compatibility)
        reg._schemas = dict(snap.schemas)
        # keyed by this registry's canonical text: a real registry's may be written otherwise
        reg._ids = {(s.schema_type, reg._canonical("load a snapshot", s.text, s.schema_type)): i
                    for i, s in sorted(snap.schemas.items(), reverse=True)}
        reg._subjects = {subject: list(vs) for subject, vs in snap.subjects.items()}
        reg._levels = {s: lvl for s, lvl in snap.compatibility.items() if lvl != snap.global_compatibility}
        return reg

    def __repr__(self) -> str:
        return f"InMemoryRegistry({len(self._schemas)} schemas, {len(self._subjects)} subjects)"

    # ------------------------------------------------------------------ what a producer asks

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO", normalize: bool = False) -> int:
        """`normalize` changes nothing here: Avro schemas are always compared canonical."""
        asked = f"register in {subject!r}"
        text = self._canonical(asked, schema_text, schema_type)
        with self._lock:
            held = self._held(subject, text, schema_type)
            if held is not None:
                return held.id
            self._check_compatible(asked, subject, text, schema_type)
            schema_id = self._ids.get((schema_type, text))
            if schema_id is None:
                schema_id = max(self._schemas, default=0) + 1
                self._schemas[schema_id] = SchemaText(text, schema_type)
                self._ids[(schema_type, text)] = schema_id
            versions = self._subjects.setdefault(subject, [])
            versions.append(SubjectVersion(versions[-1].version + 1 if versions else 1, schema_id))
            return schema_id

    def schema(self, schema_id: int) -> tuple[str, str]:
        with self._lock:
            s = self._schemas.get(int(schema_id))
        if s is None:
            raise NotFound(f"schema {schema_id}", 404, SCHEMA_NOT_FOUND, f"Schema {schema_id} not found.")
        return s.text, s.schema_type

    def lookup(self, subject: str, schema_text: str, schema_type: str = "AVRO") -> tuple[int, int]:
        asked = f"look up a schema in {subject!r}"
        text = self._canonical(asked, schema_text, schema_type)
        with self._lock:
            self._versions_of(asked, subject)
            held = self._held(subject, text, schema_type)
        if held is None:
            raise NotFound(asked, 404, SCHEMA_NOT_FOUND,
                           f"The given schema does not match any schema under the subject {subject}")
        return held.version, held.id

    def latest(self, subject: str) -> Registered:
        return self.version(subject, "latest")

    def version(self, subject: str, version: int | str) -> Registered:
        asked = f"version {version} of {subject!r}"
        with self._lock:
            versions = self._versions_of(asked, subject)
            found = versions[-1] if version == "latest" else next(
                (v for v in versions if str(v.version) == str(version)), None)
            if found is None:
                raise NotFound(asked, 404, VERSION_NOT_FOUND, f"Version {version} not found.")
            s = self._schemas[found.id]
        return Registered(subject, found.version, found.id, s.text, s.schema_type)

    # ------------------------------------------------------------------ what the suite asks

    def subjects(self) -> list[str]:
        with self._lock:
            return sorted(self._subjects)

    def versions(self, subject: str) -> list[int]:
        with self._lock:
            return [v.version for v in self._versions_of(f"versions of {subject!r}", subject)]

    def set_compatibility(self, level: str, subject: str | None = None) -> None:
        self._check_level(level, "the global level" if subject is None else f"the level of {subject!r}")
        with self._lock:
            if subject is None:
                self._global = level
            else:
                self._levels[subject] = level

    def compatibility(self, subject: str | None = None) -> str:
        with self._lock:
            return self._global if subject is None else self._levels.get(subject, self._global)

    def snapshot(self, subjects: Iterable[str] | None = None) -> RegistrySnapshot:
        with self._lock:
            names = sorted(self._subjects if subjects is None else set(subjects) & set(self._subjects))
            held = {s: tuple(self._subjects[s]) for s in names}
            ids = {v.id for versions in held.values() for v in versions}
            return RegistrySnapshot({i: s for i, s in sorted(self._schemas.items()) if i in ids}, held,
                                    {s: self._levels.get(s, self._global) for s in names}, self._global)

    # ------------------------------------------------------------------ the rules

    @staticmethod
    def _check_level(level: str, what: str) -> None:
        if level not in LEVELS:
            raise InvalidSchema(f"set {what} to {level!r}", 422, INVALID_LEVEL, f"Invalid compatibility level: {level}")

    @staticmethod
    def _canonical(asked: str, schema_text: str, schema_type: str) -> str:
        if schema_type not in SCHEMA_TYPES:
            raise InvalidSchema(asked, 422, INVALID_SCHEMA, f"Invalid schema type {schema_type!r}")
        if schema_type == "PROTOBUF":
            return schema_text
        try:
            if schema_type == "JSON":  # Confluent's JsonSchema: the parsed JSON written compact
                return json.dumps(json.loads(schema_text), separators=(",", ":"), ensure_ascii=False)
            return avro_schemas.canonical_text(schema_text)
        except (avro_schemas.AvroSchemaError, ValueError) as e:
            raise InvalidSchema(asked, 422, INVALID_SCHEMA, f"Invalid schema: {e}") from None

    def _versions_of(self, asked: str, subject: str) -> list[SubjectVersion]:
        versions = self._subjects.get(subject)
        if not versions:
            raise NotFound(asked, 404, SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")
        return versions

    def _held(self, subject: str, text: str, schema_type: str) -> SubjectVersion | None:
        """The version of `subject` that holds this schema (Avro: equal but for docs and aliases)."""
        key = avro_schemas.equality_key(text) if schema_type == "AVRO" else text
        for v in self._subjects.get(subject, ()):
            s = self._schemas[v.id]
            if s.schema_type == schema_type and (avro_schemas.equality_key(s.text) if schema_type == "AVRO"
                                                 else s.text) == key:
                return v
        return None

    def _check_compatible(self, asked: str, subject: str, text: str, schema_type: str) -> None:
        level = self.compatibility(subject)
        versions = self._subjects.get(subject, [])
        if level == "NONE" or not versions:
            return
        against = versions if level.endswith("_TRANSITIVE") else versions[-1:]
        backward = level.startswith(("BACKWARD", "FULL"))
        forward = level.startswith(("FORWARD", "FULL"))
        for v in reversed(against):
            old = self._schemas[v.id]
            why = None
            if old.schema_type != schema_type:
                why = f"a {schema_type} schema after version {v.version}, a {old.schema_type} one"
            elif schema_type != "AVRO":
                continue
            elif backward and not avro_schemas.can_read(text, old.text):
                why = f"the new schema cannot read data written with version {v.version}"
            elif forward and not avro_schemas.can_read(old.text, text):
                why = f"version {v.version} cannot read data written with the new schema"
            if why:
                raise IncompatibleSchema(asked, 409, INCOMPATIBLE,
                                         f"Schema being registered is incompatible with an earlier schema for "
                                         f"subject \"{subject}\" ({level}): {why}")
