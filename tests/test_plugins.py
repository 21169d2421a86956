"""Where a connector plugin comes from (adapters.connect.plugins), and a Kafka Connect target that cannot
run being a usage error before anything starts: offline, on fake plugin directories."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from adapters.connect import plugins
from adapters.connect.plugins import PluginUnavailable, locate
from sinkcheck.cli import main
from sinkcheck.exitcodes import Exit


def hub_download(parent: Path, version: str) -> Path:
    """What unpacking Confluent Hub's archive gives: confluentinc-kafka-connect-s3-<v>/lib/*.jar."""
    d = parent / f"confluentinc-kafka-connect-s3-{version}"
    (d / "lib").mkdir(parents=True)
    for jar in (f"kafka-connect-s3-{version}.jar", "kafka-connect-storage-common-12.0.12.jar"):
        (d / "lib" / jar).write_bytes(b"")
    return d


@pytest.fixture
def no_shared(monkeypatch, tmp_path):
    monkeypatch.setenv("SINKCHECK_SHARED", str(tmp_path / "no-shared"))
    monkeypatch.delenv("SINKCHECK_PLUGIN_PATH", raising=False)


def test_a_hub_download_is_found_by_its_directory_or_its_parent(tmp_path, no_shared):
    d = hub_download(tmp_path, "12.1.9")
    for given in (d, tmp_path):
        p = locate("confluent", None, [given])
        assert (p.version, p.directory, p.source) == ("12.1.9", d.resolve(), "--plugin-path")


def test_several_versions_need_a_version_and_get_exactly_that_one(tmp_path, no_shared):
    hub_download(tmp_path, "12.1.9")
    old = hub_download(tmp_path, "10.6.18")
    with pytest.raises(PluginUnavailable, match=r"holds versions 10\.6\.18, 12\.1\.9; name one"):
        locate("confluent", None, [tmp_path])
    assert locate("confluent", "10.6.18", [tmp_path]).directory == old.resolve()


def test_a_version_the_plugin_path_does_not_hold_is_named_with_what_it_holds(tmp_path, no_shared):
    hub_download(tmp_path, "12.1.9")
    with pytest.raises(PluginUnavailable, match=r"10\.6\.18 is not in the plugin path .* \(it holds 12\.1\.9\)"):
        locate("confluent", "10.6.18", [tmp_path])


def test_sinkcheck_plugin_path_is_read_when_no_flag_is_given(tmp_path, no_shared, monkeypatch):
    hub_download(tmp_path, "12.1.9")
    monkeypatch.setenv("SINKCHECK_PLUGIN_PATH", str(tmp_path))
    assert locate("confluent", None).version == "12.1.9"


