"""Benchmark: peak memory of `sinkcheck model --engine local` at two input sizes, side by side.

Each size gets a records file (JSON lines over 16 topic-partitions, ~140 bytes a record, the
shape of examples/records.jsonl) and one `sinkcheck model` in a child process; its peak
resident memory is the child's ru_maxrss (resource.getrusage(RUSAGE_CHILDREN)). The figure per
record is what `sinkcheck model` uses to refuse, before it starts, an input the local engine
cannot hold within --max-memory (sinkcheck.model_input.LOCAL_BYTES_PER_INPUT_BYTE).

    python bench/model_memory.py [--sizes 100000,400000] [--max-memory 8G]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
T0 = 1714557600000
TPS = 16
CONFIG = {"connector.class": "io.confluent.connect.s3.S3SinkConnector", "format.class":
          "io.confluent.connect.s3.format.json.JsonFormat", "storage.class": "io.confluent.connect.s3.storage.S3Storage",
          "s3.bucket.name": "b", "flush.size": "1000"}


def write_records(path: str, n: int) -> int:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            tp, off = i % TPS, i // TPS
            f.write(json.dumps({"topic": "bench", "partition": tp, "offset": off, "timestamp": T0 + off * 100,
                                "key": f"k-{i}", "value": {"id": i, "amount": i * 10}, "headers": []}) + "\n")
    return os.path.getsize(path)


def peak_of_model(records: str, config: str, out: str, max_memory: str) -> tuple[int, float, int]:
    """(peak RSS in bytes, seconds, exit code) of one `sinkcheck model` in a child process. Each
    child is started from a fresh parent (a `python -c` wrapper) so RUSAGE_CHILDREN is its alone."""
    code = ("import resource, subprocess, sys, time; t = time.monotonic(); "
            "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.monotonic() - t, rc)")
    cmd = [sys.executable, "-c", code, sys.executable, "-m", "sinkcheck", "model", "--config", config,
           "--records", records, "--out", out, "--max-memory", max_memory]
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    kib, secs, rc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.split()
    return int(kib) * 1024, float(secs), int(rc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,400000", help="two record counts, comma-separated")
    ap.add_argument("--max-memory", default="64G", help="passed to sinkcheck model (high: measure, do not refuse)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'records':>10} {'input MB':>9} {'peak RSS MB':>12} {'seconds':>8} {'RSS/input byte':>15}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "connector.json")
        with open(config, "w") as f:
            json.dump({"name": "bench", "config": CONFIG}, f)
        for n in sizes:
            records = os.path.join(tmp, f"records-{n}.jsonl")
            size = write_records(records, n)
            peak, secs, rc = peak_of_model(records, config, os.path.join(tmp, f"expected-{n}.json"), args.max_memory)
            rows.append((n, size, peak))
            print(f"{n:>10} {size / 1e6:>9.1f} {peak / 1e6:>12.1f} {secs:>8.1f} {peak / size:>15.1f}"
                  + ("" if rc == 0 else f"  (exit {rc})"))
            os.remove(records)
    (n1, s1, p1), (n2, s2, p2) = rows[0], rows[-1]
    if s2 > s1:
        print(f"marginal: {(p2 - p1) / (s2 - s1):.1f} bytes of memory per input byte, "
              f"{(p2 - p1) / (n2 - n1):.0f} bytes per record; 5M records would need about "
              f"{(p1 + (p2 - p1) / (n2 - n1) * (5_000_000 - n1)) / 2**30:.1f} GiB")


if __name__ == "__main__":
    main()
