"""Each planted fact's state after every fold of a row: ● present, ◐ mutated, ○ missing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.row import FoldRecord

STATE_MARKS = {"present": ("●", "fact-present"), "mutated": ("◐", "fact-mutated"),
               "missing": ("○", "fact-missing")}
"""How a fact's state after a fold is drawn, and the theme variable that colours it."""


class FactHistory(DataTable):
    """A table of planted facts (graded first, starred) with one narrow column per fold."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)

    def show(self, facts: Sequence[tuple[str, str, bool]], folds: Sequence[FoldRecord],
             upto: int) -> None:
        """Show the facts' states in folds ``0..upto``.

        Args:
            facts: (label, value, graded) for every planted fact.
            folds: the row's folds, each with its ``fact_status`` map.
            upto: index of the last fold shown.
        """
        self.clear(columns=True)
        if not folds:
            return
        colours = self.app.get_css_variables()
        # Fold columns come before the label, so a fact's history reads left to right at any
        # terminal width.
        self.add_column("", key="graded", width=1)
        for i in range(upto + 1):
            self.add_column(str(i + 1), key=f"f{i}", width=1)
        self.add_column("label", key="label")
        self.add_column("value", key="value")
        for label, value, graded in facts:
            marks = []
            for fold in folds[: upto + 1]:
                mark, var = STATE_MARKS.get(fold.fact_status.get(label, "missing"),
                                            STATE_MARKS["missing"])
                marks.append(Text(mark, style=colours.get(var, "")))
            self.add_row(Text("★" if graded else " "), *marks, Text(label), Text(value),
                         key=label)
