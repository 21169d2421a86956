"""The Python sink through the runner: E1 exactly as the model, a crash that loses nothing,
bad configs named, and the three multipart stories from public write-ups (the two with a
crash over a real broker)."""
from __future__ import annotations

import pytest

from adapters.target import TargetError
from conformance.catalog.named import multipart_completes, multipart_crash_in_part_four, multipart_lost_commit
from conformance.playing.runner import run_scenario
from conformance.inputs.scenario import FaultStep, Scenario

BASE = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "s3.bucket.name": "sinkcheck",
        "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"}


def records(n: int, partitions: int = 1) -> list[dict]:
    return [{"topic": "t", "partition": i % partitions, "timestamp": 1714557600000 + i, "key": None,
             "value": {"seq": i}, "headers": []} for i in range(n)]


def claimed(result, prop: str):
    return next(v for v in result.verdicts if v.property == prop)


def test_E1_on_the_python_sink_matches_the_model(tmp_path):
    r = run_scenario(Scenario("E1", {**BASE, "flush.size": "3"}, {"t": 1}, records(8)), "pysink", tmp_path)
    assert r.status == "pass", [v.to_json() for v in r.failed()]
    keys = sorted(o.key for o in r.observation.final_bucket.objects)
    assert keys == ["topics/t/partition=0/t+0+0000000000.json", "topics/t/partition=0/t+0+0000000003.json"]
    assert r.observation.final_offsets == {"t-0": 6}


def test_a_crash_mid_stream_loses_and_duplicates_nothing(tmp_path):
    sc = Scenario("crash", {**BASE, "flush.size": "4"}, {"t": 2}, records(30, 2),
                  [FaultStep(15, "wait", {"seconds": 0.8}), FaultStep(15, "crash")])
    r = run_scenario(sc, "pysink", tmp_path)
    assert r.claim.name == "exactly-once"
    for prop in ("no-loss", "no-duplicates", "exact-object-set", "commit-safety"):
        assert claimed(r, prop).status == "pass", claimed(r, prop).to_json()
    assert [f.kind for f in r.observation.faults if f.fired] == ["crash"]


def test_a_config_the_python_sink_cannot_run_names_the_property(tmp_path):
    sc = Scenario("bad", {**BASE, "flush.size": "3", "partitioner.max.open.files": "3"}, {"t": 1}, records(1))
    with pytest.raises(TargetError, match="partitioner.max.open.files"):
        run_scenario(sc, "pysink", tmp_path)


def test_unknown_variant_is_named(tmp_path):
    with pytest.raises(TargetError, match="no-such-bug"):
        run_scenario(Scenario("x", {**BASE, "flush.size": "1"}, {"t": 1}, records(1)), "pysink:no-such-bug", tmp_path)


def test_story_1_multipart_upload_completes_and_the_offset_moves_from_180_to_270(tmp_path):
    """No fault here: in-process (stories 2 and 3 restart from the group's offsets, over a broker)."""
    r = run_scenario(multipart_completes(), "pysink", tmp_path, quiet_timeout_s=120)
    assert r.status == "pass", [v.to_json() for v in r.failed()]
    commits = [s.committed.get("events-0") for s in r.observation.offset_samples]
    assert 180 in commits and commits[-1] == 270
    third = next(o for o in r.observation.final_bucket.objects if o.key.endswith("+0000000180.json"))
    assert third.etag.strip('"').endswith("-4")  # 17.6 MiB in 5 MiB parts: a multipart upload of 4


@pytest.mark.kafka
def test_story_2_crash_in_part_four_shows_nothing_partial_and_the_file_reappears_whole(tmp_path):
    r = run_scenario(multipart_crash_in_part_four(), "pysink:broker", tmp_path, quiet_timeout_s=120)
    hung = next(f for f in r.observation.faults if f.kind == "s3")
    assert hung.fired and "part=4" in hung.detail
    for prop in ("atomic-visibility", "no-loss", "no-duplicates", "exact-object-set"):
        assert claimed(r, prop).status == "pass", claimed(r, prop).to_json()
    # before the crash the committed offset was 270 and the 4th file never showed up partial
    assert 270 in [s.committed.get("events-0") for s in r.observation.offset_samples]
    assert r.observation.final_offsets == {"events-0": 360}
    assert any(o.key.endswith("+0000000270.json") for o in r.observation.final_bucket.objects)


