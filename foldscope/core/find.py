"""Finding rows and review values: a small query language, parsed once, applied to typed records.

A query is terms separated by spaces; every term must hold (``-`` before a term negates it)::

    class:fabricated arm:j,q model:garbler label:"backup cutoff" /20\\d\\d-07/ -text:lorem

``class:`` an answer class (a unique prefix will do: ``class:carr``), ``status:`` a row's status
as shown (``done``, ``failed``, ``running``, ``planned``, ``interrupted``; a prefix will do:
``status:fail``; a review value: its row's), ``model:`` a model id
(part of it, any case), ``arm:`` an arm id (whole), ``label:`` a planted fact's label (part of
it, any case), ``text:`` or a bare word: the answers and carriers (part, any case); a value in
``/…/`` is a regular expression (``/…/i``: any case), in quotes it may hold spaces and colons;
``a,b`` lists alternatives. Positive ``class:`` and ``label:`` terms are matched by the same
fact: ``label:cutoff class:fabricated`` finds the rows whose cutoff answer was fabricated.

Regular expressions run on the ``regex`` module with a time budget (the whole query's
application gets :data:`REGEX_BUDGET_S`, each search the time left; matching releases the GIL),
so a catastrophic pattern on a 100,000-character carrier gives up, named in the result, instead
of hanging the search; texts it had no time for count as not matching.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import regex

from foldscope.core.answers import ANSWER_CLASSES
from foldscope.core.fabrication import ReviewValue
from foldscope.core.metrics import live_row_status
from foldscope.core.row import Check, FoldRecord, RowRecord
from foldscope.core.status import RowStatus

FIELDS: tuple[str, ...] = ("class", "status", "model", "arm", "label", "text")
"""The fields a term may name (a bare term is ``text``)."""

FACT_FIELDS: frozenset[str] = frozenset({"class", "label"})
"""Fields a single planted fact answers: positive terms on them must hold for one fact."""

REGEX_BUDGET_S = 2.0
"""How long regular expressions may search in one application of a query, in all."""


class QueryError(ValueError):
    """A query that cannot be read: the message is one line naming what is wrong."""


@dataclass(frozen=True)
class FactItem:
    """One planted fact as a row answered it: its label and the answer's class."""

    label: str
    answer_class: str


@dataclass(frozen=True)
class Findable:
    """What a query reads of one row or review value."""

    model: str
    arm: str
    facts: tuple[FactItem, ...] = ()
    """The row's checked facts (a review value: its one fact)."""
    texts: tuple[str, ...] = ()
    """The answer and the carriers (a review value: its values first)."""
    status: str = ""
    """The row's status as shown (``core.metrics.live_row_status``); "" when not known."""


def row_findable(row: RowRecord, folds: Sequence[FoldRecord], checks: Iterable[Check], *,
                 sweep_running: bool = True) -> Findable:
    """What a query reads of a row: its model and arm, its status as shown (a row left running
    by a runner no longer alive reads interrupted), its checked facts, its answer and every
    fold's carrier (fold 1 first)."""
    texts = ((row.answer,) if row.answer else ()) + tuple(f.carrier for f in folds)
    return Findable(row.model, row.arm,
                    tuple(FactItem(c.label, c.classification) for c in checks), texts,
                    str(live_row_status(row.status, sweep_running)))


def value_findable(value: ReviewValue, texts: Sequence[str] = ()) -> Findable:
    """What a query reads of a review value: its model, arm and fact, the values planted and
    given, then ``texts`` (its row's answer and carriers, when they were read); its row is done
    (only a graded row has checked values)."""
    return Findable(value.model, value.arm, (FactItem(value.label, value.answer_class),),
                    (value.given, value.planted, *texts), str(RowStatus.DONE))


@dataclass(frozen=True)
class Needle:
    """A plain (not regular-expression) value: found as a part of a text in any case, or
    compared whole (arms, classes)."""

    text: str
    pattern: regex.Pattern[str]
    """The text escaped, any case: ``regex`` finds it faster than ``casefold() in`` and
    releases the GIL while it looks."""

    @classmethod
    def of(cls, text: str) -> Needle:
        """The needle for a plain value."""
        return cls(text, regex.compile(regex.escape(text), regex.IGNORECASE | regex.V0))


Alternative: TypeAlias = "Needle | regex.Pattern[str]"
"""One alternative of a term: a plain value or a regular expression."""


@dataclass(frozen=True)
class Term:
    """One term of a query: a field, its alternatives (plain strings or compiled patterns)."""

    field: str
    alternatives: tuple[Alternative, ...]
    negated: bool = False
    source: str = ""
    """The term as typed (for messages)."""

    @property
    def uses_regex(self) -> bool:
        """A regular expression is among the alternatives (it needs the time budget)."""
        return any(not isinstance(a, Needle) for a in self.alternatives)


