"""Exit codes of every sinkcheck command, defined once (each is pinned by a test)."""
from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # every claimed property passed (or: the command did what was asked)
    FAILED = 1  # at least one claimed property failed
    UNKNOWN = 2  # none failed, but at least one is unknown (its fault never fired)
    INTERNAL = 3  # an internal error of sinkcheck
    USAGE = 4  # a usage, config or environment error; the message says what to fix
    NOTHING_SELECTED = 5  # nothing was selected to run
