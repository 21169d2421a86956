"""What each named scenario is about, in the config it needs: its point. Every named scenario
was written for a config of its own; under a user's connector config (`--connector-config`) it
plays under theirs, and where theirs lacks what the scenario is about (a DST change under a zone
without one, rotation by record time under a config that never rotates on it, tombstones amid
rotations under a config that stops at the first) the run would pass on a plain stream and say
nothing of the point. Such a scenario is not applicable under that config
(conformance.playing.applicable says why in one line) and is not run.

A scenario named here with no aspect has a point every config keeps (a crash, a lost answer,
a restart); its faults are still fitted (conformance.playing.adapt). Each aspect is checked by
conformance.playing.applicable.ASPECTS:

- time-partitioner: a time-based partitioner (TimeBased, Daily, Hourly);
- record-time: ... on the record's time (timestamp.extractor Record or RecordField);
- record-field: ... read from a value field (RecordField);
- rotate-interval: rotate.interval.ms on record time (R3.2);
- scheduled-rotation: rotate.schedule.interval.ms (R3.4);
- dst-change: the config's timezone changes its UTC offset among the scenario's record times;
- bucket-edge: the records fall in at least two of the config's time buckets;
- field-partitioner: FieldPartitioner;
- multipart: a file of the config can have more than one part (R7.1);
- keys / keys-or-headers: store.kafka.keys (and/or store.kafka.headers) (R11);
- schemas: values with a schema (JsonConverter with schemas, or AvroConverter);
- schemaless: values without one (JsonConverter, schemas.enable=false);
- avro-converter: AvroConverter values (the Schema Registry's wire format);
- format:<Name>: format.class is that format;
- tombstones-kept: behavior.on.null.values write or ignore (a tombstone does not stop the task);
- same:<property>: the config sets the property as the scenario does (schema.compatibility's
  spelling, errors.tolerance).
"""
from __future__ import annotations

TIME = ("time-partitioner", "record-time")
EDGE = TIME + ("bucket-edge",)
DST = EDGE + ("dst-change",)

