"""Connector config parsing and validation (spec §15): each rejection names the property and
says when the real connector rejects it."""
from __future__ import annotations

import json

import pytest

from reference_impl.config import ConfigError, ConfigSyntaxError, load_config_text, parse_config
from sinkcheck.cli import main
from tests.modelrun import BASE, connector, record


def flat(**over: str) -> dict[str, str]:
    return {**BASE, "flush.size": "3", **over}


BAD_CONFIGS = [
    # (config overrides, property named, phase)
    ({"flush.size": "three"}, "flush.size", "config"),
    ({"flush.size": None}, "flush.size", "config"),
    ({"s3.part.size": "1024"}, "s3.part.size", "config"),
    ({"s3.compression.type": "snappy"}, "s3.compression.type", "config"),
    ({"rotate.schedule.interval.ms": "60000"}, "timezone", "config"),
    ({"timezone": "Mars/Olympus"}, "timezone", "config"),
    ({"format.class": "io.confluent.connect.s3.format.avro.AvroFormat", "s3.compression.type": "gzip"},
     "s3.compression.type", "validate"),
    ({"behavior.on.null.values": "write"}, "behavior.on.null.values", "validate"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.FieldPartitioner"}, "partition.field.name", "validate"),
    ({"s3.wan.mode": "true"}, "s3.wan.mode", "validate"),
    ({"s3.schema.partition.affix.type": "prefix"}, "s3.schema.partition.affix.type", "config"),
    ({"store.kafka.keys": "yes"}, "store.kafka.keys", "config"),
    ({"filename.offset.zero.pad.width": "-1"}, "filename.offset.zero.pad.width", "config"),
    ({"behavior.on.null.values": "drop"}, "behavior.on.null.values", "config"),
]


@pytest.mark.parametrize("over,prop,phase", BAD_CONFIGS, ids=[b[1] + ":" + str(i) for i, b in enumerate(BAD_CONFIGS)])
def test_R15_invalid_config_is_rejected_naming_the_property(over, prop, phase):
    raw = {k: v for k, v in flat(**{k: v for k, v in over.items() if v is not None}).items()}
    for k, v in over.items():
        if v is None:
            raw.pop(k)
    with pytest.raises(ConfigError) as e:
        parse_config(raw)
    problem = next(p for p in e.value.problems if p.property == prop)
    assert problem.phase == phase
    assert prop in str(e.value)


@pytest.mark.parametrize("over,prop", [
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
      "locale": "en", "timezone": "UTC", "path.format": "'y'=YYYY"}, "partition.duration.ms"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "timezone": "UTC"}, "locale"),
    ({"partitioner.class": "io.confluent.connect.storage.partitioner.DailyPartitioner", "locale": "en"}, "timezone"),
])
def test_R6_3_time_partitioner_settings_fail_only_at_task_start(tmp_path, over, prop):
    cfg = parse_config(flat(**over))  # accepted: connector validation does not catch these
    assert [p.property for p in cfg.task_start_problems][0] == prop
    (tmp_path / "c.json").write_text(json.dumps(flat(**over)))
    (tmp_path / "r.jsonl").write_text(json.dumps(record(0)) + "\n")
    assert main(["model", "--config", str(tmp_path / "c.json"), "--records", str(tmp_path / "r.jsonl"),
                 "--out", str(tmp_path / "o.json")]) == 0
    out = json.loads((tmp_path / "o.json").read_text())
    assert out["task_failure"]["offset"] is None and out["task_failure"]["rule"] == "R6.3"
    assert prop in out["task_failure"]["message"] and out["objects"] == []


def test_malformed_json_reports_line_and_column():
    with pytest.raises(ConfigSyntaxError) as e:
        load_config_text('{\n  "name": "s3",\n  "config": {"flush.size": "3",}\n}')
    assert (e.value.line, e.value.column) == (3, 32)


def test_cli_malformed_json_exits_4_with_position(tmp_path, capsys):
    (tmp_path / "c.json").write_text('{"config": {"flush.size": 3')
    (tmp_path / "r.jsonl").write_text("")
    code = main(["model", "--config", str(tmp_path / "c.json"), "--records", str(tmp_path / "r.jsonl"),
                 "--out", str(tmp_path / "o.json")])
    assert code == 4
    assert "line 1, column" in capsys.readouterr().err


def test_cli_bad_config_names_property_and_exits_4(tmp_path, capsys):
    (tmp_path / "c.json").write_text(json.dumps(connector(flush_size=3, s3_part_size=10)))
    (tmp_path / "r.jsonl").write_text("")
    assert main(["model", "--config", str(tmp_path / "c.json"), "--records", str(tmp_path / "r.jsonl"),
                 "--out", str(tmp_path / "o.json")]) == 4
    err = capsys.readouterr().err
    assert "s3.part.size" in err and "5242880" in err


def test_connect_post_body_and_flat_map_are_the_same_config():
    a = parse_config(connector(flush_size=3))
    b = parse_config(flat())
    assert (a.name, b.name) == ("s3-sink", None)
    assert a.flush_size == b.flush_size == 3 and a.format_class == b.format_class


@pytest.mark.parametrize("spelling", ["backward", "Backward", "nonsense"])
def test_R14_6_unknown_schema_compatibility_falls_back_to_none(spelling):
    assert parse_config(flat(**{"schema.compatibility": spelling})).schema_compatibility == "NONE"


def test_R3_8_flush_size_is_not_sign_checked():
    assert parse_config(flat(**{"flush.size": "-5"})).flush_size == -5


def test_R15_defaults():
    c = parse_config(flat())
    assert (c.topics_dir, c.directory_delim, c.file_delim, c.zero_pad_width) == ("topics", "/", "+", 10)
    assert (c.rotate_interval_ms, c.rotate_schedule_interval_ms, c.rotate_file_on_partition_change) == (-1, -1, True)
    assert (c.partitioner, c.timestamp_extractor, c.behavior_on_null_values) == ("default", "wallclock", "fail")
    assert (c.part_size, c.enable_conditional_writes, c.max_files_scan_limit) == (26214400, True, 100)


def test_R12_3_write_policy_does_not_exist_before_10_4_0():
    with pytest.raises(ConfigError) as e:
        parse_config(flat(**{"behavior.on.null.values": "write", "store.kafka.keys": "true"}), version="10.3.5")
    assert e.value.problems[0].property == "behavior.on.null.values"


def test_unknown_connector_version_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "c.json").write_text(json.dumps(connector(flush_size=3)))
    (tmp_path / "r.jsonl").write_text("")
    assert main(["model", "--config", str(tmp_path / "c.json"), "--records", str(tmp_path / "r.jsonl"),
                 "--connector-version", "latest", "--out", str(tmp_path / "o.json")]) == 4
    assert "--connector-version" in capsys.readouterr().err
