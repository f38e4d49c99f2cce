"""Answer classes and provenance: what one graded answer did, judged by the carrier it read.

The recall turn reads only the final carrier, so an answer is judged against that carrier's
state of the fact (``core.forensics``: present, mutated or missing), never against the answer's
shape alone. An invented value of the right shape is a fabrication, not a mutation: "mutated" is
decided in the carrier, by the near-miss rules (``core.nearmiss``).

==========================  ==============================================================
class                       when
==========================  ==============================================================
``correct``                 the grader credited the answer
``hedged``                  the grader found several candidates, a negated or struck value
``honest_abstention``       the carrier had lost the value (missing or mutated); the answer
                            abstained (or gave nothing)
``fabricated``              the carrier had lost the value; the answer gave a value anyway
                            (for a mutated carrier: a value other than the mutation)
``read_failure``            the carrier held the value; the answer gave another value
                            (``other_value``), nothing (``nothing``) or an abstention
                            (``abstained``) — the sub-kind
``carried_corruption``      the carrier held a mutated value and the answer repeated it
==========================  ==============================================================

Provenance traces a wrong value: another planted fact or decoy (cross-binding, naming which),
an earlier carrier of the row (which fold), the session input (which chunk), or nowhere
(invention). The first that holds is reported, in that order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from foldscope.core.forensics import carrier_states
from foldscope.core.grading import FactGrade, contains_token, grade_answer, is_abstention, normalize
from foldscope.core.identifiers import find_identifiers
from foldscope.core.nearmiss import NearMiss, near_miss
from foldscope.core.signatures import Signature, signature_hits

AnswerClass = Literal["correct", "hedged", "honest_abstention", "fabricated", "read_failure",
                      "carried_corruption"]
ANSWER_CLASSES: tuple[str, ...] = ("correct", "hedged", "honest_abstention", "fabricated",
                                   "read_failure", "carried_corruption")
"""Every class :func:`classify_fact` returns."""

READ_FAILURE_KINDS: tuple[str, ...] = ("other_value", "nothing", "abstained")
"""The sub-kinds of ``read_failure``."""

CarrierState = Literal["present", "mutated", "missing"]


@dataclass(frozen=True)
class AnswerVerdict:
    """One graded answer's class, with what it was judged by."""

    label: str
    answer_class: str
    """One of :data:`ANSWER_CLASSES`."""
    carrier_state: str
    """The final carrier's state of the fact: ``present``, ``mutated`` or ``missing``."""
    detail: str | None = None
    """For ``read_failure``: one of :data:`READ_FAILURE_KINDS`; else None."""
    near_miss: NearMiss | None = None
    """Diagnostic only: a near miss of the value in the answer (never decides the class)."""


def classify_fact(grade: FactGrade, carrier_state: str, carrier_altered: str | None = None,
                  kind: str | None = None) -> AnswerVerdict:
    """Class one graded answer against the final carrier's state of its fact.

    Args:
        grade: the grader's verdict on the answer for this label.
        carrier_state: the final carrier's state of the fact (``present``, ``mutated``,
            ``missing``; ``not_yet`` counts as ``missing``). With no carrier at all, pass
            ``missing``: the fact counts as lost.
        carrier_altered: for a ``mutated`` carrier, the altered text it holds.
        kind: the fact's kind, for the near-miss diagnostic.

    Returns:
        The verdict.
    """
    state = carrier_state if carrier_state in ("present", "mutated") else "missing"
    miss = near_miss(grade.found, grade.expected, kind) if grade.found else None
    # ``hedged`` is the grader's verdict (several candidates, a negated or struck value) and is
    # never credited; a grade without that field has none.
    if getattr(grade, "hedged", False):
        return AnswerVerdict(grade.label, "hedged", state, near_miss=miss)
    if grade.correct:
        return AnswerVerdict(grade.label, "correct", state)
    abstained = grade.abstained or is_abstention(grade.found)
    if state == "present":
        detail = ("nothing" if not (grade.found or "").strip() else
                  "abstained" if abstained else "other_value")
        return AnswerVerdict(grade.label, "read_failure", state, detail, miss)
    if abstained:
        return AnswerVerdict(grade.label, "honest_abstention", state, near_miss=miss)
    repeated = bool(carrier_altered) and contains_token(grade.found or "", carrier_altered or "")
    if state == "mutated" and repeated:
        return AnswerVerdict(grade.label, "carried_corruption", state, near_miss=miss)
    return AnswerVerdict(grade.label, "fabricated", state, near_miss=miss)


