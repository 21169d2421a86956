"""A registry as a run's producer used it: every call passes through to the registry, and the
subjects it registered under are remembered, so the run's snapshot holds its own subjects and
not a shared registry's others (a warm stack's registry serves every run on the stack)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

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


def stack_registry(server: Any, config: Mapping[str, str], dropped: Sequence[str] = ()) -> RunRegistry:
    """A run's view of a stack's Schema Registry (adapters.processes.registry.SchemaRegistryServer),
    described for the report with the config's registry URLs it stands in for and the settings
    that reach the user's registry (credentials, TLS, proxy) left out."""
    from adapters.processes.jars import APICURIO_VERSION
    from adapters.registry.client import RegistryClient

    given = {k: v for k, v in config.items() if k.endswith("converter.schema.registry.url")}
    return RunRegistry(
        RegistryClient(server.url),
        f"Apicurio Registry {APICURIO_VERSION} at {server.url} (Confluent's REST API, compatibility "
        f"{server.compatibility} by default); the config's "
        f"{', '.join(f'{k}={v}' for k, v in sorted(given.items()))} mapped onto it"
        + (f", {', '.join(sorted(dropped))} dropped (sinkcheck's registry takes no credentials)" if dropped else ""))
