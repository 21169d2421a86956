"""The Schema Registry converters on sinkcheck's Kafka Connect workers: two plugin directories,
laid out once from the project's own pom and source, and the class each user-written converter
class runs as.

    converter_plugins()    # [~/.cache/sinkcheck/plugins/converters]: one plugin.path entry holding
                           #   sinkcheck-avro-converter/lib/*.jar            sinkcheck.connect.RegistryAvroConverter
                           #   confluent-protobuf-converter-7.7.8/lib/*.jar  Confluent's ProtobufConverter 7.7.8
    worker_class("io.confluent.connect.avro.AvroConverter")     # "sinkcheck.connect.RegistryAvroConverter"

Their jars come from `adapters/jvm/converters/pom.xml` (profiles avro-converter and
protobuf-converter): the io.confluent artifacts from the Maven-layout repository
`../shared/confluent/maven` beside the checkout (Confluent's public source, built; found as
adapters.connect.plugins finds `../shared/confluent/assemble`, `SINKCHECK_SHARED` overrides),
the rest from Maven's default repository; Kafka's own jars come from the worker. The Avro
converter's class is compiled here (`javac --release 17`) against kafka-clients and connect-api of
the 'kafka' jar set. A stamp holding the hash of the pom and the source marks the layout complete;
a later call returns at once (`SINKCHECK_PLUGIN_CACHE` moves the cache, as for connector plugins).

    python -m adapters.connect.converters       # lay them out ahead of time and print the directory
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping

from adapters.connect import plugins
from adapters.processes import jars

AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"
PROTOBUF_CONVERTER = "io.confluent.connect.protobuf.ProtobufConverter"
JSON_SCHEMA_CONVERTER = "io.confluent.connect.json.JsonSchemaConverter"
REGISTRY_AVRO_CONVERTER = "sinkcheck.connect.RegistryAvroConverter"
CONFLUENT_VERSION = "7.7.8"

# the converter class a connector config names -> the class the worker runs (None: none can run here)
WORKER_CLASSES: Mapping[str, str | None] = {
    AVRO_CONVERTER: REGISTRY_AVRO_CONVERTER,
    PROTOBUF_CONVERTER: PROTOBUF_CONVERTER,
    JSON_SCHEMA_CONVERTER: None,
}
UNAVAILABLE: Mapping[str, str] = {
    JSON_SCHEMA_CONVERTER: (
        "Confluent's JsonSchemaConverter (io.confluent:kafka-connect-json-schema-converter) is published only in "
        "Confluent's own Maven repository and on Confluent Hub, and ../shared/confluent does not carry it; sinkcheck "
        "has no stand-in for it. Give a plugin directory holding it with --plugin-path, or use AvroConverter or "
        "ProtobufConverter"),
}
# the classes on the worker, each in its plugin directory (the name under the plugin.path entry)
PLUGIN_DIRS: Mapping[str, str] = {
    REGISTRY_AVRO_CONVERTER: "sinkcheck-avro-converter",
    PROTOBUF_CONVERTER: f"confluent-protobuf-converter-{CONFLUENT_VERSION}",
}
# a worker's header.converter must be a HeaderConverter, which none of these is
CONVERTER_KEYS = ("key.converter", "value.converter")

HERE = Path(__file__).resolve().parents[1] / "jvm" / "converters"
POM = HERE / "pom.xml"
SOURCES = (HERE / "src" / "sinkcheck" / "connect" / "RegistryAvroConverter.java",)
STAMP = ".sinkcheck-stamp"
SERVICES = "META-INF/services/org.apache.kafka.connect.storage.Converter"
# the jar sinkcheck adds to a plugin directory to declare its classes as services
SERVICE_MANIFEST_JAR = "sinkcheck-service-manifest.jar"


class ConverterPluginsUnavailable(plugins.PluginUnavailable):
    """The converter plugins cannot be laid out or run here: the message names what is missing."""


def worker_class(name: str) -> str:
    """The class a sinkcheck worker runs for converter class `name`: sinkcheck's stand-in where
    there is one, `name` itself otherwise. Raises ConverterPluginsUnavailable for a class none
    can run here (JsonSchemaConverter), with the reason."""
    name = name.strip()
    runs = WORKER_CLASSES.get(name, name)
    if runs is None:
        raise ConverterPluginsUnavailable(f"{name} cannot run on sinkcheck's workers: {UNAVAILABLE[name]}")
    return runs


def needs_registry_converters(connector_config: Mapping[str, object]) -> bool:
    """Whether a connector config names a Schema Registry converter (as a user writes it, or as
    sinkcheck's worker runs it) for its keys or values: then its worker needs converter_plugins()
    on its plugin.path."""
    names = set(WORKER_CLASSES) | {c for c in WORKER_CLASSES.values() if c}
    return any(str(connector_config.get(k, "")).strip() in names for k in CONVERTER_KEYS)


def worker_converter_config(connector_config: Mapping[str, str],
                            loaded: Collection[str] | None = None) -> dict[str, str]:
    """What is sent to the worker for `connector_config`: each Schema Registry converter class
    replaced by the class the worker runs (its `<key>.converter.*` settings stay: both classes read
    the same ones). `loaded`: the converter classes the worker has (GET /connector-plugins); a class
    it loads itself (Confluent's own AvroConverter from a user's --plugin-path) is kept, and one it
    can run neither way is a ConverterPluginsUnavailable naming why."""
    out = dict(connector_config)
    for k in CONVERTER_KEYS:
        name = str(out.get(k, "")).strip()
        if name not in WORKER_CLASSES or (loaded is not None and name in loaded):
            continue
        runs = worker_class(name)
        if loaded is not None and runs not in loaded:
            raise ConverterPluginsUnavailable(
                f"{k}={name} runs as {runs} on sinkcheck's workers, and this worker has not loaded it: "
                f"its plugin.path lacks {converters_dir()} (it was started for configs without Schema Registry "
                f"converters; adapters.connect.converters.converter_plugins() gives the entry to add)")
        out[k] = runs
    return out


def describe_worker_classes(connector_config: Mapping[str, str]) -> str:
    """For the report: how each registry converter of a config runs on sinkcheck's workers."""
    parts = []
    for k in CONVERTER_KEYS:
        name = str(connector_config.get(k, "")).strip()
        if name == AVRO_CONVERTER:
            parts.append(f"{k}={name} runs as {REGISTRY_AVRO_CONVERTER}: Confluent's AvroData and Avro "
                         f"(de)serializer {CONFLUENT_VERSION} behind a converter class of sinkcheck's, held line by "
                         f"line to Confluent's AvroConverter {CONFLUENT_VERSION}")
        elif name == PROTOBUF_CONVERTER:
            parts.append(f"{k}={name}: Confluent's own, {CONFLUENT_VERSION}")
    return "; ".join(parts)


def converters_dir(cache_root: Path | None = None) -> Path:
    """Where the converter plugins are laid out: `converters/` in the plugin cache
    (adapters.connect.plugins.cache_root(): ~/.cache/sinkcheck/plugins, SINKCHECK_PLUGIN_CACHE)."""
    return (Path(cache_root) if cache_root is not None else plugins.cache_root()) / "converters"


def source_hash() -> str:
    """The stamp of a complete layout: the pom, the source, and the Kafka it is compiled against."""
    h = hashlib.sha256()
    for f in (POM, *SOURCES):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    h.update(f"kafka {jars.KAFKA_VERSION}; javac --release 17".encode())
    return h.hexdigest()


def is_laid_out(cache_root: Path | None = None) -> bool:
    stamp = converters_dir(cache_root) / STAMP
    return stamp.is_file() and stamp.read_text().strip() == source_hash()


def confluent_repository() -> Path:
    """The Maven-layout repository of Confluent's artifacts beside the checkout, or a
    ConverterPluginsUnavailable naming where it was looked for."""
    shared = plugins.shared_root()
    repo = shared / "confluent" / "maven" if shared else None
    if repo is None or not (repo / "io" / "confluent" / "kafka-schema-registry-parent" / CONFLUENT_VERSION).is_dir():
        where = str(repo) if repo else f"../shared/confluent/maven beside the checkout ({plugins.REPO.parent}/shared)"
        raise ConverterPluginsUnavailable(
            f"the Schema Registry converter plugins cannot be laid out: the repository of Confluent's "
            f"{CONFLUENT_VERSION} artifacts, {where}, is not here (SINKCHECK_SHARED names another shared "
            f"directory). They are built from Confluent's public source and are on no repository this machine "
            f"reaches.")
    return repo


def _jdk_tool(name: str) -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    return shutil.which(name)


def converter_plugins(cache_root: Path | None = None, *, progress: Callable[[str], None] | None = None,
                      timeout_s: float = 900) -> list[Path]:
    """The plugin.path entries that hold the converter plugins: `<cache_root>/converters`
    (default ~/.cache/sinkcheck/plugins/converters), laid out on first use (16 s here with Maven's local
    repository warm; later calls return at once). Raises ConverterPluginsUnavailable naming what is missing
    (../shared/confluent's repository, mvn, javac) or the log of what failed."""
    root = converters_dir(cache_root)
    if is_laid_out(cache_root):
        return [root]
    repo = confluent_repository()
    javac = _jdk_tool("javac")
    missing = [what for what, ok in (("`mvn` (Apache Maven 3.8+)", shutil.which("mvn")),
                                     ("`javac` (a JDK 17; a JRE has none)", javac)) if not ok]
    if missing:
        raise ConverterPluginsUnavailable(
            f"the Schema Registry converter plugins cannot be laid out: {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not on PATH (nor in JAVA_HOME). Install "
            f"{'them' if len(missing) > 1 else 'it'}, then run `python -m adapters.connect.converters`.")
    with _lock(root.parent / f".{root.name}.lock"):
        if is_laid_out(cache_root):
            return [root]
        if progress:
            progress(f"sinkcheck: laying out the Schema Registry converter plugins (Avro, Protobuf; Confluent "
                     f"{CONFLUENT_VERSION}) into {root} (first use only)...")
        t0 = time.monotonic()
        root.parent.mkdir(parents=True, exist_ok=True)
        log = root.parent / f"{root.name}.build.log"
        tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
        os.chmod(tmp, 0o755)
        try:
            with open(log, "w") as out:
                avro_lib = tmp / PLUGIN_DIRS[REGISTRY_AVRO_CONVERTER] / "lib"
                _copy_jars("avro-converter", avro_lib, repo, out, log, timeout_s)
                proto_lib = tmp / PLUGIN_DIRS[PROTOBUF_CONVERTER] / "lib"
                _copy_jars("protobuf-converter", proto_lib, repo, out, log, timeout_s)
                _build_avro_converter(javac, avro_lib, tmp / "classes", out, log)
                # Confluent's jars declare no services: this manifest lets a worker with
                # plugin.discovery=service_load find ProtobufConverter too (what Kafka's
                # `connect-plugin-path sync-manifests` adds)
                write_jar(proto_lib / SERVICE_MANIFEST_JAR, {SERVICES: PROTOBUF_CONVERTER + "\n"})
            shutil.rmtree(tmp / "classes")
            (tmp / STAMP).write_text(source_hash() + "\n")
            if root.exists():
                old = root.with_name(f".{root.name}-old-{os.getpid()}")
                root.rename(old)
                shutil.rmtree(old, ignore_errors=True)
            tmp.rename(root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if progress:
            progress(f"sinkcheck: converter plugins ready in {root} ({time.monotonic() - t0:.0f}s)")
    return [root]


def _copy_jars(profile: str, lib: Path, repo: Path, out, log: Path, timeout_s: float) -> None:
    cmd = ["mvn", "-B", "-q", "-f", str(POM), "-P", profile, f"-Dsinkcheck.confluent.repo={repo.as_uri()}",
           "dependency:copy-dependencies", f"-DoutputDirectory={lib}"]
    out.write(f"$ {' '.join(cmd)}\n")
    out.flush()
    try:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout_s,
                            start_new_session=True).returncode
    except subprocess.TimeoutExpired:
        raise ConverterPluginsUnavailable(f"Maven did not resolve the {profile} jars within {timeout_s:.0f}s; "
                                          f"see {log}") from None
    if rc != 0 or not list(lib.glob("*.jar")):
        raise ConverterPluginsUnavailable(
            f"could not resolve the {profile} jars (adapters/jvm/converters/pom.xml, Confluent's artifacts from "
            f"{repo}): {jars._maven_reason(log)}. Full Maven output: {log}")


def _build_avro_converter(javac: str, lib: Path, classes: Path, out, log: Path) -> None:
    try:
        kafka = jars.ensure("kafka")  # Kafka's API to compile against: the worker's own jars
    except jars.JarFetchError as e:
        raise ConverterPluginsUnavailable(f"{SOURCES[0].name} is compiled against Kafka's jars, which are not "
                                          f"here: {e}") from None
    api = [kafka / f"kafka-clients-{jars.KAFKA_VERSION}.jar", kafka / f"connect-api-{jars.KAFKA_VERSION}.jar"]
    cp = os.pathsep.join(str(p) for p in [*api, *sorted(lib.glob("*.jar"))])
    cmd = [javac, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-d", str(classes), "-cp", cp,
           *map(str, SOURCES)]
    out.write(f"$ {' '.join(cmd)}\n")
    out.flush()
    rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True).returncode
    if rc != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
        raise ConverterPluginsUnavailable(f"javac could not compile {SOURCES[0].name} (see {log}):\n{tail}")
    files = {str(p.relative_to(classes)): p.read_bytes() for p in sorted(classes.rglob("*.class"))}
    files[SERVICES] = REGISTRY_AVRO_CONVERTER + "\n"
    write_jar(lib / "sinkcheck-avro-converter.jar", files)


def write_jar(path: Path, files: Mapping[str, str | bytes]) -> None:
    """A jar (a zip with a manifest first), its entries' times fixed so that it is the same for
    the same classes (also a plugin's service manifest: adapters.connect.target.plugins_dir)."""
    entries = {"META-INF/MANIFEST.MF": "Manifest-Version: 1.0\r\nCreated-By: sinkcheck\r\n\r\n", **files}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                       compress_type=zipfile.ZIP_DEFLATED)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def main(argv: list[str] | None = None) -> int:
    del argv
    try:
        for d in converter_plugins(progress=lambda m: print(m, file=sys.stderr)):
            for p in sorted(x for x in d.iterdir() if x.is_dir()):
                print(f"{p}: {len(list((p / 'lib').glob('*.jar')))} jars")
    except plugins.PluginUnavailable as e:
        print(f"sinkcheck: {e}", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
