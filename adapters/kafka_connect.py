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
(task=0), `restart-connector`.
"""
from __future__ import annotations

import copy
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Mapping, Sequence

from adapters import jars
from adapters.bucket import BucketReader, settled_samples
from adapters.jars import KAFKA_DESCRIPTION
from adapters.connectors import (ConnectorConfigError, ConnectorProfile, S3Location,
                                 fill_config, parse_connector_config, profile_for, redact)
from adapters.observation import (BucketSample, FaultEvent, Observation, OffsetSample,
                                  ProducedRecord, StatusSample)
from adapters.plugins import Plugin, PluginUnavailable
from adapters.supervisor import (ConnectWorker, KafkaStack, MotoS3Server, now_ms, s3_client, wait_until)
from adapters.target import Fault, RecordToProduce, Target, TargetError, TargetInfo



class ConnectRestError(TargetError):
    def __init__(self, status: int, message: str, body: Any = None):
        super().__init__(f"Kafka Connect REST answered {status}: {message}")
        self.status = status
        self.body = body


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
        if not link.exists():
            link.symlink_to(plugin.directory, target_is_directory=True)
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


class ConnectRest:
    """A small client for the Connect REST API that tries each live worker in turn."""

    def __init__(self, workers: list[ConnectWorker]):
        self.workers = workers

    def request(self, method: str, path: str, body: Any = None, timeout_s: float = 30) -> Any:
        last: Exception | None = None
        urls = [w.rest_url for w in self.workers if w.proc is not None and w.proc.alive]
        if not urls:
            raise TargetError("no live Kafka Connect worker to send the REST request to")
        for url in urls:
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json",
                                                  "Accept": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=timeout_s) as r:
                    raw = r.read()
                    return json.loads(raw) if raw else None
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    parsed = json.loads(raw)
                    msg = parsed.get("message", raw.decode(errors="replace"))
                except (ValueError, AttributeError):
                    parsed, msg = None, raw.decode(errors="replace")
                if e.code == 409 or e.code >= 500:
                    last = ConnectRestError(e.code, msg, parsed)
                    continue  # rebalancing or another worker leads: try the next one
                raise ConnectRestError(e.code, msg, parsed) from None
            except (urllib.error.URLError, OSError) as e:
                last = e
        raise TargetError(f"{method} {path} failed on every worker: {last}")


def validation_errors(result: Mapping[str, Any]) -> dict[str, list[str]]:
    """Property -> reasons from a `/connector-plugins/<class>/config/validate` answer."""
    out: dict[str, list[str]] = {}
    for c in result.get("configs", []):
        v = c.get("value", {})
        if v.get("errors"):
            out[v.get("name", "?")] = list(v["errors"])
    return out


def format_config_errors(connector: str, errors: Mapping[str, list[str]]) -> str:
    lines = [f"Kafka Connect rejected the config of connector {connector!r} "
             f"({sum(len(v) for v in errors.values())} error(s)):"]
    for prop, reasons in errors.items():
        for r in reasons:
            lines.append(f"  - {prop}: {r}")
    lines.append("Fix these properties in the connector config (see the connector's "
                 "configuration reference) and run again.")
    return "\n".join(lines)


_bucket_seq = itertools.count(1)
FAULTS = ("crash", "kill-worker", "pause", "resume", "pause-worker", "add-worker", "remove-worker", "rebalance",
          "update-config", "restart-task", "restart-connector", "lose-offset-commit")


class KafkaConnectTarget(Target):
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
        # the resolved plugin (adapters.plugins): exactly this directory and version is loaded
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
        self.sampler_errors: list[str] = []
        self.connector_version: str | None = None

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
            self.stack = KafkaStack(self.run_dir, plugin_paths=[pdir],
                                    broker_heap=self.broker_heap, worker_heap=self.worker_heap,
                                    offset_flush_interval_ms=self.offset_flush_interval_ms,
                                    with_s3=self.s3_endpoint is None, workers=self.workers,
                                    worker_props={**(self.profile.worker_converters or {}),
                                                  **self.profile.worker_settings})
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
        cfg = self._complete_config(name, fill_config(cfg, self.profile, s3, topics), s3)
        self.create_topics(topics)
        self.topics.update(topics)
        self.config = cfg
        self._submit_config(cfg)
        self.wait_running(self.running_timeout_s)
        self._start_sampler()

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

    def _submit_config(self, cfg: Mapping[str, str]) -> None:
        errors = self.validate(cfg)
        if errors:
            raise ConnectorConfigError(format_config_errors(self.name or "?", errors), errors)
        try:
            self.rest.request("PUT", f"/connectors/{urllib.parse.quote(self.name)}/config",
                              dict(cfg))
        except ConnectRestError as e:
            if e.status == 400:
                raise ConnectorConfigError(
                    f"Kafka Connect rejected the config of connector {self.name!r}: {e}") from None
            raise

    def create_topics(self, topics: Mapping[str, int]) -> None:
        """The scenario's topics, empty (a shared broker may hold an earlier run's of that name)."""
        from adapters.produce import create_topics, fresh_topics

        (create_topics if self._own_stack else fresh_topics)(self.stack.bootstrap, topics)

    def status(self) -> dict[str, Any]:
        return self.rest.request("GET", f"/connectors/{urllib.parse.quote(self.name)}/status")

    def wait_running(self, timeout_s: float) -> dict[str, Any]:
        """Wait until the connector and all its tasks are RUNNING; raise on FAILED."""

        def ready():
            st = self.status()
            states = [st["connector"]["state"]] + [t["state"] for t in st.get("tasks", [])]
            failed = [t for t in [st["connector"], *st.get("tasks", [])]
                      if t.get("state") == "FAILED"]
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
                   "config": json.dumps(redact(self.config, p), sort_keys=True)},
        )

    # ------------------------------------------------------------------ produce
    def _admin_client(self):
        if self._admin is None:
            from confluent_kafka.admin import AdminClient

            self._admin = AdminClient({"bootstrap.servers": self.stack.bootstrap})
        return self._admin

    def produce(self, records: Sequence[RecordToProduce]) -> list[int]:
        from adapters.produce import new_producer, produce_records

        if self._producer is None:
            self._producer = new_producer(self.stack.bootstrap)
        out = produce_records(self._producer, records)
        with self._lock:
            self.obs.produced.extend(ProducedRecord.landed(records, out, now_ms()))
        return out

    # ------------------------------------------------------------------ faults
    def _worker(self, params: Mapping[str, Any]) -> ConnectWorker:
        """Worker `params["worker"]` (an index), else the one running task 0."""
        if "worker" not in params:
            return self._task_worker() or self.stack.workers[0]
        idx = int(params["worker"])
        try:
            return self.stack.workers[idx]
        except IndexError:
            raise TargetError(f"no worker #{idx}; the stack has {len(self.stack.workers)}") from None

    def _members(self) -> frozenset[str]:
        try:
            return self._offsets().members()
        except Exception:  # noqa: BLE001 - the group may not exist yet
            return frozenset()

    def _wait_task_replaced(self, before: frozenset[str], what: str,
                            config: Mapping[str, str] | None = None) -> None:
        """Wait until the sink's consumer group has members and none of `before`: the task
        instance that consumed so far has stopped and a new one took its partitions (the REST
        calls return before that happens; producing on at once would feed the old instance).
        With `config` (properties just changed), first until every task config carries it."""
        cname = urllib.parse.quote(self.name)
        log = self.stack.workers[0].log_path if self.stack.workers else None

        def tasks_carry_config() -> bool:
            tasks = self.rest.request("GET", f"/connectors/{cname}/tasks")
            return bool(tasks) and all(t.get("config", {}).get(k) == v for t in tasks for k, v in config.items())

        def replaced() -> bool:
            members = self._members()
            return bool(members) and not (members & before)

        if config:
            wait_until(tasks_carry_config, self.running_timeout_s,
                       f"the task configs of {self.name!r} to carry {sorted(config)}", log=log)
        wait_until(replaced, self.running_timeout_s,
                   f"{what} (a new member in group {self.group}, none of {sorted(before)})", log=log)

    def _task_worker(self, task: int = 0) -> ConnectWorker | None:
        """The worker the status topic says runs `task` (RUNNING), if any."""
        try:
            tasks = self.status().get("tasks", [])
        except Exception:  # noqa: BLE001 - no worker answers right now
            return None
        for t in tasks:
            if t.get("id") == task and t.get("state") == "RUNNING":
                port = str(t.get("worker_id", "")).rsplit(":", 1)[-1]
                return next((w for w in self.stack.workers if str(w.port) == port), None)
        return None

    def _wait_takeover(self, paused: ConnectWorker, timeout_s: float) -> str:
        """Wait until another worker runs task 0; what happened, for the fault's detail."""
        t0 = time.monotonic()
        others = [w for w in self.stack.workers if w is not paused and w.proc is not None and w.proc.alive]
        if not others:
            return "; no other worker to take the task over (a zombie needs workers=2)"
        def taken_over() -> ConnectWorker | None:
            w = self._task_worker()
            return w if w is not None and w is not paused else None

        try:
            w = wait_until(taken_over, timeout_s, f"another worker to run the task of {self.name!r} after "
                           f"{paused.name} stopped", log=others[0].log_path)
        except TargetError as e:
            return f"; no takeover: {str(e).splitlines()[0]}"
        return f"; task 0 RUNNING on {w.name} after {time.monotonic() - t0:.1f}s"

    def apply_fault(self, fault: Fault) -> None:
        kind, params = fault.kind, dict(fault.params)
        t0 = now_ms()
        detail = ""
        restart_from = None
        asked = kind  # recorded as the scenario named it
        if kind == "crash":  # the worker dies and comes back
            kind, params = "kill-worker", {"restart": True, **params}
        if kind == "kill-worker":
            w = self._worker(params)
            pid = w.proc.pid if w.proc else None
            w.kill()
            detail = f"SIGKILL to {w.name} (pid {pid})"
            time.sleep(float(params.get("downtime_s", 0)))
            if params.get("restart", True):
                w.restart()
                detail += f"; restarted as pid {w.proc.pid}"
        elif kind == "pause-worker":
            w = self._worker(params)
            w.pause()
            self._paused.append(w)
            time.sleep(float(params.get("duration_s", 5)))
            w.resume()
            self._paused.remove(w)
            detail = f"SIGSTOP/SIGCONT {w.name} (pid {w.proc.pid})"
        elif kind == "pause":  # a zombie: SIGSTOP, and it stays stopped until `resume`
            w = self._worker(params)
            w.pause()
            self._paused.append(w)
            detail = f"SIGSTOP {w.name} (pid {w.proc.pid})" + self._wait_takeover(
                w, float(params.get("takeover_timeout_s", 120)))
        elif kind == "resume":
            woke = [w for w in self._paused if w.proc is not None and w.proc.alive]
            for w in woke:
                w.resume()
            self._paused = []
            detail = f"SIGCONT {[w.name for w in woke]}"
        elif kind == "add-worker":
            w = self.stack.add_worker()
            detail = f"started {w.name} at {w.rest_url}"
        elif kind == "remove-worker":
            w = self._worker({"worker": params.get("worker", -1)})
            self.stack.remove_worker(w)
            detail = f"stopped {w.name}"
        elif kind == "rebalance":
            w = self.stack.add_worker()
            time.sleep(float(params.get("duration_s", 10)))
            self.stack.remove_worker(w)
            detail = f"{w.name} joined and left"
        elif kind == "update-config":
            changes = {str(k): str(v) for k, v in dict(params.get("config", {})).items()}
            new = {**self.config, **changes}
            before = self._members()
            self._submit_config(new)
            changed = new != self.config
            self.config = new
            if changed:  # Connect restarts the task only when its config changes
                self._wait_task_replaced(before, "the task to restart with the new config", changes)
            self.wait_running(self.running_timeout_s)
            # the restarted task resumes from the group's committed offsets (R1.2)
            restart_from = self.committed_offsets()
            detail = f"PUT config with {sorted(params.get('config', {}))}; the task restarted from {restart_from}"
        elif kind == "restart-task":
            task = int(params.get("task", 0))
            before = self._members()
            self.rest.request("POST", f"/connectors/{urllib.parse.quote(self.name)}/tasks/{task}/restart")
            self._wait_task_replaced(before, f"task {task} to restart")
            self.wait_running(self.running_timeout_s)
            restart_from = self.committed_offsets()
            detail = f"task {task} restarted from {restart_from}"
        elif kind == "restart-connector":
            before = self._members()
            self.rest.request("POST", f"/connectors/{urllib.parse.quote(self.name)}/restart"
                                      f"?includeTasks=true")
            self._wait_task_replaced(before, "the connector and its tasks to restart")
            self.wait_running(self.running_timeout_s)
            restart_from = self.committed_offsets()
            detail = f"connector and tasks restarted from {restart_from}"
        elif kind == "lose-offset-commit":
            restart_from = self._lose_offset_commit()
            detail = f"connector stopped, its group's offsets set back to {restart_from} (KIP-875), resumed"
        else:
            raise TargetError(f"fault {kind!r} is not supported by the Kafka Connect target; supported: "
                              f"{', '.join(FAULTS)}")
        with self._lock:
            self.obs.faults.append(FaultEvent(asked, params, True, t0, now_ms(), detail, restart_from=restart_from))
        self.obs.log_paths.update(self.stack.log_paths())

    def _lose_offset_commit(self) -> dict[str, int]:
        """The group's last offset commit lost, as when its offsets expire while the connector
        is stopped or a tool resets them: the connector is stopped, each partition's committed
        offset set back to the one committed before it (none before: the partition's start),
        and the connector resumed. Kafka Connect's own REST API does it (KIP-875: stop, PATCH
        offsets, resume); the tasks then read again from there."""
        now = self.committed_offsets()
        with self._lock:
            history = [s.committed for s in sorted(self.obs.offset_samples, key=lambda s: s.at_ms)]
        back = {}
        for tp, k in now.items():
            earlier = [h[tp] for h in history if h.get(tp) is not None and h[tp] < k]
            back[tp] = earlier[-1] if earlier else 0
        cname = urllib.parse.quote(self.name)
        self.rest.request("PUT", f"/connectors/{cname}/stop")
        wait_until(lambda: self.status().get("connector", {}).get("state") == "STOPPED" and not self.status().get("tasks"),
                   self.running_timeout_s, f"connector {self.name!r} to stop (PUT /connectors/{self.name}/stop)")
        body = {"offsets": [{"partition": {"kafka_topic": tp.rsplit("-", 1)[0], "kafka_partition": int(tp.rsplit("-", 1)[1])},
                             "offset": {"kafka_offset": k}} for tp, k in sorted(back.items())]}
        self.rest.request("PATCH", f"/connectors/{cname}/offsets", body)
        self.rest.request("PUT", f"/connectors/{cname}/resume")
        self.wait_running(self.running_timeout_s)
        return back

    # ------------------------------------------------------------------ observe
    def _endpoint(self) -> str:
        assert self.s3_endpoint is not None or (self.stack is not None and self.stack.s3 is not None)
        return self.s3_endpoint or self.stack.s3.endpoint

    def _s3_client(self):
        if self._s3 is None:
            self._s3 = s3_client(self._endpoint())
        return self._s3

    def sample_bucket(self) -> BucketSample | None:
        if not (self.profile and self.profile.writes_s3 and self.bucket):
            return None
        if self._reader is None or self._reader.bucket != self.bucket:
            self._reader = BucketReader(self._s3_client(), self.bucket, self.read_bodies)
        return self._reader.sample()

    def _offsets(self):
        if self._group_offsets is None:
            from adapters.group_offsets import GroupOffsets

            self._group_offsets = GroupOffsets(self.stack.bootstrap, self.group)
        return self._group_offsets

    def committed_offsets(self) -> dict[str, int]:
        return {f"{t}-{p}": o for (t, p), o in self._offsets().committed(self.topics).items()}

    def log_end_offsets(self) -> dict[str, int]:
        return {f"{t}-{p}": o for (t, p), o in self._offsets().log_ends(self.topics).items()}

    def sample_status(self) -> StatusSample:
        try:
            st = self.status()
            tasks = tuple(t["state"] for t in st.get("tasks", []))
            traces = [t.get("trace") for t in [st["connector"], *st.get("tasks", [])]
                      if t.get("trace")]
            return StatusSample(now_ms(), st["connector"]["state"], tasks,
                                traces[0] if traces else None)
        except Exception as e:  # noqa: BLE001 - a killed worker is part of the story
            return StatusSample(now_ms(), "UNREACHABLE", (), str(e)[:500])

    def sample_once(self, final: bool = False) -> None:
        # offsets first, the listing after: whatever was committed must already be in the
        # listing (a listing taken first can predate a commit that the offset read then sees)
        b: list[BucketSample] = []
        try:
            o = OffsetSample(now_ms(), self.committed_offsets())
            with self._lock:  # in before a settling final listing lets the sampler add later ones
                self.obs.offset_samples.append(o)
        except Exception as e:  # noqa: BLE001
            self.sampler_errors.append(f"offsets: {e}")
        try:
            if self.profile and self.profile.writes_s3 and self.bucket:
                b = settled_samples(self.sample_bucket) if final else [self.sample_bucket()]
        except Exception as e:  # noqa: BLE001
            self.sampler_errors.append(f"bucket: {e}")
        s = self.sample_status()
        with self._lock:
            self.obs.bucket_samples.extend(b)
            self.obs.statuses.append(s)

    def _start_sampler(self) -> None:
        self._stop_sampling.clear()

        def loop():
            while not self._stop_sampling.wait(self.sample_interval_s):
                self.sample_once()

        self._sampler = threading.Thread(target=loop, name=f"sampler-{self.name}", daemon=True)
        self._sampler.start()

    def _upload_parts(self, uploads: Sequence[tuple[str, str]]) -> tuple[tuple[str, str, int], ...]:
        """(key, upload id, parts so far) of each open multipart upload."""
        c = self._s3_client()
        out = []
        for key, upload_id in uploads:
            try:
                n = len(c.list_parts(Bucket=self.bucket, Key=key, UploadId=upload_id).get("Parts", []))
            except Exception:  # noqa: BLE001 - completed or aborted meanwhile: the next sample says
                n = -1
            out.append((key, upload_id, n))
        return tuple(sorted(out))

    def _pending(self, committed: Mapping[str, int]) -> tuple[str, float] | None:
        """What the sink has committed but may not have made visible yet (a table sink's commit
        to come): what to say of it, and how long it may take at most; None: nothing (an S3
        sink's objects are visible before it commits)."""
        return None

    def _settled_members(self) -> frozenset[str] | None:
        """The consumer group's members when every task is RUNNING and the group is Stable with
        every partition owned: a task that is reading, not one waiting for a rebalance."""
        try:
            tasks = self.status().get("tasks", [])
            if not tasks or any(t.get("state") != "RUNNING" for t in tasks):
                return None
            return self._offsets().settled(self.topics)
        except Exception:  # noqa: BLE001 - no worker or coordinator answers: not settled
            return None

    def wait_until_quiet(self, timeout_s: float, stable_s: float | None = None) -> bool:
        """Quiet: committed offsets, the bucket listing and the open multipart uploads (with
        their parts) unchanged for a while: one offset-flush interval (at least 2 s) once every
        partition is committed up to its log end. Behind the log end (records buffered short of
        a rotation, or a task still catching up), `settled_s` (three flush intervals, at least
        8 s: longer than a put retried after the connector's 5 s retry.backoff.ms) while every
        task is RUNNING and the consumer group Stable with the same members owning every
        partition; else `stable_s` (default five flush intervals, at least 15 s, longer than a
        consumer-group rebalance after a crash). The members are part of the state, so a member
        joining or leaving (a restarted worker's task, a dead one expelled) starts the window
        again. Where the sink has committed more than it has made visible (`_pending`: a table
        commit to come), `stable_s` or as long as that may take. An upload that stays open without a new part is not in flight: a killed worker
        abandons its uploads and the connector never aborts them (R7.6); multipart hygiene
        reports them."""
        flush_s = self.offset_flush_interval_ms / 1000
        stable_s = stable_s if stable_s is not None else max(5 * flush_s, 15.0)
        at_end_stable_s = min(stable_s, max(flush_s + 1, 2.0))
        settled_s = min(stable_s, max(3 * flush_s, 8.0))
        deadline = time.monotonic() + timeout_s
        last_state = None
        since = time.monotonic()
        moving = "nothing sampled yet"
        while True:
            try:
                committed = self.committed_offsets()
                ends = self.log_end_offsets()
                bucket = self.sample_bucket()
                uploads = self._upload_parts(bucket.open_uploads) if bucket else ()
            except Exception as e:  # noqa: BLE001
                committed, ends, bucket, uploads = None, {}, None, ()
                moving = f"could not sample: {e}"
            if committed is not None:
                listing = tuple((o.key, o.etag) for o in bucket.objects) if bucket else ()
                behind = {tp: (committed.get(tp, 0), end) for tp, end in ends.items()
                          if committed.get(tp, 0) < end}
                members = self._settled_members() if behind else None
                pending = self._pending(committed)
                state = (tuple(sorted(committed.items())), listing, uploads, members)
                now = time.monotonic()
                if state != last_state:
                    last_state, since = state, now
                need = (max(stable_s, pending[1]) if pending else at_end_stable_s if not behind
                        else settled_s if members else stable_s)
                if now - since >= need:
                    with self._lock:
                        self.obs.quiet = True
                        self.obs.still_moving = ""
                    return True
                parts = [f"offsets, objects or uploads changed {now - since:.1f}s ago (need {need:.0f}s stable)"]
                if uploads:
                    parts.append(f"{len(uploads)} multipart upload(s) open: "
                                 + ", ".join(f"{k} ({n} parts)" for k, _, n in uploads[:5]))
                if behind:
                    parts.append("committed behind log end: " + ", ".join(
                        f"{tp} {c}/{e}" for tp, (c, e) in sorted(behind.items())))
                    if not members:
                        parts.append(f"a task is not RUNNING or group {self.group} is rebalancing")
                if pending:
                    parts.append(pending[0])
                parts.append(f"{len(listing)} object(s) in the bucket")
                moving = "; ".join(parts)
            if time.monotonic() >= deadline:
                with self._lock:
                    self.obs.quiet = False
                    self.obs.still_moving = moving
                return False
            time.sleep(0.5)

    def observe(self) -> Observation:
        self.sample_once(final=True)
        with self._lock:
            obs = copy.copy(self.obs)
            obs.produced = list(self.obs.produced)
            obs.bucket_samples = list(self.obs.bucket_samples)
            obs.offset_samples = list(self.obs.offset_samples)
            obs.faults = list(self.obs.faults)
            obs.statuses = list(self.obs.statuses)
            obs.log_paths = dict(self.obs.log_paths)
        return obs


class _Failed(Exception):
    """Raised inside wait_running's predicate; turned into a TargetError at once."""

    def __init__(self, trace: str):
        super().__init__(trace)
        self.trace = trace

