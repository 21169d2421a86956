"""R14: schema compatibility in the model, mode by mode and release by release, run as a user
runs `sinkcheck model --contents` (the projection shows in the objects' contents)."""
from __future__ import annotations

from typing import Any

import pytest

from modelrun import connector, record, run_model
from reference_impl.connect_data import parse_schema
from reference_impl.schema_evolution import (Incompatibility, ProjectionError, SchemaChecks, incompatibility,
                                             project)
from reference_impl.versions import VersionProfile

A = {"field": "a", "type": "int32", "optional": False}
B_DEFAULT = {"field": "b", "type": "string", "optional": True, "default": "dflt"}
B_REQUIRED = {"field": "b", "type": "string", "optional": False}


def schema(version: int | None, *fields: dict, name: str = "com.acme.Order", **extra: Any) -> dict:
    out = {"type": "struct", "optional": False, "name": name, "fields": list(fields), **extra}
    if version is not None:
        out["version"] = version
    return out


def rec(offset: int, sch: dict, payload: dict) -> dict:
    return record(offset, {"schema": sch, "payload": payload})


def objects(tmp_path, mode: str, records: list[dict], version: str | None = None, flush: int = 10) -> dict:
    extra = ["--connector-version", version] if version else []
    return run_model(tmp_path, connector(flush_size=flush, schema_compatibility=mode), records, None, "--contents", *extra)


def files(out: dict) -> list[tuple[list[int], str]]:
    return [(o["offsets"], o["rotation"]) for o in out["objects"]]


def test_R14_3_backward_a_newer_version_rotates_and_an_older_one_is_projected_with_the_new_default(tmp_path):
    v1, v2 = schema(1, A), schema(2, A, B_DEFAULT)
    out = objects(tmp_path, "BACKWARD", [rec(0, v1, {"a": 1}), rec(1, v2, {"a": 2, "b": "x"}),
                                         rec(2, v1, {"a": 3}), rec(3, v1, {"a": 4})], flush=3)
    assert files(out) == [([0], "R14 schema change (DIFFERENT_VERSION)"), ([1, 2, 3], "R3.8 flush.size")]
    assert out["objects"][1]["contents"]["value"] == [{"a": 2, "b": "x"}, {"a": 3, "b": "dflt"}, {"a": 4, "b": "dflt"}]


def test_R14_3_full_rotates_and_projects_as_backward(tmp_path):
    v1, v2 = schema(1, A), schema(2, A, B_DEFAULT)
    out = objects(tmp_path, "FULL", [rec(0, v2, {"a": 1, "b": "y"}), rec(1, v1, {"a": 2}), rec(2, v2, {"a": 3, "b": "z"})],
                  flush=2)
    assert files(out) == [([0, 1], "R3.8 flush.size")]
    assert out["objects"][0]["contents"]["value"] == [{"a": 1, "b": "y"}, {"a": 2, "b": "dflt"}]


def test_R14_4_forward_an_older_version_rotates_and_a_newer_one_loses_its_new_field(tmp_path):
    v1, v2 = schema(1, A), schema(2, A, B_DEFAULT)
    out = objects(tmp_path, "FORWARD", [rec(0, v1, {"a": 1}), rec(1, v2, {"a": 2, "b": "x"}),
                                        rec(2, v2, {"a": 3, "b": "w"}), rec(3, v1, {"a": 4}), rec(4, v1, {"a": 5})], flush=3)
    assert files(out) == [([0, 1, 2], "R3.8 flush.size")]
    assert out["objects"][0]["contents"]["value"] == [{"a": 1}, {"a": 2}, {"a": 3}]
    out = objects(tmp_path, "FORWARD", [rec(0, v2, {"a": 1, "b": "x"}), rec(1, v1, {"a": 2}), rec(2, v1, {"a": 3})],
                  flush=2)
    assert files(out) == [([0], "R14 schema change (DIFFERENT_VERSION)"), ([1, 2], "R3.8 flush.size")]


def test_R14_2_none_rotates_on_any_difference_and_writes_records_as_they_are(tmp_path):
    v1, v1_doc = schema(1, A), schema(1, A, doc="orders")
    out = objects(tmp_path, "NONE", [rec(0, v1, {"a": 1}), rec(1, v1_doc, {"a": 2}), rec(2, v1, {"a": 3})], flush=1)
    assert [o for o, _ in files(out)] == [[0], [1], [2]]


