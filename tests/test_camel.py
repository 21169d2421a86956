"""Apache Camel's aws-s3-sink 4.18.0 through the suite: the named scenarios translated for it
(its plugin laid out from ../shared/camel, or SINKCHECK_PLUGIN_PATH) on warm stacks (a KRaft
broker, moto and a Connect worker on 127.0.0.1, and a spare one for worker-level faults), under
the fault kinds that apply to it: a worker SIGKILL, S3 errors and hangs through the fault front
(on PutObject: Camel writes each record with one), a rebalance and a zombie; and what it does
with a null value, with and without an errant-record reporter. Each gives verdicts, not errors,
and every fault fires."""
from __future__ import annotations

import pytest


pytestmark = pytest.mark.kafka

TARGET = "kafka-connect:camel@4.18.0"
# one scenario per fault kind that applies to Camel, and its own null-value scenarios
SCENARIOS = ("crash-mid-stream", "retriable-503-on-upload", "crash-during-complete", "zombie-task",
             "rebalance-mid-stream", "null-value-stops-the-task", "null-value-tolerated")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from adapters.connect.plugins import PluginUnavailable
    from conformance.inputs.targets import start_connect_stack

    try:
        s = start_connect_stack(TARGET, tmp_path_factory.mktemp("stack"))
    except PluginUnavailable as e:  # neither ../shared/camel nor SINKCHECK_PLUGIN_PATH here
        pytest.fail(f"{TARGET} cannot run here: {e}")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def results(stack, tmp_path_factory):
    from tests.warm import play_on_warm_stacks

    return play_on_warm_stacks(TARGET, SCENARIOS, stack, tmp_path_factory, "c")


def _topic0(result) -> str:
    """The run's partition 0 of its one topic (its name carries the run's tag)."""
    return f"{next(iter(result.scenario.topics))}-0"


def _run(name, results):
    result = results[name]
    if isinstance(result, Exception):
        raise result
    assert result.target_info.connector_version == "4.18.0"
    assert result.translation is not None and not result.translation.given
    assert "storage.class" in result.translation.dropped  # a Confluent property is never sent
    unfired = [f"{f.kind} {f.detail}" for f in result.observation.faults if not f.fired]
    assert not unfired, unfired
    return result


@pytest.mark.parametrize("name", [n for n in SCENARIOS if not n.startswith("null-value")])
def test_at_least_once_under_faults(name, results):
    from conformance.pytest_plugin import failure_block

    r = _run(name, results)
    assert r.claim.name == "at-least-once" and {"no-loss", "commit-safety", "liveness"} <= r.claim.properties
    assert r.status == "pass", failure_block(r)
    objects = r.observation.final_bucket.objects
    assert len(objects) >= len(r.scenario.records)  # one object per record, re-deliveries on top


def test_a_null_value_stops_the_task_and_the_report_shows_it(results):
    r = _run("null-value-stops-the-task", results)
    verdicts = {v.property: v for v in r.verdicts}
    # measured, not claimed: the run passes, and the verdict carries the task's failure as witness
    assert not verdicts["liveness"].claimed and verdicts["liveness"].status == "fail"
    assert "Exchange delivery has failed" in verdicts["liveness"].witnesses[0].explanation
    assert r.status == "pass"
    bodies = sorted(o.body for o in r.observation.final_bucket.objects)
    assert len(bodies) == 5  # the records before the tombstone, and none after it
    assert r.observation.final_offsets.get(_topic0(r), 0) <= 5


def test_a_tolerated_null_value_is_skipped(results):
    r = _run("null-value-tolerated", results)
    verdicts = {v.property: v for v in r.verdicts}
    assert verdicts["liveness"].claimed and verdicts["liveness"].status == "pass"
    assert r.status == "pass"
    assert len(r.observation.final_bucket.objects) == 9  # every record but the tombstone
    assert r.observation.final_offsets.get(_topic0(r)) == 10


def test_camel_4_18_cannot_run_on_a_worker_whose_default_converter_is_json(tmp_path):
    """A finding about Camel's package, pinned: it bundles connect-json 3.6.1, whose JsonConverter
    calls Utils.mkSet (gone since Kafka 4.0), and a Kafka 4.1 worker validates every connector
    config against its default converters in the plugin's class loader. On a worker with the
    distribution's defaults (JsonConverter) no Camel config is accepted, whatever converters it
    names itself; sinkcheck's Camel stacks default to StringConverter
    (adapters.connect.profiles.CAMEL_WORKER_CONVERTERS)."""
    from adapters.connect import plugins
    from adapters.connect.connector_config import default_config
    from adapters.connect.target import KafkaConnectTarget, plugins_dir
    from adapters.processes.stack import KafkaStack

    plugin = plugins.resolve("camel", "4.18.0")
    pdir, _ = plugins_dir(tmp_path, (), plugins=[plugin])
    stack = KafkaStack(tmp_path / "stack", plugin_paths=[pdir]).start()  # JsonConverter defaults
    try:
        t = KafkaConnectTarget(tmp_path / "t", stack=stack, profile="camel", plugin=plugin)
        with pytest.raises(Exception, match="JsonConverter for configuration key.converter: Could not instantiate"):
            t.start(default_config("camel", ["json-default"], None), {"json-default": 1})
        t.stop()
    finally:
        stack.stop()
