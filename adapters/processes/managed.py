"""A managed process: its own process group (`start_new_session`), its output in a log file of the
run directory, stopped as a whole group and killed at exit as a last resort; bounded waits that
say what they waited for and which log to read; ports, /proc and the JVM's common settings."""
from __future__ import annotations

import atexit
import os
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from adapters.target import TargetError


LOOPBACK = "127.0.0.1"

# Process groups started by this Python process and not yet stopped: killed at exit as a last
# resort (a test that crashed before its finalizer ran).
_LIVE: dict[int, "ManagedProcess"] = {}
_LIVE_LOCK = threading.Lock()


def _kill_leftovers() -> None:
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for p in procs:
        try:
            p.stop(timeout_s=3)
        except Exception:
            pass


atexit.register(_kill_leftovers)


def now_ms() -> int:
    return int(time.time() * 1000)


def _ephemeral_range() -> tuple[int, int]:
    try:
        lo, hi = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(lo), int(hi)
    except (OSError, ValueError):
        return 32768, 60999


# Ports this process has handed out: a server binds its port seconds after it was chosen (a JVM
# starting), and the same port must not be handed out twice in between.
_HANDED_OUT: set[int] = set()
_PORT_LOCK = threading.Lock()
_PORT_FLOOR = 20000


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now, chosen at random below the kernel's
    ephemeral range. A port the kernel hands out (bind to 0) is also the range every outgoing
    connection takes its source port from: between the choice and a JVM's bind, seconds later,
    a client connection of another test could take it (seen in CI: a Connect worker's REST
    server failing to bind)."""
    lo, _ = _ephemeral_range()
    with _PORT_LOCK:
        if lo - _PORT_FLOOR >= 1000:
            rng = random.Random()
            for _ in range(200):
                port = rng.randrange(_PORT_FLOOR, lo)
                if port in _HANDED_OUT:
                    continue
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    try:
                        s.bind((LOOPBACK, port))
                    except OSError:
                        continue
                _HANDED_OUT.add(port)
                return port
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((LOOPBACK, 0))
            port = s.getsockname()[1]
        _HANDED_OUT.add(port)
        return port


def port_taken_in(log: Path | str | None) -> bool:
    """Whether a server's log says its port was taken (it lost the race for a free port)."""
    if not log:
        return False
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return False
    return "Address already in use" in text or "BindException" in text


def port_open(port: int, host: str = LOOPBACK, timeout_s: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def tail(path: Path | str | None, n: int = 15) -> str:
    if not path:
        return ""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + ln for ln in lines[-n:])


def wait_until(predicate: Callable[[], object], timeout_s: float, what: str, *,
               log: Path | str | None = None, proc: "ManagedProcess | None" = None,
               interval_s: float = 0.25,
               fatal: tuple[type[BaseException], ...] = ()) -> object:
    """Poll `predicate` until it returns a truthy value (returned) or raise TargetError naming
    `what`, the time waited and the log. Stops early when `proc` has exited; an exception of a
    `fatal` type raised by the predicate ends the wait at once."""
    deadline = time.monotonic() + timeout_s
    last_exc: Exception | None = None
    while True:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # noqa: BLE001 - reported below
            if fatal and isinstance(e, fatal):
                raise
            last_exc = e
        if proc is not None and proc.returncode is not None:
            raise TargetError(
                f"{proc.name} exited with code {proc.returncode} while waiting for {what}; "
                f"log: {proc.log_path}\n{tail(proc.log_path)}")
        if time.monotonic() >= deadline:
            why = f" (last error: {last_exc})" if last_exc else ""
            where = f"; log: {log}\n{tail(log)}" if log else ""
            raise TargetError(f"timed out after {timeout_s:.0f}s waiting for {what}{why}{where}")
        time.sleep(interval_s)


def _dies_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv` run so that the kernel SIGKILLs it when the thread that started it dies: a test
    process that crashes (a segfault, a SIGKILL) then leaves no broker or worker behind to eat
    the machine. setpriv (util-linux, on every Debian) sets that and execs `argv` in place, so
    the pid stays the child's; preexec_fn would do the same but is unsafe in a threaded parent.
    Processes are started from the caller's thread (never from a sampler), which lives as long
    as the run."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else list(argv)


class ManagedProcess:
    """One OS process in its own process group, output to `log_path`."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path, *,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None):
        self.name = name
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.popen: subprocess.Popen | None = None
        self.starts = 0

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    @property
    def returncode(self) -> int | None:
        return self.popen.poll() if self.popen else None

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def start(self) -> "ManagedProcess":
        if self.alive:
            raise TargetError(f"{self.name} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        out = open(self.log_path, "ab")
        out.write(f"\n===== sinkcheck: start #{self.starts + 1} of {self.name} at {now_ms()}: "
                  f"{' '.join(self.argv)}\n".encode())
        out.flush()
        env = dict(os.environ)
        if self.env:
            env.update(self.env)
        try:
            self.popen = subprocess.Popen(_dies_with_parent(self.argv), stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=env, cwd=self.cwd,
                                          start_new_session=True)
        finally:
            out.close()
        self.starts += 1
        with _LIVE_LOCK:
            _LIVE[self.popen.pid] = self
        return self

    def signal(self, sig: int) -> None:
        """Send `sig` to the whole process group."""
        if self.popen is None:
            raise TargetError(f"{self.name} was never started")
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        """SIGKILL the process group and reap it (a crash)."""
        if self.popen is None:
            return
        self.signal(signal.SIGKILL)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise TargetError(f"{self.name} (pid {self.pid}) survived SIGKILL for 10s") from None
        self._forget()

    def pause(self) -> None:
        self.signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.signal(signal.SIGCONT)

    def stop(self, timeout_s: float = 15) -> None:
        """SIGTERM the group, then SIGKILL after `timeout_s`. Safe to call at any time."""
        if self.popen is None:
            return
        if self.popen.poll() is None:
            self.signal(signal.SIGCONT)  # a paused process cannot handle SIGTERM
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        # the leader may be gone while others in its group live on: always sweep the group
        self.signal(signal.SIGKILL)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self._forget()

    def _forget(self) -> None:
        with _LIVE_LOCK:
            if self.popen is not None:
                _LIVE.pop(self.popen.pid, None)


# --------------------------------------------------------------------------- /proc helpers

def child_pids(root: int | None = None) -> set[int]:
    """All live descendants of `root` (default: this process), from /proc."""
    root = os.getpid() if root is None else root
    parent: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields and fields[0] == "Z":
            continue  # a zombie holds nothing; it is reaped by its parent
        parent[int(d)] = int(fields[1])
    out: set[int] = set()
    frontier = [root]
    while frontier:
        p = frontier.pop()
        for c, pp in parent.items():
            if pp == p and c not in out:
                out.add(c)
                frontier.append(c)
    return out


def listening_ports() -> set[int]:
    """TCP ports in LISTEN state on this host (IPv4 and IPv6), from /proc/net/tcp*."""
    ports: set[int] = set()
    for f in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(f) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 3 and parts[3] == "0A":
                        ports.add(int(parts[1].rsplit(":", 1)[1], 16))
        except OSError:
            continue
    return ports


# --------------------------------------------------------------------------- components

def java() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return "java"


LOG4J2_PROPERTIES = """\
status = warn
rootLogger.level = {level}
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
logger.kafka.name = kafka
logger.kafka.level = {level}
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""

# Small-heap, quick-start JVM flags for a 2-core test machine.
DEFAULT_JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")


def _write_props(path: Path, props: Mapping[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path
