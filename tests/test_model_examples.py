"""The spec's worked examples E1–E10 and two public write-ups, each through `sinkcheck model`."""
from __future__ import annotations

import json

import pytest

from tests.modelrun import connector, keys_and_offsets, record, run_model, struct

T = 1714557600000  # 2024-05-01T10:00:00Z
D = "topics/t/partition=0"
DIR10 = "topics/t/year=2024/month=05/day=01/hour=10"
DIR09 = "topics/t/year=2024/month=05/day=01/hour=09"
HOURLY = dict(partitioner_class="io.confluent.connect.storage.partitioner.HourlyPartitioner",
              timestamp_extractor="Record", timezone="UTC", locale="en-US")


def test_E1_default_partitioner_flush_size_3(tmp_path):
    exp = run_model(tmp_path, connector(flush_size=3), [record(o) for o in range(8)])
    assert keys_and_offsets(exp) == [
        (f"{D}/t+0+0000000000.json", [0, 1, 2]),
        (f"{D}/t+0+0000000003.json", [3, 4, 5]),
    ]
    assert exp["open"] == [{"topic": "t", "partition": 0, "encoded_partition": "partition=0", "offsets": [6, 7]}]
    assert exp["committed_offsets"] == {"t-0": 6}
    assert exp["task_failure"] is None


def test_E2_R2_4_field_partitioner_counts_flush_size_per_topic_partition(tmp_path):
    regions = ["eu", "us", "eu", "us", "us", "eu"]
    recs = [record(o, struct({"region": "string"}, {"region": r})) for o, r in enumerate(regions)]
    exp = run_model(tmp_path, connector(
        flush_size=3, partitioner_class="io.confluent.connect.storage.partitioner.FieldPartitioner",
        partition_field_name="region"), recs)
    assert keys_and_offsets(exp) == [
        ("topics/t/region=eu/t+0+0000000000.json", [0, 2]),
        ("topics/t/region=us/t+0+0000000001.json", [1]),
        ("topics/t/region=us/t+0+0000000003.json", [3, 4]),
        ("topics/t/region=eu/t+0+0000000005.json", [5]),
    ]
    assert exp["committed_offsets"] == {"t-0": 6}
    assert exp["open"] == []


E3_TIMES = [T, T + 1000, T + 2500, T + 3200, T + 3300, T + 7000, T + 6500, T - 1000, T + 8000]


def test_E3_R3_2_R3_3_hourly_record_time_with_partition_change(tmp_path):
    recs = [record(o, {"n": o}, ts) for o, ts in enumerate(E3_TIMES)]
    exp = run_model(tmp_path, connector(flush_size=3, rotate_interval_ms=3000, **HOURLY), recs)
    assert keys_and_offsets(exp) == [
        (f"{DIR10}/t+0+0000000000.json", [0, 1, 2]),
        (f"{DIR10}/t+0+0000000003.json", [3, 4]),
        (f"{DIR10}/t+0+0000000005.json", [5, 6]),
        (f"{DIR09}/t+0+0000000007.json", [7]),
    ]
    # at offset 8 the record is also 9000 ms past the base (offset 7's T-1000), so R3.2 holds too
    assert [o["rotation"] for o in exp["objects"]] == [
        "R3.8 flush.size", "R3.2 rotate.interval.ms", "R3.3 partition change", "R3.2 rotate.interval.ms"]
    assert exp["open"] == [{"topic": "t", "partition": 0,
                            "encoded_partition": "year=2024/month=05/day=01/hour=10", "offsets": [8]}]
    assert exp["committed_offsets"] == {"t-0": 8}


def _variant_a_expectation(exp):
    assert keys_and_offsets(exp) == [
        (f"{DIR10}/t+0+0000000000.json", [0, 1, 2]),
        (f"{DIR10}/t+0+0000000003.json", [3, 4]),
    ]
    assert sorted((f["encoded_partition"], f["offsets"]) for f in exp["open"]) == [
        ("year=2024/month=05/day=01/hour=09", [7]),
        ("year=2024/month=05/day=01/hour=10", [5, 6, 8]),
    ]
    assert exp["committed_offsets"] == {"t-0": 5}