def test_R14_3_a_required_file_field_the_record_lacks_rotates_from_storage_common_12_0_6(tmp_path):
    """MISSING_REQUIRED_FIELD (#463): the file's v2 has a required field without a default;
    12.1.9 rotates, 11.0.7 (storage-common 11.2.27, top level only) projects and the projector
    throws, which stops the task."""
    v1, v2 = schema(1, A), schema(2, A, B_REQUIRED)
    records = [rec(0, v2, {"a": 1, "b": "x"}), rec(1, v1, {"a": 2})]
    out = objects(tmp_path, "BACKWARD", records, "12.1.9", flush=5)
    assert files(out) == [([0], "R14 schema change (MISSING_REQUIRED_FIELD at b)")]
    out = objects(tmp_path, "BACKWARD", records, "11.0.7", flush=5)
    assert out["objects"] == [] and out["task_failure"]["rule"] == "R14.7"
    assert "Required field `b` is missing" in out["task_failure"]["message"]


def test_R14_3_a_nested_type_change_rotates_on_12_1_9_and_kills_the_task_on_11_0_7(tmp_path):
    inner = lambda t: {"field": "line", "type": "struct", "optional": False, "name": "com.acme.Line",  # noqa: E731
                       "fields": [{"field": "qty", "type": t, "optional": False}]}
    v1, v2 = schema(1, inner("string")), schema(2, inner("int32"))
    records = [rec(0, v2, {"line": {"qty": 1}}), rec(1, v1, {"line": {"qty": "one"}})]
    out = objects(tmp_path, "BACKWARD", records, "12.1.9", flush=2)
    assert files(out) == [([0], "R14 schema change (DIFFERENT_TYPE at line.qty)")] and out["task_failure"] is None
    out = objects(tmp_path, "BACKWARD", records, "11.0.7", flush=2)
    assert out["task_failure"]["rule"] == "R14.7" and "Schema type mismatch" in out["task_failure"]["message"]


def test_R14_3_an_enum_losing_a_symbol_is_projected_from_10_6_2_and_stops_the_task_before():
    """#416: the record's enum symbols need only be a subset of the file's; Kafka's projector
    (storage-common before 11.2.21) wants the parameters equal."""
    def enum(*symbols: str) -> dict:
        params = {"io.confluent.connect.avro.Enum": "com.acme.Colour",
                  **{f"io.confluent.connect.avro.Enum.{s}": s for s in symbols}}
        return {"field": "colour", "type": "string", "optional": False, "name": "com.acme.Colour", "parameters": params}

    old, new = parse_schema(schema(1, enum("RED", "GREEN"))), parse_schema(schema(2, enum("RED", "GREEN", "BLUE")))
    for checks in (SchemaChecks.ENUMS, SchemaChecks.NESTED):
        assert incompatibility("BACKWARD", old, new, checks) is None
    with pytest.raises(ProjectionError, match="parameters not equal"):
        project(old, _struct(old, colour="RED"), new, SchemaChecks.KAFKA)
    assert incompatibility("BACKWARD", new, old, SchemaChecks.NESTED) == Incompatibility("DIFFERENT_PARAMS", "colour")


def _struct(sch, **values):
    from reference_impl.connect_data import Struct

    return Struct(sch, values)


def test_R14_3_documentation_parameters_count_before_12_0_2_only():
    with_doc = parse_schema(schema(1, A, parameters={"connect.record.doc": "an order"}))
    plain = parse_schema(schema(1, A))
    assert incompatibility("BACKWARD", with_doc, plain, SchemaChecks.NESTED) is None
    assert incompatibility("BACKWARD", with_doc, plain, SchemaChecks.METADATA) == Incompatibility("DIFFERENT_PARAMS")


def test_R14_7_numbers_widen_as_java_widens_them():
    small = parse_schema(schema(1, {"field": "x", "type": "int64", "optional": False}))
    wide = parse_schema(schema(2, {"field": "x", "type": "float", "optional": False}))
    assert incompatibility("BACKWARD", small, wide) is None and incompatibility("BACKWARD", wide, small).kind == "DIFFERENT_TYPE"
    assert project(small, _struct(small, x=16777217), wide).get("x") == 16777216.0  # float32's rounding


def test_R14_5_a_missing_version_stops_the_task_under_backward_but_not_under_none(tmp_path):
    records = [rec(0, schema(None, A), {"a": 1}), rec(1, schema(None, A, B_DEFAULT), {"a": 2, "b": "x"})]
    out = objects(tmp_path, "BACKWARD", records)
    assert out["task_failure"]["rule"] == "R14.5" and "Schema version required for BACKWARD" in out["task_failure"]["message"]
    assert objects(tmp_path, "NONE", records)["task_failure"] is None


@pytest.mark.parametrize("version, checks", [("12.1.9", "NESTED"), ("12.0.7", "NESTED"), ("12.0.1", "METADATA"),
                                             ("11.0.8", "ENUMS"), ("11.0.9", "NESTED"), ("10.6.18", "NESTED"),
                                             ("10.6.11", "ENUMS"), ("10.6.1", "KAFKA"), ("10.5.25", "KAFKA")])
