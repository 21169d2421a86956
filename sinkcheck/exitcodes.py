"""Exit codes of every sinkcheck command, defined once (each is pinned by a test), and the
error that ends a command with exit 4."""
from enum import IntEnum

from conformance.playing.session import InputError


class Exit(IntEnum):
    # runs were played and every applicable claimed property passed (or: the command did what was
    # asked); with `run --accept-known-bugs`, failed only where a known bug of the release that ran
    # explains it (conformance.catalog.known_bugs.acceptance)
    OK = 0
    FAILED = 1  # at least one claimed property failed (that no accepted known bug explains)
    UNKNOWN = 2  # none failed, but at least one is unknown (its fault never fired)
    INTERNAL = 3  # an internal error of sinkcheck
    USAGE = 4  # a usage, config or environment error; the message says what to fix
    NOTHING_SELECTED = 5  # nothing was selected to run, or every scenario selected was not applicable (nothing tested)
    INTERRUPTED = 130  # SIGINT (Ctrl-C): what finished is written, marked interrupted (128 + 2, as a shell says)
    TERMINATED = 143  # SIGTERM: the same (128 + 15)


class UsageError(InputError):
    """Bad input from the user: the message says what to fix (exit 4). The suite's own
    InputError (a scenario or a target it cannot play) ends a command the same way."""
