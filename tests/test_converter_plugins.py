"""The Schema Registry converter plugins on sinkcheck's Kafka Connect workers
(adapters.connect.converters): which class each converter a user names runs as, when a worker
gets them, and, on a real worker started by sinkcheck, both loaded and running in a task."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.connect import converters
from adapters.connect.converters import (AVRO_CONVERTER, JSON_SCHEMA_CONVERTER, PROTOBUF_CONVERTER,
    REGISTRY_AVRO_CONVERTER, ConverterPluginsUnavailable, needs_registry_converters, worker_class,
    worker_converter_config)

JSON = "org.apache.kafka.connect.json.JsonConverter"
AVRO_VALUES = {"value.converter": AVRO_CONVERTER, "value.converter.schema.registry.url": "http://registry:8081"}


def test_each_converter_a_user_names_runs_as_sinkchecks_stand_in_itself_or_not_at_all():
    assert worker_class(AVRO_CONVERTER) == REGISTRY_AVRO_CONVERTER
    assert worker_class(PROTOBUF_CONVERTER) == PROTOBUF_CONVERTER
    assert worker_class(JSON) == JSON
    with pytest.raises(ConverterPluginsUnavailable,
                       match="JsonSchemaConverter cannot run.*Confluent Hub.*--plugin-path"):
        worker_class(JSON_SCHEMA_CONVERTER)


def test_the_worker_gets_the_classes_it_runs_and_the_registry_settings_as_given():
    cfg = {**AVRO_VALUES, "key.converter": PROTOBUF_CONVERTER, "key.converter.schema.registry.url": "mock://k"}
    assert worker_converter_config(cfg) == {**cfg, "value.converter": REGISTRY_AVRO_CONVERTER}
    # Confluent's own AvroConverter, where the worker loaded it (a user's --plugin-path), is kept
    assert worker_converter_config(cfg, {AVRO_CONVERTER, PROTOBUF_CONVERTER}) == cfg
    with pytest.raises(ConverterPluginsUnavailable, match="has not loaded it: its plugin.path lacks .*converters"):
        worker_converter_config(cfg, {JSON})
    with pytest.raises(ConverterPluginsUnavailable, match="JsonSchemaConverter"):
        worker_converter_config({"value.converter": JSON_SCHEMA_CONVERTER})
    assert worker_converter_config({"value.converter": JSON}, set()) == {"value.converter": JSON}


@pytest.mark.parametrize("cfg,needs", [
    (AVRO_VALUES, True),
    ({"key.converter": f" {PROTOBUF_CONVERTER} "}, True),
    ({"value.converter": REGISTRY_AVRO_CONVERTER}, True),
    ({"value.converter": JSON_SCHEMA_CONVERTER}, True),
    ({"value.converter": JSON, "value.converter.schemas.enable": "false"}, False),
    ({"header.converter": AVRO_CONVERTER}, False),  # a header converter must be a HeaderConverter
    ({}, False),
])
def test_which_configs_need_the_converter_plugins(cfg, needs):
    assert needs_registry_converters(cfg) is needs


def test_a_worker_gets_the_converter_plugins_only_for_a_config_naming_one(tmp_path, monkeypatch):
    """KafkaConnectTarget's own stack: plugin.path is [its plugins dir] plus, on demand, the
    converters' parent."""
    from adapters.connect import target as target_mod

    started = []

    class Stack:
        def __init__(self, run_dir, *, plugin_paths, **kw):
            started.append([str(p) for p in plugin_paths])

        def start(self):
            raise RuntimeError("stop here")

    monkeypatch.setattr(target_mod, "KafkaStack", Stack)
    def plugins_dir(run_dir, *a, **kw):
        (Path(run_dir) / "plugins").mkdir(parents=True)
        return Path(run_dir) / "plugins", {}

    monkeypatch.setattr(target_mod, "plugins_dir", plugins_dir)
    monkeypatch.setattr(converters, "converter_plugins", lambda **kw: [Path("/cache/converters")])
    base = {"connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": "t"}
    for cfg in (base, {**base, **AVRO_VALUES}):
        with pytest.raises(RuntimeError, match="stop here"):
            target_mod.KafkaConnectTarget(tmp_path / str(len(started)), profile="filesink").start(cfg, {"t": 1})
    assert started == [[str(tmp_path / "0" / "plugins")], [str(tmp_path / "1" / "plugins"), "/cache/converters"]]


