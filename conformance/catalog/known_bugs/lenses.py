"""Known bugs of Lenses' S3 sink (lensesio/stream-reactor), each recorded on the real 11.7.2
connector with a named scenario."""
from __future__ import annotations

from conformance.catalog.known_bugs.entry import TASK_FAILED, KnownBug
from conformance.catalog.known_bugs.predicates import (commit_stopped_at_tombstones, cooperative_assignor,
                                                       kept_partitions_never_committed, lenses_avro,
                                                       lenses_avro_or_parquet, lenses_bytes_writes_nulls,
                                                       lenses_error_policy_throws, lenses_json_writes_nulls,
                                                       lenses_parquet, lenses_skips_nulls,
                                                       lock_write_fails_as_often_as_attempts, member_joins_or_leaves,
                                                       upload_landed_unacknowledged)

# 5110b8130 ("fix: ArrayIndexOutOfBoundsException when writing records with different schema
# versions", 2026-01-29) replaced AvroData.fromConnectData with ToAvroDataConverter's own
# conversion in both writers; `git tag --contains 5110b8130`: 10.0.5 and 11.5.0 onwards (10.0.4,
# 11.4.0 and earlier convert with AvroData); ToAvroDataConverter.scala is the same in 10.0.5 and 11.7.2
SINCE_OWN_AVRO_CONVERSION = (("10.0.5", "11.0.0"), ("11.5.0", None))


BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="lenses-json-null-value-npe",
        sink="lenses",
        title="A null value (tombstone) under STOREAS `JSON` kills the task unless null values are skipped",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_json_writes_nulls,
        needs_text="STOREAS `JSON` (Confluent's JsonFormat) and connect.s3.skip.null.values left false "
                   "(behavior.on.null.values other than ignore)",
        symptom="NullPointerException \"Cannot read the array length because \"b\" is null\" from "
                "JsonFormatWriter.write (JsonFormatWriter.scala:64) and the task FAILED; nothing after the tombstone "
                "is written",
        workaround="connect.s3.skip.null.values=true (the tombstone is then not written)",
        scenarios=("tombstones-amid-interval-rotation", "tombstones-amid-record-field-windows"),
        # the NPE's own message: JsonFormatWriter is also on the trace of a bytes value it cannot write
        # ("Cannot currently write byte array as json", its documented limitation: --profile ci generated-018)
        signature=r"Cannot read the array length because \"b\" is null",
        why="no upstream issue found (lensesio/stream-reactor#938 and #991 are about other null paths: Avro and "
            "the envelope); ToJsonDataConverter hands JsonConverter's null bytes for a null value to "
            "JsonFormatWriter.write, which writes them to the stream unchecked",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-cooperative-rebalance-drops-kept-partitions",
        sink="lenses",
        title="A cooperative rebalance kills the task that keeps partitions: open() clears their lock state as if "
              "revoked, close() drops every writer",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=cooperative_assignor,
        needs_text="consumer.override.partition.assignment.strategy=CooperativeStickyAssignor (cooperative "
                   "rebalancing), with partitions added to a task that keeps others (tasks.max above one; a task "
                   "or worker leaving or joining)",
        symptom="the task given partitions while it keeps others logs \"Clearing stale state for N revoked "
                "partition(s)\" naming the kept ones and \"Master lock update failed ... Master index not found\"; "
                "at their next commit FatalConnectException \"Granular lock eTag for <partition> not in cache ... "
                "Failing to preserve fencing\" (or, in another interleaving, a failed conditional index write, "
                "\"error writing file\"); the task FAILED, nothing after written until it is restarted. Or the task "
                "goes on and records are silently lost: close() deleted a kept partition's staging file, the consumer "
                "does not rewind a kept partition, and its next file holds only later records (3 records lost, "
                "commit stuck at 3 of 8). Or every record is written and the kept partitions' commits never move: "
                "WriterManager.getOffsetAndMeta returns no offset for a partition without a writer, and close() "
                "dropped theirs (--profile ci generated-002: committed to None of 7 and of 2 records)",
        workaround="keep the eager default assignor (no partition.assignment.strategy override); restart the "
                   "failed task",
        scenarios=("cooperative-worker-joins-then-leaves",),
        signature=r"Granular lock eTag for [^\n]* not in cache|Master index not found",
        shown_by=kept_partitions_never_committed,
        triggered_by=member_joins_or_leaves,
        why="no upstream issue found (one search of the connector's issues); under incremental cooperative "
            "rebalancing (KIP-429) Kafka Connect's WorkerSinkTask calls SinkTask.open with the newly assigned "
            "partitions only and close with the revoked ones only, but IndexManagerV2.open takes its argument for "
            "the whole assignment: every partition it has a seeked offset for and that is not in it is 'stale', "
            "and evictAllGranularLocks/clearTopicPartitionState drop the kept partitions' lock eTags "
            "(IndexManagerV2.scala:240-255), so their next lock write has no eTag to fence on "
            "(IndexManagerV2.scala:589, 795); CloudSinkTask.close ignores its argument and WriterManager.close "
            "closes every writer, whose Writer.close deletes its staging file (WriterManager.scala:96-119, "
            "Writer.scala:205-215), while the consumer does not rewind kept partitions",
        breaks=TASK_FAILED + ("no-loss",),  # dead, or going on with a kept partition's records lost
    ),
    KnownBug(
        id="lenses-bytes-null-value-zero-byte-upload",
        sink="lenses",
        title="A null value (tombstone) under STOREAS `BYTES` kills the task unless null values are skipped",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_bytes_writes_nulls,
        needs_text="STOREAS `BYTES` (Confluent's ByteArrayFormat, or ByteArrayConverter values) and "
                   "connect.s3.skip.null.values left false (behavior.on.null.values other than ignore)",
        symptom="ConnectException \"fatal: nonFatal: zero byte upload prevented (<staging file>)\" and the task "
                "FAILED at the tombstone's file; nothing after it is written",
        workaround="connect.s3.skip.null.values=true (the tombstone is then not written)",
        scenarios=("lenses-tombstone-as-bytes",),
        signature=r"zero byte upload prevented",
        why="no upstream issue found; BytesFormatWriter.convertToBytes writes a null value as an empty byte array "
            "(BYTES holds one record a file), UploadableFile.validate then refuses the empty staged file "
            "(ZeroByteFileError), which PendingOperationsProcessors returns as a NonFatalCloudSinkError and "
            "CloudSinkTask.handleErrors throws as a ConnectException under the default THROW policy, on every "
            "redelivery alike (--profile ci generated-003: ByteArrayFormat with behavior.on.null.values=write)",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-avro-fixed-not-converted",
        sink="lenses",
        title="An Avro fixed (AvroConverter) under STOREAS `AVRO` or `PARQUET` kills the task: the ByteBuffer is "
              "written where a GenericFixed is expected",
        cite=None,
        also=(),
        affected=SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_avro_or_parquet,
        needs_text="STOREAS `AVRO` or `PARQUET` (Confluent's AvroFormat or ParquetFormat), with values holding an Avro "
                   "fixed (AvroConverter: Connect bytes named after the fixed, with parameter connect.fixed.size)",
        symptom="ClassCastException \"value java.nio.HeapByteBuffer[...] cannot be cast to expected type <Fixed> at "
                "<Record>.<field>\" (\"class java.nio.HeapByteBuffer cannot be cast to class "
                "org.apache.avro.generic.GenericFixed\" from parquet-avro's AvroWriteSupport under PARQUET; "
                "UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"fixed\",...}]: java.nio.HeapByteBuffer\" "
                "for an optional fixed under AVRO) and the task FAILED at the first record with a fixed; nothing after "
                "it is written",
        workaround=None,
        scenarios=("lenses-avro-fixed-field",),
        # the cast of the value itself (a ByteBuffer from AvroConverter, a byte[] from JsonConverter), or the
        # union that holds the fixed refusing it; not a map or struct that merely holds a ByteBuffer
        signature=r"(?:java\.nio\.\w*ByteBuffer(?:\[[^\]\n]*\])?|\[B(?:@\w+)?)(?: \(a (?:java\.nio\.\w*ByteBuffer|\[B)\))? "
                  r"cannot be cast to (?:class org\.apache\.avro\.generic\.GenericFixed|expected type)"
                  r"|Not in union \[[^\n]*\"type\":\"fixed\"[^\n]*\]: (?:java\.nio\.\w*ByteBuffer|\[B)",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for the ClassCastException, fixed "
            "and GenericFixed; #204 is the 2017 HBase sink's bytes); in 11.7.2 (c7218e6e) both writers build the file's "
            "Avro schema with AvroData.fromConnectSchema (ToAvroDataConverter.scala:68; AvroFormatWriter.scala:96, "
            "ParquetFormatWriter.scala:93), which makes Connect bytes carrying connect.fixed.size a `fixed` again "
            "(AvroData.java:867-876 in avro-data 8.1.0; AvroConverter always sets the parameter and the name, "
            "AvroData.java:1802-1804, 2071-2075, connect.meta.data=false included: measured), and then convert each "
            "record with ToAvroDataConverter.convertToGenericRecordWithSchema (AvroFormatWriter.scala:106, "
            "ParquetFormatWriter.scala:81), whose convertBySchemaType has no FIXED case and hands the ByteBuffer on "
            "unchanged (ToAvroDataConverter.scala:177-227, `case _ => value` at 226), where AvroData.fromConnectData "
            "wrapped it in GenericData.Fixed (AvroData.java:493-516). The writers used AvroData.fromConnectData "
            "until commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or converter property avoids it",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-avro-optional-date",
        sink="lenses",
        title="An optional Date under STOREAS `AVRO` kills the task: its days are converted to a Long, which the union "
              "[\"null\", int] does not take",
        cite=None,
        also=(),
        affected=SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_avro,
        needs_text="STOREAS `AVRO` (Confluent's AvroFormat), with values holding an optional Connect Date that is not "
                   "null (AvroConverter: [\"null\", {\"type\": \"int\", \"logicalType\": \"date\"}]; JsonConverter: an "
                   "optional org.apache.kafka.connect.data.Date)",
        symptom="UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"int\",...,\"logicalType\":\"date\"}]: "
                "19754 (field=ship_day)\" from Avro's DataFileWriter.append and the task FAILED at the first record whose "
                "optional date is set; nothing after it is written (a required date, and the same field under "
                "STOREAS `PARQUET`, are written: measured)",
        workaround=None,
        scenarios=("lenses-avro-optional-date",),
        signature=r"Not in union \[[^\]\n]*\"logicalType\":\"date\"[^\]\n]*\]: -?\d+",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for UnresolvedUnionException and "
            "optional dates; #429 is the 2018 'support null values in avro unions'); in 11.7.2 (c7218e6e) "
            "ToAvroDataConverter.convertFieldValue resolves the union to its non-null branch (ToAvroDataConverter.scala:"
            "200-213) and converts the Date with convertDateToDaysFromEpoch (137-141), which returns "
            "ChronoUnit.DAYS.between's Long (284-285), where AvroData.fromConnectData gave Date.fromLogical's int "
            "(AvroData.java:293-300); Avro's GenericData.resolveUnion takes only an Integer for the int branch. A "
            "required date is written (GenericDatumWriter writes an int as ((Number) datum).intValue()), as is an "
            "optional one under PARQUET (AvroWriteSupport writes the union's non-null type the same way). Came with "
            "commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or converter property avoids it. "
            "(Read, not measured: convertDateToDaysFromEpoch counts days in the worker's ZoneId.systemDefault(), so "
            "a worker west of UTC writes every Date one day early)",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-avro-map-with-non-string-keys",
        sink="lenses",
        title="A map with non-string keys under STOREAS `AVRO` or `PARQUET` kills the task: the Connect map is written "
              "where AvroData's array of MapEntry records is expected",
        cite=None,
        also=(),
        affected=SINCE_OWN_AVRO_CONVERSION,  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_avro_or_parquet,
        needs_text="STOREAS `AVRO` or `PARQUET` (Confluent's AvroFormat or ParquetFormat), with values holding a Connect "
                   "map whose keys are not strings (JsonConverter with schemas: \"keys\" int32 and the like; "
                   "AvroConverter: an array of io.confluent.connect.avro.MapEntry records)",
        symptom="under AVRO, UnresolvedUnionException \"Not in union [\"null\",{\"type\":\"array\",\"items\":{\"type\":"
                "\"record\",\"name\":\"MapEntry\",...}}]: {-3=1.5, 7=0.5} (field=codes)\" for an optional map, "
                "ClassCastException \"value {} (a java.util.HashMap) cannot be cast to expected type List<MapEntry>\" "
                "for a required one (even empty); under PARQUET, IllegalArgumentException \"Cannot write unless "
                "collection or array: java.util.HashMap\": the task FAILED at the first such map; nothing after it is "
                "written",
        workaround=None,
        scenarios=("lenses-avro-optional-int-key-map",),
        signature=r"Cannot write unless collection or array: java\.util\.\w*Map"
                  r"|\(a java\.util\.\w*Map\) cannot be cast to expected type List<"
                  r"|Not in union \[[^\n]*\"type\":\"array\"[^\n]*\]: \{(?:\}|[^\"\n]*?=)",
        why="no upstream issue found (lensesio/stream-reactor's issues searched for maps with non-string keys and "
            "MapEntry); Avro maps have string keys only, so AvroData.fromConnectSchema gives a Connect map with other "
            "keys the schema of an array of MapEntry {key, value} records (AvroData.java:897-937 in avro-data 8.1.0) and "
            "AvroData.fromConnectData fills it with one record per entry (550-593); in 11.7.2 (c7218e6e) "
            "ToAvroDataConverter.convertBySchemaType's ARRAY case converts only a java.util.List and hands anything else "
            "on unchanged (ToAvroDataConverter.scala:184-190), so the Connect map reaches Avro's writer, or "
            "parquet-avro's, where an array is expected (the MAP case, 191-199, is only for the string-keyed maps "
            "AvroData leaves maps). Came with commit 5110b8130 (first in 10.0.5 and 11.5.0). No connector, KCQL or "
            "converter property avoids it (AvroConverter's allow.optional.map.keys is about optional string keys)",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-parquet-null-in-array-kills-task",
        sink="lenses",
        title="A null inside an array of optional items under STOREAS `PARQUET` kills the task: parquet-avro's "
              "two-level lists are left on",
        cite=None,
        also=("confluentinc/kafka-connect-storage-cloud#339", "confluentinc/kafka-connect-storage-cloud#485"),
        affected=((None, None),),  # measured on 11.7.2; ParquetFormatWriter never sets a Configuration
        fixed_in=(),
        needs=lenses_parquet,
        needs_text="STOREAS `PARQUET` (Confluent's ParquetFormat), with values holding an array of optional items with a "
                   "null among them",
        symptom="NullPointerException \"Array contains a null element at 1. Set parquet.avro.write-old-list-structure="
                "false to turn on support for arrays with null elements.\" from parquet-avro's "
                "TwoLevelListWriter.writeCollection and the task FAILED at the first record with such a null; nothing "
                "after it is written",
        workaround="no connector or KCQL property reaches parquet-avro: put a jar holding a core-site.xml that sets "
                   "parquet.avro.write-old-list-structure=false into the connector's plugin directory (every Parquet "
                   "list is then written in the three-level list/element layout)",
        scenarios=("lenses-parquet-null-in-array",),
        signature=r"Array contains a null element at \d+",
        why="no upstream issue found for Lenses (lensesio/stream-reactor's issues searched for this message and "
            "write-old-list-structure); in 11.7.2 (c7218e6e) ParquetFormatWriter.init builds its AvroParquetWriter "
            "with no withConf or config (ParquetFormatWriter.scala:99-105), so ParquetWriter.Builder.build makes a "
            "HadoopParquetConfiguration() (new Configuration(true): Hadoop's default resources) and AvroWriteSupport "
            "keeps parquet.avro.write-old-list-structure at its default, true: the two-level list writer refuses a null "
            "element. Confluent's connector fixed the same trace by setting it to false for schemas with an array of "
            "optional items (kafka-connect-storage-cloud#339, PR #485). The default resources are read through the "
            "task's context class loader, the plugin's, so a core-site.xml in a jar of the plugin directory sets it "
            "(measured: lenses-parquet-null-in-array passes with it, the null written in a three-level list)",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-http-max-retries-are-attempts",
        sink="lenses",
        title="connect.s3.http.max.retries counts attempts, not retries: as many S3 errors on a lock write as it "
              "documents retrying kill the task for good",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lambda cfg: True,  # any config: the default 5 is five attempts in all
        needs_text="any config (connect.s3.http.max.retries, default 5, is the S3 client's maxAttempts), when an "
                   "index lock write meets as many S3 errors in a row",
        symptom="FatalConnectException \"error writing file ({\"owner\":...}) We encountered an internal error\" "
                "(status 500) and the task FAILED until restarted by hand, under every connect.s3.error.policy",
        workaround="set connect.s3.http.max.retries one above the retries wanted (6 for the documented 5); a failed "
                   "lock write still needs a task restart",
        scenarios=("lenses-500-on-index-as-many-as-retries",),
        # a server error on a lock write (a 412 there is fencing: another task wrote the lock)
        signature=r"FatalConnectException: error writing file \(\{\"owner\"[^\n]*Status Code: 5\d\d",
        triggered_by=lock_write_fails_as_often_as_attempts,
        why="no upstream issue found; the key is documented as \"Number of times to retry the http request\" "
            "(S3ConfigSettings.HTTP_NBR_OF_RETRIES_DOC) but AwsS3ClientCreator.customiseRetryStrategy passes it "
            "to the SDK as maxAttempts, the first attempt included; IndexManagerV2.createNewIndexFileNoOverwrite "
            "makes a failed lock write at a partition's assignment a FatalCloudSinkError, which "
            "CloudSinkTask.handleErrors throws as FatalConnectException under every error policy (a later "
            "update's failure only holds back the commit: \"Returning no offset to prevent consumer advance\")",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-retried-upload-412-kills-task",
        sink="lenses",
        title="An upload its S3 client retries after the first attempt landed gets 412 and fails the task for good",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_error_policy_throws,
        needs_text="connect.s3.error.policy left at THROW (the default), when S3 applies an upload and its answer is "
                   "lost (dropped or cut), so the S3 client sends it again, or when S3 answers 412 to an upload "
                   "that landed",
        symptom="S3Exception 412 \"At least one of the pre-conditions you specified did not hold\" on the PutObject "
                "of a staged .temp-upload/ file, and the task FAILED until restarted by hand (liveness, "
                "commit-progress); the restarted task uploads the file again and goes on",
        workaround="connect.s3.error.policy=RETRY (Kafka Connect redelivers and the pending upload is retried "
                   "from the local file)",
        # (multipart-lost-commit loses the same answer, but its crash step restarts the failed task: it passes)
        scenarios=("lenses-lost-answer-to-an-upload", "s3-412-with-the-object"),
        signature=r"pre-conditions you specified did not hold",
        triggered_by=upload_landed_unacknowledged,
        why="no upstream issue found; AwsS3StorageInterface.uploadFile puts with If-None-Match: *, so when the "
            "SDK retries a PutObject whose first attempt landed (a lost answer: multipart-lost-commit's dropped "
            "response) S3 answers 412; PendingOperationsProcessors calls it a transient failure "
            "(NonFatalCloudSinkError, 'deferring to recommitPending') but CloudSinkTask.handleErrors throws a "
            "ConnectException for it, which under the default THROW policy kills the task. (Its one sighting without "
            "a lost answer, an 18 MB file of multipart-crash-in-part-four retried 80 ms after S3's 200, was moto's: "
            "moto 5.2.5 computed the ETag unlocked, the SDK found it unlike the MD5 it sent and retried; sinkcheck's "
            "S3 server now locks it, adapters.processes.moto_server)",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="lenses-skipped-tombstones-never-committed",
        sink="lenses",
        title="Tombstones skipped at the end of a partition are never committed: a consumer lag that never "
              "reaches 0",
        cite=None,
        also=(),
        affected=((None, None),),  # measured on 11.7.2
        fixed_in=(),
        needs=lenses_skips_nulls,
        needs_text="connect.s3.skip.null.values=true (behavior.on.null.values=ignore), and a partition whose last "
                   "records are tombstones",
        symptom="no error and no data lost, but the partition's committed offset stops at its last written record "
                "+ 1 and never reaches the log end: the Connect group's lag stays at the number of trailing "
                "tombstones (commit-progress: committed 20 of 21), and a partition of tombstones only is never "
                "committed; the next record with a value written on the partition carries the commit past them",
        workaround=None,
        scenarios=("lenses-trailing-tombstones-skipped",),
        shown_by=commit_stopped_at_tombstones,
        why="no upstream issue found (searched the connector's issues; lensesio/stream-reactor#938 asked for "
            "skipping tombstones, not their offsets); in 11.7.2 (c7218e6e) CloudSinkTask.put skips a null value "
            "with a debug line and nothing else (CloudSinkTask.scala:196-203), and preCommit returns what "
            "WriterManager.getOffsetAndMeta computes from the partition's writers only: None without a writer, "
            "else the first buffered offset or the last committed written offset + 1 (WriterManager.scala:264-281), "
            "so no offset past the last written record is handed to Kafka Connect. No config found avoids it: writing "
            "the tombstones instead (skip.null.values=false) kills the task under STOREAS JSON "
            "(lenses-json-null-value-npe) and BYTES (lenses-bytes-null-value-zero-byte-upload), and a Filter of "
            "tombstones before the sink leaves the same offsets out of preCommit (read, not measured); --profile "
            "default generated-005-shrunk and generated-051 (committed 20 of 21, 10 of 12)",
        breaks=("commit-progress",),  # no error, no loss
    ),
)
