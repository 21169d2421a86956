"""Hypothesis strategies for connector configs, record streams and put schedules.

Each strategy is named after what it generates and shrinks toward the simplest case: fewer
records, the default partitioner, no rotation by time, no nulls.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator

from hypothesis import assume
from hypothesis import strategies as st

from conformance.inputs.scenario import Scenario
from conformance.generators.rebalance_shapes import with_rebalance_shapes
from conformance.generators.topic_shapes import with_topic_shapes
from conformance.generators.large_records import with_a_large_record
from conformance.generators.testable import closing_a_file, settled_before_the_fatal_put
from conformance.inputs.wire import registry_accepts, with_worker_converters
from conformance.generators.configs import SINK_FORMATS, sink_configs
from conformance.generators.faults import fault_schedules, pacing, that_can_fire
from conformance.generators.records import sink_records


@st.composite
def scenarios(draw: st.DrawFn, max_records: int = 40, with_faults: bool = True,
              formats: tuple[str, ...] = SINK_FORMATS, connector: dict[str, str] | None = None,
              kinds: tuple[str, ...] | None = None, evolving: tuple[str, str] | None = None) -> Scenario:
    """A whole scenario: config (or the user's `connector`), topics, records that fit it,
    faults. Shrinks toward fewer records, no faults and the simplest config. `evolving`: a
    (value converter kind, schema.compatibility) the config takes where it can (sink_configs)."""
    cfg = with_worker_converters(connector) if connector is not None else draw(sink_configs(formats, kinds, evolving))
    # one draw in six has four partitions shared by two tasks (shrinks to one task on one): the
    # group's members then outlive a restart of one of them
    topics = {"orders": draw(st.sampled_from((1, 2, 1, 2, 1, 4) if connector is None else (1, 2)))}
    if topics["orders"] == 4:
        cfg = {**cfg, "tasks.max": "2"}
    # a user's config is given as it is: its producers' schemas change whatever schema.compatibility
    # says (NONE where it sets none), where the generator's own configs draw a mode to evolve under
    records = draw(sink_records(topics, max_records, cfg, kinds, evolving=connector is not None))
    if connector is not None:
        # the fields the user's config reads (RecordField's timestamp.field, FieldPartitioner's
        # fields), as the run will fit them: what makes a file close and a record kill the task
        # is judged on the records as played (a stream judged without them commits nothing, so
        # its fatal tombstone came in the same put as the rest, and the run tested nothing).
        # RecordField's is the value's drawn time (`ts`), in its drawn form: before 1970 one
        # stream in three, ISO text without an offset now and then (R6.3, R6.5), where the
        # record's Kafka timestamp, which the run fills in otherwise, is never either
        from conformance.playing.user_config import with_fields

        records = with_fields(records, cfg, time_field="ts")
    # versions a registry refuses (the generator's evolving Avro versions, now and then) are a
    # stream no producer could write: not drawn (before closing_a_file, which reads them)
    assume(registry_accepts(cfg, records))
    records = closing_a_file(cfg, records)
    faults = draw(fault_schedules(len(records))) if with_faults else []
    if with_faults:
        faults = sorted(faults + draw(pacing(cfg, len(records))), key=lambda f: f.after)
    # the rebalance shapes are drawn last, so the draws above stay what they were for a seed;
    # the rules kept are those that can fire around every step, theirs included
    sc = with_rebalance_shapes(draw, Scenario("generated", cfg, topics, records, faults), connector is None, with_faults)
    # a config update mid-stream (a larger flush.size) can leave the last file open again: the
    # stream closes one under the config it ends with too (appended, so every step keeps its place)
    updated = {k: v for f in sc.faults if f.kind == "update-config" for k, v in f.params.get("config", {}).items()}
    if updated:
        sc = replace(sc, records=closing_a_file({**sc.connector, **updated}, sc.records))
    # the records that kill the task go after records that commit an object, under the drawn
    # config and the ones the faults update it to before them, the records appended above included
    # (--profile thorough: flush.size raised from 5 to 6 ahead of a null key, and the sixth record
    # appended after it). A reordering made after every draw, so a seed's draws stay as they were
    sc = settled_before_the_fatal_put(cfg, sc, with_faults)
    # production's topic names and partition numbers, drawn last too: a one-to-one renaming of
    # the topic-partitions, so every step above keeps its place and its point
    sc = with_topic_shapes(draw, sc, connector is None)
    # a record larger than a part, where the sink reads s3.part.size (Confluent's and the Python sink)
    sc = with_a_large_record(draw, sc, connector is None and "parquet" in formats and kinds is None)
    return replace(sc, faults=that_can_fire(sc.connector, sc.records, sc.faults))


@contextmanager
def seed_only_draws() -> Iterator[None]:
    """Draws inside this block depend on the seed and the strategies alone. Hypothesis (6.170
    here) takes a few draws in twenty from the literals it finds in the source of the project's
    modules imported so far (hypothesis.internal.conjecture.providers._get_local_constants), so
    `sinkcheck run --profile ci` drew other scenarios once its named runs (or its first generated
    run) had imported the model and the adapters, `--no-named` others again, a gate or
    bench/coverage.py others still, and any edit of a literal anywhere in the project moved them
    all. Here that pool is empty (Hypothesis's own constants still apply). The pool is the
    process's: a draw on another thread meanwhile sees it empty too."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a Hypothesis without local constants: nothing to set aside
        providers = None
    if not (hasattr(providers, "_get_local_constants") and hasattr(providers, "CONSTANTS_CACHE")):
        yield
        return
    real, empty = providers._get_local_constants, Constants()
    # the cache of constants a draw may take holds the pool's: emptied on the way in and out
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = real
        providers.CONSTANTS_CACHE.cache.clear()
