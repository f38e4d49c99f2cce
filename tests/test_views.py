"""The screens' typed read models (engine.views): what each screen's worker reads, by name."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from conftest import definition, run_sweep
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.audit import StoredAudit
from foldscope.core.row import FoldRecord, RowRecord, StoredCheck
from foldscope.engine.store import Store, SweepRecord
from foldscope.engine.timelines import SweepForensics
from foldscope.engine.views import (
    CellChanges,
    read_cell_changes,
    read_picker,
    read_resume_state,
    read_review,
    read_study,
    read_survival,
)


def _sweep(db):
    return run_sweep(db, definition(models=("sim/garbler", "sim/faithful"), arms=("j", "q"),
                                    repeats=2))


def test_a_cell_read_is_typed_and_a_later_read_brings_only_what_changed(db):
    sweep_id = _sweep(db)
    first = read_cell_changes(db, sweep_id, "smoke", "sim/garbler", "q", need_facts=True)
    assert isinstance(first, CellChanges) and len(first.rows) == 2
    assert all(isinstance(r, RowRecord) and r.answer for r in first.rows)
    assert all(isinstance(f, FoldRecord) for _, folds in first.folds.values() for f in folds)
    assert all(isinstance(c, StoredCheck) for cs in first.checks.values() for c in cs)
    assert first.facts and first.seq == max(r.seq for r in first.rows)
    with Store(db, readonly=True) as store:
        for r in first.rows:
            assert first.folds[r.id] == (0, store.folds(r.id))
            assert first.checks[r.id] == store.checks(r.id)
    # Nothing changed since: nothing is read again, and the facts are not loaded twice.
    known = {rid: len(folds) for rid, (_, folds) in first.folds.items()}
    again = read_cell_changes(db, sweep_id, "smoke", "sim/garbler", "q", since=first.seq,
                              known=known)
    assert again.rows == [] and again.facts is None and again.seq == first.seq
    # A row whose verdict changes is read again; only the folds the reader lacks come back.
    from foldscope.core.fabrication import flag_refusal

    with Store(db) as store:
        row, check = next((r, c) for r in first.rows for c in store.checks(r.id)
                          if flag_refusal(c, "fabricated") is None)
        store.set_flag(check.id, True, author="ana")
    changed = read_cell_changes(db, sweep_id, "smoke", "sim/garbler", "q", since=first.seq,
                                known=known)
    assert [r.id for r in changed.rows] == [row.id]
    assert changed.folds[row.id] == (known[row.id], [])
    assert any(c.flagged for c in changed.checks[row.id])


def test_the_picker_resume_review_survival_and_study_models(db):
    sweep_id = _sweep(db)
    picker = read_picker(db)
    (summary,) = picker.sweeps
    assert summary.id == sweep_id and summary.rows_done == summary.rows_planned == 8
    assert picker.sessions == []
    state = read_resume_state(db, sweep_id)
    assert state is not None and (state.status, state.runner_pid) == ("done", None)
    assert read_resume_state(db, "no-such-sweep") is None
    review = read_review(db, sweep_id)
    assert review.values and all(v.answer_class in ("fabricated", "carried_corruption")
                                 for v in review.values)
    survival = read_survival(db, sweep_id)
    assert isinstance(survival, SweepForensics) and survival.scenarios == ("smoke",)
    study = read_study(db, sweep_id)
    assert [s.scenario for s in study.studies] == ["smoke"] and "smoke" in study.points


def test_store_sweep_records_are_typed_and_read_by_column_name(db):
    sweep_id = _sweep(db)
    with Store(db) as store:
        sweep = store.sweep(sweep_id)
        assert isinstance(sweep, SweepRecord) and sweep.simulated is True
        assert sweep.config["sweep"]["arms"] == ["j", "q"] and sweep.status == "done"
        (header,) = store.sweeps()
        assert (header.id, header.name, header.status) == (sweep.id, sweep.name, sweep.status)
        store.add_audit({"format": "claude-code", "compactions": [], "source": "s.jsonl"})
    # Columns reordered on disk (a table rebuilt in another order) read into the same records.
    with sqlite3.connect(db) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(rows)")]
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute(f"CREATE TABLE rows2 AS SELECT {', '.join(reversed(cols))} FROM rows")
        conn.execute("DROP TABLE rows")
        conn.execute("ALTER TABLE rows2 RENAME TO rows")
    with Store(db, readonly=True) as store:
        rows = store.rows(sweep_id)
        assert len(rows) == 8 and all(r.status == "done" and r.valid is True for r in rows)
        assert store.row(rows[0].id).answer
        (audit,) = store.audits()
        assert isinstance(audit, StoredAudit) and audit.document["source"] == "s.jsonl"


def test_a_fold_model_is_the_timeline_spans_and_changes_of_that_fold(db):
    from foldscope.core.forensics import fact_spans, fold_changes, timeline_upto
    from foldscope.core.row import stored_timeline
    from foldscope.engine.views import read_fold_model

    sweep_id = _sweep(db)
    cell = read_cell_changes(db, sweep_id, "smoke", "sim/garbler", "q", need_facts=True)
    row = cell.rows[0]
    folds = tuple(cell.folds[row.id][1])
    facts = tuple(cell.facts)
    whole = stored_timeline(folds, facts)
    for index in range(len(folds)):
        model = read_fold_model(folds, facts, index, row_id=row.id)
        assert model.fold is folds[index] and model.before is (folds[index - 1] if index else None)
        assert model.title.startswith(f"row {row.id} · fold {index + 1}/{len(folds)}")
        assert model.shown == timeline_upto(whole, index)
        assert model.spans == fact_spans(folds[index].carrier, facts)
        assert model.changes == fold_changes(whole.folds[index - 1] if index else None,
                                             whole.folds[index])
    # A timeline handed in is used as it is (a step through the same row's folds reuses it).
    again = read_fold_model(folds, facts, 0, timeline=model.timeline)
    assert again.timeline is model.timeline and "row" not in again.title.split(" · ")[0]


_TABLES = ("rows", "folds", "checks", "sweeps", "verdicts", "fact_histories")


def _everything(db, sweep_id):
    with Store(db, readonly=True) as store:
        rows = store.rows(sweep_id)
        return (store.sweep(sweep_id), store.sweeps(), rows, [store.row(r.id) for r in rows],
                [store.folds(r.id) for r in rows], [store.checks(r.id) for r in rows],
                list(store.sweep_checks(sweep_id)), store.verdicts(sweep_id),
                [store.fact_histories(r.id) for r in rows], store.changes(sweep_id, None))


@pytest.fixture(scope="module")
def flagged_sweep(tmp_path_factory):
    from foldscope.core.fabrication import flag_refusal

    db = tmp_path_factory.mktemp("order") / "sweep.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler",), arms=("q",), repeats=1))
    with Store(db) as store:
        check = next(c for r in store.rows(sweep_id) for c in store.checks(r.id)
                     if flag_refusal(c, "fabricated") is None)
        store.add_verdict(check.id, "fabricated", "by hand", author="ana")
    return db, sweep_id, _everything(db, sweep_id)


@settings(max_examples=8, deadline=None)
@given(st.randoms(use_true_random=False))
def test_records_read_the_same_whatever_order_the_tables_hold_their_columns(
        flagged_sweep, tmp_path_factory, rnd):
    from conftest import copy_database

    db, sweep_id, expected = flagged_sweep
    copy = copy_database(db, tmp_path_factory.mktemp("shuffled") / "sweep.sqlite")
    with sqlite3.connect(copy) as conn:
        conn.execute("PRAGMA foreign_keys=OFF")
        for table in _TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            rnd.shuffle(cols)
            conn.execute(f"CREATE TABLE shuffled AS SELECT {', '.join(cols)} FROM {table}")
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"ALTER TABLE shuffled RENAME TO {table}")
    assert _everything(copy, sweep_id) == expected


@settings(max_examples=10, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_decoders_find_each_field_by_its_column_name_in_any_select_order(flagged_sweep, rnd):
    from foldscope.core.row import FOLD_FIELDS, ROW_FIELDS
    from foldscope.engine.store.checks import _CHECK_FIELDS, _checks
    from foldscope.engine.store.rows import _JSON_FOLD_FIELDS, _folds, _rows

    db, sweep_id, _ = flagged_sweep
    with Store(db, readonly=True) as store:
        conn = store.db.conn
        (row,) = store.rows(sweep_id)
        for fields, decode, read in (
                (list(ROW_FIELDS), _rows, lambda: store.rows(sweep_id)),
                ([_JSON_FOLD_FIELDS.get(f, f) for f in FOLD_FIELDS], _folds,
                 lambda: store.folds(row.id)),
                (list(_CHECK_FIELDS), _checks, lambda: store.checks(row.id))):
            rnd.shuffle(fields)
            table = {_rows: "rows", _folds: "folds", _checks: "checks"}[decode]
            key = "sweep_id = ?" if table == "rows" else "row_id = ?"
            arg = sweep_id if table == "rows" else row.id
            got = decode(conn.execute(f"SELECT {', '.join(fields)} FROM {table} WHERE {key} "
                                      "ORDER BY id", [arg]))
            if table == "folds":  # the reply's body is in the blob table, by digest
                got = [dataclasses.replace(g, reply=e.reply) for g, e in zip(got, read())]
                assert all(g.reply for g in got)
            assert got == read()