def test_E3_variant_A_R3_10_no_partition_change_rotation_keeps_two_files_open(tmp_path):
    recs = [record(o, {"n": o}, ts) for o, ts in enumerate(E3_TIMES)]
    _variant_a_expectation(run_model(tmp_path, connector(
        flush_size=100, rotate_interval_ms=3000, rotate_file_on_partition_change="false", **HOURLY), recs))


@pytest.mark.parametrize("version", ["10.5.20", "10.6.0", "10.0.36"])
def test_E3_variant_B_R3_3_versions_without_partition_change_rotation(tmp_path, version):
    recs = [record(o, {"n": o}, ts) for o, ts in enumerate(E3_TIMES)]
    exp = run_model(tmp_path, connector(flush_size=100, rotate_interval_ms=3000, **HOURLY), recs, None,
                    "--connector-version", version)
    _variant_a_expectation(exp)
    assert exp["connector_version"] == version


def test_R3_3_partition_change_rotation_is_back_with_the_flag_in_10_6_3(tmp_path):
    recs = [record(o, {"n": o}, ts) for o, ts in enumerate(E3_TIMES)]
    exp = run_model(tmp_path, connector(flush_size=100, rotate_interval_ms=3000, **HOURLY), recs, None,
                    "--connector-version", "10.6.3")
    assert [o["offsets"] for o in exp["objects"]] == [[0, 1, 2], [3, 4], [5, 6], [7]]


def _at(hh: int, mm: int, ss: int = 0) -> int:
    return T + ((hh - 10) * 3600 + mm * 60 + ss) * 1000


E4_PUTS = [
    {"at": _at(10, 3), "count": 0},  # the writer is created
    {"at": _at(10, 5), "count": 3},
    {"at": _at(10, 9, 59), "count": 0},
    {"at": _at(10, 10, 5), "count": 0},
    {"at": _at(10, 20, 30), "count": 0},
    {"at": _at(10, 30, 40), "count": 0},
    {"at": _at(10, 31), "count": 2},
    {"at": _at(10, 40, 2), "count": 0},
]
SCHEDULED = dict(flush_size=1000, rotate_schedule_interval_ms=600000, timezone="UTC")


def test_E4_R3_4_R3_5_scheduled_rotation_with_idle_reset(tmp_path):
    exp = run_model(tmp_path, connector(**SCHEDULED), [record(o) for o in range(5)], E4_PUTS)
    assert [(o["key"], o["offsets"], o["put"]) for o in exp["objects"]] == [
        (f"{D}/t+0+0000000000.json", [0, 1, 2], 3),  # visible at the 10:10:05 empty put
        (f"{D}/t+0+0000000003.json", [3, 4], 7),  # visible at 10:40:02
    ]
    assert exp["committed_offsets"] == {"t-0": 5}
    assert exp["open"] == []


def test_E4_R3_5_before_10_0_5_the_first_record_after_idle_is_flushed_alone(tmp_path):
    exp = run_model(tmp_path, connector(**SCHEDULED), [record(o) for o in range(5)], E4_PUTS,
                    "--connector-version", "10.0.4")
    assert keys_and_offsets(exp) == [
        (f"{D}/t+0+0000000000.json", [0, 1, 2]),
        (f"{D}/t+0+0000000003.json", [3]),
        (f"{D}/t+0+0000000004.json", [4]),
    ]


def test_R3_4_scheduled_rotation_without_put_times_gives_constraints(tmp_path):
    exp = run_model(tmp_path, connector(**SCHEDULED), [record(o) for o in range(5)])
    objs = exp["objects"]
    assert objs["constraints"] is True and "rotate.schedule.interval.ms" in objs["reason"]
    (tp,) = objs["topic_partitions"]
    assert tp["offsets"] == [0, 1, 2, 3, 4] and tp["max_records_per_commit"] == 1000
    assert tp["key_pattern"] == "topics/t/{ep}/t+0+{start:010d}"


