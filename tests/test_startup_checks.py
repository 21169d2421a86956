"""Issue 34's start-up checks: what each release's start() makes of the answer to its bucket check
(R1.3, reference_impl.s3_errors.start_up), the three named start-up scenarios on the Python sink
in the simulation, the start-up verdict a run carries into its reports, and faulty sinks that
start where the release refuses or refuse where it starts."""
from __future__ import annotations

import json

import botocore.exceptions
import pytest

from adapters.s3.memory import MemoryS3, MemoryS3Client
from adapters.s3.rules import OTHER_REGION, FaultRule, classify
from conformance.catalog.named import ALL_NAMED, CONNECTOR_OWN, KILL_SCENARIOS, SUITE
from conformance.catalog.s3_statuses import STARTUP_SCENARIOS
from conformance.judging.claims import claim_for
from conformance.playing.runner import faults_for_target, run_scenario
from reference_impl.s3_errors import KILLS_TASK, NON_EXISTENT, one_answer, start_up, startup_operation

V1, V2 = (10, 6, 18), (12, 1, 9)
MISSING, FORBIDDEN, ELSEWHERE = "startup-bucket-missing", "startup-bucket-head-forbidden", "startup-bucket-in-another-region"


# --- the model's rule ---------------------------------------------------------------------------

def test_R1_3_sdk_v2_releases_check_the_bucket_with_head_bucket_sdk_v1_with_get_bucket_acl():
    assert startup_operation(V2) == startup_operation((11, 0, 0)) == startup_operation(None) == "HeadBucket"
    assert startup_operation(V1) == "GetBucketAcl"


@pytest.mark.parametrize("version", [V1, (11, 0, 1), V2, None])
def test_R1_3_a_404_fails_the_start_with_non_existent_s3_bucket(version):
    s = start_up(version, 404, "NoSuchBucket", "orders")
    assert not s.starts and s.refusal == f"{NON_EXISTENT}: orders" and s.rule == "R1.3"


@pytest.mark.parametrize("version", [V1, V2])
def test_R1_3_a_301_permanent_redirect_counts_as_the_bucket_there(version):
    assert start_up(version, 301, "PermanentRedirect").starts


def test_R1_3_sdk_v2_takes_any_403_as_there_sdk_v1_only_the_code_access_denied():
    for code in ("AccessDenied", "ExpiredToken", "InvalidAccessKeyId"):
        assert start_up(V2, 403, code).starts, code
    assert start_up(V1, 403, "AccessDenied").starts
    for code in ("ExpiredToken", "InvalidAccessKeyId"):
        s = start_up(V1, 403, code)
        assert not s.starts and s.refusal.startswith("ConnectException"), code


def test_R1_3_an_answer_the_client_retries_gets_past_once_but_not_when_it_answers_every_attempt():
    for version in (V1, V2):
        assert start_up(version, 503, "SlowDown", every_answer=False).starts
        assert not start_up(version, 503, "SlowDown", every_answer=True).starts
        assert not start_up(version, 0, "", action="reset").starts
        assert start_up(version, 0, "", action="delay").starts
    # SDK v1 retries SignatureDoesNotMatch as a clock skew; SDK v2 throws it: the start fails either way
    assert not start_up(V1, 403, "SignatureDoesNotMatch").starts and start_up(V2, 403, "SignatureDoesNotMatch").starts


def test_R1_3_any_other_answer_is_thrown_from_start():
    for version in (V1, V2):
        s = start_up(version, 400, "BadRequest")
        assert not s.starts and "S3SinkTask.java:144-145" in s.why


def test_R1_3_one_answer_reads_the_start_up_call_as_start_up_does():
    assert one_answer(V2, "HeadBucket", "fail", 404, "NoSuchBucket").outcome == KILLS_TASK
    assert one_answer(V2, "HeadBucket", "fail", 403, "AccessDenied").survived
    assert one_answer(V1, "GetBucketAcl", "fail", 403, "ExpiredToken").kills_task


def test_R1_3_a_refused_start_expects_a_task_dead_at_start_with_nothing_written():
    from conformance.inputs.connector_config import sink_config
    from reference_impl.engine.model import refused_start

    cfg = sink_config(ALL_NAMED[MISSING]().connector, "12.1.9")
    exp = refused_start(cfg, "local", "Non-existent S3 bucket: sinkcheck")
    assert exp.objects == [] and exp.committed_offsets == {}
    assert exp.task_failure.offset is None and exp.task_failure.rule == "R1.3"


# --- the fault on the call each release makes -----------------------------------------------------

