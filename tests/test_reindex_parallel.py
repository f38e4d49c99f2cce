"""``foldscope reindex`` spreads the recomputing over processes (issue 24 item 6) and writes
exactly what one process writes."""

from __future__ import annotations

import sqlite3

from conftest import copy_database, definition, run_sweep

from foldscope.engine import timelines
from foldscope.engine.store import Store

TABLES = {"folds": "row_id, fold_index, fact_status_json",
          "fact_histories": "*",
          "checks": "row_id, label, found, correct, classification, carrier_state, class_detail",
          "rows": "id, recall, correct, graded"}


def _dump(db) -> dict[str, list[tuple]]:
    with sqlite3.connect(db) as conn:
        return {t: conn.execute(f"SELECT {cols} FROM {t} ORDER BY 1, 2").fetchall()
                for t, cols in TABLES.items()}


def test_processes_write_what_one_process_writes(tmp_path, monkeypatch):
    db = tmp_path / "sweep.sqlite"
    run_sweep(db, definition(models=("sim/faithful", "sim/describer", "sim/gister"),
                             arms=("j", "q", "m", "o"), repeats=2))
    with sqlite3.connect(db) as conn:  # stale states, as an older build would have left them
        conn.execute("UPDATE folds SET fact_status_json='{}'")
        conn.execute("UPDATE checks SET classification='fabricated'")
    one, many = copy_database(db, tmp_path / "one.sqlite"), copy_database(db, tmp_path / "m.sqlite")
    monkeypatch.setattr(timelines, "REINDEX_BATCH", 3)
    monkeypatch.setattr(timelines, "REINDEX_PARALLEL_FROM", 1)
    seen: list[tuple[int, int]] = []
    with Store(one) as store:
        sequential = timelines.reindex(store, workers=1)
    with Store(many) as store:
        parallel = timelines.reindex(store, workers=2, progress=lambda d, t: seen.append((d, t)))
    assert parallel == sequential and parallel.rows == 24 and parallel.regraded == 24
    assert seen == [(i, 24) for i in range(1, 25)]
    assert _dump(many) == _dump(one) != _dump(db)
