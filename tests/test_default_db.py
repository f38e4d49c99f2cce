"""One default database for every command (the one the TUI opened last, else db/demo.sqlite),
the demo reopening its unfinished sweep, and resuming a sweep by name (issue 23 item 6)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import definition, run_sweep, wait_until

from foldscope.cli import demo_cmd
from foldscope.cli.main import main
from foldscope.cli.paths import DB_DEFAULT_TEXT, DEMO_DB, default_db
from foldscope.core.designs import balance_note
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.store import Store
from foldscope.engine.sweep import load_sweep_file
from foldscope.engine.userconfig import LAST_DB_KEY, last_database, update_user_config

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB_COMMANDS = (["report"], ["check"], ["inspect"], ["run"], ["reindex"], ["pause"],
                       ["resume"], ["cancel"], ["export"])


@pytest.mark.parametrize("command", DEFAULT_DB_COMMANDS, ids=lambda c: c[0])
def test_help_names_the_one_default(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert DB_DEFAULT_TEXT in out
    assert "foldscope.sqlite" not in out


def test_bare_help_names_the_default():
    done = subprocess.run([sys.executable, "-m", "foldscope.cli.main", "--help"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0
    assert "opened last" in " ".join(done.stdout.split())


def test_no_settings_means_the_demo_database(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert default_db() == DEMO_DB
    # A remembered database that is gone falls back too, as does an unreadable settings file.
    update_user_config({LAST_DB_KEY: str(tmp_path / "gone.sqlite")})
    assert last_database() is None and default_db() == DEMO_DB


def test_unreadable_settings_fall_back(user_settings):
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    user_settings.write_text("last_db = [unclosed", encoding="utf-8")
    assert default_db() == DEMO_DB


def test_first_command_after_the_demo_reads_the_demo(tmp_path, monkeypatch, capsys):
    """No --db anywhere: run writes db/demo.sqlite in the working folder, report reads it."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j",
                 "--headless", "--latency-scale", "0"]) == 0
    assert (tmp_path / DEMO_DB).is_file()
    capsys.readouterr()
    assert main(["report", "--format", "json"]) == 0
    assert '"cells"' in capsys.readouterr().out
    assert main(["check"]) == 0


def test_commands_default_to_the_database_the_tui_opened_last(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "elsewhere.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))
    update_user_config({LAST_DB_KEY: str(db)})
    assert main(["report", "--format", "json"]) == 0
    assert sweep_id in capsys.readouterr().out
    with Store(db, readonly=True) as store:
        row_id = store.rows(sweep_id)[0].id
    assert main(["inspect", str(row_id), "--json"]) == 0
    assert f'"row": {row_id}' in capsys.readouterr().out
    assert not (tmp_path / DEMO_DB).exists()
    out = tmp_path / "package"
    assert main(["export", "--out", str(out)]) == 0
    assert (out / "rows.csv").is_file()


def test_an_explicit_db_wins(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    remembered = tmp_path / "remembered.sqlite"
    run_sweep(remembered, definition(models=("sim/faithful",), arms=("j",)))
    update_user_config({LAST_DB_KEY: str(remembered)})
    named = tmp_path / "named.sqlite"
    named_id = run_sweep(named, definition(models=("sim/faithful",), arms=("q",)))
    assert main(["report", "--db", str(named), "--format", "json"]) == 0
    assert named_id in capsys.readouterr().out


async def test_the_tui_remembers_the_database_it_opened(tmp_path):
    from foldscope.ui.app import FoldscopeApp

    db = tmp_path / "opened.sqlite"
    sweep_id = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j",)),
                             "test").sweep_id
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: last_database() is not None, "the settings write")
    assert last_database() == str(db.resolve())
    assert default_db() == str(db.resolve())


# -- the demo reopens its unfinished sweep ----------------------------------------------------

def _demo(db: Path, monkeypatch) -> str:
    opened: list[str] = []
    monkeypatch.setattr(demo_cmd, "run_app",
                        lambda path, sweep_id, **kw: opened.append(sweep_id) or 0)
    assert main(["demo", "--db", str(db)]) == 0
    return opened[-1]


def test_demo_reopens_its_unfinished_sweep(tmp_path, monkeypatch):
    db = tmp_path / "demo.sqlite"
    first = _demo(db, monkeypatch)
    assert _demo(db, monkeypatch) == first  # planned, never run: the same sweep
    with Store(db) as store:
        store.set_sweep_status(first, "stopped", "quit from the TUI")
    assert _demo(db, monkeypatch) == first  # stopped: resumed, not piled up
    with Store(db) as store:
        assert len(store.sweeps()) == 1
        store.set_sweep_status(first, "done")
    second = _demo(db, monkeypatch)  # finished: a fresh live demo, the old one kept
    assert second != first
    with Store(db, readonly=True) as store:
        assert {s.id for s in store.sweeps()} == {first, second}


