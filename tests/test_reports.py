"""The report writers on RunResults built by hand: results.json, junit.xml and report.html
hold every verdict with its witnesses, the matrix and the timeline; secrets from a connector
config never appear in any written file or in terminal output."""
from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from adapters.observation import BucketSample, FaultEvent, Observation, OffsetSample, ProducedRecord, S3Object
from conformance.judging.claims import PROPERTIES, claim_for
from conformance.playing.runner import RunResult
from conformance.inputs.scenario import FaultStep, Scenario
from conformance.judging.verdicts import FAIL, PASS, UNKNOWN, Verdict, Witness
from reports import ReportContext, write_reports
from reports.diff import diff_entries
from reports.redact import MASK, Redactor, is_secret_key

SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
KEY_ID = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "hunter2-correct-horse"
CONNECTOR = {
    "connector.class": "io.confluent.connect.s3.S3SinkConnector",
    "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
    "flush.size": "3", "s3.bucket.name": "sinkcheck",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
    "aws.secret.access.key": SECRET, "aws.access.key.id": KEY_ID, "sasl.jaas.password": PASSWORD,
}
T0 = 1_700_000_000_000


def _scenario(name: str, faults: bool = True) -> Scenario:
    recs = [{"topic": "events", "partition": 0, "timestamp": T0 + i, "key": f"k{i}", "value": {"seq": i}, "headers": []}
            for i in range(5)]
    return Scenario(name, dict(CONNECTOR), {"events": 1}, recs,
                    [FaultStep(3, "crash")] if faults else [], seed=42, connector_version="10.6.3")


def _observation(lost: bool) -> Observation:
    produced = [ProducedRecord("events", 0, i, T0 + i, None, b"{}", (), at_ms=T0 + 100 * i) for i in range(5)]
    obj = S3Object("topics/events/partition=0/events+0+0000000000.json", 30, "e1", b'{"seq":0}\n', T0 + 250)
    return Observation(
        produced=produced,
        bucket_samples=[BucketSample(T0 + 150, ()), BucketSample(T0 + 300, (obj,)), BucketSample(T0 + 600, (obj,))],
        offset_samples=[OffsetSample(T0 + 120, {"events-0": 0}), OffsetSample(T0 + 310, {"events-0": 5 if lost else 3})],
        faults=[FaultEvent("crash", {}, True, T0 + 320, T0 + 480, detail=f"SIGKILL pid 42 (token={SECRET})")],
        quiet=True,
        still_moving="",
    )


def _result(tmp: Path, name: str, failing: bool, target: str = "kafka-connect:confluent") -> RunResult:
    sc = _scenario(name)
    claim = claim_for("confluent", sc.connector, sc.faults)
    verdicts = []
    for p in PROPERTIES:
        claimed = claim.claims(p)
        if p == "no-loss" and failing:
            verdicts.append(Verdict(p, FAIL, claimed, "P-NOLOSS", "2 records lost", (
                Witness("lost", ("events-0@3",), ("topics/events/partition=0/events+0+0000000003.json",),
                        expected=[3, 4], observed=[], explanation=f"absent from S3 although the sink committed 5 ({SECRET})"),
                Witness("lost", ("events-0@4",), explanation="absent from S3 although the sink committed 5"))))
        elif p == "liveness":
            verdicts.append(Verdict(p, UNKNOWN, claimed, "P-LIVENESS", "no status samples"))
        else:
            verdicts.append(Verdict(p, PASS, claimed, "", "ok"))
    run_dir = tmp / "runs" / name
    run_dir.mkdir(parents=True)
    return RunResult(sc, target, claim, _observation(failing), None, verdicts, 1.5, run_dir)


@pytest.fixture
def written(tmp_path: Path) -> tuple[Path, list[RunResult], ReportContext]:
    results = [_result(tmp_path, "loses-records", True), _result(tmp_path, "all-good", False),
               _result(tmp_path, "other-target", False, target="pysink")]
    redactor = Redactor.from_configs(CONNECTOR)
    ctx = ReportContext(seed=42, profile="ci", duration_s=3.0, redactor=redactor,
                        environment={"sinkcheck version": "0.1.0", "model's connector version": "10.6.3",
                                     "Kafka": "4.1.1", "S3 server": "moto", "credentials": f"key {KEY_ID}"},
                        preflight=[{"check": "If-None-Match: * on PutObject", "status": "pass", "detail": "412", "rule": "R8"},
                                   {"check": "abort removes the upload", "status": "fail", "detail": "still listed", "rule": ""}],
                        errors=[{"scenario": "broken", "target": "pysink", "error": f"RuntimeError: auth {SECRET}",
                                 "traceback": f"password={PASSWORD}"}])
    out = tmp_path / "out"
    write_reports(out, results, ctx)
    return out, results, ctx


