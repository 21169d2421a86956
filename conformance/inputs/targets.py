"""Targets by name: `pysink[:broker|:realtime][:<variant>]` (plain `pysink` is the simulated
embedded default), `kafka-connect:<confluent|camel|aiven|iceberg|lenses>[@VERSION]`,
`spark-streaming`, `module:Class`, or a name registered in the entry-point group `sinkcheck.targets`.

A Kafka Connect target's plugin comes from `--plugin-path`/`SINKCHECK_PLUGIN_PATH` or the shared
layouts beside the checkout (adapters.connect.plugins); `@VERSION` picks the version, and the model
holds the connector to the version that runs.

A third-party target is a class implementing `adapters.target.Target` whose constructor takes
`run_dir` (a directory for its logs) and `s3_endpoint` (where S3 is: sinkcheck's S3 server,
or the fault front before it; None lets the target bring its own). A class attribute
`semantics = "confluent"` says its objects follow the Confluent S3 sink's naming and
rotation, so the model and the exactly-once claims apply to it. A class attribute
`object_format = "jsonl"` (one JSON value a line) lets the checkers decode the objects of a
target that does not follow Confluent's formats.
"""
from __future__ import annotations

import importlib
from importlib import metadata
from pathlib import Path
import os
from typing import Any, Callable, Mapping, Sequence

from adapters.target import Target

BUILTIN = ("pysink", "kafka-connect:aiven", "kafka-connect:camel", "kafka-connect:confluent",
           "kafka-connect:iceberg", "kafka-connect:lenses", "spark-streaming")
CONNECT_PROFILES = ("confluent", "camel", "aiven", "iceberg", "lenses")
# the object format of built-in targets whose objects are not Confluent's (conformance.judging.objects.DECODERS)
OBJECT_FORMATS = {"spark-streaming": "jsonl", "aiven": "aiven", "camel": "camel", "iceberg": "iceberg",
                  "lenses": "lenses"}


class TargetSpecError(ValueError):
    pass


def worker_converters(spec: str) -> Mapping[str, str]:
    """What reads a scenario's records where its config names no converter: a Kafka Connect
    worker's converters (sinkcheck's workers and the Python sink: JsonConverter with schemas),
    or, for Spark Structured Streaming, which takes the Kafka values as they are, JSON text."""
    from conformance.inputs import wire

    if target_kind(spec) == "spark-streaming":
        return wire.JSON_TEXT
    profile = connector_profile(spec)
    if profile is not None and profile.worker_converters is not None:
        return profile.worker_converters
    return wire.WORKER_CONVERTERS


def connector_profile(spec: str) -> Any:
    """The adapters.connect.profiles profile of a `kafka-connect:<profile>[@VERSION]` spec; None for
    other targets and unknown profiles."""
    if not spec.startswith("kafka-connect:"):
        return None
    from adapters.connect.profiles import PROFILES

    return PROFILES.get(connect_profile(spec)[0])


def target_kind(spec: str) -> str:
    """The claim family of a target spec (`pysink`, `confluent`, `aiven`, `camel`, `own`)."""
    if spec.startswith("pysink"):
        return "pysink"
    if spec.startswith("kafka-connect:"):
        return connect_profile(spec)[0]
    if spec == "spark-streaming":
        return "spark-streaming"
    return "own"


def connect_profile(spec: str) -> tuple[str, str | None]:
    """(profile, version or None) of `kafka-connect:<profile>[@VERSION]`."""
    rest = spec.split(":", 1)[1] if spec.startswith("kafka-connect:") else spec
    profile, _, version = rest.partition("@")
    return profile, version or None


def named_release(spec: str) -> str | None:
    """The Confluent release a target spec names (`kafka-connect:confluent@V`, `model@V`), which
    the model holds its runs to; None where the spec names none (the release is then the one that
    starts, or the model's default)."""
    if spec.startswith("model@"):
        return spec.split("@", 1)[1] or None
    profile, version = connect_profile(spec) if spec.startswith("kafka-connect:") else ("", None)
    return version if profile == "confluent" else None


def check_spec(spec: str, plugin_path: list[str] | None = None) -> None:
    """A Kafka Connect target that cannot run is a usage error before anything starts: an
    unknown connector, a version that is not one, a plugin that is nowhere to be had
    (TargetSpecError or adapters.connect.plugins.PluginUnavailable, naming the ways to provide it).
    Cheap: nothing is built or started."""
    if not spec.startswith("kafka-connect:"):
        return
    profile, version = connect_profile(spec)
    if profile not in CONNECT_PROFILES:
        raise TargetSpecError(f"--target {spec}: no such Kafka Connect sink {profile!r}; sinkcheck knows "
                              + ", ".join(f"kafka-connect:{p}[@VERSION]" for p in CONNECT_PROFILES))
    from adapters.connect import plugins

    if profile in plugins.KINDS:
        plugins.locate(profile, version, plugin_path or ())
    elif version is not None:
        raise TargetSpecError(f"--target {spec}: the {profile} plugin's version comes from its jar set; "
                              f"drop @{version}")


