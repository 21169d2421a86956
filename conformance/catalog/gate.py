"""Named scenarios about what changes between two versions of Confluent's connector (spec
§18), played first by `sinkcheck gate`: each shows a documented behaviour change or a known bug
fixed (conformance.catalog.known_bugs)."""
from __future__ import annotations

from typing import Any, Callable

from conformance.catalog.base import BASE

H = 3_600_000
T_EDGE = 1714557600000  # 2024-05-01T10:00:00Z


def late_records_across_hour_edge() -> Any:
    """HourlyPartitioner on record time with rotate.interval.ms: records straddle 10:00 and
    late ones fall back into hour 09. With partition-change rotation (10.6.3, flag on by
    default) every change of hour closes the file: more, smaller objects. Without it
    (10.5.16–10.5.23, commit 1c748db0) both hours stay open and close together by
    rotate.interval.ms (issue #529, spec §18)."""
    from conformance.inputs.scenario import Scenario

    cfg = {
        **BASE, "flush.size": "1000", "rotate.interval.ms": "600000",
        "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
        "timestamp.extractor": "Record", "locale": "en-US", "timezone": "UTC",
    }
    times = [-2000, -1000, 1000, -500, 2000, 3000, 700_000]
    recs = [{"topic": "events", "partition": 0, "timestamp": T_EDGE + t, "key": f"k{i}",
             "value": {"seq": i, "ts": T_EDGE + t}, "headers": []} for i, t in enumerate(times)]
    return Scenario("late-records-across-hour-edge", cfg, {"events": 1}, recs,
                    notes="partition-change rotation: absent in 10.5.23, on by default in 10.6.3 (spec §18)")


def tombstones_with_record_time_rotation() -> Any:
    """Tombstones written (behavior.on.null.values=write, keys stored) under HourlyPartitioner
    with rotate.interval.ms on record time: time and partition-change rotation apply, and a
    change to or from the tombstone partition does not rotate (R3.3, R3.9). Before 12.1.0 the
    tombstone wrapper hid the time-based partitioner, so rotate.interval.ms was silently
    ignored: a known bug (conformance.catalog.known_bugs, #904) the model does not imitate, so this
    fails on 12.0.7 and passes on 12.1.x."""
    from conformance.inputs.scenario import Scenario

    cfg = {**BASE, "flush.size": "1000", "rotate.interval.ms": "3000", "timestamp.extractor": "Record",
           "partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner",
           "locale": "en-US", "timezone": "UTC", "behavior.on.null.values": "write",
           "store.kafka.keys": "true", "keys.format.class": "io.confluent.connect.s3.format.json.JsonFormat"}
    times = [0, 1000, 1500, 3500, 4000, 4200, 8000, 8100]
    nulls = {2, 5}
    recs = [{"topic": "events", "partition": 0, "timestamp": T_EDGE + t, "key": f"k{i}",
             "value": None if i in nulls else {"seq": i, "ts": T_EDGE + t}, "headers": []} for i, t in enumerate(times)]
    return Scenario("tombstones-with-record-time-rotation", cfg, {"events": 1}, recs,
                    notes="rotate.interval.ms ignored under the tombstone wrapper before 12.1.0 (known bug, #904)")


GATE_SCENARIOS: dict[str, Callable[[], Any]] = {"late-records-across-hour-edge": late_records_across_hour_edge,
                  "tombstones-with-record-time-rotation": tombstones_with_record_time_rotation}
