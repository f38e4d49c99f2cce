"""Per-fold fact forensics: is each planted value present, mutated (a near miss) or missing?

"Mutated" is decided by the one near-miss definition, ``core.nearmiss``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal, Protocol, TypeVar

from foldscope.core.grading import (
    bind_answer,
    competing_kinds,
    contains_token_normalized,
    normalize,
    shape_tokens,
    split_unit,
    token_spans,
)
from foldscope.core.identifiers import find_identifiers
from foldscope.core.memo import remember
from foldscope.core.nearmiss import (
    MIN_VALUE_CHARS,
    RULES,
    UNIT_DROPPED,
    NearMiss,
    is_near_miss,
    near_miss,
    token_near_miss,
)


class TimelineState(StrEnum):
    """A value's state in a text (a carrier, a summary): the one definition of the states.

    str-valued, so stored and printed values are the strings they always were (``present``...),
    and comparing with a plain string still holds."""

    NOT_YET = "not_yet"
    """Not planted yet: the fold has not read the fact's chunk (timelines only)."""
    PRESENT = "present"
    """The text holds the value verbatim (the grader's whole-token rule)."""
    MUTATED = "mutated"
    """The text holds a near miss of it (``core.nearmiss``)."""
    MISSING = "missing"
    """Neither."""
    UNKNOWN = "unknown"
    """Cannot be told: the text is opaque where the value would be (audits only)."""


FactState = Literal[TimelineState.PRESENT, TimelineState.MUTATED, TimelineState.MISSING]
"""A value's state in one text once it can be there (``not_yet`` left out)."""

PRESENT: Final = TimelineState.PRESENT
MUTATED: Final = TimelineState.MUTATED
MISSING: Final = TimelineState.MISSING
NOT_YET: Final = TimelineState.NOT_YET
UNKNOWN: Final = TimelineState.UNKNOWN

STATE_MARKS: dict[str, str] = {NOT_YET: "·", PRESENT: "●", MUTATED: "◐", MISSING: "○"}
"""One character per state, as the inspector's strip, ``foldscope inspect`` and the audit draw
them (the UI adds the theme variable that colours each)."""

_RULE_ORDER = {rule: n for n, rule in enumerate(RULES)}


class _Planted(Protocol):
    """A planted value as the span finder reads it (read-only, so frozen records match)."""

    @property
    def label(self) -> str: ...
    @property
    def value(self) -> str: ...


def _state(norm: str, value: str, kind: str | None = None, label: str | None = None
           ) -> tuple[FactState, NearMiss | None]:
    """One value's state in a carrier already through ``normalize``: the one rule for both the
    stored per-fold status and the timeline (present: the grader's whole-token rule).

    A carrier that gives the fact's label the number of a unit-bearing value without its unit
    (``ledger shard count: 19`` for ``19 shards``) holds it ``mutated`` (``unit_dropped``),
    however short the number: bound to the label, it is that fact's value, not any ``19``."""
    if contains_token_normalized(norm, value):
        return PRESENT, None
    miss = near_miss(norm, value, kind)
    if miss is None and label is not None:
        miss = _bound_unit_drop(norm, value, label)
    return (MISSING, None) if miss is None else (MUTATED, miss)


def _bound_unit_drop(norm: str, value: str, label: str) -> NearMiss | None:
    unit = split_unit(value)
    if unit is None or len("".join(unit[0].split())) >= MIN_VALUE_CHARS:
        return None  # long number parts are found by the near-miss rules in free text
    head = unit[0]
    if not contains_token_normalized(norm, head):
        return None
    for text in bound_texts(norm, label):
        if contains_token_normalized(text, head) and unit[1].casefold() not in text.casefold():
            at = norm.find(text)
            start = norm.find(head, max(at, 0)) if at >= 0 else -1
            if start < 0:
                start = 0
            return NearMiss(head, normalize(value).strip(), UNIT_DROPPED, start,
                            start + len(head), "number")
    return None


