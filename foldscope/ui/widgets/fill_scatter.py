"""Fill fraction vs recall: one mark per valid row of an arm with a declared ceiling, its shape
and colour the row's failure mode."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget

from foldscope.core.study import (
    FAILURE_MODES,
    OVER_WRITING,
    RECALLED,
    UNDER_WRITING,
    FillPoint,
)

MARKS = {RECALLED: "●", OVER_WRITING: "▲", UNDER_WRITING: "▼"}
"""The mark of each failure mode (rows without a ceiling are not plotted)."""

_CLASS = {RECALLED: "fill-scatter--recalled", OVER_WRITING: "fill-scatter--over",
          UNDER_WRITING: "fill-scatter--under"}
_PRIORITY = {RECALLED: 0, UNDER_WRITING: 1, OVER_WRITING: 2}
"""Where rows share a character cell, a failure is drawn over a recalled row."""


def x_limit(points: Sequence[FillPoint]) -> float:
    """The x axis runs from 0 to 1, or further when a carrier overshot its ceiling."""
    return max(1.0, max((p.fill for p in points), default=1.0))


def layout(points: Sequence[FillPoint], width: int, height: int) -> list[list[str | None]]:
    """Place points on a ``height`` × ``width`` grid (row 0 at the top is recall 1.0).

    Returns:
        Per cell, the failure mode drawn there, or None.
    """
    grid: list[list[str | None]] = [[None] * width for _ in range(height)]
    xmax = x_limit(points)
    for p in points:
        col = min(width - 1, max(0, math.floor(p.fill / xmax * (width - 1) + 0.5)))
        row = min(height - 1, max(0, math.floor((1.0 - p.recall) * (height - 1) + 0.5)))
        here = grid[row][col]
        if here is None or _PRIORITY.get(p.mode, 0) > _PRIORITY.get(here, 0):
            grid[row][col] = p.mode
    return grid


class FillScatter(Widget):
    """A terminal scatter plot of final fill fraction (x) against recall (y)."""

    DEFAULT_CSS = """
    FillScatter { height: auto; width: auto; }
    FillScatter > .fill-scatter--recalled { color: $fact-present; }
    FillScatter > .fill-scatter--over { color: $fact-mutated; }
    FillScatter > .fill-scatter--under { color: $fact-missing; }
    FillScatter > .fill-scatter--axis { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"fill-scatter--recalled", "fill-scatter--over", "fill-scatter--under",
                         "fill-scatter--axis"}
    """Mark colours by failure mode, and the axes."""

    PLOT_WIDTH = 40
    PLOT_HEIGHT = 11

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._points: list[FillPoint] = []

    def show(self, points: Sequence[FillPoint]) -> None:
        """Plot these rows."""
        self._points = list(points)
        self.refresh(layout=True)

    def render(self) -> Text:
        # Styles are read at render time, so a theme switch recolours the marks.
        axis = self.get_component_rich_style("fill-scatter--axis")
        out = Text("Recall (y) vs final fill fraction (x), valid rows of arms with a ceiling\n",
                   style="bold")
        if not self._points:
            out.append("no rows with a declared ceiling yet", style="dim")
            return out
        grid = layout(self._points, self.PLOT_WIDTH, self.PLOT_HEIGHT)
        for i, line in enumerate(grid):
            tick = "1.0" if i == 0 else "0.0" if i == len(grid) - 1 else "   "
            out.append(f"{tick} │", style=axis)
            for mode in line:
                if mode is None:
                    out.append(" ")
                else:
                    out.append(MARKS.get(mode, "?"),
                               style=self.get_component_rich_style(_CLASS[mode])
                               if mode in _CLASS else axis)
            out.append("\n")
        xmax = x_limit(self._points)
        out.append("    └" + "─" * self.PLOT_WIDTH + "\n", style=axis)
        right = f"{xmax:.2f}"
        out.append("     0" + " " * (self.PLOT_WIDTH - len(right) - 1) + right + "  fill\n",
                   style=axis)
        for mode in FAILURE_MODES:
            if mode in MARKS:
                n = sum(p.mode == mode for p in self._points)
                out.append(f"  {MARKS[mode]} ", style=self.get_component_rich_style(_CLASS[mode]))
                out.append(f"{mode} ({n})")
        return out