@pytest.mark.parametrize("version,extra,active", [
    ("12.1.9", {}, True),
    ("10.6.0", {}, True),
    ("10.5.23", {}, False),  # conditional writes arrive in 10.6.0
    ("12.1.9", {"store_kafka_keys": "true", "keys_format_class": "io.confluent.connect.s3.format.json.JsonFormat"}, False),
    ("12.1.9", {"enable_conditional_writes": "false"}, False),
])
def test_E5_R8_1_when_conditional_writes_are_on(tmp_path, version, extra, active):
    recs = [record(o, key="k") for o in range(5)]
    puts = [{"at": _at(10, 0), "count": 5}, {"at": _at(10, 10, 1), "count": 0}]
    exp = run_model(tmp_path, connector(**SCHEDULED, **extra), recs, puts, "--connector-version", version)
    assert exp["conditional_writes"] is active
    assert keys_and_offsets(exp) == [(f"{D}/t+0+0000000000.json", [0, 1, 2, 3, 4])]


def test_E5_R8_2_a_conflict_skips_ahead_and_duplicates(tmp_path):
    """The second run of E5: [0..4] already exists, the run restarts at 0 and collects [0..6]."""
    recs = [record(o) for o in range(7)]
    # the 412 comes at 10:10:01; the rewound records come back at the first put after
    # retry.backoff.ms (10:10:07) and the next scheduled commit (10:20:01) writes them
    puts = [{"at": _at(10, 0), "count": 7}, {"at": _at(10, 10, 1), "count": 0},
            {"at": _at(10, 10, 7), "count": 0}, {"at": _at(10, 20, 1), "count": 0}]
    exp = run_model(tmp_path, connector(**SCHEDULED), recs, puts,
                    "--existing-key", f"{D}/t+0+0000000000.json")
    assert keys_and_offsets(exp) == [(f"{D}/t+0+0000000001.json", [1, 2, 3, 4, 5, 6])]
    assert exp["committed_offsets"] == {"t-0": 7}
    assert exp["conflicts"] == [{"key": f"{D}/t+0+0000000000.json", "rule": "R8.2", "next_start": 1,
                                 "topic": "t", "partition": 0}]


def test_E5_R8_1_without_conditional_writes_an_existing_key_is_overwritten(tmp_path):
    recs = [record(o) for o in range(7)]
    puts = [{"at": _at(10, 0), "count": 7}, {"at": _at(10, 10, 1), "count": 0}]
    exp = run_model(tmp_path, connector(**SCHEDULED, enable_conditional_writes="false"), recs, puts,
                    "--existing-key", f"{D}/t+0+0000000000.json")
    assert keys_and_offsets(exp) == [(f"{D}/t+0+0000000000.json", [0, 1, 2, 3, 4, 5, 6])]
    assert exp["conflicts"] == []


def test_E6_R11_1_R11_2_keys_headers_and_gzip_triple(tmp_path):
    json_fmt = "io.confluent.connect.s3.format.json.JsonFormat"
    recs = [record(0, {"a": 1}, key="k0", headers=[["trace", "abc"]])]
    exp = run_model(tmp_path, connector(flush_size=1, s3_compression_type="gzip", store_kafka_keys="true",
                                        keys_format_class=json_fmt, store_kafka_headers="true",
                                        headers_format_class=json_fmt), recs, None, "--contents")
    (obj,) = exp["objects"]
    assert obj["key"] == f"{D}/t+0+0000000000.json.gz"
    assert obj["siblings"] == {"keys": f"{D}/t+0+0000000000.keys.json.gz",
                               "headers": f"{D}/t+0+0000000000.headers.json.gz"}
    assert obj["contents"]["headers"] == [{"headers": [{"key": "trace", "value": "abc"}]}]
    assert obj["contents"]["keys"] == ["k0"]


def test_E6_R10_5_gzip_with_default_avro_keys_fails_validation(tmp_path):
    from sinkcheck.cli import main

    (tmp_path / "c.json").write_text(json.dumps(connector(flush_size=1, s3_compression_type="gzip",
                                                          store_kafka_keys="true")))
    (tmp_path / "r.jsonl").write_text(json.dumps(record(0)) + "\n")
    code = main(["model", "--config", str(tmp_path / "c.json"), "--records", str(tmp_path / "r.jsonl"),
                 "--out", str(tmp_path / "o.json")])
    assert code == 4