@dataclass(frozen=True)
class Query:
    """A parsed query: every term must hold."""

    terms: tuple[Term, ...]
    source: str = ""

    @property
    def empty(self) -> bool:
        """No terms: everything matches."""
        return not self.terms

    @property
    def reads_texts(self) -> bool:
        """A term reads the answers and carriers (the caller may skip loading them if not)."""
        return any(t.field == "text" for t in self.terms)


@dataclass
class Budget:
    """The time regular expressions have left in one application of a query."""

    seconds: float = REGEX_BUDGET_S
    started: float = field(default_factory=time.monotonic)
    gave_up: int = 0
    """Searches stopped because the budget ran out (their texts counted as not matching)."""

    def left(self) -> float:
        """Seconds left (never below zero)."""
        return max(0.0, self.seconds - (time.monotonic() - self.started))


@dataclass(frozen=True)
class FindResult:
    """Which subjects a query matched, and whether regular expressions gave up on some."""

    matched: tuple[int, ...]
    """Indices of the matching subjects, in the order given."""
    total: int
    gave_up: int = 0
    cancelled: bool = False

    def note(self) -> str:
        """A line on how far the search went (empty when it went everywhere)."""
        if self.cancelled:
            return "search cancelled"
        if self.gave_up:
            return (f"the regular expression ran out of its {REGEX_BUDGET_S:g} s budget: "
                    f"{self.gave_up} texts not searched (counted as not matching)")
        return ""


# -- parsing -----------------------------------------------------------------------------------

_FIELD = re.compile(r"[A-Za-z_]+:")


@dataclass(frozen=True)
class _Word:
    negated: bool
    field: str | None
    """The field as typed (None: a bare term)."""
    value: str
    kind: str
    """``plain``, ``quoted`` or ``regex``."""
    flags: str
    source: str


def _words(text: str) -> list[_Word]:
    """Split a query into words: ``[-][field:](word | "quoted" | /regex/flags)``."""
    out: list[_Word] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        start = i
        negated = text[i] == "-"
        if negated:
            i += 1
        found = _FIELD.match(text, i)
        name = found.group()[:-1] if found else None
        if name is not None and name.lower() not in FIELDS:
            raise QueryError(f"unknown field {name!r} in {text[start:].split()[0]!r} (fields: "
                             f"{', '.join(FIELDS)}; quote a text that holds a colon)")
        i = found.end() if found else i
        if i < n and text[i] == '"':
            j, chars = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                chars.append(text[j])
                j += 1
            if j >= n:
                raise QueryError(f"unterminated quote in {text[start:]!r} (close it with \")")
            value, kind, flags, i = "".join(chars), "quoted", "", j + 1
        elif i < n and text[i] == "/":
            j = i + 1
            while j < n and text[j] != "/":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise QueryError(f"unterminated regular expression in {text[start:]!r} (close "
                                 "it with /; quote a text that starts with /)")
            k = j + 1
            while k < n and not text[k].isspace():
                k += 1
            value, kind, flags, i = text[i + 1:j], "regex", text[j + 1:k], k
            if flags not in ("", "i"):
                raise QueryError(f"unknown flags {flags!r} after /{value}/ (only i: any case; "
                                 f"quote a text that starts with /: \"{text[start:k]}\")")
        else:
            j = i
            while j < n and not text[j].isspace():
                j += 1
            value, kind, flags, i = text[i:j], "plain", "", j
        if i < n and not text[i].isspace():
            raise QueryError(f"expected a space after {text[start:i]!r}")
        out.append(_Word(negated, name, value, kind, flags, text[start:i]))
    return out


def _class_value(value: str) -> str:
    wanted = value.strip().lower().replace(" ", "_").replace("-", "_")
    if wanted in ANSWER_CLASSES:
        return wanted
    hits = [c for c in ANSWER_CLASSES if c.startswith(wanted)]
    if len(hits) == 1:
        return hits[0]
    what = "ambiguous" if hits else "unknown"
    return _raise(f"{what} class {value!r} (classes: {', '.join(ANSWER_CLASSES)})")


ROW_STATUSES: tuple[str, ...] = tuple(str(s) for s in RowStatus)
"""What ``status:`` takes: a row's status as shown."""


def _status_value(value: str) -> str:
    wanted = value.strip().lower()
    hits = [s for s in ROW_STATUSES if s.startswith(wanted)]
    if wanted in ROW_STATUSES or len(hits) == 1:
        return wanted if wanted in ROW_STATUSES else hits[0]
    what = "ambiguous" if hits else "unknown"
    return _raise(f"{what} status {value!r} (statuses: {', '.join(ROW_STATUSES)})")


