"""Survival curves drawn in braille: one line per series over folds 1..N, fraction 0..1."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from foldscope.core.arms import ARMS
from foldscope.core.text import literal

SERIES_CLASSES = tuple(f"survival-chart--s{i}" for i in range(12))
"""Component classes colouring the series: ``$arm-0`` .. ``$arm-11`` of the theme."""

SERIES_MARKS = ("●", "▲", "■", "◆", "✚", "✖", "○", "△", "□", "◇", "★", "▼")
"""The mark drawn at each fold's point of a series (and in its legend), one per slot: with the
colour, no two of the twelve arms look alike, in any theme or without colour."""

def arm_slot(arm: str) -> int | None:
    """An arm's colour and mark slot: its place in the arm catalogue (None: not an arm)."""
    order = list(ARMS)
    return order.index(arm) if arm in order else None


_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
"""Braille dot bits by (row within the cell, column within the cell)."""

_AXIS = 5
"""Columns left of the plot for the y-axis labels."""


@dataclass(frozen=True)
class Series:
    """One curve: a name and a fraction (or None) after each fold."""

    name: str
    values: tuple[float | None, ...]
    slot: int | None = None
    """Which colour and mark it takes (an arm's place in the catalogue, so an arm looks the
    same in every sweep); None: its place in the list."""


