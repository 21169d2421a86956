"""Apache Iceberg's Kafka Connect sink (IcebergSinkConnector) as a target.

The sink writes Parquet data files to S3 and makes them visible through Iceberg table commits:
a coordinator (inside one task) asks every task for its files each commit interval, then
commits them to the table in one snapshot. sinkcheck starts the catalog the sink commits to:
Iceberg's JDBC catalog on SQLite (a file in the run's directory, shared by the connector through
the plugin's sqlite-jdbc driver and by sinkcheck's reader through pyiceberg's SqlCatalog), with
S3FileIO on sinkcheck's S3 server (or its fault front), path-style.

What is observed, in Iceberg's terms (adapters.observation.TableSample): the table's snapshots
over time with their summaries, the data files of the current snapshot (the bucket sample's
`committed_keys`: what a reader of the table sees), the raw listing under the table location
beside them, and, at the end, the offsets of the sink's control topic and of its coordinator's
consumer group. The source topics' committed offsets are the Connect group's, as for any sink.
"""
from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Mapping

from adapters.connect.profiles import S3Location, iceberg_commit_timing_s
from adapters.connect.target import KafkaConnectTarget
from adapters.observation import BucketSample, Observation, TableSample
from adapters.target import TargetError

CATALOG_NAME = "iceberg"  # the sink's default iceberg.catalog
JDBC_CATALOG = "org.apache.iceberg.jdbc.JdbcCatalog"


def _now_ms() -> int:
    return int(time.time() * 1000)


class SqliteCatalog:
    """Iceberg's JDBC catalog on one SQLite file: the connector's properties for it, and a
    reader of its tables (pyiceberg's SqlCatalog on the same file, never creating anything)."""

    def __init__(self, path: Path, s3: S3Location, name: str = CATALOG_NAME):
        self.path, self.s3, self.name = Path(path), s3, name
        self._reader: Any = None
        self._lock = threading.Lock()  # the sampler and wait_until_quiet read at once

    def connector_properties(self) -> dict[str, str]:
        return {"iceberg.catalog": self.name,
                "iceberg.catalog.catalog-impl": JDBC_CATALOG,
                "iceberg.catalog.uri": f"jdbc:sqlite:{self.path}"}

    def _has_tables(self) -> bool:
        # the connector's JdbcCatalog creates the catalog's tables when it first starts; the reader
        # waits for them rather than creating a schema of its own under the connector
        if not self.path.exists():
            return False
        with contextlib.closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='iceberg_tables'").fetchall()
        return bool(rows)

    def reader(self) -> Any | None:
        with self._lock:
            if self._reader is None:
                self._reader = self._open()
            return self._reader

    def _open(self) -> Any | None:
        if not self._has_tables():
            return None
        from pyiceberg.catalog.sql import SqlCatalog

        # the connector's JdbcCatalog made a v0 schema; pyiceberg warns that it reads it as v0
        logging.getLogger("pyiceberg.catalog.sql").setLevel(logging.ERROR)

        s3 = self.s3
        return SqlCatalog(self.name, **{
            "uri": f"sqlite:///{self.path}", "init_catalog_tables": "false",
            "warehouse": f"s3://{s3.bucket}/warehouse",
            "s3.endpoint": s3.endpoint, "s3.access-key-id": s3.access_key,
            "s3.secret-access-key": s3.secret_key, "s3.region": s3.region,
            "s3.force-virtual-addressing": "false"})

    def sample(self, table: str) -> TableSample | None:
        """The table now (None until the sink has created it)."""
        from pyiceberg.exceptions import NoSuchTableError

        reader = self.reader()
        if reader is None:
            return None
        at = _now_ms()
        try:
            tbl = reader.load_table(table)
        except NoSuchTableError:
            return None
        snap = tbl.current_snapshot()
        files: tuple[str, ...] = ()
        count = 0
        if snap is not None:
            tasks = list(tbl.scan(snapshot_id=snap.snapshot_id).plan_files())
            files = tuple(sorted(self.key_of(t.file.file_path) for t in tasks))
            count = sum(t.file.record_count for t in tasks)
        snapshots = tuple((s.snapshot_id, s.timestamp_ms, int(_summary(s).get("added-records", "0") or 0),
                           tuple(sorted(_summary(s).items()))) for s in tbl.metadata.snapshots)
        return TableSample(at, table, snap.snapshot_id if snap else None, files, count, snapshots,
                           tbl.metadata_location)

    def key_of(self, location: str) -> str:
        """The bucket key of an `s3://bucket/key` location."""
        u = urllib.parse.urlsplit(location)
        if u.netloc != self.s3.bucket:
            raise TargetError(f"the table references {location}, outside bucket {self.s3.bucket}")
        return u.path.lstrip("/")


def _summary(snapshot: Any) -> dict[str, str]:
    s = snapshot.summary
    if s is None:
        return {}
    out = {"operation": str(getattr(s.operation, "value", s.operation))}
    out.update({str(k): str(v) for k, v in s.additional_properties.items()})
    return out


