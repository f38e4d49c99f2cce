"""Database files under fault: a corrupt page, a read-only file or mount, a full disk. Each is
one line and exit 2 where writing is needed; reading (report, the TUI) works read-only."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import definition, run_sweep

from foldscope.cli.demo_cmd import open_tui
from foldscope.cli.main import main
from foldscope.core.errors import StoreError
from foldscope.engine.store import Store

RUN = ["--scenario", "smoke", "--models", "sim/faithful", "--arms", "j,q", "--headless",
       "--latency-scale", "0"]


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("foldscope: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err and "never retrieved" not in err, err
    return lines[0]


def test_store_is_a_context_manager_that_closes(tmp_path):
    with Store(tmp_path / "a.sqlite") as store:
        assert store.latest_sweep_id() is None
    with pytest.raises(sqlite3.ProgrammingError):
        store.db.execute("SELECT 1")


def test_readonly_open_is_read_only_in_sqlite(tmp_path):
    path = tmp_path / "a.sqlite"
    with Store(path):
        pass
    with Store(path, readonly=True) as reader:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.db.execute("INSERT INTO meta(key, value) VALUES ('x', 'y')")


def test_sqlite_error_inside_the_block_becomes_one_store_error(tmp_path):
    with pytest.raises(StoreError, match="cannot write .*database or disk is full"):
        with Store(tmp_path / "a.sqlite"):
            raise sqlite3.OperationalError("database or disk is full")


# -- a corrupt page ---------------------------------------------------------------------------

def _corrupt_table_page(db: Path, table: str) -> None:
    with sqlite3.connect(db) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name=?", [table]).fetchone()[0]
    with open(db, "r+b") as fh:
        fh.seek((root - 1) * page_size)
        fh.write(bytes((i * 7 + 13) % 256 for i in range(page_size)))


@pytest.fixture
def corrupt_db(tmp_path):
    db = tmp_path / "c.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))
    _corrupt_table_page(db, "sweeps")
    return db


def test_corrupt_page_is_one_line_exit_2_for_report_and_run(corrupt_db, capsys):
    assert main(["report", "--db", str(corrupt_db)]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "corrupt" in line and "foldscope check" in line
    assert main(["run", "--db", str(corrupt_db), *RUN]) == 2
    assert "corrupt" in _one_error_line(capsys.readouterr().err)


def test_corrupt_page_stops_the_tui_before_it_starts(corrupt_db):
    with pytest.raises(StoreError, match="corrupt"):
        open_tui(str(corrupt_db))


# -- a full disk --------------------------------------------------------------------------------

def test_disk_full_at_a_commit_is_one_line_and_loses_nothing(tmp_path, capsys, monkeypatch):
    db = tmp_path / "full.sqlite"
    real_commit = Store.commit_fold
    calls = {"n": 0}

    def filling_disk(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 3:
            raise sqlite3.OperationalError("database or disk is full")
        return real_commit(self, *args, **kwargs)

    monkeypatch.setattr(Store, "commit_fold", filling_disk)
    assert main(["run", "--db", str(db), *RUN]) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert "disk is full" in line and "run again to resume" in line
    with sqlite3.connect(db) as conn:
        status, pid = conn.execute("SELECT status, runner_pid FROM sweeps").fetchone()
        folds = conn.execute("SELECT COUNT(*) FROM folds").fetchone()[0]
    assert status == "stopped" and pid is None
    assert folds == 3  # every commit that returned is there
    # Space freed: the same command resumes and finishes.
    monkeypatch.setattr(Store, "commit_fold", real_commit)
    assert main(["run", "--db", str(db), *RUN]) == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT status FROM sweeps").fetchone()[0] == "done"
        assert conn.execute("SELECT COUNT(*) FROM rows WHERE status='done'").fetchone()[0] == 2


# -- read-only files and mounts --------------------------------------------------------------

@pytest.fixture
def readonly_dir(tmp_path):
    """A directory whose contents cannot be written: chmod for a normal user; for root (whom
    permissions do not stop) a read-only tmpfs mount, skipped where mounting is not allowed."""
    target = tmp_path / "ro"
    target.mkdir()
    if os.geteuid() != 0:
        yield target, lambda: (os.chmod(target / "r.sqlite", 0o444), os.chmod(target, 0o555))
        os.chmod(target, 0o755)
        return
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(target)],
                      capture_output=True).returncode != 0:
        pytest.skip("root without permission to mount: cannot make a read-only file")

    def seal() -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(target)], check=True)

    try:
        yield target, seal
    finally:
        # Lazy: a reader thread of the app under test may still hold the file open.
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def test_readonly_database_reports_and_refuses_to_run(tmp_path, readonly_dir, capsys):
    target, seal = readonly_dir
    src = tmp_path / "src.sqlite"
    sweep_id = run_sweep(src, definition(models=("sim/faithful",), arms=("j", "q")))
    shutil.copy(src, target / "r.sqlite")
    seal()
    db = str(target / "r.sqlite")
    assert main(["report", "--db", db, "--format", "json"]) == 0
    assert sweep_id in capsys.readouterr().out
    with Store(db, readonly=True) as store:
        assert len(store.rows(sweep_id)) == 2
    assert not any(p.name.endswith(("-wal", "-shm")) for p in target.iterdir())
    assert main(["run", "--db", db, *RUN]) == 2
    assert "read-only" in _one_error_line(capsys.readouterr().err)
    assert main(["run", "--db", db, "--resume", sweep_id, "--headless"]) == 2
    assert "read-only" in _one_error_line(capsys.readouterr().err)


@pytest.fixture
def readonly_copy(tmp_path, readonly_dir):
    """A finished sweep's database on a read-only file in a read-only directory."""
    target, seal = readonly_dir
    src = tmp_path / "src.sqlite"
    sweep_id = run_sweep(src, definition(models=("sim/faithful",), arms=("j",)))
    shutil.copy(src, target / "r.sqlite")
    seal()
    return str(target / "r.sqlite"), sweep_id


