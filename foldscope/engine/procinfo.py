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


HEARTBEAT_FRESH_S = 10.0
"""A runner's heartbeat (its status row, rewritten at least every ``runner.HEARTBEAT_S``) this
recent keeps its claim live even when its pid cannot be seen from here."""


def pid_namespace() -> str | None:
    """This process's pid namespace (``pid:[inode]``), or None where ``/proc`` cannot say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def this_runner() -> RunnerId:
    """This process as a claim records it: pid, start token and (after ``|``) the pid
    namespace the pid belongs to."""
    pid = os.getpid()
    token = start_token(pid)
    ns = pid_namespace()
    if ns is None:
        return RunnerId(pid, token)
    # "?": /proc here does not show this pid (a pid namespace without its own /proc mount).
    return RunnerId(pid, f"{token if token is not None else '?'}|{ns}")


def pid_visible(runner: RunnerId) -> bool:
    """Whether the claim's pid is one of this machine's and namespace's, so its pid check is
    the truth. A runner in a container (another pid namespace) records a pid that means
    nothing here; claims that do not say their namespace are judged by their pid as before."""
    if runner.started is None or "|" not in runner.started:
        return True
    return runner.started.split("|", 1)[1] == pid_namespace()


def claim_alive(runner: RunnerId, heartbeat_at: float | None, now: float) -> bool:
    """Whether a claim holds: its process is alive here, or its heartbeat is fresh and its pid
    cannot be judged from here (another pid namespace: a container's runner)."""
    if runner_alive(runner):
        return True
    fresh = heartbeat_at is not None and now - heartbeat_at < HEARTBEAT_FRESH_S
    return fresh and not pid_visible(runner)


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
        if not pid_visible(runner):  # another namespace's pid: nothing here is that process
            return False
        token = runner.started.split("|", 1)[0]
        return process_alive(runner.pid) if token == "?" else start_token(runner.pid) == token
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
