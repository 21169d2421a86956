"""Not applicable is not unknown (issue 38): a named scenario whose point cannot survive the
user's connector config is decided before the run (conformance.playing.applicable), never run,
named with a one-line reason, and kept apart from unknown in results.json, the terminal, JUnit
and the HTML report; the scenarios about several tasks keep their own tasks.max
(conformance.playing.adapt). Model and pysink only: each test takes seconds."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.catalog.gate import GATE_SCENARIOS
from conformance.catalog.named import ALL_NAMED, CONNECTOR_OWN, SUITE
from conformance.catalog.points import POINTS
from conformance.judging.verdicts import NotApplicable
from conformance.playing.applicable import aspect_check
from conformance.playing.session import planned
from reference_impl.config import load_config_text
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

CONFIGS = Path(__file__).resolve().parent.parent / "examples" / "user-configs"
HOURLY = "io.confluent.connect.storage.partitioner.HourlyPartitioner"


def _config(name: str) -> dict[str, str]:
    return load_config_text((CONFIGS / f"{name}.json").read_text())[1]


def _plan(name: str, connector: dict[str, str]) -> object:
    return planned(ALL_NAMED[name](), "pysink", connector=connector, version=None, seed=None)


def _reason(name: str, connector: dict[str, str]) -> str | None:
    p = _plan(name, connector)
    return p.reason if isinstance(p, NotApplicable) else None


def test_every_named_scenario_of_the_s3_sink_says_what_it_is_about():
    """A scenario added without a line in conformance.catalog.points would play under any config
    and pass on a plain stream: each must say what it needs, or () for none."""
    s3_sink = {**SUITE, **CONNECTOR_OWN["confluent"], **CONNECTOR_OWN["pysink"], **CONNECTOR_OWN["camel"], **GATE_SCENARIOS}
    assert sorted(set(s3_sink) - set(POINTS)) == []
    for aspects in POINTS.values():
        for a in aspects:
            assert callable(aspect_check(a))


def test_the_issues_config_names_each_inapplicable_scenario_with_its_reason():
    """DefaultPartitioner, JsonConverter without schemas, flush.size 1, rotate.schedule.interval.ms,
    Asia/Seoul (issue 38)."""
    users = _config("default-topics-orders")
    assert _reason("multipart-crash-in-part-four", users) == (
        "flush.size=1, s3.part.size=26214400: no file has more than one part, so no upload has parts done while "
        "another is in flight")
    assert _reason("tombstones-amid-interval-rotation", users).startswith(
        "behavior.on.null.values=fail: the task stops at the first tombstone (R12.1)")
    assert _reason("dst-hourly-berlin", users).startswith("partitioner.class=DefaultPartitioner: no time-based")
    assert _reason("avro-converter-to-avro", users).startswith("value.converter=JsonConverter")
    assert _reason("evolution-backward-avro", users).startswith("value.converter.schemas.enable=false")
    # points every config keeps, and the scheduled rotation this config has
    for name in ("crash-mid-stream", "zombie-task", "retriable-503-on-upload", "two-tasks-restart-task-1",
                 "rotate-schedule-table", "schedule-idle-burst"):
        assert _reason(name, users) is None, name


def test_R6_3_a_dst_scenario_applies_only_where_the_configs_zone_changes_its_clock_among_the_records():
    own = ALL_NAMED["dst-hourly-berlin"]().connector
    berlin = {**_config("default-topics-orders"), "partitioner.class": HOURLY, "timestamp.extractor": "Record",
              "rotate.interval.ms": "600000", "timezone": "Europe/Berlin", "locale": "de-DE"}
    assert _reason("dst-hourly-berlin", berlin) is None
    assert _reason("dst-hourly-berlin", {**own, "topics": "events"}) is None
    seoul = {**berlin, "timezone": "Asia/Seoul", "locale": "ko_KR"}
    why = _reason("dst-hourly-berlin", seoul)
    assert why == ("timezone=Asia/Seoul: one UTC offset from 2024-10-27T00:00Z to 2024-10-27T03:00Z (the times the "
                   "config's extractor reads), so no clock change to cross")
    # Lord Howe's half-hour change is on another day: not among Berlin's records
    assert _reason("dst-hourly-berlin", {**berlin, "timezone": "Australia/Lord_Howe"}).startswith(
        "timezone=Australia/Lord_Howe: one UTC offset")


def test_R6_3_an_edge_scenario_needs_records_on_both_sides_of_one_of_the_configs_buckets():
    """local-midnight-daily's records run from 23:50 to 00:20 in Kolkata: under a daily
    partitioner in Seoul they are all 03:20-03:50 of one day, so no midnight is crossed; and
    dst-time-based-new-york's times are in its field `at`, which a config reading `dt` never sees."""
    seoul = _config("timebased-dt-seoul")
    assert _reason("local-midnight-daily", seoul) == (
        "partition.duration.ms=86400000, timezone=Asia/Seoul: every record falls in one time bucket "
        "(2024-05-01T18:20Z to 2024-05-01T18:50Z), so no bucket edge is crossed")
    assert _reason("local-midnight-daily", {**seoul, "timezone": "Asia/Kolkata"}) is None
    assert _reason("dst-time-based-new-york", seoul) == (
        "timestamp.field=dt: the times the scenario is about are in its field at, which this config does not read")
    # a Record extractor scenario under RecordField on `dt`: the field is filled from the records' timestamps
    assert _reason("late-records-at-hour-edges", {**seoul, "partition.duration.ms": "3600000",
                                                  "path.format": "'dt'=YYYY-MM-dd/'hour'=HH"}) is None


