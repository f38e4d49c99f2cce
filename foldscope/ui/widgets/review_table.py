"""The values to review: one line per fabricated or carried-corruption answer value, with the
automatic class and a person's verdict side by side."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.answers import Provenance
from foldscope.core.fabrication import HumanVerdict, ReviewValue
from foldscope.core.text import literal
from foldscope.ui.widgets.sort_header import mark_sorted, next_sort

REVIEW_COLUMNS: tuple[tuple[str, str], ...] = (
    ("verdict", "human"), ("label", "label"), ("planted", "planted"), ("given", "given"),
    ("automatic", "class"), ("carrier", "carrier"), ("provenance", "provenance"),
    ("rules", "rules"), ("model", "model"), ("row", "row"), ("reason · by", "reason"))
"""The columns (label, key), the values judged first. Every column is as wide as its widest
cell: a value is never cut (the table scrolls sideways; verdict and label stay in view)."""

FROZEN_COLUMNS = 2
"""Columns that stay in view when the table scrolls sideways: the verdict and the label."""

VERDICT_MARKS = {"fabricated": "✗ fabricated", "not_fabricated": "✓ not fabricated",
                 "unsure": "? unsure"}
"""How a person's verdict reads in the table."""

VERDICT_VARIABLES = {"fabricated": "fact-missing", "not_fabricated": "fact-present",
                     "unsure": "fact-mutated"}
"""Theme variable colouring each verdict."""


CLASS_NAMES = {"fabricated": "fabricated", "carried_corruption": "carried corruption"}
"""The automatic class as the table shows it."""


def _one_line(text: str) -> Text:
    """Model and scenario text: literal, on one line, whole (never cut)."""
    return Text(literal(text, keep_newlines=False), no_wrap=True)


def provenance_text(p: Provenance | None, *, short: bool = False) -> str:
    """Where a wrong value came from, in a few words (folds and chunks counted from 1)."""
    if p is None:
        return ""
    if p.source == "cross_binding":
        return f"= {'fact' if p.fact_graded else 'decoy'} {p.fact_label}"
    if p.source == "earlier_carrier":
        return f"fold {(p.fold or 0) + 1}" if short else f"the carrier of fold {(p.fold or 0) + 1}"
    if p.source == "session_input":
        return f"chunk {(p.chunk or 0) + 1}" if short else f"the input, chunk {(p.chunk or 0) + 1}"
    return "invention"


@dataclass(frozen=True)
class Unsaved:
    """A verdict shown but not stored: on its way to the store, or failed (``error`` set)."""

    intended: HumanVerdict | None
    error: str | None = None


def _verdict_order(v: ReviewValue) -> tuple[int, str]:
    return (1, "") if v.human is None else (0, v.human.verdict)


REVIEW_SORT: dict[str, Callable[[ReviewValue], Any]] = {
    "human": _verdict_order,
    "label": lambda v: v.label.casefold(), "planted": lambda v: v.planted.casefold(),
    "given": lambda v: v.given.casefold(), "class": lambda v: v.answer_class,
    "carrier": lambda v: v.carrier_state,
    "provenance": lambda v: provenance_text(v.provenance, short=True),
    "rules": lambda v: ", ".join(v.signatures), "model": lambda v: v.model.casefold(),
    "row": lambda v: (v.arm, v.repeat),
    "reason": lambda v: ((v.human.reason or "").casefold(), v.human.author) if v.human
    else ("\uffff", ""),
}
"""How each column sorts (a value without a verdict sorts after those with one)."""

SORT_KEYS: tuple[str, ...] = tuple(key for _, key in REVIEW_COLUMNS)
"""The columns in the order ``s`` steps through them."""


