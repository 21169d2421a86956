"""Known bugs of Confluent's S3 sink (confluentinc/kafka-connect-storage-cloud and the storage-common
library it bundles), each read at the release tags and recorded on the real connector."""
from __future__ import annotations

from conformance.catalog.known_bugs.entry import TASK_FAILED, KnownBug
from conformance.catalog.known_bugs.predicates import (complete_412_head_403, complete_answer_cut, conditional_complete,
                                                       cooperative_assignor, error_inside_complete_200,
                                                       field_partitioner, files_left_open_by_a_hidden_rotate_interval,
                                                       HIDDEN_ROTATION_BREAKS,
                                                       member_joins_or_leaves,
                                                       scheduled_without_extractor, wrapped_time_rotation)


BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="confluent-scheduled-rotation-npe",
        sink="confluent",
        title="Scheduled rotation without a bare time-based partitioner kills the task (NPE in the rotation log line)",
        cite="confluentinc/kafka-connect-storage-cloud#871",
        also=("confluentinc/kafka-connect-storage-cloud#867",),
        affected=(("11.0.1", "11.0.2"),),  # #867 came with 11.0.1; 10.6.8 got #867 and #871 together
        fixed_in=("11.0.2",),
        needs=scheduled_without_extractor,
        needs_text="rotate.schedule.interval.ms > 0 with a partitioner that is not time-based, or a wrapped one "
                   "(s3.schema.partition.affix.type, behavior.on.null.values=write)",
        symptom="the first record that arrives after a schedule boundary while a file is open fails the task with "
                "a NullPointerException in TopicPartitionWriter.checkRotationOrAppend (the log line's "
                "currentTimestamp - baseRecordTimestamp, both null); nothing after the open file is written",
        workaround="take 11.0.2 or later (or stay on 11.0.0); on 11.0.1 a bare time-based partitioner with "
                   "timestamp.extractor avoids it",
        scenarios=("rotate-schedule-steady-stream",),
        signature=r"NullPointerException[\s\S]*checkRotationOrAppend",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="confluent-field-partitioner-null",
        sink="confluent",
        title="FieldPartitioner on an optional INT or BOOLEAN field that is null kills the task",
        cite="confluentinc/kafka-connect-storage-common#438",
        also=("confluentinc/kafka-connect-storage-common#439",),
        # storage-common 11.2.23 and earlier on these lines; 11.2.27 (in 11.0.7) and 11.2.32 (in 10.6.12) have #438
        affected=(("10.6.0", "10.6.12"), ("11.0.0", "11.0.7")),
        fixed_in=("10.6.12", "11.0.7", "12.0.0"),
        needs=field_partitioner,
        needs_text="partitioner.class=FieldPartitioner (and an optional INT8-64 or BOOLEAN partition field whose value is null)",
        symptom="NullPointerException in FieldPartitioner.encodePartition (\"Cannot invoke Object.toString() because "
                "record is null\"); the task FAILED even with errors.tolerance=all and a dead-letter queue, and the "
                "records the fixed version writes under <field>=null/ are missing",
        workaround="take 11.0.7 (10.6.12 on the 10.6 line) or later; or make the field non-null (an SMT that sets a "
                   "default) before the sink",
        scenarios=("field-partition-decimals",),
        signature=r"NullPointerException[\s\S]*FieldPartitioner",
        breaks=TASK_FAILED + ("no-loss", "exact-object-set"),  # the records under <field>=null/ missing too
    ),
    KnownBug(
        id="confluent-wrapped-partitioner-rotation",
        sink="confluent",
        title="rotate.interval.ms and partition-change rotation silently ignored when the partitioner is wrapped",
        cite="confluentinc/kafka-connect-storage-cloud#904",
        also=(),
        affected=(("10.4.0", "12.1.0"),),  # the wrappers came with 10.4.0 (affix, tombstone writing)
        fixed_in=("12.1.0",),
        needs=wrapped_time_rotation,
        needs_text="a time-based partitioner with rotate.interval.ms, wrapped by s3.schema.partition.affix.type or "
                   "behavior.on.null.values=write",
        symptom="files rotate only on flush.size (or scheduled rotation): fewer, larger objects than documented, "
                "records of one time window held open until flush.size is reached; no error anywhere",
        workaround="take 12.1.0 or later; or use rotate.schedule.interval.ms, which the wrapper does not hide",
        # the two tombstone scenarios of the time suite meet it too (behavior.on.null.values=write):
        # on 11.0.1 record 7 of the record-field windows joins the file at 5 and the interval
        # rotation's file is never closed
        scenarios=("tombstones-with-record-time-rotation", "tombstones-amid-interval-rotation",
                   "tombstones-amid-record-field-windows"),
        # fewer, larger objects; records held open
        breaks=HIDDEN_ROTATION_BREAKS,
        # a generated stream on 10.6.18 (behavior.on.null.values=write, rotate.interval.ms=3000, a
        # record 3 s after the file's first): the same stream passes on 12.1.9
        shown_by=files_left_open_by_a_hidden_rotate_interval,
    ),
    KnownBug(
        id="confluent-error-inside-complete-200",
        sink="confluent",
        title="An error inside CompleteMultipartUpload's 200 answer kills the task (AWS SDK v1)",
        cite="confluentinc/kafka-connect-storage-cloud#858",
        also=(),
        affected=((None, "11.0.0"),),  # every release bundling the AWS SDK v1
        fixed_in=("11.0.0",),
        needs=lambda cfg: True,  # every file is a multipart upload (R7.1)
        needs_text="any config (every file is completed by CompleteMultipartUpload), when S3 answers a Complete 200 "
                   "with an error inside",
        symptom="S3 answers 200 with an InternalError inside; the SDK v1 throws it at once without retrying and "
                "the task FAILED until restarted (no data lost: the offsets were not committed)",
        workaround="take 11.0.0 or later (AWS SDK v2 retries it, R7.4); or restart the failed task",
        scenarios=("error-inside-200-not-applied", "error-inside-200-with-keys", "error-inside-200-applied"),
        signature=r"(?=[\s\S]*InternalError)[\s\S]*[Cc]ompleteMultipartUpload",
        triggered_by=error_inside_complete_200,
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="confluent-cut-xml-answer-kills-task",
        sink="confluent",
        title="An answer to CompleteMultipartUpload cut mid-body kills the task (AWS SDK v2)",
        cite=None,
        also=(),
        affected=(("11.0.0", None),),  # every release bundling the AWS SDK v2 (#858)
        fixed_in=(),
        needs=lambda cfg: True,  # every file is completed by CompleteMultipartUpload (R7.1)
        needs_text="any config (every file is completed by CompleteMultipartUpload, whose answer is an XML document), "
                   "when the answer to a Complete S3 applied is cut mid-body (stalled, or the connection reset)",
        symptom="the connection breaks while S3's answer to a Complete it applied is read (a reset, a proxy or load "
                "balancer timing out): ConnectException 'Could not parse XML response' caused by a WstxIOException "
                "(Premature end of Content-Length delimited message body); the task FAILED until restarted (no data "
                "lost: the offsets were not committed, and the object is there)",
        workaround="restart the failed task (its restart writes the same object again); 10.6.x (AWS SDK v1) retries it",
        scenarios=("s3-stalled-complete-answer",),
        signature=r"Could not parse XML response[\s\S]*(Premature end|WstxIOException)",
        triggered_by=complete_answer_cut,
        why="no upstream issue found (one search of the connector's issues for the message); the SDK v2 wraps the "
            "cut body as SdkClientException caused by a WstxIOException, an XMLStreamException and no IOException, "
            "so neither the client's retry (its exception or its cause an IOException) nor S3ErrorUtils' "
            "SdkRetryCondition.DEFAULT (v12.1.9 S3ErrorUtils.java:52-66) takes it: a ConnectException. Recorded on "
            "12.1.9 twice (the task FAILED, the object there); 10.6.18 retries the same answer and goes on",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="confluent-412-head-403-skips-record",
        sink="confluent",
        title="A 412 on a conditional Complete with the HEAD refused (403) skips the file's first record",
        cite=None,
        also=(),
        affected=(("10.6.1", None),),  # the HEAD after a 412 (R8.2) came with 10.6.1; unchanged on 12.1.9
        fixed_in=(),
        needs=conditional_complete,
        needs_text="conditional writes on (R8.1: enable.conditional.writes, rotate.schedule.interval.ms other than "
                   "-1, no keys or headers stored), and a HEAD the credentials are refused (no s3:GetObject)",
        symptom="S3 answers a conditional CompleteMultipartUpload 412 with no object at the key (a conflicting write "
                "in flight) and refuses the HEAD that checks it with 403: the connector counts the key as there "
                "(FileExistsException), starts the file again one record later and commits past the first one, "
                "which is in no object",
        workaround="grant s3:GetObject on the bucket to the connector's credentials (the HEAD then tells), or "
                   "enable.conditional.writes=false",
        scenarios=("s3-412-without-the-object-head-403",),
        triggered_by=complete_412_head_403,
        why="no upstream issue found (one search of the connector's issues); S3OutputStream.fileExists counts a 403 "
            "as the key there (v12.1.9 S3OutputStream.java:392-405, v10.6.18 S3OutputStream.java:353-366: 'We "
            "should be fine to assume file exists here'), and TopicPartitionWriter's next start skips a key that "
            "answers 403 too, so the spec's 'duplicates, not loss' (R8.2) does not hold: recorded on 12.1.9, "
            "events-0@3 lost behind committed offset 7",
        breaks=("no-loss", "commit-safety"),  # the file's first record in no object, committed past
    ),
    KnownBug(
        id="confluent-close-drops-kept-writers",
        sink="confluent",
        title="A cooperative rebalance kills the task that keeps partitions: close() drops every writer (R1.7)",
        cite="confluentinc/kafka-connect-storage-cloud#950",
        also=("confluentinc/kafka-connect-storage-cloud#649", "confluentinc/kafka-connect-storage-cloud#648",
              "confluentinc/kafka-connect-storage-cloud#954"),
        # 10.0.37 closes only the revoked writers (commit ad113d8b), lost again in the merges into
        # 10.1+; #950 (12.1.x) and #954 (10.6.x backport) came after every release here
        affected=((None, "10.0.37"), ("10.1.0", None)),
        fixed_in=("10.0.37",),
        needs=cooperative_assignor,
        needs_text="consumer.override.partition.assignment.strategy=CooperativeStickyAssignor (cooperative "
                   "rebalancing), with partitions moving while a task keeps others (tasks.max above one; a task "
                   "or worker leaving or joining)",
        symptom="the next record of a partition the task kept fails it: ConnectException \"No writer found for "
                "topic partition ...\" (a NullPointerException in S3SinkTask.put before 10.6.11/11.0.8/12.0.0); "
                "the task FAILED, nothing after is written until it is restarted",
        workaround="keep the eager default assignor (no partition.assignment.strategy override); restart the "
                   "failed task",
        scenarios=("cooperative-worker-joins-then-leaves",),
        # the NullPointerException thrown in put itself (its first frame), not one thrown below it
        signature=r"No writer found for topic partition|NullPointerException[^\n]*\n\s*at io\.confluent\.connect\.s3\.S3SinkTask\.put",
        triggered_by=member_joins_or_leaves,
        breaks=TASK_FAILED,
    ),
)
