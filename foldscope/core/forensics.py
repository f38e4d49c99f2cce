"""Per-fold fact forensics: is each planted value present, mutated (a near miss) or missing?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from rapidfuzz import fuzz

from foldscope.core.grading import contains_token_normalized, normalize, present_in, token_spans

FactState = Literal["present", "mutated", "missing"]

NEAR_MISS_CUTOFF = 85.0
"""Minimum partial similarity (0-100) for a near miss: close enough to be the value, altered."""


class _Planted(Protocol):
    label: str
    value: str


@dataclass(frozen=True)
class NearMiss:
    """Where a carrier holds an altered form of a value."""

    text: str
    start: int
    end: int
    score: float


def near_miss(text: str, value: str, cutoff: float = NEAR_MISS_CUTOFF) -> NearMiss | None:
    """Find the best approximate occurrence of ``value`` in ``text`` that is not the value itself.

    Short values (under 4 characters) never near-miss: at that length similarity is noise.
    """
    if len(value) < 4 or not text:
        return None
    align = fuzz.partial_ratio_alignment(value, text, score_cutoff=cutoff)
    if align is None:
        return None
    if text[align.dest_start:align.dest_end] == value:
        return None
    start, end = _snap(text, align.dest_start, align.dest_end, value)
    return NearMiss(text[start:end], start, end, align.score)


_TOKEN_EDGE = frozenset(" \t\n\r,;=()[]{}<>\"'`|")


def _snap(text: str, start: int, end: int, value: str) -> tuple[int, int]:
    """Widen or trim an alignment to whole tokens, so a marked near miss is the altered token
    itself (``kid-7F3A9C2l``), not a shifted window of it (`` kid-7F3A9C2``)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    while start > 0 and text[start - 1] not in _TOKEN_EDGE:
        start -= 1
    while end < len(text) and text[end] not in _TOKEN_EDGE:
        end += 1
    while end > start and text[end - 1] in ".:" and not value.endswith(text[end - 1]):
        end -= 1  # a sentence's full stop or a label's colon is not part of the token
    return start, end


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