def bound_texts(carrier: str, label: str) -> list[str]:
    """The texts a carrier gives one label (``core.grading.bind_answer``), reading only the
    lines that share a word with the label (and the whole text when it holds JSON)."""
    words = [w for w in label.casefold().replace("-", " ").split() if len(w) >= 3]
    if "{" in carrier:
        text = carrier
    else:
        folded_words = tuple(w[:5] for w in words)
        text = "\n".join(line for line, low in ((line, line.casefold())
                                                for line in carrier.splitlines())
                         if any(w in low for w in folded_words))
    if not text.strip():
        return []
    key = (text, label)
    found = _BOUND_TEXTS.get(key)
    if found is None:
        found = remember(_BOUND_TEXTS, 1024, key, tuple(
            b.value for b in bind_answer(text, [label])[label] if b.value.strip()))
    return list(found)


_BOUND_TEXTS: dict[tuple[str, str], tuple[str, ...]] = {}
"""What the lines sharing a word with a label bind to it (``bind_answer`` is a function of the
text and the label): a carrier's lines about one fact mostly come back in the next fold."""


@dataclass(frozen=True)
class CarriedForm:
    """A text a carrier of the row held in place of a planted value: the value after one or more
    edits, or another value the carrier gave the fact's label."""

    value: str
    fold: int
    """The first fold (0-based, as ``Provenance.fold``) whose carrier held it."""
    rule: str
    """The edit from ``source`` (a near-miss rule, ``core.nearmiss``), or ``replaced``: the
    carrier gave the label this value, no small edit of what it held before."""
    source: str
    """What it was made from: the planted value, or an earlier carried form."""


REPLACED = "replaced"
"""The rule of a carried form that is no near miss: the carrier bound the label to it."""


def _bound_values(norm: str, value: str, label: str, kind: str | None) -> list[str]:
    """The values (tokens of the fact's kind, or the whole text for a value of no kind) a carrier
    gives the fact's label."""
    kinds = competing_kinds(value, kind)
    out: list[str] = []
    for text in bound_texts(norm, label):
        if kinds:
            tokens = [i.value for i in find_identifiers(text, kinds=kinds)]
            tokens += [t for t in shape_tokens(value, text) if t not in tokens]
            out += tokens
        else:
            out.append(" ".join(text.split()))
    return list(dict.fromkeys(out))


def value_course(carriers: Sequence[str], value: str, label: str, kind: str | None = None
                 ) -> tuple[CarriedForm, ...]:
    """The forms a planted value took through a row's carriers, after any number of edits.

    At each fold, every form the previous carrier held (the value itself, or a form carried so
    far) is looked for in the new carrier: present verbatim it is still held; else a near miss
    of it (``core.nearmiss``) is a new form, made by that edit (``47031`` → ``47301`` at fold 5
    → ``47310`` at fold 6: two forms, each one edit from the one before). A value the carrier
    gives the fact's label is a form too (``ledger shard count: 19`` for ``19 shards``:
    ``unit_dropped``; ``admin console port: 8080``: ``replaced``).

    Args:
        carriers: the row's carriers, fold 0 first.
        value: the planted value.
        label: the fact's label.
        kind: the fact's kind tag.

    Returns:
        Each form once, in the order it entered, with the fold it entered.
    """
    planted = normalize(value).strip()
    forms: dict[str, CarriedForm] = {}
    held: set[str] = set()
    for fold, carrier in enumerate(carriers):
        norm = normalize(carrier)
        now: set[str] = set()
        for base in [planted, *sorted(held)]:
            if contains_token_normalized(norm, base):
                now.add(base)
                continue
            miss = near_miss(norm, base, kind)
            if miss is not None and miss.altered != planted \
                    and not contains_token_normalized(miss.altered, planted):
                now.add(miss.altered)
                forms.setdefault(miss.altered, CarriedForm(miss.altered, fold, miss.rule, base))
        for bound in _bound_values(norm, planted, label, kind):
            if bound == planted or contains_token_normalized(bound, planted):
                continue
            now.add(bound)
            if bound not in forms:
                near = is_near_miss(bound, planted, kind)
                forms[bound] = CarriedForm(bound, fold, near.rule if near else REPLACED, planted)
        now |= {f for f in forms if f not in now and contains_token_normalized(norm, f)}
        held = now
    return tuple(forms.values())