def _raise(message: str) -> str:
    raise QueryError(message)


def _compile(pattern: str, flags: str, shown: str) -> regex.Pattern[str]:
    if not pattern:
        raise QueryError(f"empty regular expression in {shown!r}")
    try:
        return regex.compile(pattern, regex.V0 | (regex.IGNORECASE if "i" in flags else 0))
    except regex.error as e:
        raise QueryError(f"bad regular expression /{pattern}/: {e}") from None


def parse_query(text: str) -> Query:
    """Read a query (see the module's docstring).

    Raises:
        QueryError: a one-line message naming what is wrong (an unknown field or class, an
            empty value, an unterminated quote or regular expression, a bad regular expression).
    """
    terms: list[Term] = []
    for word in _words(text):
        name = "text" if word.field is None else word.field.lower()
        if not word.value and word.kind != "quoted":
            raise QueryError(f"{word.source!r} has no value"
                             + (f" (e.g. {word.source}x)" if word.field else ""))
        alternatives: tuple[Alternative, ...]
        if word.kind == "regex":
            alternatives = (_compile(word.value, word.flags, word.source),)
        else:
            parts = [word.value] if word.kind == "quoted" else word.value.split(",")
            if not all(parts) and word.kind != "quoted":
                raise QueryError(f"empty alternative in {word.source!r}")
            if name == "class":
                parts = [_class_value(p) for p in parts]
            elif name == "status":
                parts = [_status_value(p) for p in parts]
            alternatives = tuple(Needle.of(p) for p in parts)
        terms.append(Term(name, alternatives, word.negated, word.source))
    return Query(tuple(terms), text)


# -- matching ----------------------------------------------------------------------------------

def _hit(alternative: Alternative, value: str, *, whole: bool, budget: Budget) -> bool:
    if isinstance(alternative, Needle):
        if whole:
            return value.casefold() == alternative.text.casefold()
        # A literal search is linear in the text: it needs no time budget.
        return alternative.pattern.search(value, concurrent=True) is not None
    left = budget.left()
    if left <= 0:
        budget.gave_up += 1
        return False
    try:
        return alternative.search(value, timeout=left, concurrent=True) is not None
    except TimeoutError:
        budget.gave_up += 1
        return False


def _values(subject: Findable, name: str) -> Iterable[tuple[str, bool]]:
    """The subject's values for a field, each with whether a plain value must equal it whole."""
    if name == "model":
        yield subject.model, False
    elif name == "arm":
        yield subject.arm, True
    elif name == "label":
        for f in subject.facts:
            yield f.label, False
    elif name == "class":
        for f in subject.facts:
            yield f.answer_class, True
    elif name == "status":
        yield subject.status, True
    else:
        for t in subject.texts:
            yield t, False


def _term_holds(term: Term, subject: Findable, budget: Budget) -> bool:
    return any(_hit(a, value, whole=whole, budget=budget)
               for value, whole in _values(subject, term.field) for a in term.alternatives)


def _fact_holds(term: Term, fact: FactItem, budget: Budget) -> bool:
    value, whole = (fact.answer_class, True) if term.field == "class" else (fact.label, False)
    return any(_hit(a, value, whole=whole, budget=budget) for a in term.alternatives)


def matches(query: Query, subject: Findable, budget: Budget | None = None) -> bool:
    """Whether every term of the query holds for the subject."""
    budget = budget if budget is not None else Budget()
    joint = [t for t in query.terms if t.field in FACT_FIELDS and not t.negated]
    if joint and not any(all(_fact_holds(t, f, budget) for t in joint) for f in subject.facts):
        return False
    # Cheap fields first: a subject another term rules out never has its texts searched.
    rest = sorted((t for t in query.terms if t not in joint),
                  key=lambda t: (t.field == "text", t.uses_regex))
    return all(_term_holds(t, subject, budget) != t.negated for t in rest)


def find(query: Query, subjects: Sequence[Findable], *, budget_s: float = REGEX_BUDGET_S,
         cancelled: Callable[[], bool] = lambda: False) -> FindResult:
    """The subjects a query matches, under one time budget for its regular expressions.

    Args:
        query: a parsed query.
        subjects: what to search.
        budget_s: seconds regular expressions may take in all.
        cancelled: asked before each subject (a worker's cancellation); True stops the search.
    """
    if query.empty:
        return FindResult(tuple(range(len(subjects))), len(subjects))
    budget = Budget(budget_s)
    hits: list[int] = []
    for i, subject in enumerate(subjects):
        if cancelled():
            return FindResult(tuple(hits), len(subjects), budget.gave_up, cancelled=True)
        if matches(query, subject, budget):
            hits.append(i)
    return FindResult(tuple(hits), len(subjects), budget.gave_up)