def test_E7_R12_3_R6_7_tombstones_write_only_keys_under_the_tombstone_partition(tmp_path):
    recs = [record(0, "v", key="k0"), record(1, None, key="k1"), record(2, "v", key="k2"), record(3, None, key="k3")]
    exp = run_model(tmp_path, connector(flush_size=2, behavior_on_null_values="write", store_kafka_keys="true"), recs)
    assert [(o["key"], o["offsets"], o.get("value_object", True), o["siblings"]["keys"]) for o in exp["objects"]] == [
        (f"{D}/t+0+0000000000.json", [0], True, f"{D}/t+0+0000000000.keys.avro"),
        ("topics/t/tombstone/t+0+0000000001.json", [1], False, "topics/t/tombstone/t+0+0000000001.keys.avro"),
        (f"{D}/t+0+0000000002.json", [2], True, f"{D}/t+0+0000000002.keys.avro"),
        ("topics/t/tombstone/t+0+0000000003.json", [3], False, "topics/t/tombstone/t+0+0000000003.keys.avro"),
    ]
    assert exp["committed_offsets"] == {"t-0": 4}


@pytest.mark.parametrize("config,ts,key", [
    (dict(partitioner_class="io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
          partition_duration_ms=25200000, path_format="'day'=dd/'hour'=HH", locale="en", timezone="UTC"),
     1704164400000, "topics/t/day=01/hour=23/t+0+0000000000.json"),
    (dict(partitioner_class="io.confluent.connect.storage.partitioner.DailyPartitioner",
          locale="en", timezone="Asia/Kolkata"),
     1704139200000, "topics/t/year=2024/month=01/day=02/t+0+0000000000.json"),
    (dict(partitioner_class="io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
          partition_duration_ms=604800000, path_format="'year'=YYYY/'week'=ww", locale="en", timezone="UTC"),
     1704283200000, "topics/t/year=2023/week=52/t+0+0000000000.json"),
])
def test_E8_R6_3_R6_4_path_arithmetic(tmp_path, config, ts, key):
    exp = run_model(tmp_path, connector(flush_size=1, timestamp_extractor="Record", **config), [record(0, ts=ts)])
    assert keys_and_offsets(exp) == [(key, [0])]


@pytest.mark.parametrize("start,interval,boundary", [
    (_at(10, 7, 30), 600000, _at(10, 10)),
    (_at(22, 0), 7 * 3600000, _at(24, 0)),  # the day's last slot is cut at local midnight
])
def test_E8_R3_4_scheduled_boundaries(tmp_path, start, interval, boundary):
    puts = [{"at": start, "count": 1}, {"at": boundary - 1, "count": 0}, {"at": boundary, "count": 0}]
    exp = run_model(tmp_path, connector(flush_size=100, rotate_schedule_interval_ms=interval, timezone="UTC"),
                    [record(0)], puts)
    assert [(o["offsets"], o["at"]) for o in exp["objects"]] == [([0], boundary)]


META = {"type": "struct", "optional": False, "fields": [
    {"field": "meta", "type": "struct", "optional": False, "fields": [
        {"field": "ts", "type": "string", "optional": True}]}]}
META64 = {"type": "struct", "optional": False, "fields": [
    {"field": "meta", "type": "struct", "optional": False, "fields": [
        {"field": "ts", "type": "int64", "optional": True}]}]}
RECORD_FIELD = dict(flush_size=1, partitioner_class="io.confluent.connect.storage.partitioner.HourlyPartitioner",
                    timestamp_extractor="RecordField", timestamp_field="meta.ts", timezone="UTC", locale="en")


