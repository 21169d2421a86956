"""The upgrade gate: model@10.5.23 vs model@10.6.3 differ in partition-change rotation
(spec §18); the gate finds it with a witness. A candidate that loses records is a regression."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit

GATE = ["gate", "--baseline", "model@10.5.23", "--candidate", "model@10.6.3",
        "--scenario", "late-records-across-hour-edge", "--scenario", "rotate-interval-table", "--examples", "0"]


def test_model_gate_reports_partition_change_rotation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*GATE, "--out", str(tmp_path)]) == Exit.OK
    out = capsys.readouterr().out
    assert "BEHAVIOUR CHANGE (documented) late-records-across-hour-edge: 2 objects → 4" in out
    doc = json.loads((tmp_path / "results.json").read_text())
    diff = doc["baseline"]
    assert diff["compared"] == 2 and diff["regressions"] == [] and diff["unchanged"] == 1
    [change] = diff["behaviour_changes"]
    assert change["scenario"] == "late-records-across-hour-edge" and change["kind"] == "documented"
    assert change["versions"] == ["10.5.23", "10.6.3"]
    moved = {m["offset"]: (m["baseline"], m["candidate"]) for m in change["objects"]["moved_offsets"]}
    # the late record 3 (hour 09) no longer joins 0-1 once the hour changed back and forth
    assert moved["events-0@3"] == ("topics/events/year=2024/month=05/day=01/hour=09/events+0+0000000000.json",
                                   "topics/events/year=2024/month=05/day=01/hour=09/events+0+0000000003.json")
    assert set(moved) == {"events-0@3", "events-0@4", "events-0@5"}
    rules = {o["rotation"] for o in change["rotations"]["candidate"]}
    assert "R3.3 partition change" in rules
    assert "R3.3 partition change" not in {o["rotation"] for o in change["rotations"]["baseline"]}
    assert "sinkcheck replay" in change["replay_candidate"] and "model@10.6.3" in change["replay_candidate"]
    html = (tmp_path / "report.html").read_text()
    assert 'id="changes"' in html and "events-0@3" in html and "documented" in html


def test_fail_on_change_makes_the_documented_change_fail(tmp_path: Path) -> None:
    assert main([*GATE, "--fail-on-change", "--out", str(tmp_path)]) == Exit.FAILED


def test_same_version_is_unchanged(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@10.6.3", "--candidate", "model@10.6.3", "--examples", "3",
                 "--scenario", "late-records-across-hour-edge", "--out", str(tmp_path)]) == Exit.OK
    diff = json.loads((tmp_path / "results.json").read_text())["baseline"]
    assert diff["behaviour_changes"] == [] and diff["regressions"] == []


def test_regression_on_a_real_candidate_is_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from test_cli_exit_codes import LosingTarget, PassingTarget, spec

    code = main(["gate", "--baseline", spec(PassingTarget), "--candidate", spec(LosingTarget),
                 "--scenario", "rotate-interval-table", "--examples", "0", "--out", str(tmp_path)])
    assert code == Exit.FAILED
    out = capsys.readouterr().out
    assert "REGRESSION rotate-interval-table: no-loss [P-NOLOSS] pass → fail" in out
    diff = json.loads((tmp_path / "results.json").read_text())["baseline"]
    assert {r["property"] for r in diff["regressions"]} >= {"no-loss"}
    assert diff["regressions"][0]["witnesses"][0]["offsets"]


def test_gate_with_nothing_selected_is_5(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@10.5.23", "--candidate", "model@10.6.3", "--no-named", "--examples", "0",
                 "--out", str(tmp_path)]) == Exit.NOTHING_SELECTED


def test_gate_bad_version_is_4(tmp_path: Path) -> None:
    assert main(["gate", "--baseline", "model@ten", "--candidate", "model@10.6.3", "--out", str(tmp_path)]) == Exit.USAGE


def test_a_gate_between_two_configs_explains_the_change_by_the_config(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Same sink, same version, same records: the candidate turns partition-change rotation off
    (C3). Each side matches the model for its own config, so it is a configured change, not a
    regression; --fail-on-change still stops it."""
    (tmp_path / "candidate.json").write_text(json.dumps({"rotate.file.on.partition.change": "false"}))
    argv = ["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--candidate-config",
            str(tmp_path / "candidate.json"), "--scenario", "late-records-across-hour-edge", "--examples", "0"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == Exit.OK
    assert "BEHAVIOUR CHANGE (configured) late-records-across-hour-edge" in capsys.readouterr().out
    doc = json.loads((tmp_path / "a" / "results.json").read_text())
    [change] = doc["baseline"]["behaviour_changes"]
    assert change["kind"] == "configured" and "rotate.file.on.partition.change" in change["why"]
    assert doc["environment"]["candidate"].endswith("with rotate.file.on.partition.change=false")
    assert main([*argv, "--fail-on-change", "--out", str(tmp_path / "b")]) == Exit.FAILED
    assert main(["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--candidate-config",
                 str(tmp_path / "missing.json"), "--out", str(tmp_path / "c")]) == Exit.USAGE
    assert "--candidate-config: file not found" in capsys.readouterr().err


def test_objects_that_differ_because_the_baseline_broke_its_claim_are_the_fix_not_a_regression() -> None:
    """A gate of 10.6.18 against 12.1.9 once counted three 'unexplained' regressions where the
    baseline's task had died (its objects broke its model) and the candidate matched the model."""
    from reports.diff import diff_entries

    def entry(objects, matches):
        return {"scenario": "s", "target": "t", "claim": {"name": "exactly-once", "naming": "confluent"}, "connector_version": "v",
                "connector": {}, "replay": "r", "steps": "", "objects": objects,
                "verdicts": [{"property": "exact-object-set", "status": "pass" if matches else "fail", "claimed": True,
                              "rule": "§16", "message": "", "witnesses": []}]}

    whole = [{"key": "a+0+0.json", "offsets": ["e-0@0", "e-0@1"]}, {"key": "a+0+2.json", "offsets": ["e-0@2"]}]
    diff = diff_entries([entry(whole[:1], False)], [entry(whole, True)])
    assert not diff["regressions"]
    assert [c["kind"] for c in diff["behaviour_changes"]] == ["fixed"]
    assert [f["property"] for f in diff["fixed"]] == ["exact-object-set"]
    # the other way round it is one
    back = diff_entries([entry(whole, True)], [entry(whole[:1], False)])
    assert "exact-object-set" in [r["property"] for r in back["regressions"]]


def test_a_config_gate_on_the_python_sink_judges_no_unknown_side_a_regression(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The README's config-change gate (pysink against itself with a new flush.size): the
    candidate's multipart fault never fires under flush.size 7 (its verdicts unknown), so its
    other objects are shown, not judged; crash-mid-stream's new boundaries are the config's."""
    (tmp_path / "new-flush.json").write_text(json.dumps({"flush.size": "7"}))
    code = main(["gate", "--baseline", "pysink", "--candidate", "pysink", "--candidate-config",
                 str(tmp_path / "new-flush.json"), "--scenario", "multipart-crash-in-part-four",
                 "--scenario", "crash-mid-stream", "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == Exit.OK, out
    diff = json.loads((tmp_path / "out" / "results.json").read_text())["baseline"]
    assert diff["compared"] == 2 and diff["regressions"] == []
    kinds = {c["scenario"]: c["kind"] for c in diff["behaviour_changes"]}
    assert kinds == {"multipart-crash-in-part-four": "unknown", "crash-mid-stream": "configured"}
    assert "versions'" not in out and "PASS: gate pysink → pysink: 2 scenarios compared, 0 regressions" in out
    assert "(0 documented, 1 not judged: a side unknown)" in out


def test_an_unexplained_change_is_a_regression_with_witnesses_and_names_the_configs() -> None:
    from reports.diff import diff_entries

    def entry(cfg, objects, model):
        return {"scenario": "s", "target": "pysink", "claim": {"name": "exactly-once", "naming": "confluent"},
                "connector_version": None, "connector": cfg, "replay": "r", "steps": "", "objects": objects,
                "verdicts": [{"property": "exact-object-set", "status": model, "claimed": True, "rule": "§16",
                              "message": "", "witnesses": []}]}

    a = [{"key": "t+0+0.json", "offsets": ["t-0@0", "t-0@1"]}]
    b = [{"key": "t+0+0.json", "offsets": ["t-0@0"]}, {"key": "t+0+1.json", "offsets": ["t-0@1"]}]
    diff = diff_entries([entry({"flush.size": "2"}, a, "pass")], [entry({"flush.size": "3"}, b, "fail")])
    stability = [r for r in diff["regressions"] if r["property"] == "upgrade-stability"]
    assert stability and "configs' models" in stability[0]["message"] and "versions" not in stability[0]["message"]
    assert {w["anomaly"] for w in stability[0]["witnesses"]} == {"object-new", "object-changed"}
    # the candidate's model verdict unknown: shown, not judged
    unknown = diff_entries([entry({}, a, "pass")], [entry({}, b, "unknown")])
    assert unknown["regressions"] == [] and [c["kind"] for c in unknown["behaviour_changes"]] == ["unknown"]


def test_scenario_selects_the_same_runs_in_gate_as_in_run(tmp_path: Path) -> None:
    """`--scenario NAME` alone plays that scenario and no generated ones, in both commands."""
    assert main(["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9",
                 "--scenario", "rotate-interval-table", "--out", str(tmp_path / "g")]) == Exit.OK
    assert json.loads((tmp_path / "g" / "results.json").read_text())["baseline"]["compared"] == 1
    assert main(["run", "--target", "pysink", "--scenario", "rotate-interval-table", "--no-preflight",
                 "--failures-dir", str(tmp_path / "f"), "--out", str(tmp_path / "r")]) == Exit.OK
    assert [e["scenario"] for e in json.loads((tmp_path / "r" / "results.json").read_text())["results"]] == [
        "rotate-interval-table"]
    assert main(["gate", "--baseline", "model@12.1.9", "--candidate", "model@12.1.9", "--scenario",
                 "rotate-interval-table", "--examples", "2", "--out", str(tmp_path / "g2")]) == Exit.OK
    assert json.loads((tmp_path / "g2" / "results.json").read_text())["baseline"]["compared"] == 3


def _table_run(tmp_path: Path, name: str, files: dict[str, list[int]], table: list[str]) -> dict:
    """The report entry of an Iceberg run whose bucket holds `files` (a data file's rows by seq)
    and whose table's current snapshot references `table`: built from an observation, no stack."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from adapters.observation import BucketSample, Observation, ProducedRecord, S3Object
    from conformance.judging.claims import claim_for
    from conformance.playing.runner import RunResult
    from conformance.inputs.scenario import Scenario
    from conformance.judging.verdicts import PASS, Verdict
    from reports import ReportContext
    from reports.context import entry

    cfg = {"connector.class": "org.apache.iceberg.connect.IcebergSinkConnector", "iceberg.tables": "db.t",
           "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}
    recs = [{"topic": "t", "partition": 0, "timestamp": 1714557600000, "key": None, "value": {"seq": i}, "headers": []}
            for i in range(2)]
    objs = []
    for key, seqs in files.items():
        buf = io.BytesIO()
        pq.write_table(pa.table({"seq": seqs}), buf)
        objs.append(S3Object(key, len(buf.getvalue()), f"e-{key}", buf.getvalue()))
    obs = Observation(bucket_samples=[BucketSample(2, tuple(objs), committed_keys=tuple(table))], quiet=True)
    obs.produced = [ProducedRecord("t", 0, i, None, None, json.dumps({"seq": i}).encode()) for i in range(2)]
    r = RunResult(Scenario("one-table", cfg, {"t": 1}, recs), "kafka-connect:iceberg", claim_for("kafka-connect:iceberg", cfg),
                  obs, None, [Verdict("no-loss", PASS, True)], 1.0, tmp_path / name)
    return entry(r, ReportContext())


def test_a_table_sink_is_compared_by_the_rows_its_table_holds_not_by_data_file_names(tmp_path: Path) -> None:
    """Iceberg names its data files with random UUIDs: two runs of the same input hold the same
    rows in files of other names (and a failed attempt's orphan file the table never references
    is no row). The gate sees no change; a table with a row twice is a change of records, judged
    by the verdicts, never an upgrade-stability regression."""
    from reports.diff import diff_entries

    base = _table_run(tmp_path, "b", {"data/00000-0-1f0a.parquet": [0, 1]}, ["data/00000-0-1f0a.parquet"])
    same = _table_run(tmp_path, "c", {"data/00000-0-9c3e.parquet": [0, 1], "data/00000-0-orphan.parquet": [1]},
                      ["data/00000-0-9c3e.parquet"])
    assert base["records_read"] == same["records_read"] == ["t-0@0", "t-0@1"]
    diff = diff_entries([base], [same])
    assert diff["behaviour_changes"] == [] and diff["regressions"] == [] and diff["unchanged"] == 1
    twice = _table_run(tmp_path, "d", {"data/a.parquet": [0, 1], "data/b.parquet": [1]}, ["data/a.parquet", "data/b.parquet"])
    diff = diff_entries([base], [twice])
    [change] = diff["behaviour_changes"]
    assert change["kind"] == "records" and change["objects"]["moved_offsets"] == [
        {"offset": "t-0@1", "baseline": "seen 1×", "candidate": "seen 2×"}]
    assert diff["regressions"] == []


def test_a_gate_of_iceberg_draws_the_generated_scenarios_run_draws_for_it() -> None:
    """The gate's generated scenarios for a table sink hold values that make rows (maps and
    Structs, as `run` draws them): no text through a converter that refuses it, no
    ByteArrayFormat, which writes only bytes."""
    from conformance.playing.generated import generated_scenarios

    scs = generated_scenarios(10, 0, True, 10, kinds=("iceberg", "iceberg"))
    assert len(scs) >= 5
    assert all(not sc.connector["format.class"].endswith("ByteArrayFormat") for sc in scs)
    assert {type(r["value"]) for sc in scs for r in sc.records} <= {dict, type(None)}


def test_records_a_targets_converters_refuse_are_refused_before_anything_starts(tmp_path: Path) -> None:
    """Text values under StringConverter, put to Iceberg's sink, which reads values through
    JsonConverter: its task would die on each. The run refuses the scenario (exit 4 in a
    command) before it starts a broker, instead of erring inside the runner afterwards."""
    from conformance.catalog.base import BASE
    from conformance.playing.runner import run_scenario
    from conformance.inputs.scenario import Scenario, ScenarioError

    cfg = {**BASE, "value.converter": "org.apache.kafka.connect.storage.StringConverter", "flush.size": "1"}
    recs = [{"topic": "orders", "partition": 0, "timestamp": 1714557600000, "key": None, "value": "seq=0", "headers": []}]
    with pytest.raises(ScenarioError, match="which refuse them"):
        run_scenario(Scenario("text-values", cfg, {"orders": 1}, recs), "kafka-connect:iceberg", tmp_path)
    assert not (tmp_path / "s3").exists()
