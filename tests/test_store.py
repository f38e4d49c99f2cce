"""The store: versioned schema, refusal of newer or foreign databases, atomic fold commits."""

import sqlite3
from pathlib import Path

import pytest

from foldscope.core.errors import StoreError
from foldscope.core.row import FoldRecord, PlannedRow
from foldscope.core.validity import INFRA_FAULT, Validity
from foldscope.engine.procinfo import RunnerId, this_runner
from foldscope.engine.store import SCHEMA_VERSION, NewSweep, Store


def _plan(store, sweep_id="s1", n=2):
    store.create_sweep(
        NewSweep(sweep_id, "t", "d", {"sweep": {}, "models": []}),
        [PlannedRow(position=i, scenario="smoke", model="sim/faithful", arm="j", repeat=i,
                    prompt_digest="p", declared_ceilings={"summary": 9600}, output_budget=4096,
                    carry_cap=2400) for i in range(n)])


def _fold(i):
    return FoldRecord(
        fold_index=i, first_chunk=i, last_chunk=i, catch_up=False, reply="r", carrier="c",
        carrier_chars=1, carrier_tokens_est=1, clipped_chars=0, headings_carried=0,
        fill_fraction=None, parse_status="ok", recovery="", finish_reason="stop",
        prompt_tokens=10, completion_tokens=5, est_prompt_tokens=9, latency_s=0.0, cost_usd=None,
        attempts=1, simulated=True, fact_status={"port": "present"}, created_at=0.0, cached=False,
        content_class="prose")


def _commit_first_fold(store, row_id):
    store.commit_fold(row_id, _fold(0))


