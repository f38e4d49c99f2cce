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
                            abstained (detail None) or gave nothing for the label (detail
                            ``nothing``: no abstention, counted apart by ``abstains``)
``fabricated``              the carrier had lost the value; the answer gave a value that no
                            carrier of the row held in its place
``read_failure``            the carrier held the value; the answer gave another value
                            (``other_value``), nothing (``nothing``) or an abstention
                            (``abstained``) — the sub-kind
``carried_corruption``      the answer repeated a form the value took in the row's carriers
                            (``core.forensics.value_course``; detail ``fold N``, the fold it
                            entered), or the final carrier's mutation
==========================  ==============================================================

Provenance traces a wrong value: another planted fact or decoy (cross-binding, naming which),
an earlier carrier of the row (which fold), the session input (which chunk), or nowhere
(invention). The first that holds is reported, in that order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from foldscope.core.forensics import (
    MISSING,
    MUTATED,
    PRESENT,
    CarriedForm,
    FactState,
    carrier_states,
    value_course,
)
from foldscope.core.grading import (
    FactGrade,
    contains_token,
    grade_answer,
    is_abstention,
    normalize,
    split_unit,
    tag_kind,
)
from foldscope.core.identifiers import default_rules, find_identifiers
from foldscope.core.nearmiss import NearMiss, near_miss
from foldscope.core.shapes import URL_OPENING
from foldscope.core.signatures import Signature, signature_hits

AnswerClass = Literal["correct", "hedged", "honest_abstention", "fabricated", "read_failure",
                      "carried_corruption"]
ANSWER_CLASSES: tuple[str, ...] = ("correct", "hedged", "honest_abstention", "fabricated",
                                   "read_failure", "carried_corruption")
"""Every class :func:`classify_fact` returns."""

READ_FAILURE_KINDS: tuple[str, ...] = ("other_value", "nothing", "abstained")
"""The sub-kinds of ``read_failure``."""

NOTHING = "nothing"
"""The detail of an answer that gave nothing for its label (no line names it, it is named with
no value, or its text holds no value of the fact's kind): for ``read_failure`` and for
``honest_abstention`` (the carrier had lost the value; the answer did not say it does not know,
it said nothing). Not counted as an abstention (``core.fabrication.abstains``)."""

CarrierState = FactState
"""A fact's state in the final carrier: the one definition is ``core.forensics``'."""


@dataclass(frozen=True)
class AnswerVerdict:
    """One graded answer's class, with what it was judged by."""

    label: str
    answer_class: str
    """One of :data:`ANSWER_CLASSES`."""
    carrier_state: str
    """The final carrier's state of the fact: ``present``, ``mutated`` or ``missing``."""
    detail: str | None = None
    """For ``read_failure``: one of :data:`READ_FAILURE_KINDS`; for ``honest_abstention``:
    :data:`NOTHING` when the answer gave nothing (None: it said it does not know); for
    ``carried_corruption``: ``fold N``, the fold (0-based) the repeated form entered, when the
    row's carriers are known; else None."""
    near_miss: NearMiss | None = None
    """Diagnostic only: a near miss of the value in the answer (never decides the class)."""
    carried: CarriedForm | None = None
    """For ``carried_corruption`` judged by the row's carriers: the form repeated."""


