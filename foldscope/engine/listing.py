"""Every sweep in a database at a glance, and who is running one: for the sweep picker and the
decision whether a reader may run a sweep or only watch it."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from foldscope.engine.procinfo import RunnerId, claim_alive
from foldscope.engine.store import LIVE_STATUSES, Store
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


def runner_pid(sweep: dict[str, Any]) -> int | None:
    """The live process running a stored sweep, or None (a dead runner's pid is not one)."""
    pid = sweep.get("runner_pid")
    if (sweep.get("status") not in LIVE_STATUSES or not pid
            or not claim_alive(RunnerId(pid, sweep.get("runner_started")),
                               sweep.get("runner_heartbeat"), time.time())):
        return None
    return int(pid)


def run_elsewhere(sweep: dict[str, Any]) -> int | None:
    """The pid of another live process running this sweep (this process's own is not)."""
    pid = runner_pid(sweep)
    return pid if pid is not None and pid != os.getpid() else None


def list_sweeps(store: Store) -> list[SweepSummary]:
    """Every sweep in the database, newest first, with its progress and spend."""
    totals = {sweep_id: (done, planned, started, spend) for sweep_id, done, planned, started, spend
              in store.db.execute(
                  "SELECT sweep_id, SUM(status IN ('done', 'failed')), COUNT(*), MIN(started_at), "
                  "COALESCE(SUM(cost_usd), 0) FROM rows GROUP BY sweep_id")}
    out = []
    for entry in store.sweeps():
        sweep = store.sweep(entry["id"])
        if sweep is None:
            continue
        config = sweep["config"]
        done, planned, started, spend = totals.get(sweep["id"], (0, 0, None, 0.0))
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
            id=sweep["id"], name=sweep["name"], scenarios=scenarios, models=models, arms=arms,
            status=store.live_status(sweep), rows_done=int(done or 0),
            rows_planned=int(planned or 0), started=float(started or sweep["created_at"]),
            spend_usd=float(spend or 0.0), runner_pid=runner_pid(sweep),
            simulated=bool(sweep["simulated"])))
    return out
