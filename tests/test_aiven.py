"""Aiven's S3 sink 3.4.2 through the suite: its plugin laid out from ../shared/aiven (or
SINKCHECK_PLUGIN_PATH), on warm stacks (a KRaft broker, moto and a Connect worker on 127.0.0.1,
and a spare one for worker-level faults). Its own named scenarios (conformance.catalog.aiven):
1000 records across 3 partitions, the `{{key}}` template, the default template with csv, an
explicit padded template with zstd, S3 errors on UploadPart and CompleteMultipartUpload beyond
its client's retries, a SIGKILL mid-multipart and a zombie. Each gives verdicts, not errors;
every fault fires; at-least-once holds or is reported with its witnesses."""
from __future__ import annotations

import gzip
import json

import pytest

from tests.warm import given_run, warm_fixtures

pytestmark = pytest.mark.kafka

TARGET = "kafka-connect:aiven@3.4.2"
SCENARIOS = ("aiven-1000-records-3-partitions", "aiven-key-template", "aiven-default-template-csv",
             "aiven-padded-template-zstd", "aiven-500-on-upload-part", "aiven-500-on-complete",
             "aiven-kill-mid-multipart", "aiven-zombie-task")


stack, results = warm_fixtures(TARGET, SCENARIOS, "a")


def _run(name, results):
    result = given_run(results, name, "3.4.2")  # the version the worker loaded; its own config, as given
    assert result.claim.name == "at-least-once"
    return result


def _seqs(r) -> list[int]:
    from conformance.judging.checks.base import RunData

    d = RunData(r.scenario, r.target, r.observation, r.claim, None, None, sent=dict(r.scenario.connector))
    return sorted(s for o in d.value_objects(r.observation.final_bucket) for s in d.seqs(o) or [])


def test_1000_records_across_3_partitions_are_each_once_in_s3_at_quiet(results):
    from conformance.pytest_plugin import failure_block

    r = _run("aiven-1000-records-3-partitions", results)
    assert r.status == "pass", failure_block(r)
    assert _seqs(r) == list(range(1000))
    topic = next(iter(r.scenario.topics))
    assert r.observation.final_offsets == {f"{topic}-0": 334, f"{topic}-1": 333, f"{topic}-2": 333}
    verdicts = {v.property: v for v in r.verdicts}
    for prop in ("no-loss", "commit-safety", "liveness", "naming", "file-count", "contents"):
        assert verdicts[prop].claimed and verdicts[prop].status == "pass", (prop, verdicts[prop].message)
    keys = sorted(o.key for o in r.observation.final_bucket.objects)
    assert keys and all(k.startswith(f"{topic}-") and not k.endswith(".gz") for k in keys)  # compression none


def test_a_key_template_keeps_the_latest_value_of_every_key_across_flushes_and_a_restart(results):
    from conformance.pytest_plugin import failure_block

    r = _run("aiven-key-template", results)
    assert r.claim.view == "latest-per-key"
    assert r.status == "pass", failure_block(r)
    objs = {o.key: o for o in r.observation.final_bucket.objects}
    assert sorted(objs) == [f"k{i}" for i in range(7)]
    latest = {f"k{i % 7}": i for i in range(90)}  # the last seq of each key
    for key, obj in objs.items():
        assert json.loads(obj.body)["value"]["seq"] == latest[key]


def test_the_default_template_without_a_compression_key_names_gzip_objects_without_gz(results):
    """A finding about Aiven 3.4.2, pinned: with no `file.compression.type` the objects are gzip
    (S3SinkConfig.getCompressionType: GZIP, the documented default) but the default template
    gets no `.gz` (FileNameFragment.getFilename reads FileNameFragment.getCompressionType, which
    is NONE when the key is unset), where the README says `+ .gz when compression is enabled`."""
    r = _run("aiven-default-template-csv", results)
    verdicts = {v.property: v for v in r.verdicts}
    assert verdicts["no-loss"].status == "pass" and verdicts["contents"].status == "pass"
    naming = verdicts["naming"]
    assert naming.claimed and naming.status == "fail" and r.status == "fail"
    topic = next(iter(r.scenario.topics))
    assert {(w.expected, w.observed) for w in naming.witnesses} == {(f"{topic}-{p}-0.gz", f"{topic}-{p}-0")
                                                                    for p in (0, 1)}
    for obj in r.observation.final_bucket.objects:
        assert obj.body[:2] == b"\x1f\x8b" and gzip.decompress(obj.body)


def test_an_explicit_padded_template_with_zstd_gets_no_extension(results):
    from conformance.pytest_plugin import failure_block

    r = _run("aiven-padded-template-zstd", results)
    assert r.status == "pass", failure_block(r)
    topic = next(iter(r.scenario.topics))
    assert sorted(o.key for o in r.observation.final_bucket.objects) == [
        f"{topic}/000000000{p}/00000000000000000000" for p in (0, 1)]
    assert all(o.body[:4] == b"\x28\xb5\x2f\xfd" for o in r.observation.final_bucket.objects)


@pytest.mark.parametrize("name", ["aiven-500-on-upload-part", "aiven-500-on-complete", "aiven-kill-mid-multipart"])
def test_at_least_once_through_s3_errors_beyond_retries_and_a_kill_mid_multipart(name, results):
    """The failed flush (or the killed one) is written again from the committed offsets:
    every record is there, none claimed once; an upload left open is measured, not claimed."""
    from conformance.pytest_plugin import failure_block

    r = _run(name, results)
    assert r.status == "pass", failure_block(r)
    assert set(_seqs(r)) == set(range(len(r.scenario.records)))
    verdicts = {v.property: v for v in r.verdicts}
    assert not verdicts["multipart-hygiene"].claimed and not verdicts["no-duplicates"].claimed
    if name != "aiven-500-on-upload-part":  # S3OutputStream aborts a failed part's upload, not a failed Complete's
        assert verdicts["multipart-hygiene"].status == "fail"


def test_a_zombies_late_flush_overwrites_a_newer_object_and_the_report_shows_the_loss(results):
    """A finding about Aiven 3.4.2, pinned as the suite reports it. Objects are named by their
    first offset, and a task's buffer starts at its last committed offset, as does the task that
    takes its partitions over. Resumed, the zombie's WorkerSinkTask commits on its timer before
    its next poll() learns the partitions are gone: SinkTask.flush() uploads its smaller buffer
    under the same key, unconditionally (S3OutputStream has no If-None-Match), over the new
    owner's object, whose later records are committed and now gone. Where the zombie had
    flushed its buffer before it stopped, it has nothing to write and nothing is lost: either
    outcome is a verdict, and a loss always comes with its witnesses and the overwrite."""
    r = _run("aiven-zombie-task", results)
    assert {"pause", "resume"} <= {f.kind for f in r.observation.faults}
    failed = {v.property: v for v in r.verdicts if v.claimed and v.status != "pass"}
    if not failed:
        assert r.status == "pass"
        return
    # the overwrite shows as committed records missing from S3: at quiet (no-loss) or for a while
    # after the new owner's commit (commit-safety); nothing else fails
    assert set(failed) <= {"no-loss", "commit-safety"} and r.status == "fail", sorted(failed)
    assert all(v.witnesses for v in failed.values())
    sizes: dict[str, list[int]] = {}
    for s in sorted(r.observation.bucket_samples, key=lambda b: b.at_ms):
        for o in s.objects:
            if not sizes.setdefault(o.key, []) or sizes[o.key][-1] != o.size:
                sizes[o.key].append(o.size)
    assert any(any(b < a for a, b in zip(v, v[1:])) for v in sizes.values()), sizes  # an object shrank