def point_cells(series: Sequence[Series], width: int, height: int
                ) -> dict[tuple[int, int], int]:
    """The cell (row, column) of each series' point at each fold, on the canvas
    ``braille_canvas`` draws (later series win a shared cell), for the marks."""
    width, height = max(1, width), max(1, height)
    folds = max((len(s.values) for s in series), default=0)
    dots_x, dots_y = width * 2 - 1, height * 4 - 1
    cells: dict[tuple[int, int], int] = {}
    for k, s in enumerate(series):
        for i, v in enumerate(s.values):
            if v is None:
                continue
            x = 0 if folds <= 1 else round(i * dots_x / (folds - 1))
            y = round((1.0 - min(1.0, max(0.0, v))) * dots_y)
            cells[(y // 4, x // 2)] = k
    return cells


def braille_canvas(series: Sequence[Series], width: int, height: int
                   ) -> list[list[tuple[str, int | None]]]:
    """Rasterise curves into a grid of braille characters.

    Each cell holds 2 × 4 dots; fold 1 sits at the left edge, the last fold at the right, 1.0
    at the top and 0.0 at the bottom. Consecutive points are joined by straight lines; a None
    point breaks the line. Where series cross, the cell takes the later series' colour.

    Args:
        series: the curves (values in 0..1).
        width: cells across.
        height: cells down.

    Returns:
        ``height`` rows of ``width`` (character, series index or None) pairs.
    """
    width, height = max(1, width), max(1, height)
    bits = [[0] * width for _ in range(height)]
    owner: list[list[int | None]] = [[None] * width for _ in range(height)]
    folds = max((len(s.values) for s in series), default=0)
    dots_x, dots_y = width * 2 - 1, height * 4 - 1

    def point(i: int, v: float) -> tuple[int, int]:
        x = 0 if folds <= 1 else round(i * dots_x / (folds - 1))
        return x, round((1.0 - min(1.0, max(0.0, v))) * dots_y)

    def plot(x: int, y: int, k: int) -> None:
        cx, cy = x // 2, y // 4
        bits[cy][cx] |= _DOTS[y % 4][x % 2]
        owner[cy][cx] = k

    for k, s in enumerate(series):
        prev: tuple[int, int] | None = None
        for i, v in enumerate(s.values):
            if v is None:
                prev = None
                continue
            here = point(i, v)
            if prev is None:
                plot(*here, k)
            else:
                (x0, y0), (x1, y1) = prev, here
                steps = max(abs(x1 - x0), abs(y1 - y0), 1)
                for t in range(steps + 1):
                    plot(round(x0 + (x1 - x0) * t / steps), round(y0 + (y1 - y0) * t / steps), k)
            prev = here
    return [[(chr(0x2800 + b) if b else " ", owner[r][c] if b else None)
             for c, b in enumerate(row)] for r, row in enumerate(bits)]


class SurvivalChart(Widget):
    """Curves of the share of graded facts still carried after each fold, with axes and a
    legend; colours are theme styles read at render time."""

    COMPONENT_CLASSES = {*SERIES_CLASSES, "survival-chart--axis"}
    """One colour per series, and the axes."""

    DEFAULT_CSS = """
    SurvivalChart { height: 1fr; min-height: 10; }
    SurvivalChart > .survival-chart--axis { color: $text-muted; }
    """ + "\n".join(f"SurvivalChart > .survival-chart--s{i} {{ color: $arm-{i}; }}"
                    for i in range(len(SERIES_CLASSES)))

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.series: list[Series] = []

    def show(self, series: Sequence[Series]) -> None:
        """Draw these curves."""
        self.series = list(series)
        self.refresh()

    def _legend_rows(self) -> int:
        return len(self.series)

    def slot(self, k: int) -> int:
        """The colour and mark slot of series ``k``."""
        slot = self.series[k].slot
        return (k if slot is None else slot) % len(SERIES_CLASSES)

    def _series_style(self, k: int):
        return self.get_component_rich_style(SERIES_CLASSES[self.slot(k)], partial=True)

    def render_line(self, y: int) -> Strip:
        width, height = self.size
        base = self.rich_style
        plot_h = max(1, height - 2 - self._legend_rows())
        plot_w = max(1, width - _AXIS)
        axis = self.get_component_rich_style("survival-chart--axis", partial=True)
        if y < plot_h:
            canvas, points = self._canvas(plot_w, plot_h)
            label = {0: "1.0", plot_h // 2: "0.5", plot_h - 1: "0.0"}.get(y, "")
            text = Text(f"{label:>4}│", style=axis, end="")
            for x, (ch, k) in enumerate(canvas[y]):
                point = points.get((y, x))
                if point is not None:  # the series' own mark where it stands at a fold
                    ch, k = SERIES_MARKS[self.slot(point)], point
                text.append(ch, self._series_style(k) if k is not None else None)
        elif y == plot_h:
            folds = max((len(s.values) for s in self.series), default=0)
            ticks = [" "] * plot_w
            for i in range(folds):
                x = 0 if folds <= 1 else round(i * (plot_w * 2 - 1) / (folds - 1)) // 2
                for j, ch in enumerate(str(i + 1)):
                    if x + j < plot_w:
                        ticks[x + j] = ch
            text = Text("    └" + "".join(ticks), style=axis, end="")
        elif y == plot_h + 1:
            # Short enough for 80 columns: the axes' meaning is never cut.
            text = Text("     fold → · y: graded facts planted so far, held verbatim",
                        style=axis, end="")
        else:
            k = y - plot_h - 2
            if k >= len(self.series):
                return Strip.blank(width, base)
            s = self.series[k]
            last = next((v for v in reversed(s.values) if v is not None), None)
            text = Text("     ", end="")
            text.append(f"━{SERIES_MARKS[self.slot(k)]}━ ", self._series_style(k))
            text.append(literal(s.name, keep_newlines=False))
            text.append("" if last is None else f"  (after the last fold {last:.0%})", axis)
        segments = [Segment(seg.text, base + seg.style if seg.style else base)
                    for seg in text.render(self.app.console)]
        return Strip(segments).crop(0, width).adjust_cell_length(width, base)

    def _canvas(self, width: int, height: int
                ) -> tuple[list[list[tuple[str, int | None]]], dict[tuple[int, int], int]]:
        key = (width, height, id(self.series))
        if getattr(self, "_cache_key", None) != key:
            self._cache_key = key
            self._cache = (braille_canvas(self.series, width, height),
                           point_cells(self.series, width, height))
        return self._cache