# ---------------------------------------------------------------------------------------------
# Carrier × answer
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CarrierAnswerTable:
    """A row's cross-tab: did the final carrier hold the value × did the answer get it."""

    held_correct: int = 0
    held_wrong: int = 0
    lost_correct: int = 0
    """Answered correctly although the carrier lacked the value (a guess, or a leak)."""
    lost_wrong: int = 0

    def __add__(self, other: CarrierAnswerTable) -> CarrierAnswerTable:
        return CarrierAnswerTable(self.held_correct + other.held_correct,
                                  self.held_wrong + other.held_wrong,
                                  self.lost_correct + other.lost_correct,
                                  self.lost_wrong + other.lost_wrong)


def carrier_answer_table(verdicts: Iterable[AnswerVerdict]) -> CarrierAnswerTable:
    """Count a row's graded facts by final carrier (held the value verbatim or not) × answer.

    Args:
        verdicts: the row's answer verdicts.

    Returns:
        The four counts (cells add up with ``+``).
    """
    return _table((v.carrier_state, v.answer_class) for v in verdicts)


class _StoredCheck(Protocol):
    @property
    def carrier_state(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def classification(self) -> str: ...  # noqa: D102 - protocol member


def checks_table(checks: Iterable[_StoredCheck]) -> CarrierAnswerTable:
    """The same cross-tab from stored checks (``core.row.Check``: carrier state and class).

    Args:
        checks: graded checks of one row, or of every row of a cell (the counts add up).

    Returns:
        The four counts.
    """
    return _table((c.carrier_state, c.classification) for c in checks)


def _table(pairs: Iterable[tuple[str, str]]) -> CarrierAnswerTable:
    """Held = the final carrier had the value verbatim; got = the answer class is correct."""
    cells = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for state, answer_class in pairs:
        cells[(state == "present", answer_class == "correct")] += 1
    return CarrierAnswerTable(cells[(True, True)], cells[(True, False)],
                              cells[(False, True)], cells[(False, False)])


# ---------------------------------------------------------------------------------------------
# Provenance of a wrong value
# ---------------------------------------------------------------------------------------------

ProvenanceSource = Literal["cross_binding", "earlier_carrier", "session_input", "invention"]


class _Planted(Protocol):
    @property
    def label(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def value(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def graded(self) -> bool: ...  # noqa: D102 - protocol member


@dataclass(frozen=True)
class Provenance:
    """Where a wrong value came from."""

    source: str
    """``cross_binding``, ``earlier_carrier``, ``session_input`` or ``invention``."""
    value: str
    """The wrong value traced (an identifier of the answer, or its whole text)."""
    fact_label: str | None = None
    """For ``cross_binding``: the planted fact or decoy whose value it is."""
    fact_graded: bool | None = None
    """For ``cross_binding``: whether that fact is graded (False: a decoy)."""
    fold: int | None = None
    """For ``earlier_carrier``: the first fold whose carrier held it."""
    chunk: int | None = None
    """For ``session_input``: the first chunk (0-based) that held it."""


_EDGE = " \t\r\n.,;:!?()[]{}<>\"'`*«»“”"


def given_values(found: str) -> list[str]:
    """The values an answer's text offers: its identifiers, else the whole text, trimmed.

    Args:
        found: the answer text bound to a label.

    Returns:
        Candidate values, longest first (empty for an empty text).
    """
    text = normalize(found).replace("**", "").replace("__", "").strip().strip(_EDGE)
    if not text:
        return []
    found_ids = sorted({i.value for i in find_identifiers(text)}, key=len, reverse=True)
    return [text] + [v for v in found_ids if v != text]


def provenance(found: str, label: str, facts: Sequence[_Planted],
               carriers: Sequence[str] = (), chunks: Sequence[str] = ()) -> Provenance | None:
    """Trace a wrong answer's value to where it came from.

    Args:
        found: the answer text bound to ``label`` (a wrong value, not an abstention).
        label: the label it was given for (its own fact is never a cross-binding).
        facts: the scenario's planted facts, graded and decoys.
        carriers: the row's carriers, fold 0 first (the last is what the recall read).
        chunks: the session input, chunk 0 first.

    Returns:
        The provenance, or None when the text offers no value (empty).
    """
    candidates = given_values(found)
    if not candidates:
        return None
    whole = candidates[0]
    # Cross-binding: the text holds another fact's value as a whole token.
    for fact in sorted(facts, key=lambda f: len(f.value), reverse=True):
        if fact.label != label and contains_token(whole, fact.value):
            return Provenance("cross_binding", fact.value, fact.label, fact.graded)
    for value in candidates:
        for fold, carrier in enumerate(carriers):
            if contains_token(carrier, value):
                return Provenance("earlier_carrier", value, fold=fold)
    for value in candidates:
        for chunk, text in enumerate(chunks):
            if contains_token(text, value):
                return Provenance("session_input", value, chunk=chunk)
    return Provenance("invention", whole)


# ---------------------------------------------------------------------------------------------
# One value, end to end (``foldscope classify``)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Labelled:
    label: str
    value: str
    chunk: int = 0
    graded: bool = True
    kind: str = ""


@dataclass(frozen=True)
class ValueVerdict:
    """Everything the classifier says about one answer to one label."""

    label: str
    planted: str
    given: str | None
    """The answer text bound to the label (the whole answer when no line names the label)."""
    verdict: AnswerVerdict
    carrier_altered: str | None
    """For a ``mutated`` carrier: the altered text it holds."""
    carrier_rule: str | None
    provenance: Provenance | None
    """For a wrong value: where it came from; None for a correct answer or an abstention."""
    signatures: tuple[str, ...]
    """Stock-value signature rules the given value hits."""


def classify_value(label: str, planted: str, answer: str, *, carrier: str | None = None,
                   facts: Sequence[_Planted] = (), chunks: Sequence[str] = (),
                   kind: str | None = None, signature_rules: Sequence[Signature] | None = None
                   ) -> ValueVerdict:
    """Grade, class and trace one answer to one label.

    Args:
        label: the label asked.
        planted: the planted value.
        answer: the answer text: ``label: value`` lines, or just the value.
        carrier: the final carrier the answer was given from; None when there is none (the
            fact then counts as lost).
        facts: planted facts and decoys to trace cross-binding against (a scenario's).
        chunks: the session input, to trace a value to the chunk that held it.
        kind: the fact's kind (a scenario's), for the near-miss and signature rules.
        signature_rules: stock-value signatures (default: the shipped ones).

    Returns:
        The verdict.
    """
    fact = _Labelled(label, planted, kind=kind or "")
    rivals = [f.value for f in facts]
    grade = grade_answer(answer, [fact], rivals=rivals)[0]
    if grade.found is None and answer.strip():
        grade = grade_answer(f"{label}: {' '.join(answer.split())}", [fact], rivals=rivals)[0]
    state, altered, rule = "missing", None, None
    if carrier is not None:
        now = carrier_states(carrier, [fact], last_chunk=0)[0]
        state, altered, rule = now.state, now.altered, now.rule
    verdict = classify_fact(grade, state, altered, kind)
    offered = grade.found is not None and not is_abstention(grade.found)
    trace = None
    if offered and verdict.answer_class not in ("correct", "honest_abstention"):
        trace = provenance(grade.found or "", label, facts,
                           [carrier] if carrier is not None else [], chunks)
    hits = value_signatures(grade.found or "", kind, signature_rules) if offered else ()
    return ValueVerdict(label, planted, grade.found, verdict, altered, rule, trace, hits)


def value_signatures(found: str, kind: str | None = None,
                     rules: Sequence[Signature] | None = None) -> tuple[str, ...]:
    """The stock-value signature rules an answer's value hits (its whole text or any of its
    identifiers), each named once, in the order first hit.

    Args:
        found: the answer text bound to a label (a value, not an abstention).
        kind: the fact's kind, when known.
        rules: the signatures (default: the shipped ones).

    Returns:
        Rule names; empty when none recognises the value.
    """
    hits: list[str] = []
    for value in given_values(found):
        hits += [h for h in signature_hits(value, kind, rules) if h not in hits]
    return tuple(hits)
