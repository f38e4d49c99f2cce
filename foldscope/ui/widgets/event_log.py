"""The event log panel: what the runner met (retries, 429s and back-off, invalid rows with their
reason, budget stops, pauses, warnings), read from the database so a run in another process
shows too, and filtered by kind and model."""

from __future__ import annotations

import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import DataTable, Select
from textual.widgets.data_table import RowDoesNotExist

from foldscope.core.text import literal
from foldscope.engine.activity import StoredEvent
from foldscope.engine.events import EVENT_KINDS, PERSISTED_KINDS

KEEP = 500
"""Entries the panel holds (the database keeps more; the newest matter while watching)."""

WHAT_WIDTH = 110
"""Characters of an entry's description the table shows."""

LOGGED_KINDS: tuple[str, ...] = tuple(k for k in EVENT_KINDS if k in PERSISTED_KINDS)
"""The kinds the log can show, in the order a run meets them."""


def event_row(event: StoredEvent) -> list[Text]:
    """One entry's cells: local time, kind, model and what happened, all shown literally."""
    kind = event.kind if not event.fault else f"{event.kind} {event.fault}"
    return [Text(time.strftime("%H:%M:%S", time.localtime(event.t))), Text(kind),
            Text(literal(event.model or "—", keep_newlines=False)),
            Text(literal(event.summary, keep_newlines=False))]


class EventLog(Vertical):
    """The log: two filters over a table of the newest entries."""

    DEFAULT_CSS = """
    EventLog {
        height: 14;
        #event-filters { height: auto; }
        #event-filters Select { width: 1fr; }
        #event-table { height: 1fr; }
    }
    """

    @dataclass
    class Filtered(Message):
        """The filters changed (kind and model; None means any)."""

        log: EventLog
        kind: str | None
        model: str | None

        @property
        def control(self) -> EventLog:
            return self.log

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._events: deque[StoredEvent] = deque(maxlen=KEEP)
        self._models: tuple[str, ...] = ()
        self.kind: str | None = None
        """Only entries of this kind (None: every kind)."""
        self.model: str | None = None
        """Only entries about this model (None: every model)."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="event-filters"):
            yield Select([(k, k) for k in LOGGED_KINDS], prompt="every kind", id="event-kind")
            yield Select([], prompt="every model", id="event-model")
        table: DataTable[Text] = DataTable(id="event-table", cursor_type="row")
        # Fixed widths: entries arrive in bursts and a fixed layout never jumps while watching
        # (a longer "what" is cut; the full entry is in the database).
        for label, width in (("time", 8), ("kind", 20), ("model", 18), ("what", WHAT_WIDTH)):
            table.add_column(label, width=width)
        yield table

    def set_models(self, models: tuple[str, ...]) -> None:
        """Offer these models in the model filter (only when they changed)."""
        if models != self._models:
            self._models = models
            self.query_one("#event-model", Select).set_options(
                [(literal(m, keep_newlines=False), m) for m in models])

    def add(self, events: tuple[StoredEvent, ...]) -> None:
        """Append new entries; those the filters pass go into the table (oldest drop out)."""
        table = self.query_one("#event-table", DataTable)
        for event in events:
            if len(self._events) == KEEP:
                with suppress(RowDoesNotExist):  # filtered out: it was never in the table
                    table.remove_row(str(self._events[0].id))
            self._events.append(event)
            if self._passes(event):
                table.add_row(*event_row(event), key=str(event.id))
        if events:
            table.move_cursor(row=table.row_count - 1, animate=False, scroll=True)

    def _passes(self, event: StoredEvent) -> bool:
        return ((self.kind is None or event.kind == self.kind)
                and (self.model is None or event.model == self.model))

    @property
    def shown(self) -> list[StoredEvent]:
        """The entries the table shows, oldest first."""
        return [e for e in self._events if self._passes(e)]

    @on(Select.Changed)
    def _filter(self, event: Select.Changed) -> None:
        event.stop()
        value = None if event.value is Select.NULL else str(event.value)
        attr = "kind" if event.select.id == "event-kind" else "model"
        if getattr(self, attr) == value:
            return  # new options offered (set_models), the filter itself unchanged
        setattr(self, attr, value)
        table = self.query_one("#event-table", DataTable)
        table.clear()  # a person changed the filter: rebuild once from what is held
        for e in self.shown:
            table.add_row(*event_row(e), key=str(e.id))
        self.post_message(self.Filtered(self, self.kind, self.model))
