"""A virtualised, read-only view of one carrier with planted facts highlighted in place."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from foldscope.core.forensics import FactSpan
from foldscope.core.text import literal

FACT_STYLE_VARIABLES = {"present": "fact-present", "mutated": "fact-mutated"}
"""Theme variable that colours each highlighted state."""


class CarrierView(ScrollView, can_focus=True):
    """Shows a carrier line by line (only visible lines are rendered), never parsing markup.

    Present values are underlined in ``$fact-present``, near misses in ``$fact-mutated``.
    """

    DEFAULT_CSS = """
    CarrierView { border: round $panel; background: $surface; }
    CarrierView:focus { border: round $primary; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[Text] = []

    @property
    def plain_lines(self) -> list[str]:
        """The lines as shown (control characters already made visible)."""
        return [line.plain for line in self._lines]

    def show(self, text: str, spans: Sequence[FactSpan] = ()) -> None:
        """Display a carrier with its fact spans highlighted, scrolled to the top."""
        variables = self.app.get_css_variables()
        styles = {state: Style(color=variables.get(var), bold=True, underline=True)
                  for state, var in FACT_STYLE_VARIABLES.items()}
        shown = literal(text)  # one for one, so the fact spans' offsets still hold
        lines: list[Text] = []
        starts: list[int] = []
        offset = 0
        for raw in shown.split("\n"):
            starts.append(offset)
            lines.append(Text(raw, no_wrap=True, end=""))
            offset += len(raw) + 1
        for span in spans:
            style = styles.get(span.state)
            if style is None:
                continue
            # A span (a near miss) may cross a line break: style each line's share of it.
            for i, start in enumerate(starts):
                end = start + len(lines[i].plain)
                lo, hi = max(span.start, start), min(span.end, end)
                if lo < hi:
                    lines[i].stylize(style, lo - start, hi - start)
        self._lines = lines
        width = max((line.cell_len for line in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        segments = [Segment(seg.text, base + seg.style if seg.style else base)
                    for seg in self._lines[index].render(self.app.console)]
        strip = Strip(segments).crop(scroll_x, scroll_x + width)
        return strip.adjust_cell_length(width, base)