def test_the_front_names_get_bucket_acl_and_the_simulated_s3_answers_it():
    assert classify("GET", "/b?acl").operation == "GetBucketAcl"
    assert classify("GET", "/b?list-type=2").operation == "ListObjectsV2"
    store = MemoryS3(clock=lambda: 0)
    store.create_bucket(Bucket="b")
    c = MemoryS3Client(store)
    assert c.get_bucket_acl(Bucket="b")["Grants"] == []
    store.add_rule(FaultRule("GetBucketAcl", "fail", status=301, times=0))
    for _ in range(2):  # times=0: every check gets it, as a bucket elsewhere does
        with pytest.raises(botocore.exceptions.ClientError) as e:
            c.get_bucket_acl(Bucket="b")
        meta = e.value.response["ResponseMetadata"]
        assert meta["HTTPStatusCode"] == 301 and meta["HTTPHeaders"]["x-amz-bucket-region"] == OTHER_REGION
        assert e.value.response["Error"]["Code"] == "PermanentRedirect"


def test_the_front_answers_a_301_with_the_buckets_region(tmp_path):
    import http.client

    from adapters.s3.front import S3FaultFront

    front = S3FaultFront("http://127.0.0.1:9", tmp_path / "front").start()  # never forwarded: the rule answers
    try:
        front.add_rule(FaultRule("GetBucketAcl", "fail", status=301, region="eu-north-1"))
        host, port = front.endpoint.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", "/orders?acl")
        resp = conn.getresponse()
        body = resp.read().decode()
        assert resp.status == 301 and resp.getheader("x-amz-bucket-region") == "eu-north-1"
        assert "<Code>PermanentRedirect</Code>" in body
        assert "<Endpoint>orders.s3.eu-north-1.amazonaws.com</Endpoint>" in body
        conn.close()
    finally:
        front.stop()


@pytest.mark.parametrize("target,call", [("kafka-connect:confluent@10.6.18", "GetBucketAcl"),
                                         ("kafka-connect:confluent@12.1.9", "HeadBucket"),
                                         ("kafka-connect:confluent@11.0.1", "HeadBucket"), ("pysink", "HeadBucket")])
def test_R1_3_the_start_up_rule_goes_on_the_call_the_release_makes(target, call):
    steps, notes = faults_for_target(ALL_NAMED[MISSING](), target)
    assert [s.params["operation"] for s in steps] == [call]
    assert bool(notes) == (call != "HeadBucket")


def test_a_start_up_rule_takes_no_claim_off_where_an_upload_answer_would():
    sc = ALL_NAMED[MISSING]()
    for version in ("10.6.18", "12.1.9"):
        claim = claim_for("confluent", sc.connector, sc.faults, version)
        assert {"liveness", "commit-progress", "exact-object-set", "multipart-hygiene"} <= claim.properties
        assert not claim.caveats


def test_the_start_up_scenarios_play_on_confluents_and_the_python_sinks_targets_only():
    assert set(STARTUP_SCENARIOS) <= set(CONNECTOR_OWN["confluent"]) & set(CONNECTOR_OWN["pysink"])
    assert set(STARTUP_SCENARIOS) <= set(KILL_SCENARIOS) and not set(STARTUP_SCENARIOS) & set(SUITE)
    for name in STARTUP_SCENARIOS:
        (step,) = ALL_NAMED[name]().faults
        assert step.after == 0 and step.params["times"] == 0 and step.params["operation"] == "HeadBucket"


# --- the scenarios on the Python sink (simulation) ----------------------------------------------

@pytest.mark.parametrize("name,starts", [(MISSING, False), (FORBIDDEN, True), (ELSEWHERE, True)])
def test_R1_3_the_start_up_scenarios_pass_on_the_python_sink(name, starts, tmp_path):
    r = run_scenario(ALL_NAMED[name](), "pysink", tmp_path)
    assert r.status == "pass" and r.untested is None, [v.to_json() for v in r.all_verdicts() if v.status != "pass"]
    assert r.startup is not None and r.startup.ok and r.startup.expected.starts is starts
    liveness = next(v for v in r.verdicts if v.property == "liveness")
    assert liveness.claimed and liveness.status == "pass"
    objects = r.observation.final_bucket.objects
    if starts:
        assert len(objects) == 3 and r.observation.final_offsets == {"events-0": 9}
        assert r.startup.line().startswith("start-up: bucket taken as there on ")
    else:
        assert objects == () or not objects
        assert r.startup.line() == ("start-up: refused, 'Non-existent S3 bucket: sinkcheck' as documented "
                                    "(R1.3: 404 NoSuchBucket on HeadBucket)")
        assert r.observation.statuses[-1].task_states == ("FAILED",)


