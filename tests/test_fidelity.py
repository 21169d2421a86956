"""The model answers to the real connector: each fixture under tests/fidelity/ is a run of a real
S3 sink (Confluent's, or Lenses' for its known bugs; the version in its name) whose final state (objects with their bytes,
committed offsets, open uploads, task states) today's model and checkers must judge exactly as
they judged the real run. Offline and fast: no JVM, no S3 server."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from conformance.calibration import fidelity

FIXTURES = sorted((Path(__file__).parent / "fidelity").glob("*.json"))


def test_there_are_fixtures_of_the_real_connector():
    assert FIXTURES, "tests/fidelity/ holds no fixture"
    versions = {fidelity.load(p)["connector"]["version"] for p in FIXTURES}
    assert "12.1.9" in versions


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_the_model_agrees_with_the_real_connector(path):
    from adapters.connect.profiles import PROFILES
    from conformance.inputs.targets import target_kind

    fx = fidelity.load(path)
    # the real connector of the target it names (Confluent's; Lenses' and Aiven's known-bug runs)
    assert fx["connector"]["class"] == PROFILES[target_kind(fx["target"])].connector_class
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
