"""The model answers to the real connector: each fixture under tests/fidelity/ is a run of
Confluent's S3 sink, or of another sink (the sink and version in its name), whose final state
(objects with their bytes, committed offsets, open uploads, task states; the samples taken during
the run where it failed a property only they decide) today's model and checkers must judge
exactly as they judged the real run. Offline and fast: no JVM, no S3 server."""
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