def test_results_json_has_every_verdict_with_witnesses(written: tuple[Path, list[RunResult], ReportContext]) -> None:
    out, results, _ = written
    doc = json.loads((out / "results.json").read_text())
    assert doc["format"] == "sinkcheck.results/1" and doc["seed"] == 42 and doc["status"] == "error"
    assert len(doc["results"]) == 3
    for e in doc["results"]:
        assert [v["property"] for v in e["verdicts"]] == list(PROPERTIES)
        assert e["claim"]["name"] == "exactly-once" and e["seed"] == 42
        assert e["replay"].startswith("sinkcheck replay ") and e["target"] in e["replay"]
    lost = doc["results"][0]
    nl = next(v for v in lost["verdicts"] if v["property"] == "no-loss")
    assert nl["status"] == "fail" and nl["cell"] == "fail" and nl["witnesses"][0]["offsets"] == ["events-0@3"]
    assert doc["matrix"]["no-loss"]["kafka-connect:confluent"]["fail"] == 1
    assert doc["matrix"]["multipart-hygiene"]["pysink"]["not-claimed"] == 1
    tl = lost["timeline"]
    assert len(tl["produced"]) == 5 and tl["faults"][0]["until_ms"] == T0 + 480
    assert [c["offset"] for c in tl["commits"]] == [0, 5] and tl["visible"][0]["at"] == T0 + 300