def test_prepare_sweep_fresh_if_finished_keeps_other_definitions_apart(db):
    a = prepare_sweep(db, definition(arms=("j",)), "test", fresh_if_finished=True)
    b = prepare_sweep(db, definition(arms=("q",)), "test", fresh_if_finished=True)
    assert a.sweep_id != b.sweep_id
    again = prepare_sweep(db, definition(arms=("j",)), "test", fresh_if_finished=True)
    assert again.sweep_id == a.sweep_id and again.resumed
    with Store(db) as store:
        store.set_sweep_status(a.sweep_id, "failed", "every row failed")
    assert prepare_sweep(db, definition(arms=("j",)), "test",
                         fresh_if_finished=True).sweep_id not in (a.sweep_id, b.sweep_id)


def test_demo_and_example_designs_are_balanced():
    demo = demo_cmd.demo_definition()["sweep"]
    assert len(demo_cmd.DEMO_MODELS) == 4 and len(demo["arms"]) == 5
    assert balance_note(demo["arms"], demo["repeats"], demo["design"]) is None
    example = load_sweep_file(ROOT / "examples" / "kestrel-sweep.toml")["sweep"]
    for design in ("latin", "williams"):  # the file offers either
        assert balance_note(example["arms"], example["repeats"], design) is None


# -- resume: said after the TUI quits, and a named action --------------------------------------

def test_resume_hint_after_quit(tmp_path, monkeypatch, capsys):
    from foldscope.ui.app import FoldscopeApp

    db = tmp_path / "odd name.sqlite"
    prepared = prepare_sweep(db, definition(arms=("j",)), "test")
    with Store(db) as store:
        store.set_sweep_status(prepared.sweep_id, "stopped", "quit from the TUI")
    monkeypatch.setattr(FoldscopeApp, "run", lambda self: None)
    assert demo_cmd.run_app(str(db), prepared.sweep_id) == 0
    err = capsys.readouterr().err.strip()
    assert err == (f"sweep {prepared.sweep_id} stopped; resume with: foldscope --db "
                   f"'{db}' --sweep {prepared.sweep_id}")
    with Store(db) as store:
        store.set_sweep_status(prepared.sweep_id, "done")
    demo_cmd.run_app(str(db), prepared.sweep_id)
    assert capsys.readouterr().err == ""  # nothing to resume: nothing said


async def test_r_on_the_grid_resumes_a_stopped_sweep(tmp_path):
    from foldscope.ui.app import FoldscopeApp

    db = tmp_path / "stopped.sqlite"
    prepared = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j", "q")), "test")
    with Store(db) as store:
        store.set_sweep_status(prepared.sweep_id, "stopped", "quit from the TUI")
    app = FoldscopeApp(str(db), sweep_id=prepared.sweep_id, in_process=True, latency_scale=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.runner is None
        await pilot.press("R")
        await wait_until(pilot, lambda: app.sweep_status == "done", "the resumed sweep to end")
        await pilot.press("R")  # done: nothing to resume, said
        await wait_until(pilot, lambda: any("nothing left to resume" in str(n.message)
                                            for n in app._notifications), "the notice")
    with Store(db, readonly=True) as store:
        assert store.sweep(prepared.sweep_id).status == "done"


async def test_resume_is_a_palette_command_on_the_grid_and_the_picker(tmp_path):
    from foldscope.ui.app import FoldscopeApp
    from foldscope.ui.commands import all_commands
    from foldscope.ui.screens.picker import SweepPicker

    db = tmp_path / "two.sqlite"
    stopped = prepare_sweep(db, definition(models=("sim/faithful",), arms=("j",)), "test")
    finished = prepare_sweep(db, definition(models=("sim/faithful",), arms=("q",)), "test")
    with Store(db) as store:
        store.set_sweep_status(stopped.sweep_id, "stopped", "quit from the TUI")
        store.set_sweep_status(finished.sweep_id, "done")
    app = FoldscopeApp(str(db), in_process=True, latency_scale=0.0)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, SweepPicker)
                         and app.screen._sweeps, "the picker's list")
        assert "Resume sweep" in [c.title for c in all_commands(app.screen)]
        ids = [s.id for s in app.screen._sweeps]
        app.screen.query_one("#sweeps").move_cursor(row=ids.index(stopped.sweep_id))
        await pilot.press("R")
        await wait_until(pilot, lambda: app.sweep_status == "done", "the resumed sweep to end")
        assert app.sweep_id == stopped.sweep_id
        assert "Resume sweep" in [c.title for c in all_commands(app.screen)]
