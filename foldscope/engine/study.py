"""The study's tables of one stored sweep: load typed rows, folds and checks, build the tables
(``core.study``) per scenario, and write them as JSON data, markdown or CSV."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from foldscope.core.cuts import GIST_FILL
from foldscope.core.errors import FoldscopeError, StoreError
from foldscope.core.evidence import fmt
from foldscope.core.fabrication import RowChecks
from foldscope.core.inference import ROW_THRESHOLD
from foldscope.core.study import (
    AT_CEILING_TOLERANCE,
    FillPoint,
    FoldMeasure,
    RowFolds,
    StudyRow,
    StudyTables,
    cell_text,
    fill_points,
    study_tables,
)
from foldscope.core.text import literal
from foldscope.engine.store import Store
from foldscope.engine.sweep import stored_definition


def fold_measures(store: Store, sweep_id: str) -> dict[int, list[FoldMeasure]]:
    """Every committed fold's measures of a sweep, by row id, in fold order (no carrier text)."""
    return store.fold_measures(sweep_id)


def iter_study_rows(store: Store, sweep_id: str) -> Iterator[StudyRow]:
    """A sweep's rows (execution order) with what the tables read of their folds and checks
    (``RowFolds``, ``RowChecks``), read a batch of rows at a time: the folds and checks of one
    batch are held, never the sweep's. Equal summaries are one object (a sweep's rows repeat
    the same few)."""
    shared: dict[Any, Any] = {}
    for rows in store.row_batches(sweep_id):
        ids = [r.id for r in rows]
        folds = store.rows_fold_measures(ids)
        checks = store.rows_checks(ids)
        for r in rows:
            row_folds = RowFolds.of(folds.get(r.id, ()))
            row_checks = RowChecks.of(checks.get(r.id, ()))
            yield StudyRow(r, shared.setdefault(row_folds, row_folds),
                           shared.setdefault(row_checks, row_checks))


def study_rows(store: Store, sweep_id: str) -> list[StudyRow]:
    """A sweep's rows (execution order) with their folds' measures and their checks
    (``iter_study_rows``)."""
    return list(iter_study_rows(store, sweep_id))


def sweep_study(store: Store, sweep_id: str, rows: list[StudyRow] | None = None,
                gist_fill: float = GIST_FILL) -> list[StudyTables]:
    """The study's tables of one sweep, one set per scenario (scenarios are never pooled).

    Args:
        store: the database.
        sweep_id: the sweep.
        rows: its rows when already read (``study_rows``).
        gist_fill: the failure-mode cut (``core.study.check_gist_fill``).

    Raises:
        StoreError: no such sweep.
        StatsError: a cut outside (0, 1).
    """
    sweep = store.sweep(sweep_id)
    if sweep is None:
        raise StoreError(f"{store.path}: no sweep '{sweep_id}'")
    definition = stored_definition(sweep.config)
    models, arms = list(definition.models), list(definition.arms)
    if rows is None:
        rows = study_rows(store, sweep_id)
    by_scenario: dict[str, list[StudyRow]] = {s: [] for s in definition.scenarios}
    for r in rows:
        by_scenario.setdefault(r.row.scenario, []).append(r)
    return [study_tables(group, models, arms, gist_fill)
            for group in by_scenario.values() if group]


def scenario_fill_points(rows: Iterable[StudyRow],
                         gist_fill: float = GIST_FILL) -> dict[str, list[FillPoint]]:
    """The fill-vs-recall points of a sweep's valid rows, by scenario."""
    by_scenario: dict[str, list[StudyRow]] = defaultdict(list)
    for r in rows:
        by_scenario[r.row.scenario].append(r)
    return {s: fill_points(group, gist_fill) for s, group in by_scenario.items()}


THRESHOLDS = {"row_recalled": ROW_THRESHOLD, "gist_fill": GIST_FILL,
              "at_ceiling_tolerance": AT_CEILING_TOLERANCE}
"""The rules' constants (``gist_fill`` at its default), reported with the tables."""


def study_json(studies: Iterable[StudyTables]) -> dict[str, Any]:
    """The ``study`` section of ``foldscope report --format json``; ``thresholds.gist_fill`` is
    the cut the tables used."""
    studies = list(studies)
    cut = studies[0].gist_fill if studies else GIST_FILL
    return {
        "thresholds": {**THRESHOLDS, "gist_fill": cut},
        "scenarios": [{
            "scenario": s.scenario,
            "notes": list(s.notes),
            "tables": {t.name: {"title": t.title, "columns": list(t.columns),
                                "rows": t.records(), "notes": list(t.notes)}
                       for t in s.tables},
        } for s in studies],
    }


def _md_cell(column: str, value: Any) -> str:
    # Model ids and scenario names are outside text: literal, one line, and no table breaks.
    return literal(cell_text(column, value), keep_newlines=False).replace("|", "\\|")


def study_markdown(studies: Iterable[StudyTables], header: str) -> str:
    """The tables as markdown: one section per scenario, a pipe table per study table."""
    lines = [f"# {literal(header, keep_newlines=False)}", ""]
    for s in studies:
        lines += [f"## Scenario {_md_cell('scenario', s.scenario)}", ""]
        lines += [f"> {literal(n, keep_newlines=False)}" for n in s.notes]
        if s.notes:
            lines.append("")
        for t in s.tables:
            lines += [f"### {t.title}", "",
                      "| " + " | ".join(t.columns) + " |",
                      "|" + "|".join("---" for _ in t.columns) + "|"]
            lines += ["| " + " | ".join(_md_cell(c, v) for c, v in zip(t.columns, row)) + " |"
                      for row in t.rows]
            if not t.rows:
                lines.append("| " + " | ".join("—" for _ in t.columns) + " |")
            lines.append("")
            lines += [f"_{literal(n, keep_newlines=False)}_" for n in t.notes]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def study_csv(studies: list[StudyTables]) -> dict[str, str]:
    """One CSV text per table name (``scenario`` first, then the table's columns), figures
    written as the evidence package writes them (``core.evidence.fmt``)."""
    names: list[str] = []
    columns: dict[str, tuple[str, ...]] = {}
    for s in studies:
        for t in s.tables:
            if t.name not in columns:
                names.append(t.name)
                columns[t.name] = t.columns
    out = {}
    for name in names:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["scenario", *columns[name]])
        for s in studies:
            table = s.table(name)
            for row in table.rows if table else ():
                writer.writerow([s.scenario, *(v if isinstance(v, str) else fmt(v) for v in row)])
        out[name] = buffer.getvalue()
    return out


def write_study_csv(studies: list[StudyTables], folder: str | Path) -> list[Path]:
    """Write one ``<table>.csv`` per table into a folder (created if needed).

    Raises:
        FoldscopeError: the folder cannot be created or written.
    """
    root = Path(folder)
    written = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        for name, text in study_csv(studies).items():
            path = root / f"{name}.csv"
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        raise FoldscopeError(f"--out {root}: cannot write the CSV files: {exc.strerror or exc}") from None
    return written
