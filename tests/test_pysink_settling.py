"""Failures `--profile default` found on the simulated Python sink, settled: the simulation
settles as a real worker does (work the sink has scheduled for records it holds, a scheduled
rotation or the rewrite of a file whose completion failed, happens before the run is called
quiet), and the model's boundaries do not bind a zombie that outlives a config update."""
from __future__ import annotations

from pathlib import Path

from adapters.observation import FaultEvent, Observation
from conformance.claims import C1
from conformance.runner import run_scenario, zombie_across_update
from conformance.scenario import Scenario

FIXTURES = Path(__file__).parent / "fixtures" / "pysink"


def test_R1_5_a_value_object_whose_complete_lost_its_answer_gets_its_keys_object_by_quiet(tmp_path):
    """generated-011 of `--profile default --seed 11784167`, shrunk: ByteArrayFormat with keys,
    rotate.schedule.interval.ms=2000, the answer to the value object's CompleteMultipartUpload
    dropped (S3 applied it), then a crash. The retriable error rewinds the writer (R1.5) and the
    restart rewrites the file set at the next scheduled boundary (R3.4), value then keys (R11.1).
    The run used to be called quiet 0.6 s after the restart, with the value object standing alone;
    Kafka Connect's quiet waits 8 s while the committed offsets are behind the log end, and so
    does the simulation."""
    sc = Scenario.load(FIXTURES / "lost-complete-bytearray-keys-scheduled.json")
    r = run_scenario(sc, "pysink", tmp_path)
    keys = sorted(o.key for o in r.observation.final_bucket.objects)
    assert keys == ["topics/orders/partition=0/orders+0+0000000000.bin",
                    "topics/orders/partition=0/orders+0+0000000000.keys.json"]
    assert r.observation.final_offsets == {"orders-0": 4}
    assert [v.property for v in r.verdicts if v.status == "fail"] == []


def test_C3_a_zombie_woken_after_a_config_update_writes_the_old_boundaries_and_the_model_allows_it(tmp_path):
    """A zombie paused inside a Complete wakes after a config update (flush.size 1 -> 6) and
    finishes the put it was in with flush.size=1, over keys the new task wrote with six: each
    version is whole and every record is in S3, but the files are not the model's phases. The
    model's boundaries are then possible, not required (conformance.runner.boundaries_hold)."""
    sc = Scenario.load(FIXTURES / "zombie-across-config-update.json")
    r = run_scenario(sc, "pysink", tmp_path)
    assert zombie_across_update(r.observation)
    one_record = [o for o in r.observation.final_bucket.objects if o.key.endswith("orders+0+0000000001.bin.gz")]
    assert len(one_record) == 1  # the zombie's version of a key the new task wrote with 4 records
    assert [v.property for v in r.verdicts if v.claimed and v.status == "fail"] == []


def test_a_config_update_after_the_zombie_resumed_leaves_the_boundaries_binding():
    faults = [FaultEvent("pause", {}, True), FaultEvent("update-config", {}, True)]
    assert zombie_across_update(Observation(faults=faults))
    assert not zombie_across_update(Observation(faults=[FaultEvent("pause", {}, True), FaultEvent("resume", {}, True),
                                                        FaultEvent("update-config", {}, True)]))
    assert not zombie_across_update(Observation(faults=[FaultEvent("pause", {}, False),
                                                        FaultEvent("update-config", {}, True)]))


def test_C1_a_record_behind_a_broken_off_commit_of_several_files_is_pending_not_lost(tmp_path):
    """FieldPartitioner: a rotation commits three files of orders-1 one after another; the answer
    to the second Complete is lost (S3 applied it), so orders-1@3 is visible while orders-1@2's
    file is rewound to (C1) and, after a crash and flush.size 4 -> 5, still waits for a fifth
    record. Nothing is committed past it: it is not yet visible, not lost."""
    sc = Scenario.load(FIXTURES / "field-partition-broken-off-commit.json")
    r = run_scenario(sc, "pysink", tmp_path)
    no_loss = next(v for v in r.verdicts if v.property == "no-loss")
    assert C1 in r.claim.caveats
    assert no_loss.status == "pass" and "orders-1@2" in no_loss.details["not_yet_visible"]


def test_C3_a_key_the_first_config_made_visible_is_rewritten_whole_after_the_update(tmp_path):
    """flush.size=1 completes orders+0+0000000001 with one record; nothing is committed before
    a crash, then flush.size becomes 6 and the new task writes the same key with two records.
    The first version is a whole object of the first config (the model keeps it as superseded),
    not a partial one."""
    sc = Scenario.load(FIXTURES / "crash-then-config-update-rewrites-a-key.json")
    r = run_scenario(sc, "pysink", tmp_path)
    key = "topics/orders/year=2024/month=05/day=01/hour=10/orders+0+0000000001.bin.gz"
    assert [len(o.offsets) for o in r.expectation.superseded if o.key == key] == [1]
    assert [len(o.offsets) for o in r.expectation.objects if o.key == key] == [2]
    etags = {o.etag for s in r.observation.bucket_samples for o in s.objects if o.key == key}
    assert len(etags) == 2  # both versions were seen
    visibility = next(v for v in r.verdicts if v.property == "atomic-visibility")
    assert visibility.status == "pass", visibility.witnesses
