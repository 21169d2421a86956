"""The Kafka Connect target: a connector plugin running in real Kafka Connect workers (Maven
jars, native JVM processes), fed by a real broker, writing to moto's S3 server.

    target = KafkaConnectTarget(run_dir, profile="aiven")            # its own stack
    target = KafkaConnectTarget(run_dir, stack=shared_stack)          # share a started stack
    target = KafkaConnectTarget(run_dir, profile="confluent", plugin_path=[d],
                                s3_endpoint=front.endpoint)           # S3 through the fault front
    target.start(config, {"orders": 3})
    target.produce([RecordToProduce("orders", 0, ts, b"k", b"v")])
    target.apply_fault(Fault("kill-worker", {"downtime_s": 1}))
    target.wait_until_quiet(60)
    obs = target.observe(); target.stop()

Fault kinds (`Fault.kind`, params): `crash` (= `kill-worker`), `kill-worker` (worker=the one
running task 0, downtime_s=0, restart=True), `pause` / `resume` (a zombie: SIGSTOP the worker
running the task and wait until another worker runs it (takeover_timeout_s=120); `resume` sends
SIGCONT; the target then needs `workers=2`), `pause-worker` (worker, duration_s=5; SIGSTOP then SIGCONT),
`add-worker`, `remove-worker` (worker=-1), `rebalance` (duration_s=10: add a worker, wait,
remove it), `update-config` (config={...}: merged and PUT mid-stream), `restart-task`
(task=0), `restart-connector`, `lose-offset-commit` (the group's last offset commit lost: the
connector stopped, its offsets set back through the REST API, resumed). They are applied by
adapters.connect.faults; what the target samples, waits on and observes is
adapters.connect.observing; the REST client is adapters.connect.rest.
"""
from __future__ import annotations

import itertools
import json
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Mapping, Sequence

from adapters.processes import jars
from adapters.s3.bucket import BucketReader
from adapters.processes.jars import KAFKA_DESCRIPTION
from adapters.connect.connector_config import (ConnectorConfigError, fill_config, onto_registry, parse_connector_config,
    profile_for, redact)
from adapters.connect.profiles import ConnectorProfile, S3Location
from adapters.connect.faults import ConnectFaults
from adapters.connect.observing import ConnectObserving
from adapters.connect.rest import ConnectRest, ConnectRestError, format_config_errors, validation_errors
from adapters.observation import Observation, ProducedRecord
from adapters.connect.plugins import Plugin, PluginUnavailable
from adapters.connect import converters
from adapters.processes.connect_worker import ConnectWorker
from adapters.processes.managed import now_ms, wait_until
from adapters.processes.moto import MotoS3Server
from adapters.processes.stack import KafkaStack
from adapters.observation import RecordToProduce
from adapters.target import Target, TargetError, TargetInfo


def plugins_dir(run_dir: Path, sets: Sequence[str] = ("filesink",), *,
                extra: Sequence[Path | str] = (), fetch: bool = True,
                plugins: Sequence[Plugin] = ()) -> tuple[Path, dict[str, str]]:
    """A `plugin.path` directory for a run: one subdirectory (a symlink into the jar cache) per
    jar set that is available, one per resolved plugin (its own directory: exactly that
    version), and one per extra directory. Returns (dir, {set: reason}) for the sets that are not."""
    d = Path(run_dir) / "plugins"
    d.mkdir(parents=True, exist_ok=True)
    for plugin in plugins:
        link = d / plugin.directory.name
        if link.exists():
            continue
        if plugin.source == "--plugin-path":  # the user's directory, as it is
            link.symlink_to(plugin.directory, target_is_directory=True)
        else:
            laid_out_with_manifest(plugin, link)
    missing: dict[str, str] = {}
    for name in sets:
        try:
            src = jars.ensure(name) if fetch or jars.is_cached(name) else None
        except jars.JarFetchError as e:
            missing[name] = str(e)
            continue
        if src is None:
            missing[name] = f"jar set {name!r} not fetched"
            continue
        link = d / name
        if not link.exists():
            link.symlink_to(src, target_is_directory=True)
    for i, p in enumerate(extra):
        link = d / f"user-{i}"
        if not link.exists():
            link.symlink_to(Path(p).resolve(), target_is_directory=True)
    return d, missing


SINK_CONNECTOR_SERVICES = "META-INF/services/org.apache.kafka.connect.sink.SinkConnector"