async def test_tui_watches_a_readonly_database_and_opens_its_cells(readonly_copy):
    from conftest import fresh_poll, wait_group

    from foldscope.ui.app import FoldscopeApp
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    db, sweep_id = readonly_copy
    app = FoldscopeApp(db, sweep_id=sweep_id)
    async with app.run_test(size=(140, 45)) as pilot:
        await fresh_poll(app, pilot)
        grid = app.screen.query_one(SweepGrid)
        assert grid.row_count == 1
        grid.focus()
        await pilot.press("right", "enter")
        await pilot.pause()
        assert isinstance(app.screen, CellScreen)
        await wait_group(app, "cell-load")
        await pilot.pause()
        assert app.screen.query_one("#rows").row_count == 1


def test_a_really_full_disk_is_one_line_and_resumes_once_space_is_freed(tmp_path, capsys):
    """A tiny tmpfs fills mid-sweep (root only; skipped where mounting is not allowed)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tiny filesystem")
    target = tmp_path / "tiny"
    target.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(target)],
                      capture_output=True).returncode != 0:
        pytest.skip("root without permission to mount")
    try:
        db = str(target / "full.sqlite")
        argv = ["run", "--scenario", "kestrel", "--models", "sim/faithful,sim/describer",
                "--arms", "j,q,m", "--db", db, "--headless", "--latency-scale", "0"]
        assert main(argv) == 2
        assert "disk is full" in _one_error_line(capsys.readouterr().err)
        assert main(["check", "--db", db]) == 0  # what was committed is whole
        capsys.readouterr()
        subprocess.run(["mount", "-o", "remount,size=16m", str(target)], check=True)
        assert main(argv) == 0
        with Store(db, readonly=True) as store:
            sweep_id = store.latest_sweep_id()
            assert store.sweep(sweep_id).status == "done"
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)
