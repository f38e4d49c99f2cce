"""Typed read models, one per screen, each built by one engine function that a screen's worker
calls: the UI never opens the store, and every record it receives has named fields.

The screens and their models:

- sweep grid: ``engine.live.LiveSweep.poll`` → ``engine.live.LiveView`` (changes since the last
  poll);
- sweep picker: ``read_picker`` → ``PickerModel`` (and ``read_resume_state`` for ``R``);
- cell: ``read_cell_changes`` → ``CellChanges`` (rows, their new folds and checks);
- fold: ``read_fold_model`` → ``FoldModel`` (from the cell's records, in the inspector's
  worker, which then lays its panes out);
- review (fabrication): ``read_review`` → ``ReviewModel`` (and ``read_row_texts`` for a filter
  over the values' rows' answers and carriers);
- compare (two rows side by side): ``read_compare`` → ``engine.compare.ComparePair``;
- survival: ``read_survival`` → ``engine.timelines.SweepForensics``;
- study: ``read_study`` → ``StudyModel``;
- session audit: ``read_audit_view`` → ``core.audit_view.AuditView``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from foldscope.core.audit import StoredAudit
from foldscope.core.audit_view import AuditView, audit_view
from foldscope.core.carrier import carried_sections
from foldscope.core.fabrication import FailingRows, ReviewValue
from foldscope.core.forensics import (
    FactSpan,
    FoldChanges,
    PlantedFact,
    Timeline,
    display_order,
    fact_spans,
    fold_changes,
    timeline_upto,
)
from foldscope.core.row import FoldRecord, RowRecord, StoredCheck, stored_timeline
from foldscope.core.scenario import Fact
from foldscope.core.sections import SECTIONS
from foldscope.core.signatures import Signature
from foldscope.core.study import FillPoint, StudyTables
from foldscope.core.text import literal
from foldscope.engine.compare import ComparePair, read_pair
from foldscope.engine.listing import SweepSummary, list_sweeps, runner_pid
from foldscope.engine.loader import load_scenario
from foldscope.engine.review import AgreementBasis, failing_row_table, review_values
from foldscope.engine.store import ROW_DONE, Store
from foldscope.engine.study import scenario_fill_points, study_rows, sweep_study
from foldscope.engine.timelines import SweepForensics, sweep_forensics


@dataclass(frozen=True)
class PickerModel:
    """What the sweep picker lists: every sweep at a glance and the stored session audits."""

    sweeps: list[SweepSummary]
    sessions: list[StoredAudit] = field(default_factory=list)


def read_picker(db_path: str | Path) -> PickerModel:
    """Every sweep's summary (newest first) and every stored session audit."""
    with Store(db_path, readonly=True) as store:
        return PickerModel(list_sweeps(store), store.audits())


@dataclass(frozen=True)
class ResumeState:
    """Whether a sweep can be resumed here: its status as a reader shows it, and the live
    process running it, if any."""

    status: str
    runner_pid: int | None


def read_resume_state(db_path: str | Path, sweep_id: str) -> ResumeState | None:
    """A sweep's resumable state, or None when the database has no such sweep."""
    with Store(db_path, readonly=True) as store:
        sweep = store.sweep(sweep_id)
        if sweep is None:
            return None
        return ResumeState(store.live_status(sweep), runner_pid(sweep))


@dataclass(frozen=True)
class CellChanges:
    """What changed in one cell since a reader's last read."""

    rows: list[RowRecord]
    """The rows changed since (all of them on a first read), in plan order, with answers."""
    folds: dict[int, tuple[int, list[FoldRecord]]]
    """Each changed row's folds from the index given (the ones the reader lacks) on."""
    checks: dict[int, list[StoredCheck]]
    """Each changed row's checks (none until it is done)."""
    facts: list[Fact] | None
    """The scenario's facts in display order, when asked for (a first read), else None."""
    seq: int
    """The change sequence read up to (the next read's ``since``)."""


def read_cell_changes(db_path: str | Path, sweep_id: str, scenario: str | None, model: str,
                      arm: str, *, since: int | None = None,
                      known: Mapping[int, int] | None = None,
                      need_facts: bool = False) -> CellChanges:
    """Read a cell's rows changed after change sequence ``since``, their new folds and checks.

    Args:
        db_path: the database.
        sweep_id: the sweep.
        scenario: the cell's scenario (None: every scenario of the model × arm).
        model: the cell's model.
        arm: the cell's arm.
        since: the reader's last change sequence (None: read everything).
        known: how many folds the reader holds of each row (only later ones are read; a row
            reset for a retry is read from its first fold again).
        need_facts: also load the scenario's facts (once per screen, not on every poll).

    Returns:
        The changes.
    """
    known = known or {}
    with Store(db_path, readonly=True) as store:
        rows = store.cell_rows(sweep_id, scenario, model, arm, since=since)
        folds: dict[int, tuple[int, list[FoldRecord]]] = {}
        checks: dict[int, list[StoredCheck]] = {}
        for r in rows:
            start = known.get(r.id, 0)
            if r.folds_done < start:
                start = 0  # the row was reset for a retry: its folds start over
            folds[r.id] = (start, store.folds(r.id, start=start))
            checks[r.id] = store.checks(r.id) if r.status == ROW_DONE else []
    facts = None
    if need_facts and rows:  # the scenario is loaded once, never on a later poll
        facts = display_order(load_scenario(rows[0].scenario).facts)
    return CellChanges(rows, folds, checks, facts, max([since or 0, *(r.seq for r in rows)]))


