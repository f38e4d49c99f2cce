"""What fold k changed in the carrier: facts lost, mutated and added, then a line-level diff
against fold k−1 with the lost values called out and the added values marked."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.carrier_diff import carrier_diff
from foldscope.core.forensics import FoldChanges
from foldscope.core.grading import normalize, token_spans
from foldscope.core.text import literal
from foldscope.ui.widgets.literal_lines import LiteralLines, StyledLine

_PREFIX = {"same": "  ", "removed": "- ", "added": "+ ", "gap": "⋯ "}


class DiffView(LiteralLines):
    """The carrier diff of one fold (virtualised; model text shown literally)."""

    COMPONENT_CLASSES = {"diff-view--removed", "diff-view--added", "diff-view--gap",
                         "diff-view--lost", "diff-view--gained", "diff-view--mutated",
                         "diff-view--head"}
    """Removed and added lines, skipped stretches, lost/added/mutated values, the summary."""

    DEFAULT_CSS = """
    DiffView > .diff-view--removed { color: $error; }
    DiffView > .diff-view--added { color: $success; }
    DiffView > .diff-view--gap { color: $text-muted; text-style: italic; }
    DiffView > .diff-view--lost { color: $fact-missing; text-style: bold reverse; }
    DiffView > .diff-view--gained { color: $fact-present; text-style: bold underline; }
    DiffView > .diff-view--mutated { color: $fact-mutated; text-style: bold reverse; }
    DiffView > .diff-view--head { text-style: bold; }
    """

    def show_diff(self, fold: int, before: str | None, after: str, changes: FoldChanges) -> None:
        """Show fold ``fold``'s (0-based) changes against the carrier before it (see
        ``fold_diff_lines``)."""
        self.set_lines(fold_diff_lines(fold, before, after, changes))

    def show_values_diff(self, title: str, before: str | None, after: str, *,
                         lost: Sequence[str] = (), gained: Sequence[str] = ()) -> None:
        """Show the diff of any two carriers (a session's summaries, say) with values marked.

        Args:
            title: the first line, saying what is compared (shown literally).
            before: the earlier carrier (None: nothing before it).
            after: the later carrier.
            lost: values marked where they stand on removed lines.
            gained: values marked where they stand on added lines.
        """
        head = StyledLine(literal(title, keep_newlines=False), (), "diff-view--head")
        self.set_lines([head, *_diff_lines(before, after, list(lost), list(gained))])


def fold_diff_lines(fold: int, before: str | None, after: str,
                    changes: FoldChanges) -> list[StyledLine]:
    """The lines of fold ``fold``'s (0-based) diff: the facts it lost, mutated and added (each
    named once), then the line diff against the carrier before it (safe in a worker thread).

    Args:
        fold: the fold's index.
        before: the previous fold's carrier (None for the first fold: nothing before).
        after: this fold's carrier.
        changes: the facts this fold lost, mutated and added (``core.forensics``).

    Returns:
        The lines to show.
    """
    lines: list[StyledLine] = []
    title = (f"fold {fold} → {fold + 1}" if before is not None
             else "fold 1 (no carrier before it)")
    lines.append(StyledLine(title, (), "diff-view--head"))
    # Each fact is named once above the diff; on removed lines the values lost and the
    # original form of the values mutated are both marked where they stood.
    lost_values = [f.value for f in changes.lost] + [f.value for f in changes.mutated]
    for fact in changes.lost:
        lines.append(_labelled("lost", fact.label, fact.value, "diff-view--lost"))
    for fact in changes.mutated:
        text = literal(f"  mutated  {fact.label}: {fact.value} → {fact.altered} "
                       f"({fact.rule})", keep_newlines=False)
        start = text.index("→") + 2
        lines.append(StyledLine(text, ((start, start + len(fact.altered or ""),
                                        "diff-view--mutated"),)))
    for fact in changes.added:
        lines.append(_labelled("added", fact.label, fact.value, "diff-view--gained"))
    if not (changes.lost or changes.mutated or changes.added):
        lines.append(StyledLine("  no planted fact changed state", (), "diff-view--gap"))
    lines.append(StyledLine(""))
    added_values = [f.value for f in changes.added] + [f.altered or "" for f in
                                                        changes.mutated]
    return lines + _diff_lines(before, after, lost_values, added_values)


def _diff_lines(before: str | None, after: str, lost_values: list[str],
                added_values: list[str]) -> list[StyledLine]:
    """The line diff from ``before`` to ``after``, values marked on removed and added lines."""
    lines: list[StyledLine] = []
    diff = carrier_diff(before or "", after)
    if not diff:
        lines.append(StyledLine("carrier unchanged", (), "diff-view--gap"))
    for d in diff:
        text = _PREFIX[d.kind] + literal(d.text, keep_newlines=False)
        cls = {"removed": "diff-view--removed", "added": "diff-view--added",
               "gap": "diff-view--gap"}.get(d.kind)
        spans: list[tuple[int, int, str]] = []
        if d.kind == "removed":
            spans = _value_spans(text, lost_values, "diff-view--lost")
        elif d.kind == "added":
            spans = _value_spans(text, added_values, "diff-view--gained")
        lines.append(StyledLine(text, tuple(spans), cls))
    return lines


def _labelled(word: str, label: str, value: str, cls: str) -> StyledLine:
    text = literal(f"  {word:<8} {label}: {value}", keep_newlines=False)
    return StyledLine(text, ((len(text) - len(literal(value, keep_newlines=False)), len(text),
                              cls),))


def _value_spans(line: str, values: list[str], cls: str) -> list[tuple[int, int, str]]:
    norm = normalize(line)
    if len(norm) != len(line):
        return []
    return [(a, b, cls) for v in values if v for a, b in token_spans(norm, normalize(v))]
