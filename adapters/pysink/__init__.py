"""sinkcheck's Python sink: a second, independent implementation of the Confluent S3 sink's
semantics (it never imports `reference_impl`, which checks it), and the embedded default
target.

    adapters.pysink.log               InProcessLog, LogRecord: the in-process source (no JVM)
    adapters.pysink.settings          SinkSettings: the connector config, read and checked
    adapters.pysink.encoding          what goes into an object and its name; .timestamps: record time
    adapters.pysink.writer            Writer: one topic-partition's writer and its multipart uploads
    adapters.pysink.projection        Compatibility: schema.compatibility's rotation check and projection
    adapters.pysink.sink              SinkTask, SinkInstance, InProcessSink, ManualClock
    adapters.pysink.kafka             KafkaSink: the same task as a member of a real consumer group
    adapters.pysink.targets.target    PySinkTarget: the Target (modes inprocess | broker)
    adapters.pysink.targets.simulation  SimulatedPySinkTarget: in process, a virtual clock, S3 in memory
    adapters.pysink.targets.variants  REGISTRY: the faulty variants' classes, by name

`VARIANTS` are faulty versions, each a bug real sinks have had, chosen by name (`pysink:<name>`);
each is a subclass of the correct SinkTask or Writer in adapters/pysink/targets/variants.py, which
REGISTRY maps the name to. None or "correct" is the correct sink.
"""

VARIANTS: dict[str, str] = {
    "commit-before-upload": "commits the offset before the files of the commit set are uploaded",
    "rotate-on-wallclock": "measures rotate.interval.ms on wall-clock time instead of record time",
    "renumber-after-restart": "numbers start offsets in object names from 0 again after a restart",
    "no-partition-change-rotation": "keeps writing the same file when the encoded partition changes",
    "partial-visible": "makes an object visible (its first half) before all its records are in it",
    "drop-after-retriable": "drops buffered records after a retriable S3 error and moves the offset on",
    "unstable-boundaries": "keeps its flush counter across a restart, so file boundaries move on replay",
    "leak-multipart": "leaves multipart uploads open when it abandons a file (error or close)",
    "zombie-overwrite": "an evicted instance, resumed, flushes a stale file over the newer object of the same key",
    "last-record-missing": "flushes the latest file of a partition without its last record",
    # the config and record space (issue: detection power)
    "no-trailing-separator": "writes a separator between records but none after the last one (R10.1, R10.2)",
    "ignore-topics-dir": "names objects under topics/ whatever topics.dir says (R5.1)",
    "pad-capped": "takes a filename.offset.zero.pad.width above 10 as 10 (R5.1)",
    "utc-buckets": "floors time buckets on UTC time instead of the zone's local time (R6.3)",
    "dst-fixed-offset": "keeps the zone's offset at a writer's first record for all its records (R6.3, DST)",
    "rotate-interval-exclusive": "rotates when rotate.interval.ms is exceeded, not reached (R3.2 is inclusive)",
    "headers-first-only": "writes only the first header of each record (R11.3)",
    "keys-unquoted": "writes a string key as its bare text, not as JSON (R11.3)",
    "json-as-received": "re-serializes a JSON value as it arrived (document order, Python's numbers) (R10.1)",
    "decimal-always-base64": "writes Decimals as base64 whatever json.decimal.format says (R10.1)",
    "error-200-ignored": "takes an error inside CompleteMultipartUpload's 200 answer as success (#855)",
    "field-slash-escaped": "escapes a '/' inside a FieldPartitioner value (the connector writes it as it is, R6.2)",
    # time at its edges (issue 24)
    "floor-buckets": "floors a bucket before 1970 with floor division where Java truncates toward zero (R6.3)",
    "naive-iso-in-zone": "reads a RecordField ISO string without an offset in `timezone`, not the JVM's zone (R6.5)",
    "schedule-from-file-open": "counts rotate.schedule.interval.ms from a file's opening, not local midnight + k x interval (R3.4)",
    "base-time-kept-on-size": "keeps the rotate.interval.ms base record time across a flush.size rotation (R3.1, R3.2)",
    # kinds found reading the spec rule by rule (issue 24)
    "no-idle-schedule-reset": "leaves a scheduled boundary passed while idle in place: a burst's first record flushes alone (R3.5)",
    "interval-abs-difference": "rotates on rotate.interval.ms either way from the base time: a late record rotates (R3.2)",
    "flush-size-per-file": "counts flush.size per open file, not per topic-partition (R2.4)",
    "tombstone-change-rotates": "rotates on a change to or from the tombstone partition (R3.3, 12.1.0+ does not)",
    "epoch-seconds-guess": "takes a RecordField number below 10^11 for epoch seconds, not milliseconds (R6.5)",
    # Avro and Parquet objects (issue 32)
    "logical-types-plain": "writes Avro and Parquet Timestamps, Dates and Times as plain longs and ints, without their logical types (R10.3, R10.4)",
    # schema evolution (issue 33)
    "no-rotation-on-incompatible": "never rotates on an incompatible value schema: the record goes into the open file as it came, under every schema.compatibility (R14.2-R14.4)",
    "projection-drops-default": "projects a record onto its file's schema leaving a field the record lacks null where it has a default (R14.3)",
    "nested-incompatible-compatible": "checks schema compatibility on the top level only (storage-common before #463) and writes nested values unprojected (R14)",
    "enum-change-incompatible": "rotates on any change of an enum's symbols, where a record whose symbols are a subset of the file's is projected (R14)",
    "projected-map-keeps-order": "writes a projected map's entries in the order of the converter's map, where SchemaProjector's new HashMap reorders them (R14)",
    # the input production topics carry (issue 35)
    "topic-dots-replaced": "writes a topic's dots as underscores in object keys and file names (R5.1)",
    "partition-fields-sorted": "encodes FieldPartitioner's fields in sorted order, not partition.field.name's (R6.2)",
    "html-escaping-json": "writes < > & ' = in JSON strings as \\u escapes, as an HTML-safe writer does (R10.1, R11.3)",
    "partition-zero-padded": "zero-pads partition numbers to the digits of the topic's highest partition (R5.1, R6.1)",
    "part-bounded-files": "starts a new file before a record the part being filled has no room for: a record larger than a part lands in a file of its own (R7.1)",
    # S3's error answers and connection faults (issue 34)
    "precondition-as-exists": "takes a 412 on a conditional Complete as the object being there, without the HEAD that checks (R8.2)",
    "no-such-upload-skips-file": "starts a file whose upload S3 no longer has (404 NoSuchUpload) again after its records, not at its first (R7.4)",
    "throttling-fatal": "takes a 429 Too Many Requests as fatal, where S3 clients retry throttling (R7.3)",
    "request-timeout-on-part-fatal": "takes a 400 RequestTimeout on UploadPart as fatal, where S3 clients retry it (R7.3)",
    "reset-as-success": "takes an UploadPart or Complete whose connection was reset mid-exchange as done (R7.4)",
    "bucket-check-strict": "fails its start on a 301 or a 403 to its bucket check, where the connector takes the bucket as there (R1.3)",
}