def classify_fact(grade: FactGrade, carrier_state: str, carrier_altered: str | None = None,
                  kind: str | None = None, course: Sequence[CarriedForm] = ()) -> AnswerVerdict:
    """Class one graded answer against the final carrier's state of its fact.

    Args:
        grade: the grader's verdict on the answer for this label.
        carrier_state: the final carrier's state of the fact (``present``, ``mutated``,
            ``missing``; ``not_yet`` counts as ``missing``). With no carrier at all, pass
            ``missing``: the fact counts as lost.
        carrier_altered: for a ``mutated`` carrier, the altered text it holds.
        kind: the fact's kind, for the near-miss diagnostic.
        course: the forms the value took through the row's carriers
            (``core.forensics.value_course``): a wrong value that repeats one of them is
            ``carried_corruption``, with the fold it entered.

    Returns:
        The verdict.
    """
    state = carrier_state if carrier_state in (PRESENT, MUTATED) else MISSING
    found = grade.found
    miss = near_miss(found, grade.expected, kind) if found else None
    # ``hedged`` is the grader's verdict (several candidates, a negated or struck value) and is
    # never credited; a grade without that field has none.
    if getattr(grade, "hedged", False):
        return AnswerVerdict(grade.label, "hedged", state, near_miss=miss)
    if grade.correct:
        return AnswerVerdict(grade.label, "correct", state)
    nothing = getattr(grade, "nothing", False) or not (found or "").strip()
    abstained = not nothing and (grade.abstained or is_abstention(found))
    if state == PRESENT:
        detail = "nothing" if nothing else "abstained" if abstained else "other_value"
        return AnswerVerdict(grade.label, "read_failure", state, detail, miss)
    if nothing:
        return AnswerVerdict(grade.label, "honest_abstention", state, NOTHING, miss)
    if abstained:
        return AnswerVerdict(grade.label, "honest_abstention", state, near_miss=miss)
    given = getattr(grade, "given", None) or found or ""
    carried = _carried(given, course)
    if carried is not None:
        return AnswerVerdict(grade.label, "carried_corruption", state, f"fold {carried.fold}",
                             miss, carried)
    if state == MUTATED and carrier_altered and contains_token(given, carrier_altered):
        return AnswerVerdict(grade.label, "carried_corruption", state, near_miss=miss)
    return AnswerVerdict(grade.label, "fabricated", state, near_miss=miss)


def _carried(given: str, course: Sequence[CarriedForm]) -> CarriedForm | None:
    """The carried form a wrong value repeats (the longest that it holds as a whole token)."""
    text = normalize(given).strip()
    if not text:
        return None
    hits = [f for f in course if f.value == text or contains_token(text, f.value)]
    return max(hits, key=lambda f: (len(f.value), -f.fold)) if hits else None


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
        cells[(state == PRESENT, answer_class == "correct")] += 1
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
               carriers: Sequence[str] = (), chunks: Sequence[str] = (), *,
               planted: str | None = None, kind: str | None = None,
               course: Sequence[CarriedForm] = ()) -> Provenance | None:
    """Trace a wrong answer's value to where it came from.

    A value is found in a carrier or chunk only as a token of its kind, not as any run of the
    same characters: a port where a port is named (``port 8080``, ``host:8080``; not ``verified
    batch 8080``), a count with its unit (``16 shards``; not ``open=16``), other values as whole
    tokens (``core.grading.contains_token``). A value of the row's value course (``course``)
    is traced to the fold it entered.

    Args:
        found: the answer text bound to ``label`` (a wrong value, not an abstention).
        label: the label it was given for (its own fact is never a cross-binding).
        facts: the scenario's planted facts, graded and decoys.
        carriers: the row's carriers, fold 0 first (the last is what the recall read).
        chunks: the session input, chunk 0 first.
        planted: the label's planted value (default: its fact's, from ``facts``).
        kind: the fact's kind tag (default: its fact's, from ``facts``).
        course: the planted value's forms through the carriers
            (``core.forensics.value_course``).

    Returns:
        The provenance, or None when the text offers no value (empty).
    """
    candidates = given_values(found)
    if not candidates:
        return None
    whole = candidates[0]
    own = next((f for f in facts if f.label == label), None)
    if planted is None and own is not None:
        planted = own.value
    if kind is None and own is not None:
        kind = getattr(own, "kind", None) or None
    # Cross-binding: the text holds another fact's value as a whole token.
    for fact in sorted(facts, key=lambda f: len(f.value), reverse=True):
        if fact.label != label and contains_token(whole, fact.value):
            return Provenance("cross_binding", fact.value, fact.label, fact.graded)
    carried = _carried(whole, course)
    if carried is not None:
        return Provenance("earlier_carrier", carried.value, fold=carried.fold)
    if planted:
        # The planted value inside a wrong one ("…/install.lock/", "…UTC+3") is not where the
        # wrong value came from.
        own_value = normalize(planted).strip()
        candidates = [whole] + [c for c in candidates[1:] if c != own_value]
    for value in candidates:
        for fold, carrier in enumerate(carriers):
            if holds_as_kind(carrier, value, planted, kind):
                return Provenance("earlier_carrier", value, fold=fold)
    for value in candidates:
        for chunk, text in enumerate(chunks):
            if holds_as_kind(text, value, planted, kind):
                return Provenance("session_input", value, chunk=chunk)
    return Provenance("invention", whole)