def value_state(norm: str, value: str, kind: str | None = None,
                tokens: Iterable[str] | None = None) -> tuple[FactState, NearMiss | None]:
    """One value's state in a text already through ``normalize``.

    Args:
        norm: the normalised text.
        value: the value.
        kind: its kind, when known.
        tokens: when the caller has found the text's tokens of the value's kind (a session
            audit), a near miss must be one of them, whole (:func:`core.nearmiss.token_near_miss`);
            otherwise any part of the text may be (:func:`core.nearmiss.near_miss`).

    Returns:
        ``(state, near miss)``: present by the grader's whole-token rule, mutated with the near
        miss, or missing.
    """
    if tokens is None:
        return _state(norm, value, kind)
    if contains_token_normalized(norm, value):
        return PRESENT, None
    best: NearMiss | None = None
    for token in tokens:
        miss = token_near_miss(token, value, kind)
        if miss is not None and (best is None or _RULE_ORDER[miss.rule] < _RULE_ORDER[best.rule]):
            best = miss
    return (MISSING, None) if best is None else (MUTATED, best)


def fact_state(text: str, value: str) -> FactState:
    """Classify one value against one carrier."""
    return _state(normalize(text), value)[0]


def fact_status(text: str, facts: Iterable[_Planted]) -> dict[str, str]:
    """Classify every planted fact against a carrier, keyed by label.

    The carrier is normalised once for all facts (it runs after every fold), not once per fact.
    """
    norm = normalize(text)
    return {f.label: _state(norm, f.value, getattr(f, "kind", None), f.label)[0] for f in facts}


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
            spans.extend(FactSpan(a, b, f.label, PRESENT) for a, b in found)
            continue
        miss = near_miss(norm, value, getattr(f, "kind", None))
        if miss is not None:
            spans.append(FactSpan(miss.start, miss.end, f.label, MUTATED))
    spans.sort(key=lambda sp: (sp.start, -sp.end))
    # Overlaps (a decoy inside another value) keep the earlier, longer span.
    kept: list[FactSpan] = []
    for sp in spans:
        if not kept or sp.start >= kept[-1].end:
            kept.append(sp)
    return kept


# ---------------------------------------------------------------------------------------------
# The fact timeline: every planted fact's state after every fold of a row
# ---------------------------------------------------------------------------------------------



