"""A virtualised, read-only view of untrusted text lines with styled spans, optionally wrapped.

Only the visible lines are rendered (carriers and chunks run to 100 KB); the text goes through
``core.text.literal`` and is never parsed as markup; spans name component classes whose styles
are read at render time, so a theme switch recolours what is already on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich._wrap import divide_line
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from foldscope.core.text import literal


@dataclass(frozen=True)
class StyledLine:
    """One logical line: its shown text, styled spans (start, end, component class) and a
    component class for the whole line (or None)."""

    text: str
    spans: tuple[tuple[int, int, str], ...] = ()
    line_class: str | None = None


def styled_lines(text: str, spans: Sequence[tuple[int, int, str]] = ()) -> list[StyledLine]:
    """Split text into lines through ``literal`` (one for one), distributing offset spans.

    Args:
        text: untrusted text.
        spans: (start, end, component class) offsets into ``text``; a span crossing a line
            break styles each line's share.

    Returns:
        The lines.
    """
    shown = literal(text)
    raw = shown.split("\n")
    starts, offset = [], 0
    for line in raw:
        starts.append(offset)
        offset += len(line) + 1
    per_line: list[list[tuple[int, int, str]]] = [[] for _ in raw]
    for start, end, name in sorted(spans):
        # Lines a span touches: a binary-search free walk is fine, spans are few.
        for i in range(_line_of(starts, start), len(raw)):
            lo, hi = max(start, starts[i]), min(end, starts[i] + len(raw[i]))
            if starts[i] >= end:
                break
            if lo < hi:
                per_line[i].append((lo - starts[i], hi - starts[i], name))
    return [StyledLine(line, tuple(s)) for line, s in zip(raw, per_line)]


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo


@dataclass(frozen=True)
class PaneLayout:
    """Logical lines laid out as display lines for one width and wrap state: each display line
    is a slice of a logical line, so laying out 100k characters is only arithmetic (done off
    the UI thread for long texts) and only the visible slices are ever styled and drawn."""

    lines: tuple[StyledLine, ...]
    rows: tuple[tuple[int, int, int], ...]
    """Per display line: (logical line index, start, end)."""
    width: int
    wrap: bool
    longest: int
    """Cells of the longest display line."""


def _breaks(text: str, width: int) -> list[tuple[int, int]]:
    """Where a line folds to fit ``width`` cells: after the last space that fits, or (a word
    longer than the width) at the width. Every character is in exactly one piece."""
    n = len(text)
    if text.isascii():  # after ``literal`` an ASCII character is one cell
        if n <= width:
            return [(0, n)]
        pieces, start = [], 0
        while n - start > width:
            cut = text.rfind(" ", start, start + width)
            end = cut + 1 if cut > start else start + width
            pieces.append((start, end))
            start = end
        pieces.append((start, n))
        return pieces
    if cell_len(text) <= width:
        return [(0, n)]
    bounds = [0, *divide_line(text, width, fold=True), n]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def lay_out(lines: Sequence[StyledLine], width: int, wrap: bool,
            console: Console | None = None) -> PaneLayout:
    """Lay logical lines out as display lines: folded at ``width``, or whole. Safe to call
    from a worker thread (it only measures text).

    Args:
        lines: the logical lines.
        width: the columns a display line may take.
        wrap: fold lines longer than ``width``.
        console: unused (kept so callers need not know how text is measured).

    Returns:
        The layout.
    """
    width = max(1, width)
    rows: list[tuple[int, int, int]] = []
    longest = 0
    for i, line in enumerate(lines):
        if not wrap:
            rows.append((i, 0, len(line.text)))
            longest = max(longest, cell_len(line.text))
            continue
        for a, b in _breaks(line.text, width):
            rows.append((i, a, b))
    return PaneLayout(tuple(lines), tuple(rows), width, wrap, width if wrap else longest)


class LiteralLines(ScrollView, can_focus=True):
    """Lines of literal text with component-class spans; ``wrap`` folds long lines."""

    DEFAULT_CSS = """
    LiteralLines { border: round $panel; background: $surface; scrollbar-gutter: stable; }
    LiteralLines:focus { border: round $primary; }
    """

    wrap: reactive[bool] = reactive(True)
    """Fold lines longer than the view instead of scrolling sideways (every pane starts
    wrapped, so a value is whole on screen without scrolling)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[StyledLine] = []
        self._rows: tuple[tuple[int, int, int], ...] = ()
        """Display lines as slices of logical lines (a wrapped logical line is several)."""
        self._laid_width = 0
        """The width the display lines were wrapped at (0: not laid out yet)."""

    @property
    def plain_lines(self) -> list[str]:
        """The logical lines as shown (control characters already made visible)."""
        return [line.text for line in self._lines]

    def set_lines(self, lines: Sequence[StyledLine], *, keep_scroll: bool = False) -> None:
        """Show these lines (scrolled to the top unless ``keep_scroll``)."""
        self._lines = list(lines)
        self._layout_rows()
        if not keep_scroll:
            self.scroll_to(0, 0, animate=False)
        self.refresh()

    def reset(self) -> None:
        """Empty, wrapped, scrolled home: as first mounted."""
        self._lines = []
        self.set_reactive(LiteralLines.wrap, True)
        self._layout_rows()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def layout_request(self) -> tuple[int, bool]:
        """The width and wrap state a layout made elsewhere must have (read on the UI thread,
        handed to a worker with the lines)."""
        return self._wrap_width(), self.wrap

    def set_layout(self, layout: PaneLayout) -> None:
        """Show lines already laid out (by ``lay_out`` in a worker), scrolled to the top; a
        layout made for another width or wrap state is laid out again here."""
        self._lines = list(layout.lines)
        if (layout.width, layout.wrap) == (self._wrap_width(), self.wrap):
            self._apply(layout)
        else:
            self._layout_rows()
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def _apply(self, layout: PaneLayout) -> None:
        self._rows = layout.rows
        self._laid_width = layout.width
        self.virtual_size = Size(layout.longest, len(self._rows))

    def watch_wrap(self, wrap: bool) -> None:
        self._layout_rows()
        self.refresh()

    def on_resize(self) -> None:
        if self.wrap:
            self._layout_rows()
            self.refresh()

    def _wrap_width(self) -> int:
        """The width a display line may take: the content region, which never includes the
        vertical scrollbar (its gutter is always kept), so no line end hides under it."""
        return max(1, self.scrollable_content_region.width)

    def _layout_rows(self) -> None:
        """Lay the logical lines out here, at the view's width and wrap state."""
        self._apply(lay_out(self._lines, self._wrap_width(), self.wrap, self.app.console))

    _base_style: Style | None = None
    """The view's own style while its lines are drawn (``rich_style`` walks every ancestor's
    styles: worked out once per drawing, not per line)."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base_style = None
        try:
            return super().render_lines(crop)
        finally:
            self._base_style = None

    def render_line(self, y: int) -> Strip:
        if self.wrap and self._wrap_width() != self._laid_width:
            self._layout_rows()  # the region changed without a resize: wrap at its width now
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self._base_style
        if base is None:
            base = self._base_style = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        li, start, end = self._rows[index]
        line = self._lines[li]
        text = Text(line.text[start:end], no_wrap=True, end="")
        # Styles are the theme's, looked up now: a theme switch recolours what is shown.
        if line.line_class:
            text.stylize(self.get_component_rich_style(line.line_class, partial=True))
        for a, b, name in line.spans:
            lo, hi = max(a, start), min(b, end)
            if lo < hi:
                text.stylize(self.get_component_rich_style(name, partial=True),
                             lo - start, hi - start)
        strip = Strip(Segment(seg.text, base + seg.style if seg.style else base)
                      for seg in text.render(self.app.console))
        if not self.wrap:
            strip = strip.crop(scroll_x, scroll_x + width)
        return strip.adjust_cell_length(width, base)
