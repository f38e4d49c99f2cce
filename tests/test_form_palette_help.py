"""The new-sweep form keeps its input and lists every error at once, with a balanced default;
one Theme entry in the palette and foldscope's commands first; help lists every symbol the
screens draw; unpinned models warn; report columns and arm f's ceiling explained (issue 23.9)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from conftest import definition, run_sweep, wait_until
from hypothesis import given
from hypothesis import strategies as st
from textual.widgets import Button, Input, Select, Static

from foldscope.cli.main import main
from foldscope.core.arms import capacity_note, fact_line_chars, get_arm
from foldscope.core.designs import balance_note
from foldscope.engine.launch import SweepFields, field_problems
from foldscope.engine.live import PinInfo
from foldscope.engine.models import ModelConfig, warnings
from foldscope.engine.sim.catalog import TEMPERAMENTS
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.commands import FoldscopeCommands
from foldscope.ui.screens.help import SYMBOLS
from foldscope.ui.screens.new_sweep import DEFAULTS, NewSweepScreen
from foldscope.ui.widgets.pins_panel import pin_row

UI = Path(__file__).resolve().parent.parent / "foldscope" / "ui"


@pytest.fixture
def one_sweep(tmp_path) -> tuple[Path, str]:
    db = tmp_path / "form.sqlite"
    return db, run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))


# -- the form ----------------------------------------------------------------------------------

def test_the_form_defaults_to_a_balanced_design():
    arms = DEFAULTS["arms"].split(",")
    assert balance_note(arms, int(DEFAULTS["repeats"]), "latin") is None


def test_field_problems_lists_every_problem_at_once():
    problems = field_problems(SweepFields(scenario="nosuch", models="sim/faithful,acme/nope",
                                          arms="j,zz", repeats=0, design="latin"))
    text = "\n".join(problems)
    assert len(problems) >= 4, problems
    for needle in ("zz", "repeats", "nosuch", "acme/nope"):
        assert needle in text
    assert all("\n" not in p for p in problems)
    assert field_problems(SweepFields(scenario="smoke", models="sim/faithful", arms="j",
                                      repeats=1)) == []
    missing = field_problems(SweepFields(scenario="smoke", models="sim/faithful"))
    assert missing[0].endswith("sweep.arms: required (or pass --arms)")


def test_the_cli_still_stops_at_the_first_problem(capsys):
    code = main(["run", "--scenario", "nosuch", "--models", "acme/nope", "--arms", "j,zz",
                 "--headless", "--db", "/nonexistent-dir/x.sqlite"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("foldscope: error:")


async def test_the_form_keeps_its_input_and_shows_every_error(one_sweep):
    db, first = one_sweep
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSweepScreen), "the form")
        form = app.screen
        form.query_one("#repeats", Input).value = "two"
        form.query_one("#concurrency", Input).value = "lots"
        form.query_one("#arms", Input).value = "j,zz"
        form.query_one("#models", Input).value = "sim/faithful,acme/nope"
        form.query_one("#design", Select).value = "williams"
        await pilot.pause()
        form.query_one("#start", Button).press()
        error = form.query_one("#form-error", Static)
        await wait_until(pilot, lambda: "acme/nope" in str(error.render()), "the errors",
                         attempts=5000)
        shown = str(error.render())
        for needle in ("repeats: must be a whole number", "concurrency: must be a whole number",
                       "zz", "acme/nope"):
            assert needle in shown, shown
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, NewSweepScreen), "closed")
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSweepScreen), "reopened")
        again = app.screen
        assert again is not form
        assert again.query_one("#repeats", Input).value == "two"
        assert again.query_one("#arms", Input).value == "j,zz"
        assert again.query_one("#models", Input).value == "sim/faithful,acme/nope"
        assert again.query_one("#design", Select).value == "williams"


async def test_the_form_says_when_the_design_is_unbalanced(one_sweep):
    db, first = one_sweep
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(120, 50)) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: isinstance(app.screen, NewSweepScreen), "the form")
        note = app.screen.query_one("#form-note", Static)
        assert str(note.render()) == ""  # the defaults are balanced
        app.screen.query_one("#repeats", Input).value = "2"
        await wait_until(pilot, lambda: "not balanced" in str(note.render()), "the note")
        app.screen.query_one("#repeats", Input).value = "6"
        await wait_until(pilot, lambda: str(note.render()) == "", "the note gone")


# -- the palette -------------------------------------------------------------------------------

async def test_palette_has_one_theme_entry_and_foldscope_commands_first(one_sweep):
    db, first = one_sweep
    app = FoldscopeApp(str(db), sweep_id=first)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        provider = FoldscopeCommands(app.screen)
        titles = [hit.text async for hit in provider.discover()]
        assert titles.count("Theme") == 1
        assert len(titles) == len(set(titles))
        assert "Quit" in titles and "Keys" in titles  # Textual's generic commands are kept…
        ours = {"Next metric", "Transpose", "Resume sweep", "Theme", "Help"}
        last_ours = max(titles.index(t) for t in ours if t in titles)
        assert last_ours < titles.index("Keys") and last_ours < titles.index("Screenshot")
        # Keys a foldscope widget inherits from Textual's table come after foldscope's own.
        if "Cursor up" in titles:
            assert last_ours < titles.index("Cursor up")
        # …and only one provider feeds the palette, so the order holds.
        assert app.COMMANDS == {FoldscopeCommands}
        searched = [hit.text async for hit in provider.search("theme")]
        assert searched.count("Theme") == 1


# -- help --------------------------------------------------------------------------------------

def _drawn_glyphs() -> set[str]:
    """Symbol characters (Unicode 'So') in the UI's string literals, less box drawing and
    block elements (frames, rules, bars: drawn, not read)."""
    found: set[str] = set()
    for path in UI.rglob("*.py"):
        if path.name == "help.py":
            continue
        for literal_text in re.findall(r'"[^"\n]*"', path.read_text(encoding="utf-8")):
            for ch in literal_text:
                if unicodedata.category(ch) == "So" and not 0x2500 <= ord(ch) <= 0x259F:
                    found.add(ch)
    return found


def test_help_lists_every_symbol_the_screens_draw():
    listed = "".join(mark + meaning for mark, meaning in SYMBOLS)
    missing = sorted(ch for ch in _drawn_glyphs() if ch not in listed)
    assert not missing, f"help does not list: {missing}"
    marks = {mark for mark, _ in SYMBOLS}
    assert "—" in marks and "A N F C H" in marks
    assert any("failed" in meaning for mark, meaning in SYMBOLS if "✗" in mark)
    dot = dict(SYMBOLS)["·"]
    assert "finished" not in dot  # an unfinished cell shows —, not ·


# -- pins --------------------------------------------------------------------------------------

def test_an_unpinned_model_warns_in_the_pins_panel():
    assert any(w.startswith("unpinned") for w in warnings(ModelConfig(id="x", provider="vllm")))
    assert "no pin on a routing gateway" in warnings(ModelConfig(id="x", provider="openrouter"))
    pin = PinInfo("x", "vllm", None, None, None, None, None, None,
                  tuple(warnings(ModelConfig(id="x", provider="vllm"))))
    cells = pin_row(pin)
    assert str(cells[2]) == "unpinned" and str(cells[-1]).startswith("⚠ unpinned")
    pinned = PinInfo("x", "vllm", "box", None, None, None, None, None, ())
    assert str(pin_row(pinned)[-1]) == "—"


# -- report columns and arm f's ceiling --------------------------------------------------------

def test_report_table_explains_its_columns_and_arm_f(tmp_path, capsys):
    db = tmp_path / "f.sqlite"
    sweep_id = run_sweep(db, definition(scenario="kestrel", models=("sim/faithful",),
                                        arms=("f", "j")))
    assert main(["report", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "len: folds that stopped on their output budget" in out
    assert "retry c/r: retried calls / rows run again" in out
    assert "note: arm f: its declared ceiling of 1,024 characters cannot hold" in out
    assert "arm j:" not in out
    with Store(db, readonly=True) as store:
        from foldscope.engine.report import sweep_report

        data = sweep_report(store, sweep_id)
    assert len(data["capacity_notes"]) == 1 and "sim/faithful" in data["capacity_notes"][0]


def test_sim_list_says_why_faithful_scores_low_on_f():
    assert "arm f" in TEMPERAMENTS["faithful"] and "1,024" in TEMPERAMENTS["faithful"]


facts = st.lists(st.tuples(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=80)),
                 max_size=60)


@given(facts, st.sampled_from(["f", "j", "q", "t", "o", "k"]))
def test_capacity_note_exactly_when_the_ceiling_is_short(planted, arm_id):
    arm = get_arm(arm_id)
    note = capacity_note(arm, planted, graded=len(planted))
    short = arm.declared_ceiling is not None and fact_line_chars(planted) > arm.declared_ceiling
    assert (note is not None) == short
    if note is not None:
        assert f"arm {arm_id}" in note and f"{arm.declared_ceiling:,}" in note