class IcebergConnectTarget(KafkaConnectTarget):
    """`kafka-connect:iceberg`: Kafka Connect with Iceberg's sink, its JDBC catalog on SQLite
    and S3FileIO on sinkcheck's S3 server. The user's connector JSON is used as given; the
    catalog, the endpoint and the credentials are filled in, and, on a shared stack, a control
    topic of the connector's own where the config names none (`iceberg.control.topic`; several
    connectors could share one, each reading only its group's events, but a run's control
    topic then outlives it)."""

    def __init__(self, run_dir: Path | str, **kw: Any):
        kw.setdefault("profile", "iceberg")
        super().__init__(run_dir, **kw)
        self.catalog: SqliteCatalog | None = None
        self.table: str | None = None
        self.control_topic: str | None = None

    def _complete_config(self, name: str, cfg: dict[str, str], s3: S3Location | None) -> dict[str, str]:
        if s3 is None:
            raise TargetError("the Iceberg sink needs an S3 server for its warehouse")
        if cfg.get("iceberg.tables.dynamic-enabled", "false").lower() == "true" or not cfg.get("iceberg.tables"):
            raise TargetError("iceberg.tables: sinkcheck observes one table named by iceberg.tables; a config "
                              "that routes records to tables dynamically (iceberg.tables.dynamic-enabled) "
                              "names none to observe")
        self.table = cfg["iceberg.tables"].split(",")[0].strip()
        self.catalog = SqliteCatalog(self.run_dir / f"{name}-catalog.sqlite", s3, cfg.get("iceberg.catalog", CATALOG_NAME))
        cfg = {**cfg, **self.catalog.connector_properties()}
        cfg.setdefault("iceberg.control.topic", f"control-iceberg-{name}")
        self.control_topic = cfg["iceberg.control.topic"]
        from adapters.kafka.produce import create_topics

        create_topics(self.stack.bootstrap, {self.control_topic: 1})
        return cfg

    def sample_bucket(self) -> BucketSample | None:
        # a catalog that cannot be read right now (its file busy mid-commit) raises: the sampler
        # and the wait record it and read again, as for a listing that failed
        table = self.catalog.sample(self.table) if self.catalog is not None and self.table is not None else None
        sample = super().sample_bucket()
        if sample is None:
            return None
        if table is not None:
            with self._lock:
                self.obs.table_samples.append(table)
        # listed after the table was read: every file the snapshot references is in the listing
        return BucketSample(sample.at_ms, sample.objects, sample.open_uploads,
                            table.data_files if table is not None else ())

    def _pending(self, committed: Mapping[str, int]) -> tuple[str, float] | None:
        # the tasks commit their source offsets before the coordinator commits the table: until
        # it does, the table holds fewer rows than the records committed. A coordinator started
        # again after a kill waits for answers from every partition; a task with no new record
        # never starts its worker and never answers, so the files the dead coordinator was
        # committing go in only when that commit round times out (commit.timeout-ms)
        with self._lock:
            rows = self.obs.table_samples[-1].record_count if self.obs.table_samples else 0
            taken = sum(1 for p in self.obs.produced if p.value is not None and p.value.strip() != b"null"
                        and committed.get(f"{p.topic}-{p.partition}", 0) > p.offset)
            ahead = sum(1 for p in self.obs.produced if committed.get(f"{p.topic}-{p.partition}", 0) <= p.offset)
        bound = sum(iceberg_commit_timing_s(self.config)) + 8.0
        if rows < taken:
            return (f"the table holds {rows} rows of the {taken} records committed: a table commit may be pending",
                    bound)
        # a task commits its offsets only with the files it sends in a commit round, which ends
        # within the commit interval plus the commit timeout (a task restarted after a kill reads
        # everything again and answers the new coordinator's first round): a running task behind
        # the log end may still commit, longer than Connect's own settle window
        if ahead and self._tasks_running():
            return (f"{ahead} records not committed while the task runs: a commit round may be under way", bound)
        return None

    def _tasks_running(self) -> bool:
        try:
            tasks = self.status().get("tasks", [])
        except Exception:  # noqa: BLE001 - no worker answers: not running
            return False
        return bool(tasks) and all(t.get("state") == "RUNNING" for t in tasks)

    def _clean_up(self) -> None:
        if self.control_topic and not self._own_stack:
            self.topics = {**self.topics, self.control_topic: 1}  # goes with the run's topics
        super()._clean_up()

    def observe(self) -> Observation:
        obs = super().observe()
        obs.control_offsets = self._control_offsets()
        return obs

    def _control_offsets(self) -> dict[str, dict[str, int]]:
        """The control topic's log end and what the coordinator's and the workers' control
        consumers committed on it (Coordinator: `<connect group>-coord`; workers: the
        `iceberg.control.group-id-prefix` group)."""
        from adapters.kafka.group_offsets import GroupOffsets

        if not self.control_topic:
            return {}
        out: dict[str, dict[str, int]] = {}
        topic = {self.control_topic: 1}
        groups = {"coordinator group": f"{self.group}-coord",
                  "worker control group": f"{self.config.get('iceberg.control.group-id-prefix', 'cg-control')}-{self.name}"}
        try:
            out["control topic log end"] = {f"{t}-{p}": o for (t, p), o in self._offsets().log_ends(topic).items()}
            for label, group in groups.items():
                g = GroupOffsets(self.stack.bootstrap, group)
                try:
                    out[f"{label} {group}"] = {f"{t}-{p}": o for (t, p), o in g.committed(topic).items()}
                finally:
                    g.close()
        except Exception as e:  # noqa: BLE001 - reported beside the observation, never fatal
            self.sampler_errors.append(f"control offsets: {e}")
        return out
