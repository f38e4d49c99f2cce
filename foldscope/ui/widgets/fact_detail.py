"""One planted fact at the fold shown: its course, and for a mutated value the original beside
the altered text with the differing characters marked."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widget import Widget

from foldscope.core.carrier_diff import char_marks
from foldscope.core.forensics import MUTATED, FactAtFold, FactHistory, human_fold
from foldscope.core.text import literal


class FactDetail(Widget):
    """A few lines about the highlighted fact; styles are read from the theme at render time."""

    COMPONENT_CLASSES = {"fact-detail--label", "fact-detail--mark", "fact-detail--muted"}
    """The fact's label, the characters a mutation changed, secondary text."""

    DEFAULT_CSS = """
    FactDetail { height: auto; min-height: 3; padding: 0 1; border-top: solid $panel; }
    FactDetail > .fact-detail--label { text-style: bold; }
    FactDetail > .fact-detail--mark { color: $fact-mutated; text-style: bold reverse; }
    FactDetail > .fact-detail--muted { color: $text-muted; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fact: FactHistory | None = None
        self._state: FactAtFold | None = None

    def show(self, fact: FactHistory | None, state: FactAtFold | None) -> None:
        """Show a fact's course (as it stood at the fold shown) and its state at that fold;
        None clears."""
        self._fact, self._state = fact, state
        self.refresh(layout=True)

    @property
    def plain(self) -> str:
        """The text shown, without styles (for tests and the clipboard)."""
        return self.render().plain

    def render(self) -> Text:
        fact, state = self._fact, self._state
        if fact is None or state is None:
            return Text("highlight a fact in the strip to see its course", end="")
        style = self.get_component_rich_style
        one = lambda s: literal(str(s), keep_newlines=False)  # noqa: E731 - local shorthand
        out = Text(end="")
        out.append(one(fact.label), style("fact-detail--label"))
        out.append(f" · {'graded' if fact.graded else 'decoy'} · chunk {fact.chunk + 1} · "
                   f"now {state.state}\n")
        course = [f"planted fold {human_fold(fact.planted_fold) or '—'}",
                  f"first carried {human_fold(fact.first_carried_fold) or '—'}",
                  f"lost at {human_fold(fact.lost_fold) or '—'}"]
        if fact.returned:
            course.append("came back after its loss")
        out.append(" · ".join(course) + "\n", style("fact-detail--muted"))
        value = one(fact.value)
        if state.state != MUTATED or not state.altered:
            out.append("value     ")
            out.append(value)
            return out
        altered = one(state.altered)
        marks = char_marks(value, altered)
        out.append("original  ")
        out.append(_marked(value, marks.original, style("fact-detail--mark")))
        out.append("\ncarrier   ")
        out.append(_marked(altered, marks.altered, style("fact-detail--mark")))
        out.append(f"   ({state.rule or 'near miss'})", style("fact-detail--muted"))
        return out


def _marked(text: str, ranges: tuple[tuple[int, int], ...], mark: Any) -> Text:
    out = Text(text, end="")
    for a, b in ranges:
        out.stylize(mark, a, b)
    return out
