"""Per-fold fact forensics: is each planted value present, mutated (a near miss) or missing?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from rapidfuzz import fuzz

from foldscope.core.grading import contains_token_normalized, normalize, present_in

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
    found = text[align.dest_start:align.dest_end]
    if found == value:
        return None
    return NearMiss(found, align.dest_start, align.dest_end, align.score)


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


def first_loss(states_by_fold: list[dict[str, str]], label: str) -> int | None:
    """Index of the first fold after which a fact was no longer present, or None if never lost.

    A fact not yet planted is also absent, so the loss counts only after it was once present.
    """
    seen = False
    for i, states in enumerate(states_by_fold):
        state = states.get(label)
        if state == "present":
            seen = True
        elif seen:
            return i
    return None
