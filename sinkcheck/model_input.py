"""`sinkcheck model`'s records on the local engine: read with a progress line, and refused
before anything starts when the local engine could not hold them in memory (it keeps every
record: the Spark engine streams)."""
from __future__ import annotations

import os
import re
import time
from typing import Callable, Iterator

from sinkcheck.exitcodes import UsageError

# peak resident memory of the local engine per byte of a JSON-lines records file, and its floor
# (the interpreter and the model's modules), measured by bench/model_memory.py: 10^5 and 4*10^5
# records of ~155 bytes peaked at 128 MB and 397 MB, 5.7 bytes per input byte over ~40 MB
LOCAL_BYTES_PER_INPUT_BYTE = 6.0
LOCAL_FLOOR_BYTES = 50 * 2**20
PROGRESS_EVERY_S = 2.0


def parse_size(text: str, flag: str = "--max-memory") -> int:
    """'1G', '512M', '1.5GiB', '2000000' (bytes) -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not m:
        raise UsageError(f"{flag} {text!r}: give a size such as 512M, 1G or 1.5GiB")
    return int(float(m[1]) * 1024 ** "_kmgt".index(m[2] or "_"))


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def check_local_fits(records: str, max_memory: int) -> None:
    """A records file the local engine would need more than `max_memory` for is refused now,
    not after minutes of growing memory."""
    try:
        size = os.path.getsize(records)
    except OSError:
        return  # reading it says what is wrong with it
    need = LOCAL_FLOOR_BYTES + size * LOCAL_BYTES_PER_INPUT_BYTE
    if need > max_memory:
        raise UsageError(f"--records {records}: {fmt_bytes(size)} of records need about {fmt_bytes(need)} of memory "
                         f"on the local engine (it holds every record), over --max-memory {fmt_bytes(max_memory)}: "
                         "take --engine spark, which streams the records (give it the JSON lines or a Parquet dump), "
                         "or raise --max-memory")


def lines_with_progress(path: str, progress: Callable[[str], None], every_s: float = PROGRESS_EVERY_S) -> Iterator[str]:
    """The file's lines, saying how far the reading got every `every_s` seconds."""
    total = os.path.getsize(path)
    started = last = time.monotonic()
    done = n = 0
    with open(path, "rb") as f:
        for raw in f:
            done += len(raw)
            n += 1
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise UsageError(f"{path}: line {n}: not UTF-8 text (byte {e.start + 1} of the line); records are "
                                 "JSON lines in UTF-8") from None
            now = time.monotonic()
            if now - last >= every_s and total:
                last = now
                left = (now - started) / done * (total - done)
                progress(f"[sinkcheck] model: reading records {100 * done // total}% ({fmt_bytes(done)} of "
                         f"{fmt_bytes(total)}), {n} lines, ~{left:.0f}s left")
            yield line.rstrip("\r\n") if line.endswith("\n") else line
