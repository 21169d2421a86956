"""A registry as a run's producer used it: every call passes through to the registry, and the
subjects it registered under are remembered, so the run's snapshot holds its own subjects and
not a shared registry's others (a warm stack's registry serves every run on the stack)."""
from __future__ import annotations

from typing import Any

from adapters.registry.snapshot import RegistrySnapshot


class RunRegistry:
    """`registry`, with the subjects this run registered in (`subjects_used`)."""

    def __init__(self, registry: Any, describe: str):
        self.registry = registry
        self.describe = describe  # for the report: which registry, where
        self.subjects_used: set[str] = set()

    def register(self, subject: str, schema_text: str, schema_type: str = "AVRO", normalize: bool = False) -> int:
        self.subjects_used.add(subject)
        return self.registry.register(subject, schema_text, schema_type, normalize)

    def snapshot(self) -> RegistrySnapshot:
        return self.registry.snapshot(subjects=sorted(self.subjects_used))

    def __getattr__(self, name: str) -> Any:  # schema, lookup, latest, …: the registry's own
        return getattr(self.registry, name)