def check_target(spec: str, plugin_path: Sequence[str] = (), progress: Callable[[str], None] | None = None,
                 version: str | None = None) -> None:
    """Fail early (TargetSpecError: the command line exits 4) on a target that cannot be loaded
    or run: an unknown target or variant, a Kafka Connect plugin that is nowhere to be had (the
    message names the ways to provide it), a --connector-version other than the version that
    runs. A plugin from the shared layouts is laid out here, once, before the first scenario."""
    if spec.startswith("model@"):
        from reference_impl.versions import VersionError, known_version

        try:
            known_version(spec.split("@", 1)[1])
        except VersionError as e:
            raise TargetSpecError(f"--target {spec}: {e}") from None
        return
    if spec == "model":
        return
    if spec.startswith("pysink"):
        from adapters.pysink import VARIANTS

        variant = pysink_variant(spec)
        if variant not in (None, "correct") and variant not in VARIANTS:
            raise TargetSpecError(f"--target {spec}: no such Python sink variant {variant!r}; known: correct, "
                             f"{', '.join(VARIANTS)}")
        return
    if spec.startswith("kafka-connect:"):
        from adapters.connect import plugins
        from adapters.processes import jars

        try:
            check_spec(spec, list(plugin_path))
            profile, _ = connect_profile(spec)
            if profile in plugins.KINDS:
                runs = plugins.resolve(profile, connect_profile(spec)[1], plugin_path, progress=progress).version
                if profile == "confluent" and version and version != runs:
                    raise TargetSpecError(f"--connector-version {version} is not the version {spec} runs ({runs}): the "
                                     "model holds a connector to the version that runs; drop --connector-version or "
                                     f"pick kafka-connect:{profile}@{version}")
            elif not plugin_path and not os.environ.get("SINKCHECK_PLUGIN_PATH"):
                from adapters.connect.profiles import PROFILES

                jars.ensure(PROFILES[profile].jar_set or profile, quiet=progress is None)
        except plugins.PluginUnavailable as e:
            raise TargetSpecError(str(e)) from None
        except jars.JarFetchError as e:
            raise TargetSpecError(str(e)) from None
        return
    if spec in BUILTIN:
        return
    if ":" in spec:
        import importlib

        module, _, cls_name = spec.partition(":")
        try:
            getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError) as e:
            raise TargetSpecError(f"--target {spec}: cannot load {cls_name} from {module}: {e}; "
                             "give module:Class of a class implementing adapters.target.Target") from None
        return
    from importlib import metadata

    if not any(ep.name == spec for ep in metadata.entry_points(group="sinkcheck.targets")):
        raise TargetSpecError(f"--target {spec!r}: not a known target; use pysink, kafka-connect:<aiven|camel|confluent|iceberg|lenses>, "
                         "model@<version>, module:Class, or a name under the entry-point group sinkcheck.targets")


def translation_for(spec: str, config: Mapping[str, str]) -> Any:
    """How a Kafka Connect target's connector gets a scenario's config (an
    adapters.connect.connector_config.Translation: what is sent, mapped and dropped); None for other targets,
    which take the scenario's config as it is."""
    from adapters.connect.connector_config import translate

    profile = connector_profile(spec)
    return None if profile is None else translate(config, profile, worker_converters(spec))


def uploads_of(spec: str) -> str:
    """How the target writes an object: "multipart" or "put" (adapters.connect.profiles profiles)."""
    profile = connector_profile(spec)
    return profile.uploads if profile is not None else "multipart"


def parts_follow_flush(spec: str) -> bool:
    """Whether the target's objects end at each offset flush, so a file's part count is not known."""
    profile = connector_profile(spec)
    return profile.parts_follow_flush if profile is not None else False


def data_key_glob_of(spec: str) -> str | None:
    """The keys of the target's objects that hold records, where it writes others beside them."""
    profile = connector_profile(spec)
    return profile.data_key_glob if profile is not None else None


def object_format_of(spec: str) -> str | None:
    """The declared object format of a built-in target spec (None: Confluent's, or unknown)."""
    return OBJECT_FORMATS.get(target_kind(spec))


PYSINK_MODES = ("broker", "realtime")


def pysink_variant(spec: str) -> str | None:
    parts = [p for p in spec.split(":")[1:] if p not in PYSINK_MODES]
    return parts[0] if parts else None


def simulated(spec: str) -> bool:
    """The embedded default: `pysink[:<variant>]` runs in the deterministic simulation
    (adapters.pysink.targets.simulation); `pysink:realtime` and `pysink:broker` in real time."""
    return spec.split(":")[0] == "pysink" and not any(m in spec.split(":")[1:] for m in PYSINK_MODES)


