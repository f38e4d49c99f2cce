"""Fabrication review: failing rows split by how they failed, how far an answer reached, the
rule every person's verdict obeys, the values to review, and agreement between the automatic
class and people's verdicts.

A researcher reports failing rows by row, not by check: a row that fabricates without a single
abstention is a different failure from one that says "not recorded" somewhere. Answer classes
come from ``core.answers.classify_fact``; validity from ``core.validity``; the threshold from
``core.inference.ROW_THRESHOLD``; kappa from ``core.stats.cohen_kappa``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from foldscope.core.answers import (
    ANSWER_CLASSES,
    NOTHING,
    Provenance,
    provenance,
    value_signatures,
)
from foldscope.core.cells import cell_key, enters_aggregates, group_cells
from foldscope.core.inference import ROW_THRESHOLD
from foldscope.core.row import Check, RowRecord
from foldscope.core.scenario import Fact
from foldscope.core.signatures import Signature
from foldscope.core.stats import Kappa, cohen_kappa

VERDICTS: tuple[str, ...] = ("fabricated", "not_fabricated", "unsure")
"""What a person can say about one answer value."""

CLEARED = "cleared"
"""A withdrawn flag (the answer table's ``f`` toggled off): the check has no verdict again."""

REVIEW_CLASSES: tuple[str, ...] = ("fabricated", "carried_corruption")
"""The answer classes listed for review: confident wrong values."""


# ---------------------------------------------------------------------------------------------
# Abstention, and the flag rule
# ---------------------------------------------------------------------------------------------


NO_ANSWER = "no_answer"
"""The count of answers that gave nothing for a label whose value the carrier had lost (class
``honest_abstention``, detail ``nothing``): counted beside the abstentions, never among them."""

ANSWER_COUNTS: tuple[str, ...] = (*ANSWER_CLASSES[:ANSWER_CLASSES.index("honest_abstention") + 1],
                                  NO_ANSWER,
                                  *ANSWER_CLASSES[ANSWER_CLASSES.index("honest_abstention") + 1:])
"""What per-class counts count (grid, report, study): the answer classes with ``no_answer``
beside ``honest_abstention``. Each check is counted once (:func:`counted_as`), so the counts add
up to the checks; ``honest_abstention`` then counts abstentions only."""


def gave_no_answer(classification: str, detail: str | None) -> bool:
    """Whether an answer gave nothing for the label (detail ``nothing``: never named it, named
    it with no value, or gave prose with no value of the fact's kind), whatever the carrier
    held (class ``honest_abstention`` or ``read_failure``)."""
    return (classification in ("honest_abstention", "read_failure")
            and detail == NOTHING)


def is_abstention(classification: str, detail: str | None) -> bool:
    """Whether an answer abstained (said it does not know): an honest abstention, or an
    abstention although the carrier held the value (a ``read_failure`` of sub-kind
    ``abstained``). An answer that gave nothing (:func:`gave_no_answer`) is no abstention."""
    if gave_no_answer(classification, detail):
        return False
    return (classification == "honest_abstention"
            or (classification == "read_failure" and detail == "abstained"))


def counted_as(classification: str, detail: str | None) -> str:
    """The count (one of :data:`ANSWER_COUNTS`) a check of this class and detail goes in: its
    class, except an ``honest_abstention`` that gave no answer, which is ``no_answer``. A
    ``read_failure`` stays one whatever the answer gave (the carrier held the value)."""
    if classification == "honest_abstention" and gave_no_answer(classification, detail):
        return NO_ANSWER
    return classification


def answer_counts(checks: Iterable[Check]) -> dict[str, int]:
    """How many checks go in each of :data:`ANSWER_COUNTS` (every key present)."""
    out = dict.fromkeys(ANSWER_COUNTS, 0)
    for c in checks:
        key = counted_as(c.classification, c.class_detail)
        out[key] = out.get(key, 0) + 1
    return out


def abstains(check: Check) -> bool:
    """Whether a check's answer abstained (:func:`is_abstention` on its class and detail)."""
    return is_abstention(check.classification, check.class_detail)


def flag_refusal(check: Check, verdict: str) -> str | None:
    """Why a person's verdict cannot be put on this answer, or None when it can.

    A verdict judges a value the answer gave: a correct answer, an abstention and an answer
    that gave nothing have none, whatever the verdict. Withdrawing a flag (``CLEARED``) is
    always allowed, so a flag set before this rule existed can be taken off.

    Args:
        check: the checked answer.
        verdict: one of :data:`VERDICTS`, or :data:`CLEARED`.

    Returns:
        One line saying why not, or None.
    """
    if verdict == CLEARED:
        return None
    if verdict not in VERDICTS:
        return f"unknown verdict {verdict!r} (one of {', '.join(VERDICTS)})"
    if check.classification == "correct":
        return f"{check.label}: the answer is correct; only a wrong value can be flagged"
    if abstains(check):
        return f"{check.label}: the answer abstained; an abstention gives no value to flag"
    if not (check.found or "").strip():
        return f"{check.label}: the answer gave nothing for this label; there is no value to flag"
    return None


def automatic_verdict(check: Check) -> str:
    """The automatic class read as a verdict: ``fabricated`` or ``not_fabricated``."""
    return "fabricated" if check.classification == "fabricated" else "not_fabricated"


# ---------------------------------------------------------------------------------------------
# How far an answer reached
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    """How far a recall answer got through the labels asked."""

    asked: int
    """Labels asked (the row's checks)."""
    reached: int
    """Labels asked up to and including the last one the answer bound a line to (a value, an
    abstention or an empty value): the items answered before the answer ends."""
    finish: str | None = None
    """The answer's stored finish reason (None: not stored, for rows from before it was)."""

    @property
    def stopped_early(self) -> bool:
        """The answer was cut off before it ended: its finish reason says so (``length`` at its
        budget, ``server_cut`` below it). An answer that stopped by itself did not stop early,
        however few labels it reached. Without a stored finish reason (older rows), an answer
        whose last ``asked - reached`` labels have no line at all reads as cut."""
        if self.finish is not None:
            return self.finish in CUT_FINISHES
        return self.reached < self.asked


CUT_FINISHES = frozenset({"length", "server_cut"})
"""Finish reasons of an answer cut off before it ended."""


def answer_reach(checks: Sequence[Check], finish: str | None = None) -> Reach:
    """How far an answer reached, from its checks in the order the labels were asked.

    An answer *stops early* when one or more labels at the end of the asked list have no line
    in it (``found`` is None); ``reached`` counts the labels up to the last one it bound. A
    label skipped in the middle is not a stop: the answer went on past it.

    Args:
        checks: the row's checks, in the order asked (the store keeps that order).

        finish: the answer's stored finish reason, when known.

    Returns:
        The reach (0 reached for an answer that bound nothing).
    """
    reached = max((i + 1 for i, c in enumerate(checks) if c.found is not None), default=0)
    return Reach(len(checks), reached, finish)


CheckKind = tuple[str, str, str | None]
"""What a check is counted by: its final carrier state, its answer class and the class's
detail (``Check.carrier_state``, ``classification``, ``class_detail``)."""


@dataclass(frozen=True, slots=True)
class RowChecks:
    """What every aggregate reads from one row's checks, without the checks: how many of each
    kind (in the order first asked), how many correct, flagged and unit-dropped, whether the
    answer abstained or fabricated anywhere, and how far it reached. A sweep's rows are
    summarised as they are read (a 50,000-row sweep has 700,000 checks), so no report holds
    them all; every count is the one its checks give (``answer_counts``, ``answer_reach``,
    ``abstains``)."""

    kinds: tuple[tuple[CheckKind, int], ...] = ()
    """Each kind of check with its count, in the order the kind is first asked."""
    checks: int = 0
    correct: int = 0
    flagged: int = 0
    unit_dropped: int = 0
    abstains: bool = False
    """Some check's answer abstained (:func:`abstains`)."""
    fabricates: bool = False
    """Some check's class is ``fabricated``."""
    reached: int = 0
    """``answer_reach(checks).reached``: labels asked up to the last one the answer bound."""

    @classmethod
    def of(cls, checks: Iterable[Check]) -> RowChecks:
        """Summarise one row's checks, in the order asked (a person's flag is read from stored
        checks, ``StoredCheck.flagged``; a bare ``Check`` has none)."""
        kinds: dict[CheckKind, int] = {}
        n = correct = unit_dropped = reached = flagged = 0
        abstained = fabricated = False
        for c in checks:
            n += 1
            key = (c.carrier_state, c.classification, c.class_detail)
            kinds[key] = kinds.get(key, 0) + 1
            correct += c.correct
            unit_dropped += c.unit_dropped
            flagged += bool(getattr(c, "flagged", False))
            if c.found is not None:
                reached = n
            abstained = abstained or abstains(c)
            fabricated = fabricated or c.classification == "fabricated"
        return cls(tuple(kinds.items()), n, correct, flagged, unit_dropped, abstained,
                   fabricated, reached)

    def __len__(self) -> int:
        return self.checks

    @property
    def counts(self) -> tuple[int, int]:
        """(checks, correct checks): what the ICC reads of the row (``core.stats.icc_counts``)."""
        return (self.checks, self.correct)

    def answer_counts(self) -> dict[str, int]:
        """How many checks go in each of :data:`ANSWER_COUNTS` (``answer_counts``)."""
        out = dict.fromkeys(ANSWER_COUNTS, 0)
        for (_, classification, detail), n in self.kinds:
            key = counted_as(classification, detail)
            out[key] = out.get(key, 0) + n
        return out

    def reach(self, finish: str | None = None) -> Reach:
        """``answer_reach`` of the checks."""
        return Reach(self.checks, self.reached, finish)


def row_checks(checks: Sequence[Check] | RowChecks) -> RowChecks:
    """A row's checks summarised (``RowChecks.of``), or the summary as it is."""
    return checks if isinstance(checks, RowChecks) else RowChecks.of(checks)


# ---------------------------------------------------------------------------------------------
# Failing rows: fabricate-never-abstain vs abstain-somewhere
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailingRows:
    """How one (scenario, model, arm) cell's failing rows failed."""

    scenario: str
    model: str
    arm: str
    valid_rows: int
    """Valid rows with a recall (``core.cells.valid_rows``)."""
    failing_rows: int
    """Valid rows with recall below ``ROW_THRESHOLD``."""
    fabricate_never_abstain: int
    """Failing rows with a ``fabricated`` answer and no abstention anywhere in the answer."""
    abstain_somewhere: int
    """Failing rows with at least one abstention (:func:`abstains`)."""
    neither: int
    """Failing rows with neither (wrong in other ways: read failures, corruption, hedging)."""
    stopped_early: int
    """Failing rows whose answer stopped early (:func:`answer_reach`)."""
    items_reached: tuple[int, ...]
    """For each failing row that stopped early: how many labels it reached (ascending)."""
    items_asked: int
    """Labels asked per row (the most any row of the cell was asked)."""


def failing_rows(rows: Iterable[tuple[RowRecord, Sequence[Check] | RowChecks]]
                 ) -> list[FailingRows]:
    """Split each cell's failing rows into those that fabricate without abstaining anywhere and
    those that abstain somewhere, and say how far answers that stopped early reached.

    Args:
        rows: each row with its checks (in the order asked) or their summary (``RowChecks``),
            in plan order.

    Returns:
        One entry per (scenario, model, arm), in the order cells are first seen.
    """
    grouped = group_cells(((r, row_checks(c)) for r, c in rows), lambda rc: cell_key(rc[0]))
    out = []
    for (scenario, model, arm), group in grouped.items():
        valid = [(r, c) for r, c in group if enters_aggregates(r) and r.recall is not None]
        failing = [(r, c) for r, c in valid if r.recall is not None and r.recall < ROW_THRESHOLD]
        fabricating = abstaining = 0
        reached: list[int] = []
        for row, checks in failing:
            abstained = checks.abstains
            abstaining += abstained
            fabricating += not abstained and checks.fabricates
            reach = checks.reach(row.answer_finish)
            if reach.stopped_early:
                reached.append(reach.reached)
        out.append(FailingRows(
            scenario, model, arm, len(valid), len(failing), fabricating, abstaining,
            len(failing) - fabricating - abstaining, len(reached), tuple(sorted(reached)),
            max((len(c) for _, c in group), default=0)))
    return out


# ---------------------------------------------------------------------------------------------
# Values to review, people's verdicts, agreement
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HumanVerdict:
    """A person's verdict on one checked answer, as stored (the latest of its history)."""

    id: int
    check_id: int
    verdict: str
    """One of :data:`VERDICTS` (a withdrawn flag is no verdict)."""
    reason: str | None
    author: str
    created_at: float


@dataclass(frozen=True)
class ReviewValue:
    """One confident wrong value to review, with what the automatic classifier said of it."""

    check_id: int
    row_id: int
    scenario: str
    model: str
    arm: str
    repeat: int
    label: str
    planted: str
    given: str
    answer_class: str
    """``fabricated`` or ``carried_corruption`` (:data:`REVIEW_CLASSES`)."""
    carrier_state: str
    provenance: Provenance | None
    signatures: tuple[str, ...]
    final_fold: int
    """The row's last fold (0-based): its carrier is what the answer was given from."""
    human: HumanVerdict | None = None


def trace_value(check: Check, facts: Sequence[Fact], carriers: Sequence[str],
                chunks: Sequence[str], kind: str | None = None,
                rules: Sequence[Signature] | None = None
                ) -> tuple[Provenance | None, tuple[str, ...]]:
    """Where a checked wrong value came from and which stock-value signatures it hits.

    Args:
        check: the checked answer (a wrong value).
        facts: the scenario's planted facts and decoys.
        carriers: the row's carriers, fold 0 first.
        chunks: the scenario's chunk texts.
        kind: the fact's kind.
        rules: the signatures (default: the shipped ones).

    Returns:
        The provenance (None for an empty value) and the signature rule names.
    """
    found = check.found or ""
    return (provenance(found, check.label, facts, carriers, chunks),
            value_signatures(found, kind, rules))


@dataclass(frozen=True)
class FlagAgreement:
    """Agreement between the automatic class and people's verdicts on the reviewed values."""

    reviewed: int
    """Checks with a current verdict."""
    unsure: int
    """Of those, marked unsure: left out of kappa."""
    kappa: Kappa
    """Automatic (fabricated or not) × human (fabricated or not) over the rest."""


def flag_agreement(judged: Iterable[tuple[Check, str]]) -> FlagAgreement:
    """Cohen's kappa between the automatic verdict and a person's, over checks both judged.

    Args:
        judged: each reviewed check with its current human verdict (one of :data:`VERDICTS`).

    Returns:
        The agreement; ``unsure`` verdicts are counted but not compared.
    """
    items = list(judged)
    decided = [(automatic_verdict(c), v) for c, v in items if v != "unsure"]
    return FlagAgreement(len(items), len(items) - len(decided), cohen_kappa(decided))
