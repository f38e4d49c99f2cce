"""A sweep run in a child process: the TUI's handle on it, and the child's tie to its parent.

The TUI does not run a sweep in its own interpreter (the grid's redraws and the runner would
share one lock); it starts the headless runner, ``foldscope run --headless --resume ID``, as a
child process and watches the sweep through the database like any other reader. The child:

- claims the sweep like any runner (one runner per sweep), so a sweep another live process
  runs is watched, not run twice;
- stops when asked (SIGTERM: the run records ``stopped``, or ``done`` if every row finished);
- stops by itself when its parent goes (``--stop-with-parent``: its stdin, a pipe only the
  parent holds, reaches end-of-file when the parent exits or is killed, and its parent pid
  changes), recording ``stopped``, so nothing outlives the TUI and a later run resumes;
- reports one-line errors on stderr (``foldscope: error: ...``), which the parent collects.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from foldscope.core.errors import FoldscopeError
from foldscope.engine.listing import run_elsewhere
from foldscope.engine.store import Store

ERROR_PREFIX = "foldscope: error: "
"""How the command line starts a one-line error on stderr."""

PARENT_CHECK_S = 1.0
"""How often a child tied to its parent checks that its parent pid is unchanged."""

PARENT_GONE = "the process that started it exited"
"""Why a child tied to its parent stopped when the parent went."""


class RunnerStartError(FoldscopeError):
    """The child runner could not be started at all (no interpreter, no processes left)."""


@dataclass(frozen=True)
class ChildOutcome:
    """How a child runner ended, read from its exit and from the store afterwards."""

    status: str
    """The sweep's status as a reader shows it (``done``, ``stopped``, ``interrupted``...)."""
    returncode: int
    error: str | None
    """The child's one-line error, or how it died; None when it ended as runs end."""
    watching_pid: int | None
    """Another live process that holds the sweep's claim (so the child did not run it)."""


def runner_command(db_path: str | Path, sweep_id: str, *, latency_scale: float | None = None,
                   retry_failed: bool = False) -> list[str]:
    """The command line of the headless runner a TUI starts for a sweep."""
    cmd = [sys.executable, "-m", "foldscope.cli.main", "run", "--headless", "--resume", sweep_id,
           "--db", str(db_path), "--stop-with-parent"]
    if latency_scale is not None:
        cmd += ["--latency-scale", repr(float(latency_scale))]
    if retry_failed:
        cmd.append("--retry-failed")
    return cmd


def error_line(lines: list[str], returncode: int) -> str | None:
    """The error a child's stderr and exit code tell of, as one line; None for a normal end.

    A ``foldscope: error:`` line is the command's own one-line error; a traceback's last line
    names an unexpected failure; a signal or an exit code the runner does not use is reported
    as such. Exit codes 0, 130 and 143 are how a run ends (done, or stopped by a signal).
    """
    errors = [line[len(ERROR_PREFIX):] for line in lines if line.startswith(ERROR_PREFIX)]
    if errors:
        return errors[-1]
    if any(line.startswith("Traceback") for line in lines):
        return next((line for line in reversed(lines) if line.strip()), "unexpected failure")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the sweep's runner was killed by {name}"
    if returncode not in (0, 130, 143):
        last = next((line for line in reversed(lines) if line.strip()), "")
        return f"the sweep's runner exited with code {returncode}" + (f": {last}" if last else "")
    return None


