"""The runner's events: one typed record per kind, and their JSON lines (``--json-events``).

``EVENT_TYPES`` is the one list of kinds; the runner emits exactly these. Every event
serialises to one JSON object ``{"event": kind, "t": unix_time, ...fields}`` with its fields in
the order declared here (tuples become arrays). The README documents the same schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

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

    def about_model(self) -> str | None:
        """The model the event is about, if one (the event log filters by it)."""
        model = getattr(self, "model", None)
        return model or None

    def persisted(self) -> bool:
        """Whether the event log in the database keeps this event (``PERSISTED_KINDS``); a
        finished row is kept only when it is invalid, so the log stays small."""
        return self.kind in PERSISTED_KINDS

    def summary(self) -> str:
        """One line saying what happened, for the event log (fields as ``name=value``)."""
        return " ".join(f"{k}={v}" for k, v in self.as_json().items() if k not in ("event", "t"))

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

    def summary(self) -> str:
        return self.warning


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
    model: str = ""
    """The model whose call is retried."""

    def summary(self) -> str:
        return (f"{self.fault}: retry in {self.delay_s:g}s · limit now {self.limit} in flight")


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

    def summary(self) -> str:
        verb = "grew" if self.limit > self.previous else "cut"
        return (f"{self.endpoint}: limit {verb} {self.previous} → {self.limit} in flight "
                f"({self.cause})")


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

    def persisted(self) -> bool:
        return not self.valid  # valid rows are in the grid; an invalid one says why here

    def summary(self) -> str:
        return f"row {self.row} ({self.arm}) invalid: {self.reason} · recall {self.recall:.2f}"


@dataclass(frozen=True, kw_only=True)
class RowFailed(Event):
    """A row ended without an answer; ``retryable`` rows are run again as a new attempt."""

    kind: ClassVar[str] = "row_failed"
    row: int
    model: str
    arm: str
    error: str
    retryable: bool
    will_retry: bool = False
    """The run itself will run the row again (it has attempts left, no budget or stop ended it)."""

    def summary(self) -> str:
        return (f"row {self.row} ({self.arm}) failed: {self.error}"
                + (" — will retry" if self.will_retry else ""))


@dataclass(frozen=True, kw_only=True)
class RowRetry(Event):
    """A retryable row starts over as this attempt (its folds were discarded)."""

    kind: ClassVar[str] = "row_retry"
    row: int
    attempt: int


@dataclass(frozen=True, kw_only=True)
class Stopped(Event):
    """A budget was reached (or a key refused): no new call starts; rows in flight stop at their
    next call and stay planned."""

    kind: ClassVar[str] = "stopped"
    reason: str

    def summary(self) -> str:
        return self.reason


@dataclass(frozen=True, kw_only=True)
class Paused(Event):
    """The run was paused (``foldscope pause``, or the TUI): no new calls start; calls in flight
    finish and commit."""

    kind: ClassVar[str] = "paused"
    reason: str

    def summary(self) -> str:
        return f"paused: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class Resumed(Event):
    """A paused run goes on."""

    kind: ClassVar[str] = "resumed"
    reason: str

    def summary(self) -> str:
        return f"resumed: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class SweepFinished(Event):
    """The run ended: ``done``, or ``stopped`` (a budget, or cancelled) with the reason."""

    kind: ClassVar[str] = "sweep_finished"
    sweep: str
    status: str
    reason: str | None
    rows_done: int
    rows_failed: int

    def summary(self) -> str:
        why = f" ({self.reason})" if self.reason else ""
        return (f"{self.status}{why}: {self.rows_done} rows done, {self.rows_failed} failed")


EVENT_TYPES: tuple[type[Event], ...] = (SweepStarted, ModelWarning, RowStarted, FoldCommitted, Retry,
                                        LimitChanged, RowDone, RowFailed, RowRetry, Stopped, Paused,
                                        Resumed, SweepFinished)
"""Every kind of event the runner emits, in the order a run meets them."""

EVENT_KINDS: tuple[str, ...] = tuple(t.kind for t in EVENT_TYPES)
"""Their ``event`` names."""

PERSISTED_KINDS: frozenset[str] = frozenset({
    "sweep_started", "warning", "retry", "limit", "row_done", "row_failed", "row_retry", "stopped",
    "paused", "resumed", "sweep_finished"})
"""Kinds the database's event log keeps (``Event.persisted``): what a watcher needs to see, not
per-fold progress (folds and row starts are in the rows themselves)."""

AnyEvent = (SweepStarted | ModelWarning | RowStarted | FoldCommitted | Retry | LimitChanged
            | RowDone | RowFailed | RowRetry | Stopped | Paused | Resumed | SweepFinished)
"""Every event, discriminated by its ``kind`` (the ``event`` key of its JSON)."""

_BY_KIND: dict[str, type[Event]] = {t.kind: t for t in EVENT_TYPES}


def event_from_json(data: Mapping[str, object]) -> Event | None:
    """An event read back from its JSON (:meth:`Event.as_json`, as the event log stores it) as
    its own type, so readers match on types, not on kind strings.

    Returns:
        The event, or None for a kind or shape this version does not know (a log written by
        another version).
    """
    cls = _BY_KIND.get(str(data.get("event")))
    if cls is None:
        return None
    names = {f.name for f in fields(cls)}
    kwargs: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                              for k, v in data.items() if k in names}
    try:
        return cls(**kwargs)
    except TypeError:
        return None


EventSink = Callable[[Event], None]
"""Where the runner sends events (the headless progress, a test's list, the TUI)."""