@pytest.mark.parametrize("name", [FORBIDDEN, ELSEWHERE])
def test_R1_3_a_sink_that_refuses_where_the_connector_starts_fails_liveness(name, tmp_path):
    r = run_scenario(ALL_NAMED[name](), "pysink:bucket-check-strict", tmp_path)
    assert r.status == "fail" and not r.startup.ok
    liveness = next(v for v in r.verdicts if v.property == "liveness")
    assert liveness.status == "fail" and liveness.witnesses[0].anomaly == "refused-where-it-starts"
    assert r.startup.line().startswith("start-up: REFUSED where the model (12.1.9's reading) takes the bucket as there")


def test_R1_3_the_strict_sink_refuses_a_missing_bucket_as_the_connector_does(tmp_path):
    r = run_scenario(ALL_NAMED[MISSING](), "pysink:bucket-check-strict", tmp_path)
    assert r.status == "pass" and r.startup.ok


def test_R1_3_a_sink_that_starts_where_the_release_refuses_fails_liveness(tmp_path, monkeypatch):
    """A sink that takes a 404 to its bucket check as the bucket there (no check at start at all
    reads the same) writes what the connector never does."""
    import adapters.pysink as pysink
    from adapters.pysink.sink import SinkTask
    from adapters.pysink.targets import variants

    class MissingBucketIgnored(SinkTask):
        def bucket_answer(self, status: int) -> str:
            return "there" if status == 404 else super().bucket_answer(status)

    monkeypatch.setitem(variants.REGISTRY, "missing-bucket-ignored", MissingBucketIgnored)
    monkeypatch.setitem(pysink.VARIANTS, "missing-bucket-ignored", "takes a 404 to its bucket check as there")
    r = run_scenario(ALL_NAMED[MISSING](), "pysink:missing-bucket-ignored", tmp_path)
    failed = {v.property: v for v in r.failed()}
    assert {"liveness", "exact-object-set"} <= set(failed), list(failed)
    assert failed["liveness"].witnesses[0].anomaly == "started-where-refused"
    assert r.startup.line() == ("start-up: STARTED where the model (12.1.9's reading) refuses on 404 NoSuchBucket on "
                                "HeadBucket (R1.3: 'Non-existent S3 bucket: sinkcheck')")


def test_a_retriable_answer_to_the_check_is_tried_again_and_one_to_every_attempt_fails_the_start(tmp_path):
    from dataclasses import replace

    from conformance.inputs.scenario import FaultStep

    sc = ALL_NAMED[FORBIDDEN]()
    rule = {**sc.faults[0].params, "status": 503, "code": "SlowDown", "times": 1}
    r = run_scenario(replace(sc, faults=[FaultStep(0, "s3", rule)]), "pysink", tmp_path / "1")
    assert r.status == "pass" and r.startup.expected.starts and r.startup.ok
    rule["times"] = 0
    r = run_scenario(replace(sc, faults=[FaultStep(0, "s3", rule)]), "pysink", tmp_path / "0")
    assert r.status == "pass" and not r.startup.expected.starts and r.startup.observed == "refused"


# --- the verdict in the reports ---------------------------------------------------------------------

def test_the_start_up_verdict_is_in_results_json_the_html_run_detail_and_a_failures_block(tmp_path):
    from conformance.pytest_plugin import failure_block
    from reports.context import ReportContext
    from reports.html import write_html
    from reports.results_json import write_results_json

    refused = run_scenario(ALL_NAMED[MISSING](), "pysink", tmp_path / "refused")
    wrong = run_scenario(ALL_NAMED[FORBIDDEN](), "pysink:bucket-check-strict", tmp_path / "wrong")
    ctx = ReportContext(seed=0, profile="ci")
    doc = json.loads(write_results_json(tmp_path / "results.json", [refused, wrong], ctx).read_text())
    by_name = {e["scenario"]: e for e in doc["results"]}
    assert by_name[MISSING]["startup"]["line"] == refused.startup.line()
    assert by_name[MISSING]["startup"]["expected"] == "refused" and by_name[MISSING]["startup"]["ok"]
    assert by_name[FORBIDDEN]["startup"]["observed"] == "refused" and not by_name[FORBIDDEN]["startup"]["ok"]
    html = write_html(tmp_path / "report.html", [refused, wrong], ReportContext(seed=0, profile="ci")).read_text()
    assert "<b>start-up</b>: refused, &#x27;Non-existent S3 bucket: sinkcheck&#x27; as documented" in html
    assert "start-up: REFUSED where" in failure_block(wrong)