class RunnerProcess:
    """One sweep run by a child process, from the parent's side. Methods are thread-safe.

    Args:
        db_path: the database holding the sweep.
        sweep_id: the sweep to run (or resume).
        latency_scale: passed on (simulated latency multiplier; None keeps the sweep's own).
        retry_failed: passed on (run rows that failed on infrastructure again).
        command: the command to start instead of the headless runner (tests).
    """

    def __init__(self, db_path: str | Path, sweep_id: str, *, latency_scale: float | None = None,
                 retry_failed: bool = False, command: list[str] | None = None) -> None:
        self.db_path = Path(db_path)
        self.sweep_id = sweep_id
        self.command = command or runner_command(db_path, sweep_id, latency_scale=latency_scale,
                                                 retry_failed=retry_failed)
        self.cancelled: str | None = None
        """Why the run was asked to stop, once asked."""
        self.started: float | None = None
        """When the child was started (``time.perf_counter``)."""
        self.ended: float | None = None
        """When it had exited and been reaped (``time.perf_counter``)."""
        self._proc: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The child's pid once started."""
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        """Start the child. Its stdin is a pipe only this process holds (its lifeline).

        Raises:
            RunnerStartError: the process could not be started.
        """
        with self._lock:
            if self.cancelled is not None:
                return
            self.started = time.perf_counter()
            try:
                # A session of its own: a hang-up or ctrl+c meant for the terminal reaches the
                # TUI, not the child, which then stops in order when the TUI goes.
                self._proc = subprocess.Popen(
                    self.command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True, errors="replace", close_fds=True,
                    start_new_session=True)
            except (OSError, ValueError, subprocess.SubprocessError) as exc:
                raise RunnerStartError(f"cannot start the sweep's runner "
                                       f"({self.command[0]}): {exc}") from exc

    def wait(self, on_line: Callable[[str], None] | None = None) -> ChildOutcome:
        """Read the child's stderr until it exits, then read how the sweep ended.

        Args:
            on_line: called with each stderr line (without its newline) as it arrives.
        """
        proc = self._proc
        if proc is None:  # cancelled before it started: nothing ran
            return ChildOutcome(self._status(), 0, None, None)
        lines: list[str] = []
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.rstrip("\n")
            lines.append(line)
            del lines[:-200]  # keep the tail: errors come last
            if on_line is not None:
                on_line(line)
        returncode = proc.wait()
        self.ended = time.perf_counter()
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()
        status, elsewhere = self._status(), None
        if returncode:
            elsewhere = self._claimed_elsewhere(proc.pid)
        if elsewhere is not None:  # it lost the claim: another process runs the sweep
            return ChildOutcome(status, returncode, None, elsewhere)
        error = error_line(lines, returncode)
        if returncode < 0 and self.cancelled is not None:
            error = None  # killed after a stop request it did not answer in time: as asked
        return ChildOutcome(status, returncode, error, None)

    def cancel(self, reason: str = "cancelled") -> None:
        """Ask the child to stop (SIGTERM): in-flight calls are dropped, committed folds stay."""
        with self._lock:
            if self.cancelled is None:
                self.cancelled = reason
            proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """End the child at once (after a stop request it did not answer in time)."""
        with self._lock:
            proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

    def _status(self) -> str:
        with Store(self.db_path, readonly=True) as store:
            sweep = store.sweep(self.sweep_id)
            return store.live_status(sweep) if sweep is not None else "missing"

    def _claimed_elsewhere(self, child_pid: int) -> int | None:
        with Store(self.db_path, readonly=True) as store:
            sweep = store.sweep(self.sweep_id)
            pid = run_elsewhere(sweep) if sweep is not None else None
        return pid if pid != child_pid else None


def tie_to_parent(loop: asyncio.AbstractEventLoop, on_gone: Callable[[str], None], *,
                  stdin_fd: int = 0, interval: float = PARENT_CHECK_S) -> None:
    """Call ``on_gone`` once, on ``loop``, when the process that started this one goes.

    Two signs, either enough: end-of-file on stdin (a pipe the parent holds: it closes when the
    parent exits or is killed, at once) and a changed parent pid (checked every ``interval``
    seconds, for a stdin that is not such a pipe). Output is sent to /dev/null first: the
    parent read it, and a write into a closed pipe must not break the stop.
    """
    parent = os.getppid()
    done = False

    def gone() -> None:
        nonlocal done
        if done:
            return
        done = True
        with contextlib.suppress(OSError, ValueError):
            loop.remove_reader(stdin_fd)
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.close(null)
        on_gone(PARENT_GONE)

    def readable() -> None:
        try:
            data = os.read(stdin_fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            gone()

    def check() -> None:
        if os.getppid() != parent:
            gone()
        elif not done:
            loop.call_later(interval, check)

    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        loop.add_reader(stdin_fd, readable)
    loop.call_later(interval, check)
