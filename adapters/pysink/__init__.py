"""sinkcheck's Python sink: a second, independent implementation of the Confluent S3 sink's
semantics (it never imports `reference_impl`, which checks it), and the embedded default
target. `VARIANTS` are faulty versions, each a bug real sinks have had, switched on by name."""

VARIANTS: dict[str, str] = {
    "commit-before-upload": "commits the offset before the upload completes",
    "rotate-on-wallclock": "measures rotate.interval.ms on wall-clock time instead of record time",
    "renumber-after-restart": "numbers start offsets in object names from 0 again after a restart",
    "no-partition-change-rotation": "keeps writing the same file when the encoded partition changes",
    "partial-visible": "makes an object visible before all its records are in it",
    "drop-after-retriable": "drops buffered records after a retriable S3 error and moves the offset on",
    "unstable-boundaries": "carries its flush counter across a restart, so file boundaries move on replay",
    "leak-multipart": "leaves multipart uploads open when it gives one up",
    "zombie-overwrite": "after a pause it flushes its stale file over the newer object of the same key",
    "last-record-missing": "flushes each file without its last record",
}
