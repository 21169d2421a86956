"""Named scenarios on warm stacks, as `sinkcheck run` plays them, for the tests of one real
connector: those that touch only their own connector three at a time on the module's stack, the
worker-level ones alone on it or on a spare stack started for them."""
from __future__ import annotations

from typing import Any, Sequence


def play_on_warm_stacks(target: str, names: Sequence[str], stack: Any, tmp_path_factory: Any, tag: str) -> dict[str, Any]:
    """Each named scenario's RunResult (or the exception its run raised), by name; `tag` marks
    the topics of these runs on the shared broker."""
    from conformance.catalog.named import ALL_NAMED
    from conformance.playing.runner import run_scenario
    from conformance.playing.stack_sharing import SpareStack, needs_stack_alone, on_shared_stack, stack_schedule
    from conformance.inputs.targets import start_connect_stack

    out = tmp_path_factory.mktemp(tag)
    spare = SpareStack(lambda: start_connect_stack(target, tmp_path_factory.mktemp("stack-spare")))
    names = list(names)

    def run(name: str) -> Any:
        sc = on_shared_stack(ALL_NAMED[name](), f"-{tag}{names.index(name)}")
        return run_scenario(sc, target, out / name, stack=spare.stack(stack), quiet_timeout_s=120)

    def alone(name: str) -> bool:
        return needs_stack_alone(ALL_NAMED[name]())

    return dict(zip(names, stack_schedule(names, alone, run, workers=3, spare=spare.spare)))


def warm_fixtures(target: str, names: Sequence[str], tag: str) -> tuple[Any, Any]:
    """The module fixtures of a connector's tests: `stack`, a warm stack for `target` (its plugin
    from SINKCHECK_PLUGIN_PATH or the shared layouts, laid out on first use; a plugin nowhere to
    be had fails the tests), and `results`, the named scenarios `names` played on it."""
    import pytest

    @pytest.fixture(scope="module")
    def stack(tmp_path_factory: Any) -> Any:
        from adapters.connect.plugins import PluginUnavailable
        from conformance.inputs.targets import start_connect_stack

        try:
            s = start_connect_stack(target, tmp_path_factory.mktemp("stack"))
        except PluginUnavailable as e:
            pytest.fail(f"{target} cannot run here: {e}")
        yield s
        s.stop()

    @pytest.fixture(scope="module")
    def results(stack: Any, tmp_path_factory: Any) -> dict[str, Any]:
        return play_on_warm_stacks(target, names, stack, tmp_path_factory, tag)

    return stack, results


def given_run(results: dict[str, Any], name: str, version: str) -> Any:
    """The RunResult of a connector's own scenario (its config used as given), on the version
    the worker loaded, with every fault fired."""
    result = results[name]
    if isinstance(result, Exception):
        raise result
    assert result.target_info.connector_version == version
    assert result.translation is not None and result.translation.given
    unfired = [f"{f.kind} {f.detail}" for f in result.observation.faults if not f.fired]
    assert not unfired, unfired
    return result
