"""sinkcheck's pytest plugin: `--target`, `--connector-config`, markers per property.

    pytest --pyargs conformance.suite --target=pysink
    pytest --pyargs conformance.suite --target=kafka-connect:aiven --connector-config=my.json -m no_loss

It says what `sinkcheck run` says: a `--connector-config` sinkcheck cannot honour, or that the
connector would reject, is one refusal (exit 4, conformance.playing.user_config.checked); what
Connect would only log (a property nobody defines) is a warning in the session's header; a named
scenario not applicable under the config is a skip saying why ("not applicable: ..."); and the
session ends with the command line's exit codes (conformance.judging.outcome): 1 on a claimed
failure (with `--accept-known-bugs`, one a known bug of the release that ran explains is an
xfail, "accepted known bug <id> (<cite>)", and counts as no failure), 2 where a run left a
claimed property unknown (a fault that never fired) or most runs tested nothing, 5 where every
sinkcheck scenario was not applicable, 0 only when runs were played and every applicable
claimed property passed.

Loading the plugin imports nothing heavy (no Spark, no Kafka, no testcontainers).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
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
    g.addoption("--sinkcheck-seed", type=int, default=None,
                help="the seed of the generated scenarios: those `sinkcheck run --seed` draws with it (default: "
                     "fixed under ci, else a random one, printed in the header)")
    g.addoption("--sinkcheck-out", default=None, help="where run logs and failing scenarios go (default: a tmp dir)")
    g.addoption("--plugin-path", action="append", default=[], help="Kafka Connect plugin directories (Confluent)")
    g.addoption("--accept-known-bugs", action="store_true", default=False,
                help="a failed run that reproduces a known bug of the release that ran, which explains every property "
                     "that failed, is an expected failure (xfail, its reason 'accepted known bug <id> (<cite>)'), as "
                     "`sinkcheck run --accept-known-bugs` accepts it")


def pytest_configure(config: pytest.Config) -> None:
    for m in PROPERTY_MARKERS:
        config.addinivalue_line("markers", f"{m}: the {m.replace('_', '-')} property")
    config.addinivalue_line("markers", "sinkcheck: a sinkcheck conformance scenario")
    _connector_config(config)  # a config sinkcheck cannot honour: one refusal (exit 4), not one error a test
    for w in _CONFIG_WARNINGS.get(id(config), []):  # in the warnings summary too (the header is not shown under -q)
        config.issue_config_time_warning(pytest.PytestConfigWarning(f"sinkcheck: {w}"), stacklevel=2)
    config.stash[OUTCOMES] = Outcomes()
    config.stash[GENERATION] = generation_of(config)


@dataclass(frozen=True)
class Generation:
    """What the suite's generated scenarios are drawn with: `sinkcheck run`'s batches for the
    same profile, seed and count (conformance.playing.generated), so the plugin plays the
    scenarios `command` plays, and a failure found here is one `run` finds and shrinks too."""

    profile: str
    seed: int  # as `run` prints it: 0 where derandomized
    derandomize: bool
    examples: int
    max_records: int

    def batches(self) -> list[tuple[int, int]]:
        """(Hypothesis seed, examples) of each batch, as `run` draws them."""
        from conformance.playing.generated import generation_batches

        return generation_batches(self.examples, self.seed, self.derandomize)

    def command(self, target: str, connector_config: str | None = None) -> str:
        """The `sinkcheck run` that draws the same generated scenarios."""
        seed = "" if self.derandomize else f" --seed {self.seed}"
        config = f" --connector-config {connector_config}" if connector_config else ""
        return (f"sinkcheck run --target {target}{config} --profile {self.profile}{seed} --examples {self.examples} "
                "--no-named")


GENERATION = pytest.StashKey[Generation]()


def generation_of(config: pytest.Config) -> Generation:
    """The session's profile (`--sinkcheck-profile`, else ci where $CI or
    SINKCHECK_HYPOTHESIS_PROFILE=ci is set, else thorough) read as `sinkcheck run` reads it
    (a fixed seed under ci unless one is given: sinkcheck.options.resolve_profile), with the
    plugin's own counts: a suite plays fewer generated scenarios than `run` (6 under ci, 40
    otherwise; SINKCHECK_GENERATED_EXAMPLES sets it, as `run --examples` does)."""
    from conformance.playing.session import PROFILES

    ci = bool(os.environ.get("CI")) or os.environ.get("SINKCHECK_HYPOTHESIS_PROFILE") == "ci"
    profile = config.getoption("--sinkcheck-profile") or ("ci" if ci else "thorough")
    _, derandomize, max_records = PROFILES[profile]
    seed = config.getoption("--sinkcheck-seed")
    if seed is not None:
        derandomize = False
    elif derandomize:
        seed = 0
    else:
        seed = int.from_bytes(os.urandom(3), "big")
    examples = int(os.environ.get("SINKCHECK_GENERATED_EXAMPLES") or (6 if profile == "ci" else 40))
    return Generation(profile, seed, derandomize, examples, max_records)


class Outcomes:
    """The sinkcheck runs of this pytest session and the scenarios not applicable in it: what
    its exit code is computed over, as `sinkcheck run`'s is."""

    def __init__(self) -> None:
        self.results: list = []
        self.not_applicable: list = []
        self.warnings: list[str] = []
        # `--accept-known-bugs`: the failed runs a known bug of their release explains, by run directory
        self.accepted: dict[str, dict] = {}

    def accepted_as(self, result, accept: bool) -> dict | None:  # noqa: ANN001 - RunResult, imported lazily
        """The known bug a failed run is accepted as where `accept` (conformance.catalog.known_bugs.acceptance),
        remembered for the session's exit code; None otherwise."""
        if not accept:
            return None
        from conformance.catalog.known_bugs import acceptance

        key = str(result.run_dir)
        if key not in self.accepted and (found := acceptance(result)) is not None:
            self.accepted[key] = found
        return self.accepted.get(key)


