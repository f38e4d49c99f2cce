"""Pause, resume or cancel a running sweep through its database: the runner, in whatever process,
polls the request between calls (``SweepRunner._obey``); no signal is sent."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from foldscope.core.errors import ConfigError
from foldscope.core.status import SweepStatus
from foldscope.engine.activity import CONTROL_REQUESTS
from foldscope.engine.listing import runner_pid
from foldscope.engine.store import Store

EXPECTED_STATUS: dict[str, tuple[SweepStatus, ...]] = {
    "pause": (SweepStatus.PAUSED,), "resume": (SweepStatus.RUNNING,),
    "cancel": (SweepStatus.STOPPED, SweepStatus.DONE, SweepStatus.FAILED)}
"""The sweep status that shows a runner obeyed each request."""


@dataclass(frozen=True)
class ControlOutcome:
    """What became of a request."""

    sweep_id: str
    request: str
    runner_pid: int
    status: str
    """The sweep's status when the answer was read."""
    obeyed: bool
    """Whether the runner acted on it before the wait ended."""


def request_control(db_path: str | Path, sweep_id: str, request: str, reason: str) -> int:
    """Record a request for the sweep's live runner; return that runner's pid.

    Raises:
        ConfigError: no such sweep, an unknown request, or no live runner to obey it (one line).
    """
    if request not in CONTROL_REQUESTS:
        raise ConfigError(f"unknown request '{request}' (known: {', '.join(CONTROL_REQUESTS)})")
    with Store(db_path) as store:
        sweep = store.sweep(sweep_id)
        if sweep is None:
            known = ", ".join(s.id for s in store.sweeps()[:5]) or "none"
            raise ConfigError(f"{db_path}: no sweep '{sweep_id}' (recent: {known})")
        pid = runner_pid(sweep)
        if pid is None:
            raise ConfigError(f"{db_path}: sweep {sweep_id} is not running (status "
                              f"{store.live_status(sweep)}); there is nothing to {request}")
        store.request_control(sweep_id, request, reason)
    return pid


def await_outcome(db_path: str | Path, sweep_id: str, request: str, pid: int, *,
                  timeout_s: float = 10.0, poll_s: float = 0.1) -> ControlOutcome:
    """Wait (at most ``timeout_s``) until the sweep's status shows the runner obeyed."""
    deadline = time.monotonic() + timeout_s
    while True:
        with Store(db_path, readonly=True) as store:
            sweep = store.sweep(sweep_id)
            status = store.live_status(sweep) if sweep is not None else "missing"
        obeyed = status in EXPECTED_STATUS[request] or status == SweepStatus.INTERRUPTED
        if obeyed or time.monotonic() >= deadline:
            return ControlOutcome(sweep_id, request, pid, status, obeyed)
        time.sleep(poll_s)
