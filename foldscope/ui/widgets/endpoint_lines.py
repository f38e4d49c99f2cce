"""One line per provider endpoint under the grid: calls in flight against the adaptive limit,
and the 429s and errors of the last minute (``engine.live.EndpointLine``)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from foldscope.core.text import literal
from foldscope.engine.live import EndpointLine


def endpoint_text(line: EndpointLine) -> Text:
    """One endpoint's line; the limit is marked when a 429 has cut it below its ceiling."""
    text = Text(literal(line.endpoint, keep_newlines=False), style="bold")
    text.append(f"  in flight {line.in_flight}/{line.limit}")
    if line.limit < line.ceiling:
        text.append(f" (cut from {line.ceiling})", style="italic")
    text.append(f" · 429s {line.rate_limited_1m} · errors {line.errors_1m} in the last minute")
    return text


class EndpointLines(Static):
    """The provider lines (hidden until a runner has recorded its endpoints)."""

    DEFAULT_CSS = """
    EndpointLines { height: auto; color: $text-muted; display: none; }
    """

    def show(self, lines: tuple[EndpointLine, ...]) -> None:
        """Show a poll's endpoint lines (redrawn only when they changed)."""
        if lines == getattr(self, "_lines", None):
            return
        self._lines = lines
        self.display = bool(lines)
        self.update(Text("\n").join([endpoint_text(line) for line in lines]))
