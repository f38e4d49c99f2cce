"""Per-fold fact forensics: is each planted value present, mutated (a near miss) or missing?

"Mutated" is decided by the one near-miss definition, ``core.nearmiss``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from foldscope.core.grading import contains_token_normalized, normalize, present_in, token_spans
from foldscope.core.nearmiss import near_miss

FactState = Literal["present", "mutated", "missing"]


class _Planted(Protocol):
    label: str
    value: str


def fact_state(text: str, value: str) -> FactState:
    """Classify one value against one carrier."""
    if present_in(text, value):
        return "present"
    return "mutated" if near_miss(text, value) else "missing"


def fact_status(text: str, facts: Iterable[_Planted]) -> dict[str, str]:
    """Classify every planted fact against a carrier, keyed by label.

    The carrier is normalised once for all facts (it runs after every fold), not once per fact.
    """
    norm = normalize(text)
    out: dict[str, str] = {}
    for f in facts:
        value = normalize(f.value)
        if contains_token_normalized(norm, value):
            out[f.label] = "present"
        else:
            out[f.label] = "mutated" if near_miss(norm, value) else "missing"
    return out


@dataclass(frozen=True)
class FactSpan:
    """Where a planted fact shows in a carrier, and in what state (present or mutated)."""

    start: int
    end: int
    label: str
    state: FactState


def fact_spans(text: str, facts: Iterable[_Planted]) -> list[FactSpan]:
    """Locate every planted fact in a carrier for highlighting, sorted by position.

    Present values are every whole-token occurrence; a value that is not present but has a
    near miss is marked at the near miss. Missing values have no place to mark. Offsets refer
    to ``text``; when normalising the text would change its length (rare: decomposed accents,
    invisible joiners), no offsets can be trusted and nothing is returned.
    """
    norm = normalize(text)
    if len(norm) != len(text):
        return []
    spans: list[FactSpan] = []
    for f in facts:
        value = normalize(f.value)
        found = token_spans(norm, value)
        if found:
            spans.extend(FactSpan(a, b, f.label, "present") for a, b in found)
            continue
        miss = near_miss(norm, value)
        if miss is not None:
            spans.append(FactSpan(miss.start, miss.end, f.label, "mutated"))
    spans.sort(key=lambda sp: (sp.start, -sp.end))
    # Overlaps (a decoy inside another value) keep the earlier, longer span.
    kept: list[FactSpan] = []
    for sp in spans:
        if not kept or sp.start >= kept[-1].end:
            kept.append(sp)
    return kept
