"""Each planted fact's state after every fold of a row (· not yet, ● present, ◐ mutated,
○ missing) and the fold it was lost at."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from foldscope.core.forensics import MISSING, MUTATED, NOT_YET, PRESENT, Timeline, human_fold
from foldscope.core.forensics import STATE_MARKS as MARKS
from foldscope.core.text import literal
from foldscope.ui.widgets.table_cells import QuickCells

STATE_VARIABLES: dict[str, str] = {NOT_YET: "cell-pending", PRESENT: "fact-present",
                                   MUTATED: "fact-mutated", MISSING: "fact-missing"}
"""The theme variable that colours each state."""

STATE_MARKS: dict[str, tuple[str, str]] = {state: (MARKS[state], var)
                                           for state, var in STATE_VARIABLES.items()}
"""How a fact's state after a fold is drawn (``core.forensics.STATE_MARKS``), and the theme
variable that colours it."""


class FactHistory(QuickCells):
    """A table of planted facts (graded first, starred) by label, with one narrow column per
    fold, then the fold each was lost at (↺: it came back later) and its value.

    Fed with the row's timeline as it stood after the fold shown (``core.forensics.
    timeline_upto``), the same one ``foldscope inspect --json`` prints, so the screen and the
    command cannot disagree.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self._timeline: Timeline | None = None
        self.fixed_columns = 2  # the graded star and the label stay in view

    def on_mount(self) -> None:
        # Colours come from the theme: re-draw when it changes. A signal, unsubscribed when the
        # strip goes: a watch on the app's theme would keep every closed cell screen alive
        # (Textual prunes such watchers only when the theme changes), and the collector's
        # pauses grow with them.
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)

    def _theme_changed(self, _theme: object) -> None:
        # A screen kept for reuse and on no stack is drawn afresh when next shown.
        if self.screen in self.app.screen_stack:
            self._draw()

    def on_unmount(self) -> None:
        self.app.theme_changed_signal.unsubscribe(self)

    def show(self, timeline: Timeline | None) -> None:
        """Show a timeline (``None``: no folds yet), keeping the highlighted fact."""
        self._timeline = timeline
        self._draw()

    def reset(self) -> None:
        """Empty, the first fact highlighted next time (another row of another cell)."""
        self._timeline = None
        self.clear(columns=True)

    def strip_text(self) -> list[tuple[str, str, str]]:
        """What the strip shows, per fact: (label, state marks left to right, lost-at cell)."""
        out = []
        for key in self.rows:
            row = self.get_row(key)
            out.append((str(row[1]), str(row[2]).replace(" ", ""), str(row[3])))
        return out

    def _draw(self) -> None:
        keep = self.cursor_row
        self.clear(columns=True)
        timeline = self._timeline
        if timeline is None or not timeline.folds:
            return
        colours = self.app.get_css_variables()
        folds = timeline.folds
        # Each fact's marks are one cell, one mark under each fold's number, two spaces
        # apart (as a column per fold was drawn; a cell each cost a Rich render per fold
        # and fact, the most of a cell screen's frame).
        numbers = [str((f.fold + 1) % 100) for f in folds]  # fold 1 is the first, as the diff says
        gaps = [" " * (len(n) + 2 - 1) for n in numbers]  # the mark, then to the next number
        styles = {state: (mark, colours.get(var, "")) for state, (mark, var) in STATE_MARKS.items()}
        # The label is frozen at the left and the marks follow it, so a fact's history
        # reads left to right beside its label at any terminal width.
        self.add_column("", key="graded", width=1)
        self.add_column("label", key="label")
        self.add_column("  ".join(numbers), key="folds")
        self.add_column("lost at", key="lost")
        self.add_column("value", key="value")
        last = len(folds) - 1
        for i, fact in enumerate(timeline.facts):
            marks = Text()
            for j, f in enumerate(folds):
                marks.append(*styles[f.facts[i].state])
                if j < last:
                    marks.append(gaps[j])
            lost_fold = human_fold(fact.lost_fold)
            lost = "" if lost_fold is None else str(lost_fold)
            if fact.returned:
                lost += " ↺"
            self.add_row(Text("★" if fact.graded else " "),
                         Text(literal(fact.label, keep_newlines=False)), marks,
                         Text(lost, style=colours.get("fact-missing", "") if lost else ""),
                         Text(literal(fact.value, keep_newlines=False), no_wrap=True),
                         key=fact.label)
        if 0 <= keep < self.row_count:
            self.move_cursor(row=keep, animate=False)