def test_new_database_is_wal_and_versioned(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    assert store.schema_version == SCHEMA_VERSION
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused_with_one_line(tmp_path):
    path = tmp_path / "new.sqlite"
    Store(path).db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    with pytest.raises(StoreError) as err:
        Store(path)
    assert "newer" in str(err.value) and "\n" not in str(err.value)


def test_corrupt_and_foreign_files_are_refused(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError, match="not a usable foldscope database"):
        Store(junk)
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not a foldscope database"):
        Store(other)
    with pytest.raises(StoreError, match="no such database"):
        Store(tmp_path / "missing.sqlite", readonly=True)


def test_fold_commit_is_atomic_and_never_duplicated(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    _plan(store)
    row = store.rows("s1")[0]
    _commit_first_fold(store, row.id)
    with pytest.raises(sqlite3.IntegrityError):
        _commit_first_fold(store, row.id)
    fresh = store.row(row.id)
    assert fresh.folds_done == 1 and fresh.next_chunk == 1  # the failed duplicate changed nothing
    assert store.folds(row.id) == [_fold(0)]  # the record round-trips field for field


def test_retry_resets_a_row_and_counts_it(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    _plan(store)
    row = store.rows("s1")[0]
    _commit_first_fold(store, row.id)
    store.fail_row(row.id, error="timeout", verdict=Validity(False, INFRA_FAULT, True), wall_s=1.0)
    store.reset_row_for_retry(row.id)
    fresh = store.row(row.id)
    assert fresh.status == "planned" and fresh.attempt == 1 and fresh.infra_retries == 1
    assert store.folds(row.id) == []


def test_reader_sees_writer_commits(tmp_path):
    path = tmp_path / "a.sqlite"
    writer = Store(path)
    _plan(writer)
    reader = Store(path, readonly=True)
    assert reader.progress("s1")["planned"] == 2
    row = writer.rows("s1")[0]
    _commit_first_fold(writer, row.id)
    assert reader.progress("s1")["folds"] == 1


def test_a_live_runner_holds_the_sweep_and_a_dead_one_does_not(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    _plan(store)
    first, second = RunnerId(111, "boot:5"), RunnerId(222, "boot:9")
    store.claim("s1", first, is_alive=lambda r: True)
    store.claim("s1", first, is_alive=lambda r: True)  # re-claiming one's own sweep is fine
    with pytest.raises(StoreError, match="already being run by process 111"):
        store.claim("s1", second, is_alive=lambda r: True)
    store.claim("s1", second, is_alive=lambda r: False)  # 111 died (kill -9): take over
    assert store.sweep("s1").runner_started == "boot:9"
    store.release("s1", second)
    assert store.sweep("s1").runner_pid is None


def test_a_reused_pid_does_not_lock_the_sweep(tmp_path):
    import os
    import subprocess
    import sys

    store = Store(tmp_path / "a.sqlite")
    _plan(store)
    me = this_runner()
    if me.started is None:
        pytest.skip("no /proc here: the pid alone decides")
    # The claim names a live pid, but a process that started at another time: the runner
    # that wrote it died and the kernel gave its pid to this process.
    store.db.execute("UPDATE sweeps SET runner_pid=?, runner_started=?",
                     [os.getpid(), me.started + "0"])
    store.set_sweep_status("s1", "running")
    assert store.live_status(store.sweep("s1")) == "interrupted"
    store.claim("s1", RunnerId(424242, "boot:1"))  # not refused
    # A claim written before start tokens existed: judged by its pid, and a live pid counts
    # only while it is a foldscope process.
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    runner = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()",
                               "foldscope", "run"], stdin=subprocess.PIPE)
    try:
        for proc in (other, runner):  # until each has its own command line (exec done)
            while not Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                pass
        store.db.execute("UPDATE sweeps SET runner_pid=?, runner_started=NULL", [other.pid])
        store.claim("s1", me)  # an unrelated process holds the old pid: taken over
        store.db.execute("UPDATE sweeps SET runner_pid=?, runner_started=NULL", [runner.pid])
        with pytest.raises(StoreError, match=f"already being run by process {runner.pid}"):
            store.claim("s1", me)
    finally:
        for proc in (other, runner):
            proc.communicate(b"")


def test_a_running_sweep_whose_runner_died_reads_as_interrupted(tmp_path):
    store = Store(tmp_path / "a.sqlite")
    _plan(store)
    store.set_sweep_status("s1", "running")
    store.claim("s1", this_runner())
    assert store.live_status(store.sweep("s1")) == "running"  # this process is alive
    store.db.execute("UPDATE sweeps SET runner_pid=NULL")
    assert store.live_status(store.sweep("s1")) == "interrupted"


def test_version_2_answer_classes_migrate_by_what_the_carrier_held(tmp_path):
    from foldscope.engine.store import _MIGRATIONS

    path = tmp_path / "v2.sqlite"
    conn = sqlite3.connect(path)
    for version in (1, 2):
        conn.executescript(_MIGRATIONS[version])
    conn.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    old = [("a", "62114", "correct", 1), ("b", "unknown", "abstained", 0),
           ("c", None, "abstained", 1), ("d", "8080", "fabricated", 0),
           ("e", "62115", "mutated", 1), ("f", "47031", "wrong", 0)]
    conn.executemany(
        "INSERT INTO checks (row_id, label, expected, found, correct, abstained, unit_dropped, "
        "classification, in_carrier) VALUES (1, ?, '62114', ?, 0, 0, 0, ?, ?)", old)
    conn.commit()
    conn.close()
    # Read-only (a migrated copy; the file untouched): the old classes read in today's names.
    reader = Store(path, readonly=True)
    assert [(c.label, c.classification, c.carrier_state, c.class_detail)
            for c in reader.checks(1)][:3] == [("a", "correct", "present", None),
                                               ("b", "honest_abstention", "missing", None),
                                               ("c", "read_failure", "present", "nothing")]
    reader.close()
    store = Store(path)
    got = store.db.execute("SELECT label, classification, class_detail, carrier_state FROM checks "
                           "ORDER BY label").fetchall()
    assert got == [("a", "correct", None, "present"), ("b", "honest_abstention", None, "missing"),
                   ("c", "read_failure", "nothing", "present"), ("d", "fabricated", None, "missing"),
                   ("e", "read_failure", "other_value", "present"),
                   ("f", "fabricated", None, "missing")]


def test_a_fold_commit_rewrites_only_the_courses_that_changed(tmp_path):
    from dataclasses import replace

    from foldscope.core.forensics import FactHistory

    first = [FactHistory(f"f{i}", f"v{i}", True, 0, 0, 0, None, False, "present")
             for i in range(3)]
    later = [first[0], replace(first[1], lost_fold=1, final_state="missing"), first[2]]
    with Store(tmp_path / "h.sqlite") as store:
        _plan(store)
        row_id = store.rows("s1")[0].id
        store.commit_fold(row_id, _fold(0), first)
        statements: list[str] = []
        store.db.conn.set_trace_callback(statements.append)
        store.commit_fold(row_id, _fold(1), later, first)
        store.db.conn.set_trace_callback(None)
        assert store.fact_histories(row_id) == later
        # One course changed: one row written (executemany traces each statement it runs).
        assert sum("fact_histories" in s for s in statements) == 1
        statements.clear()
        store.db.conn.set_trace_callback(statements.append)
        store.commit_fold(row_id, _fold(2), later[::-1], ())  # nothing known stored: all written
        store.db.conn.set_trace_callback(None)
        assert store.fact_histories(row_id) == later[::-1]
        assert sum("fact_histories" in s for s in statements) == 3


def _old_database(path: Path, version: int) -> None:
    """A database written at ``version`` (before blobs, the timeline and the event log): one
    sweep, one answered row with a fold, two checks of which one was flagged."""
    from foldscope.engine.store import _MIGRATIONS

    conn = sqlite3.connect(path)
    for step in range(1, version + 1):
        conn.executescript(_MIGRATIONS[step])
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(version)])
    conn.execute("INSERT INTO sweeps (id, created_at, name, config_digest, config_json) "
                 "VALUES ('old', 0, 'old', 'd', '{}')")
    conn.execute("INSERT INTO rows (id, sweep_id, position, scenario, model, arm, repeat, status, "
                 "prompt_digest, declared_ceilings_json, output_budget, carry_cap, answer) "
                 "VALUES (1, 'old', 0, 'smoke', 'sim/faithful', 'j', 0, 'done', 'p', '{}', 1, 1, "
                 "'the answer')")
    conn.execute("INSERT INTO folds (row_id, fold_index, first_chunk, last_chunk, reply, carrier, "
                 "carrier_chars, carrier_tokens_est, clipped_chars, headings_carried, "
                 "parse_status, finish_reason, est_prompt_tokens, latency_s, created_at) "
                 "VALUES (1, 0, 0, 0, 'a fold reply', 'a carrier', 9, 2, 0, 0, 'ok', 'stop', 1, "
                 "0, 0)")
    conn.executemany(
        "INSERT INTO checks (row_id, label, expected, found, correct, abstained, unit_dropped, "
        "classification, in_carrier, flagged) VALUES (1, ?, '1', '2', 0, 0, 0, 'wrong', 0, ?)",
        [("a", 1), ("b", 0)])
    conn.commit()
    conn.close()