@pytest.mark.kafka
def test_story_3_lost_commit_reuploads_under_the_same_key_without_duplicates(tmp_path):
    r = run_scenario(multipart_lost_commit(), "pysink:broker", tmp_path, quiet_timeout_s=120)
    dropped = next(f for f in r.observation.faults if f.kind == "s3")
    assert dropped.fired
    assert claimed(r, "no-duplicates").status == "pass" and claimed(r, "exact-object-set").status == "pass"
    keys = [o.key for o in r.observation.final_bucket.objects]
    assert len(keys) == len(set(keys)) == 4
    versions = {o.etag for s in r.observation.bucket_samples for o in s.objects if o.key.endswith("+0000000270.json")}
    assert versions  # the same key, written again by the restart


@pytest.mark.kafka
def test_over_the_real_broker_a_crash_and_a_503_lose_nothing(tmp_path):
    """The Python sink reading a real KRaft broker (offsets committed to its consumer group),
    writing to moto through the fault front; the faults fire."""
    sc = Scenario("broker", {**BASE, "flush.size": "4"}, {"t": 2}, records(24, 2),
                  [FaultStep(0, "s3", {"operation": "UploadPart", "action": "fail", "status": 503, "nth": 2}),
                   FaultStep(12, "wait", {"seconds": 1.5}), FaultStep(12, "crash")])
    r = run_scenario(sc, "pysink:broker", tmp_path, quiet_timeout_s=60)
    assert [f.kind for f in r.observation.faults if f.fired] == ["crash", "s3"]
    for prop in ("no-loss", "no-duplicates", "commit-safety", "commit-progress"):
        assert claimed(r, prop).status == "pass", claimed(r, prop).to_json()
    assert r.observation.final_offsets == {"t-0": 12, "t-1": 12}


@pytest.mark.kafka
def test_over_the_real_broker_a_rebalance_and_a_config_update_mid_stream(tmp_path):
    """A rebalance (the member leaves the group, a new one joins and resumes from the group's
    offsets) and a flush.size change mid-stream (C3: the boundaries move, so exactly-once is not
    claimed; no-loss still is). The model splits the stream where the update restarted."""
    sc = Scenario("rebalance-and-update", {**BASE, "flush.size": "4"}, {"t": 2}, records(40, 2),
                  [FaultStep(10, "quiet", {"seconds": 30}), FaultStep(10, "rebalance"),
                   FaultStep(22, "quiet", {"seconds": 30}),
                   FaultStep(22, "update-config", {"config": {"flush.size": "3"}})])
    r = run_scenario(sc, "pysink:broker", tmp_path, quiet_timeout_s=60)
    fired = [f for f in r.observation.faults if f.fired]
    assert [f.kind for f in fired] == ["rebalance", "update-config"], r.observation.faults
    assert fired[1].restart_from, fired[1]  # the offsets the new config starts from
    assert r.claim.name == "at-least-once" and any("C3" in why for why in r.claim.reasons), r.claim
    for prop in ("no-loss", "commit-safety", "commit-progress", "naming", "rotation"):
        assert claimed(r, prop).status == "pass", claimed(r, prop).to_json()
    assert r.status == "pass", [v.to_json() for v in r.failed()]
    assert r.observation.final_offsets == {"t-0": 20, "t-1": 20}
    # flush.size 4 up to the update (files at 0 and 4, committed to 8), then 3 from offset 8 on
    starts = sorted(int(o.key.rsplit("+", 1)[1].split(".")[0])
                    for o in r.observation.final_bucket.objects if "/partition=0/" in o.key)
    assert starts == [0, 4, 8, 11, 14, 17], starts
