"""The single validity rule: whether a row may enter any aggregate, with a reason code.

What the rule deliberately does *not* do: it never invalidates a row, nor offers it for retry,
because of the arm's own behaviour. Schema parse failures and folds that stopped on
``finish_reason == "length"`` are what the arm did to the carrier; dropping or re-running those
rows would select for the runs where the arm happened to behave, and bias every comparison in
its favour. Such rows are valid data: their counts travel on ``RowFacts`` so reports can show them.
Only the harness's failures (the infrastructure) are retried.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from foldscope.core.status import OPEN_ROW_STATUSES, STORED_ROW_STATUSES, RowStatus

STATUSES: tuple[str, ...] = tuple(s.value for s in STORED_ROW_STATUSES)
"""Every row status the store records (``core.status``)."""

OK = "ok"
"""Valid: finished, answered, no infrastructure fault (parse failures and length stops allowed)."""
INCOMPLETE = "incomplete"
"""Invalid, not retryable: planned or still running; it will get its own verdict when it ends."""
INFRA_FAULT = "infra_fault"
"""Invalid and retryable: transport error, timeout, 429/5xx retries exhausted, and the like."""
REQUEST_REJECTED = "request_rejected"
"""Invalid, not retryable: the endpoint refused the harness's request (a 4xx other than 429, a
reply the client could not use). Sending it again would be refused again: find the culprit
parameter (``foldscope probe``) before re-running."""
FAILED = "failed"
"""Invalid, not retryable: failed with no infrastructure cause recorded. A human should look
before it is re-run: automatic retries of an unexplained failure can loop."""
CATCH_UP_DISTRIBUTED = "catch_up_distributed"
"""Invalid, not retryable: a fold took several chunks at once in a distributed-facts scenario,
so the row answers a different question (facts arrived together, not over several folds)."""
NO_ANSWER = "no_answer"
"""Invalid, not retryable: finished, but no recall answer was recorded (an empty answer text is
an answer; this is its absence), so there is nothing to grade."""

REASONS: tuple[str, ...] = (OK, INCOMPLETE, INFRA_FAULT, REQUEST_REJECTED, FAILED,
                            CATCH_UP_DISTRIBUTED, NO_ANSWER)
"""Every reason code ``row_validity`` returns, in the order its rules are checked."""


@dataclass(frozen=True)
class RowFacts:
    """What the validity rule needs to know about one row."""

    status: str
    """One of ``STATUSES``."""
    infra_error: str | None = None
    """The infrastructure fault that ended the row, if any (e.g. ``"timeout"``, ``"http 503"``)."""
    parse_failures: int = 0
    """Folds whose reply did not parse against the arm's schema (arm behaviour: recorded only)."""
    length_stops: int = 0
    """Folds that ended with ``finish_reason == "length"`` (arm behaviour: recorded only)."""
    catch_up: bool = False
    """At least one fold took several chunks at once."""
    scenario_distributed: bool = True
    """The scenario spreads its graded facts over several chunks."""
    answered: bool = False
    """A recall answer was recorded."""
    rejected: bool = False
    """A failed row ended because the endpoint refused the request (not the infrastructure)."""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown row status {self.status!r}; expected one of {STATUSES}")
        if self.parse_failures < 0 or self.length_stops < 0:
            raise ValueError("parse_failures and length_stops cannot be negative")


@dataclass(frozen=True)
class Validity:
    """The verdict on one row."""

    valid: bool
    reason: str
    """One of ``REASONS``."""
    retryable: bool
    """Re-running the row could give a valid one (only infrastructure faults)."""


def row_validity(row: RowFacts) -> Validity:
    """Decide whether a row may enter aggregates.

    Rules, first match wins: not finished → ``incomplete``; an infrastructure fault →
    ``infra_fault`` (retryable); failed on a refused request → ``request_rejected``; failed
    otherwise → ``failed``; catch-up in a distributed
    scenario → ``catch_up_distributed``; no recall answer → ``no_answer``; else ``ok``.
    Parse failures and length stops never change the verdict (see the module docstring).

    Args:
        row: the row's facts.

    Returns:
        The verdict.
    """
    if row.status in OPEN_ROW_STATUSES:
        return Validity(False, INCOMPLETE, False)
    if row.infra_error:
        return Validity(False, INFRA_FAULT, True)
    if row.status == RowStatus.FAILED:
        return Validity(False, REQUEST_REJECTED if row.rejected else FAILED, False)
    if row.catch_up and row.scenario_distributed:
        return Validity(False, CATCH_UP_DISTRIBUTED, False)
    if not row.answered:
        return Validity(False, NO_ANSWER, False)
    return Validity(True, OK, False)


T = TypeVar("T")

Judged = RowFacts | Validity
"""What a row maps to for the filters: its facts (judged here) or the verdict stored with it."""


def verdict_of(judged: Judged) -> Validity:
    """A row's verdict: judged now from its facts, or the stored one as it is."""
    return judged if isinstance(judged, Validity) else row_validity(judged)


def aggregate_filter(rows: Iterable[T], facts: Callable[[T], Judged] | None = None) -> list[T]:
    """Keep the rows that may enter an aggregate; every aggregate goes through here.

    Args:
        rows: rows of any type.
        facts: maps a row to its ``RowFacts`` or to its stored ``Validity``; omit when the rows
            are ``RowFacts`` themselves.

    Returns:
        The valid rows, in their original order.
    """
    to_facts = facts or _identity
    return [row for row in rows if verdict_of(to_facts(row)).valid]


def validity_counts(rows: Iterable[T],
                    facts: Callable[[T], Judged] | None = None) -> Counter[str]:
    """Count rows by validity reason, for the "n valid / n excluded because ..." line of a report.

    Args:
        rows: rows of any type.
        facts: maps a row to its ``RowFacts`` or to its stored ``Validity``; omit when the rows
            are ``RowFacts`` themselves.

    Returns:
        ``Counter({reason: rows})``.
    """
    to_facts = facts or _identity
    return Counter(verdict_of(to_facts(row)).reason for row in rows)


def _identity(row: object) -> RowFacts:
    if not isinstance(row, RowFacts):
        raise TypeError("rows are not RowFacts: pass facts= to map a row to its RowFacts")
    return row