class PlantedFact(Protocol):
    """What the timeline needs of a planted fact (``core.scenario.Fact`` is one)."""

    @property
    def label(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def value(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def chunk(self) -> int: ...  # noqa: D102 - protocol member

    @property
    def graded(self) -> bool: ...  # noqa: D102 - protocol member

    @property
    def kind(self) -> str: ...  # noqa: D102 - protocol member


@dataclass(frozen=True)
class FactAtFold:
    """One planted fact in one fold's carrier."""

    label: str
    value: str
    state: TimelineState
    altered: str | None = None
    """For ``mutated``: the altered text the carrier holds (``core.nearmiss``)."""
    rule: str | None = None
    """For ``mutated``: the named edit from the value to ``altered``."""


@dataclass(frozen=True)
class FoldFacts:
    """Every planted fact's state after one fold."""

    fold: int
    first_chunk: int
    last_chunk: int
    facts: tuple[FactAtFold, ...]

    def state(self, label: str) -> FactAtFold | None:
        """The fact of that label, or None."""
        return next((f for f in self.facts if f.label == label), None)


@dataclass(frozen=True)
class FactHistory:
    """A planted fact's course through a row's folds.

    ``lost_fold`` is the first fold, at or after the one that read the fact's chunk, whose carrier
    no longer holds the value verbatim although the fact had reached it: a fact dropped by the
    very fold that read it is lost there (and never carried). ``returned`` flags a fact present
    again after its loss; a fold sees only the previous carrier and its own chunk, so a value
    coming back is worth a look (a model recalling it from elsewhere, or a grading problem).
    """

    label: str
    value: str
    graded: bool
    chunk: int
    planted_fold: int | None
    """The fold whose chunks included the fact's chunk; None while that chunk is not folded."""
    first_carried_fold: int | None
    lost_fold: int | None
    returned: bool
    final_state: TimelineState
    final_altered: str | None = None
    final_rule: str | None = None


@dataclass(frozen=True)
class Timeline:
    """A row's fact timeline: the state per fold, and each fact's course."""

    folds: tuple[FoldFacts, ...]
    facts: tuple[FactHistory, ...]

    def history(self, label: str) -> FactHistory | None:
        """The course of the fact with that label, or None."""
        return next((f for f in self.facts if f.label == label), None)


def carrier_states(carrier: str, facts: Iterable[PlantedFact], last_chunk: int
                   ) -> tuple[FactAtFold, ...]:
    """Each planted fact's state in one carrier, after a fold that read chunks up to ``last_chunk``.

    ``present`` uses the grader's presence rule (whole token, ``core.grading``); ``mutated`` the
    near-miss rules (``core.nearmiss``), with the fact's kind; anything else is ``missing``.

    Args:
        carrier: the carrier exactly as the next fold receives it.
        facts: the planted facts, graded and decoys.
        last_chunk: the last chunk (0-based) folded so far.

    Returns:
        One state per fact, in the order given.
    """
    known = _CARRIER_STATES.of(carrier)
    norm: str | None = None  # once for all facts, and only if one is new: carriers run to 100k
    out: list[FactAtFold] = []
    for fact in facts:
        if fact.chunk > last_chunk:
            out.append(_fact_at(fact.label, fact.value, NOT_YET, None, None))
            continue
        key = (fact.value, fact.kind, fact.label)
        found = known.get(key)
        if found is None:
            if norm is None:
                norm = normalize(carrier)
            state, miss = _state(norm, fact.value, fact.kind, fact.label)
            found = known[key] = _fact_at(fact.label, fact.value, state,
                                          miss.altered if miss else None,
                                          miss.rule if miss else None)
        out.append(found)
    return tuple(out)


_FACTS_AT: dict[tuple[str, str, str, str | None, str | None], FactAtFold] = {}
"""One shared record per distinct fact state (records are frozen): a fold's states are mostly
the states of the fold before, and building a frozen record costs more than finding it."""


def _fact_at(label: str, value: str, state: TimelineState, altered: str | None,
             rule: str | None) -> FactAtFold:
    key = (label, value, state, altered, rule)
    found = _FACTS_AT.get(key)
    if found is None:
        found = remember(_FACTS_AT, 65536, key, FactAtFold(label, value, state, altered, rule))
    return found


class _StatesMemo:
    """Each recent carrier's fact states (``_state`` is a function of the carrier's text and the
    fact): a row's final carrier, read by its last fold, is read again when the row is graded.
    Keyed by the carrier string itself, whose hash Python keeps once computed."""

    def __init__(self, carriers: int) -> None:
        self._items: OrderedDict[str, dict[tuple[str, str, str], FactAtFold]] = OrderedDict()
        self._carriers = carriers
        self._lock = threading.Lock()

    def of(self, carrier: str) -> dict[tuple[str, str, str], FactAtFold]:
        with self._lock:
            known = self._items.get(carrier)
            if known is None:
                known = self._items[carrier] = {}
                while len(self._items) > self._carriers:
                    self._items.popitem(last=False)
            else:
                self._items.move_to_end(carrier)
            return known


_CARRIER_STATES = _StatesMemo(64)


def start_histories(facts: Iterable[PlantedFact]) -> tuple[FactHistory, ...]:
    """The courses of a row's facts before its first fold (every fact ``not_yet``)."""
    return tuple(FactHistory(f.label, f.value, f.graded, f.chunk, None, None, None, False,
                             NOT_YET) for f in facts)


def advance_histories(histories: Sequence[FactHistory], fold: FoldFacts
                      ) -> tuple[FactHistory, ...]:
    """The facts' courses after one more fold: the incremental step the runner takes per fold.

    Args:
        histories: the courses so far (:func:`start_histories` before the first fold), in the
            order of ``fold.facts``.
        fold: the new fold's states (:func:`carrier_states`).

    Returns:
        The updated courses, same order.
    """
    out: list[FactHistory] = []
    for hist, now in zip(histories, fold.facts, strict=True):
        state = now.state
        if state == hist.final_state and now.altered == hist.final_altered \
                and now.rule == hist.final_rule and (
                    state == NOT_YET
                    or (hist.planted_fold is not None and (
                        (hist.first_carried_fold is not None
                         and (hist.lost_fold is None or hist.returned))
                        if state == PRESENT else hist.lost_fold is not None))):
            # The course ends in this very state and no field of it would move (what the
            # general step below finds, without building it): most facts in most folds.
            out.append(hist)
            continue
        planted = hist.planted_fold
        if planted is None and now.state != NOT_YET:
            planted = fold.fold
        first = hist.first_carried_fold
        lost, returned = hist.lost_fold, hist.returned
        if now.state == PRESENT:
            if first is None:
                first = fold.fold
            if lost is not None:
                returned = True
        elif now.state != NOT_YET and lost is None:
            lost = fold.fold
        if (planted, first, lost, returned, now.state, now.altered, now.rule) == (
                hist.planted_fold, hist.first_carried_fold, hist.lost_fold, hist.returned,
                hist.final_state, hist.final_altered, hist.final_rule):
            out.append(hist)  # most courses do not move in a fold: keep the record as it is
            continue
        out.append(FactHistory(hist.label, hist.value, hist.graded, hist.chunk, planted, first,
                               lost, returned, now.state, now.altered, now.rule))
    return tuple(out)


def fold_facts(fold: int, first_chunk: int, last_chunk: int, carrier: str,
               facts: Sequence[PlantedFact]) -> FoldFacts:
    """One fold's entry in the timeline (see :func:`carrier_states`)."""
    return FoldFacts(fold, first_chunk, last_chunk, carrier_states(carrier, facts, last_chunk))


def fact_timeline(folds: Iterable[tuple[int, int, str]], facts: Sequence[PlantedFact]
                  ) -> Timeline:
    """A row's whole fact timeline from its carriers.

    Args:
        folds: per fold in order, ``(first_chunk, last_chunk, carrier)`` (0-based chunks; a
            catch-up fold reads several). Folds are numbered from 0 in the order given.
        facts: the planted facts, graded and decoys.

    Returns:
        The timeline.
    """
    histories = start_histories(facts)
    entries: list[FoldFacts] = []
    for index, (first_chunk, last_chunk, carrier) in enumerate(folds):
        entry = fold_facts(index, first_chunk, last_chunk, carrier, facts)
        histories = advance_histories(histories, entry)
        entries.append(entry)
    return Timeline(tuple(entries), histories)


_P = TypeVar("_P", bound=PlantedFact)


def display_order(facts: Iterable[_P]) -> list[_P]:
    """Planted facts in the order foldscope lists them: graded first, then by chunk, then as
    given (the inspector's strip and ``foldscope inspect`` agree on it)."""
    return sorted(facts, key=lambda f: (not f.graded, f.chunk))


def human_fold(index: int | None) -> int | None:
    """A 0-based fold index as people read it (fold 1 is the first), None kept."""
    return None if index is None else index + 1


def timeline_upto(timeline: Timeline, upto: int | None = None) -> Timeline:
    """A timeline as it stood after one fold: its folds up to that one, and each fact's course
    as it stood then (what the inspector shows at a fold, and ``timeline_document`` prints).

    Args:
        timeline: the row's timeline.
        upto: the last fold (0-based) to include. None: every fold (the timeline itself).

    Returns:
        The timeline up to that fold.
    """
    if upto is None or upto + 1 >= len(timeline.folds):
        return timeline
    folds = timeline.folds[: upto + 1]
    graded = {h.label: h.graded for h in timeline.facts}
    chunks = {h.label: h.chunk for h in timeline.facts}
    facts = [_Fact(f.label, f.value, chunks[f.label], graded[f.label])
             for f in timeline.folds[0].facts] if timeline.folds else []
    histories = start_histories(facts)
    for entry in folds:
        histories = advance_histories(histories, entry)
    return Timeline(folds, histories)


def timeline_document(timeline: Timeline, upto: int | None = None) -> dict[str, object]:
    """A timeline as plain data (``foldscope inspect --json``): folds numbered from 1 as on
    screen.

    Args:
        timeline: the row's timeline.
        upto: the last fold (0-based) to include; each fact's course is as it stood after that
            fold. None: every fold.

    Returns:
        ``{"folds": [{fold, first_chunk, last_chunk, facts: [{label, value, state, altered,
        rule}]}], "facts": [{label, value, graded, chunk, planted_fold, first_carried_fold,
        lost_fold, returned, final_state, altered, rule}]}`` (chunks numbered from 1 too).
    """
    shown = timeline_upto(timeline, upto)
    folds, histories = shown.folds, shown.facts
    return {
        "folds": [{
            "fold": entry.fold + 1, "first_chunk": entry.first_chunk + 1,
            "last_chunk": entry.last_chunk + 1,
            "facts": [{"label": f.label, "value": f.value, "state": f.state,
                       "altered": f.altered if f.state == MUTATED else None,
                       "rule": f.rule if f.state == MUTATED else None} for f in entry.facts],
        } for entry in folds],
        "facts": [{
            "label": h.label, "value": h.value, "graded": h.graded, "chunk": h.chunk + 1,
            "planted_fold": human_fold(h.planted_fold),
            "first_carried_fold": human_fold(h.first_carried_fold),
            "lost_fold": human_fold(h.lost_fold), "returned": h.returned,
            "final_state": h.final_state,
            "altered": h.final_altered if h.final_state == MUTATED else None,
            "rule": h.final_rule if h.final_state == MUTATED else None,
        } for h in histories],
    }


@dataclass(frozen=True)
class _Fact:
    label: str
    value: str
    chunk: int
    graded: bool
    kind: str = ""


@dataclass(frozen=True)
class FoldChanges:
    """What one fold did to the planted facts, against the fold before it."""

    lost: tuple[FactAtFold, ...]
    """Missing now although present before, or planted by this very fold and dropped by it
    (never carried). A fact this fold altered is in ``mutated`` instead: each fact is named
    once, in one of the three."""
    mutated: tuple[FactAtFold, ...]
    """Mutated now, and not in the same altered form before."""
    added: tuple[FactAtFold, ...]
    """Present now, and not before (newly planted, or back)."""


def fold_changes(before: FoldFacts | None, now: FoldFacts) -> FoldChanges:
    """Compare two consecutive folds' states (``before`` None: the first fold, nothing before).

    Args:
        before: the previous fold's states, or None.
        now: this fold's states.

    Returns:
        The facts lost, mutated and added by this fold, in ``now``'s order.
    """
    prev = {f.label: f for f in before.facts} if before is not None else {}
    lost, mutated, added = [], [], []
    for fact in now.facts:
        old = prev.get(fact.label)
        was_present = old is not None and old.state == PRESENT
        arriving = old is None or old.state == NOT_YET
        if fact.state == PRESENT and not was_present:
            added.append(fact)
        elif (was_present or arriving) and fact.state == MISSING:
            lost.append(fact)
        elif fact.state == MUTATED and (old is None or old.state != MUTATED
                                          or old.altered != fact.altered):
            mutated.append(fact)
    return FoldChanges(tuple(lost), tuple(mutated), tuple(added))