def holds_as_kind(text: str, value: str, planted: str | None = None,
                  kind: str | None = None) -> bool:
    """Whether a text holds a value as a token of the planted value's kind.

    For a planted ``<number> <unit>`` value, a number counts only with that unit after it
    (``16 shards``); for a fact tagged with a kind that names numbers in context (``port``), a
    number counts only where the text names it so (``core.identifiers``); anything else is a
    whole token (``contains_token``).

    Args:
        text: a carrier or a chunk.
        value: the value traced.
        planted: the fact's planted value (None: judge the value by its own shape).
        kind: the fact's kind tag.

    Returns:
        True when the text holds it so.
    """
    value = normalize(value).strip()
    if not value:
        return False
    number = value.replace(",", "").replace(".", "").isdigit()
    unit = split_unit(planted) if planted else None
    if unit is not None and (number or split_unit(value) is not None):
        head = value if number else (split_unit(value) or (value, ""))[0]
        return any(contains_token(text, f"{head} {u}") for u in _unit_forms(unit[1]))
    tagged = tag_kind(kind)
    if number and tagged is not None and tagged != "number":
        # The kind's own rule, not overlap-resolved: the port of "http://host:8080/x" counts.
        norm = normalize(text)
        rule = next((r for r in default_rules() if r.name == tagged), None)
        if rule is None:
            return contains_token(norm, value)
        if tagged == "port" and any(m.group(1) == value for m in _URL_PORT_RE.finditer(norm)):
            return True  # the port of a URL: "http://host:8080/health"
        return any((m.group("value") if "value" in rule.pattern.groupindex else m.group())
                   == value for m in rule.pattern.finditer(norm))
    return contains_token(text, value)


_URL_PORT_RE = re.compile(URL_OPENING + r"[^/\s:@]+(?:@[^/\s:]+)?:(\d{1,5})(?!\d)")
"""A URL's port: the shared URL opening (``core.shapes``), a host (after any user) and ``:port``."""


def _unit_forms(unit: str) -> tuple[str, ...]:
    bare = unit[:-1] if unit.endswith("s") and len(unit) > 3 else unit
    return tuple(dict.fromkeys([unit, bare, bare + "s"]))


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
                   kind: str | None = None, signature_rules: Sequence[Signature] | None = None,
                   carriers: Sequence[str] = ()) -> ValueVerdict:
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
        carriers: the row's earlier carriers, fold 0 first (``carrier`` is the last); the
            value's course through them decides ``carried_corruption``.

    Returns:
        The verdict.
    """
    fact = _Labelled(label, planted, kind=kind or "")
    rivals = [f.value for f in facts]
    grade = grade_answer(answer, [fact], rivals=rivals)[0]
    if grade.found is None and answer.strip():
        grade = grade_answer(f"{label}: {' '.join(answer.split())}", [fact], rivals=rivals)[0]
    every = [*carriers, carrier] if carrier is not None else list(carriers)
    state, altered, rule = MISSING, None, None
    if every:
        now = carrier_states(every[-1], [fact], last_chunk=0)[0]
        state, altered, rule = now.state, now.altered, now.rule
    course = course_for(grade, every, kind)
    verdict = classify_fact(grade, state, altered, kind, course)
    offered = grade.found is not None and not grade.nothing and not is_abstention(grade.found)
    trace = None
    if offered and verdict.answer_class not in ("correct", "honest_abstention"):
        trace = provenance(grade.given or grade.found or "", label, facts, every, chunks,
                           planted=planted, kind=kind, course=course)
    hits = value_signatures(grade.given or grade.found or "", kind, signature_rules) \
        if offered else ()
    return ValueVerdict(label, planted, grade.found, verdict, altered, rule, trace, hits)


def course_for(grade: FactGrade, carriers: Sequence[str], kind: str | None = None
               ) -> tuple[CarriedForm, ...]:
    """The value's course through the carriers, computed only where it can decide the class: a
    wrong, unhedged answer that gave a value (empty otherwise: the course is not cheap)."""
    if not carriers or grade.correct or grade.hedged or grade.nothing or grade.abstained:
        return ()
    return value_course(carriers, grade.expected, grade.label, kind)


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
