"""A command's life beside its work: SIGINT and SIGTERM end it through an exception (so every
`finally` stops the processes it started and the command keeps what finished), and an output
directory is held by one command at a time (a lock file naming the holder)."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from sinkcheck.exitcodes import Exit, UsageError

LOCK_FILE = ".sinkcheck.lock"


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: the command stops where it is, writes what finished and
    exits 128 + the signal's number, as a shell reports a process ended by it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return Exit.INTERRUPTED if self.signum == signal.SIGINT else Exit.TERMINATED


# A signal's exception can be lost: Python runs the handler between any two bytecodes of the
# main thread, inside a garbage collector callback or a __del__ too, where an exception is printed
# and dropped. So the signal is also kept here until a command takes it (as_interrupted), and
# checked at every step (check_interrupted, from Terminal.progress) and at the end (defer_signals).
_PENDING: list[Interrupted] = []


def as_interrupted(e: KeyboardInterrupt) -> Interrupted:
    """The signal that ended the work, taken. A KeyboardInterrupt raised before the handler was
    installed (or by Python's own) is SIGINT."""
    stop = e if isinstance(e, Interrupted) else _PENDING[0] if _PENDING else Interrupted(signal.SIGINT)
    _PENDING.clear()
    # its traceback would keep the interrupted run's frames alive, and with them its Kafka clients,
    # which go on reconnecting to the brokers the command stops
    return stop.with_traceback(None)


def check_interrupted() -> None:
    """Raise the signal that arrived and whose exception was lost (main thread only)."""
    if _PENDING and threading.current_thread() is threading.main_thread():
        raise _PENDING[0]


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main thread while inside; the handlers
    before are put back on exit. (SIGTERM's default would end the process with no `finally`
    run: the Kafka and Connect processes sinkcheck started would be left running.)"""
    def raise_it(signum: int, _frame: Any) -> None:
        if not _PENDING:
            _PENDING.append(Interrupted(signum))
        raise _PENDING[0]

    # a signal ignored when the process started stays ignored (a shell's background job ignores SIGINT)
    before = {s: h for s in (signal.SIGINT, signal.SIGTERM) if (h := signal.getsignal(s)) is not signal.SIG_IGN
              and threading.current_thread() is threading.main_thread()}  # only the main thread may set handlers
    def dropped(unraisable: Any) -> None:  # a lost Interrupted is kept in _PENDING: no traceback for it
        if not isinstance(unraisable.exc_value, Interrupted):
            hook(unraisable)

    hook = sys.unraisablehook
    sys.unraisablehook = dropped
    for s in before:
        signal.signal(s, raise_it)
    try:
        yield
    finally:
        _PENDING.clear()
        sys.unraisablehook = hook
        for s, h in before.items():
            signal.signal(s, h)


@dataclass
class Deferred:
    signum: int | None = None  # the first signal that arrived meanwhile

    def stopped(self) -> Interrupted | None:
        return None if self.signum is None else Interrupted(self.signum)


def defer_signals(warn: Callable[[str], None]) -> Deferred:
    """From now on SIGINT and SIGTERM do not cut short the reports of what finished: the first
    is noted (`warn` says the reports are being finished) and the command exits by it after
    writing them. The handlers before are put back by the enclosing signals_interrupt()."""
    seen = Deferred(_PENDING[0].signum if _PENDING else None)  # one that arrived and was lost
    _PENDING.clear()

    def note(signum: int, _frame: Any) -> None:
        if seen.signum is None:
            seen.signum = signum
            warn(f"sinkcheck: {signal.Signals(signum).name}: finishing the reports first")

    for s in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(s) is not signal.SIG_IGN and threading.current_thread() is threading.main_thread():
            signal.signal(s, note)
    return seen


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@contextlib.contextmanager
def holding(out: Path, command: str, warn: Callable[[str], None] = lambda m: print(m, file=sys.stderr)) -> Iterator[Path]:
    """Hold `out` for this command: DIR/.sinkcheck.lock names the holder (pid, command, start).
    A live holder is a usage error (exit 4) naming it; a lock whose process is gone (killed
    with SIGKILL, the machine restarted) is taken over, and `warn` says so."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {out}: cannot make it a directory ({e.strerror}); give a directory path") from None
    lock = out / LOCK_FILE
    me = {"pid": os.getpid(), "command": command, "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for _ in range(3):  # another command may take a stale lock over at the same moment
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _read_lock(lock)
            pid = holder.get("pid")
            if pid is None and time.time() - _mtime(lock) < 5:  # its holder is writing it now
                raise UsageError(f"--out {out} is being taken by another command (lock file {lock}); give another --out")
            if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
                raise UsageError(f"--out {out} is in use by pid {pid} ({holder.get('command', '?')}, since "
                                 f"{holder.get('started_at', '?')}; lock file {lock}): wait for it to finish, stop it, "
                                 "or give another --out") from None
            warn(f"sinkcheck: taking over the lock of {out}: its holder (pid {pid}, {holder.get('command', '?')}) "
                 "is gone")
            lock.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(me, f)
        break
    else:
        raise UsageError(f"--out {out}: could not take its lock file {lock}; give another --out")
    try:
        yield lock
    finally:
        if _read_lock(lock).get("pid") == os.getpid():
            lock.unlink(missing_ok=True)


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def _read_lock(lock: Path) -> dict[str, Any]:
    try:
        doc = json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # unreadable or half-written: no live holder can be named
    return doc if isinstance(doc, dict) else {}
