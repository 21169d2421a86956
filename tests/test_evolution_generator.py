"""The generator's evolving schemas (R14): every kind of change is drawn, versions are first
written in order, Avro versions are ones a registry checking BACKWARD accepts, and a stream under
a schema.compatibility moves through them."""
from __future__ import annotations

import functools
import re
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.generators.evolution import (AVRO_KINDS, KINDS, REGISTRY_KINDS, _apply, _changeable, connect_changes,
                                              evolution_changes, evolving_streams, schema_versions, version_picks)
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
         "fields": [{"field": "source", "type": "string", "optional": False},
                    {"field": "channel", "type": "string", "optional": True}]},
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "optional": True},
        {"field": "tags", "type": "map", "optional": False, "keys": {"type": "string", "optional": False},
         "values": {"type": "double", "optional": False}},
        {"field": "amount", "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
         "parameters": {"scale": "2"}, "optional": False}]}
    for kind in KINDS:
        targets = _changeable(kind, base, ("seq",), avro=False)
        assert targets, kind
        assert _apply(kind, base, targets[0], 2, avro=False) != base, kind
    assert set(REGISTRY_KINDS) - set(AVRO_KINDS) < set(KINDS)
    assert _apply("widen", base, "i32", 2, avro=True)["fields"][1]["type"] == "int64"
    assert _apply("nested-type", base, "tags", 2, avro=False)["fields"][5]["values"]["type"] == "string"
    assert [f["field"] for f in _apply("nested-drop", base, "meta/channel", 2, avro=False)["fields"][3]["fields"]] == ["source"]
    assert "name" not in _apply("logical", base, "day", 2, avro=False)["fields"][4]
    avro = {**base, "x-avro-extras": ("status", "coupon")}
    for kind in AVRO_KINDS:
        assert not _changeable(kind, avro, ("seq",), avro=False), kind  # JsonConverter carries no enums or unions
        (target,) = _changeable(kind, avro, ("seq",), avro=True)
        assert _apply(kind, avro, target, 2, avro=True)["x-avro-changes"], kind
    assert _apply("enum-drop", avro, "status", 2, avro=True)["x-avro-changes"]["status"] == ["NEW", "PAID", "SHIPPED"]