OUTCOMES = pytest.StashKey[Outcomes]()
# pytest's exit code for each sinkcheck outcome that is not a plain pass (the same numbers as the
# command line's: sinkcheck.exitcodes)
EXIT_FOR_OUTCOME = {"fail": 1, "unknown": 2, "nothing": 5}


@pytest.fixture(scope="session")
def sinkcheck_outcomes(request: pytest.FixtureRequest) -> Outcomes:
    return request.config.stash[OUTCOMES]


def pytest_report_header(config: pytest.Config) -> list[str]:
    """What Connect would only log about the user's config, as `sinkcheck run` warns of it, and
    the seed of the generated scenarios with the command that draws the same ones."""
    lines = [f"sinkcheck: warning: {w}" for w in _CONFIG_WARNINGS.get(id(config), [])]
    gen = config.stash.get(GENERATION, None)
    if gen is not None:
        target = config.getoption("--target") or "pysink"
        lines.append(f"sinkcheck: generated scenarios: seed {gen.seed}, profile {gen.profile}, {gen.examples} drawn "
                     f"(those of `{gen.command(target, config.getoption('--connector-config'))}`)")
    return lines


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The command line's exit code where pytest's own says less: a session whose sinkcheck runs
    all passed but left a claimed property unknown ends 2, one whose every sinkcheck scenario
    was not applicable ends 5 (nothing was tested: never a pass)."""
    outcomes = session.config.stash.get(OUTCOMES, None)
    if outcomes is None or int(exitstatus) != 0 or not (outcomes.results or outcomes.not_applicable):
        return
    from conformance.judging.outcome import outcome

    code = EXIT_FOR_OUTCOME.get(outcome(outcomes.results, accepted=outcomes.accepted))
    if code is not None:
        session.exitstatus = code
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            why = {2: "a claimed property is unknown (its fault never fired) or most runs tested nothing",
                   5: "every sinkcheck scenario was not applicable under the given connector config: nothing was tested",
                   1: "a claimed property failed"}[code]
            reporter.write_line(f"sinkcheck: exit {code}: {why}")


@pytest.fixture(scope="session")
def sinkcheck_accept_known_bugs(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--accept-known-bugs"))


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
    Registry where the config or the suite's scenarios read one (the Python sink's from its first
    run that reads one); None for other targets. A plugin that cannot be had is a usage error
    naming the ways to provide it."""
    from adapters.connect.plugins import PluginUnavailable
    from conformance.catalog.named import SUITE
    from conformance.inputs.targets import TargetSpecError
    from conformance.playing.target_run import needs_registry_converters

    # a Connect worker reads the registry converter plugins when it starts, so they are decided
    # before the stack is; the Python sink over a broker asks the stack for its registry in the
    # first run that reads one, on pytest's own thread (the process lives until the stack
    # stops), so a session whose selected runs read none starts none
    if not sinkcheck_target.startswith("pysink:broker") and needs_registry_converters(
            sinkcheck_target, sinkcheck_connector, [f() for f in SUITE.values()], 1):
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
    from conformance.playing.model_target import model_version
    from conformance.inputs.targets import TargetSpecError
    from conformance.playing.user_config import checked

    target = config.getoption("--target") or "pysink"
    try:
        _CONFIG_WARNINGS[id(config)] = checked(cfg, target, model_version(target), f"--connector-config {path}")
    except (ValueError, TargetSpecError) as e:
        raise pytest.UsageError(str(e)) from None
    return cfg


_CONFIG_WARNINGS: dict[int, list[str]] = {}  # by id(pytest.Config): the warnings of its --connector-config


@pytest.fixture(scope="session")
def sinkcheck_profile(request: pytest.FixtureRequest) -> str:
    return request.config.stash[GENERATION].profile


@pytest.fixture(scope="session")
def sinkcheck_generation(request: pytest.FixtureRequest) -> Generation:
    return request.config.stash[GENERATION]


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
    startup = getattr(result, "startup", None)
    if startup is not None:  # R1.3: the release's start() beside the sink's (conformance.judging.startup)
        lines.append(f"  {startup.line()}")
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
