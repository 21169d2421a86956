"""What a Kafka Connect target sees of its run: the bucket, the consumer group's committed offsets
and the log ends, the connector's and tasks' states, sampled on a thread of their own while the
run goes on, and the wait until all of them are quiet. KafkaConnectTarget takes them from
ConnectObserving; they read its stack, REST client and state (adapters.connect.target)."""
from __future__ import annotations

import copy
import os
import threading
import time
from typing import Mapping, Sequence

from adapters.observation import BucketSample, Observation, OffsetSample, QuietWatch, StatusSample
from adapters.processes.managed import now_ms
from adapters.processes.moto import s3_client
from adapters.s3.bucket import BucketReader, settled_samples


class ConnectObserving:
    """sample_once, wait_until_quiet, observe and what they need, for KafkaConnectTarget."""

    # whether the run played a fault (an S3 answer, a crash, a rebalance...): the runner says
    # (conformance.playing.runner); where none, and no task of the connector logged a retriable
    # failure (_put_retried), nothing retries a put, and quiet behind the log end comes sooner
    faults_played: bool = True
    # each worker log's length read so far, from where the run began (_mark_worker_logs)
    _log_reads: dict[str, int] | None = None
    _retried: bool = False

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
            from adapters.kafka.group_offsets import GroupOffsets

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

    def _mark_worker_logs(self) -> None:
        """Where each worker's log ends as the connector is submitted: _put_retried reads on."""
        self._log_reads, self._retried = {}, False
        for name, path in (self.stack.log_paths() if self.stack is not None else {}).items():
            if name.startswith("worker"):
                try:
                    self._log_reads[path] = os.path.getsize(path)
                except OSError:
                    self._log_reads[path] = 0

    def _put_retried(self) -> bool:
        """Whether a task of this run's connector logged a RetriableException since the run
        began: Connect then pauses it and delivers the batch again after the connector's
        retry.backoff.ms (WorkerSinkTask logs "WorkerSinkTask{id=NAME-N} RetriableException from
        SinkTask"). Unknown (no logs marked) counts as retried."""
        if self._retried or self._log_reads is None:
            return True
        needle, task = b"RetriableException from SinkTask", f"WorkerSinkTask{{id={self.name}-".encode()
        for path, pos in list(self._log_reads.items()):
            try:
                with open(path, "rb") as f:
                    f.seek(pos)
                    chunk = f.read()
            except OSError:
                continue
            whole = chunk.rfind(b"\n") + 1  # a line still being written is read again next time
            self._log_reads[path] = pos + whole
            at = chunk.find(needle, 0, whole)
            while at >= 0:
                line = chunk[chunk.rfind(b"\n", 0, at) + 1:at]
                if task in line:
                    self._retried = True
                    return True
                at = chunk.find(needle, at + 1, whole)
        return False

    def _nothing_to_retry(self) -> bool:
        """Behind the log end with every task RUNNING, whether nothing can move without a record
        coming: no fault played, no put retried (_put_retried), and no wall-clock timer of the
        sink's own under its config (ConnectorProfile.timed_flush: Lenses' flush.interval wrote
        a tail 4 s after the last change)."""
        profile, config = getattr(self, "profile", None), getattr(self, "config", None) or {}
        timed = profile is None or profile.timed_flush(config)
        return not self.faults_played and not timed and not self._put_retried()

    def _task_states(self) -> dict[int, str]:
        """Task id -> the connector's task's state ({} where no worker answers: nothing known of
        the tasks). The fault steps read the same (adapters.connect.faults)."""
        try:
            return {int(t["id"]): str(t.get("state")) for t in self.status().get("tasks", [])}
        except Exception:  # noqa: BLE001 - no worker answers right now
            return {}

    def _settled_members(self, states: Mapping[int, str] | None) -> frozenset[str] | None:
        """The consumer group's members when every task is RUNNING and the group is Stable with
        every partition owned: a task that is reading, not one waiting for a rebalance."""
        if not states or any(s != "RUNNING" for s in states.values()):
            return None
        try:
            return self._offsets().settled(self.topics)
        except Exception:  # noqa: BLE001 - no coordinator answers: not settled
            return None

    @staticmethod
    def _every_task_failed(states: Mapping[int, str] | None) -> bool:
        """Every task of the connector FAILED: Connect restarts none on its own, and a sink task
        commits what it will commit (closing its partitions) before its status says FAILED, so
        nothing moves again until someone restarts it."""
        return bool(states) and all(s == "FAILED" for s in states.values())

    def wait_until_quiet(self, timeout_s: float, stable_s: float | None = None) -> bool:
        """Quiet: committed offsets, the bucket listing and the open multipart uploads (with
        their parts) unchanged for a while: one offset-flush interval (at least 2 s) once every
        partition is committed up to its log end. Behind the log end (records buffered short of
        a rotation, or a task still catching up), `settled_s` (three flush intervals, at least
        8 s: longer than a put retried after the connector's 5 s retry.backoff.ms) while every
        task is RUNNING and the consumer group Stable with the same members owning every
        partition and the sink has committed or written something (two flush intervals, at
        least 4 s, where the run played no fault, no task of the connector logged a retriable
        failure and the sink has no wall-clock flush of its own under its config:
        _nothing_to_retry); else `stable_s`
        (default five flush intervals, at least 15 s, longer than a
        consumer-group rebalance after a crash), or the short window when every task FAILED
        (nothing moves again until a restart: a task the run's S3 answer killed). The members are part of the state, so a member
        joining or leaving (a restarted worker's task, a dead one expelled) starts the window
        again. Where the sink has committed more than it has made visible (`_pending`: a table
        commit to come), `stable_s` or as long as that may take. An upload that stays open without a new part is not in flight: a killed worker
        abandons its uploads and the connector never aborts them (R7.6); multipart hygiene
        reports them."""
        flush_s = self.offset_flush_interval_ms / 1000
        stable_s = stable_s if stable_s is not None else max(5 * flush_s, 15.0)
        at_end_stable_s = min(stable_s, max(flush_s + 1, 2.0))
        settled_s = min(stable_s, max(3 * flush_s, 8.0))
        # nothing to retry: two flush intervals (at least 4 s) for a task still taking in the
        # last records; once a task logs a retriable failure, the longer window again
        unretried_s = min(settled_s, max(2 * flush_s, 4.0))
        deadline = time.monotonic() + timeout_s
        watch = QuietWatch(self.obs, self._lock, time.monotonic())
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
                states = self._task_states() if behind else None
                members = self._settled_members(states)
                dead = self._every_task_failed(states)
                pending = self._pending(committed)
                state = (tuple(sorted(committed.items())), listing, uploads, members, dead)
                stable = watch.unchanged_for(state, time.monotonic())
                # a sink that has neither committed nor written anything yet may still be starting
                # (a converter's first schema lookups, its first upload): only a sink that has
                # moved shows by standing still that it waits for a record
                moved = bool(committed) or bool(listing)
                need = (max(stable_s, pending[1]) if pending else at_end_stable_s if not behind or dead
                        else stable_s if not members or not moved
                        else unretried_s if self._nothing_to_retry() else settled_s)
                if stable >= need:
                    return watch.end(True)
                parts = [f"offsets, objects or uploads changed {stable:.1f}s ago (need {need:.0f}s stable)"]
                if uploads:
                    parts.append(f"{len(uploads)} multipart upload(s) open: "
                                 + ", ".join(f"{k} ({n} parts)" for k, _, n in uploads[:5]))
                if behind:
                    parts.append("committed behind log end: " + ", ".join(
                        f"{tp} {c}/{e}" for tp, (c, e) in sorted(behind.items())))
                    if dead:
                        parts.append("every task FAILED")
                    elif not members:
                        parts.append(f"a task is not RUNNING or group {self.group} is rebalancing")
                if pending:
                    parts.append(pending[0])
                parts.append(f"{len(listing)} object(s) in the bucket")
                moving = "; ".join(parts)
            if time.monotonic() >= deadline:
                return watch.end(False, moving)
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
            obs.table_samples = list(self.obs.table_samples)
        if self.schema_registry is not None:
            obs.registry = self.schema_registry.snapshot()
        return obs
