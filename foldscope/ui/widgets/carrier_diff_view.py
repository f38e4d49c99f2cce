"""A line diff of two carriers (``core.carrier_diff``) with chosen values marked on the removed and
added lines; reusable for any fold k-1 -> k (a sweep row's or a session's). It is a
:class:`CarrierView` (virtualised, wrapped or not, styles resolved when a line is drawn) whose
lines are the diff's."""

from __future__ import annotations

from collections.abc import Iterable

from rich.style import Style
from rich.text import Text

from foldscope.core.carrier_diff import carrier_diff
from foldscope.core.grading import normalize, token_spans
from foldscope.core.text import literal
from foldscope.ui.widgets.carrier_view import _STATE_META, CarrierView

_PREFIX = {"same": "  ", "removed": "- ", "added": "+ ", "gap": "⋯ "}


class CarrierDiffView(CarrierView):
    """What changed from one carrier to the next, line by line.

    Removed lines are drawn in ``$error``, added ones in ``$success``; values passed as ``lost``
    are marked on removed lines in ``$fact-missing``, ``gained`` ones on added lines in
    ``$fact-present``.
    """

    COMPONENT_CLASSES = {f"carrier-view--{name}" for name in
                         ("removed", "added", "gap", "note", "lost", "gained")}
    """Removed and added lines, skipped stretches, notes, and the marked values."""

    DEFAULT_CSS = """
    CarrierDiffView > .carrier-view--removed { color: $error; }
    CarrierDiffView > .carrier-view--added { color: $success; }
    CarrierDiffView > .carrier-view--gap { color: $text-muted; text-style: italic; }
    CarrierDiffView > .carrier-view--note { color: $text-muted; }
    CarrierDiffView > .carrier-view--lost { color: $fact-missing; text-style: bold reverse; }
    CarrierDiffView > .carrier-view--gained { color: $fact-present; text-style: bold underline; }
    """

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
        lines: list[Text] = []
        if title is not None:
            lines.append(_line(literal(title, keep_newlines=False), "note"))
        diff = carrier_diff(before or "", after)
        if not diff:
            lines.append(_line("the carrier is unchanged", "gap"))
        for d in diff:
            line = _line(_PREFIX[d.kind] + literal(d.text, keep_newlines=False),
                         None if d.kind == "same" else d.kind)
            values, mark = ((lost, "lost") if d.kind == "removed" else
                            (gained, "gained") if d.kind == "added" else ([], ""))
            for start, end in _marks(line.plain, values):
                line.stylize(Style(meta={_STATE_META: mark}), start, end)
            lines.append(line)
        self._lines = lines
        self._relayout()
        self.scroll_to(0, 0, animate=False)


def _line(text: str, kind: str | None) -> Text:
    """One diff line, its kind (a component class of the view) kept in the style's meta."""
    style = Style(meta={_STATE_META: kind}) if kind else ""
    return Text(text, style=style, no_wrap=True, end="")


def _marks(line: str, values: list[str]) -> list[tuple[int, int]]:
    """Whole-token places of ``values`` on a shown line (none when normalising shifts offsets)."""
    if not values:
        return []
    norm = normalize(line)
    if len(norm) != len(line):
        return []
    return sorted({span for v in values
                   for span in token_spans(norm, normalize(literal(v, keep_newlines=False)))})