def test_R14_7_each_release_has_the_checks_of_the_storage_common_it_bundles(version, checks):
    assert VersionProfile.of(version).schema_checks.name == checks


def test_R14_7_a_projected_map_iterates_as_the_new_hashmap_projectMap_fills():
    """SchemaProjector.projectMap copies the entries into a `new HashMap<>()` (16 buckets): an
    AvroData map (a table sized to its entries) comes out in another order. "channel" and "note"
    hash to buckets 0 and 1 of a 2-entry table, 8 and 1 of a 16-entry one."""
    from reference_impl.javamap import as_hashmap

    m = {"type": "map", "optional": False, "keys": {"type": "string", "optional": False},
         "values": {"type": "string", "optional": False}}
    v1 = parse_schema(schema(1, {"field": "attrs", **m}))
    v2 = parse_schema(schema(2, {"field": "attrs", **m}, {"field": "c", "type": "string", "optional": True}))
    from reference_impl.connect_data import Struct

    value = Struct(v1, {"attrs": as_hashmap({"channel": "web", "note": "x"}, "string", 2)})
    assert list(value.get("attrs")) == ["channel", "note"]
    assert list(project(v1, value, v2).get("attrs")) == ["note", "channel"]


def _java_order(keys: list, hashes: dict) -> list:
    """A `new HashMap<>()` filled with `keys` in order, as it iterates: the final table (16
    buckets, doubled while it holds more than 3/4) read bucket by bucket, each bucket in the order
    its keys were put (a resize splits a bucket keeping that order)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    return sorted(keys, key=lambda k: (hashes[k] ^ (hashes[k] >> 16)) & (capacity - 1))  # a stable sort


def test_R14_7_a_projected_map_of_more_than_12_int_keys_is_a_new_hashmap_of_32_buckets_filled_in_source_order():
    """projectMap: `new HashMap<>()`, put in the source map's entrySet order; 14 entries take it
    to 32 buckets. 65, 33 and 1 share bucket 1 and keep the source's order; Long.hashCode of a
    widened key (value ^ value >>> 32) is the int's own for these."""
    from reference_impl.connect_data import Struct

    source_order = [65, 33, 1, 40, 8, 31, 30, 17, 2, 99, 64, 0, 5, 12]
    m = {"type": "map", "optional": False, "keys": {"type": "int32", "optional": False},
         "values": {"type": "string", "optional": False}}
    v1 = parse_schema(schema(1, {"field": "codes", **m}))
    v2 = parse_schema(schema(2, {"field": "codes", **m, "keys": {"type": "int64", "optional": False}}))
    value = Struct(v1, {"codes": {k: str(k) for k in source_order}})  # the model holds a map in Java's order
    projected = project(v1, value, v2).get("codes")
    assert list(projected) == _java_order(source_order, {k: k for k in source_order})
    assert list(projected)[:5] == [64, 0, 65, 33, 1]  # 64 before 0: the source put it first
    assert projected[65] == "65"


def test_R14_7_a_projected_map_of_string_keys_follows_string_hashcode():
    from reference_impl.connect_data import Struct
    from reference_impl.javamap import string_hash

    source_order = [f"key{i}" for i in range(13, 0, -1)] + ["channel", "note"]
    m = {"type": "map", "optional": False, "keys": {"type": "string", "optional": False},
         "values": {"type": "int32", "optional": False}}
    v1 = parse_schema(schema(1, {"field": "attrs", **m}))
    v2 = parse_schema(schema(2, {"field": "attrs", **m, "values": {"type": "int64", "optional": False}}))
    value = Struct(v1, {"attrs": {k: i for i, k in enumerate(source_order)}})
    projected = project(v1, value, v2).get("attrs")
    assert list(projected) == _java_order(source_order, {k: string_hash(k) for k in source_order})
    assert string_hash("note") == 3387378  # "note".hashCode() in Java


def test_R14_7_a_float32_widened_to_float64_is_the_floats_exact_double():
    """projectPrimitive: Float.doubleValue(); JsonConverter read 0.001 into a Float (0.001f), so
    the projected double is 0.0010000000474974513, not 0.001 (thorough --seed 2, generated-602,
    orders-0@20 under FULL, AvroFormat). A Long becomes a float in one rounding."""
    from reference_impl.connect_data import Struct

    v1 = parse_schema(schema(1, {"field": "f", "type": "float", "optional": False},
                             {"field": "n", "type": "int64", "optional": False}))
    v2 = parse_schema(schema(2, {"field": "f", "type": "double", "optional": False},
                             {"field": "n", "type": "float", "optional": False}))
    out = project(v1, Struct(v1, {"f": 0.001, "n": 2**60 + 2**36 + 1}), v2)
    assert out.get("f") == 0.0010000000474974513
    assert out.get("n") == float(2**60 + 2**37)  # through a double it would be 2**60
