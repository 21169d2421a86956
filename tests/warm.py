"""Named scenarios on warm stacks, as `sinkcheck run` plays them, for the tests of one real
connector: those that touch only their own connector three at a time on the module's stack, the
worker-level ones alone on it or on a spare stack started for them."""
from __future__ import annotations

from typing import Any, Sequence


def play_on_warm_stacks(target: str, names: Sequence[str], stack: Any, tmp_path_factory: Any, tag: str) -> dict[str, Any]:
    """Each named scenario's RunResult (or the exception its run raised), by name; `tag` marks
    the topics of these runs on the shared broker."""
    from conformance.named import ALL_NAMED
    from conformance.runner import SpareStack, needs_stack_alone, on_shared_stack, run_scenario, stack_schedule
    from conformance.targets import start_connect_stack

    out = tmp_path_factory.mktemp(tag)
    spare = SpareStack(lambda: start_connect_stack(target, tmp_path_factory.mktemp("stack-spare")))
    names = list(names)

    def run(name: str) -> Any:
        sc = on_shared_stack(ALL_NAMED[name](), f"-{tag}{names.index(name)}")
        return run_scenario(sc, target, out / name, stack=spare.stack(stack), quiet_timeout_s=120)

    def alone(name: str) -> bool:
        return needs_stack_alone(ALL_NAMED[name]())

    return dict(zip(names, stack_schedule(names, alone, run, workers=3, spare=spare.spare)))
