"""Known bugs of Apache Camel's aws-s3-sink Kafka connector, recorded on the real 4.18.0."""
from __future__ import annotations

from conformance.catalog.known_bugs.entry import TASK_FAILED, KnownBug
from conformance.catalog.known_bugs.predicates import no_errant_record_reporter


BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="camel-null-value-kills-task",
        sink="camel",
        title="A null value (tombstone) kills the task when no errant-record reporter is configured",
        cite="apache/camel-kafka-connector#1300",
        also=(),
        affected=((None, None),),  # closed upstream; 4.18.0 still fails (measured)
        fixed_in=(),
        needs=no_errant_record_reporter,
        needs_text="errors.tolerance left at none (no errant-record reporter)",
        symptom="\"Exchange delivery has failed!\" (InvalidPayloadException: no body) and the task FAILED; no "
                "record after the tombstone is written",
        workaround="errors.tolerance=all with errors.log.enable=true or a dead-letter queue (the failed exchange is "
                   "reported and skipped), or drop tombstones with an SMT",
        scenarios=("null-value-stops-the-task",),
        signature=r"Exchange delivery has failed|InvalidPayloadException",
        breaks=TASK_FAILED,
    ),
)
