"""Two rows side by side: each planted fact's state in both rows' carriers at the same fold with
both answers' classes, and which row a row is compared with by default."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from foldscope.core.forensics import FactAtFold, PlantedFact
from foldscope.core.row import Check, FoldRecord, fold_facts_of
from foldscope.core.study import PARTITION


@dataclass(frozen=True)
class FactPair:
    """One planted fact in two rows at one fold."""

    label: str
    expected: str
    graded: bool
    a: FactAtFold | None
    """The fact in row A's carrier after the fold (None: row A has no such fold)."""
    b: FactAtFold | None
    answer_a: str | None
    """Row A's answer class for the fact (None: not asked, or the row has no answer yet)."""
    answer_b: str | None

    @property
    def differs(self) -> bool:
        """The rows disagree on the fact: its state or the altered text, or the answer class."""
        state_a = (self.a.state, self.a.altered) if self.a else None
        state_b = (self.b.state, self.b.altered) if self.b else None
        return state_a != state_b or self.answer_a != self.answer_b


def align_facts(facts: Sequence[PlantedFact], fold_a: FoldRecord | None,
                fold_b: FoldRecord | None, checks_a: Iterable[Check] = (),
                checks_b: Iterable[Check] = ()) -> tuple[FactPair, ...]:
    """Every planted fact (in the order given) in both rows' carriers after the same fold.

    Args:
        facts: the scenario's planted facts, in display order.
        fold_a: row A's record of the fold (None: the row has not committed it).
        fold_b: row B's.
        checks_a: row A's checked answers (their classes fill ``answer_a``).
        checks_b: row B's.
    """
    at_a = fold_facts_of(fold_a, facts) if fold_a is not None else None
    at_b = fold_facts_of(fold_b, facts) if fold_b is not None else None
    class_a = {c.label: c.classification for c in checks_a}
    class_b = {c.label: c.classification for c in checks_b}
    return tuple(
        FactPair(f.label, f.value, f.graded,
                 at_a.state(f.label) if at_a else None, at_b.state(f.label) if at_b else None,
                 class_a.get(f.label), class_b.get(f.label))
        for f in facts)


def counterpart_arm(arm: str, arms: Sequence[str]) -> str | None:
    """The arm a row is compared with by default: the other side of the study's central
    contrast (j vs q) when the sweep has it, else the first other arm of the sweep.

    Args:
        arm: the row's arm.
        arms: the sweep's arms in order.
    """
    if arm in PARTITION:
        other = PARTITION[1 - PARTITION.index(arm)]
        if other in arms:
            return other
    return next((a for a in arms if a != arm), None)
