"""Confluent's own S3 sink through the suite, live: a named scenario for each way the harness
drives the real connector 12.1.9 (its plugin laid out from ../shared/confluent, or
SINKCHECK_PLUGIN_PATH) on one warm stack (a KRaft broker, moto, a Schema Registry and a Connect
worker, all on 127.0.0.1), each with its own connector, topics and bucket: S3 faults through
sinkcheck's fault front (an error status, an error inside a 200, a hung Complete and a crash
while it hangs), process faults (a crash, a zombie, a worker joining and
leaving), the wall clock, the registry's converters with Avro objects. Each gives verdicts, not
errors; the faults fire; and the AWS SDK v1 connector (10.6.18) and the v2 one (12.1.9) both
complete their multipart uploads through the front. Every other named scenario's real run is a
fixture under tests/fidelity (recorded with `sinkcheck run --target
kafka-connect:confluent@12.1.9 --scenario NAME --fixtures tests/fidelity`), which test_fidelity
replays against today's model: a test below checks that each has one."""
from __future__ import annotations

from collections import Counter

import pytest

from conformance.catalog.named import SUITE
from conformance.playing.runner import run_scenario

pytestmark = pytest.mark.kafka

TARGET = "kafka-connect:confluent@12.1.9"
RESULTS: dict[str, object] = {}
# what the real connector gives on each named scenario (every property it claims passes)
# known bug confluent-close-drops-kept-writers (#950) on 12.1.9: a cooperative revocation drops the
# kept partitions' writers and the task dies at their next record ("No writer found"). Its run
# needs the stack alone for some 70 s; it is replayed offline from its recording
# (tests/test_known_bugs.py) instead of played here
# a task restart, a config update and a rebalance are driven the same way on every Connect
# target: tests/test_adapters_kafka.py applies them to a real worker, tests/test_camel.py plays a
# rebalance on Camel's connector; the multipart stories (270-360 MB each) and a dropped Complete
# answer run over a real broker in tests/test_pysink.py; their runs on this connector are fixtures
LIVE = ("rotate-schedule-table", "crash-during-complete", "retriable-503-on-upload", "error-inside-200-applied",
        "zombie-task", "worker-joins-then-leaves", "avro-converter-to-avro")
NAMES = [name for name in SUITE if name in LIVE]
EXPECTED = {name: "pass" for name in NAMES}


def _registry_converters(names=None) -> bool:
    """Whether the named scenarios `names` (all of them by default) need the Schema Registry
    converters on the worker (AvroConverter)."""
    from adapters.connect.converters import needs_registry_converters

    return any(needs_registry_converters(SUITE[n]().connector) for n in (NAMES if names is None else names))


