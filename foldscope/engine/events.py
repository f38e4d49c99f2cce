"""The runner's events: one typed record per kind, and their JSON lines (``--json-events``).

``EVENT_TYPES`` is the one list of kinds; the runner emits exactly these. Every event
serialises to one JSON object ``{"event": kind, "t": unix_time, ...fields}`` with its fields in
the order declared here (tuples become arrays). The README documents the same schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from foldscope.core.text import json_text


def _now() -> float:
    return round(time.time(), 3)


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every runner event: its kind and when it happened (Unix seconds, ms precision)."""

    kind: ClassVar[str] = ""
    t: float = field(default_factory=_now)

    def as_json(self) -> dict[str, object]:
        """The event as a JSON object: ``event`` (the kind), ``t``, then the fields."""
        data = asdict(self)
        t = data.pop("t")
        return {"event": self.kind, "t": t, **data}

    def to_line(self) -> str:
        """The event as one JSON line (no trailing newline); text stays readable UTF-8, and
        nothing in it can act on a terminal (``core.text.json_text``)."""
        return json_text(self.as_json())


@dataclass(frozen=True, kw_only=True)
class SweepStarted(Event):
    """The runner claimed the sweep: rows planned, rows still to run, and how they are scheduled."""

    kind: ClassVar[str] = "sweep_started"
    sweep: str
    rows: int
    pending: int
    mode: str
    """The execution mode (``sequential``, ``blocked`` or ``free``)."""
    units: int
    """What workers take one at a time: model × repeat sequences (sequential), else rows."""


@dataclass(frozen=True, kw_only=True)
class ModelWarning(Event):
    """A model's pin or endpoint needs attention (recorded with the sweep; does not stop it)."""

    kind: ClassVar[str] = "warning"
    model: str
    warning: str


@dataclass(frozen=True, kw_only=True)
class RowStarted(Event):
    """A row began (or resumed from the chunk after its last committed fold)."""

    kind: ClassVar[str] = "row_started"
    row: int
    model: str
    arm: str
    repeat: int
    resume_from: int


@dataclass(frozen=True, kw_only=True)
class FoldCommitted(Event):
    """A fold was committed: the chunks it took (first, last), what it carried and how it ended."""

    kind: ClassVar[str] = "fold"
    row: int
    fold: int
    chunks: tuple[int, int]
    carrier_chars: int
    finish: str
    parse: str


@dataclass(frozen=True, kw_only=True)
class Retry(Event):
    """A call is retried after a fault (``429``, ``5xx``, ``timeout``, ...) with this delay."""

    kind: ClassVar[str] = "retry"
    fault: str
    delay_s: float
    limit: int
    """The endpoint's concurrency limit after the fault."""


@dataclass(frozen=True, kw_only=True)
class LimitChanged(Event):
    """An endpoint's adaptive limit on calls in flight changed: halved after a fault (429, 5xx,
    timeout, connect error), or grown by one after a run of replies."""

    kind: ClassVar[str] = "limit"
    endpoint: str
    """The provider endpoint the limit applies to (``sim:<model>``, ``<provider>:<base URL>``)."""
    limit: int
    previous: int
    cause: str
    """The fault kind that cut it, or ``success``."""


@dataclass(frozen=True, kw_only=True)
class RowDone(Event):
    """A row was graded, with its recall and the verdict stored with it."""

    kind: ClassVar[str] = "row_done"
    row: int
    model: str
    arm: str
    recall: float
    valid: bool
    reason: str


@dataclass(frozen=True, kw_only=True)
class RowFailed(Event):
    """A row ended without an answer; ``retryable`` rows are run again as a new attempt."""

    kind: ClassVar[str] = "row_failed"
    row: int
    model: str
    arm: str
    error: str
    retryable: bool


@dataclass(frozen=True, kw_only=True)
class RowRetry(Event):
    """A retryable row starts over as this attempt (its folds were discarded)."""

    kind: ClassVar[str] = "row_retry"
    row: int
    attempt: int


@dataclass(frozen=True, kw_only=True)
class Stopped(Event):
    """A budget was reached: no new rows start (rows in flight finish)."""

    kind: ClassVar[str] = "stopped"
    reason: str


@dataclass(frozen=True, kw_only=True)
class SweepFinished(Event):
    """The run ended: ``done``, or ``stopped`` (a budget, or cancelled) with the reason."""

    kind: ClassVar[str] = "sweep_finished"
    sweep: str
    status: str
    reason: str | None
    rows_done: int
    rows_failed: int


EVENT_TYPES: tuple[type[Event], ...] = (SweepStarted, ModelWarning, RowStarted, FoldCommitted, Retry,
                                        LimitChanged, RowDone, RowFailed, RowRetry, Stopped,
                                        SweepFinished)
"""Every kind of event the runner emits, in the order a run meets them."""

EVENT_KINDS: tuple[str, ...] = tuple(t.kind for t in EVENT_TYPES)
"""Their ``event`` names."""

EventSink = Callable[[Event], None]
"""Where the runner sends events (the headless progress, a test's list, the TUI)."""
