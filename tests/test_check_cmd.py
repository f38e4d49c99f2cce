"""``foldscope check``: SQLite's integrity check and foldscope's invariants, each problem injected
into a real database; exit 0 clean, 1 on a problem, 2 on bad input."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main


@pytest.fixture(scope="module")
def clean_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("check") / "clean.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("j", "q")))
    return db


@pytest.fixture
def db(clean_db, tmp_path):
    copy = tmp_path / "copy.sqlite"
    copy.write_bytes(clean_db.read_bytes())
    return copy


def _report(db, capsys) -> tuple[int, dict]:
    code = main(["check", "--db", str(db), "--json"])
    return code, json.loads(capsys.readouterr().out)


def _failed(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"] if not c["ok"]}


def test_clean_database_passes_every_check(db, capsys):
    assert main(["check", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("clean") and "FAIL" not in out
    code, report = _report(db, capsys)
    assert code == 0 and report["clean"] is True and report["problems"] == 0
    assert len(report["checks"]) >= 9


@pytest.mark.parametrize("sql, check", [
    ("INSERT INTO folds (row_id, fold_index, first_chunk, last_chunk, reply, carrier, "
     "carrier_chars, carrier_tokens_est, clipped_chars, headings_carried, parse_status, "
     "finish_reason, est_prompt_tokens, latency_s, created_at) "
     "VALUES (9999, 0, 0, 0, '', '', 0, 0, 0, 0, 'ok', 'stop', 0, 0, 0)",
     "no orphan folds (every fold's row exists)"),
    ("INSERT INTO checks (row_id, label, expected, correct, abstained, unit_dropped, "
     "classification, in_carrier) VALUES (9999, 'x', 'y', 0, 0, 0, 'wrong', 0)",
     "no orphan checks (every check's row exists)"),
    ("UPDATE rows SET folds_done = folds_done + 1 WHERE id = 1",
     "each row's folds_done equals its folds, indexed 0..n-1"),
    ("DELETE FROM folds WHERE row_id = 1 AND fold_index = 0",
     "each row's folds_done equals its folds, indexed 0..n-1"),
    ("DELETE FROM checks WHERE row_id = 1",
     "done rows have an answer and one check per graded fact"),
    ("UPDATE rows SET answer = NULL WHERE id = 2",
     "done rows have an answer and one check per graded fact"),
    ("UPDATE rows SET correct = correct + 1 WHERE id = 1",
     "done rows' correct count equals their correct checks"),
    ("UPDATE rows SET sweep_id = 'gone' WHERE id = 2",
     "no orphan rows (every row's sweep exists)"),
    ("UPDATE rows SET status = 'running' WHERE id = 1",
     "sweep row counts agree with their definitions and statuses"),
])
def test_each_broken_invariant_is_found(db, capsys, sql, check):
    with sqlite3.connect(db) as conn:
        conn.execute(sql)
    code, report = _report(db, capsys)
    assert code == 1 and report["clean"] is False
    failed = _failed(report)
    assert check in failed, failed
    assert failed[check]["count"] >= 1 and failed[check]["examples"]
    assert main(["check", "--db", str(db)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL  {check}" in out and "problem" in out.splitlines()[-1]


def test_a_missing_row_is_a_count_disagreement(db, capsys):
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM checks WHERE row_id = 2")
        conn.execute("DELETE FROM folds WHERE row_id = 2")
        conn.execute("DELETE FROM rows WHERE id = 2")
    code, report = _report(db, capsys)
    assert code == 1
    failed = _failed(report)["sweep row counts agree with their definitions and statuses"]
    assert "plans 2 rows, 1 stored" in failed["examples"][0]


def test_corrupt_page_is_reported_not_raised(db, capsys):
    with sqlite3.connect(db) as conn:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='folds'").fetchone()[0]
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page)
        fh.write(b"\xa5" * page)
    code, report = _report(db, capsys)
    assert code == 1
    assert "SQLite integrity_check" in _failed(report)
    assert capsys.readouterr().err == ""


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"definitely not sqlite " * 200)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    for path, needle in ((tmp_path / "missing.sqlite", "no such database"),
                         (tmp_path, "not a file"), (junk, "not an SQLite database"),
                         (other, "not a foldscope database")):
        assert main(["check", "--db", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, err


def test_every_broken_record_is_counted_and_a_few_shown(db, capsys, monkeypatch):
    # Records breaking an invariant stream past in batches: all are counted, five shown,
    # whatever the batch (a broken 50,000-row database is never held).
    from foldscope.engine import integrity

    with sqlite3.connect(db) as conn:
        conn.executemany(
            "INSERT INTO checks (row_id, label, expected, correct, abstained, unit_dropped, "
            "classification, in_carrier) VALUES (?, 'x', 'y', 0, 0, 0, 'wrong', 0)",
            [(9000 + i,) for i in range(23)])
    for batch in (1, 4, 1000):
        monkeypatch.setattr(integrity, "INVARIANT_BATCH", batch)
        _, report = _report(db, capsys)
        failed = _failed(report)["no orphan checks (every check's row exists)"]
        assert failed["count"] == 23 and len(failed["examples"]) == integrity.EXAMPLES
        assert failed["examples"][0].startswith("check ") or "9000" in failed["examples"][0]
