"""sinkcheck's pytest plugin: `--target`, `--connector-config`, markers per property.

    pytest --pyargs conformance.suite --target=pysink
    pytest --pyargs conformance.suite --target=kafka-connect:aiven --connector-config=my.json -m no_loss

Loading the plugin imports nothing heavy (no Spark, no Kafka, no testcontainers).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

PROPERTY_MARKERS = (
    "no_loss", "no_duplicates", "exact_object_set", "atomic_visibility", "contents", "commit_safety",
    "commit_progress", "naming", "rotation", "file_count", "multipart_hygiene", "liveness",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("sinkcheck", "sinkcheck conformance suite")
    g.addoption("--target", default=os.environ.get("SINKCHECK_TARGET", "pysink"),
                help="the sink under test: pysink[:broker][:<variant>], kafka-connect:<aiven|camel|confluent>, "
                     "module:Class, or an entry point of sinkcheck.targets (default: pysink, the embedded default)")
    g.addoption("--connector-config", default=None,
                help="connector JSON ({\"name\":…,\"config\":{…}} or flat); used for every scenario instead of generated configs")
    g.addoption("--sinkcheck-profile", default=None, choices=("ci", "thorough"),
                help="how many generated scenarios (default: ci when $CI is set, else thorough)")
    g.addoption("--sinkcheck-out", default=None, help="where run logs and failing scenarios go (default: a tmp dir)")
    g.addoption("--plugin-path", action="append", default=[], help="Kafka Connect plugin directories (Confluent)")


def pytest_configure(config: pytest.Config) -> None:
    for m in PROPERTY_MARKERS:
        config.addinivalue_line("markers", f"{m}: the {m.replace('_', '-')} property")
    config.addinivalue_line("markers", "sinkcheck: a sinkcheck conformance scenario")
    _connector_config(config)  # a config sinkcheck cannot honour: one refusal (exit 4), not one error a test


@pytest.fixture(scope="session")
def sinkcheck_target(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("--target"))


@pytest.fixture(scope="session")
def sinkcheck_plugin_path(request: pytest.FixtureRequest) -> list[str]:
    return list(request.config.getoption("--plugin-path"))


@pytest.fixture(scope="session")
def sinkcheck_session(sinkcheck_plugin_path: list[str], sinkcheck_out: Path):
    """The suite's session (conformance.playing.session) for this pytest session: its warm stacks go
    when the session ends."""
    from conformance.playing.session import Session

    session = Session(sinkcheck_out, None, None, sinkcheck_plugin_path)
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(scope="session")
def sinkcheck_stack(sinkcheck_target: str, sinkcheck_session,  # noqa: ANN001 - a conformance.playing.session.Session
                    sinkcheck_connector: dict[str, str] | None):
    """A warm stack for the target, shared by the session's runs (each brings its own connector,
    topics and bucket): Kafka Connect targets and the Python sink over a broker, with a Schema
    Registry where the config or the suite's scenarios read one; None for other targets. A plugin
    that cannot be had is a usage error naming the ways to provide it."""
    from adapters.connect.plugins import PluginUnavailable
    from conformance.catalog.named import SUITE
    from conformance.inputs.targets import TargetSpecError
    from conformance.playing.target_run import needs_registry_converters

    if needs_registry_converters(sinkcheck_target, sinkcheck_connector, [f() for f in SUITE.values()], 1):
        sinkcheck_session.registry_converters.add(sinkcheck_target)
    try:
        return sinkcheck_session.stack_for(sinkcheck_target)
    except (PluginUnavailable, TargetSpecError) as e:
        raise pytest.UsageError(f"--target {sinkcheck_target}: {e}") from None


@pytest.fixture(scope="session")
def sinkcheck_connector(request: pytest.FixtureRequest) -> dict[str, str] | None:
    return _connector_config(request.config)


def _connector_config(config: pytest.Config) -> dict[str, str] | None:
    """--connector-config read and checked once (pytest_configure refuses it with exit 4)."""
    path = config.getoption("--connector-config")
    if not path:
        return None
    from reference_impl.config import ConfigError, ConfigSyntaxError, load_config_text

    try:
        _, cfg = load_config_text(Path(path).read_text(), path)
    except (OSError, ConfigSyntaxError, ConfigError) as e:
        raise pytest.UsageError(f"--connector-config {path}: {e}") from None
    from conformance.judging.claims import CONFLUENT_SEMANTICS
    from conformance.inputs.targets import target_kind
    from conformance.playing.user_config import refusal

    target = config.getoption("--target") or "pysink"
    why = refusal(cfg, target.startswith("model") or target_kind(target) in CONFLUENT_SEMANTICS)
    if why:
        raise pytest.UsageError(f"--connector-config {path}: {why}")
    return cfg


@pytest.fixture(scope="session")
def sinkcheck_profile(request: pytest.FixtureRequest) -> str:
    return request.config.getoption("--sinkcheck-profile") or ("ci" if os.environ.get("CI") else "thorough")


@pytest.fixture(scope="session")
def sinkcheck_out(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = request.config.getoption("--sinkcheck-out")
    p = Path(out) if out else tmp_path_factory.mktemp("sinkcheck")
    p.mkdir(parents=True, exist_ok=True)
    return p


_FAILURE_TYPES: dict[tuple[str, str], type] = {}


def claim_failure(signature: tuple[str, str]) -> type:
    """An AssertionError subclass per (property, anomaly). Hypothesis tells failures apart by
    their exception type and place, and shrinks each on its own: a smaller scenario that fails
    otherwise is another bug, never this one's reproducer."""
    if signature not in _FAILURE_TYPES:
        name = "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", "-".join(signature)) if w) or "Claim"
        _FAILURE_TYPES[signature] = type(f"{name}Failed", (AssertionError,), {"__module__": __name__})
    return _FAILURE_TYPES[signature]


def failure_block(result) -> str:  # noqa: ANN001 - RunResult, imported lazily
    """What a person needs to act on a failure: anomaly, claim and rule, expected vs observed,
    witnesses, faults fired, and the command that replays it."""
    lines = [f"{result.scenario.name} on {result.target}: {result.status.upper()} "
             f"(claim: {result.claim.name}; {'; '.join(result.claim.reasons)})"]
    for v in result.failed():
        lines.append(f"  ✗ {v.property} [{v.rule}]: {v.message}")
        for w in v.witnesses:
            lines.append(f"      {w.anomaly}: {w.explanation}")
            if w.offsets:
                lines.append(f"        offsets: {', '.join(w.offsets)}")
            if w.keys:
                lines.append(f"        keys: {', '.join(w.keys)}")
            if w.expected is not None or w.observed is not None:
                lines.append(f"        expected: {json.dumps(w.expected, default=str)[:200]}")
                lines.append(f"        observed: {json.dumps(w.observed, default=str)[:200]}")
    fired = [f"{f.kind} {'fired' if f.fired else 'NEVER FIRED'} {f.detail}" for f in result.observation.faults]
    if fired:
        lines.append("  faults: " + "; ".join(fired))
    saved = result.run_dir / "scenario.json"
    lines.append(f"  seed: {result.scenario.seed}")
    flaky = getattr(result, "flaky", None)
    if flaky:
        lines.append(f"  FLAKY: reproduced {flaky['reproduced']} of {flaky['replays']} replays ({flaky.get('note', '')})")
    lines.append(f"  Reproduce with: sinkcheck replay {saved} --target {result.target}")
    return "\n".join(lines)
