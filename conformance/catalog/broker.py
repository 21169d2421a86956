"""The named scenarios whose point is the broker: what a real consumer group, the sink's own
threads, the wall clock and S3 over HTTP do, where the embedded default has a simulated log,
clock and S3 (adapters.pysink.targets.simulation). The suite plays these over `pysink:broker`
in tests/test_suite.py; `sinkcheck run` plays every named scenario on the embedded default.

One scenario a mechanism. Most named scenarios are about the config and record space or the
sink's record-time rules, which no broker changes. Of those with process faults, a crash is a
member killed (crash-during-complete kills it mid-request; crash-mid-stream between requests),
and the Python sink's restart-task, rebalance, add-worker, remove-worker and update-config are
each one graceful leave of its member and a new member's join (adapters.pysink.targets.target),
so one of them stands for the rest. S3's other error answers end as the ones here do: a status the
sink retries (its writer dropped, the consumer sought back) or one its task dies on. A new
catalog's scenario joins this list only where it brings a mechanism the list lacks.
"""
from __future__ import annotations

BROKER_POINTS: dict[str, str] = {
    "crash-during-complete": "a member killed while its CompleteMultipartUpload hangs on the HTTP connection: "
                             "its successor resumes from the group's committed offsets, none of them ahead "
                             "of S3 (R1.2, §16)",
    "zombie-task": "a paused member evicted after max.poll.interval.ms, its partitions taken over; resumed, it "
                   "finishes its Complete and the group fences its commit (#800)",
    "worker-joins-then-leaves": "two graceful moves of the task with records flowing between: each new member "
                                "joins the group and resumes from its committed offsets (R1.7, R1.8)",
    "rotate-schedule-table": "scheduled rotation on the wall clock, at an empty poll of the broker (R3.4)",
    "s3-412-with-the-object": "a 412 on a conditional Complete S3 applied: the consumer seeks past the file (R8.2)",
    "s3-reset-mid-part": "a connection reset mid-UploadPart: a network error the sink retries by dropping the "
                         "writer and seeking the consumer back to its first record not in S3 (R7.3, R1.5)",
    "s3-stalled-complete-answer": "Complete's answer stalled mid-body on the HTTP connection, then cut: retried "
                                  "the same way, the same object written again under the same key (R7.3)",
}


def broker_scenarios() -> list[str]:
    """The names of BROKER_POINTS in the suite's order (conformance.catalog.named.SUITE)."""
    from conformance.catalog.named import SUITE

    return [n for n in SUITE if n in BROKER_POINTS]
