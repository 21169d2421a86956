"""The `spark` and `local` engines run the same fold and must give identical results."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conformance.generators.configs import connector_configs
from conformance.generators.records import put_schedules, record_streams
from reference_impl.config import ConfigError, parse_config
from reference_impl.engine.model import PutSpec, expect, parse_records_lines

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from reference_impl.engine.spark import spark_session

    session = spark_session("local[2]", app="sinkcheck-tests")
    yield session
    session.stop()


@st.composite
def scenarios(draw):
    cfg = draw(connector_configs())
    records = draw(record_streams())
    puts = draw(put_schedules(len(records))) if (draw(st.booleans()) or "rotate.schedule.interval.ms" in cfg) else None
    version = draw(st.sampled_from(["12.1.9", "10.6.0", "10.0.4"]))
    return cfg, records, puts, version


def _comparable(exp) -> dict:
    d = exp.to_json()
    d.pop("engine")
    return d


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_spark_and_local_engines_agree(spark, scenario):
    from reference_impl.engine.spark import expect_spark, records_to_dataframe

    cfg_raw, records, puts, version = scenario
    try:
        cfg = parse_config(cfg_raw, version=version)
    except ConfigError:
        assume(False)  # e.g. behavior.on.null.values=write before 10.4.0
    put_specs = [PutSpec(p["at"], p["count"]) for p in puts] if puts is not None else None
    local = expect(cfg, parse_records_lines(json.dumps(r) for r in records), put_specs)
    if not records:
        return  # an empty DataFrame has no topic-partitions to fold
    df = records_to_dataframe(spark, records)
    on_spark = expect_spark(cfg, df, put_specs)
    assert _comparable(on_spark) == _comparable(local)
    if put_specs is None:
        # a dump laid out per topic-partition, streamed with no shuffle
        dump = df.repartition(2, "topic", "partition").sortWithinPartitions("topic", "partition", "offset")
        assert _comparable(expect_spark(cfg, dump, None, clustered=True)) == _comparable(local)


def test_spark_engine_reads_a_parquet_dump_and_writes_the_manifest(spark, tmp_path):
    """A Parquet dump of a topic (no put order), streamed as clustered after a check, and
    the manifest written as Parquet."""
    from reference_impl.engine.spark import expect_spark, records_to_dataframe

    records = [{"topic": "t", "partition": p, "offset": o, "timestamp": 0, "key": None, "value": {"n": o},
                "headers": []} for p in range(3) for o in range(10)]
    (records_to_dataframe(spark, records).drop("seq").repartition(3, "partition")
     .sortWithinPartitions("partition", "offset").write.parquet(str(tmp_path / "dump.parquet")))
    from reference_impl.engine.spark import records_dataframe

    df = records_dataframe(spark, str(tmp_path / "dump.parquet"))
    cfg = parse_config({"format.class": "JsonFormat", "storage.class": "S3Storage", "s3.bucket.name": "b",
                        "flush.size": "4"})
    exp = expect_spark(cfg, df, manifest_path=str(tmp_path / "manifest"), clustered=True)
    assert exp.committed_offsets == {"t-0": 8, "t-1": 8, "t-2": 8}
    manifest = spark.read.parquet(str(tmp_path / "manifest"))
    assert manifest.filter("kind = 'object'").count() == 6
    assert sorted(r.offsets for r in manifest.filter("kind = 'open'").collect()) == [[8, 9]] * 3


def test_a_records_file_read_by_spark_keeps_string_keys_and_values_apart_from_numbers(spark, tmp_path):
    """RECORDS.jsonl through Spark: the string "123" stays a string, the number 123 a number."""
    from reference_impl.engine.spark import expect_spark, records_dataframe

    records = [{"topic": "t", "partition": 0, "offset": o, "timestamp": 0, "key": k, "value": v, "headers": []}
               for o, (k, v) in enumerate([("k0", "123"), (123, 123), ({"id": 1}, {"s": "x"})])]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    cfg = parse_config({"format.class": "JsonFormat", "storage.class": "S3Storage", "s3.bucket.name": "b",
                        "flush.size": "3", "store.kafka.keys": "true", "keys.format.class": "JsonFormat"})
    local = expect(cfg, parse_records_lines(json.dumps(r) for r in records))
    assert _comparable(expect_spark(cfg, records_dataframe(spark, str(path)))) == _comparable(local)
    rows = records_dataframe(spark, str(path)).orderBy("seq").collect()
    assert [(r["key"], r["value"]) for r in rows] == [('"k0"', '"123"'), ("123", "123"), ('{"id": 1}', '{"s": "x"}')]