class ReviewTable(DataTable):
    """Fabricated and corrupted values; the fabrication screen's keys mark the highlighted one.
    ``sort_by`` (or a click on a header) orders them by any column, ``set_visible`` keeps the
    values a filter matched."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.values: dict[str, ReviewValue] = {}
        """Each listed value with the verdict the store holds (``human``: saved, never more), in
        plan order (shown or filtered out)."""
        self.unsaved: dict[str, Unsaved] = {}
        """Verdicts given but not (yet) stored: being written, or failed."""
        self.fixed_columns = FROZEN_COLUMNS
        self.sort_column: str | None = None
        """The column the values are ordered by (None: plan order)."""
        self.sort_reverse = False
        self._visible: set[str] | None = None
        """The values a filter keeps (None: every value)."""
        self._shown: list[str] = []
        """The keys on screen, in display order."""

    def on_mount(self) -> None:
        for label, key in REVIEW_COLUMNS:
            self.add_column(label, key=key)

    def show(self, values: list[ReviewValue]) -> None:
        """Show these values (rows already listed are updated in place)."""
        keys = [str(v.check_id) for v in values]
        if list(self.values) != keys:
            self.values = {str(v.check_id): v for v in values}
            self._rebuild()
            return
        for v in values:
            self.set_verdict(v.check_id, v.human)

    def set_visible(self, check_ids: set[int] | None) -> None:
        """Show only these values (None: every value), in the order in force."""
        self._visible = None if check_ids is None else {str(i) for i in check_ids}
        self._rebuild()

    def sort_by(self, column: str | None, reverse: bool = False) -> None:
        """Order the values by a column (None: plan order)."""
        if column is not None and column not in REVIEW_SORT:
            raise ValueError(f"unknown column {column!r}")
        self.sort_column, self.sort_reverse = column, reverse
        self._rebuild()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a column's header sorts by it (again: the other way)."""
        event.stop()
        self.sort_by(*next_sort(SORT_KEYS, self.sort_column, self.sort_reverse,
                                str(event.column_key.value)))

    @property
    def shown_keys(self) -> list[str]:
        """The values on screen, in display order."""
        return list(self._shown)

    def _rebuild(self) -> None:
        at = self.current()
        keys = [k for k in self.values if self._visible is None or k in self._visible]
        if self.sort_column is not None:
            by = REVIEW_SORT[self.sort_column]
            keys.sort(key=lambda k: by(self.values[k]), reverse=self.sort_reverse)
        self.clear()
        self._shown = keys
        for key in keys:
            self.add_row(*self._cells(self.values[key]), key=key)
            if key in self.unsaved:
                self._show_unsaved(key)
        mark_sorted(self, [(key, label) for label, key in REVIEW_COLUMNS], self.sort_column,
                    self.sort_reverse)
        if at is not None and str(at.check_id) in keys:
            self.move_cursor(row=keys.index(str(at.check_id)))

    def set_verdict(self, check_id: int, human: HumanVerdict | None) -> None:
        """Show a check's verdict as the store holds it (None: none); any unsaved mark goes."""
        key = str(check_id)
        value = self.values.get(key)
        if value is None or (value.human == human and key not in self.unsaved):
            return
        self.unsaved.pop(key, None)
        self.values[key] = replace(value, human=human)
        if key not in self._shown:
            return  # filtered out: shown with it when it comes back
        self.update_cell(key, "human", self._verdict_text(human), update_width=True)
        self.update_cell(key, "reason", self._reason_text(human), update_width=True)

    def set_unsaved(self, check_id: int, intended: HumanVerdict | None) -> None:
        """Show a verdict given but not yet stored (None: an undo on its way), marked as such."""
        key = str(check_id)
        if key not in self.values:
            return
        self.unsaved[key] = Unsaved(intended)
        if key in self._shown:
            self._show_unsaved(key)

    def set_failed(self, check_id: int, error: str) -> None:
        """Mark a check's last verdict as not saved (its write failed): it stays on screen,
        flagged, until it is given again or the store's verdict is shown."""
        key = str(check_id)
        if key not in self.values:
            return
        intended = self.unsaved[key].intended if key in self.unsaved else None
        self.unsaved[key] = Unsaved(intended, error)
        if key in self._shown:
            self._show_unsaved(key)

    def shown_saved(self) -> dict[int, HumanVerdict | None]:
        """The verdicts shown as saved (every listed value without an unsaved mark)."""
        return {v.check_id: v.human for key, v in self.values.items() if key not in self.unsaved}

    def _show_unsaved(self, key: str) -> None:
        mark = self.unsaved[key]
        if mark.intended is None:
            text = Text("⚠ undo unsaved" if mark.error else "… undoing", style="italic")
        else:
            word = VERDICT_MARKS[mark.intended.verdict].split(" ", 1)[1]
            text = Text(f"{'⚠' if mark.error else '…'} {word}", style="italic")
        if mark.error:
            colour = self.app.get_css_variables().get("error", "")
            text.stylize(f"bold {colour}")
        self.update_cell(key, "human", text)
        self.update_cell(key, "reason", _one_line("NOT SAVED: " + mark.error) if mark.error
                         else Text("saving…", style="dim"))

    def current(self) -> ReviewValue | None:
        """The highlighted value."""
        if not self.values or not self.row_count or self.cursor_row < 0:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self.values.get(str(key))

    def select(self, check_id: int) -> None:
        """Put the cursor on a check's line (if it is shown)."""
        keys = self._shown
        if str(check_id) in keys:
            self.move_cursor(row=keys.index(str(check_id)))

    def next_unreviewed(self) -> int | None:
        """The row index of the next shown value without a verdict after the cursor (wrapping)."""
        keys = self._shown
        n = len(keys)
        for step in range(1, n + 1):
            i = (self.cursor_row + step) % n
            if self.values[keys[i]].human is None:
                return i
        return None

    def _verdict_text(self, human: HumanVerdict | None) -> Text:
        if human is None:
            return Text("")
        colour = self.app.get_css_variables().get(VERDICT_VARIABLES[human.verdict], "")
        return Text(VERDICT_MARKS[human.verdict], style=f"bold {colour}")

    def _reason_text(self, human: HumanVerdict | None) -> Text:
        if human is None:
            return Text("")
        reason = f"{human.reason} · " if human.reason else ""
        return _one_line(f"{reason}{human.author}")

    def _cells(self, v: ReviewValue) -> list[Any]:
        by_key = {
            "human": self._verdict_text(v.human), "label": _one_line(v.label),
            "planted": _one_line(v.planted), "given": _one_line(v.given),
            "class": Text(CLASS_NAMES.get(v.answer_class, v.answer_class)),
            "carrier": Text(v.carrier_state),
            "provenance": _one_line(provenance_text(v.provenance, short=True)),
            "rules": Text(", ".join(v.signatures)), "model": _one_line(v.model),
            "row": _one_line(f"{v.arm}·{v.repeat}"), "reason": self._reason_text(v.human)}
        return [by_key[key] for _, key in REVIEW_COLUMNS]


def detail_text(v: ReviewValue | None) -> Text:
    """Everything about one value, uncut, wrapping at the screen's width: the values judged,
    then where it came from and the person's verdict with its author and reason (model and
    scenario text literal)."""
    if v is None:
        return Text("no fabricated or corrupted value in this sweep", style="dim")
    first = Text.assemble(
        (literal(v.label, keep_newlines=False), "bold"), "  planted ",
        (literal(v.planted, keep_newlines=False), "bold"), "  given ",
        (literal(v.given, keep_newlines=False), "bold"))
    human = ("no verdict yet" if v.human is None else
             f"{VERDICT_MARKS[v.human.verdict]} by {v.human.author}"
             + (f": {v.human.reason}" if v.human.reason else ""))
    second = Text(literal(
        f"{v.model} · arm {v.arm} · repeat {v.repeat} · final fold {v.final_fold + 1} · carrier "
        f"{v.carrier_state} · from {provenance_text(v.provenance) or '—'} · rules "
        f"{', '.join(v.signatures) or '—'} · automatic {v.answer_class.replace('_', ' ')} · "
        f"{human}", keep_newlines=False), style="dim")
    return Text("\n").join([first, second])