POINTS: dict[str, tuple[str, ...]] = {
    # the public write-ups
    "rotate-interval-table": TIME + ("rotate-interval",),
    "rotate-schedule-table": ("scheduled-rotation",),
    "idle-partition-never-flushes": TIME + ("rotate-interval",),
    "multipart-completes": ("multipart",),
    "multipart-crash-in-part-four": ("multipart",),
    "multipart-lost-commit": (),
    # aimed at bugs
    "late-records-at-hour-edges": EDGE,
    "crash-mid-stream": (),
    "crash-during-complete": (),
    "retriable-503-on-upload": (),
    "zombie-task": (),
    "task-restart-mid-stream": (),
    # the config and record space
    "naming-options-keys-headers": ("keys-or-headers",),
    "bytearray-options": ("format:ByteArrayFormat",),
    "struct-types-numeric": ("schemas",),
    "local-midnight-daily": EDGE,
    "dst-hourly-berlin": DST,
    "dst-time-based-new-york": DST + ("record-field",),
    "dst-hourly-lord-howe": DST,
    "field-partition-decimals": ("field-partitioner", "schemas"),
    "zombie-with-keys": ("keys",),
    "rotate-interval-boundary": TIME + ("rotate-interval",),
    "error-inside-200-not-applied": (),
    "error-inside-200-with-keys": ("keys",),
    "error-inside-200-applied": (),
    "pre-1970-record-field": TIME + ("record-field",),
    "pre-1970-record-field-text": TIME + ("record-field",),
    "pre-1970-daily-size-and-interval": EDGE,
    "offsetless-iso-berlin": TIME + ("record-field",),
    "schedule-unaligned-open": ("scheduled-rotation",),
    "schedule-after-size-rotation": ("scheduled-rotation",),
    "schedule-idle-burst": ("scheduled-rotation",),
    "tombstones-amid-interval-rotation": ("tombstones-kept",) + TIME + ("rotate-interval",),
    "tombstones-amid-record-field-windows": ("tombstones-kept",) + TIME + ("record-field",),
    "avro-connect-types": ("schemas", "format:AvroFormat"),
    "parquet-connect-types": ("schemas", "format:ParquetFormat"),
    "avro-converter-to-avro": ("avro-converter",),
    "avro-converter-to-parquet-by-field": ("avro-converter",),
    "avro-converter-to-json-hourly": ("avro-converter",),
    "avro-converter-schema-versions": ("avro-converter",),
    # process faults (tasks.max is fitted, conformance.playing.adapt)
    "rebalance-mid-stream": (),
    "config-update-mid-stream": (),
    "two-tasks-restart-task-1": (),
    "worker-joins-then-leaves": (),
    "rotate-schedule-steady-stream": ("scheduled-rotation",),
    # the assignor is the deployment's: the eager default, unless the config overrides it
    "cooperative-worker-joins-then-leaves": ("same:consumer.override.partition.assignment.strategy",),
    # the gate's own
    "late-records-across-hour-edge": EDGE,
    # about one connector's own behaviour
    "tombstones-with-record-time-rotation": ("tombstones-kept",) + TIME + ("rotate-interval",),
    "avro-schemaless-values": ("schemaless", "format:AvroFormat"),
    "evolution-backward-avro": ("schemas", "same:schema.compatibility"),
    "evolution-forward-avro": ("schemas", "same:schema.compatibility"),
    "evolution-full-parquet": ("schemas", "same:schema.compatibility"),
    "evolution-nested-type-json": ("schemas", "same:schema.compatibility"),
    "evolution-forward-map-json": ("schemas", "same:schema.compatibility"),
    "evolution-lowercase-backward-json": ("schemas", "same:schema.compatibility"),
    # production input (conformance.catalog.inputs): a topic's name, its partition numbers and
    # its text are what the user's topics and records carry once fitted
    "dotted-topic": (),
    "two-digit-partition": (),
    "text-escaping-stream": (),
    "field-partition-unsorted": ("field-partitioner", "schemas"),
    "record-larger-than-part": ("multipart",),
    "bytearray-record-larger-than-part": ("format:ByteArrayFormat", "multipart"),
    "null-header-stored": ("same:store.kafka.headers",),
    "decimal-base64": ("schemas", "format:JsonFormat", "same:json.decimal.format"),
    # S3's answers (conformance.catalog.s3_statuses): a 412 answers a conditional write (R8.1:
    # scheduled rotation on, conditional writes on, no keys or headers stored); the other answers
    # meet any config's uploads
    **{n: ("conditional-writes",) for n in ("s3-412-with-the-object", "s3-412-without-the-object",
                                            "s3-412-without-the-object-head-403",
                                            "s3-412-without-the-object-two-partitions")},
    **{n: () for n in ("s3-429-on-complete", "s3-429-on-part", "s3-access-denied-on-complete",
                       "s3-no-such-upload-on-complete", "s3-no-such-upload-on-part",
                       "s3-request-timeout-on-a-later-part", "s3-request-timeout-on-part", "s3-reset-mid-complete",
                       "s3-reset-mid-part", "s3-signature-mismatch-on-part", "s3-stalled-complete-answer")},
    # the start-up bucket check (R1.3): any config's task starts with it
    **{n: () for n in ("startup-bucket-missing", "startup-bucket-head-forbidden", "startup-bucket-in-another-region")},
    # schema evolution through AvroConverter alone (enums, unions, the record's doc)
    "evolution-record-doc-avro": ("avro-converter", "same:schema.compatibility"),
    "evolution-enum-symbol-dropped-avro": ("avro-converter", "same:schema.compatibility"),
    "evolution-union-nested-forward-avro": ("avro-converter", "same:schema.compatibility"),
    "evolution-map-of-records-json": ("schemas", "same:schema.compatibility"),
    # ProtobufConverter's records into each format, and its versions under each mode
    "protobuf-converter-to-json": ("same:value.converter", "format:JsonFormat"),
    "protobuf-converter-to-avro": ("same:value.converter", "format:AvroFormat"),
    "protobuf-converter-to-parquet": ("same:value.converter", "format:ParquetFormat"),
    **{f"protobuf-evolution-{m}": ("same:value.converter", "same:schema.compatibility")
       for m in ("backward", "forward", "full", "none")},
    "null-value-stops-the-task": ("same:errors.tolerance",),
    "null-value-tolerated": ("same:errors.tolerance",),
}


def point_of(name: str) -> tuple[str, ...]:
    """The aspects a named scenario needs of a config. None for a scenario not listed: a
    generated one (drawn for the config), or one about Iceberg's, Aiven's or Lenses' own sink,
    whose user config is that connector's (the aspects here read the S3 sink's properties)."""
    return POINTS.get(name, ())
