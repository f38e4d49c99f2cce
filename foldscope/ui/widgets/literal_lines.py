"""A virtualised, read-only view of untrusted text lines with styled spans, optionally wrapped.

Only the visible lines are rendered (carriers and chunks run to 100 KB); the text goes through
``core.text.literal`` and is never parsed as markup; spans name component classes whose styles
are read at render time, so a theme switch recolours what is already on screen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from foldscope.core.text import literal

_COMPONENT = "component"
"""Style metadata key naming the component class a span is drawn with."""


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
        self._rows: list[Text] = []
        """Display lines (a wrapped logical line is several)."""
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
        """Lay the logical lines out as display lines: wrapped at the width, or whole.

        Spans travel through rich's wrapping as style metadata naming their component class;
        ``render_line`` turns the names into the theme's styles.
        """
        width = self._wrap_width()
        self._laid_width = width
        rows: list[Text] = []
        for line in self._lines:
            text = Text(line.text, no_wrap=True, end="")
            if line.line_class:
                text.stylize(Style(meta={_COMPONENT: line.line_class}))
            for a, b, name in line.spans:
                text.stylize(Style(meta={_COMPONENT: name}), a, b)
            if not self.wrap or text.cell_len <= width:
                rows.append(text)
                continue
            for part in text.wrap(self.app.console, width, overflow="fold", no_wrap=False):
                part.end, part.no_wrap = "", True  # one display line each, never re-wrapped
                rows.append(part)
        self._rows = rows
        longest = max((t.cell_len for t in rows), default=0)
        self.virtual_size = Size(width if self.wrap else longest, len(rows))

    def render_line(self, y: int) -> Strip:
        if self.wrap and self._wrap_width() != self._laid_width:
            self._layout_rows()  # the region changed without a resize: wrap at its width now
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._rows):
            return Strip.blank(width, base)
        segments = []
        for seg in self._rows[index].render(self.app.console):
            style = seg.style
            name = style.meta.get(_COMPONENT) if style is not None and style.meta else None
            if name is not None:
                style = self.get_component_rich_style(name, partial=True)
            segments.append(Segment(seg.text, base + style if style else base))
        strip = Strip(segments)
        if not self.wrap:
            strip = strip.crop(scroll_x, scroll_x + width)
        return strip.adjust_cell_length(width, base)
