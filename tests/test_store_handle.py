"""The store's database handle: lone writes commit, failures leave no transaction open, atomic
blocks commit, roll back and nest (the behaviour the store had through sqlite_utils)."""

from __future__ import annotations

import sqlite3

import pytest
import sqlite_utils
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.engine.store.handle import Database, first_keyword


def _pair(tmp_path, name):
    path = tmp_path / name
    db = Database(sqlite3.connect(str(path)))
    db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT NOT NULL)")
    return db, sqlite3.connect(str(path))


def _rows(other):
    return other.execute("SELECT x, y FROM t ORDER BY x").fetchall()


def test_a_lone_write_is_committed_and_a_failed_one_leaves_no_transaction(tmp_path):
    db, other = _pair(tmp_path, "a.sqlite")
    db.execute("INSERT INTO t VALUES (?, ?)", [1, "a"])
    assert not db.conn.in_transaction and _rows(other) == [(1, "a")]
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO t VALUES (1, 'again')")
    assert not db.conn.in_transaction
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1,)
    db.execute("BEGIN")  # transaction control is left to the caller
    assert db.conn.in_transaction
    db.execute("INSERT INTO t VALUES (2, 'b')")
    assert _rows(other) == [(1, "a")]
    db.execute("COMMIT")
    assert _rows(other) == [(1, "a"), (2, "b")]
    assert db.table_names() == ["t"]


def test_atomic_commits_rolls_back_and_nests(tmp_path):
    db, other = _pair(tmp_path, "b.sqlite")
    with db.atomic():
        db.execute("INSERT INTO t VALUES (1, 'a')")
        with pytest.raises(ValueError), db.atomic():
            db.execute("INSERT INTO t VALUES (2, 'b')")
            raise ValueError("inner")
        with db.atomic():
            db.execute("INSERT INTO t VALUES (3, 'c')")
        assert _rows(other) == []  # nothing is visible before the outer block ends
    assert _rows(other) == [(1, "a"), (3, "c")]
    with pytest.raises(KeyError), db.atomic():
        db.execute("INSERT INTO t VALUES (4, 'd')")
        raise KeyError("outer")
    assert not db.conn.in_transaction and _rows(other) == [(1, "a"), (3, "c")]


@pytest.mark.parametrize(("sql", "word"), [
    ("  begin immediate", "BEGIN"), ("\ufeff;; -- note\nCOMMIT", "COMMIT"),
    ("/* a\n b */ release sp", "RELEASE"), ("-- only a comment", ""), ("/* open", ""),
    ("insert into t values (1)", "INSERT"), ("", "")])
def test_first_keyword(sql, word):
    assert first_keyword(sql) == word


_STEPS = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 4)),
    st.tuples(st.just("select"), st.just(0)),
    st.tuples(st.just("atomic"), st.booleans()),
    st.tuples(st.just("bad"), st.just(0))), max_size=10)


def _play(db, steps):
    log = []
    for kind, arg in steps:
        try:
            if kind == "insert":
                db.execute("INSERT INTO t VALUES (?, 'v')", [arg])
            elif kind == "select":
                log.append(db.execute("SELECT count(*) FROM t").fetchone())
            elif kind == "atomic":
                with db.atomic():
                    db.execute("INSERT INTO t VALUES (?, 'w')", [10 + len(log)])
                    if arg:
                        raise RuntimeError("roll back")
            else:
                db.execute("INSERT INTO nowhere VALUES (1)")
        except (sqlite3.Error, RuntimeError) as exc:
            log.append(type(exc).__name__)
        log.append(db.conn.in_transaction)
    return log


@settings(max_examples=60, deadline=None)
@given(_STEPS)
def test_the_handle_does_what_sqlite_utils_did(steps):
    ours, theirs = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    for conn in (ours, theirs):
        conn.execute("CREATE TABLE t (x INTEGER PRIMARY KEY, y TEXT NOT NULL)")
    assert _play(Database(ours), steps) == _play(
        sqlite_utils.Database(theirs, execute_plugins=False), steps)
    assert ours.execute("SELECT * FROM t ORDER BY x").fetchall() == theirs.execute(
        "SELECT * FROM t ORDER BY x").fetchall()
