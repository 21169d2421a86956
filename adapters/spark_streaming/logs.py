"""Reading Spark Structured Streaming's own logs, as a reader of them does (no Spark needed).

The checkpoint (a local directory):
    offsets/<id>   written before batch <id> runs: "v1", a metadata JSON line, then one line per
                   source; the Kafka source's line is {"topic": {"partition": next offset}}
    commits/<id>   written once batch <id> is in the sink: "v1", {"nextBatchWatermarkMs": ...}
The file sink's metadata log (`<output>/_spark_metadata/`, next to the data files):
    <id>           one batch: "v1", then one JSON line per file {"path", "size", "action": "add"|"delete", ...}
    <id>.compact   every `compactInterval` batches: all files of the batches up to <id>
A reader that follows the log sees the files of the latest compact file plus the batches after
it; files a failed or repeated batch left in the directory are in no entry.

Hidden files (`.0.crc`, `.0.<uuid>.tmp`) and names that are not batch ids are ignored.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

_BATCH = re.compile(r"^(\d+)$")
_LOG_FILE = re.compile(r"^(\d+)(\.compact)?$")
METADATA_DIR = "_spark_metadata"


class LogFormatError(ValueError):
    """A log file is not in a format this reader knows."""


def batch_ids(directory: Path) -> list[int]:
    """The batch ids with a file in `directory` (offsets/ or commits/), ascending."""
    try:
        names = [p.name for p in directory.iterdir() if p.is_file()]
    except OSError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := _BATCH.match(n)))


def _lines(text: str, what: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines or not re.fullmatch(r"v\d+", lines[0].strip()):
        raise LogFormatError(f"{what}: no version line (got {lines[:1]})")
    return lines[1:]


def parse_offsets(text: str, what: str = "offsets file") -> dict[str, int]:
    """The Kafka offsets of one `offsets/<id>` file: "topic-partition" -> next offset to read.
    Lines of other sources (or "-" for a source with no offset yet) are skipped."""
    lines = _lines(text, what)
    out: dict[str, int] = {}
    for ln in lines[1:]:  # lines[0] is the batch metadata (watermark, timestamp, conf)
        ln = ln.strip()
        if ln == "-":
            continue
        try:
            obj = json.loads(ln)
        except json.JSONDecodeError as e:
            raise LogFormatError(f"{what}: a source line is not JSON ({e}): {ln[:80]}") from None
        if not isinstance(obj, dict):
            continue
        for topic, parts in obj.items():
            if not isinstance(parts, dict):
                continue
            for p, off in parts.items():
                if str(p).lstrip("-").isdigit() and isinstance(off, int):
                    out[f"{topic}-{int(p)}"] = off
    return out


@dataclass(frozen=True)
class CheckpointState:
    """What the checkpoint says at one moment."""

    planned: int | None  # the latest batch in offsets/ (running or done)
    committed: int | None  # the latest batch in commits/
    committed_offsets: dict[str, int] = field(default_factory=dict)  # of the committed batch
    planned_offsets: dict[str, int] = field(default_factory=dict)  # of the planned batch

    @property
    def in_flight(self) -> int | None:
        """The batch planned but not committed (it is running, or it died and will re-run)."""
        if self.planned is not None and (self.committed is None or self.planned > self.committed):
            return self.planned
        return None

    def describe(self) -> str:
        if self.planned is None:
            return "no batch planned yet"
        s = f"latest committed batch {self.committed} {self.committed_offsets}"
        if self.in_flight is not None:
            s += f"; batch {self.in_flight} in flight (offsets/{self.in_flight} written, commits/{self.in_flight} absent)"
        return s


def read_checkpoint(checkpoint: Path | str) -> CheckpointState:
    """The latest planned and committed batches and their Kafka end offsets."""
    ck = Path(checkpoint)
    planned = batch_ids(ck / "offsets")
    committed = batch_ids(ck / "commits")
    p = planned[-1] if planned else None
    c = committed[-1] if committed else None

    def offsets(batch: int | None) -> dict[str, int]:
        if batch is None:
            return {}
        f = ck / "offsets" / str(batch)
        try:
            return parse_offsets(f.read_text(), str(f))
        except FileNotFoundError:
            return {}

    return CheckpointState(p, c, offsets(c), offsets(p) if p != c else offsets(c))


# --- the file sink's metadata log -----------------------------------------------------------------

@dataclass(frozen=True)
class LogEntry:
    path: str
    action: str  # "add" | "delete"
    size: int | None = None


def parse_log_file(text: str, what: str = "metadata log file") -> list[LogEntry]:
    out = []
    for ln in _lines(text, what):
        try:
            obj = json.loads(ln)
        except json.JSONDecodeError as e:
            raise LogFormatError(f"{what}: an entry is not JSON ({e}): {ln[:80]}") from None
        if not isinstance(obj, dict) or "path" not in obj:
            raise LogFormatError(f"{what}: an entry without a path: {ln[:80]}")
        out.append(LogEntry(str(obj["path"]), str(obj.get("action", "add")), obj.get("size")))
    return out


def path_to_key(path: str, bucket: str) -> str | None:
    """`s3a://bucket/dir/part-0.txt` -> `dir/part-0.txt` (None for another bucket or scheme)."""
    u = urllib.parse.urlsplit(path)
    if u.scheme not in ("s3a", "s3", "s3n") or u.netloc != bucket:
        return None
    return urllib.parse.unquote(u.path).lstrip("/")


@dataclass(frozen=True)
class MetadataLog:
    """The log as a reader sees it: the batches it read and the files they list."""

    batches: tuple[int, ...]  # the latest compact batch (if any) and every batch after it, read in order
    compact: int | None
    keys: tuple[str, ...]  # the files the log lists (bucket keys), sorted
    latest: int | None
    problems: tuple[str, ...] = ()


def log_files(objects: Mapping[str, bytes | None], log_dir: str) -> dict[tuple[int, bool], str]:
    """(batch id, compact?) -> key, for the log files among `objects` (key -> body)."""
    prefix = log_dir.rstrip("/") + "/"
    out = {}
    for key in objects:
        if not key.startswith(prefix):
            continue
        m = _LOG_FILE.match(key[len(prefix):])
        if m:
            out[(int(m.group(1)), bool(m.group(2)))] = key
    return out


def read_metadata_log(objects: Mapping[str, bytes | None], bucket: str, output_prefix: str) -> MetadataLog:
    """Read `<output_prefix>/_spark_metadata/` from a bucket listing (key -> body) the way
    Spark's FileStreamSinkLog does: the latest `<id>.compact`, then each later batch in order;
    `delete` entries remove a file. A batch missing or unreadable ends the log there (a reader
    would fail on it); the problem is reported."""
    files = log_files(objects, f"{output_prefix.strip('/')}/{METADATA_DIR}" if output_prefix.strip("/") else METADATA_DIR)
    if not files:
        return MetadataLog((), None, (), None)
    ids = sorted({i for i, _ in files})
    latest = ids[-1]
    compacts = [i for i, c in files if c]
    compact = max(compacts) if compacts else None
    order: list[tuple[int, bool]] = []
    if compact is not None:
        order.append((compact, True))
    start = compact + 1 if compact is not None else 0
    problems: list[str] = []
    for i in range(start, latest + 1):
        if (i, False) in files:
            order.append((i, False))
        elif (i, True) in files:
            order.append((i, True))
        else:
            problems.append(f"batch {i} of the metadata log is missing (latest is {latest})")
            break
    live: dict[str, None] = {}
    read: list[int] = []
    for i, c in order:
        key = files[(i, c)]
        body = objects.get(key)
        if body is None:
            problems.append(f"{key}: not read")
            break
        try:
            entries = parse_log_file(body.decode("utf-8", errors="replace"), key)
        except LogFormatError as e:
            problems.append(str(e))
            break
        for e in entries:
            k = path_to_key(e.path, bucket)
            if k is None:
                problems.append(f"{key}: a file outside s3a://{bucket}/: {e.path}")
                continue
            if e.action == "delete":
                live.pop(k, None)
            else:
                live[k] = None
        read.append(i)
    return MetadataLog(tuple(read), compact, tuple(sorted(live)), latest, tuple(problems))
