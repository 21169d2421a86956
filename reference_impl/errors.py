"""The connector's exception kinds, as the fold needs to tell them apart (spec §13)."""
from __future__ import annotations


class ConnectorError(Exception):
    """Base: `rule` names the spec rule that raises it."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule
        self.message = message


class PartitionError(ConnectorError):
    """PartitionException from encodePartition: DLQ'd and skipped when a reporter exists."""


class DataError(ConnectorError):
    """DataException in the writer: DLQ'd and skipped when a reporter exists."""


class FatalError(ConnectorError):
    """Anything that kills the task whatever the error tolerance (e.g. RecordField missing)."""
