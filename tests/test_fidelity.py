"""The model answers to the real connector: each fixture under tests/fidelity/ is a run of
Confluent's S3 sink, or of another sink (the sink and version in its name), whose final state
(objects with their bytes, committed offsets, open uploads, task states; a table's current
snapshot; the samples taken during the run where it failed a property only they decide) today's
model and checkers must judge exactly as they judged the real run. Offline and fast: no JVM, no
S3 server."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from conformance.calibration import fidelity
from conformance.inputs.targets import connector_profile

FIXTURES = sorted((Path(__file__).parent / "fidelity").glob("*.json"))


def test_there_are_fixtures_of_the_real_connector():
    assert FIXTURES, "tests/fidelity/ holds no fixture"
    versions = {fidelity.load(p)["connector"]["version"] for p in FIXTURES}
    assert "12.1.9" in versions


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_model_agrees_with_the_real_connector(path):
    fx = fidelity.load(path)
    # the connector the fixture's target names (Confluent's S3 sink, or another sink's run with the
    # config it was sent, judged by that sink's own checks)
    assert fx["connector"]["class"] == connector_profile(fx["target"]).connector_class
    r = fidelity.replay(fx)
    assert not r.disagreements(), "\n".join(r.disagreements())


def test_a_fixture_whose_objects_differ_from_the_model_is_a_disagreement():
    """The replay can fail: drop an object of a run the model matched, or change its bytes."""
    fx = next(fidelity.load(p) for p in FIXTURES if fidelity.load(p)["verdicts"].get("exact-object-set") == "pass"
              and len(fidelity.load(p)["objects"]) >= 2
              and b'"seq":' in fidelity._unpack(fidelity.load(p)["objects"][0]["body"]))
    dropped = copy.deepcopy(fx)
    dropped["objects"] = dropped["objects"][1:]
    assert any(d.startswith("exact-object-set") for d in fidelity.replay(dropped).disagreements())
    changed = copy.deepcopy(fx)
    body = fidelity._unpack(changed["objects"][0]["body"])
    changed["objects"][0]["body"] = fidelity._pack(body.replace(b'"seq":', b'"seq":1', 1))
    assert fidelity.replay(changed).disagreements()


def test_a_table_sinks_fixture_is_judged_through_the_tables_current_snapshot():
    """Iceberg's reader sees the data files of the table's current snapshot (the claim's view
    "log"), which the fixture keeps (`committed_keys`): the first-commit loss on 1.12.0 left its
    one data file of 300 records in the bucket, outside every snapshot. The same bytes listed in
    the snapshot pass no-loss: it is the snapshot, not the listing, that decides."""
    fx = fidelity.load(Path(__file__).parent / "fidelity" / "iceberg-1.12.0--iceberg-kill-during-first-commit.json")
    (data,) = [o["key"] for o in fx["objects"] if o["key"].endswith(".parquet")]
    assert fx["committed_keys"] == [] and fx["table"]["snapshot_id"] is None
    lost = {v.property: v for v in fidelity.replay(fx).verdicts}["no-loss"]
    assert lost.status == "fail" and lost.details["count"] == 300
    listed = copy.deepcopy(fx)
    listed["committed_keys"] = [data]
    assert {v.property: v.status for v in fidelity.replay(listed).verdicts}["no-loss"] == "pass"


def test_a_fixture_is_judged_under_the_claim_its_run_had():
    """The replay claims what the run claimed: for the config the connector was sent and the
    values its converters read. Camel 4.18.0 with a tombstone and no errant-record reporter
    claims neither liveness nor commit-progress (the task dies on it), so the real run passed
    with both failing as measured; a replay that claimed them for the scenario's config alone
    said fail."""
    fx = fidelity.load(Path(__file__).parent / "fidelity" / "camel-4.18.0--null-value-stops-the-task.json")
    assert fx["task_states"] == ["FAILED"]
    r = fidelity.replay(fx)
    assert not {"liveness", "commit-progress"} & r.result.claim.properties
    live = {v.property: v for v in r.verdicts}["liveness"]
    assert live.status == "fail" and not live.claimed
    assert r.result.status == "pass" and not r.disagreements()


def test_a_table_sink_whose_files_never_reached_its_table_tested_something():
    """A run that tested nothing is one whose sink wrote nothing a reader could be shown. Iceberg
    1.12.0 losing its first commit wrote a data file of all 300 records that no snapshot lists:
    that run tested the sink (and failed no-loss), while the tombstone before the table killed
    the task before any file, which tests nothing beyond the task's death."""
    lost = fidelity.replay(fidelity.load(Path(__file__).parent / "fidelity"
                                         / "iceberg-1.12.0--iceberg-kill-during-first-commit.json")).result
    assert lost.status == "fail" and lost.untested is None
    dead = fidelity.replay(fidelity.load(Path(__file__).parent / "fidelity"
                                         / "iceberg-1.12.0--iceberg-tombstone-first.json")).result
    assert dead.status == "fail" and dead.untested


def test_failed_runs_that_name_why_they_tested_nothing_do_not_make_most_runs_untested():
    """`--examples 0 --scenario iceberg-kill-during-first-commit --scenario iceberg-tombstone-first`
    on Iceberg 1.12.0 said "FAIL: 2 runs: 0 passed, 2 failed" and then "most runs (0 of 2) tested
    nothing": a failure is a result, counted as neither."""
    from types import SimpleNamespace

    from conformance.judging.untested import dominated

    failed = [SimpleNamespace(status="fail", untested="the task died at start before any object")] * 2
    assert not dominated(failed)
    unknown = [SimpleNamespace(status="unknown", untested="no record was produced")] * 2
    assert dominated(unknown + failed[:1]) and not dominated(unknown[:1] + failed)


def test_a_fixture_keeps_the_samples_of_a_run_that_failed_commit_safety():
    """Aiven's zombie overwrite (--profile ci on 3.4.2) shows only as commit-safety: offsets
    committed while the zombie's object stood over the new owner's, all there again at quiet.
    The final state alone replays as a pass, so such a fixture keeps the listings and commits
    read during the run (each body once, equal listings once with their times)."""
    from adapters.observation import BucketSample, Observation, OffsetSample, S3Object
    from conformance.judging.verdicts import Verdict

    a, b = S3Object("t-0-0", 3, "e1", b"one"), S3Object("t-0-0", 3, "e2", b"two")
    obs = Observation(bucket_samples=[BucketSample(10, (a,)), BucketSample(20, (a,)), BucketSample(30, (b,)),
                                      BucketSample(40, (a, S3Object("t-0-5", 3, "e1", b"one")))],
                      offset_samples=[OffsetSample(15, {"t-0": 5}), OffsetSample(35, {"t-0": 10}, 2)])
    assert fidelity._samples_field(obs, [Verdict("commit-safety", "pass", True)]) == {}
    kept = fidelity._samples_field(obs, [Verdict("commit-safety", "fail", True)])["samples"]
    assert set(kept["bodies"]) == {"e1", "e2"} and [s["at"] for s in kept["bucket"]] == [[10, 20], [30], [40]]
    bucket, offsets = fidelity._sampled({"samples": kept})
    assert [(s.at_ms, [(o.key, o.body) for o in s.objects]) for s in bucket] == [
        (10, [("t-0-0", b"one")]), (20, [("t-0-0", b"one")]), (30, [("t-0-0", b"two")]),
        (40, [("t-0-0", b"one"), ("t-0-5", b"one")])]
    assert [(o.at_ms, o.committed, o.generation) for o in offsets] == [(15, {"t-0": 5}, None), (35, {"t-0": 10}, 2)]