def test_laying_them_out_names_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("SINKCHECK_SHARED", str(tmp_path))  # a shared directory without confluent/maven
    with pytest.raises(ConverterPluginsUnavailable, match=f"{tmp_path}/confluent/maven, is not here"):
        converters.converter_plugins(tmp_path / "cache")
    monkeypatch.delenv("SINKCHECK_SHARED")
    if converters.plugins.shared_root() is None:
        pytest.skip("no ../shared/confluent beside this checkout")
    monkeypatch.setattr(converters.shutil, "which", lambda name: None)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(ConverterPluginsUnavailable, match=r"`mvn` \(Apache Maven 3.8\+\) and `javac`"):
        converters.converter_plugins(tmp_path / "cache")
    assert not (tmp_path / "cache" / "converters").exists()


@pytest.mark.kafka
def test_a_real_worker_loads_both_converters_and_runs_them_in_a_task(tmp_path):
    """sinkcheck's own target starts the stack for a FileStreamSink whose keys are read by
    ProtobufConverter and values by AvroConverter (each with an in-memory registry, mock://):
    the worker lists both classes, the task runs with them, and a tombstone goes through both."""
    from adapters.connect.connector_config import default_config
    from adapters.connect.target import KafkaConnectTarget
    from adapters.observation import RecordToProduce
    from adapters.processes.managed import wait_until

    try:
        root = converters.converter_plugins(progress=print)[0]
    except ConverterPluginsUnavailable as e:
        pytest.fail(f"the converter plugins cannot be laid out here: {e}")
    for cls in (REGISTRY_AVRO_CONVERTER, PROTOBUF_CONVERTER):
        assert len(list((root / converters.PLUGIN_DIRS[cls] / "lib").glob("*.jar"))) > 20

    cfg = default_config("filesink", "orders", None, **{
        "key.converter": PROTOBUF_CONVERTER, "key.converter.schema.registry.url": "mock://sinkcheck-keys",
        "value.converter": AVRO_CONVERTER, "value.converter.schema.registry.url": "mock://sinkcheck-values"})
    target = KafkaConnectTarget(tmp_path, profile="filesink")
    try:
        target.start(cfg, {"orders": 1})  # returns once the task is RUNNING: both converters configured
        assert str(root) in target.stack.plugin_paths
        rest = target.rest
        loaded = {p["class"]: p for p in rest.request("GET", "/connector-plugins?connectorsOnly=false")}
        for cls in (REGISTRY_AVRO_CONVERTER, PROTOBUF_CONVERTER):
            assert loaded.get(cls, {}).get("type") == "converter", (cls, sorted(loaded))
        on_worker = rest.request("GET", f"/connectors/{target.name}/config")
        assert on_worker["key.converter"] == PROTOBUF_CONVERTER
        assert on_worker["value.converter"] == REGISTRY_AVRO_CONVERTER
        assert target.config["value.converter"] == AVRO_CONVERTER  # what the model reads: the user's name

        target.produce([RecordToProduce("orders", 0, 1_700_000_000_000, None, None)])
        out = Path(target.config["file"])
        wait_until(lambda: out.exists() and out.read_text().splitlines() == ["null"], 60,
                   f"the tombstone in {out}", log=target.stack.workers[0].log_path)
        states = json.dumps(target.status())
        assert "FAILED" not in states, states
        print("worker start-up:", target.stack.startup_times())
    finally:
        target.stop()
