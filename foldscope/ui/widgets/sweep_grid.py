"""The live arm × model grid: mean recall with valid/total rows, or the answer classes, per cell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.tally import CellTally


DEFAULT_COLOURS = {"fact-present": "green", "fact-mutated": "yellow", "fact-missing": "red",
                   "cell-pending": "grey50"}


def cell_text(cell: CellTally | None, colours: dict[str, str] = DEFAULT_COLOURS) -> Text:
    """Render one cell: mean recall (or a dash) and ``valid/rows``; unfinished counts are dim.

    Colours come from theme variables (passed in as ``colours``), never hard-coded styles.
    """
    if cell is None:
        return Text("·", style=colours["cell-pending"])
    recall = cell.mean_recall
    rows = cell.rows
    finished = cell.done_rows + cell.failed_rows
    counts = f"{cell.valid_rows}/{rows}"
    if recall is None:
        label = Text("  —  ", style="dim")
    else:
        var = "fact-present" if recall >= 0.8 else ("fact-mutated" if recall >= 0.4 else "fact-missing")
        style = f"bold {colours[var]}"
        label = Text(f"{recall:5.2f}", style=style)
    tail = Text(f"  {counts}", style="" if finished == rows else "dim")
    if cell.running_rows:
        tail.append(" ⟳", style="dim cyan")
    return Text.assemble(label, tail)


def answers_text(cell: CellTally | None, colours: dict[str, str] = DEFAULT_COLOURS) -> Text:
    """Render one cell's failed answers apart: honest abstentions (A), fabrications (F),
    carried corruptions (C, the carrier held a mutated value and the answer repeated it), hedged
    answers (H, competing or hedged values, never credited) and the fabrication flags a person
    set (⚑)."""
    if cell is None or not cell.checks:
        return Text("·", style=colours["cell-pending"])
    abstained, fabricated = cell.answers("honest_abstention"), cell.answers("fabricated")
    corrupted, hedged = cell.answers("carried_corruption"), cell.answers("hedged")
    return Text.assemble(
        (f"A{abstained:>3}", colours["cell-pending"]), " ",
        (f"F{fabricated:>3}", f"bold {colours['fact-missing']}" if fabricated
         else colours["cell-pending"]), " ",
        (f"C{corrupted:>3}", colours["fact-mutated"] if corrupted else colours["cell-pending"]),
        " ",
        (f"H{hedged:>3}", colours["fact-mutated"] if hedged else colours["cell-pending"]),
        (f" ⚑{cell.flagged}", f"bold {colours['fact-missing']}") if cell.flagged else "")


VIEWS = {"recall": cell_text, "answers": answers_text}
"""What a grid cell can show, by view name."""


def row_key(scenario: str, arm: str, several: bool) -> str:
    """The grid's row key: the arm, prefixed by its scenario when a sweep has several."""
    return f"{scenario} {arm}" if several else arm


class SweepGrid(DataTable):
    """A DataTable keyed by arm (rows) and model (columns), updated cell by cell."""

    DEFAULT_CSS = """
    SweepGrid { height: auto; max-height: 100%; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="cell", zebra_stripes=True, **kwargs)
        self.view = "recall"
        self._last: Sequence[CellTally] = ()
        self._models: list[str] = []
        self._arms: list[str] = []
        self._shown: dict[tuple[str, str], str] = {}

    def set_layout(self, arms: list[str], models: list[str],
                   scenarios: list[str] | None = None) -> None:
        """Lay out the grid once per sweep: one row per arm (per scenario, if several), one
        column per model."""
        scenarios = list(scenarios or [])
        keys = [row_key(sc, arm, len(scenarios) > 1) for sc in (scenarios or [""]) for arm in arms]
        if keys == self._arms and models == self._models:
            return
        self.clear(columns=True)
        self._arms, self._models, self._shown = keys, list(models), {}
        width = max(5, *(len(k) + 2 for k in keys))
        self.add_column(Text("arm", style="bold"), key="arm", width=width)
        for model in models:
            self.add_column(Text(model, style="bold"), key=model, width=max(18, len(model) + 2))
        colours = self._colours()
        for key in keys:
            self.add_row(Text(key, style="bold"),
                         *[cell_text(None, colours) for _ in models], key=key)

    def show_view(self, view: str) -> None:
        """Switch what the cells show and redraw them from the last snapshot."""
        self.view = view
        self._shown = {}
        self.update_cells(self._last)

    def _colours(self) -> dict[str, str]:
        variables = self.app.get_css_variables()
        return {k: variables.get(k, v) for k, v in DEFAULT_COLOURS.items()}

    def update_cells(self, cells: Sequence[CellTally]) -> int:
        """Update only the cells whose content changed; return how many changed."""
        changed = 0
        self._last = cells
        render = VIEWS[self.view]
        colours = self._colours()  # theme variables once per update, not per cell
        several = len({c.scenario for c in cells}) > 1
        for cell in cells:
            row = row_key(cell.scenario, cell.arm, several)
            key = (row, cell.model)
            if row not in self._arms or cell.model not in self._models:
                continue
            text = render(cell, colours)
            if self._shown.get(key) == text.plain:
                continue
            self._shown[key] = text.plain
            self.update_cell(row, cell.model, text)
            changed += 1
        return changed