@pytest.mark.parametrize("schema,ts,dirname", [
    (META, "2024-05-01T10:15:00+02:00", "year=2024/month=05/day=01/hour=08"),
    (META, "1714551300000", "year=2024/month=05/day=01/hour=08"),
    (META64, 1714551300, "year=1970/month=01/day=20/hour=20"),  # seconds read as milliseconds
])
def test_E9_R6_5_record_field_extractor(tmp_path, schema, ts, dirname):
    exp = run_model(tmp_path, connector(**RECORD_FIELD), [record(0, {"schema": schema, "payload": {"meta": {"ts": ts}}})])
    assert keys_and_offsets(exp) == [(f"topics/t/{dirname}/t+0+0000000000.json", [0])]


def test_E9_R6_5_missing_field_kills_the_task_even_with_a_dlq(tmp_path):
    recs = [record(0, {"schema": META, "payload": {"meta": {"ts": "2024-05-01T10:15:00Z"}}}),
            record(1, {"schema": META, "payload": {"meta": {"ts": None}}})]
    exp = run_model(tmp_path, connector(**RECORD_FIELD, errors_tolerance="all",
                                        errors_deadletterqueue_topic_name="dlq"), recs)
    assert exp["task_failure"]["offset"] == 1 and exp["task_failure"]["rule"] == "R6.5"
    assert keys_and_offsets(exp) == [("topics/t/year=2024/month=05/day=01/hour=10/t+0+0000000000.json", [0])]
    assert exp["committed_offsets"] == {"t-0": 1}


def test_R1_4_a_writer_whose_own_failure_comes_later_may_not_have_run_in_the_dying_put(tmp_path):
    """t-0 dies in put 1; u-0 would die only in put 2. Writers run in a shuffled order, so u-0's
    file from put 1 may or may not exist (uncertain), and put 2 never happens."""
    ok = {"schema": META, "payload": {"meta": {"ts": "2024-05-01T10:15:00Z"}}}
    bad = {"schema": META, "payload": {"meta": {"ts": None}}}
    recs = [record(0, ok), record(0, ok, topic="u"), record(1, bad), record(1, ok, topic="u"), record(2, bad, topic="u")]
    exp = run_model(tmp_path, connector(**RECORD_FIELD), recs,
                    [{"at": 1714558500000, "count": 2}, {"at": 1714558501000, "count": 2}, {"at": 1714558502000, "count": 1}])
    assert (exp["task_failure"]["topic"], exp["task_failure"]["offset"], exp["task_failure"]["put"]) == ("t", 1, 1)
    by_key = {o["key"].rsplit("/", 1)[1]: o for o in exp["objects"]}
    assert sorted(by_key) == ["t+0+0000000000.json", "u+0+0000000000.json", "u+0+0000000001.json"]
    assert by_key["u+0+0000000001.json"].get("certain") is False
    assert "certain" not in by_key["u+0+0000000000.json"] and "certain" not in by_key["t+0+0000000000.json"]


def test_R12_1_R1_4_a_fatal_null_without_put_times_leaves_only_possible_files_before_it(tmp_path):
    """flush.size=2, a null at offset 5 under the default `fail`. Without put times the null's
    put is unknown: the files of 0–4 may each have been committed in an earlier put, none is
    certain; nothing at or after the null is ever put."""
    recs = [record(o, {"n": o}) for o in range(5)] + [record(5, None), record(6, {"n": 6})]
    exp = run_model(tmp_path, connector(flush_size=2), recs)
    assert exp["task_failure"]["offset"] == 5 and exp["task_failure"]["rule"] == "R12.1"
    assert keys_and_offsets(exp) == [("topics/t/partition=0/t+0+0000000000.json", [0, 1]),
                                     ("topics/t/partition=0/t+0+0000000002.json", [2, 3])]
    assert all(o["certain"] is False for o in exp["objects"])
    assert exp["undelivered"] == {"t-0": 2}
    # with put times the null's put is known: the put before it committed [0, 1] for sure
    exp = run_model(tmp_path, connector(flush_size=2), recs, [{"at": 1, "count": 3}, {"at": 2, "count": 4}])
    assert keys_and_offsets(exp) == [("topics/t/partition=0/t+0+0000000000.json", [0, 1])]
    assert "certain" not in exp["objects"][0]


