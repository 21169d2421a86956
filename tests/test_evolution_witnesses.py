"""A wrong schema evolution is named by the checker it breaks, with the record and both schemas
(R14): each faulty variant of the Python sink on a named scenario of its kind."""
from __future__ import annotations

import pytest

from conformance.catalog.named import KILL_SCENARIOS
from conformance.playing.runner import run_scenario


@pytest.mark.parametrize("variant, scenario, prop, anomaly", [
    ("no-rotation-on-incompatible", "evolution-nested-type-json", "rotation", "missed-schema-rotation"),
    ("enum-change-incompatible", "evolution-backward-avro", "rotation", "needless-schema-rotation"),
    ("projection-drops-default", "evolution-nested-type-json", "contents", "wrong-projection"),
])
def test_R14_a_wrong_evolution_is_named_with_both_schemas(variant, scenario, prop, anomaly, tmp_path):
    res = run_scenario(KILL_SCENARIOS[scenario](), f"pysink:{variant}", tmp_path)
    named = [w for v in res.failed() if v.property == prop for w in v.witnesses if w.anomaly == anomaly]
    assert named, [(v.property, [w.anomaly for w in v.witnesses]) for v in res.failed()]
    assert {"file schema", "record schema"} <= set(named[0].expected)
    assert named[0].offsets


def test_R14_the_correct_sink_gives_none_of_them(tmp_path):
    for name in ("evolution-nested-type-json", "evolution-backward-avro"):
        res = run_scenario(KILL_SCENARIOS[name](), "pysink", tmp_path / name)
        assert res.status == "pass", [v.to_json() for v in res.failed()]


def test_R14_7_a_projected_map_out_of_projectMaps_order_is_a_contents_failure_at_that_record(tmp_path):
    """FORWARD projects a newer AvroConverter record onto its older file: its map goes through
    projectMap's new HashMap, whose order JsonFormat writes; a sink that keeps the converter's
    order writes the same entries in another order (record 2: {note, channel}, not {channel, note})."""
    res = run_scenario(KILL_SCENARIOS["evolution-union-nested-forward-avro"](), "pysink:projected-map-keeps-order", tmp_path)
    (contents,) = [v for v in res.failed() if v.property == "contents"]
    assert {w.anomaly for w in contents.witnesses} == {"different-bytes"}
    assert all("attributes" in str(w.observed) for w in contents.witnesses)
