"""The events and control repository: a live run's event log, runner status and control requests."""

from __future__ import annotations

import dataclasses
import json
import time

from foldscope.core.errors import StoreError
from foldscope.core.text import storable
from foldscope.engine.activity import (
    CONTROL_REQUESTS,
    ControlRequest,
    EndpointState,
    RunnerStatus,
    StoredEvent,
)
from foldscope.engine.events import Event, event_from_json
from foldscope.engine.store.connection import Repository, named

EVENT_CAP = 2000
"""The most events a sweep's log keeps (the oldest go first): a 429 storm stays a few hundred
kilobytes, and a watcher reads the newest."""


def _event(data_json: str | None) -> Event | None:
    """A logged event's JSON read back as its type (None when it is not one this version
    knows)."""
    try:
        data = json.loads(data_json) if data_json else None
    except json.JSONDecodeError:
        return None
    return event_from_json(data) if isinstance(data, dict) else None


class ActivityRepository(Repository):
    """The ``events``, ``runner_status`` and ``sweep_control`` tables."""

    def add_events(self, sweep_id: str, events: list[Event], cap: int = EVENT_CAP) -> None:
        """Append events to a sweep's log in one transaction, keeping only its newest ``cap``."""
        if not events:
            return
        with self.db.atomic():
            self.db.conn.executemany(
                "INSERT INTO events (sweep_id, t, kind, model, summary, data_json) "
                "VALUES (?,?,?,?,?,?)",
                [(sweep_id, e.t, e.kind, e.about_model(), storable(e.summary()),
                  json.dumps(e.as_json(), ensure_ascii=False)) for e in events])
            self.db.execute(
                "DELETE FROM events WHERE sweep_id=? AND id <= (SELECT id FROM events WHERE "
                "sweep_id=? ORDER BY id DESC LIMIT 1 OFFSET ?)", [sweep_id, sweep_id, cap])

    def events(self, sweep_id: str, *, since: int = 0, limit: int = EVENT_CAP
               ) -> list[StoredEvent]:
        """A sweep's logged events after event id ``since``, oldest first (at most ``limit``,
        the newest of them)."""
        found = named(self.db.execute(
            "SELECT id, sweep_id, t, kind, model, summary, json_extract(data_json, '$.fault') "
            "AS fault, data_json FROM events WHERE sweep_id=? AND id>? ORDER BY id DESC LIMIT ?",
            [sweep_id, since, limit]))
        return [StoredEvent(**{k: v for k, v in e.items() if k != "data_json"},
                            event=_event(e["data_json"])) for e in reversed(found)]

    def set_runner_status(self, sweep_id: str, status: RunnerStatus) -> None:
        """Record the live runner's status (one row per sweep, replaced)."""
        self.db.execute(
            "INSERT OR REPLACE INTO runner_status (sweep_id, pid, started_at, updated_at, "
            "finished_at, folds_at_start, finished_at_start, paused, endpoints_json) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [sweep_id, status.pid, status.started_at, status.updated_at, status.finished_at,
             status.folds_at_start, status.finished_at_start, int(status.paused),
             json.dumps([dataclasses.asdict(e) for e in status.endpoints], ensure_ascii=False)])

    def runner_status(self, sweep_id: str) -> RunnerStatus | None:
        """The last status a runner of this sweep recorded, or None."""
        found = named(self.db.execute(
            "SELECT pid, started_at, updated_at, finished_at, folds_at_start, finished_at_start, "
            "paused, endpoints_json FROM runner_status WHERE sweep_id=?", [sweep_id]))
        if not found:
            return None
        status = found[0]
        endpoints = json.loads(status.pop("endpoints_json"))
        return RunnerStatus(**{**status, "paused": bool(status["paused"])}, endpoints=tuple(
            EndpointState(**{**e, "models": tuple(e["models"])}) for e in endpoints))

    def request_control(self, sweep_id: str, request: str, reason: str) -> None:
        """Ask the sweep's runner to pause, resume or cancel (it polls this between calls)."""
        if request not in CONTROL_REQUESTS:
            raise StoreError(f"unknown control request '{request}' "
                             f"(known: {', '.join(CONTROL_REQUESTS)})")
        self.db.execute("INSERT OR REPLACE INTO sweep_control (sweep_id, request, reason, "
                        "requested_at) VALUES (?,?,?,?)", [sweep_id, request, reason, time.time()])

    def control(self, sweep_id: str) -> ControlRequest | None:
        """The last control request for a sweep, or None."""
        found = named(self.db.execute("SELECT request, reason, requested_at FROM sweep_control "
                                      "WHERE sweep_id=?", [sweep_id]))
        return ControlRequest(**found[0]) if found else None

    def clear_control(self, sweep_id: str) -> None:
        """Forget a sweep's control request (a new run starts unpaused)."""
        self.db.execute("DELETE FROM sweep_control WHERE sweep_id=?", [sweep_id])