@dataclass(frozen=True)
class FoldModel:
    """What the fold inspector shows of fold ``index`` of one row, before any layout."""

    index: int
    fold: FoldRecord
    before: FoldRecord | None
    """The fold before it (None for the first): the diff's other side."""
    title: str
    """The fold's measures on one line (``fold_measures``), the row named when known."""
    timeline: Timeline
    """The row's whole timeline (a step through the same row's folds reuses it)."""
    shown: Timeline
    """The timeline as it stood after this fold (``core.forensics.timeline_upto``)."""
    spans: list[FactSpan]
    """Every planted fact located in the fold's carrier."""
    changes: FoldChanges
    """What changed in the facts' states from the fold before."""


def read_fold_model(folds: tuple[FoldRecord, ...], facts: tuple[PlantedFact, ...], index: int, *,
                    row_id: int | None = None, timeline: Timeline | None = None) -> FoldModel:
    """Fold ``index``'s model: the row's timeline (``timeline`` when the caller holds the one
    built from these folds), the timeline at that fold, the carrier's fact spans and the fold's
    changes (the science is core's; this puts it together for one screen).

    Args:
        folds: the row's committed folds in order.
        facts: the scenario's planted facts.
        index: the fold shown (0-based).
        row_id: the row's id, named in the title.
        timeline: the row's timeline from these same folds, if already built.

    Returns:
        The model.
    """
    if timeline is None:
        timeline = stored_timeline(folds, facts)
    fold = folds[index]
    title = fold_measures(fold, len(folds))
    if row_id is not None:
        title = f"row {row_id} · {title}"
    return FoldModel(
        index, fold, folds[index - 1] if index > 0 else None, title, timeline,
        timeline_upto(timeline, index), fact_spans(fold.carrier, facts),
        fold_changes(timeline.folds[index - 1] if index > 0 else None, timeline.folds[index]))


def fold_measures(fold: FoldRecord, folds: int) -> str:
    """One line of a fold's stored measures: chunks, how many headings arrived (naming the
    missing ones), fill of the declared ceiling, carried and clipped characters, finish reason,
    parse status and recovery; with the row id before it, one line at 160 columns and two at
    80 for a usual fold."""
    have = {s.key for s in carried_sections(fold.carrier)}
    missing = [s.heading.split()[0].lower() for s in SECTIONS if s.key not in have]
    headings = f"headings {len(have)}/{len(SECTIONS)}" + (
        f" (no {', '.join(missing)})" if missing else "")
    fill = ("no ceiling" if fold.fill_fraction is None
            else f"fill {fold.fill_fraction:.0%}")
    parts = [f"fold {fold.fold_index + 1}/{folds}",
             f"chunks {fold.first_chunk + 1}–{fold.last_chunk + 1}"
             + (" (catch-up)" if fold.catch_up else ""),
             headings, fill,
             f"{fold.carrier_chars:,} chars carried, {fold.clipped_chars:,} clipped",
             f"finish {fold.finish_reason}", f"parse {fold.parse_status}"]
    if fold.recovery:
        parts.append(f"recovery {fold.recovery}")
    return literal(" · ".join(parts), keep_newlines=False)


@dataclass(frozen=True)
class ReviewModel:
    """What the fabrication review reads: how each cell's failing rows failed, the values to
    review (traced) and what the agreement between people and classes is computed from."""

    failing: list[FailingRows]
    values: list[ReviewValue]
    agreement: AgreementBasis


def read_review(db_path: str | Path, sweep_id: str,
                rules: tuple[Signature, ...] | None = None) -> ReviewModel:
    """The review's failing-row table, values and agreement basis of one sweep."""
    with Store(db_path, readonly=True) as store:
        return ReviewModel(failing_row_table(store, sweep_id), review_values(store, sweep_id, rules),
                           AgreementBasis.read(store, sweep_id))


def read_row_texts(db_path: str | Path, row_ids: list[int],
                   cancelled: Callable[[], bool] = lambda: False) -> dict[int, tuple[str, ...]]:
    """Each row's answer and every fold's carrier (fold 1 first), for a filter's text terms
    (``core.find``); stops early (returning what it read) once ``cancelled()`` holds."""
    out: dict[int, tuple[str, ...]] = {}
    with Store(db_path, readonly=True) as store:
        for row_id in row_ids:
            if cancelled():
                break
            row = store.row(row_id)
            answer = (row.answer or "") if row is not None else ""
            out[row_id] = (answer, *(f.carrier for f in store.folds(row_id)))
    return out


def read_compare(db_path: str | Path, sweep_id: str, row_a: int,
                 row_b: int | None = None) -> ComparePair:
    """Two rows for the compare screen (``engine.compare.read_pair``: None pairs row A with
    its counterpart under the other arm)."""
    with Store(db_path, readonly=True) as store:
        return read_pair(store, sweep_id, row_a, row_b)


def read_survival(db_path: str | Path, sweep_id: str) -> SweepForensics:
    """The survival screen's curves and death tables (``engine.timelines.sweep_forensics``)."""
    with Store(db_path, readonly=True) as store:
        return sweep_forensics(store, sweep_id)


@dataclass(frozen=True)
class StudyModel:
    """The study screen's tables per scenario and its fill-vs-recall points per scenario."""

    studies: list[StudyTables]
    points: dict[str, list[FillPoint]]


def read_study(db_path: str | Path, sweep_id: str) -> StudyModel:
    """A sweep's study tables and fill points, from one read of its rows, folds and checks."""
    with Store(db_path, readonly=True) as store:
        rows = study_rows(store, sweep_id)
        studies = sweep_study(store, sweep_id, rows)
    return StudyModel(studies, scenario_fill_points(rows))


def read_audit_view(stored: StoredAudit) -> AuditView:
    """A stored session audit read into the audit screen's records.

    Raises:
        ConfigError: the stored document is malformed (one line).
    """
    return replace(audit_view(stored.document), stored_as=stored.id)
