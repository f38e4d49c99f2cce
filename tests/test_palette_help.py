"""The palette lists one Theme entry; the help names every symbol the screens draw."""

import pytest
from conftest import definition, run_sweep

from foldscope.ui.app import FoldscopeApp
from foldscope.ui.commands import all_commands
from foldscope.ui.screens.help import SYMBOLS


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "palette.sqlite"
    return path, run_sweep(path, definition(models=("sim/faithful",), arms=("j",)))


async def test_the_palette_has_one_theme_entry(db):
    path, sweep_id = db
    app = FoldscopeApp(str(path), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        system = [c.title for c in app.get_system_commands(app.screen)]
        ours = [c.title for c in all_commands(app.screen)]
        assert "Theme" not in system and "Quit" in system
        assert [t for t in system + ours if t == "Theme"] == ["Theme"]


def test_help_names_every_mark_the_grid_and_tables_draw():
    marks = " ".join(mark for mark, _ in SYMBOLS)
    for mark in ("✗N", "—", "·", "⟳", "⚑", "▲ ▼", "H", "●", "◐", "○", "★"):
        assert mark in marks, mark
