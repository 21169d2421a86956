"""pytest fixtures for the real parts. Import them into a test module (or a conftest):

    from adapters.pytest_fixtures import kafka_stack, connect_target  # noqa: F401

`kafka_stack` (module scope): a started `KafkaStack` (broker + moto + one Connect worker) whose
`plugin.path` holds every jar set that could be fetched, the directories of SINKCHECK_PLUGIN_PATH,
else Confluent's and Camel's connectors from the shared layouts (adapters.connect.plugins) where they are;
`kafka_stack.missing_plugins` maps the others to the reason. `connect_target` (function scope): a factory
`connect_target(profile=None, **kwargs) -> KafkaConnectTarget` on that stack; every target it
made is stopped (its connector deleted) when the test ends, passed or failed.

Nothing heavy is imported at load time.
"""
from __future__ import annotations

import os

import pytest

PLUGIN_SETS = ("filesink",)
# connectors the shared layouts provide (adapters.connect.plugins), at their default versions
SHARED_PLUGINS = ("confluent", "camel")


def _extra_plugin_dirs() -> list[str]:
    """User plugin directories: SINKCHECK_PLUGIN_PATH (os.pathsep-separated)."""
    raw = os.environ.get("SINKCHECK_PLUGIN_PATH", "")
    return [p for p in raw.split(os.pathsep) if p]


@pytest.fixture(scope="module")
def kafka_stack(tmp_path_factory):
    from adapters.connect.target import plugins_dir, service_discovery
    from adapters.processes.stack import KafkaStack

    from adapters.connect import plugins
    from adapters.connect.profiles import CAMEL_WORKER_CONVERTERS

    run_dir = tmp_path_factory.mktemp("kafka-stack")
    extra = _extra_plugin_dirs()
    resolved = []
    missing_shared = {}
    for kind in SHARED_PLUGINS if not extra else ():  # from the shared layouts, where they are
        try:
            resolved.append(plugins.resolve(kind, None))
        except plugins.PluginUnavailable as e:
            missing_shared[kind] = str(e)
    pdir, missing = plugins_dir(run_dir, PLUGIN_SETS, extra=extra, plugins=resolved)
    # text converters by default: Camel's package cannot run on a worker defaulting to JsonConverter
    # (adapters.connect.profiles.CAMEL_WORKER_CONVERTERS); every test here names its converters anyway
    stack = KafkaStack(run_dir, plugin_paths=[pdir], broker_heap="512m", worker_heap="768m",
                       offset_flush_interval_ms=2000,
                       worker_props={**service_discovery(pdir), **CAMEL_WORKER_CONVERTERS})
    stack.missing_plugins = {**missing, **missing_shared}
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()


@pytest.fixture
def connect_target(kafka_stack, tmp_path):
    from adapters.connect.target import KafkaConnectTarget

    made = []

    def make(profile=None, **kwargs):
        t = KafkaConnectTarget(tmp_path / f"target-{len(made)}", stack=kafka_stack,
                               profile=profile, **kwargs)
        made.append(t)
        return t

    try:
        yield make
    finally:
        for t in made:
            t.stop()
