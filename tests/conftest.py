"""Hypothesis profiles: `ci` (derandomized, bounded) is chosen automatically when CI is set.

And the order of the modules: `./dev test` shares them out between three processes (pytest-xdist,
`--dist loadfile`: a module is one unit, since its warm stacks and Spark session are module
fixtures that two processes would each start), in the order collected; the modules that start
real stacks go first, longest first, so the last unit to finish is a short one."""
import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=2000,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("SINKCHECK_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def _import_every_project_module() -> None:
    """Hypothesis biases its draws with constants it finds in the project's modules imported so
    far (hypothesis.internal.conjecture.providers._get_local_constants), so a derandomized test
    drew other examples when a test before it had imported other modules (in a two-process run,
    whichever modules the process ran before). Importing them all first gives every test the same
    pool, whatever ran before it."""
    import importlib
    import pkgutil

    for package in ("reference_impl", "conformance", "adapters", "reports", "sinkcheck"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.endswith(".__main__"):
                continue  # a command, not a module
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - a module needing what this machine lacks: its tests say so
                pass


_import_every_project_module()

# the modules that took longest in a two-process run of a7de462 (each module's wall time from its
# first test's set-up to its last one's teardown, measured beside other work), longest first:
# test_confluent 180 s, test_iceberg 153, test_adapters_kafka 147, test_audit 145, test_camel 141,
# test_pysink 103, test_aiven 90, test_suite 75 (after its cut), test_lenses 72, test_simulation 65,
# test_spark_streaming 60, test_adapters_leak 50, test_evolution_generator 42, test_cli_exit_codes 41,
# test_converter_plugins 40, test_model_engines 32 (every other under 30). A long module left to
# the end keeps one process busy while the others idle: these go first, and the short ones fill
# in behind them
LONGEST_FIRST = ("test_confluent", "test_iceberg", "test_adapters_kafka", "test_audit", "test_camel", "test_pysink",
                 "test_aiven", "test_suite", "test_lenses", "test_simulation", "test_spark_streaming",
                 "test_adapters_leak", "test_evolution_generator", "test_cli_exit_codes", "test_converter_plugins",
                 "test_model_engines")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        module = getattr(item, "module", None)
        name = module.__name__.rpartition(".")[2] if module else ""
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: a module's tests keep their order
