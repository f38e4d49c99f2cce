"""The filter line of a table: ``/`` opens it, a query (``core.find``) narrows the table as it is
typed, the line says how many of how many match; escape clears it."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Static

from foldscope.core.find import Query, QueryError, parse_query
from foldscope.core.text import literal

FILTER_HINT = ("class: status: model: arm: label: text: or a word · /regex/ (/…/i any case) · "
               "\"quoted text\" · a,b either · -term not · enter keeps it · escape clears")
"""The syntax in one line (the input's placeholder)."""


class FilterBar(Vertical):
    """A query input (shown while it is being edited) above a line saying what the filter keeps."""

    DEFAULT_CSS = """
    FilterBar {
        height: auto;
        display: none;
        #filter-input { display: none; border: none; height: 1; padding: 0 1; }
        #filter-status { height: auto; color: $text-muted; }
        &.-editing #filter-input { display: block; }
        &.-error #filter-status { color: $error; }
    }
    FilterBar.-editing, FilterBar.-active { display: block; }
    """

    BINDINGS = [Binding("escape", "clear", "Clear the filter", show=False)]
    """Escape (while the query is edited) clears it; enter keeps it."""

    @dataclass
    class Changed(Message):
        """A query was typed that parses (None: the filter was cleared)."""

        bar: FilterBar
        query: Query | None

        @property
        def control(self) -> FilterBar:
            """The bar the query was typed in."""
            return self.bar

    @dataclass
    class Closed(Message):
        """Editing ended (enter or escape): the table may take the focus back."""

        bar: FilterBar

        @property
        def control(self) -> FilterBar:
            """The bar that closed."""
            return self.bar

    def __init__(self, noun: str = "rows", **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.noun = noun
        """What the table lists ("rows", "values")."""
        self.applied: Query | None = None
        """The query in force (None: no filter)."""

    def compose(self) -> ComposeResult:
        field = Input(placeholder=FILTER_HINT, id="filter-input")
        field.can_focus = False  # only while the query is edited (never the screen's first focus)
        yield field
        yield Static(id="filter-status")

    @property
    def active(self) -> bool:
        """A filter is in force or being edited."""
        return self.applied is not None or self.has_class("-editing")

    def open(self) -> None:
        """Show the input (with the query in force) and focus it."""
        self.add_class("-editing")
        field = self.query_one(Input)
        field.can_focus = True
        field.focus()

    def clear(self) -> None:
        """Drop the filter: every row shows again."""
        had = self.applied is not None
        self.applied = None
        self.query_one(Input).value = ""
        self._stop_editing()
        self.remove_class("-active", "-error")
        self.query_one("#filter-status", Static).update("")
        if had:
            self.post_message(self.Changed(self, None))
        self.post_message(self.Closed(self))

    def reset(self) -> None:
        """Back to no filter, not edited, telling no one (the screen is being shown afresh)."""
        self.applied = None
        field = self.query_one(Input)
        with field.prevent(Input.Changed):
            field.value = ""
        self._stop_editing()
        self.remove_class("-active", "-error")
        self.query_one("#filter-status", Static).update("")

    def _stop_editing(self) -> None:
        self.remove_class("-editing")
        self.query_one(Input).can_focus = False

    def action_clear(self) -> None:
        """Escape: clear the filter."""
        self.clear()

    @on(Input.Changed, "#filter-input")
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        text = event.value
        if not text.strip():
            self.remove_class("-error", "-active")
            self.query_one("#filter-status", Static).update("")
            if self.applied is not None:
                self.applied = None
                self.post_message(self.Changed(self, None))
            return
        try:
            query = parse_query(text)
        except QueryError as e:
            self.add_class("-error")
            self.query_one("#filter-status", Static).update(
                Text("⚠ " + literal(str(e), keep_newlines=False)))
            return  # the table keeps the last query that parsed
        self.remove_class("-error")
        self.add_class("-active")
        self.applied = query
        self.query_one("#filter-status", Static).update(Text("searching…", style="italic"))
        self.post_message(self.Changed(self, query))

    @on(Input.Submitted, "#filter-input")
    def _kept(self, event: Input.Submitted) -> None:
        event.stop()
        if self.has_class("-error"):
            return  # the error stays in view until the query reads
        self._stop_editing()
        if self.applied is None:
            self.clear()
            return
        self.post_message(self.Closed(self))

    def show_count(self, shown: int, total: int, note: str = "") -> None:
        """Say how many of the table's entries the query in force keeps."""
        if self.applied is None:
            return
        query = literal(self.applied.source.strip(), keep_newlines=False)
        self.query_one("#filter-status", Static).update(Text.assemble(
            (f"{shown} of {total} {self.noun}", "bold"), " match ", (query, "bold"),
            (f" · {note}" if note else ""), " · / edits · escape clears"))
