"""The generator's evolving schemas (R14): every kind of change is drawn, versions are first
written in order, Avro versions are ones a registry checking BACKWARD accepts, and a stream under
a schema.compatibility moves through them."""
from __future__ import annotations

import functools
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.generators.evolution import (KINDS, REGISTRY_KINDS, _apply, _changeable, evolving_streams,
                                              schema_versions, version_picks)
from conformance.generators.values import value_schemas



@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_version_differs_from_the_one_before_and_keeps_seq_region_and_ts(data):
    base = data.draw(value_schemas())
    avro = data.draw(st.booleans())
    versions = data.draw(schema_versions(base, avro))
    assert 2 <= len(versions) <= 3
    for before, after in zip(versions, versions[1:]):
        assert before != after
        kept = {f["field"]: f for f in after["fields"]}
        assert all(kept[n] == f for f in before["fields"] if (n := f["field"]) in ("seq", "region", "ts"))
    if not avro:
        assert [v["version"] for v in versions] == list(range(1, len(versions) + 1))


def test_each_kind_of_change_applies_to_a_schema_that_has_what_it_changes():
    base = {"type": "struct", "name": "order", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "i32", "type": "int32", "optional": False},
        {"field": "note", "type": "string", "optional": True},
        {"field": "meta", "type": "struct", "name": "meta", "optional": True,
         "fields": [{"field": "source", "type": "string", "optional": False}]},
        {"field": "tags", "type": "map", "optional": False, "keys": {"type": "string", "optional": False},
         "values": {"type": "double", "optional": False}},
        {"field": "amount", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "2"}, "optional": False}]}
    for kind in KINDS:
        targets = _changeable(kind, base, ("seq",), avro=False)
        assert targets, kind
        assert _apply(kind, base, targets[0], 2, avro=False) != base, kind
    assert set(REGISTRY_KINDS) < set(KINDS)
    assert _apply("widen", base, "i32", 2, avro=True)["fields"][1]["type"] == "int64"
    assert _apply("nested-type", base, "tags", 2, avro=False)["fields"][4]["values"]["type"] == "string"


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30), st.integers(1, 3), st.data())
def test_each_version_is_first_written_after_the_one_before_it(n, versions, data):
    picks = data.draw(version_picks(n, versions))
    assert len(picks) == n
    newest = -1
    for p in picks:
        assert p <= newest + 1
        newest = max(newest, p)
    if n >= versions:
        assert newest == versions - 1  # every version is written


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_avro_versions_are_accepted_by_a_registry_checking_backward(data):
    from adapters.registry.memory import InMemoryRegistry
    from conformance.generators.avro_values import producer_schema
    from conformance.inputs.registry_wire import schema_text

    registry = InMemoryRegistry("BACKWARD")
    base = data.draw(value_schemas())
    for v in data.draw(schema_versions(base, avro=True)):
        registry.register("orders-value", schema_text(producer_schema(v)), "AVRO")  # raises if refused


@functools.lru_cache(maxsize=1)
def profile_ci_on_pysink() -> tuple:
    """What `sinkcheck run --target pysink --profile ci` plays, drawn once for this module's tests."""
    from conformance.playing.generated import generated_scenarios
    from conformance.playing.session import SIMULATED_EXAMPLES

    return tuple(generated_scenarios(SIMULATED_EXAMPLES["ci"], None, True, 30, kinds=("pysink",)))


def test_profile_ci_on_the_python_sink_draws_evolving_schemas_under_every_mode_and_registry_converter():
    """What `sinkcheck run --target pysink --profile ci` plays (bench/coverage.py prints the counts)."""
    seen = evolving_streams(list(profile_ci_on_pysink()))
    assert set(seen) >= {(c, m) for c in ("json-schemas", "avro") for m in ("NONE", "BACKWARD", "FORWARD", "FULL")}, seen


def test_profile_ci_on_the_python_sink_meets_every_class_of_production_input():
    """Issue #35: topic names, text, field lists, partition numbers, record shapes and headers as
    production has them, each in at least one scenario `--profile ci` plays on the Python sink
    (bench/coverage.py prints the counts per profile)."""
    from conformance.generators.input_classes import INPUT_CLASSES, input_classes
    from conformance.inputs.wire import NotRealizable, check_realizable

    def played(sc) -> bool:
        """Whether a run plays it (one no deployment could produce is left out)."""
        try:
            check_realizable(sc.connector, sc.records)
        except NotRealizable:
            return False
        return True

    met = Counter(c for sc in profile_ci_on_pysink() if played(sc) for c in input_classes(sc))
    assert not [c for c in INPUT_CLASSES if not met[c]], {c: met[c] for c in INPUT_CLASSES}
