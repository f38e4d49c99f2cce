"""What changed between two carriers: a line-level diff (fold k-1 -> fold k) and the characters
a mutation altered.

Pure text comparison with :mod:`difflib`; which facts a fold lost or added is
``core.forensics.fold_changes``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

DiffKind = Literal["same", "removed", "added", "gap"]


@dataclass(frozen=True)
class DiffLine:
    """One line of a carrier diff."""

    kind: DiffKind
    """``removed`` (only in the earlier carrier), ``added`` (only in the later), ``same``
    (context), or ``gap`` (unchanged lines left out; ``text`` says how many)."""
    text: str


def carrier_diff(before: str, after: str, *, context: int = 2) -> list[DiffLine]:
    """A line-level diff of two carriers, unchanged stretches shortened to ``context`` lines.

    Args:
        before: the earlier carrier (fold k-1; empty for the first fold).
        after: the later carrier (fold k).
        context: unchanged lines kept around each change.

    Returns:
        The diff lines in order; empty when the carriers are identical.
    """
    a, b = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[DiffLine] = []
    groups = list(matcher.get_grouped_opcodes(context))
    shown_to = 0
    for group in groups:
        first = group[0][1]
        if first > shown_to:
            out.append(DiffLine("gap", f"{first - shown_to} unchanged lines"))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(DiffLine("same", line) for line in a[i1:i2])
                continue
            out.extend(DiffLine("removed", line) for line in a[i1:i2])
            out.extend(DiffLine("added", line) for line in b[j1:j2])
        shown_to = group[-1][2]
    if groups and shown_to < len(a):
        out.append(DiffLine("gap", f"{len(a) - shown_to} unchanged lines"))
    return out


@dataclass(frozen=True)
class CharMarks:
    """Where an original value and its altered form differ, as character ranges of each."""

    original: tuple[tuple[int, int], ...]
    altered: tuple[tuple[int, int], ...]


def char_marks(original: str, altered: str) -> CharMarks:
    """The characters that differ between a value and its altered form.

    Args:
        original: the planted value.
        altered: the text a carrier holds instead (a near miss).

    Returns:
        Half-open ranges into each string that are not common to both.
    """
    matcher = difflib.SequenceMatcher(None, original, altered, autojunk=False)
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            left.append((i1, i2))
        if j2 > j1:
            right.append((j1, j2))
    return CharMarks(tuple(left), tuple(right))
