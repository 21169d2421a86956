"""Runs of a simulated target in worker processes: each run of the embedded Python sink is
CPU-bound and stands alone (its clock, log, S3 and registry are its own), so a session plays
them on every core while it draws the next scenarios, and takes their results in the order the
runs were started. What a run does, and so its result, is the same in a worker as in the session.
"""
from __future__ import annotations

import concurrent.futures
import os
import pickle
import signal
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

# how many processes play a simulated target's runs (`SINKCHECK_RUN_PROCESSES=1`: all in the
# command's own process, and a Kafka Connect target's generated runs one at a time, not on the
# lanes of its warm stacks); default: one per core the command may use
PROCESSES_ENV = "SINKCHECK_RUN_PROCESSES"


def default_processes() -> int:
    value = os.environ.get(PROCESSES_ENV, "").strip()
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            raise ValueError(f"{PROCESSES_ENV}={value!r}: a number of processes, 1 or more") from None
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


@dataclass
class Outcome:
    """What one run gave: its RunResult, or how it failed. `kind`: "input" (the scenario or the
    target spec is refused: the user must fix it), "config" (the connector config is
    rejected), "error" (anything else: reported beside the results)."""

    result: Any = None
    kind: str = ""
    error: str = ""  # "<exception type>: <message>"
    message: str = ""  # the exception's own text
    traceback: str = ""
    # the result's scenario is the one the run was given, left out of what a worker sends back
    # (the session has it: a large stream's records are hundreds of MB to copy between processes)
    given_scenario: bool = False


def failed(e: Exception) -> Outcome:
    """The Outcome of a run that raised `e` (called inside its `except`, for the traceback)."""
    from conformance.inputs.scenario import ScenarioError
    from conformance.inputs.targets import TargetSpecError
    from reference_impl.config import ConfigError

    kind = "input" if isinstance(e, (TargetSpecError, ScenarioError)) else "config" if isinstance(
        e, ConfigError) else "error"
    return Outcome(None, kind, f"{type(e).__name__}: {e}", str(e), traceback.format_exc(limit=8))


# A run's scenario and its Outcome go between the processes as files in its run directory: a
# large stream's are hundreds of MB, and through the pool's pipe (64 KiB at a time, each chunk
# a hand-over between two processes) they took tens of seconds on a loaded machine
SCENARIO_FILE = ".scenario-for-the-worker.pickle"
OUTCOME_FILE = ".outcome-from-the-worker.pickle"


def handed_over(path: Path) -> Any:
    """What the other process wrote to `path` (the file is removed)."""
    with open(path, "rb") as f:
        value = pickle.load(f)
    path.unlink()
    return value


def _hand_over(value: Any, path: Path) -> Path:
    with open(path, "wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def play(scenario_file: Path, spec: str, run_dir: Path, plugin_path: list[str] | None,
         prepare_report: Callable[[Any], Any] | None = None) -> Path:
    """One run of `spec` (a simulated target: no stack) in a worker: the scenario, and the
    scenario.json to save (Session.saved_scenario), from `scenario_file`; its Outcome to the
    file returned, with what `prepare_report` derives of its result kept in it."""
    from conformance.playing.session import executed

    scenario, saved = handed_over(scenario_file)
    saved.save(run_dir / "scenario.json")
    outcome = executed(scenario, spec, run_dir, plugin_path)
    if outcome.result is not None and prepare_report is not None:
        prepare_report(outcome.result)
    if outcome.result is not None and outcome.result.scenario is scenario:
        outcome.result.scenario, outcome.given_scenario = None, True
    try:
        return _hand_over(outcome, run_dir / OUTCOME_FILE)
    except Exception as e:  # noqa: BLE001 - a result that cannot be sent is that run's error
        return _hand_over(failed(e), run_dir / OUTCOME_FILE)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches the whole process group: the command stops its workers itself, after
    # keeping the runs that finished (sinkcheck.lifecycle)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class RunPool:
    """`processes` worker processes (started as they are first needed, each a fresh
    interpreter: the command's threads are not forked) that `play` runs."""

    def __init__(self, processes: int):
        import multiprocessing

        self.processes = processes
        self._pool = concurrent.futures.ProcessPoolExecutor(
            processes, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts)
        self._pending: set[concurrent.futures.Future[Path]] = set()

    def submit(self, scenario: Any, saved: Any, spec: str, run_dir: Path, plugin_path: list[str] | None,
               prepare_report: Callable[[Any], Any] | None = None) -> "concurrent.futures.Future[Path]":
        """`play` of the scenario in a worker, which saves `saved` as its scenario.json: the
        future's file holds its Outcome (handed_over). The two share their records: one copy."""
        run_dir.mkdir(parents=True, exist_ok=True)
        future = self._pool.submit(play, _hand_over((scenario, saved), run_dir / SCENARIO_FILE), spec, run_dir,
                                   plugin_path, prepare_report)
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        return future

    def close(self) -> None:
        """Stop the workers: at once where runs are still going (the command was stopped: they
        are not waited for), else once they are idle."""
        if any(not f.done() for f in list(self._pending)):
            for f in list(self._pending):
                f.cancel()
            # the executor has no public way to end a running call: its processes are stopped
            for proc in list((getattr(self._pool, "_processes", None) or {}).values()):
                proc.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)
