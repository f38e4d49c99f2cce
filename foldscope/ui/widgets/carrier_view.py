"""A virtualised, read-only view of one carrier with planted facts highlighted in place,
soft-wrapped to the pane's width (or not: ``toggle_wrap``)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from foldscope.core.forensics import FactSpan
from foldscope.core.text import literal

HIGHLIGHTED_STATES = ("present", "mutated")
"""Fact states highlighted in a carrier; each has a component class coloured by the theme."""

_STATE_META = "fact-state"


class CarrierView(ScrollView, can_focus=True):
    """Shows a carrier line by line (only visible lines are rendered), never parsing markup.

    Present values are underlined in ``$fact-present``, near misses in ``$fact-mutated``; the
    colours are looked up when a line is drawn, so a theme switch recolours what is shown.
    """

    COMPONENT_CLASSES = {f"carrier-view--{state}" for state in HIGHLIGHTED_STATES}
    """How highlighted fact states are drawn."""

    DEFAULT_CSS = """
    CarrierView { border: round $panel; background: $surface; }
    CarrierView:focus { border: round $primary; }
    CarrierView > .carrier-view--present { color: $fact-present; text-style: bold underline; }
    CarrierView > .carrier-view--mutated { color: $fact-mutated; text-style: bold underline; }
    """

    wrap: reactive[bool] = reactive(True)
    """Soft-wrap long lines at the pane's width (arm f's JSON envelope is one long line)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[Text] = []
        self._display: list[Text] = []
        self._width = 0

    @property
    def plain_lines(self) -> list[str]:
        """The carrier's lines as shown (control characters already made visible), unwrapped."""
        return [line.plain for line in self._lines]

    def show(self, text: str, spans: Sequence[FactSpan] = ()) -> None:
        """Display a carrier with its fact spans highlighted, scrolled to the top."""
        shown = literal(text)  # one for one, so the fact spans' offsets still hold
        lines: list[Text] = []
        starts: list[int] = []
        offset = 0
        for raw in shown.split("\n"):
            starts.append(offset)
            lines.append(Text(raw, no_wrap=True, end=""))
            offset += len(raw) + 1
        for span in spans:
            if span.state not in HIGHLIGHTED_STATES:
                continue
            style = Style(meta={_STATE_META: span.state})
            # A span (a near miss) may cross a line break: style each line's share of it.
            for i, start in enumerate(starts):
                end = start + len(lines[i].plain)
                lo, hi = max(span.start, start), min(span.end, end)
                if lo < hi:
                    lines[i].stylize(style, lo - start, hi - start)
        self._lines = lines
        self._relayout()
        self.scroll_to(0, 0, animate=False)

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or show them whole (scroll sideways)."""
        self.wrap = not self.wrap

    def watch_wrap(self, wrap: bool) -> None:
        self._relayout()

    def on_resize(self, event: events.Resize) -> None:
        if self.wrap and self.scrollable_content_region.width != self._width:
            self._relayout()

    def _relayout(self) -> None:
        """Lay the logical lines out as display lines: wrapped at the width, or whole."""
        width = self.scrollable_content_region.width
        self._width = width
        if self.wrap and width > 0:
            display: list[Text] = []
            for line in self._lines:
                if line.cell_len <= width:
                    display.append(line)
                    continue
                for part in line.wrap(self.app.console, width, overflow="fold", no_wrap=False):
                    part.end, part.no_wrap = "", True  # one display line each, never re-wrapped
                    display.append(part)
            self._display = display
            self.virtual_size = Size(width, len(display))
        else:
            self._display = list(self._lines)
            self.virtual_size = Size(max((t.cell_len for t in self._lines), default=0),
                                     len(self._lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._display):
            return Strip.blank(width, base)
        segments = []
        for seg in self._display[index].render(self.app.console):
            style = seg.style
            state = style.meta.get(_STATE_META) if style is not None and style.meta else None
            if state is not None:
                style = self.get_component_rich_style(f"carrier-view--{state}", partial=True)
            segments.append(Segment(seg.text, base + style if style else base))
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        return strip.adjust_cell_length(width, base)
