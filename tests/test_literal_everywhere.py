"""Model and scenario text is data on every screen: markup is shown, never obeyed; escape and
control characters never reach the terminal.

A real simulated sweep is run, then its stored text (carriers, replies, answers, checks, model
ids, pin warnings, the sweep's name) is replaced by hostile text, and every screen — picker,
grid, a cell's rows, folds and answer, help, a notification — is rendered and its strips checked.
"""

import json
import sqlite3

import pytest
from conftest import definition, fresh_poll, run_sweep, wait_group, wait_until

from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.picker import SweepPicker
from foldscope.ui.widgets.sweep_grid import SweepGrid

MARKUP = "[bold]B[/bold] [@click=app.quit]Q[/] [link=http://x]L[/link]"
ESCAPES = "\x1b[2J\x1b[7mrev\x1b]0;title\x07\x1b]8;;http://x\x1b\\osc\x9b31m\x07\x00\x08\u202e"
HOSTILE = f"{MARKUP} {ESCAPES} end"
MODEL = "sim/[red]faithful[/red]\x1b[5m"
"""A model id as an older or hand-edited database might hold it."""

FORBIDDEN = {chr(c) for c in range(0x20) if c != 0x0A} | {chr(c) for c in range(0x7F, 0xA0)} \
    | {"\u202e"}


def poison(db, sweep_id):
    """Replace every stored text a screen shows with hostile text."""
    rows = "(SELECT id FROM rows WHERE sweep_id = :s)"
    with sqlite3.connect(db) as conn:
        config = json.loads(conn.execute("SELECT config_json FROM sweeps WHERE id=?",
                                         [sweep_id]).fetchone()[0])
        config["models"][0]["id"] = MODEL
        conn.execute("UPDATE sweeps SET name=:h, config_json=:c, pins_json=:p WHERE id=:s", {
            "h": HOSTILE, "c": json.dumps(config), "s": sweep_id,
            "p": json.dumps({MODEL: {"warnings": [HOSTILE]}})})
        conn.execute("UPDATE rows SET model=:m, answer=:a WHERE sweep_id=:s",
                     {"m": MODEL, "a": HOSTILE + "\nsecond line", "s": sweep_id})
        conn.execute(f"UPDATE folds SET carrier=:c, reply=:h WHERE row_id IN {rows}",
                     {"c": HOSTILE + "\n" + HOSTILE, "h": HOSTILE, "s": sweep_id})
        conn.execute(f"UPDATE checks SET found=:h, label=:h || id, expected=:h "
                     f"WHERE row_id IN {rows}", {"h": HOSTILE, "s": sweep_id})


def screen_text(app) -> tuple[str, list]:
    """Everything the screen would write, as text, and every segment style's meta."""
    strips = app.screen._compositor.render_strips()
    text = "\n".join("".join(seg.text for seg in strip) for strip in strips)
    metas = [seg.style.meta for strip in strips for seg in strip if seg.style and seg.style.meta]
    return text, metas


def assert_inert(app, where: str, *, shows_markup: bool = True) -> None:
    text, metas = screen_text(app)
    bad = sorted({f"U+{ord(c):04X}" for c in text if c in FORBIDDEN})
    assert not bad, f"{where}: control characters reached the screen: {bad}"
    assert not any("quit" in str(m.get("@click", "")) for m in metas), f"{where}: live markup"
    if shows_markup:
        assert "[bold]" in text or "[@click" in text or "[red]" in text, \
            f"{where}: the markup should show as text"


@pytest.fixture
def hostile_db(tmp_path):
    db = tmp_path / "hostile.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))
    other = run_sweep(db, definition(models=("sim/gister",), arms=("q",)))
    poison(db, sweep_id)
    with Store(db, readonly=True) as store:
        assert store.cell_rows(sweep_id, None, MODEL, "j")
    return db, sweep_id, other


async def test_hostile_text_is_inert_on_every_screen(hostile_db):
    db, sweep_id, other = hostile_db

    app = FoldscopeApp(str(db))
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        await wait_group(app, "picker-load")
        await pilot.pause()
        assert isinstance(app.screen, SweepPicker)
        assert_inert(app, "picker")
        ids = [s.id for s in app.screen._sweeps]
        await pilot.press(*["down"] * ids.index(sweep_id), "enter")
        await pilot.pause()
        await fresh_poll(app, pilot)
        assert app.screen.sweep_id == sweep_id and app.screen.sweep_id != other
        assert_inert(app, "sweep grid")
        for _ in range(8):  # every metric and the answers view
            await pilot.press("v")
            await pilot.pause()
            assert_inert(app, f"grid view {app.screen.query_one(SweepGrid).view}")

        app.screen.query_one(SweepGrid).focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, CellScreen)
        await wait_group(app, "cell-load")
        await pilot.pause()
        assert_inert(app, "cell: rows and folds")
        await pilot.press("a")
        await pilot.pause()
        await pilot.pause()
        assert_inert(app, "cell: answer")
        await pilot.press("o")
        await pilot.pause()
        assert_inert(app, "cell: folds again")
        await pilot.press("c")  # the input chunk beside the carrier, regenerated
        await wait_group(app, "chunk-load")
        await pilot.pause()
        assert_inert(app, "cell: input chunk")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        await wait_group(app, "survival-load")
        await pilot.pause()
        await pilot.press("m")  # one model's curves: its (hostile) id in the title
        await pilot.pause()
        assert_inert(app, "survival")
        assert "[red]faithful[/red]" in screen_text(app)[0]
        await pilot.press("escape")
        await pilot.pause()

        await pilot.press("f1")
        await pilot.pause()
        assert_inert(app, "help", shows_markup=False)


@pytest.mark.parametrize("where", ["thread", "child"])
async def test_a_failing_sweeps_notification_is_inert(hostile_db, monkeypatch, tmp_path, where):
    """The runner's error, whether raised in a thread or printed by the child process that
    runs the sweep, reaches the notification and the status line inert."""
    import sys

    import foldscope.engine.runner_process as runner_process
    from foldscope.engine.runner import SweepRunner

    db, _, clean = hostile_db  # a clean sweep: only the error text is hostile

    async def explode(self):
        raise RuntimeError(HOSTILE)

    monkeypatch.setattr(SweepRunner, "run", explode)
    said = tmp_path / "error.txt"
    said.write_text(HOSTILE, encoding="utf-8")
    monkeypatch.setattr(runner_process, "runner_command", lambda *a, **kw: [
        sys.executable, "-c", "import sys; sys.stderr.write('foldscope: error: ' + "
        f"open({str(said)!r}, encoding='utf-8').read() + '\\n'); sys.exit(2)"])
    app = FoldscopeApp(str(db), sweep_id=clean, run=True, in_process=where == "thread")
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await wait_until(pilot, lambda: app.sweep_status == "error", "the runner's failure")
        # the toast is mounted a few message cycles after notify()
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")), "the notification")
        await pilot.pause()
        text, _ = screen_text(app)
        assert "sweep stopped" in text and app.sweep_status == "error"
        assert_inert(app, "notification")
