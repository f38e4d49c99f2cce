"""Which process runs a sweep: its pid plus when it started, so a reused pid is not taken for it.

A sweep's claim records its runner's pid and a start token (the boot id and the process's start
time in clock ticks, from ``/proc``). A claim is live only while a process with that pid *and*
that start token exists: when the runner dies and the kernel hands its pid to another process,
the token differs and the sweep is free again. Where ``/proc`` is missing, the pid alone decides.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")


@dataclass(frozen=True)
class RunnerId:
    """One process as a sweep's claim records it."""

    pid: int
    started: str | None
    """``<boot id>:<start ticks>``; None where ``/proc`` is missing, and in claims written
    before foldscope recorded it."""


def start_token(pid: int) -> str | None:
    """The start token of a live process (None: no such process, or no ``/proc`` here)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # Field 2, the command name, is in parentheses and may itself hold spaces or ')': the
    # fields after the last ')' start at field 3, so the start time (field 22) is the 20th.
    try:
        ticks = stat[stat.rindex(b")") + 2:].split()[19].decode()
    except (ValueError, IndexError):
        return None
    return f"{_boot_id()}:{ticks}"


def this_runner() -> RunnerId:
    """This process as a claim records it."""
    pid = os.getpid()
    return RunnerId(pid, start_token(pid))


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (a crashed runner's does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except (OverflowError, ValueError):  # not a pid this system can have
        return False
    return True


def runner_alive(runner: RunnerId) -> bool:
    """Whether the process a claim names is still the one running.

    A claim with a start token holds while a process with that pid has that token. A claim
    without one (written by an older foldscope) holds while its pid is alive and, where
    ``/proc`` says, is a foldscope process: an unrelated process that got the pid later does not
    keep the sweep locked.
    """
    if runner.pid <= 0:
        return False
    if not _PROC.joinpath("self", "stat").exists():
        return process_alive(runner.pid)
    if runner.started is not None:
        return start_token(runner.pid) == runner.started
    try:
        cmdline = (_PROC / str(runner.pid) / "cmdline").read_bytes()
    except OSError:
        return False
    # An empty command line (a process caught mid-exec) says nothing: count it as alive.
    return not cmdline or b"foldscope" in cmdline


def _boot_id() -> str:
    # Start ticks count from boot: the boot id keeps a token from matching after a reboot.
    try:
        return (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
    except OSError:
        return "-"