def test_R11_keys_and_headers_scenarios_apply_where_the_config_stores_them():
    users = _config("default-topics-orders")
    assert _reason("zombie-with-keys", users) == "store.kafka.keys=false: no keys object beside a file"
    keys = {**users, "store.kafka.keys": "true", "keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
    assert _reason("zombie-with-keys", keys) is None
    assert _reason("naming-options-keys-headers", keys) is None


def test_errors_tolerance_and_schema_compatibility_are_the_point_of_their_scenarios():
    cfg = ALL_NAMED["null-value-tolerated"]().connector
    assert _reason("null-value-tolerated", cfg) is None
    assert _reason("null-value-tolerated", {k: v for k, v in cfg.items() if k != "errors.tolerance"}) == (
        "errors.tolerance=(not set): the scenario is about errors.tolerance=all")
    evo = ALL_NAMED["evolution-lowercase-backward-json"]().connector
    assert _reason("evolution-lowercase-backward-json", {**evo, "schema.compatibility": "BACKWARD"}) == (
        "schema.compatibility=BACKWARD: the scenario is about schema.compatibility=backward")


def test_R1_7_a_scenario_about_two_tasks_keeps_its_tasks_max_over_the_users_one():
    """two-tasks-restart-task-1 restarts task 1: under the user's tasks.max=1 Connect answers
    404 Unknown task (issue 38, on 12.1.9). tasks.max decides which task writes a partition,
    not what is written: the scenario keeps its 2, the notes say so."""
    users = _config("default-topics-orders")
    got = _plan("two-tasks-restart-task-1", users)
    assert got.connector["tasks.max"] == "2"
    assert "tasks.max=2 kept from the scenario, which is about 2 tasks (the given config's tasks.max=1" in got.notes
    assert [f.params.get("task") for f in got.faults if f.kind == "restart-task"] == [1]
    assert _plan("worker-joins-then-leaves", users).connector["tasks.max"] == "2"
    # the assignor changes what the connector does (#950 under the cooperative one): not imposed on
    # a config that keeps the eager default (12.1.9 under the issue's config failed liveness on it)
    assert _reason("cooperative-worker-joins-then-leaves", users) == (
        "consumer.override.partition.assignment.strategy=(not set): the scenario is about "
        "consumer.override.partition.assignment.strategy=org.apache.kafka.clients.consumer.CooperativeStickyAssignor")
    # a user's larger tasks.max stands
    assert _plan("two-tasks-restart-task-1", {**users, "tasks.max": "4"}).connector["tasks.max"] == "4"


def test_C3_a_config_update_to_what_the_config_already_has_changes_flush_size_instead():
    users = {**_config("default-topics-orders"), "flush.size": "3"}
    got = _plan("config-update-mid-stream", users)
    assert [f.params["config"] for f in got.faults if f.kind == "update-config"] == [{"flush.size": "4"}]
    assert "the update to flush.size=3 changes nothing there, so it sets flush.size=4" in got.notes
    other = _plan("config-update-mid-stream", _config("default-topics-orders"))
    assert [f.params["config"] for f in other.faults if f.kind == "update-config"] == [{"flush.size": "3"}]


def _rules(plan: object) -> list[tuple[str, int]]:
    return [(f.params["operation"], int(f.params.get("nth", 1))) for f in plan.faults if f.kind == "s3"]


def test_R7_4_an_answer_the_task_dies_on_takes_a_request_after_the_users_first_file():
    """Issue 38: under keys-headers-stored (flush.size=4) the S3 scenarios armed after their own
    first file (flush.size=3) took the user's first file's request, the task died before any
    object, and the runs tested nothing. Such an answer takes the second request (the first
    upload lands), where the model counts one; else the scenario is not applicable; an answer
    every client retries, or one armed where a file has already landed, stays where it was."""
    users = _config("keys-headers-stored")
    for name, op in (("s3-no-such-upload-on-complete", "CompleteMultipartUpload"),
                     ("s3-access-denied-on-complete", "CompleteMultipartUpload"),
                     ("s3-no-such-upload-on-part", "UploadPart"), ("s3-signature-mismatch-on-part", "UploadPart")):
        got = _plan(name, users)
        assert _rules(got) == [(op, 2)], name
        assert f"on {op} answers request 2 after it is armed, not 1 (flush.size=4" in got.notes
    assert _rules(_plan("s3-429-on-part", users)) == [("UploadPart", 1)]  # retried: no death to put off
    assert _rules(_plan("s3-no-such-upload-on-part", _config("parquet-json-schemas"))) == [("UploadPart", 1)]
    # flush.size=5, nothing beside a file: one file among the 9 records, no second upload to answer
    plain = {**users, "flush.size": "5", "store.kafka.keys": "false", "store.kafka.headers": "false"}
    assert _reason("s3-no-such-upload-on-complete", plain) == (
        "flush.size=5: the 404 NoSuchUpload on CompleteMultipartUpload would answer the first file's upload, and "
        "no later one comes among the 9 records, so the task dies before any object (R7.4)")


def _cli(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    code = main(["run", "--target", "pysink", "--no-preflight", "--no-save-failures", "--failures-dir",
                 str(tmp_path / "failures"), "--seed", "3", "--out", str(out), *args])
    doc = json.loads((out / "results.json").read_text()) if (out / "results.json").exists() else {}
    return code, doc


def test_not_applicable_is_kept_apart_from_unknown_in_every_report_and_the_exit_is_over_what_applied(tmp_path, capsys):
    code, doc = _cli(tmp_path, "--connector-config", str(CONFIGS / "default-topics-orders.json"), "--examples", "1",
                     "--scenario", "dst-hourly-berlin", "--scenario", "crash-mid-stream",
                     "--scenario", "tombstones-amid-interval-rotation")
    out = capsys.readouterr().out
    assert code == Exit.OK, out
    assert "N/A dst-hourly-berlin on pysink: partitioner.class=DefaultPartitioner: no time-based partitioner" in out
    assert "PASS: 2 runs: 2 passed, 0 failed, 0 unknown, 0 errors, 2 not applicable" in out
    assert doc["status"] == "pass" and doc["counts"] == {"pass": 2, "fail": 0, "unknown": 0, "n/a": 2}
    assert {n["scenario"] for n in doc["not_applicable"]} == {"dst-hourly-berlin", "tombstones-amid-interval-rotation"}
    assert {r["scenario"] for r in doc["results"]} == {"crash-mid-stream", "generated-000"}
    cell = doc["matrix"]["no-loss"]["pysink"]
    assert cell["n/a"] == 2 and cell["pass"] == 2 and cell["unknown"] == 0
    skipped = [s.get("message") for s in ET.parse(tmp_path / "out" / "junit.xml").iter("skipped")
               if s.get("type") == "not-applicable"]
    assert skipped and all(m.startswith("not applicable: ") for m in skipped)
    assert any("behavior.on.null.values=fail" in m for m in skipped)
    html = (tmp_path / "out" / "report.html").read_text()
    assert 'data-status-overall="pass"' in html and "2 not applicable under the given config" in html
    assert 'id="not-applicable-table"' in html and "2 n/a" in html


def test_a_run_of_nothing_but_not_applicable_scenarios_is_never_a_pass(tmp_path, capsys):
    code, doc = _cli(tmp_path, "--connector-config", str(CONFIGS / "default-topics-orders.json"), "--examples", "0",
                     "--scenario", "dst-hourly-berlin")
    out = capsys.readouterr().out
    assert code == Exit.NOTHING_SELECTED
    assert "NOTHING TESTED: 0 runs" in out and "nothing was tested" in out
    assert doc["status"] == "nothing" and doc["counts"]["n/a"] == 1


def test_without_a_users_config_every_named_scenario_applies_to_the_newest_release():
    for name, scenario in ALL_NAMED.items():
        assert not isinstance(planned(scenario(), "pysink", connector=None, version=None, seed=None),
                              NotApplicable), name


@pytest.mark.parametrize("version, name, why", [
    ("10.6.18", "error-inside-200-with-keys", "SDK v1 client throws it at once (R7.4, #858)"),
    ("10.6.18", "field-partition-unsorted", "partition.field.name origin.zone is one top-level field's name"),
    ("11.0.7", "field-partition-unsorted", "before 12.0.0 (R6.2)"),
])
def test_a_named_scenario_whose_task_the_release_stops_before_any_object_is_not_applicable_there(version, name, why):
    # on 10.6.18 these ran and landed nothing: a run that tested nothing, reported unknown
    verdict = planned(ALL_NAMED[name](), "kafka-connect:confluent", connector=None, version=version, seed=None)
    assert isinstance(verdict, NotApplicable) and why in verdict.reason
    assert verdict.reason.startswith(f"connector version {version}:")
    assert not isinstance(planned(ALL_NAMED[name](), "kafka-connect:confluent", connector=None, version="12.1.9",
                                  seed=None), NotApplicable)
    # `run --target kafka-connect:confluent@V` gives no --connector-version: the spec names the release
    by_spec = planned(ALL_NAMED[name](), f"kafka-connect:confluent@{version}", connector=None, version=None, seed=None)
    assert isinstance(by_spec, NotApplicable) and why in by_spec.reason
    assert not isinstance(planned(ALL_NAMED[name](), "kafka-connect:aiven@3.4.2", connector=None, version=None,
                                  seed=None), NotApplicable)


@pytest.mark.parametrize("name", ["timebased-dt-seoul", "field-dt", "parquet-json-schemas"])
def test_each_example_config_leaves_some_named_scenarios_to_run(name):
    users = _config(name)
    # (the multipart stories' 360 records of 200 KiB take seconds to fit: the issue's config test has them)
    plans = [planned(f(), "pysink", connector=users, version=None, seed=None) for n, f in SUITE.items()
             if not n.startswith("multipart")]
    ran = [p for p in plans if not isinstance(p, NotApplicable)]
    assert len(ran) >= 10
    # one line, the property first
    assert all(re.match(r"[a-z][a-z.]*(=| is not set)", p.reason) and "\n" not in p.reason
               for p in plans if isinstance(p, NotApplicable))


def test_R11_4_records_get_the_headers_and_keys_the_users_config_stores():
    """The named scenarios' records have no headers and text keys: under a config storing
    headers the task died at the first record of every one of them (--profile ci on
    keys-headers-stored.json: 15 named runs tested nothing). They get a plain header; where the
    scenario's own config stores headers too, a record without one is its point and stays."""
    users = _config("keys-headers-stored")
    got = _plan("crash-mid-stream", users)
    assert all(r["headers"] == [["h", str(r["value"]["seq"])]] for r in got.records if r["value"]["seq"] < 22)
    assert "record(s) given a header (store.kafka.headers=true" in got.notes
    nulls = _plan("struct-types-numeric", {**ALL_NAMED["struct-types-numeric"]().connector, "topics": "events"})
    assert "given a header" not in nulls.notes


def test_a_named_scenario_no_producer_could_write_under_the_config_is_not_applicable():
    """evolution-forward-map-json's version 2 under AvroConverter: the registry's BACKWARD check
    answers 409 (a producer's serializer would fail), which used to end `sinkcheck run` with an
    internal error (exit 3) on avro-registry-scheduled.json."""
    why = _reason("evolution-forward-map-json", _config("avro-registry-scheduled"))
    assert why.startswith("value.converter=AvroConverter: no producer could write its records under this config")
    assert "HTTP 409" in why


def test_R8_1_a_412_needs_a_conditional_write_not_only_scheduled_rotation():
    """S3 answers 412 only to a conditional Complete: scheduled rotation on, conditional writes on,
    and neither keys nor headers stored (R8.1). Under a config with scheduled rotation and keys
    stored, a 412 scenario's fault would never fire: not applicable, and the reason says which
    property turns the condition off."""
    scheduled = _config("default-topics-orders")
    assert _reason("s3-412-without-the-object", scheduled) is None
    keys = {**scheduled, "store.kafka.keys": "true", "keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
    assert _reason("s3-412-without-the-object", keys) == (
        "store.kafka.keys or store.kafka.headers is set: CompleteMultipartUpload is not conditional (R8.1), "
        "so S3 never answers it with 412")
    off = {**scheduled, "enable.conditional.writes": "false"}
    assert _reason("s3-412-with-the-object", off).startswith(
        "enable.conditional.writes=false: CompleteMultipartUpload is not conditional")
    unscheduled = {k: v for k, v in scheduled.items() if k != "rotate.schedule.interval.ms"}
    assert _reason("s3-412-without-the-object-head-403", unscheduled).startswith(
        "rotate.schedule.interval.ms is not set: CompleteMultipartUpload is not conditional")
    assert _reason("s3-429-on-part", keys) is None


def test_R8_1_a_412_is_not_played_on_a_sink_whose_uploads_carry_no_condition():
    # Aiven 3.4.2 completes every upload without If-None-Match: S3 never answers it 412 (the four
    # s3-412 scenarios had been played on it, and the HEAD one ended unknown)
    for name in ("s3-412-with-the-object", "s3-412-without-the-object-head-403"):
        verdict = planned(ALL_NAMED[name](), "kafka-connect:aiven@3.4.2", connector=None, version=None, seed=None)
        assert isinstance(verdict, NotApplicable) and "aiven's uploads carry no condition" in verdict.reason
        for spec in ("kafka-connect:confluent@12.1.9", "pysink") + (
                ("kafka-connect:lenses@11.7.2",) if "head" not in name else ()):  # Lenses asks no HEAD
            assert not isinstance(planned(ALL_NAMED[name](), spec, connector=None, version=None, seed=None),
                                  NotApplicable), spec
    assert not isinstance(planned(ALL_NAMED["retriable-503-on-upload"](), "kafka-connect:aiven@3.4.2",
                                  connector=None, version=None, seed=None), NotApplicable)


@pytest.mark.parametrize("spec", ["kafka-connect:camel@4.18.0", "kafka-connect:iceberg"])
def test_R8_1_no_412_is_played_on_camel_or_iceberg_whose_puts_carry_no_condition(spec):
    # Iceberg 1.12.0 and Camel 4.18.0 had been played the three s3-412 scenarios, S3 answering 412 to
    # a PutObject with no condition: a run production cannot have, which killed the task
    kind = spec.split(":")[1].split("@")[0]
    for name in ("s3-412-with-the-object", "s3-412-without-the-object", "s3-412-without-the-object-two-partitions"):
        verdict = planned(ALL_NAMED[name](), spec, connector=None, version=None, seed=None)
        assert isinstance(verdict, NotApplicable) and f"{kind}'s uploads carry no condition" in verdict.reason


def test_a_registry_converters_scenario_is_not_played_on_camel_which_cannot_write_a_struct():
    # real 4.18.0 at ci failed the four avro-converter scenarios (commit-progress, liveness): the
    # task died at the first record, "No body available of type: java.io.InputStream but has type:
    # org.apache.kafka.connect.data.Struct", and no object was written
    for name in ("avro-converter-to-avro", "avro-converter-schema-versions"):
        verdict = planned(ALL_NAMED[name](), "kafka-connect:camel@4.18.0", connector=None, version=None, seed=None)
        assert isinstance(verdict, NotApplicable) and "cannot write the records of a registry converter" in verdict.reason
        assert not isinstance(planned(ALL_NAMED[name](), "kafka-connect:iceberg", connector=None, version=None,
                                      seed=None), NotApplicable)
    assert not isinstance(planned(ALL_NAMED["retriable-503-on-upload"](), "kafka-connect:camel@4.18.0",
                                  connector=None, version=None, seed=None), NotApplicable)


def test_R8_1_camels_puts_carry_a_condition_where_the_component_is_told_to():
    import dataclasses

    from conformance.playing.runner import faults_for_target

    sc = ALL_NAMED["s3-412-with-the-object"]()
    told = dataclasses.replace(sc, connector={**sc.connector,
                                              "camel.component.aws2-s3.conditional-writes-enabled": "true"})
    assert not isinstance(planned(told, "kafka-connect:camel@4.18.0", connector=None, version=None, seed=None),
                          NotApplicable)
    steps, notes = faults_for_target(told, "kafka-connect:camel@4.18.0")
    assert any(f.kind == "s3" and f.params.get("status") == 412 for f in steps), notes
    steps, notes = faults_for_target(sc, "kafka-connect:camel@4.18.0")
    assert not any(f.kind == "s3" and f.params.get("status") == 412 for f in steps)
    assert any("camel's uploads carry no condition" in n for n in notes)


def test_R6_2_a_generated_stream_with_a_nested_field_name_is_not_played_on_a_release_before_12():
    # --profile default on real 10.6.18 played one and it ended unknown (the task died at offset 0)
    import dataclasses

    from conformance.playing.applicable import inapplicable
    from conformance.playing.session import held_to_release

    generated = dataclasses.replace(ALL_NAMED["field-partition-unsorted"](), name="generated-007")
    assert "origin.zone" in (inapplicable(generated, held_to_release(generated, "kafka-connect:confluent@10.6.18"))
                             or "")
    assert inapplicable(generated, held_to_release(generated, "kafka-connect:confluent@12.1.9")) is None
    assert inapplicable(generated, held_to_release(generated, "pysink")) is None


def test_R8_2_the_head_after_a_412_is_confluents_own_question():
    # on Lenses 11.7.2 (its puts carry If-None-Match, so the 412 is real) the HEAD rule never fired
    name = "s3-412-without-the-object-head-403"
    verdict = planned(ALL_NAMED[name](), "kafka-connect:lenses@11.7.2", connector=None, version=None, seed=None)
    assert isinstance(verdict, NotApplicable) and "asks no HeadObject" in verdict.reason
    assert not isinstance(planned(ALL_NAMED["s3-412-without-the-object"](), "kafka-connect:lenses@11.7.2",
                                  connector=None, version=None, seed=None), NotApplicable)
