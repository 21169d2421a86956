"""Known bugs of Apache Iceberg's Kafka Connect sink, each recorded on the real 1.12.0 connector."""
from __future__ import annotations

from conformance.catalog.known_bugs.entry import TASK_FAILED, KnownBug
from conformance.catalog.known_bugs.predicates import (auto_creates, cooperative_tasks, kept_partitions_never_rewound,
                                                       reads_control_topic_from_latest, task_stops_or_moves,
                                                       tasks_auto_create_together)


BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        id="iceberg-first-commit-lost",
        sink="iceberg",
        title="A coordinator that stops or moves before its first commit loses the files announced to it",
        cite="apache/iceberg#18006",
        also=("apache/iceberg#17376",),
        affected=((None, None),),  # no release reads the control topic from earliest by default (the PR is open)
        fixed_in=(),
        needs=reads_control_topic_from_latest,
        needs_text="iceberg.kafka.auto.offset.reset left at its default (latest), when the coordinator stops or moves "
                   "before its first table commit (a worker killed, paused, joining or leaving; a task restarted)",
        # the control consumer of group <connect group>-coord commits its offsets only after a
        # table commit (Coordinator.doCommit), and reads with auto.offset.reset=latest
        # (KafkaClientFactory.createConsumer): whichever consumer of that group takes the control
        # partition before the first table commit starts at its end
        symptom="the records of the data files announced before the first table commit never reach the table, "
                "while the task's source offsets have moved past them: silent loss. Any move of the control "
                "topic's partition in the coordinator's group before then does it: the coordinator's worker "
                "killed mid-commit, or a paused worker resumed (its zombie coordinator rejoins the group, takes the "
                "partition and is stopped; the new coordinator gets it back at the log end, past the DATA_WRITTEN "
                "events the task sent with its source offsets)",
        workaround="iceberg.kafka.auto.offset.reset=earliest",
        # the zombie's loss needs the pause to come before the first table commit: measured under
        # CPU load (two busy loops beside the stack), not alone
        scenarios=("iceberg-kill-during-first-commit", "iceberg-zombie-worker"),
        triggered_by=task_stops_or_moves,
        breaks=("no-loss",),  # silent: the task goes on
    ),
    KnownBug(
        id="iceberg-tombstone-before-table",
        sink="iceberg",
        title="A tombstone that reaches a table's writer before the table exists kills the task",
        cite=None,
        also=(),
        affected=((None, None),),
        fixed_in=(),
        needs=auto_creates,
        needs_text="iceberg.tables.auto-create-enabled=true and no Filter of tombstones before the sink (and a null "
                   "value first in a partition)",
        symptom="DataException \"Unable to create table from empty object\" from the table auto-create; the task "
                "FAILED and nothing is written until the tombstone is skipped by hand",
        workaround="create the table before the first record, or drop tombstones with an SMT "
                   "(Filter with the RecordIsTombstone predicate)",
        scenarios=("iceberg-tombstone-first",),
        signature=r"Unable to create table from empty object",
        why="no upstream issue found (apache/iceberg's issues and pull requests searched for tombstones, null "
            "values and this message); the sink's writer skips a null value once the table exists, so the same "
            "record is ignored or kills the task depending only on whether the table was created yet",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="iceberg-namespace-create-race",
        sink="iceberg",
        title="Two tasks auto-creating the table's namespace at once: the second dies on the JDBC catalog's key",
        cite=None,
        # the namespace auto-create it runs through; the JDBC catalog's start-up race of the same kind;
        # the same check-then-insert in JdbcCatalog.createNamespace lost by a Paimon committer
        also=("apache/iceberg#10186", "apache/iceberg#13343", "apache/paimon#8470"),
        affected=(("1.6.0", None),),  # the namespace auto-create (#10186) shipped in 1.6.0; no release fixes it
        fixed_in=(),
        needs=tasks_auto_create_together,
        needs_text="iceberg.tables.auto-create-enabled=true and tasks.max>1 (the table's namespace not yet in a "
                   "JDBC catalog when the tasks' first records arrive)",
        # IcebergWriterFactory.autoCreateTable calls createNamespaceIfNotExist (1.12.0 jar, line 99), which
        # ignores only AlreadyExistsException and ForbiddenException (141-142); JdbcCatalog.createNamespace
        # checks namespaceExists (415) and then inserts (430, insertProperties 848), and execute wraps the
        # SQLException in UncheckedSQLException (780): the task whose insert comes second fails
        symptom="UncheckedSQLException \"Failed to execute: INSERT INTO iceberg_namespace_properties\" (SQLite: "
                "SQLITE_CONSTRAINT_PRIMARYKEY) from the namespace auto-create; the task FAILED until restarted "
                "(its records are read again then, the namespace exists by then)",
        # tasks.max=1 recorded (the scenario with one task: PASS); the namespace created beforehand is
        # read from the source, not recorded: a namespace that exists makes createNamespace throw
        # AlreadyExistsException (JdbcCatalog 415-416), which the sink ignores
        workaround="create the table's namespace before the connector starts (createNamespace then throws "
                   "AlreadyExistsException, which the sink ignores), or tasks.max=1",
        scenarios=("iceberg-tasks-create-namespace-at-once",),
        signature=r"Failed to execute: INSERT INTO iceberg_namespace_properties",
        why="no upstream issue found for the sink (apache/iceberg's issues and pull requests searched for the "
            "namespace auto-create, JdbcCatalog.createNamespace and this message); the sink's own "
            "createNamespaceIfNotExist means to tolerate a namespace that exists, and a concurrent creator "
            "makes it exist between the catalog's check and its insert",
        breaks=TASK_FAILED,
    ),
    KnownBug(
        id="iceberg-revoke-drops-kept-uncommitted-records",
        sink="iceberg",
        title="A cooperative rebalance that revokes some of a task's partitions drops the records it read of the "
              "others, where they have no committed offset yet",
        cite=None,
        # the change that made close seek back to the committed offsets (1.9.0); the stall of a task
        # whose worker a revoke-only close stopped
        also=("apache/iceberg#12372", "apache/iceberg#17811"),
        # measured on 1.12.0; before 1.9.0 (#12372) close stopped the whole committer and sought nothing
        affected=((None, None),),
        fixed_in=(),
        needs=cooperative_tasks,
        needs_text="consumer.override.partition.assignment.strategy=CooperativeStickyAssignor and tasks.max above "
                   "one, when a task is revoked some partitions and keeps others before those have a committed "
                   "offset: at start, whenever the second task's consumer joins after the first read records, "
                   "and again when a worker joins, leaves or stalls",
        # Kafka Connect calls close with the revoked partitions only (KIP-429); CommitterImpl.close
        # stops the commit worker whatever it is given (its writers and their records go), then
        # KafkaUtils.seekToLastCommittedOffsets seeks each assigned partition to its committed
        # offset, skipping one whose committed offset is null: the kept partitions' consumer
        # position stays past the dropped records
        symptom="the records the task had read of the partitions it keeps, from their first offset, never reach "
                "the table. With more records after, the task's next files carry its source offsets past them: "
                "silent loss (6 records lost, iceberg-cooperative-revoke-before-first-commit on 1.12.0). With none "
                "after, those partitions' offsets are never committed and every commit round leaves them out: "
                "stuck until the task restarts (generated-009 at --profile ci: committed to None of 7 and of 1 "
                "records). The worker's log shows \"Seeking to last committed offsets\" right after \"Found no "
                "committed offset\" for the kept partitions. It comes at start too, when the second task's consumer "
                "joins after the first read records: cooperative-worker-joins-then-leaves lost 10 records of the "
                "two partitions the first task kept (in one run of several on 1.12.0: in the others both tasks joined "
                "together), and --profile ci generated-003, with no membership change, lost the first record of two",
        workaround="keep the eager default assignor (no partition.assignment.strategy override)",
        scenarios=("iceberg-cooperative-revoke-before-first-commit", "cooperative-worker-joins-then-leaves"),
        shown_by=kept_partitions_never_rewound,
        # no fault needed: the tasks' own joins at start set it off (a generated run with no
        # membership change lost the first record of two partitions, --profile ci generated-003)
        why="no upstream issue found (apache/iceberg's issues and pull requests searched for the cooperative "
            "revoke, seekToLastCommittedOffsets and partitions without a committed offset; #17811 reports the "
            "revoke-only close stopping the worker, as a stall, not the dropped records); a consumer keeps a "
            "partition's position through a cooperative revoke of others, so records dropped from the writer "
            "must be sought back to, and for a partition never committed the seek is skipped",
        breaks=("no-loss", "commit-progress", "liveness"),
    ),
)
