"""The put schedule a run's observation gives the model.

Where the target knows when each put() happened (the simulation's virtual clock,
adapters.observation.PutSample), the model folds those very puts: scheduled rotation (R3.4,
R3.5) and the Wallclock extractor (R2.1, R6.5) then get an exact object set instead of
constraints. The model plays one task reading each record once, in produce order, so the
schedule holds only while the run did that: one instance, every put carrying the next records
of the stream and none twice (a restart, a takeover or a rewind after a retriable error breaks
it, and the model gets no schedule).

A real Kafka Connect worker does not show its puts one by one: a put's time lies between the
poll that fetched its records and the next one, so its boundaries stay constraints there (a
file closes on a scheduled boundary no earlier than the boundary, and no later than the first
put after it: at most one poll interval, or offset.flush.interval.ms on an idle consumer).
"""
from __future__ import annotations

from typing import Sequence

from adapters.observation import Observation
from reference_impl.connect_data import SinkRecord
from reference_impl.engine.model import PutSpec


def put_schedule(observation: Observation, records: Sequence[SinkRecord]) -> list[PutSpec] | None:
    """The observed puts as the model's schedule (each the number of records it carried, in the
    order `records` were produced), or None where the observation has none or the run was not
    one task reading each record once, in order."""
    puts = observation.puts
    if not puts or len({p.instance for p in puts}) > 1:
        return None
    position = {(r.topic, r.partition, r.offset): i for i, r in enumerate(records)}
    out, following = [], 0
    for p in puts:
        placed = sorted(position.get(rec, -1) for rec in p.records)
        if placed != list(range(following, following + len(placed))):
            return None  # a record put twice, out of produce order, or not among the records
        following += len(placed)
        out.append(PutSpec(p.at_ms, len(placed)))
    return out
