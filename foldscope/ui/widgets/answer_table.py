"""The recall answer of one row, fact by fact: what was asked, what came back, how it is classed."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from foldscope.core.fabrication import CLEARED, flag_refusal
from foldscope.core.row import StoredCheck
from foldscope.core.text import literal

CLASS_VARIABLES = {"correct": "fact-present", "carried_corruption": "fact-mutated",
                   "fabricated": "fact-missing", "read_failure": "fact-missing",
                   "hedged": "fact-mutated", "honest_abstention": "cell-pending"}
"""Theme variable colouring each answer class."""


class AnswerTable(DataTable):
    """One line per graded fact of a row; ``f`` flags (or unflags) an answer as fabricated."""

    BINDINGS = [Binding("f", "toggle_flag", "Flag fabricated")]
    """Key bindings of the answer table."""

    @dataclass
    class FlagToggled(Message):
        """A person flagged or unflagged one checked answer as fabricated."""

        table: AnswerTable
        check_id: int
        flagged: bool

        @property
        def control(self) -> AnswerTable:
            """The table the flag was toggled in."""
            return self.table

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._checks: dict[str, StoredCheck] = {}
        self.fixed_columns = 2  # the flag and the label stay in view when it scrolls sideways

    def on_mount(self) -> None:
        self._add_columns()

    def reset(self) -> None:
        """Empty, as first mounted (columns as narrow as their names, scrolled home)."""
        self._checks = {}
        self.clear(columns=True)
        self._add_columns()

    def _add_columns(self) -> None:
        # Columns are as wide as their widest cell: the values judged are never cut (the
        # table scrolls sideways); the values come right after the label.
        for label, key in (("flag", "flag"), ("label", "label"), ("expected", "expected"),
                           ("answered", "found"), ("class", "class"), ("carried", "carried")):
            self.add_column(label, key=key)

    def show(self, checks: list[StoredCheck]) -> None:
        """Replace the table's contents with a row's checks."""
        self.clear()
        self._checks = {str(c.id): c for c in checks}
        variables = self.app.get_css_variables()
        for c in checks:
            var = CLASS_VARIABLES.get(c.classification, "")
            found = "" if c.found is None else c.found
            # Labels and values are scenario and model text: shown literally, on one line.
            self.add_row(self._flag_text(c.flagged),
                         Text(literal(c.label, keep_newlines=False)),
                         Text(literal(c.expected, keep_newlines=False)),
                         Text(literal(found, keep_newlines=False)),
                         Text(c.classification, style=variables.get(var, "")),
                         "yes" if c.in_carrier else "no", key=str(c.id))

    def set_flag(self, check_id: int, flagged: bool) -> None:
        """Show a check's flag as the store holds it (after a write was refused or failed)."""
        key = str(check_id)
        check = self._checks.get(key)
        if check is not None and bool(check.flagged) != flagged:
            self._checks[key] = replace(check, flagged=flagged)
            self.update_cell(key, "flag", self._flag_text(flagged))

    def current(self) -> StoredCheck | None:
        """The highlighted check."""
        if not self._checks or self.cursor_row < 0 or self.cursor_row >= self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self._checks.get(str(key))

    def _flag_text(self, flagged: int | bool) -> Text:
        colour = self.app.get_css_variables().get("fact-missing", "")
        return Text("⚑", style=f"bold {colour}") if flagged else Text("")

    def action_toggle_flag(self) -> None:
        """Flag the highlighted answer as fabricated, or clear its flag (refused on a correct
        answer, an abstention or an empty answer)."""
        if not self._checks or self.cursor_row < 0:
            return
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        check = self._checks.get(str(key))
        if check is None:
            return
        # The one flag rule (core.fabrication): never on a correct answer or an abstention.
        refusal = flag_refusal(check, CLEARED if check.flagged else "fabricated")
        if refusal is not None:
            self.notify(literal(refusal, keep_newlines=False), severity="warning", timeout=5,
                        markup=False)
            return
        check = self._checks[str(key)] = replace(check, flagged=not check.flagged)
        self.update_cell(str(key), "flag", self._flag_text(check.flagged))
        self.post_message(self.FlagToggled(self, check.id, check.flagged))