def test_junit_has_a_testcase_per_scenario_and_property(written: tuple[Path, list[RunResult], ReportContext]) -> None:
    out, _, _ = written
    root = ET.parse(out / "junit.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 3 * len(PROPERTIES) + 1  # + the run that errored
    failures = root.findall(".//testcase/failure")
    assert len(failures) == 1 and "events-0@3" in failures[0].text and "Reproduce with: sinkcheck replay" in failures[0].text
    skipped = [s.get("message") for s in root.findall(".//testcase/skipped")]
    assert any(m.startswith("unknown:") for m in skipped) and any(m.startswith("not claimed") for m in skipped)
    assert root.get("failures") == "1" and root.get("errors") == "1"


def test_html_is_self_contained_with_banner_matrix_failures_timeline(written: tuple[Path, list[RunResult], ReportContext]) -> None:
    out, _, _ = written
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>")
    # no network: nothing fetched, no external references
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert 'id="banner"' in html and 'data-status-overall="error"' in html
    assert 'id="matrix"' in html and 'data-property="no-loss" data-target="kafka-connect:confluent"' in html
    assert html.count('<svg class="timeline"') == 3 and 'class="tl-fault"' in html and 'class="tl-commit"' in html
    assert 'class="tl-object"' in html and 'class="tl-produce"' in html
    assert 'id="failure-0"' in html and "events-0@3" in html and "Reproduce with" in html and 'class="steps"' in html
    assert 'id="preflight"' in html and "If-None-Match" in html and 'id="environment"' in html
    assert "4.1.1" in html and 'id="errors"' in html
    assert 'id="fault-coverage"' in html and "<th>crash</th>" in html


def test_fault_coverage_counts_each_kind_scheduled_and_fired(written: tuple[Path, list[RunResult], ReportContext]) -> None:
    out, _, _ = written
    doc = json.loads((out / "results.json").read_text())
    assert doc["fault_coverage"] == {"crash": {"kafka-connect:confluent": {"scheduled": 2, "fired": 2},
                                               "pysink": {"scheduled": 1, "fired": 1}}}
    from reports.context import fault_coverage

    unfired = {"target": "pysink", "faults": [
        {"kind": "s3", "params": {"action": "fail", "status": 503, "operation": "UploadPart"}, "fired": False},
        {"kind": "s3", "params": {"action": "error-200", "operation": "CompleteMultipartUpload"}, "fired": True}]}
    assert fault_coverage([unfired]) == {
        "s3 error-200 applied CompleteMultipartUpload": {"pysink": {"scheduled": 1, "fired": 1}},
        "s3 fail 503 UploadPart": {"pysink": {"scheduled": 1, "fired": 0}}}


def test_secrets_never_appear_in_any_output(written: tuple[Path, list[RunResult], ReportContext],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    out, results, ctx = written
    from sinkcheck.terminal import Terminal, print_outcome

    print_outcome(Terminal(ctx.redactor), results, ctx.errors, {}, 42, "ci", 1.0)
    term = capsys.readouterr()
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"report.html", "junit.xml", "results.json"}
    forms = {SECRET, KEY_ID, PASSWORD, json.dumps(SECRET)[1:-1], "wJalrXUtnFEMI", "hunter2"}
    for text, where in [(p.read_text(), str(p)) for p in files] + [(term.out, "stdout"), (term.err, "stderr")]:
        for s in forms:
            assert s not in text, f"{s!r} leaked into {where}"
    assert MASK in (out / "results.json").read_text()
    assert "✗ no-loss" in term.out  # the failure block is still printed, just redacted


def test_redactor() -> None:
    assert all(is_secret_key(k) for k in ("aws.secret.access.key", "aws.access.key.id", "db.password",
                                          "oauth.token", "gcp.credentials.json", "s3AccessKey", "mySecretKey"))
    assert not any(is_secret_key(k) for k in ("flush.size", "s3.bucket.name", "partitioner.class", "topics"))
    r = Redactor.from_configs({"config": {"aws.secret.access.key": SECRET, "flush.size": "3"}})
    assert SECRET not in r.text(f"x {SECRET} y") and "flush.size" in r.text("flush.size=3")
    assert r.text("password=abc123 and other.token: zz9") == f"password={MASK} and other.token: {MASK}"
    assert r.data({"a": {"aws.access.key.id": "AKIA1234"}, "b": [SECRET]}) == {"a": {"aws.access.key.id": MASK}, "b": [MASK]}


def test_changes_since_baseline_section(tmp_path: Path, written: tuple[Path, list[RunResult], ReportContext]) -> None:
    out, results, ctx = written
    from reports.context import entry

    base = [entry(_result(tmp_path / "b", "loses-records", False), ctx)]
    cand = [entry(results[0], ctx)]
    diff = diff_entries(base, cand)
    assert [r["property"] for r in diff["regressions"]] == ["no-loss"]
    ctx2 = ReportContext(redactor=ctx.redactor, baseline=diff)
    write_reports(tmp_path / "o2", results[:1], ctx2)
    html = (tmp_path / "o2" / "report.html").read_text()
    assert 'id="changes"' in html and "regression" in html


def test_a_real_run_with_a_secret_in_its_config_leaks_it_nowhere(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """`sinkcheck run` against the embedded default with credentials in the connector config:
    every file the run writes, and everything it prints, is searched for them."""
    from sinkcheck.cli import main

    cfg = tmp_path / "connector.json"
    cfg.write_text(json.dumps({"name": "s3", "config": {
        "connector.class": "io.confluent.connect.s3.S3SinkConnector", "s3.bucket.name": "sinkcheck",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat", "flush.size": "2",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "aws.access.key.id": KEY_ID, "aws.secret.access.key": SECRET}}))
    out = tmp_path / "out"
    code = main(["run", "--target", "pysink", "--connector-config", str(cfg), "--scenario", "rotate-interval-table",
                 "--examples", "1", "--profile", "ci", "--out", str(out), "--failures-dir", str(tmp_path / "failures")])
    term = capfd.readouterr()
    assert code in (0, 1, 2)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != cfg]
    assert any(p.name == "report.html" for p in files)
    for p in files:
        data = p.read_bytes()
        for s in (SECRET, KEY_ID):
            assert s.encode() not in data, f"{s!r} leaked into {p}"
    for s in (SECRET, KEY_ID):
        assert s not in term.out and s not in term.err


def test_a_target_with_two_claims_gets_a_matrix_column_and_a_junit_suite_per_claim_view(tmp_path: Path) -> None:
    from conformance.judging.claims import claims_for

    sc = _scenario("spark-views", faults=False)
    log_claim, listing_claim = claims_for("spark-streaming", {})
    r = RunResult(sc, "spark-streaming", log_claim, _observation(lost=False), None,
                  [Verdict("no-duplicates", PASS, True)], 1.0, tmp_path,
                  [(listing_claim, [Verdict("no-duplicates", FAIL, False, message="2 records duplicated")])])
    paths = write_reports(tmp_path / "out", [r], ReportContext(command="run"))
    html = paths["html"].read_text()
    for column, label in (("spark-streaming · log", "PASS"), ("spark-streaming · listing", "not claimed")):
        cell = re.search(rf'data-property="no-duplicates" data-target="{re.escape(column)}">([^<]+)<', html)
        assert cell and cell.group(1) == label, column
    assert "exactly-once (log)" in html and "at-least-once (listing)" in html  # the banner names both claims
    suites = {s.get("name"): s for s in ET.parse(paths["junit"]).getroot()}
    assert set(suites) == {"sinkcheck spark-streaming · log", "sinkcheck spark-streaming · listing"}
    skipped = suites["sinkcheck spark-streaming · listing"].find("testcase/skipped").get("message")
    assert skipped.startswith("not claimed by at-least-once (measured: fail)")


def test_each_run_in_the_html_shows_where_its_time_went() -> None:
    from reports.html import _phases

    line = _phases({"start-up": 1.25, "produce": 0.04, "wait until quiet": 4.0, "stop": 0.3})
    assert line == '<p class="muted">time: start-up 1.2s · wait until quiet 4.0s · stop 0.3s</p>'
    assert _phases({}) == "" and _phases(None) == ""
