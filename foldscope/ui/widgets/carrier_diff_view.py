"""A virtualised line diff of two carriers (``core.carrier_diff``), with chosen values marked on
the removed and added lines; reusable for any fold k-1 -> k (a sweep row's or a session's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from foldscope.core.carrier_diff import carrier_diff
from foldscope.core.grading import normalize, token_spans
from foldscope.core.text import literal

_PREFIX = {"same": "  ", "removed": "- ", "added": "+ ", "gap": "⋯ ", "note": ""}


@dataclass(frozen=True)
class _Line:
    kind: str
    """``same``, ``removed``, ``added``, ``gap`` or ``note``."""
    text: str
    """The line as shown (prefix included, literal)."""
    marks: tuple[tuple[int, int], ...] = ()
    """Marked values on the line (character ranges)."""


class CarrierDiffView(ScrollView, can_focus=True):
    """What changed from one carrier to the next, line by line; only visible lines are drawn.

    Removed lines are drawn in ``$error``, added ones in ``$success``; values passed as
    ``lost`` are marked on removed lines in ``$fact-missing``, ``gained`` ones on added lines in
    ``$fact-present``. Styles are read when a line is drawn, so a theme switch recolours it.
    """

    COMPONENT_CLASSES = {"carrier-diff--removed", "carrier-diff--added", "carrier-diff--gap",
                         "carrier-diff--lost", "carrier-diff--gained", "carrier-diff--note"}
    """Removed and added lines, skipped stretches, marked values, and notes."""

    DEFAULT_CSS = """
    CarrierDiffView { border: round $panel; background: $surface; }
    CarrierDiffView:focus { border: round $primary; }
    CarrierDiffView > .carrier-diff--removed { color: $error; }
    CarrierDiffView > .carrier-diff--added { color: $success; }
    CarrierDiffView > .carrier-diff--gap { color: $text-muted; text-style: italic; }
    CarrierDiffView > .carrier-diff--note { color: $text-muted; }
    CarrierDiffView > .carrier-diff--lost { color: $fact-missing; text-style: bold reverse; }
    CarrierDiffView > .carrier-diff--gained { color: $fact-present; text-style: bold underline; }
    """

    wrap: reactive[bool] = reactive(True)
    """Fold lines longer than the view (summaries are often one long paragraph)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[_Line] = []
        self._rows: list[tuple[int, int, int]] = []
        """Display rows: (line index, start, end) into that line's text."""
        self._width = 0

    @property
    def plain_lines(self) -> list[str]:
        """The diff's lines as shown (prefixes included, control characters made visible)."""
        return [line.text for line in self._lines]

    def show_diff(self, before: str | None, after: str, *, lost: Iterable[str] = (),
                  gained: Iterable[str] = (), title: str | None = None) -> None:
        """Show the diff from ``before`` to ``after``, scrolled to the top.

        Args:
            before: the earlier carrier; None when there was none (everything is added).
            after: the later carrier.
            lost: values to mark where they stand on removed lines.
            gained: values to mark where they stand on added lines.
            title: a first line saying what is compared (shown literally).
        """
        lost, gained = [v for v in lost if v], [v for v in gained if v]
        lines: list[_Line] = []
        if title is not None:
            lines.append(_Line("note", literal(title, keep_newlines=False)))
        diff = carrier_diff(before or "", after)
        if not diff:
            lines.append(_Line("gap", "the carrier is unchanged"))
        for d in diff:
            text = _PREFIX[d.kind] + literal(d.text, keep_newlines=False)
            values = lost if d.kind == "removed" else gained if d.kind == "added" else []
            lines.append(_Line(d.kind, text, _marks(text, values)))
        self._lines = lines
        self._relayout()
        self.scroll_to(0, 0, animate=False)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or show them whole."""
        self.wrap = not self.wrap

    def watch_wrap(self, wrap: bool) -> None:
        self._relayout()

    def on_resize(self, event: events.Resize) -> None:
        if self.wrap and self.scrollable_content_region.width != self._width:
            self._relayout()

    def _relayout(self) -> None:
        """Lay the diff's lines out as display rows: wrapped at the view's width, or whole."""
        width = self.scrollable_content_region.width
        self._width = width
        rows: list[tuple[int, int, int]] = []
        for i, line in enumerate(self._lines):
            if self.wrap and width > 2:
                rows.extend((i, a, b) for a, b in _wrap(line.text, width))
            else:
                rows.append((i, 0, len(line.text)))
        self._rows = rows
        widest = max((cell_len(x.text) for x in self._lines), default=0)
        self.virtual_size = Size(min(widest, width) if self.wrap else widest, len(rows))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        line_index, start, end = self._rows[index]
        line = self._lines[line_index]
        text = Text(line.text, no_wrap=True, end="")
        if line.kind in ("removed", "added", "gap", "note"):
            text.stylize(self.get_component_rich_style(f"carrier-diff--{line.kind}", partial=True))
        mark = "carrier-diff--lost" if line.kind == "removed" else "carrier-diff--gained"
        for lo, hi in line.marks:
            text.stylize(self.get_component_rich_style(mark, partial=True), lo, hi)
        # Styles are applied to the whole line first, so a value cut by a wrap stays marked.
        text = text[start:end]
        segments = [Segment(seg.text, base + seg.style if seg.style else base)
                    for seg in text.render(self.app.console)]
        return Strip(segments).crop(scroll_x, scroll_x + width).adjust_cell_length(width, base)


def _wrap(text: str, width: int) -> list[tuple[int, int]]:
    """Display rows of one line at ``width`` cells: broken after a space when one falls in the
    row's second half, else folded at the width (a long token)."""
    if cell_len(text) <= width:
        return [(0, len(text))]
    rows: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end, used = start, 0
        while end < len(text) and used + cell_len(text[end]) <= width:
            used += cell_len(text[end])
            end += 1
        end = max(end, start + 1)  # a character wider than the view still advances
        if end < len(text):
            space = text.rfind(" ", start + width // 2, end)
            if space >= 0:
                end = space + 1
        rows.append((start, end))
        start = end
    return rows


def _marks(line: str, values: list[str]) -> tuple[tuple[int, int], ...]:
    """Whole-token places of ``values`` on a shown line (none when normalising shifts offsets)."""
    if not values:
        return ()
    norm = normalize(line)
    if len(norm) != len(line):
        return ()
    found = sorted({span for v in values for span in token_spans(norm, normalize(literal(
        v, keep_newlines=False)))})
    return tuple(found)
