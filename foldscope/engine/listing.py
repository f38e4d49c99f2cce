"""Every sweep in a database at a glance, and who is running one: for the sweep picker and the
decision whether a reader may run a sweep or only watch it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from foldscope.core.status import LIVE_SWEEP_STATUSES as LIVE_STATUSES
from foldscope.engine.procinfo import RunnerId, claim_alive
from foldscope.engine.store import Store, SweepRecord
from foldscope.engine.store.rows import SweepTotals
from foldscope.engine.sweep import stored_definition


@dataclass(frozen=True)
class SweepSummary:
    """One sweep as the picker lists it."""

    id: str
    name: str
    scenarios: tuple[str, ...]
    models: tuple[str, ...]
    arms: tuple[str, ...]
    status: str
    """As a reader should show it (``Store.live_status``: a dead runner reads interrupted)."""
    rows_done: int
    """Rows finished (done or failed)."""
    rows_planned: int
    started: float
    """When its first row started, or when it was planned if none has."""
    spend_usd: float
    runner_pid: int | None
    """The live process running it, if any."""
    simulated: bool


def runner_pid(sweep: SweepRecord) -> int | None:
    """The live process running a stored sweep, or None (a dead runner's pid is not one)."""
    pid = sweep.runner_pid
    if (sweep.status not in LIVE_STATUSES or not pid
            or not claim_alive(RunnerId(pid, sweep.runner_started),
                               sweep.runner_heartbeat, time.time())):
        return None
    return int(pid)


def run_elsewhere(sweep: SweepRecord) -> int | None:
    """The pid of another live process running this sweep (this process's own is not)."""
    pid = runner_pid(sweep)
    return pid if pid is not None and pid != os.getpid() else None


NO_ROWS = SweepTotals(0, 0, None, 0.0)
"""The totals of a sweep without rows."""


def list_sweeps(store: Store) -> list[SweepSummary]:
    """Every sweep in the database, newest first, with its progress and spend."""
    totals = store.sweep_totals()
    out = []
    for entry in store.sweeps():
        sweep = store.sweep(entry.id)
        if sweep is None:
            continue
        config = sweep.config
        total = totals.get(sweep.id, NO_ROWS)
        try:
            definition = stored_definition(config)
            scenarios, models, arms = definition.scenarios, definition.models, definition.arms
        except (KeyError, ValueError, TypeError, AttributeError):
            # A definition `foldscope check` would flag: list what can be read of it.
            scenarios = ()
            models = tuple(str(m.get("id", "?")) for m in config.get("models", [])
                           if isinstance(m, dict))
            arms = tuple(str(a) for a in config.get("sweep", {}).get("arms", []))
        out.append(SweepSummary(
            id=sweep.id, name=sweep.name, scenarios=scenarios, models=models, arms=arms,
            status=store.live_status(sweep), rows_done=total.rows_done,
            rows_planned=total.rows_planned,
            started=float(total.first_started or sweep.created_at),
            spend_usd=total.spend_usd, runner_pid=runner_pid(sweep),
            simulated=sweep.simulated))
    return out