def test_the_changes_are_named_as_the_connector_sees_them():
    """connect_changes, over the Connect schemas AvroData makes of a producer's versions: an enum's
    symbols, a union's branches, a record's fields in an array, a logical type, a namespace."""
    from conformance.generators.avro_values import producer_schema
    from reference_impl.avro_binary import parse
    from reference_impl.avro_data import to_connect_schema

    base = {"type": "struct", "name": "order", "optional": False, "fields": [
        {"field": "seq", "type": "int64", "optional": False},
        {"field": "day", "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1, "optional": True},
        {"field": "points", "type": "array", "optional": True, "items": {
            "type": "struct", "name": "point", "optional": False,
            "fields": [{"field": "x", "type": "int16", "optional": False}]}}],
        "x-avro-extras": ("status", "coupon")}

    def connect(v):
        plain = {k: x for k, x in v.items() if not k.startswith("x-avro-")}
        return to_connect_schema(*parse(producer_schema(plain, v["x-avro-extras"], v.get("x-avro-changes"))))

    expect = {("enum-add", "status"): {"enum symbols added"}, ("enum-drop", "status"): {"enum symbols dropped"},
              ("union-add", "coupon"): {"union branches added"}, ("nested-add", "points"): {"nested fields added"},
              ("logical", "day"): {"logical type changed"}, ("namespace", "*"): {"namespace changed"}}
    for (kind, target), names in expect.items():
        assert names <= connect_changes(connect(base), connect(_apply(kind, base, target, 2, avro=True))), kind


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

    from conformance.generators.avro_values import avro_only_extras

    registry = InMemoryRegistry("BACKWARD")
    base = {**data.draw(value_schemas()), "x-avro-extras": data.draw(avro_only_extras())}
    for v in data.draw(schema_versions(base, avro=True)):
        plain = {k: x for k, x in v.items() if not k.startswith("x-avro-")}
        text = schema_text(producer_schema(plain, v["x-avro-extras"], v.get("x-avro-changes")))
        registry.register("orders-value", text, "AVRO")  # raises if refused


@functools.lru_cache(maxsize=1)
def profile_ci_on_pysink() -> tuple:
    """The generated scenarios `sinkcheck run --target pysink --profile ci` plays, drawn once for
    this module's tests (the same in any process, whatever it imported before:
    conformance.generators.strategies.seed_only_draws)."""
    from conformance.playing.generated import generated_scenarios
    from conformance.playing.session import SIMULATED_EXAMPLES

    return tuple(generated_scenarios(SIMULATED_EXAMPLES["ci"], None, True, 30, kinds=("pysink",)))


def test_profile_ci_on_the_python_sink_draws_evolving_schemas_under_every_mode_and_registry_converter():
    """What `sinkcheck run --target pysink --profile ci` plays (bench/coverage.py prints the counts)."""
    scenarios = list(profile_ci_on_pysink())
    seen = evolving_streams(scenarios)
    assert set(seen) >= {(c, m) for c in ("json-schemas", "avro", "protobuf")
                         for m in ("NONE", "BACKWARD", "FORWARD", "FULL")}, seen
    changes = evolution_changes(scenarios)
    assert {("avro", c) for c in ("enum symbols added", "enum symbols dropped", "union branches added",
                                  "namespace changed")} <= set(changes), changes
    # a nested type changed (JSON alone) is in the named evolution-nested-type-json; the draws
    # of ci meet it or not as the generator's other draws move
    assert {("json-schemas", c) for c in ("nested fields added", "renamed")} <= set(changes), changes


def test_profile_ci_on_the_python_sink_meets_every_class_of_production_input():
    """Issue #35: topic names, text, field lists, partition numbers, record shapes and headers as
    production has them, each in at least one generated scenario `--profile ci` plays on the
    Python sink, without the named ones (an array of Structs was met by named scenarios alone
    while the generator's were not counted). bench/coverage.py prints these counts per profile."""
    from conformance.generators.input_classes import INPUT_CLASSES, input_classes

    met = Counter(c for sc in profile_ci_on_pysink() for c in input_classes(sc))
    assert not [c for c in INPUT_CLASSES if not met[c]], {c: met[c] for c in INPUT_CLASSES}


# ------------------------------------------------------------------ a Protobuf producer's subjects

def _declared(text: str) -> dict[tuple[str, ...], tuple[set[str], set[str]]]:
    """Each message of a producer's proto3 text (protobuf_notation writes one statement a line):
    (its fields' names and numbers, the names and numbers it reserves)."""
    path: list[str] = []
    out: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
    for line in text.splitlines():
        s = line.strip()
        if m := re.fullmatch(r"message (\w+) \{", s):
            path.append(m[1])
            out[tuple(path)] = (set(), set())
        elif s == "}":
            path.pop()
        elif m := re.fullmatch(r"reserved (.+);", s):
            out[tuple(path)][1].update(v.strip().strip('"') for v in m[1].split(","))
        elif path and (m := re.fullmatch(r".+ (\w+) = (\d+);", s)):
            out[tuple(path)][0].update(m.groups())
    return out


def _apicurio_refusal(latest: str, new: str) -> str | None:
    """Why Apicurio 3.3.3 refuses `new` after `latest` under BACKWARD, as far as dropped fields go
    (its checks of fields removed without reservation, of reservations removed and of reserved
    fields used; held to the real one on 300 drawn streams: 72 refused before the reservations,
    the same 72 here, 0 after)."""
    before, after = _declared(latest), _declared(new)
    for path, (used, reserved) in before.items():
        now_used, now_reserved = after.get(path, (set(), set()))
        if used - now_used - now_reserved:
            return f"{'.'.join(path)}: {sorted(used - now_used - now_reserved)} removed without reservation"
        if reserved - now_reserved:
            return f"{'.'.join(path)}: the reservations of {sorted(reserved - now_reserved)} removed"
        if reserved & now_used:
            return f"{'.'.join(path)}: {sorted(reserved & now_used)} reserved and used"
    return None


def _subject_refusals(records: list[dict]) -> list[str]:
    """Each subject's (topic's) texts in the order the records register them, a held one again
    answering its id without a check (tests/test_registry.py): what a checking registry refuses."""
    latest: dict[str, str] = {}
    held: set[tuple[str, str]] = set()
    out = []
    for r in records:
        v = r["value"]
        if not (isinstance(v, dict) and "schema" in v) or (r["topic"], v["schema"]) in held:
            continue
        why = _apicurio_refusal(latest[r["topic"]], v["schema"]) if r["topic"] in latest else None
        if why:
            out.append(f"{r['topic']}: {why}")
            continue
        held.add((r["topic"], v["schema"]))
        latest[r["topic"]] = v["schema"]
    return out


PROTOBUF_CFG = {"value.converter": "io.confluent.connect.protobuf.ProtobufConverter",
                "value.converter.schema.registry.url": "http://schema-registry:8081",
                "key.converter": "org.apache.kafka.connect.storage.StringConverter",
                "schema.compatibility": "BACKWARD"}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_protobuf_producers_versions_are_accepted_by_a_registry_checking_its_evolutions(data):
    """Over several topics an older producer writes a topic after the newer one did: each subject
    still takes every version (generated-007 on real Confluent 12.1.9: the registry refused the
    version that dropped `audit` without reserving it)."""
    from conformance.generators.records import sink_records

    records = data.draw(sink_records({"orders": 1, "audit.events_v1": 2, "t": 1}, 40, PROTOBUF_CFG))
    assert not _subject_refusals(records)


def test_an_older_protobuf_version_after_a_newer_one_reserves_or_is_written_with_a_held_one():
    from conformance.generators.records import PROTOBUF_ADDED, protobuf_subjects
    from conformance.inputs.protobuf_notation import producer_schema

    base = {"type": "struct", "name": "order", "optional": False,
            "fields": [{"field": "seq", "type": "int64", "optional": False}]}
    versions = [base, {**base, "fields": base["fields"] + list(PROTOBUF_ADDED[:2])},
                {**base, "fields": base["fields"] + list(PROTOBUF_ADDED)}]
    plain = [producer_schema(v) for v in versions]

    def rec(topic: str, k: int, **payload: object) -> dict:
        return {"topic": topic, "partition": 0, "value": {"schema": plain[k], "payload": {"seq": 1, **payload}}}

    # orders meets v0, v2, then v1 (an older producer): v1 reserves audit, and v2 is not written there again
    stream = [rec("orders", 0), rec("orders", 2), rec("other", 1), rec("orders", 1, channel="web"),
              rec("orders", 1), rec("orders", 0)]
    assert _subject_refusals(stream)  # as drawn: refused
    out = protobuf_subjects(stream, versions, PROTOBUF_CFG)
    assert not _subject_refusals(out)
    dropped = out[3]["value"]["schema"]
    assert '  reserved 4;\n  reserved "audit";\n' in dropped and "  optional string channel = 2;\n" in dropped
    assert out[3]["value"]["payload"] == {"seq": 1, "channel": "web"}
    assert out[4]["value"]["schema"] == dropped  # the text the subject holds, found again
    assert [r["value"]["schema"] for r in out[:3]] == plain[:1] + plain[2:] + plain[1:2] and out[5] == stream[5]
    # orders meets v1, then v0 while v2 is still to come there: v0's record is written with v1, which
    # orders holds (reserving channel and priority, v2 could not be registered after it)
    stream = [rec("orders", 1), rec("orders", 0), rec("orders", 2)]
    assert _subject_refusals(stream)
    out = protobuf_subjects(stream, versions, PROTOBUF_CFG)
    assert [r["value"]["schema"] for r in out] == [plain[1], plain[1], plain[2]] and not _subject_refusals(out)
    # a subject a topic (TopicNameStrategy) or one for every topic's records (RecordNameStrategy)
    stream = [rec("orders", 0), rec("other", 2), rec("orders", 1)]
    assert protobuf_subjects(stream, versions, PROTOBUF_CFG) == stream
    by_record = protobuf_subjects(stream, versions, {**PROTOBUF_CFG, "value.subject.name.strategy":
                                                     "io.confluent.kafka.serializers.subject.RecordNameStrategy"})
    assert '  reserved "audit";\n' in by_record[2]["value"]["schema"] and by_record[:2] == stream[:2]
