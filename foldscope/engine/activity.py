"""What a live run records for watchers besides its rows: its event log entries, its status
(limiter per endpoint, paused or not) and the control requests it obeys, as typed records."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.engine.events import Event

CONTROL_REQUESTS: tuple[str, ...] = ("pause", "resume", "cancel")
"""What a person can ask a running sweep to do (``foldscope pause|resume|cancel``, the TUI)."""


@dataclass(frozen=True)
class StoredEvent:
    """One entry of a sweep's event log, as the database keeps it."""

    id: int
    sweep_id: str
    t: float
    """When it happened (Unix seconds)."""
    kind: str
    """The event's kind (``engine.events.EVENT_KINDS``)."""
    model: str | None
    summary: str
    """One line saying what happened (model text in it is data: show it literally)."""
    fault: str | None = None
    """For a retry, the fault retried (``rate_limited``, ``server_error``, ...)."""
    event: Event | None = None
    """The event itself, read back as its type (``engine.events.event_from_json``; None for a
    kind this version does not know)."""


@dataclass(frozen=True)
class EndpointState:
    """One provider endpoint's adaptive limiter as the runner last saw it."""

    endpoint: str
    """``sim:<model>`` or ``<provider>:<base URL>``."""
    models: tuple[str, ...]
    in_flight: int
    limit: int
    """The adaptive limit now (halved on 429s, grown back on clean calls)."""
    ceiling: int
    """The configured maximum."""


@dataclass(frozen=True)
class RunnerStatus:
    """The live runner's own record of its run, rewritten at most about once a second."""

    pid: int
    started_at: float
    """When this run started (Unix seconds)."""
    updated_at: float
    finished_at: float | None
    folds_at_start: int
    """Folds already committed when this run started (an earlier run's)."""
    finished_at_start: int
    """Rows already finished when this run started."""
    paused: bool
    endpoints: tuple[EndpointState, ...]


@dataclass(frozen=True)
class ControlRequest:
    """The last request a person made of a sweep's runner."""

    request: str
    """One of ``CONTROL_REQUESTS``."""
    reason: str
    requested_at: float