def _stack(spec: str, tmp_path_factory, registry_converters: bool = True):
    from adapters.connect.plugins import PluginUnavailable
    from conformance.inputs.targets import start_connect_stack

    try:
        return start_connect_stack(spec, tmp_path_factory.mktemp("stack"),
                                   registry_converters=registry_converters and _registry_converters())
    except PluginUnavailable as e:  # neither ../shared/confluent nor SINKCHECK_PLUGIN_PATH here
        pytest.fail(f"{spec} cannot run here: {e}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = _stack(TARGET, tmp_path_factory)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def named_results(stack, tmp_path_factory):
    """Every named scenario on a warm stack: those whose faults touch only their own connector
    four at a time (each with topics of its own), and meanwhile the others (crashes, zombies,
    rebalances) one by one, shared out between a spare stack and, once the others are done,
    the module's."""
    from conformance.playing.stack_sharing import SpareStack, needs_stack_alone, on_shared_stack, stack_schedule
    from conformance.inputs.targets import start_connect_stack

    out = tmp_path_factory.mktemp("named")
    names = NAMES
    alone = [n for n in names if needs_stack_alone(SUITE[n]())]
    # the spare takes only the runs that need a stack alone (crashes, zombies, workers joining):
    # a registry and its converter plugins there only if one of them reads the registry's wire
    # format (each start of a worker with them scans them, 4 to 8 s, and a crash restarts one)
    spare = SpareStack(lambda: start_connect_stack(TARGET, tmp_path_factory.mktemp("stack-spare"),
                                                   registry_converters=_registry_converters(alone)))

    def run(name):
        sc = on_shared_stack(SUITE[name](), f"-n{names.index(name)}")
        return run_scenario(sc, TARGET, out / name, stack=spare.stack(stack), quiet_timeout_s=120)

    return dict(zip(names, stack_schedule(names, lambda n: needs_stack_alone(SUITE[n]()), run, workers=4,
                                          spare=spare.spare)))


def test_a_stack_with_registry_converters_starts_its_registry_with_it(stack):
    """Started with the stack, in the thread that starts it: a run's thread that started it on
    first use took it down when it ended (--pdeathsig), and a later run found no registry."""
    assert _registry_converters() and stack.registry is not None
    assert stack.registry.proc is not None and stack.registry.proc.alive


@pytest.mark.parametrize("name", NAMES)
def test_named_scenario_on_confluent_12_1_9(name, named_results):
    result = named_results[name]
    if isinstance(result, Exception):
        raise result
    RESULTS[name] = result
    assert result.target_info.connector_version == "12.1.9"
    unfired = [f"{f.kind} {f.detail}" for f in result.observation.faults if not f.fired]
    assert not unfired, unfired
    from conformance.pytest_plugin import failure_block

    assert result.status == EXPECTED[name], failure_block(result)


def test_every_other_named_scenario_has_a_recorded_run_of_the_real_connector():
    """What is not played live here is judged offline from its real run (tests/test_fidelity.py)."""
    from pathlib import Path

    from conformance.catalog.named import CONNECTOR_OWN

    recorded = {p.stem.split("--", 1)[1] for p in (Path(__file__).parent / "fidelity").glob("confluent-12.1.9--*.json")}
    missing = [n for n in [*SUITE, *CONNECTOR_OWN["confluent"]] if n not in LIVE and n not in recorded]
    assert not missing, f"record them: sinkcheck run --target {TARGET} --examples 0 --fixtures tests/fidelity " + \
        " ".join(f"--scenario {n}" for n in missing)


def test_each_fault_kind_fired_on_the_real_connector():
    if len(RESULTS) < len(NAMES):
        pytest.skip("runs after the named scenarios of this module (run the module whole)")
    fired = Counter()
    for r in RESULTS.values():
        for f in r.observation.faults:
            if f.fired:
                fired[f.params.get("action", f.kind) if f.kind == "s3" else f.kind] += 1
    for kind in ("crash", "pause", "resume", "add-worker", "remove-worker", "fail", "hang"):
        assert fired[kind] >= 1, (kind, dict(fired))


@pytest.mark.parametrize("version", ["10.6.18", "12.1.9"])
def test_sdk_v1_and_v2_connectors_complete_uploads_through_the_fault_front(version, tmp_path_factory, tmp_path,
                                                                          named_results):
    """10.6.18 (AWS SDK v1) parses moto's CompleteMultipartUpload reply too (it died with a
    NullPointerException there against moto 5.2.1); a 503 on an UploadPart is retried. 12.1.9's
    run is the named scenario's on the module's stack."""
    spec = f"kafka-connect:confluent@{version}"
    if version == "12.1.9":
        r = named_results["retriable-503-on-upload"]
    else:
        # a stack without the registry: its run reads none, and the registry's converters add to the worker's start
        s = _stack(spec, tmp_path_factory, registry_converters=_registry_converters(["retriable-503-on-upload"]))
        try:
            r = run_scenario(SUITE["retriable-503-on-upload"](), spec, tmp_path, stack=s)
        finally:
            s.stop()
    assert r.target_info.connector_version == version
    assert [f.fired for f in r.observation.faults] == [True]
    assert r.status == "pass", [v.to_json() for v in r.failed()]
    assert len(r.observation.final_bucket.objects) == 3 and not r.observation.final_bucket.open_uploads