@pytest.mark.parametrize("version", [1, 3, 6])
def test_an_old_database_opened_read_only_is_read_through_a_migrated_copy_and_left_as_it_was(
        tmp_path, version):
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "old.sqlite"
    _old_database(path, version)
    before = path.read_bytes()
    with Store(path, readonly=True) as store:
        assert store.schema_version == version  # the file's own version
        assert store.folds(1)[0].reply == "a fold reply"
        assert store.row(1).answer == "the answer"
        assert [(c.label, c.flagged) for c in store.checks(1)] == [("a", True), ("b", False)]
        if version < 4:  # classes stored before answer classes read in today's names
            assert {c.classification for c in store.checks(1)} == {"fabricated"}
        (verdict,) = store.verdicts("old").values()
        assert (verdict.verdict, verdict.author) == ("fabricated", "unknown")
        assert store.events("old") == [] and store.runner_status("old") is None
        assert store.audits() == [] and store.fact_histories(1) == []
        with pytest.raises(sqlite3.OperationalError):  # the copy is read-only too
            store.set_sweep_status("old", "done")
    with Store(path, readonly=True) as again:  # the unchanged file's copy is read again
        assert again.row(1).answer == "the answer"
    assert path.read_bytes() == before
    assert [p.name for p in folder.iterdir()] == ["old.sqlite"]  # no companions left beside it
    with Store(path) as store:  # a writable open migrates the file itself
        assert store.schema_version == SCHEMA_VERSION
    with Store(path, readonly=True) as store:  # and read-only opens read the file as it is now
        assert store.schema_version == SCHEMA_VERSION
        assert store.row(1).answer == "the answer"


def _rows_folds_checks(store: Store) -> tuple:
    """Everything a reader reads of the old database's sweep, as comparable values."""
    rows = store.rows("old")
    return (store.sweep("old"), rows, [store.row(r.id) for r in rows],
            [store.folds(r.id) for r in rows], [store.checks(r.id) for r in rows],
            {k: (v.verdict, v.author) for k, v in store.verdicts("old").items()},
            store.events("old"), store.audits(), [store.fact_histories(r.id) for r in rows])


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_every_older_version_reads_read_only_as_its_migrated_file_does(tmp_path, version):
    import shutil

    from foldscope.engine.store import _sha256_sql

    path = tmp_path / "old.sqlite"
    if version < 7:
        _old_database(path, version)
    else:  # from 7 on a migration step needs foldscope's SQL function to build the file
        _old_database(path, 6)
        conn = sqlite3.connect(path)
        conn.create_function("foldscope_sha256", 1, _sha256_sql)
        from foldscope.engine.store import _MIGRATIONS
        for step in range(7, version + 1):
            conn.executescript(_MIGRATIONS[step])
        conn.execute("UPDATE meta SET value=? WHERE key='schema_version'", [str(version)])
        conn.commit()
        conn.close()
    before = path.read_bytes()
    with Store(path, readonly=True) as store:
        read_only = _rows_folds_checks(store)
    assert path.read_bytes() == before
    migrated = tmp_path / "migrated.sqlite"
    shutil.copy(path, migrated)
    with Store(migrated) as store:
        written = _rows_folds_checks(store)
    assert read_only == written  # (verdicts compared without the migration's own clock)


def test_an_old_database_in_wal_mode_is_read_with_what_only_its_wal_holds(tmp_path):
    path = tmp_path / "old.sqlite"
    _old_database(path, 6)
    keeper = sqlite3.connect(path)
    keeper.execute("PRAGMA journal_mode=WAL")
    keeper.execute("PRAGMA wal_autocheckpoint=0")  # the new row stays in the WAL
    keeper.execute("UPDATE sweeps SET name='renamed in the wal'")
    keeper.commit()
    wal = path.with_name(path.name + "-wal")
    assert wal.stat().st_size > 0
    main_bytes, wal_bytes = path.read_bytes(), wal.read_bytes()
    with Store(path, readonly=True) as store:
        assert store.sweep("old").name == "renamed in the wal"
    assert path.read_bytes() == main_bytes and wal.read_bytes() == wal_bytes
    # The old file changes again (an old writer): the next read-only open copies it again.
    keeper.execute("UPDATE sweeps SET name='renamed again'")
    keeper.commit()
    with Store(path, readonly=True) as store:
        assert store.sweep("old").name == "renamed again"
    keeper.close()
