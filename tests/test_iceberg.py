"""Apache Iceberg's Kafka Connect sink 1.12.0 through the suite: its jar set resolved from Maven
(adapters/jvm/pom.xml, profile iceberg), its JDBC catalog on SQLite, S3FileIO on moto through
the fault front, on warm stacks (a KRaft broker and Connect workers on 127.0.0.1, and a spare
stack for worker-level faults). Its own named scenarios (conformance.catalog.iceberg): 1000
records across 3 partitions, a SIGKILL while the coordinator commits and one between a data
file and its announcement, S3 errors on a data file and on the commit's metadata, a zombie
worker and a rebalance. Each gives verdicts, not errors; every fault fires; exactly-once
through the table holds or is reported with its witnesses."""
from __future__ import annotations

import pytest

from conformance.catalog.iceberg import ICEBERG_OWN

pytestmark = pytest.mark.kafka

TARGET = "kafka-connect:iceberg"
# the tasks racing to create the table's namespace play in `sinkcheck run`, not here: four tasks
# on a stack cost the default test run's budget, and the race is a matter of timing
# nor does a kill after a data file, a crash as iceberg-kill-during-commit's on a warm stack;
# nor the cooperative revoke, a worker added to a stack (its recorded runs, known bug and
# workaround, are replayed by tests/test_known_bugs.py): `sinkcheck run --target
# kafka-connect:iceberg` plays all three
SCENARIOS = tuple(n for n in ICEBERG_OWN if n not in ("iceberg-tasks-create-namespace-at-once",
                                                      "iceberg-kill-after-data-file",
                                                      "iceberg-cooperative-revoke-before-first-commit"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from conformance.inputs.targets import start_connect_stack

    s = start_connect_stack(TARGET, tmp_path_factory.mktemp("stack"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def results(stack, tmp_path_factory):
    from tests.warm import play_on_warm_stacks

    return play_on_warm_stacks(TARGET, SCENARIOS, stack, tmp_path_factory, "i")


def _run(name, results):
    result = results[name]
    if isinstance(result, Exception):
        raise result
    assert result.target_info.connector_version == "1.12.0"
    assert result.translation is not None and result.translation.given  # Iceberg's own config, as given
    unfired = [f"{f.kind} {f.detail}" for f in result.observation.faults if not f.fired]
    assert not unfired, unfired
    return result


def _rows_by_seq(r) -> dict[int, int]:
    """How many times each record's seq is in the rows of the table's final snapshot."""
    from conformance.judging.objects import decode_iceberg

    final = r.observation.final_bucket
    bodies = {o.key: o.body for o in final.objects}
    counts: dict[int, int] = {}
    for key in final.committed_keys:
        for row in decode_iceberg(bodies[key], {}):
            counts[row["seq"]] = counts.get(row["seq"], 0) + 1
    return counts


def test_1000_records_across_3_partitions_land_exactly_once(results):
    from conformance.pytest_plugin import failure_block

    r = _run("iceberg-1000-records-3-partitions", results)
    assert r.claim.name == "exactly-once" and r.claim.view == "log"
    assert r.status == "pass", failure_block(r)
    assert _rows_by_seq(r) == {i: 1 for i in range(1000)}
    topic = next(iter(r.scenario.topics))
    assert r.observation.final_offsets == {f"{topic}-0": 334, f"{topic}-1": 333, f"{topic}-2": 333}
    table = r.observation.table_samples[-1]
    assert table.record_count == 1000 and table.snapshot_id is not None
    # each snapshot stores the control topic's offsets under the connector's group
    assert all(any(k.startswith("kafka.connect.offsets.control-iceberg-") for k, _ in s[3]) for s in table.snapshots)
    assert any(k.startswith("control topic log end") for k in r.observation.control_offsets)


@pytest.mark.parametrize("name", [n for n in SCENARIOS if n not in (
    "iceberg-1000-records-3-partitions", "iceberg-lost-offset-commit", "iceberg-kill-during-first-commit",
    "iceberg-tombstone-first", "iceberg-zombie-worker")])
def test_exactly_once_through_the_table_under_faults(name, results):
    """Every claimed property holds through these faults, with every row once."""
    r = _run(name, results)
    verdicts = {v.property: v for v in r.verdicts}
    assert r.claim.name == "exactly-once"
    for prop in ("no-loss", "no-duplicates", "atomic-visibility", "liveness", "commit-progress"):
        v = verdicts[prop]
        assert v.claimed
        assert v.status == "pass" or v.witnesses, (prop, v.message)
    from conformance.pytest_plugin import failure_block

    assert r.status == "pass", failure_block(r)
    assert _rows_by_seq(r) == {i: 1 for i in range(len(r.scenario.records))}
    # the offsets running ahead of the table is Iceberg's design: measured, never claimed
    assert not verdicts["commit-safety"].claimed


def test_a_kill_during_the_first_commit_loses_what_it_committed_and_the_report_shows_it(results):
    """A finding about Iceberg's sink 1.12.0, pinned as the suite reports it. The task commits
    its source offsets in the transaction that sends its files to the coordinator; the
    coordinator's control-topic consumer (group `<connect group>-coord`) commits its offsets
    only after a commit round completes, and reads with auto.offset.reset=latest
    (KafkaClientFactory). Killed in its first round, the restarted coordinator starts at the
    control topic's end, past the dead one's DATA_WRITTEN events: the files never reach the
    table and their records are never read again. Where an empty round completed first (the
    records reached the task after the first START_COMMIT), the group has offsets and nothing
    is lost: either outcome is a verdict, and a loss always comes with its witnesses."""
    r = _run("iceberg-kill-during-first-commit", results)
    assert {"s3", "crash"} <= {f.kind for f in r.observation.faults}
    verdicts = {v.property: v for v in r.verdicts}
    rows = _rows_by_seq(r)
    missing = sorted(set(range(300)) - set(rows))
    assert set(rows.values()) <= {1}  # nothing twice either way
    if missing:
        loss = verdicts["no-loss"]
        assert loss.claimed and loss.status == "fail" and r.status == "fail"
        assert loss.witnesses and all(w.anomaly == "lost" for w in loss.witnesses)
        assert "the sink committed" in loss.witnesses[0].explanation
        assert loss.details["count"] == len(missing)
    else:
        assert r.status == "pass"


def test_a_zombie_worker_adds_no_row_twice_and_loses_rows_only_through_the_first_commit_loss(results):
    """The paused worker's coordinator, resumed, rejoins the coordinator's consumer group. Where
    the pause came before the first table commit (a loaded machine: measured with two busy loops
    beside the stack: 3 of 10 runs; with iceberg.kafka.auto.offset.reset=earliest 0 of 10), the group has no committed offset, and whichever coordinator
    takes the control partition starts at its end: the known bug iceberg-first-commit-lost
    (apache/iceberg#18006), with its witness. Otherwise every row lands once."""
    from conformance.catalog.known_bugs import BY_ID, reproduction
    from conformance.pytest_plugin import failure_block

    r = _run("iceberg-zombie-worker", results)
    verdicts = {v.property: v for v in r.verdicts}
    rows = _rows_by_seq(r)
    assert set(rows.values()) <= {1}
    if r.status == "fail":
        assert reproduction(BY_ID["iceberg-first-commit-lost"], r), failure_block(r)
        assert {v.property for v in r.failed()} == {"no-loss"}, failure_block(r)
        assert verdicts["no-loss"].details["count"] == 300 - len(rows)
    else:
        assert rows == {i: 1 for i in range(300)}, failure_block(r)


def test_a_lost_offset_commit_duplicates_rows_and_the_report_shows_it(results):
    """A finding, pinned: the sink's exactly-once rests on the Connect group's offsets (its task
    seeks to them; a snapshot stores only the control topic's), so when the last offset commit
    is lost the records since the one before it land in the table again. Its documentation
    does not cover this, so no-duplicates is measured, not claimed, with the rows as witnesses;
    Confluent's sink re-writes the same objects in this case."""
    r = _run("iceberg-lost-offset-commit", results)
    verdicts = {v.property: v for v in r.verdicts}
    dup = verdicts["no-duplicates"]
    assert not dup.claimed and "no-duplicates" not in r.claim.properties
    assert dup.status == "fail" and dup.witnesses and dup.witnesses[0].anomaly == "duplicated"
    assert verdicts["no-loss"].claimed and verdicts["no-loss"].status == "pass"
    assert r.status == "pass"
    rows = _rows_by_seq(r)
    assert set(rows) == set(range(200)) and set(rows.values()) == {1, 2}
    # what comes twice was committed before the fault (the first 100 records, quiet before it)
    assert {i for i, n in rows.items() if n == 2} <= set(range(100))


def test_a_tombstone_before_the_table_exists_stops_the_task_and_the_report_shows_it(results):
    """A finding about Iceberg's sink 1.12.0, pinned as the suite reports it: its writer ignores
    tombstones (IcebergWriter.write), but with auto-create the table is created from the first
    record that reaches the table's writer, and a null value has no type to create it from
    (IcebergWriterFactory.autoCreateTable: "Unable to create table from empty object"). The task
    dies; nothing after the tombstone lands. Liveness is claimed (the documented automatic table
    creation, tombstones ignored), so the run fails with the task's trace as the witness."""
    r = _run("iceberg-tombstone-first", results)
    verdicts = {v.property: v for v in r.verdicts}
    live = verdicts["liveness"]
    assert live.claimed and live.status == "fail" and r.status == "fail"
    assert "Unable to create table from empty object" in live.witnesses[0].explanation
    assert r.observation.table_samples == [] or r.observation.table_samples[-1].record_count == 0


def test_the_config_gate_shows_the_first_commit_loss_fixed_by_auto_offset_reset_earliest(results, stack, tmp_path):
    """`sinkcheck gate` of Iceberg against itself with `iceberg.kafka.auto.offset.reset=earliest`
    on the candidate (the default apache/iceberg PR #18006 proposes): the restarted coordinator
    reads the control topic from its start, finds the dead one's DATA_WRITTEN events and commits
    them. The gate's comparison of the two runs: the table's rows, not its data files' random
    names; no regression; where the baseline lost the first commit, no-loss is fixed."""
    import dataclasses

    from conformance.catalog.named import ALL_NAMED
    from conformance.playing.runner import run_scenario
    from conformance.playing.stack_sharing import on_shared_stack
    from reports import ReportContext
    from reports.context import entry
    from reports.diff import diff_entries

    name = "iceberg-kill-during-first-commit"
    base = _run(name, results)
    sc = ALL_NAMED[name]()
    sc = dataclasses.replace(sc, connector={**sc.connector, "iceberg.kafka.auto.offset.reset": "earliest"})
    # the baseline's topic names (its run is over): the two entries compare record by record
    cand = run_scenario(on_shared_stack(sc, f"-i{SCENARIOS.index(name)}"), TARGET, tmp_path / "earliest", stack=stack,
                        quiet_timeout_s=120)
    from conformance.pytest_plugin import failure_block

    assert cand.status == "pass", failure_block(cand)
    assert _rows_by_seq(cand) == {i: 1 for i in range(300)}
    ctx = ReportContext()
    diff = diff_entries([entry(base, ctx)], [entry(cand, ctx)])
    assert diff["compared"] == 1 and diff["regressions"] == []
    if base.status == "fail":  # the first commit was lost on the baseline
        assert [f["property"] for f in diff["fixed"]] == ["no-loss"]
        assert [c["kind"] for c in diff["behaviour_changes"]] == ["fixed"]
    else:  # an empty round completed first: the same rows on both sides, in files of other names
        assert diff["behaviour_changes"] == []
