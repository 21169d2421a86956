"""Known bugs of Aiven's S3 sink (Aiven-Open/cloud-storage-connectors-for-apache-kafka), each
recorded on the real 3.4.2 connector."""
from __future__ import annotations

from conformance.catalog.known_bugs.entry import KnownBug
from conformance.catalog.known_bugs.predicates import (aiven_default_name_default_compression,
                                                       aiven_parquet_without_new_lists,
                                                       flush_stuck_on_a_null_in_an_array, task_paused)


BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="aiven-default-name-without-gz",
        sink="aiven",
        title="The default object name lacks .gz when file.compression.type is left unset, though the object is gzip",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 3.4.2; the code is unchanged on the main branch read
        fixed_in=(),
        needs=aiven_default_name_default_compression,
        needs_text="no file.name.template, no aws.s3.prefix and file.compression.type left unset (gzip by default)",
        symptom="objects named <topic>-<partition>-<start offset> with no .gz while their bytes are gzip: a reader "
                "that goes by the extension takes them for plain text",
        workaround="set file.compression.type=gzip (or none) explicitly, or give a file.name.template",
        scenarios=("aiven-default-template-csv",),
        why="no upstream issue found (one search of Aiven-Open/cloud-storage-connectors-for-apache-kafka's issues; "
            "#547 is about the sink's gzip default against the source's none). S3SinkConfig.getCompressionType "
            "defaults to GZIP, as documented, but FileNameFragment.getFilename builds the default template from "
            "FileNameFragment.getCompressionType, which is NONE when the key is unset",
        breaks=("naming",),
    ),
    KnownBug(
        id="aiven-zombie-overwrites-newer-object",
        sink="aiven",
        title="A zombie task's late flush overwrites the new owner's object: committed records go missing",
        cite=None,
        also=(),
        affected=((None, None),),
        fixed_in=(),
        needs=lambda cfg: True,  # every config: no upload of its is conditional
        needs_text="any config (a task paused past the consumer's session while its partitions move)",
        symptom="records the new owner committed are missing from S3 (no-loss) or missing for a while "
                "(commit-safety): both tasks name their first object <topic>-<partition>-<last committed offset>, "
                "and the resumed zombie flushes its smaller buffer over the new owner's object",
        workaround=None,
        scenarios=("aiven-zombie-task",),
        triggered_by=task_paused,
        why="no upstream issue found (one search of the connector's issues); S3OutputStream uploads without a "
            "conditional write and the resumed WorkerSinkTask commits on its timer before its next poll() "
            "learns that the partitions are gone, so flush() runs in the zombie",
        breaks=("no-loss", "commit-safety"),  # committed records missing for good, or for a while
    ),
    KnownBug(
        id="aiven-parquet-null-in-array-never-flushes",
        sink="aiven",
        title="Parquet output of a record with a null inside an array fails every flush: nothing is committed again",
        cite=None,
        also=("confluentinc/kafka-connect-storage-cloud#339",),
        affected=((None, None),),  # measured on 3.4.2
        fixed_in=(),
        needs=aiven_parquet_without_new_lists,
        needs_text="format.output.type=parquet and values with an array of optional items (a null inside one), "
                   "connect.parquet.avro.write-old-list-structure not set to false",
        symptom="every flush throws NullPointerException \"Array contains a null element at N. Set "
                "parquet.avro.write-old-list-structure=false\" (the worker logs it and rewinds; the task stays "
                "RUNNING): no offset is committed again on any partition of the task, and an object of 4 bytes "
                "(Parquet's magic number, the file begun before the failure) stands under the data name",
        workaround="connect.parquet.avro.write-old-list-structure=false (ParquetConfig hands the connect.parquet.* "
                   "properties to parquet-avro's Configuration)",
        scenarios=("aiven-parquet-null-in-array",),
        shown_by=flush_stuck_on_a_null_in_an_array,
        why="no upstream issue found (one search of the connector's issues); in 3.4.2 (97e9e17c) "
            "ParquetOutputWriter.writeRecords builds its AvroParquetWriter without "
            "AvroWriteSupport.WRITE_OLD_LIST_STRUCTURE=false (ParquetOutputWriter.java:62-68), so parquet-avro's "
            "two-level list writer takes an array of optional items and throws on a null element, the fix "
            "Confluent's connector made for the same trace (kafka-connect-storage-cloud#339, PR #485: "
            "schemaHasArrayOfOptionalItems); ParquetConfig.parquetConfiguration passes connect.parquet.* on, "
            "which is the workaround (measured: the same scenario passes with it)",
        # the task RUNNING; a 4-byte object under the data name
        breaks=("commit-progress", "atomic-visibility", "contents"),
    ),
)