def laid_out_with_manifest(plugin: Plugin, into: Path) -> None:
    """A plugin from a shared layout as a worker under plugin.discovery=service_load finds it
    (service_discovery): its files (symlinks into the layout, which stays as assembled) and a jar
    declaring its connector class as a ServiceLoader service, as Kafka's `connect-plugin-path
    sync-manifests` would. The connectors' own jars declare none (a worker's start warns of
    io.confluent.connect.s3.S3SinkConnector), so without it a worker scans every class of the
    plugin's ~150 jars: 7 s of the 14 s a worker's start spent scanning, under load."""
    from adapters.connect.profiles import PROFILES

    into.mkdir(parents=True)
    for entry in sorted(plugin.directory.iterdir()):
        (into / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    converters.write_jar(into / converters.SERVICE_MANIFEST_JAR,
                         {SINK_CONNECTOR_SERVICES: PROFILES[plugin.profile].connector_class + "\n"})


def service_discovery(pdir: Path) -> dict[str, str]:
    """The plugin.discovery of a worker whose plugin.path is `pdir` (plugins_dir) and sinkcheck's
    converter plugins: service_load where sinkcheck laid out every plugin in it, so that a start
    reads manifests instead of scanning every class (laid_out_with_manifest, and the jar sets of
    Apache's connectors, which declare theirs); a user's plugin directory may declare none, and
    is scanned (Kafka's default)."""
    ours = all((e / converters.SERVICE_MANIFEST_JAR).is_file() or e.name in jars.JAR_SETS for e in pdir.iterdir())
    return {"plugin.discovery": "service_load"} if ours else {}


_bucket_seq = itertools.count(1)


class KafkaConnectTarget(ConnectFaults, ConnectObserving, Target):
    """See the module docstring."""

    def __init__(self, run_dir: Path | str, *, stack: KafkaStack | None = None,
                 profile: str | None = None, plugin_path: Sequence[Path | str] = (),
                 bucket: str | None = None, sample_interval_s: float = 1.0,
                 read_bodies: bool = True, offset_flush_interval_ms: int = 2000,
                 worker_heap: str = "768m", broker_heap: str = "512m",
                 running_timeout_s: float = 60, s3_endpoint: str | None = None,
                 plugin: Plugin | None = None, workers: int = 1):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._own_stack = stack is None
        self.stack = stack
        self.profile_name = profile
        self.plugin_path = [Path(p) for p in plugin_path]
        # the resolved plugin (adapters.connect.plugins): exactly this directory and version is loaded
        self.plugin = plugin
        self.workers = workers  # of its own stack: two where a zombie needs someone to take over
        self.bucket = bucket
        self.sample_interval_s = sample_interval_s
        self.read_bodies = read_bodies
        self.offset_flush_interval_ms = offset_flush_interval_ms
        self.worker_heap = worker_heap
        self.broker_heap = broker_heap
        self.running_timeout_s = running_timeout_s
        # where the connector reaches S3: sinkcheck's fault front before an S3 server, or None for
        # the stack's own moto
        self.s3_endpoint = s3_endpoint
        self._paused: list[ConnectWorker] = []
        self._added_workers: list[ConnectWorker] = []
        self.profile: ConnectorProfile | None = None
        self.name: str | None = None
        self.config: dict[str, str] = {}
        self.topics: dict[str, int] = {}
        self.obs = Observation()
        self._lock = threading.RLock()
        self._reader: BucketReader | None = None
        self._own_bucket = False
        self._sampler: threading.Thread | None = None
        self._stop_sampling = threading.Event()
        self._producer = None
        self._admin = None
        self._group_offsets = None
        self._s3 = None
        self._location: S3Location | None = None  # where the connector writes (set on start)
        self.sampler_errors: list[str] = []
        self.connector_version: str | None = None
        self.schema_registry: Any = None  # adapters.registry.recording.RunRegistry, where the converters read one

    # ------------------------------------------------------------------ lifecycle
    @property
    def group(self) -> str:
        return f"connect-{self.name}"

    @property
    def rest(self) -> ConnectRest:
        """The REST API of the workers that can answer (a SIGSTOPped one would hang each call)."""
        assert self.stack is not None
        return ConnectRest([w for w in self.stack.workers if w not in self._paused])

    def start(self, connector_config: Mapping[str, Any] | str | Path,
              topics: Mapping[str, int]) -> None:
        name, cfg = parse_connector_config(connector_config)
        self.profile = profile_for(cfg, self.profile_name)
        self.name = name
        if self.stack is None:
            sets = [self.profile.jar_set] if self.profile.jar_set and self.plugin is None else []
            pdir, missing = plugins_dir(self.run_dir, sets, extra=self.plugin_path,
                                        plugins=[self.plugin] if self.plugin else [])
            if missing and not self.plugin_path:
                raise PluginUnavailable(
                    f"the {self.profile.name} connector plugin is not available: "
                    f"{'; '.join(missing.values())}")
            if self.profile.jar_set is None and not self.plugin_path and self.plugin is None:
                raise PluginUnavailable(
                    f"the {self.profile.name} connector ({self.profile.connector_class}) is not "
                    f"obtainable from Maven Central; give its plugin directory with "
                    f"--plugin-path (plugin_path=...)")
            # the Schema Registry converters only where the config names one: scanning their
            # plugins adds 4 to 8 s to each start of a worker under plugin.discovery=hybrid_warn
            conv = (converters.converter_plugins(progress=lambda m: print(m, file=sys.stderr, flush=True))
                    if converters.needs_registry_converters(cfg) else [])
            self.stack = KafkaStack(self.run_dir, plugin_paths=[pdir, *conv],
                                    broker_heap=self.broker_heap, worker_heap=self.worker_heap,
                                    offset_flush_interval_ms=self.offset_flush_interval_ms,
                                    with_s3=self.s3_endpoint is None, workers=self.workers,
                                    worker_props={**service_discovery(pdir), **self.profile.worker_props({})})
            self.stack.start()
        stack = self.stack
        while len([w for w in stack.workers if w.proc is not None and w.proc.alive]) < self.workers:
            self._added_workers.append(stack.add_worker())  # a shared stack: one more for this run only
        self.obs.log_paths.update(stack.log_paths())
        self.connector_version = self._loaded_version(self.profile.connector_class)
        if self.connector_version is None:
            raise PluginUnavailable(
                f"the worker has no plugin for {self.profile.connector_class} "
                f"(profile {self.profile.name}); plugin.path: {stack.plugin_paths}")
        if self.plugin is not None and self.connector_version != self.plugin.version:
            raise TargetError(f"the worker loaded {self.profile.connector_class} {self.connector_version}, not "
                              f"{self.plugin.describe()}: is another version on its plugin.path "
                              f"({stack.plugin_paths})?")
        if self.profile.writes_s3:
            if self.s3_endpoint is None and stack.s3 is None:
                raise TargetError("this stack runs no S3 server and no s3_endpoint was given")
            self._own_bucket = self.bucket is None  # made for this run: it goes when the run is done
            self.bucket = self.bucket or f"sinkcheck-{next(_bucket_seq)}-{int(time.time())}"
            try:
                self._s3_client().create_bucket(Bucket=self.bucket)
            except Exception as e:  # noqa: BLE001
                if "BucketAlreadyOwnedByYou" not in str(e) and "BucketAlreadyExists" not in str(e):
                    raise TargetError(f"could not create bucket {self.bucket!r} at {self._endpoint()}: {e}") from None
            s3 = S3Location(self._endpoint(), self.bucket, MotoS3Server.ACCESS_KEY,
                            MotoS3Server.SECRET_KEY, MotoS3Server.REGION)
        else:
            s3 = None
        self._location = s3
        registry_url = self._start_registry(cfg, stack)
        cfg = self._complete_config(name, fill_config(cfg, self.profile, s3, topics, registry_url), s3)
        self.create_topics(topics)
        self.topics.update(topics)
        self.config = cfg
        self._mark_worker_logs()
        self._submit_config(cfg)
        self.wait_running(self.running_timeout_s, failed_ok=self.start_may_fail)
        self._start_sampler()

    def _start_registry(self, cfg: Mapping[str, str], stack: KafkaStack) -> str | None:
        """The stack's Schema Registry where the config's converters read its wire format: the
        producer registers the records' schemas there and the converters read them from it."""
        if not converters.needs_registry_converters(cfg):
            return None
        from adapters.registry.recording import stack_registry

        server = stack.schema_registry()
        dropped = [k for k in cfg if k not in onto_registry(cfg, server.url)[0]]
        self.schema_registry = stack_registry(server, cfg, dropped)
        return server.url

    def updated_config(self, changes: Mapping[str, str]) -> dict[str, str]:
        """The connector's config with a config update's `changes`, filled in as the start's was:
        an update that rewrites a property holding the bucket and topics (Lenses' KCQL, translated
        from the scenario's names) gets the run's bucket and topics in it again."""
        new = {**self.config, **changes}
        url = self.schema_registry.registry.url if self.schema_registry is not None else None
        return fill_config(new, self.profile, self._location, registry_url=url) if self.profile is not None else new

    def _complete_config(self, name: str, cfg: dict[str, str], s3: S3Location | None) -> dict[str, str]:
        """What a sink needs beside the endpoint, bucket and credentials, from what the run
        starts for it (FileStreamSink: its output file)."""
        if self.profile is not None and self.profile.name == "filesink":
            cfg.setdefault("file", str(self.run_dir / f"{name}.out"))
        return cfg

    def _loaded_version(self, cls: str) -> str | None:
        """The version of `cls` the worker loaded (GET /connector-plugins), None if it has none."""
        plugins = self.rest.request("GET", "/connector-plugins?connectorsOnly=true")
        versions = [str(p.get("version")) for p in plugins if p.get("class") == cls]
        return versions[0] if versions else None

    def validate(self, cfg: Mapping[str, str]) -> dict[str, list[str]]:
        cls = urllib.parse.quote(cfg["connector.class"], safe="")
        body = dict(cfg)
        body["name"] = self.name
        result = self.rest.request("PUT", f"/connector-plugins/{cls}/config/validate", body)
        return validation_errors(result)

    def _submit_config(self, cfg: Mapping[str, str]) -> dict[str, str]:
        """Validate and PUT `cfg` as the worker runs it (worker_config); returns what was sent."""
        sent = self.worker_config(cfg)
        errors = self.validate(sent)
        if errors:
            raise ConnectorConfigError(format_config_errors(self.name or "?", errors), errors)
        try:
            self.rest.request("PUT", f"/connectors/{urllib.parse.quote(self.name)}/config", sent)
        except ConnectRestError as e:
            if e.status == 400:
                raise ConnectorConfigError(
                    f"Kafka Connect rejected the config of connector {self.name!r}: {e}") from None
            raise
        return sent

    def worker_config(self, cfg: Mapping[str, str]) -> dict[str, str]:
        """`cfg` with each Schema Registry converter as this worker runs it: Confluent's
        AvroConverter as sinkcheck's RegistryAvroConverter unless the worker loaded Confluent's own
        (adapters.connect.converters). The connector's config (`self.config`, what the model reads)
        keeps the names the user wrote."""
        if not converters.needs_registry_converters(cfg):
            return dict(cfg)
        loaded = {str(p.get("class")) for p in self.rest.request("GET", "/connector-plugins?connectorsOnly=false")
                  if p.get("type") == "converter"}
        try:
            return converters.worker_converter_config(cfg, loaded)
        except converters.ConverterPluginsUnavailable as e:
            raise converters.ConverterPluginsUnavailable(f"{e}; plugin.path: {self.stack.plugin_paths}") from None

    def create_topics(self, topics: Mapping[str, int]) -> None:
        """The scenario's topics, empty (a shared broker may hold an earlier run's of that name)."""
        from adapters.kafka.produce import create_topics, fresh_topics

        (create_topics if self._own_stack else fresh_topics)(self.stack.bootstrap, topics)

    def status(self) -> dict[str, Any]:
        return self.rest.request("GET", f"/connectors/{urllib.parse.quote(self.name)}/status")

    def wait_running(self, timeout_s: float, failed_ok: bool = False) -> dict[str, Any]:
        """Wait until the connector and all its tasks are RUNNING; raise on FAILED. `failed_ok`:
        a task FAILED (its start() refused, the connector RUNNING) is a start that went through."""

        def ready():
            st = self.status()
            states = [st["connector"]["state"]] + [t["state"] for t in st.get("tasks", [])]
            failed = [t for t in [st["connector"], *st.get("tasks", [])]
                      if t.get("state") == "FAILED"]
            if failed and failed_ok and st["connector"]["state"] == "RUNNING" and all(
                    s in ("RUNNING", "FAILED") for s in states):
                return st
            if failed:
                raise _Failed(failed[0].get("trace", "")[:3000])
            return st if st.get("tasks") and all(s == "RUNNING" for s in states) else None

        try:
            return wait_until(ready, timeout_s,
                              f"connector {self.name!r} and its tasks to be RUNNING",
                              log=self.stack.workers[0].log_path if self.stack.workers else None,
                              fatal=(_Failed,))
        except _Failed as e:
            raise TargetError(f"connector {self.name!r} FAILED:\n{e.trace}") from None

    def stop(self) -> None:
        self._stop_sampling.set()
        if self._sampler is not None:
            self._sampler.join(timeout=30)
            self._sampler = None
        if self._producer is not None:
            try:
                self._producer.flush(5)
            except Exception:  # noqa: BLE001
                pass
            self._producer = None
        if self._group_offsets is not None:
            self._group_offsets.close()
            self._group_offsets = None
        if self.stack is not None:
            if self._own_stack:
                self.stack.stop()
            else:
                self._leave_shared_stack()

    def _leave_shared_stack(self) -> None:
        """Leave a shared stack as this run found it: no worker stopped, the connector deleted
        (and gone, so its task writes nothing into the next run), the workers it added stopped."""
        for w in self._paused:
            w.resume()
        self._paused = []
        for w in self.stack.workers:
            if w.proc is not None and not w.proc.alive:
                w.restart()  # a kill-worker without restart
        if self.name and any(w.proc and w.proc.alive for w in self.stack.workers):
            quoted = urllib.parse.quote(self.name)
            try:
                self.rest.request("DELETE", f"/connectors/{quoted}")
                wait_until(lambda: self.name not in (self.rest.request("GET", "/connectors") or []), 30,
                           f"connector {self.name!r} to be deleted")
            except Exception:  # noqa: BLE001 - best effort: the next run has its own name and topics
                pass
        for w in self._added_workers:
            if w in self.stack.workers:
                self.stack.remove_worker(w)
        self._added_workers = []
        self._clean_up()

    def _clean_up(self) -> None:
        """The run's topics and bucket go (best effort): a warm stack serves a whole run, and an
        S3 server in memory would otherwise hold every scenario's objects to the end."""
        if self.topics:
            try:
                from confluent_kafka.admin import AdminClient

                admin = AdminClient({"bootstrap.servers": self.stack.bootstrap, "log_level": 3})
                for f in admin.delete_topics(sorted(self.topics), operation_timeout=10).values():
                    f.result(timeout=15)
            except Exception:  # noqa: BLE001 - a later run has topics of its own
                pass
        if self._own_bucket and self.bucket:
            try:
                c = self._s3_client()
                for page in c.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
                    keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                    if keys:
                        c.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
                for u in c.list_multipart_uploads(Bucket=self.bucket).get("Uploads", []):
                    c.abort_multipart_upload(Bucket=self.bucket, Key=u["Key"], UploadId=u["UploadId"])
                c.delete_bucket(Bucket=self.bucket)
            except Exception:  # noqa: BLE001 - a later run has a bucket of its own
                pass

    def info(self) -> TargetInfo:
        p = self.profile
        return TargetInfo(
            name=f"kafka-connect:{p.name if p else self.profile_name}",
            connector_class=p.connector_class if p else None,
            connector_version=self.connector_version,
            kafka_version=KAFKA_DESCRIPTION,
            s3_server=(f"moto {self.stack.s3.endpoint}" if self.stack and self.stack.s3
                       else f"S3 at {self.s3_endpoint}" if self.s3_endpoint else None),
            extra={"connector": self.name or "", "bucket": self.bucket or "",
                   "config": json.dumps(redact(self.config, p), sort_keys=True),
                   **({"schema registry": self.schema_registry.describe,
                       "registry converters": converters.describe_worker_classes(self.config)}
                      if self.schema_registry is not None else {})},
        )

    # ------------------------------------------------------------------ produce
    def _admin_client(self):
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({"bootstrap.servers": self.stack.bootstrap})
        return self._admin

    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        from adapters.kafka.produce import new_producer, produce_records

        if self._producer is None:
            self._producer = new_producer(self.stack.bootstrap)
        out = produce_records(self._producer, records)
        with self._lock:
            self.obs.produced.extend(ProducedRecord.landed(records, out, now_ms()))
        return out


class _Failed(Exception):
    """Raised inside wait_running's predicate; turned into a TargetError at once."""

    def __init__(self, trace: str):
        super().__init__(trace)
        self.trace = trace


