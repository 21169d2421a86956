"""Version profiles of the model (reference_impl.versions) for the 11.0.x and 12.0.x lines, read
from the connector's and storage-common's source at their tags."""
from __future__ import annotations

import pytest

from conformance.catalog.named import ALL_NAMED
from reference_impl.config import parse_config
from reference_impl.errors import DataError
from reference_impl.partitioning import build_partitioner
from reference_impl.connect_data import SinkRecord, from_json

FIELD = "io.confluent.connect.storage.partitioner.FieldPartitioner"
NESTED = {"type": "struct", "optional": False, "fields": [
    {"field": "seq", "type": "int64", "optional": False},
    {"field": "customer", "type": "struct", "optional": False, "fields": [
        {"field": "country", "type": "string", "optional": False}]}]}


def _record() -> SinkRecord:
    v = from_json({"schema": NESTED, "payload": {"seq": 1, "customer": {"country": "DE"}}})
    return SinkRecord("events", 0, 0, 0, value=v.value, value_schema=v.schema)


def _partitioner(version: str):
    cfg = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "s3.bucket.name": "b", "flush.size": "3",
           "format.class": "io.confluent.connect.s3.format.json.JsonFormat",
           "storage.class": "io.confluent.connect.s3.storage.S3Storage",
           "partitioner.class": FIELD, "partition.field.name": "customer.country"}
    return build_partitioner(parse_config(cfg, version=version))


@pytest.mark.parametrize("version", ["12.0.0", "12.0.7", "12.1.9"])
def test_R6_2_a_dotted_field_name_reaches_the_nested_field_from_12_0_0(version):
    assert _partitioner(version).encode(_record(), None, None) == "customer.country=DE"


@pytest.mark.parametrize("version", ["10.6.18", "11.0.1", "11.0.7"])
def test_R6_2_before_12_0_0_a_dotted_field_name_is_not_a_field_and_kills_the_task(version):
    with pytest.raises(DataError, match="not a valid field name"):
        _partitioner(version).encode(_record(), None, None)


@pytest.mark.parametrize("version", ["10.6.18", "11.0.1", "12.0.7", "12.1.9"])
def test_R3_9_the_model_rotates_under_a_wrapped_partitioner_on_every_version(version):
    # before 12.1.0 the real connector did not (known bug confluent-wrapped-partitioner-rotation, #904)
    sc = ALL_NAMED["tombstones-with-record-time-rotation"]()
    assert build_partitioner(parse_config(sc.connector, version=version)).time_based
