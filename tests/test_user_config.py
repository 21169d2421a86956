"""A user's own connector config read one way on every target (conformance.playing.user_config), and
runs that tested nothing (conformance.judging.untested): the example configs under
examples/user-configs each give objects and verdicts on them, or one exit-4 refusal saying what
to change; never a pass over zero objects."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conformance.catalog.named import ALL_NAMED
from conformance.playing.runner import run_scenario
from conformance.playing.stack_sharing import on_shared_stack
from conformance.inputs.scenario import ScenarioError
from conformance.playing.session import prepare
from conformance.playing.user_config import fit, refusal, topic_mapping, with_fields
from reference_impl.config import load_config_text
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

CONFIGS = Path(__file__).resolve().parent.parent / "examples" / "user-configs"
# a named scenario whose point every config keeps (a retriable S3 error): never not applicable
SCENARIO = "retriable-503-on-upload"
TIME_SCENARIO = "rotate-interval-table"


def _config(name: str) -> dict[str, str]:
    return load_config_text((CONFIGS / f"{name}.json").read_text())[1]


def _run(tmp_path: Path, name: str, target: str = "pysink", *extra: str, scenario: str = SCENARIO
         ) -> tuple[int, list[dict]]:
    out = tmp_path / name
    code = main(["run", "--target", target, "--connector-config", str(CONFIGS / f"{name}.json"), "--scenario", scenario,
                 "--examples", "2", "--seed", "5", "--no-preflight", "--no-save-failures", "--failures-dir",
                 str(tmp_path / "failures"), "--out", str(out), *extra])
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {"results": []}
    return code, doc["results"]


@pytest.mark.parametrize("name", ["default-topics-orders", "timebased-dt-seoul", "field-dt", "parquet-json-schemas"])
def test_user_config_runs_write_objects_judged_on_pysink(tmp_path, name):
    code, results = _run(tmp_path, name)
    assert code == Exit.OK, [(r["scenario"], r["status"], r.get("untested")) for r in results]
    assert len(results) == 3
    for r in results:
        assert r["objects"], f"{r['scenario']}: no object written"
        assert r["status"] == "pass" and r["untested"] is None
        topic = _config(name)["topics"]
        assert all(o["key"].startswith(f"topics/{topic}/") for o in r["objects"]), r["objects"][:2]
        assert {v["status"] for v in r["verdicts"] if v["claimed"]} == {"pass"}


def test_records_go_to_the_configs_topic_and_the_report_says_how(tmp_path):
    _, results = _run(tmp_path, "default-topics-orders")
    named = next(r for r in results if r["scenario"] == SCENARIO)
    assert "scenario topic events → orders" in named["notes"]
    assert len(named["objects"]) == 15  # flush.size=1: one object per record, all on orders


def test_R6_5_records_carry_the_field_record_field_reads(tmp_path):
    _, results = _run(tmp_path, "timebased-dt-seoul")
    named = next(r for r in results if r["scenario"] == SCENARIO)
    # 2024-01-31T15:00Z is 2024-02-01 in Seoul: the day comes from `dt`, read in the config's zone
    assert {o["key"].rsplit("/", 1)[0] for o in named["objects"]} == {"topics/events/year=2024/month=02/day=01"}


def test_R6_2_field_partitioner_on_dt_partitions_by_the_field(tmp_path):
    _, results = _run(tmp_path, "field-dt")
    named = next(r for r in results if r["scenario"] == SCENARIO)
    assert {o["key"].split("/")[2] for o in named["objects"]} == {"dt=2024-01-31"}


def test_parquet_with_schemas_writes_objects_through_the_model(tmp_path):
    # the model applies no fault: a scenario without one (and about Parquet, so it applies)
    code, results = _run(tmp_path, "parquet-json-schemas", "model@12.1.9", scenario="parquet-connect-types")
    assert code == Exit.OK and results
    assert all(r["objects"] and r["objects"][0]["key"].endswith(".parquet") for r in results)


@pytest.mark.parametrize("name, says", [
    ("parquet-json-no-schemas", "set value.converter=org.apache.kafka.connect.json.JsonConverter and "
                                "value.converter.schemas.enable=true"),
    ("debezium-transforms", "remove `transforms` and the `transforms.*` properties"),
])
def test_what_sinkcheck_cannot_honour_is_one_exit_4_refusal(tmp_path, capsys, name, says):
    code, results = _run(tmp_path, name, "pysink", "--examples", "0")
    err = capsys.readouterr().err
    assert code == Exit.USAGE and not results
    assert says in err and err.count("sinkcheck run:") == 1 and "Traceback" not in err


def test_model_run_gate_and_replay_refuse_the_same_transforms(tmp_path, capsys):
    cfg = CONFIGS / "debezium-transforms.json"
    records = Path(__file__).resolve().parent.parent / "examples" / "records.jsonl"
    assert main(["model", "--config", str(cfg), "--records", str(records), "--out", str(tmp_path / "m.json")]) == Exit.USAGE
    assert main(["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--connector-config", str(cfg),
                 "--examples", "0", "--out", str(tmp_path / "g")]) == Exit.USAGE
    sc = dataclasses.replace(ALL_NAMED[SCENARIO](), connector=_config("debezium-transforms"))
    sc.save(tmp_path / "sc.json")
    assert main(["replay", str(tmp_path / "sc.json"), "--target", "pysink", "--out", str(tmp_path / "r")]) == Exit.USAGE
    err = capsys.readouterr().err
    assert err.count("io.debezium.transforms.ExtractNewRecordState") == 3


def test_refusal_names_the_property_and_what_to_do():
    assert "value.converter=io.confluent.connect.avro.AvroConverter" in refusal(
        {"value.converter": "io.confluent.connect.avro.AvroConverter"})
    assert "partitioner.class=com.acme.RegionPartitioner" in refusal({"partitioner.class": "com.acme.RegionPartitioner"})
    assert "reads partition.field.name from a Struct" in refusal({
        "partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner", "partition.field.name": "dt",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"})
    assert refusal(_config("field-dt")) is None and refusal(_config("timebased-dt-seoul")) is None


def test_topic_mapping_onto_topics_and_topics_regex():
    assert topic_mapping(["a", "b", "c"], {"topics": "x,y"}) == {"a": "x", "b": "y", "c": "x"}
    assert topic_mapping(["orders"], {"topics": "orders"}) == {"orders": "orders"}
    m = topic_mapping(["events"], {"topics.regex": "orders-.*"})
    assert m["events"].startswith("orders-")
    assert topic_mapping(["events"], {"topics.regex": r"cdc\.inventory\.orders"}) == {"events": "cdc.inventory.orders"}
    assert topic_mapping(["events"], {}) == {"events": "events"}


def test_tags_on_a_shared_stack_follow_the_mapped_topics_and_the_regex():
    sc = prepare(ALL_NAMED[SCENARIO](), connector={**ALL_NAMED[SCENARIO]().connector, "topics.regex": "orders-.*"},
                 version=None, seed=None)
    tagged = on_shared_stack(sc, "-r7")
    import re

    regex = re.compile(tagged.connector["topics.regex"])
    assert all(regex.fullmatch(r["topic"]) for r in tagged.records)
    assert set(tagged.topics) == {r["topic"] for r in tagged.records}
    assert not regex.fullmatch(next(iter(sc.topics)))  # the untagged name is another run's


def test_struct_fields_nested_and_several():
    cfg = {"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner",
           "partition.field.name": "meta.region,dt", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
           "value.converter.schemas.enable": "true", "key.converter": "org.apache.kafka.connect.storage.StringConverter"}
    [r] = with_fields([{"topic": "t", "partition": 0, "timestamp": 1706713200000, "key": "k",
                        "value": {"schema": None, "payload": {"seq": 3, "ts": 1}}}], cfg)
    assert r["value"]["schema"]["type"] == "struct"
    assert r["value"]["payload"]["meta"] == {"region": "2024-01-31"} and r["value"]["payload"]["seq"] == 3
    names = [f["field"] for f in r["value"]["schema"]["fields"]]
    assert names == ["seq", "ts", "meta", "dt"]


def test_fit_is_idempotent():
    cfg = _config("timebased-dt-seoul")
    once = prepare(ALL_NAMED[SCENARIO](), connector=cfg, version=None, seed=None)
    assert fit(once, cfg) == once


def test_records_to_topics_the_config_does_not_read_are_refused(tmp_path):
    sc = dataclasses.replace(ALL_NAMED[SCENARIO](), connector={**ALL_NAMED[SCENARIO]().connector, "topics": "orders"})
    with pytest.raises(ScenarioError, match="its records go to events, which its connector config does not read"):
        run_scenario(sc, "pysink", tmp_path)


def test_a_run_whose_task_dies_at_its_first_record_is_unknown_not_pass(tmp_path):
    """The records lack the field RecordField reads (played as they are, not fitted): the task
    dies at offset 0, nothing is written, and every checker would pass on the empty bucket."""
    base = ALL_NAMED[TIME_SCENARIO]()
    sc = dataclasses.replace(base, connector={**base.connector, "timestamp.extractor": "RecordField",
                                              "timestamp.field": "dt"})
    r = run_scenario(sc, "pysink", tmp_path)
    assert all(v.status == "pass" for v in r.verdicts if v.claimed)
    assert r.status == "unknown" and "the task died at offset 0" in r.untested


def test_the_summary_counts_runs_that_tested_nothing_and_a_dominated_run_says_so(tmp_path, capsys):
    from reports.redact import Redactor
    from sinkcheck.terminal import Terminal, exit_for, print_outcome

    base = ALL_NAMED[TIME_SCENARIO]()
    dead = dataclasses.replace(base, connector={**base.connector, "timestamp.extractor": "RecordField",
                                                "timestamp.field": "dt"})
    results = [run_scenario(dead, "pysink", tmp_path / "a"), run_scenario(dead, "pysink", tmp_path / "b"),
               run_scenario(base, "pysink", tmp_path / "c")]
    print_outcome(Terminal(Redactor.from_configs(None)), results, [], {}, 0, "ci", 1.0)
    out = capsys.readouterr().out
    assert "1 passed, 0 failed, 2 unknown (2 tested nothing: the task died at offset 0" in out
    assert "most runs (2 of 3) tested nothing" in out
    assert exit_for(results, []) == Exit.UNKNOWN


def test_the_pytest_plugin_refuses_the_same_config_once(tmp_path):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "conformance.suite",
                        "--target=pysink", f"--connector-config={CONFIGS / 'debezium-transforms.json'}", "-k", SCENARIO],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert p.returncode == 4, p.stdout[-2000:] + p.stderr[-2000:]
    assert (p.stdout + p.stderr).count("io.debezium.transforms.ExtractNewRecordState") == 1


TOMBSTONE_FILTER = {"transforms": "dropTombstones",
                    "transforms.dropTombstones.type": "org.apache.kafka.connect.transforms.Filter",
                    "transforms.dropTombstones.predicate": "isTombstone",
                    "predicates": "isTombstone",
                    "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone"}


def test_a_tombstone_filter_is_honoured_where_no_file_model_applies_and_refused_on_the_s3_sink():
    """The workaround of iceberg-tombstone-before-table (Kafka's Filter under RecordIsTombstone):
    Iceberg's and Camel's checkers never ask a null value to be written, so dropping tombstones
    before the sink changes nothing they judge; the S3 sink's model would write or fail on them."""
    iceberg = {**dict(ALL_NAMED["iceberg-tombstone-first"]().connector), **TOMBSTONE_FILTER}
    assert refusal(iceberg, s3_sink=False) is None
    assert "transforms=dropTombstones" in refusal(iceberg, s3_sink=True)
    negated = {**iceberg, "transforms.dropTombstones.negate": "true"}
    assert "transforms=dropTombstones" in refusal(negated, s3_sink=False)
    other = {**iceberg, "predicates.isTombstone.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"}
    assert refusal(other, s3_sink=False) is not None


# --- a named scenario kept to its point under the user's config (conformance.playing.adapt) ----------
def test_R12_1_tombstones_the_users_config_stops_at_are_left_out_faults_keeping_their_place():
    """tombstones-amid-interval-rotation writes its tombstones (behavior.on.null.values=write);
    under a config that fails on them (the default) the task would stop at the first, so the
    rotation it is about would go untested: they are left out, and the notes say so."""
    sc = ALL_NAMED["tombstones-amid-interval-rotation"]()
    nulls = sum(1 for r in sc.records if r["value"] is None)
    assert nulls == 3
    users = _config("avro-registry-scheduled")
    got = prepare(sc, connector=users, version=None, seed=None)
    assert all(r["value"] is not None for r in got.records)
    assert len(got.records) >= len(sc.records) - nulls
    assert "3 tombstone(s) left out (behavior.on.null.values=fail" in got.notes
    # a config that writes them keeps every one
    kept = prepare(sc, connector={**sc.connector, "topics": "events"}, version=None, seed=None)
    assert sum(1 for r in kept.records if r["value"] is None) == nulls


def test_R12_1_a_scenario_about_the_refusal_keeps_its_tombstones():
    # null-value-stops-the-task's own config fails on its tombstone: that is its point
    sc = ALL_NAMED["null-value-stops-the-task"]()
    got = prepare(sc, connector={**sc.connector, "flush.size": "1"}, version=None, seed=None)
    assert sum(1 for r in got.records if r["value"] is None) == 1 and "left out" not in got.notes


def test_R7_1_a_fault_on_a_part_no_file_reaches_goes_on_part_one_with_its_wait():
    """multipart-crash-in-part-four hangs part 4 of a 4-part upload (flush.size 90 of 200 KiB,
    5 MiB parts); under flush.size 1 every file is one part, so the rule (and the wait-fired and
    release naming it) move to part 1, which every upload has (R7.1)."""
    sc = ALL_NAMED["multipart-crash-in-part-four"]()
    got = prepare(sc, connector=_config("avro-registry-scheduled"), version=None, seed=None)
    s3 = [f for f in got.faults if f.kind == "s3"]
    assert [f.params["part_number"] for f in s3] == [1]
    name = s3[0].params["name"]
    assert name == "part 1 of the 4th file"
    assert [f.params["rule"] for f in got.faults if f.kind == "wait-fired"] == [name]
    assert [f.after for f in got.faults] == [f.after for f in sc.faults]
    assert "fault on part 4 goes on part 1 (flush.size=1, s3.part.size=26214400" in got.notes
    # the scenario's own sizes make four parts: nothing moves
    same = prepare(sc, connector={**sc.connector}, version=None, seed=None)
    assert same.faults == sc.faults


def test_the_report_says_which_registry_a_users_registry_url_was_answered_by(tmp_path):
    """An AvroConverter config's schema.registry.url is never contacted: the environment of
    results.json (and the report's) names the registry that answered instead."""
    code, results = _run(tmp_path, "avro-registry-scheduled", "pysink", "--examples", "0")
    assert code == Exit.OK and results and all(r["status"] == "pass" for r in results)
    env = json.loads((tmp_path / "avro-registry-scheduled" / "results.json").read_text())["environment"]
    assert "in-memory Schema Registry" in env["schema registry"]
    assert "schema.registry.url=https://schema-registry.internal.example:8081 is not contacted" in env["schema registry"]
    assert "schema registry" in (tmp_path / "avro-registry-scheduled" / "report.html").read_text()


def test_R12_1_a_generated_stream_under_a_record_field_config_commits_before_its_fatal_tombstone():
    """Generated streams are judged with the fields the user's config reads (timestamp.field=dt
    here, filled in as the run fills them): judged without them, the records before a tombstone
    commit nothing in the model (RecordField finds no `dt`), the tombstone came in the same put
    as them and the run tested nothing (--profile ci on timebased-dt-seoul: 22 of 95 runs)."""
    from hypothesis import HealthCheck, Phase, find, settings

    from conformance.generators.strategies import scenarios
    from conformance.generators.testable import fatal_after_a_commit

    users = _config("timebased-dt-seoul")
    drawn = find(scenarios(max_records=6, connector=users, with_faults=False), lambda s: len(s.records) >= 3,
                 settings=settings(database=None, derandomize=True, phases=[Phase.generate],  # no shrinking: 0.3 s
                                   suppress_health_check=list(HealthCheck)))
    assert all("dt" in r["value"] for r in drawn.records if r["value"] is not None), drawn.steps()
    stream = [{"topic": "orders", "partition": 0, "timestamp": 1706713200000 + i * 1000, "key": f"k{i}",
               "value": None if i == 3 else {"seq": i}, "headers": []} for i in range(6)]
    assert fatal_after_a_commit(users, stream) == (stream, None)  # without `dt`: nothing commits
    played, fatal_put = fatal_after_a_commit(users, with_fields(stream, users))
    assert fatal_put == 3 and played[3]["value"] is None


def test_R11_3_a_sink_writing_only_the_first_header_fails_contents_under_the_default_avro_headers_format(tmp_path):
    """keys-headers-stored.json sets no headers.format.class: the headers objects are AvroFormat.
    The faulty variant dropped headers only from JsonFormat's line and wrote every header into
    the Avro row, so it passed; now its Avro rows lack them and `contents` says so."""
    args = ["run", "--connector-config", str(CONFIGS / "keys-headers-stored.json"), "--scenario",
            "naming-options-keys-headers", "--examples", "0", "--seed", "5", "--no-preflight", "--no-save-failures",
            "--failures-dir", str(tmp_path / "failures")]
    assert main([*args, "--target", "pysink", "--out", str(tmp_path / "ok")]) == Exit.OK
    assert main([*args, "--target", "pysink:headers-first-only", "--out", str(tmp_path / "bad")]) == 1
    (result,) = json.loads((tmp_path / "bad" / "results.json").read_text())["results"]
    failed = {v["property"] for v in result["verdicts"] if v["claimed"] and v["status"] == "fail"}
    assert failed == {"contents"}, failed
    assert any(".headers.avro" in k for o in result["objects"] for k in [o["key"]])