E10_SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"field": "id", "type": "int32", "optional": False},
    {"field": "name", "type": "string", "optional": False},
    {"field": "ts", "type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp"},
    {"field": "amt", "type": "bytes", "optional": False, "name": "org.apache.kafka.connect.data.Decimal",
     "parameters": {"scale": "2"}}]}
E10_VALUE = {"schema": E10_SCHEMA, "payload": {"id": 1, "name": "a", "ts": 1704067200000, "amt": "BNI="}}


@pytest.mark.parametrize("extra,line", [
    ({}, '{"id":1,"name":"a","ts":1704067200000,"amt":"BNI="}\n'),
    ({"json_decimal_format": "NUMERIC"}, '{"id":1,"name":"a","ts":1704067200000,"amt":12.34}\n'),
])
def test_E10_R10_1_json_content(tmp_path, extra, line):
    exp = run_model(tmp_path, connector(flush_size=1, **extra), [record(0, E10_VALUE)], None, "--contents")
    assert exp["objects"][0]["contents"]["value_text"] == line


def test_E10_R10_1_string_value_is_a_quoted_json_line(tmp_path):
    exp = run_model(tmp_path, connector(flush_size=1), [record(0, "hello")], None, "--contents")
    assert exp["objects"][0]["contents"]["value_text"] == '"hello"\n'


# --- public write-ups -------------------------------------------------------------------------

PUBLIC_T = 1706713200000


def test_public_rotate_interval_ms_commits_100_102_when_103_arrives(tmp_path):
    times = [PUBLIC_T, PUBLIC_T + 1000, PUBLIC_T + 2000, PUBLIC_T + 4000, PUBLIC_T + 5000]
    recs = [record(100 + i, {"i": i}, ts) for i, ts in enumerate(times)]
    puts = [{"at": PUBLIC_T + i * 1000 + 10, "count": 1} for i in range(5)]  # one record per put
    exp = run_model(tmp_path, connector(
        flush_size=1000, rotate_interval_ms=3000, timestamp_extractor="Record", locale="en-US", timezone="UTC",
        partitioner_class="io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
        partition_duration_ms=3600000, path_format="'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"), recs, puts)
    assert [(o["key"], o["offsets"], o["put"]) for o in exp["objects"]] == [
        ("topics/t/year=2024/month=01/day=31/hour=15/t+0+0000000100.json", [100, 101, 102], 3)]
    assert exp["open"][0]["offsets"] == [103, 104]
    assert exp["committed_offsets"] == {"t-0": 103}


def test_public_rotate_schedule_interval_ms_flushes_at_the_empty_put(tmp_path):
    recs = [record(100 + i, {"i": i}, PUBLIC_T + i * 1000) for i in range(3)]
    puts = [{"at": PUBLIC_T + i * 1000, "count": 1} for i in range(3)] + [{"at": PUBLIC_T + 3000, "count": 0}]
    exp = run_model(tmp_path, connector(flush_size=1000, rotate_schedule_interval_ms=3000, timezone="UTC"), recs, puts)
    assert [(o["key"], o["offsets"], o["put"]) for o in exp["objects"]] == [
        (f"{D}/t+0+0000000100.json", [100, 101, 102], 3)]
    assert exp["open"] == [] and exp["committed_offsets"] == {"t-0": 103}


def test_R6_5_a_task_that_dies_on_its_records_dies_under_scheduled_rotation_too(tmp_path):
    """Without put times scheduled rotation gives constraints, but what kills the task (here a
    RecordField timestamp missing from the value) does not depend on the clock."""
    recs = [record(0, {"schema": META, "payload": {"meta": {"ts": "2024-05-01T10:15:00Z"}}}),
            record(1, {"schema": META, "payload": {"meta": {"ts": None}}})]
    exp = run_model(tmp_path, connector(**RECORD_FIELD, rotate_schedule_interval_ms=60000), recs)
    assert exp["objects"]["constraints"] is True
    assert (exp["task_failure"]["offset"], exp["task_failure"]["rule"]) == (1, "R6.5")
    assert "put" not in exp["task_failure"]
