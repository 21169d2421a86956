"""Named scenarios for time at its edges: buckets before 1970 (Java's division truncates toward
zero, R6.3), RecordField strings without an offset (read in the JVM's zone, not `timezone`,
R6.5), scheduled rotation's boundaries (local midnight of `timezone` + k x interval, not the
time a file opened, R3.4) and the rotate.interval.ms window after a size rotation (every
rotation clears its base record time, R3.1 step 4, R3.2).

Each takes the suite's base connector config (conformance.catalog.base.BASE): schemaless JSON values
whose `ts` field RecordField reads. The scheduled ones pause between records so that puts come
at times no boundary is aligned with; the simulation's put schedule makes their objects exact,
real targets get constraints.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from conformance.inputs.scenario import FaultStep, Scenario

PARTITIONER = "io.confluent.connect.storage.partitioner."
PUBLIC_T = 1706713200000  # 2024-01-31T15:00:00Z


def _rec(seq: int, ts: Any, timestamp: int) -> dict:
    return {"topic": "events", "partition": 0, "timestamp": timestamp, "key": f"k{seq}",
            "value": {"seq": seq, "ts": ts}, "headers": []}


def _pre_1970_record_field(base: dict[str, str], name: str, times: list[Any], notes: str) -> Scenario:
    """TimeBasedPartitioner (1-hour buckets) in Asia/Kolkata (UTC+05:30), RecordField on `ts`."""
    cfg = {**base, "flush.size": "3", "partitioner.class": PARTITIONER + "TimeBasedPartitioner",
           "partition.duration.ms": "3600000", "path.format": "'dt'=yyyy-MM-dd/'hr'=HH", "locale": "en-US",
           "timezone": "Asia/Kolkata", "timestamp.extractor": "RecordField", "timestamp.field": "ts"}
    return Scenario(name, cfg, {"events": 1}, [_rec(i, t, PUBLIC_T + i) for i, t in enumerate(times)], notes=notes)


def pre_1970_record_field(base: dict[str, str]) -> Scenario:
    """Value times before 1970 and around it, as numbers: an instant whose local epoch
    milliseconds are negative floors toward zero in the connector (R6.3: 1969-12-31T23:59 local
    lands in 1970-01-01's first hour). Numbers only, and text in a scenario of its own: a field
    whose type changes between records is no stream a table sink takes (Iceberg gives the
    column the first record's type and fails the task on a string in a long column)."""
    return _pre_1970_record_field(base, "pre-1970-record-field", [-19_800_001, -1, 0, -3_599_999, 1, -17_274_600_000],
                                  "R6.3 before 1970")


def pre_1970_record_field_text(base: dict[str, str]) -> Scenario:
    """The same, as text: an ISO string without an offset is read in the JVM's zone (UTC), so
    '1970-01-01T02:00:00' is 07:30 in Kolkata (R6.5); a numeric string is epoch milliseconds."""
    return _pre_1970_record_field(base, "pre-1970-record-field-text",
                                  ["1969-12-31T23:30:00", "-21600000", "1970-01-01T02:00:00", "1969-12-31T18:29:59.999Z",
                                   "1969-07-20T20:17"], "R6.3 before 1970, R6.5")


def pre_1970_daily_size_and_interval(base: dict[str, str]) -> Scenario:
    """DailyPartitioner in America/New_York, Record extractor: record times in the first hours of
    1970 UTC, still 1969 in New York, whose negative local milliseconds the connector truncates
    into 1970-01-01 (R6.3); flush.size=2 beside rotate.interval.ms=3000, so a size rotation
    comes inside a window and clears its base record time (R3.1 step 4, R3.2), and a record
    older than its window's base does not rotate (R3.2)."""
    cfg = {**base, "flush.size": "2", "rotate.interval.ms": "3000", "partitioner.class": PARTITIONER + "DailyPartitioner",
           "locale": "en-US", "timezone": "America/New_York", "timestamp.extractor": "Record"}
    # 2000 comes late: 4400 ms before its window's base, which never rotates (R3.2)
    # the first record 1 ms past the epoch: librdkafka sends a timestamp of 0 as "now"
    times = [1, 1000, 2500, 3500, 4000, 6000, 6400, 2000, 9500, 17_999_999, 18_000_000, 18_001_000]
    return Scenario("pre-1970-daily-size-and-interval", cfg, {"events": 1},
                    [_rec(i, t, t) for i, t in enumerate(times)], notes="R6.3 before 1970, R3.1, R3.2")


def offsetless_iso_berlin(base: dict[str, str]) -> Scenario:
    """HourlyPartitioner in Europe/Berlin, RecordField on ISO strings, most without an offset:
    the connector reads those in the JVM's zone (UTC), not in `timezone` (R6.5), so
    '2024-05-01T11:00:00' is 13:00 in Berlin; flush.size=2 with rotate.interval.ms=3000 and a
    late record (R3.1 step 4, R3.2, R3.3); a number is epoch milliseconds, however small (R6.5)."""
    cfg = {**base, "flush.size": "2", "rotate.interval.ms": "3000", "partitioner.class": PARTITIONER + "HourlyPartitioner",
           "locale": "de-DE", "timezone": "Europe/Berlin", "timestamp.extractor": "RecordField", "timestamp.field": "ts"}
    times = ["2024-05-01T11:00:00", "2024-05-01T11:00:01", "2024-05-01T11:00:02.500", "2024-05-01T11:00:03.500",
             "2024-05-01T11:00:04,2", 5_400_000, "2024-05-01T11:00:06Z", "2024-05-01T13:00:06.400+02:00",
             "2024-05-01T10:59", "2024-05-01T11:00:09.500", "2024-05-01T11:00:13", "2024-05-01T11:00:08.900",
             "2024-05-01", "2024-05-01T11"]
    return Scenario("offsetless-iso-berlin", cfg, {"events": 1},
                    [_rec(i, t, PUBLIC_T + i) for i, t in enumerate(times)], notes="R6.5, R3.2")


def schedule_unaligned_open(base: dict[str, str]) -> Scenario:
    """DefaultPartitioner, rotate.schedule.interval.ms=2000 in UTC: files open at times no
    boundary is aligned with (the pauses between records), and close at the next boundary of
    local midnight + k x 2000 ms, not 2000 ms after they opened (R3.4); after an idle spell
    whose pause ends on a boundary, a burst of two records in the first put after it goes into
    one file (R3.5)."""
    cfg = {**base, "flush.size": "100", "rotate.schedule.interval.ms": "2000", "timezone": "UTC"}
    recs = [_rec(i, PUBLIC_T + i, PUBLIC_T + i) for i in range(6)]
    pauses = [FaultStep(1, "wait", {"seconds": 1.8}), FaultStep(2, "wait", {"seconds": 0.9}),
              FaultStep(3, "wait", {"seconds": 1.7}), FaultStep(4, "wait", {"seconds": 3.35}),
              FaultStep(6, "wait", {"seconds": 2.3})]
    return Scenario("schedule-unaligned-open", cfg, {"events": 1}, recs, faults=pauses, notes="R3.4")


def schedule_after_size_rotation(base: dict[str, str]) -> Scenario:
    """HourlyPartitioner with the Wallclock extractor in Asia/Kathmandu (UTC+05:45),
    rotate.schedule.interval.ms=3000 beside flush.size=2: a size rotation leaves the scheduled
    boundary where it was (R3.4), so the file opened after it closes at that boundary."""
    cfg = {**base, "flush.size": "2", "rotate.schedule.interval.ms": "3000", "partitioner.class": PARTITIONER + "HourlyPartitioner",
           "locale": "en-US", "timezone": "Asia/Kathmandu", "timestamp.extractor": "Wallclock"}
    recs = [_rec(i, PUBLIC_T + i, PUBLIC_T + i) for i in range(6)]
    pauses = [FaultStep(2, "wait", {"seconds": 1.5}), FaultStep(3, "wait", {"seconds": 1.5}),
              FaultStep(4, "wait", {"seconds": 2.6})]
    return Scenario("schedule-after-size-rotation", cfg, {"events": 1}, recs, faults=pauses, notes="R3.4, R3.8")


def schedule_idle_burst(base: dict[str, str]) -> Scenario:
    """DailyPartitioner (Record extractor) in America/New_York, rotate.schedule.interval.ms=5000
    with flush.size=3: a boundary passes while nothing is written, and the burst that follows
    comes in the first put after it (the pause ends on the boundary; an empty put in between
    would move it on first). That write() moves the boundary on before its records (R3.5): the
    burst's three records make one file, cut by size, not a first record flushed alone."""
    cfg = {**base, "flush.size": "3", "rotate.schedule.interval.ms": "5000", "partitioner.class": PARTITIONER + "DailyPartitioner",
           "locale": "en-US", "timezone": "America/New_York", "timestamp.extractor": "Record"}
    recs = [_rec(i, PUBLIC_T + i * 100, PUBLIC_T + i * 100) for i in range(7)]
    pauses = [FaultStep(2, "wait", {"seconds": 9.75}), FaultStep(5, "wait", {"seconds": 5.5}),
              FaultStep(7, "wait", {"seconds": 5.5})]
    return Scenario("schedule-idle-burst", cfg, {"events": 1}, recs, faults=pauses, notes="R3.5, R3.4")


def _tombstones(n: int, nulls: tuple[int, ...], ts: Callable[[int], Any]) -> list[dict]:
    recs = [_rec(i, ts(i), PUBLIC_T + i * 1000) for i in range(n)]
    for i in nulls:
        recs[i] = {**recs[i], "value": None}
    return recs


def tombstones_amid_interval_rotation(base: dict[str, str]) -> Scenario:
    """HourlyPartitioner, Record extractor, rotate.interval.ms=60000, behavior.on.null.values=
    write: tombstones go to their own partition (R6.7), and a change to or from it does not
    rotate (R3.3, 12.1.0+), so the values of the hour stay in one file beside the tombstones'; a
    last record a minute later closes the window (R3.2), which commits both files (R3.1)."""
    cfg = {**base, "flush.size": "100", "rotate.interval.ms": "60000", "partitioner.class": PARTITIONER + "HourlyPartitioner",
           "locale": "en-US", "timezone": "UTC", "timestamp.extractor": "Record", "behavior.on.null.values": "write",
           "store.kafka.keys": "true", "keys.format.class": base["format.class"]}
    closing = _rec(9, PUBLIC_T + 70_000, PUBLIC_T + 70_000)
    return Scenario("tombstones-amid-interval-rotation", cfg, {"events": 1},
                    _tombstones(9, (2, 5, 6), lambda i: PUBLIC_T + i * 1000) + [closing], notes="R3.3, R6.7, R12.3, R3.2")


def tombstones_amid_record_field_windows(base: dict[str, str]) -> Scenario:
    """TimeBasedPartitioner (10-minute buckets), RecordField in Asia/Kathmandu,
    rotate.interval.ms=3000 with flush.size=4, behavior.on.null.values=write: a tombstone's time
    is its record timestamp (R6.7) and moving to or from the tombstone partition does not rotate
    (R3.3, 12.1.0+); the values' own windows still do (R3.2)."""
    cfg = {**base, "flush.size": "4", "rotate.interval.ms": "3000", "partitioner.class": PARTITIONER + "TimeBasedPartitioner",
           "partition.duration.ms": "600000", "path.format": "'d'=dd/'h'=HH/'m'=mm", "locale": "en-US",
           "timezone": "Asia/Kathmandu", "timestamp.extractor": "RecordField", "timestamp.field": "ts",
           "behavior.on.null.values": "write", "store.kafka.keys": "true", "keys.format.class": base["format.class"]}
    return Scenario("tombstones-amid-record-field-windows", cfg, {"events": 1},
                    _tombstones(10, (1, 3, 4, 8), lambda i: PUBLIC_T + i * 700), notes="R3.3, R6.7, R3.2")


def time_edge_scenarios(base: dict[str, str]) -> dict[str, Callable[[], Scenario]]:
    """The scenarios above by name, on `base`."""
    return {"pre-1970-record-field": functools.partial(pre_1970_record_field, base),
            "pre-1970-record-field-text": functools.partial(pre_1970_record_field_text, base),
            "pre-1970-daily-size-and-interval": functools.partial(pre_1970_daily_size_and_interval, base),
            "offsetless-iso-berlin": functools.partial(offsetless_iso_berlin, base),
            "schedule-unaligned-open": functools.partial(schedule_unaligned_open, base),
            "schedule-after-size-rotation": functools.partial(schedule_after_size_rotation, base),
            "schedule-idle-burst": functools.partial(schedule_idle_burst, base),
            "tombstones-amid-interval-rotation": functools.partial(tombstones_amid_interval_rotation, base),
            "tombstones-amid-record-field-windows": functools.partial(tombstones_amid_record_field_windows, base)}