def start_connect_stack(spec: str, run_dir: Path, plugin_path: list[str] | None = None,
                        registry_converters: bool = False) -> Any:
    """A started adapters.processes.stack.KafkaStack (broker, S3 server, one worker) whose plugin.path
    holds exactly the plugin of `kafka-connect:<profile>[@VERSION]`: a warm stack, shared by the
    runs of a session (each run brings its own connector, topics and bucket). With
    `registry_converters`, the Schema Registry converter plugins too (adapters.connect.converters:
    for runs whose converters read a registry's wire format; scanning them adds 4 to 8 s to each
    start of its workers) and the stack's Schema Registry."""
    from adapters.connect import converters, plugins
    from adapters.connect.profiles import PROFILES
    from adapters.connect.target import plugins_dir, service_discovery
    from adapters.processes.stack import KafkaStack

    check_spec(spec, plugin_path)
    profile, version = connect_profile(spec)
    if profile in plugins.KINDS:
        pdir, _ = plugins_dir(run_dir, (), plugins=[plugins.resolve(profile, version, plugin_path or ())])
    else:
        pdir, missing = plugins_dir(run_dir, [PROFILES[profile].jar_set or profile], extra=plugin_path or ())
        if missing and not plugin_path:
            from adapters.connect.plugins import PluginUnavailable

            raise PluginUnavailable(f"the {profile} connector plugin is not available: {'; '.join(missing.values())}")
    conv = converters.converter_plugins() if registry_converters else []
    stack = KafkaStack(run_dir, plugin_paths=[pdir, *conv],
                       worker_props={**service_discovery(pdir),
                                     **PROFILES[profile].worker_props(worker_converters(spec))}).start()
    if registry_converters:
        # started here, not on a run's first use: a child process dies with the thread that started it
        # (--pdeathsig), and the runs on a warm stack go in threads that end before the stack does
        stack.schema_registry()
    return stack


def start_broker_stack(run_dir: Path, registry: bool = False) -> Any:
    """A started KafkaStack without workers (a broker and an S3 server) for `pysink:broker`: a
    warm stack shared by a session's runs, each with its consumer group, topics emptied of an
    earlier run's records and bucket emptied. Its broker allows 1 s group sessions, as the one
    a run starts for itself does, so a zombie is evicted as quickly. With `registry`, its Schema
    Registry too, started here for the reason start_connect_stack gives."""
    from adapters.processes.stack import KafkaStack

    stack = KafkaStack(run_dir, workers=0, with_s3=True)
    stack.broker.extra_props["group.min.session.timeout.ms"] = 1000
    stack.start()
    if registry:
        stack.schema_registry()
    return stack


def make_target(spec: str, run_dir: Path, s3_endpoint: str | None = None, plugin_path: list[str] | None = None,
                workers: int = 1, stack: Any = None) -> Target:
    """`workers`: how many Kafka Connect workers a Kafka Connect target runs (two for a zombie:
    another worker takes the task over while one is stopped); `stack`: a started KafkaStack
    (start_connect_stack) it runs on instead of starting its own."""
    run_dir.mkdir(parents=True, exist_ok=True)
    if spec.startswith("pysink"):
        from adapters.pysink.targets.target import PySinkTarget

        if simulated(spec):
            from adapters.pysink.targets.simulation import SimulatedPySinkTarget

            return SimulatedPySinkTarget(run_dir, variant=pysink_variant(spec))
        mode = "broker" if ":broker" in spec else "inprocess"
        return PySinkTarget(run_dir, mode=mode, variant=pysink_variant(spec), s3_endpoint=s3_endpoint,
                            stack=stack if mode == "broker" else None)
    if spec.startswith("kafka-connect:"):
        from adapters.connect import plugins
        from adapters.connect.target import KafkaConnectTarget

        check_spec(spec, plugin_path)
        profile, version = connect_profile(spec)
        if profile in plugins.KINDS:
            plugin = plugins.resolve(profile, version, plugin_path or ())
            return KafkaConnectTarget(run_dir, profile=profile, plugin=plugin, s3_endpoint=s3_endpoint, workers=workers,
                                      stack=stack)
        if profile == "iceberg":
            from adapters.connect.iceberg import IcebergConnectTarget

            return IcebergConnectTarget(run_dir, plugin_path=plugin_path or [], s3_endpoint=s3_endpoint,
                                        workers=workers, stack=stack)
        return KafkaConnectTarget(run_dir, profile=profile, plugin_path=plugin_path or [], s3_endpoint=s3_endpoint,
                                  workers=workers, stack=stack)
    if spec == "spark-streaming":
        from adapters.spark_streaming.target import SparkStreamingTarget

        return SparkStreamingTarget(run_dir, s3_endpoint=s3_endpoint)
    if ":" in spec:
        module, _, cls_name = spec.partition(":")
        try:
            cls = getattr(importlib.import_module(module), cls_name)
        except (ImportError, AttributeError) as e:
            raise TargetSpecError(f"--target {spec}: cannot load {cls_name} from {module}: {e}") from None
        return cls(run_dir=run_dir, s3_endpoint=s3_endpoint)
    for ep in metadata.entry_points(group="sinkcheck.targets"):
        if ep.name == spec:
            return ep.load()(run_dir=run_dir, s3_endpoint=s3_endpoint)
    raise TargetSpecError(
        f"--target {spec!r}: not a known target; use one of {', '.join(BUILTIN)}, pysink:<variant>, "
        "module:Class, or a name registered under the entry-point group sinkcheck.targets")
