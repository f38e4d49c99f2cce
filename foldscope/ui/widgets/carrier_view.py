"""A virtualised, read-only view of one carrier with planted facts highlighted in place,
soft-wrapped to the pane's width (or not: ``toggle_wrap``)."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.forensics import MUTATED, PRESENT, FactSpan
from foldscope.ui.widgets.literal_lines import LiteralLines, styled_lines

HIGHLIGHTED_STATES = (PRESENT, MUTATED)
"""Fact states highlighted in a carrier; each has a component class coloured by the theme."""


class CarrierView(LiteralLines):
    """Shows a carrier line by line (only visible lines are rendered), never parsing markup.

    Present values are underlined in ``$fact-present``, near misses in ``$fact-mutated``; the
    colours are looked up when a line is drawn, so a theme switch recolours what is shown.
    """

    COMPONENT_CLASSES = {f"carrier-view--{state}" for state in HIGHLIGHTED_STATES}
    """How highlighted fact states are drawn."""

    DEFAULT_CSS = """
    CarrierView > .carrier-view--present { color: $fact-present; text-style: bold underline; }
    CarrierView > .carrier-view--mutated { color: $fact-mutated; text-style: bold underline; }
    """

    def show(self, text: str, spans: Sequence[FactSpan] = ()) -> None:
        """Display a carrier with its fact spans highlighted, scrolled to the top."""
        self.set_lines(styled_lines(text, [(s.start, s.end, f"carrier-view--{s.state}")
                                           for s in spans if s.state in HIGHLIGHTED_STATES]))

    def action_toggle_wrap(self) -> None:
        """Wrap long lines, or show them whole (scroll sideways)."""
        self.wrap = not self.wrap