def test_the_shared_layouts_give_the_default_version_or_the_one_named(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    for v in ("12.1.9", "10.6.18"):
        (shared / "confluent" / v).mkdir(parents=True)
        (shared / "confluent" / v / "lib.txt").write_text("io.confluent:kafka-connect-s3:" + v + "\n")
    (shared / "confluent" / "assemble").write_text("#!/bin/sh\n")
    monkeypatch.setenv("SINKCHECK_SHARED", str(shared))
    monkeypatch.setenv("SINKCHECK_PLUGIN_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SINKCHECK_PLUGIN_PATH", raising=False)
    p = locate("confluent", None)
    assert p.version == "12.1.9" and p.directory == tmp_path / "cache" / "confluent-12.1.9" / "confluentinc-kafka-connect-s3-12.1.9"
    assert locate("confluent", "10.6.18").version == "10.6.18"
    with pytest.raises(PluginUnavailable, match=r"9\.9\.9 is not among the shared layouts \(10\.6\.18, 12\.1\.9\)"):
        locate("confluent", "9.9.9")


def test_nowhere_to_be_had_names_every_way(no_shared):
    with pytest.raises(PluginUnavailable) as e:
        locate("confluent", None)
    for way in ("--plugin-path", "SINKCHECK_PLUGIN_PATH", "Confluent Hub", "assemble", "Docker engine"):
        assert way in str(e.value)
    with pytest.raises(PluginUnavailable, match="MAJOR.MINOR.PATCH"):
        locate("confluent", "12.1")


@pytest.mark.parametrize("target,extra,says", [
    ("kafka-connect:nosuch", [], "no such Kafka Connect sink 'nosuch'"),
    ("kafka-connect:confluent@9.9.9", [], "9.9.9"),
    ("kafka-connect:confluent", ["--plugin-path", "/nonexistent/plugins"], "/nonexistent/plugins is no directory"),
    ("pysink:no-such-bug", [], "no such Python sink variant 'no-such-bug'"),
])
def test_a_target_that_cannot_run_exits_4_within_seconds(tmp_path, capsys, no_shared, target, extra, says):
    t0 = time.monotonic()
    code = main(["run", "--target", target, *extra, "--profile", "ci", "--out", str(tmp_path / "out")])
    assert code == Exit.USAGE == 4
    assert time.monotonic() - t0 < 10
    assert says in capsys.readouterr().err
    assert not (tmp_path / "out" / "runs").exists()  # nothing ran


def test_a_connector_version_other_than_the_one_that_runs_is_a_usage_error(tmp_path, capsys, no_shared):
    hub_download(tmp_path / "p", "12.1.9")
    code = main(["run", "--target", "kafka-connect:confluent", "--plugin-path", str(tmp_path / "p"),
                 "--connector-version", "10.6.3", "--profile", "ci", "--out", str(tmp_path / "out")])
    assert code == Exit.USAGE
    assert "--connector-version 10.6.3 is not the version kafka-connect:confluent runs (12.1.9)" in capsys.readouterr().err


def test_the_plugin_kinds_know_their_jars():
    assert plugins.KINDS["confluent"].main_jar.match("kafka-connect-s3-12.1.9.jar").group(1) == "12.1.9"
    assert plugins.KINDS["camel"].main_jar.match("camel-aws-s3-sink-kafka-connector-4.18.0.jar").group(1) == "4.18.0"
    assert not plugins.KINDS["confluent"].main_jar.match("kafka-connect-s3-common-12.1.9.jar")


def aiven_archive(parent: Path, version: str) -> Path:
    """What unpacking Aiven's release archive gives: s3-sink-connector-for-apache-kafka-<v>/*.jar (flat)."""
    d = parent / f"s3-sink-connector-for-apache-kafka-{version}"
    d.mkdir(parents=True)
    for jar in (f"s3-sink-connector-for-apache-kafka-{version}.jar", f"commons-for-apache-kafka-connect-{version}.jar",
                "aws-java-sdk-s3-1.12.777.jar"):
        (d / jar).write_bytes(b"")
    return d


def test_aivens_unpacked_archive_is_found_and_its_version_read_from_its_main_jar(tmp_path, no_shared):
    d = aiven_archive(tmp_path, "3.4.2")
    p = locate("aiven", "3.4.2", [tmp_path])
    assert (p.version, p.directory, p.source) == ("3.4.2", d.resolve(), "--plugin-path")
    assert not plugins.KINDS["aiven"].main_jar.match("s3-sink-connector-for-apache-kafka-3.4.2-sources.jar")


def test_aiven_from_the_shared_layout_or_a_usage_error_naming_both_ways(tmp_path, monkeypatch, no_shared):
    with pytest.raises(PluginUnavailable) as e:
        locate("aiven", "3.4.2")
    for way in ("--plugin-path", "SINKCHECK_PLUGIN_PATH", "Aiven's release archive", "assemble"):
        assert way in str(e.value)
    shared = tmp_path / "shared"
    (shared / "aiven" / "3.4.2").mkdir(parents=True)
    (shared / "aiven" / "3.4.2" / "lib.txt").write_text("io.aiven:s3-sink-connector-for-apache-kafka:3.4.2\n")
    (shared / "aiven" / "assemble").write_text("#!/bin/sh\n")
    monkeypatch.setenv("SINKCHECK_SHARED", str(shared))
    monkeypatch.setenv("SINKCHECK_PLUGIN_CACHE", str(tmp_path / "cache"))
    p = locate("aiven", None)
    assert p.version == "3.4.2"
    assert p.directory == tmp_path / "cache" / "aiven-3.4.2" / "s3-sink-connector-for-apache-kafka-3.4.2"
    assert p.source == "../shared/aiven/assemble"


def test_aiven_with_no_plugin_anywhere_exits_4_before_anything_starts(tmp_path, capsys, no_shared):
    code = main(["run", "--target", "kafka-connect:aiven@3.4.2", "--profile", "ci", "--out", str(tmp_path / "out")])
    assert code == Exit.USAGE
    err = capsys.readouterr().err
    assert "Aiven's S3 sink connector 3.4.2" in err and "--plugin-path" in err and "assemble" in err


def test_a_laid_out_plugin_declares_its_connector_and_a_worker_reads_manifests_only_then(tmp_path):
    """A shared layout goes on a run's plugin.path as its files (symlinks: the layout stays as
    assembled) and a jar declaring its connector class as a ServiceLoader service, so a worker
    starts under plugin.discovery=service_load without scanning its jars; a user's directory goes
    as it is, and a plugin.path holding one is scanned. (Real workers start under it in every
    real-connector test: tests/test_confluent.py and the others.)"""
    import zipfile

    from adapters.connect.plugins import Plugin
    from adapters.connect.target import SINK_CONNECTOR_SERVICES, plugins_dir, service_discovery

    layout = hub_download(tmp_path / "cache", "12.1.9")
    laid = Plugin("confluent", "12.1.9", layout, "../shared/confluent/assemble")
    pdir, _ = plugins_dir(tmp_path / "run", (), plugins=[laid])
    mine = pdir / layout.name
    assert not mine.is_symlink() and (mine / "lib").resolve() == (layout / "lib").resolve()
    with zipfile.ZipFile(mine / "sinkcheck-service-manifest.jar") as z:
        assert z.read(SINK_CONNECTOR_SERVICES).decode() == "io.confluent.connect.s3.S3SinkConnector\n"
    assert not (layout / "sinkcheck-service-manifest.jar").exists()
    assert service_discovery(pdir) == {"plugin.discovery": "service_load"}

    users = Plugin("confluent", "12.1.9", layout, "--plugin-path")
    upath, _ = plugins_dir(tmp_path / "run-user", (), plugins=[users])
    assert (upath / layout.name).is_symlink() and service_discovery(upath) == {}
    extra, _ = plugins_dir(tmp_path / "run-extra", (), plugins=[laid], extra=[tmp_path / "cache"])
    assert service_discovery(extra) == {}
