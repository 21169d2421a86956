"""Connector versions and the behaviour each one has (spec section 18).

A `VersionProfile` answers "does this version do X?" for every rule whose behaviour changed
between releases. The fold asks the profile; nothing else compares version numbers.

A release that breaks what the documentation promises has a known bug, not a rule of its own:
the model holds it to the promise, and conformance.catalog.known_bugs names the bug, its fix and the
scenario that shows it (R3.9's wrapped partitioners before 12.1.0, the 11.0.1 rotation log line,
FieldPartitioner's null field before storage-common 11.2.27). Read at the tags v11.0.1, v11.0.2,
v11.0.6, v11.0.7, v12.0.7 and v12.1.9 of kafka-connect-storage-cloud, nothing else between 11.0.0
and 12.1.9 changes what a run observes: #876 (11.0.3) only adds https:// to an endpoint given
without a scheme, #888 (11.0.8, 12.0.0) only turns the "no writer" NPE into a ConnectException,
#901 (12.0.1) only refuses an empty partition.field.name at validation, which the model refuses
on every version. The storage-common 12.0.x these bundle from 12.0.0 brings nested field names to
FieldPartitioner (`nested_partition_fields`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_VERSION = "12.1.9"  # the release whose sources the spec was read from

Version = tuple[int, int, int]


class VersionError(ValueError):
    pass


def parse_version(text: str) -> Version:
    m = re.fullmatch(r"\s*v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-.+].*)?\s*", text or "")
    if not m:
        raise VersionError(
            f"connector version {text!r} is not of the form MAJOR.MINOR.PATCH (for example 10.5.23)"
        )
    return (int(m[1]), int(m[2]), int(m[3] or 0))


# The release lines the profile answers for (section 18 was read up to DEFAULT_VERSION): a version
# outside them, or newer than the sources read, has changes nobody read, so the model cannot say
# what it must produce.
KNOWN_LINES = ((5, 0), (5, 1), (5, 2), (5, 3), (5, 4), (5, 5), (10, 0), (10, 1), (10, 2), (10, 3), (10, 4), (10, 5),
               (10, 6), (11, 0), (12, 0), (12, 1))


def known_version(text: str) -> Version:
    """parse_version, refusing a version the model has no profile for (VersionError lists the
    known release lines)."""
    v = parse_version(text)
    newest = parse_version(DEFAULT_VERSION)
    if v[:2] not in KNOWN_LINES or v > newest:
        lines = ", ".join(f"{a}.{b}.x" for a, b in KNOWN_LINES)
        raise VersionError(f"the model has no profile for connector {text.strip()}: it knows the release lines "
                           f"{lines} (up to {DEFAULT_VERSION}, the release its sources were read from); "
                           f"give one of those, or leave the version out for {DEFAULT_VERSION}")
    return v


def _in_line(v: Version, line: tuple[int, int], lo: int, hi: int | None = None) -> bool:
    return v[:2] == line and v[2] >= lo and (hi is None or v[2] <= hi)


# Partition-change rotation was removed by commit 1c748db0 on these lines (inclusive ranges).
_PARTITION_CHANGE_REMOVED = {
    (10, 0): (35, None),  # the 10.0 line never got the flag back (inference: no restore listed)
    (10, 1): (23, 25),
    (10, 2): (22, 23),
    (10, 3): (18, 20),
    (10, 4): (16, 18),
    (10, 5): (16, 23),
    (10, 6): (0, 2),
}
# First patch of each line where `rotate.file.on.partition.change` restores it (PR #830).
_PARTITION_CHANGE_FLAG = {(10, 1): 26, (10, 2): 24, (10, 3): 21, (10, 4): 19, (10, 5): 24, (10, 6): 3}
# AvroRecordWriterProvider opens its writer once per file (#801, CC-29764): first patch per line
_AVRO_WRITER_OPENS_ONCE = {(10, 0): 37, (10, 1): 25, (10, 2): 23, (10, 3): 20, (10, 4): 18, (10, 5): 20}
# report.null.values.to.dlq (PR #774): first patch per line where known.
_REPORT_NULLS_FLAG = {(10, 0): 33, (10, 1): 22}


@dataclass(frozen=True)
class VersionProfile:
    version: Version

    @classmethod
    def of(cls, text: str | None) -> "VersionProfile":
        return cls(known_version(text or DEFAULT_VERSION))

    @property
    def text(self) -> str:
        return ".".join(map(str, self.version))

    def _at_least(self, *v: int) -> bool:
        return self.version >= tuple(v)

    @property
    def partition_change_rotation(self) -> str:
        """'always' (no flag yet), 'absent' (removed), or 'flag' (rotate.file.on.partition.change)."""
        line = self.version[:2]
        if line in _PARTITION_CHANGE_FLAG and self.version[2] >= _PARTITION_CHANGE_FLAG[line]:
            return "flag"
        if self.version >= (11, 0, 0):
            return "flag"
        if line in _PARTITION_CHANGE_REMOVED:
            lo, hi = _PARTITION_CHANGE_REMOVED[line]
            if _in_line(self.version, line, lo, hi):
                return "absent"
        return "always"

    @property
    def idle_schedule_reset(self) -> bool:
        """R3.5: the expired boundary moves on at the start of write() when nothing is pending."""
        v = self.version
        return (
            v >= (10, 0, 5)
            or _in_line(v, (5, 4), 7)
            or _in_line(v, (5, 5), 8)
        )

    @property
    def conditional_writes(self) -> bool:
        """R8: `enable.conditional.writes` exists (10.6.0+)."""
        return self._at_least(10, 6, 0)

    @property
    def retries_error_inside_complete(self) -> bool:
        """R7.4: an InternalError inside CompleteMultipartUpload's 200 answer is retriable with
        the AWS SDK v2 (11.0.0+, #858). The SDK v1 client these versions bundle (1.12.x) throws
        it at once (AmazonS3Client.completeMultipartUpload never reaches its own retry for it),
        and its default retry condition takes no status 200: the task dies."""
        return self._at_least(11, 0, 0)

    @property
    def nested_partition_fields(self) -> bool:
        """R6.2: FieldPartitioner follows dotted names into nested fields (storage-common 12.0.0,
        #454, bundled from 12.0.0); before, a dotted name is one top-level field's name."""
        return self._at_least(12, 0, 0)

    @property
    def max_open_files(self) -> bool:
        """R3.6: `partitioner.max.open.files` exists (10.6.7+)."""
        return self._at_least(10, 6, 7)

    @property
    def null_value_policy(self) -> bool:
        """R12: `behavior.on.null.values` exists (5.4.0+); before, a null value kills the task."""
        return self._at_least(5, 4, 0)

    @property
    def null_write_policy(self) -> bool:
        """R12.3: `behavior.on.null.values=write` exists (10.4.0+)."""
        return self._at_least(10, 4, 0)

    @property
    def keys_and_headers(self) -> bool:
        """R11: `store.kafka.keys` / `store.kafka.headers` exist (10.0.0+)."""
        return self._at_least(10, 0, 0)

    @property
    def report_null_values_flag(self) -> bool:
        line = self.version[:2]
        if line in _REPORT_NULLS_FLAG:
            return self.version[2] >= _REPORT_NULLS_FLAG[line]
        return self._at_least(10, 6, 0)

    @property
    def avro_default_names_indexed(self) -> bool:
        """R10.3: the bundled AvroData names unnamed structs ConnectDefault, ConnectDefault2, …
        (schema-registry DGS-2814: 5.5.8, 6.0.6, 6.2.3, 7.0.2 on), so two different ones can
        share a file. The storage-common each release bundles says which AvroData it gets:
        CP 7.2.x from 10.0.11 (and 10.0.7-10.0.8), 6.0.x before, 5.x on the 5.x lines."""
        v = self.version
        if v[:2] == (10, 0):
            return v[2] >= 11 or v[2] in (7, 8)
        return self._at_least(10, 1, 0)

    @property
    def avro_writer_opens_once(self) -> bool:
        """R10.3: AvroRecordWriterProvider opens its DataFileWriter at the first record of a
        file whatever that record's schema (#801, CC-29764). Before, it opened the writer while
        its remembered schema was null, so a schemaless file's second record re-opened an open
        DataFileWriter (AvroRuntimeException: already open) and the task died."""
        line = self.version[:2]
        if line in _AVRO_WRITER_OPENS_ONCE:
            return self.version[2] >= _AVRO_WRITER_OPENS_ONCE[line]
        return self._at_least(10, 6, 0)

    @property
    def json_decimal_format(self) -> bool:
        return self._at_least(10, 0, 24)

    @property
    def schema_checks(self) -> "SchemaChecks":
        """R14.3, R14.7: which of storage-common's compatibility checks and projectors the
        release bundles (reference_impl.schema_evolution). Read from the parent version of each
        storage-cloud tag's pom: storage-common 11.2.21 (#416) from 10.6.2 and 11.0.0; 11.2.31 and
        12.0.6 (#463) from 10.6.12, 11.0.9, 12.0.2 and 12.1.0; 12.0.0 and 12.0.1 bundle 12.0.3
        and 12.0.5, with #440 and without #463."""
        from reference_impl.schema_evolution import SchemaChecks

        line, patch = self.version[:2], self.version[2]
        nested_from = {(10, 6): 12, (11, 0): 9, (12, 0): 2}
        if line in nested_from and patch >= nested_from[line] or self._at_least(12, 1, 0):
            return SchemaChecks.NESTED
        if line == (12, 0):
            return SchemaChecks.METADATA
        if line == (11, 0) or line == (10, 6) and patch >= 2:
            return SchemaChecks.ENUMS
        return SchemaChecks.KAFKA

    @property
    def schema_affix(self) -> bool:
        return self._at_least(10, 4, 0)
