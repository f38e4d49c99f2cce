"""The row inspector: the fact strip agrees with ``foldscope inspect --json``, folds step with
the arrow keys, the diff and chunk panes, a mutated fact's marked characters, the survival
screen."""

from __future__ import annotations

import json

import pytest
from conftest import definition, run_sweep, wait_group, wait_until

from foldscope.cli.main import main
from foldscope.core.forensics import timeline_document
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp


@pytest.fixture
def garbled(tmp_path):
    db = tmp_path / "garbled.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler", "sim/describer"), arms=("j", "q"),
                                        repeats=2))
    return db, sweep_id


def _row(db, sweep_id, model, arm, mutated=False):
    with Store(db, readonly=True) as store:
        rows = [r for r in store.rows(sweep_id) if (r.model, r.arm) == (model, arm)]
        if mutated:
            rows = [r for r in rows if any(h.lost_fold is not None and h.final_state == "mutated"
                                           for h in store.fact_histories(r.id))] or rows
        return rows[0]


async def _open_cell(app, pilot, row):
    from foldscope.ui.screens.cell import CellScreen

    await pilot.pause()
    screen = CellScreen(app.db_path, app.sweep_id, row.scenario, row.model, row.arm)
    app.push_screen(screen)
    await wait_until(pilot, lambda: app.screen is screen and screen._data is not None,
                     "the cell screen to read its rows")
    from textual.widgets import DataTable

    rows = screen.query_one("#rows", DataTable)
    rows.move_cursor(row=rows.get_row_index(str(row.id)))
    await wait_until(pilot, lambda: screen.row_id == row.id, "the row to be picked")
    await _fold_drawn(app, pilot, screen)
    return screen


async def _fold_drawn(app, pilot, screen):
    """Wait for the fold the screen is at to be drawn (its view is built in a worker)."""
    from foldscope.ui.widgets.fold_inspector import FoldInspector

    inspector = screen.query_one(FoldInspector)
    await wait_group(app, "fold-view")
    await wait_until(pilot, lambda: inspector.shown == screen.fold_index, "the fold drawn")


MARKS = {"·": "not_yet", "●": "present", "◐": "mutated", "○": "missing"}


def _inspect_json(capsys, db, row_id, *extra):
    capsys.readouterr()
    assert main(["inspect", str(row_id), "--db", str(db), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _strip_agrees(strip, doc):
    assert [label for label, _, _ in strip] == [f["label"] for f in doc["facts"]]
    for i, (label, marks, lost) in enumerate(strip):
        assert [MARKS[m] for m in marks] == [f["facts"][i]["state"] for f in doc["folds"]], label
        fact = doc["facts"][i]
        expected = "" if fact["lost_fold"] is None else str(fact["lost_fold"])
        assert lost.replace(" ↺", "") == expected, label
        assert lost.endswith("↺") == fact["returned"]


async def test_strip_agrees_with_inspect_json_at_every_fold(garbled, capsys):
    from foldscope.ui.widgets.fact_history import FactHistory

    db, sweep_id = garbled
    row = _row(db, sweep_id, "sim/garbler", "q", mutated=True)
    # What the command prints (read before the app runs: the app captures stdout).
    docs = {k: _inspect_json(capsys, db, row.id, *(("--fold", str(k)) if k < 3 else ()))
            for k in (1, 2, 3)}
    assert any(f["final_state"] == "mutated" for f in docs[3]["facts"])
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(180, 50)) as pilot:
        screen = await _open_cell(app, pilot, row)
        strip = screen.query_one(FactHistory)
        assert screen.fold_index == 2
        # The inspector names the row by the id `foldscope inspect` takes.
        title = str(screen.query_one("#fold-title").render())
        assert title.startswith(f"row {row.id} · fold 3/"), title
        _strip_agrees(strip.strip_text(), docs[3])
        assert any(MARKS[m] == "not_yet" for _, marks, _ in strip.strip_text() for m in marks)
        await pilot.press("left")
        await wait_until(pilot, lambda: screen.fold_index == 1, "← to step back a fold")
        await _fold_drawn(app, pilot, screen)
        _strip_agrees(strip.strip_text(), docs[2])
        await pilot.press("left", "left")  # stops at the first fold
        await wait_until(pilot, lambda: screen.fold_index == 0, "← to reach fold 1")
        await _fold_drawn(app, pilot, screen)
        _strip_agrees(strip.strip_text(), docs[1])
        await pilot.press("right")
        await wait_until(pilot, lambda: screen.fold_index == 1, "→ to step forward")
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: screen.fold_index == 2, "] to step forward")


async def test_diff_chunk_and_mutation_panes(garbled):
    from foldscope.ui.widgets.chunk_view import ChunkView
    from foldscope.ui.widgets.diff_view import DiffView
    from foldscope.ui.widgets.fact_detail import FactDetail
    from foldscope.ui.widgets.fact_history import FactHistory
    from foldscope.ui.widgets.fold_inspector import FoldInspector

    db, sweep_id = garbled
    row = _row(db, sweep_id, "sim/describer", "j")
    with Store(db, readonly=True) as store:
        folds = store.folds(row.id)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(180, 50)) as pilot:
        screen = await _open_cell(app, pilot, row)
        diff = screen.query_one(DiffView)
        assert diff.plain_lines[0] == "fold 2 → 3"
        # The describer under j drops identifiers: the diff names what this fold lost.
        doc = timeline_document(screen.query_one(FoldInspector).timeline)  # as inspect prints it
        lost_here = [f for f in doc["facts"] if f["lost_fold"] == 3]
        for fact in lost_here:
            assert any(line.strip().startswith("lost") and fact["value"] in line
                       for line in diff.plain_lines), fact["label"]
        assert any(line.startswith(("- ", "+ ")) for line in diff.plain_lines)
        await pilot.press("c")
        chunk = screen.query_one(ChunkView)
        await wait_until(pilot, lambda: chunk.shown == (row.scenario, 2, 2),
                         "the chunk of fold 3 to be regenerated")
        assert chunk.plain_lines[0].startswith("── chunk 3 of 3")
        from foldscope.engine.loader import load_scenario

        scenario = load_scenario(row.scenario)
        assert chunk.plain_lines[1:] == scenario.chunks[2].text.split("\n")
        planted = scenario.facts_in_chunk(2)[0]
        line_no = next(i for i, line in enumerate(chunk.plain_lines) if planted.value in line)
        assert any(cls.startswith("chunk-view--") for _, _, cls in chunk._lines[line_no].spans)
        await pilot.press("left_square_bracket")
        await wait_until(pilot, lambda: chunk.shown == (row.scenario, 1, 1),
                         "the chunk to follow the fold")
        panes = [chunk, screen.query_one("#carrier"), screen.query_one(DiffView)]
        await pilot.press("w")
        await pilot.pause()
        assert len({p.wrap for p in panes}) == 1  # one key wraps every text pane alike
        before = chunk.wrap
        await pilot.press("w")
        await pilot.pause()
        assert {p.wrap for p in panes} == {not before}
        assert folds  # the row has folds

    # A mutated fact: original vs altered, the differing characters marked.
    row = _row(db, sweep_id, "sim/garbler", "q", mutated=True)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(180, 50)) as pilot:
        screen = await _open_cell(app, pilot, row)
        doc = timeline_document(screen.query_one(FoldInspector).timeline)  # as inspect prints it
        index = next(i for i, f in enumerate(doc["facts"]) if f["final_state"] == "mutated")
        strip = screen.query_one(FactHistory)
        strip.move_cursor(row=index)
        detail = screen.query_one(FactDetail)
        await wait_until(pilot, lambda: "original" in detail.plain, "the mutation detail")
        fact = doc["facts"][index]
        assert f"original  {fact['value']}" in detail.plain
        assert f"carrier   {fact['altered']}" in detail.plain and fact["rule"] in detail.plain
        marked = [seg for seg in detail.render().render(app.console) if seg.style and
                  seg.style.reverse]
        assert marked, "the differing characters are marked"


async def test_survival_screen_opens_from_the_sweep_screen(garbled):
    from textual.widgets import DataTable

    from foldscope.ui.screens.survival import SurvivalScreen
    from foldscope.ui.widgets.survival_chart import SurvivalChart

    db, sweep_id = garbled
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        await pilot.press("l")
        await wait_until(pilot, lambda: isinstance(app.screen, SurvivalScreen),
                         "l to open the survival screen")
        screen = app.screen
        await wait_group(app, "survival-load")
        await wait_until(pilot, lambda: screen.forensics is not None, "the sweep's timelines")
        chart = screen.query_one(SurvivalChart)
        assert [s.name.split(" ·")[0] for s in chart.series] == ["arm j", "arm q"]
        assert all(len(s.values) == 3 for s in chart.series)
        assert screen.query_one("#by-chunk", DataTable).row_count == 3  # smoke: 3 chunks
        assert screen.query_one("#by-kind", DataTable).row_count >= 2
        await pilot.press("m")
        await pilot.pause()
        assert screen.model == "sim/describer"
        assert "sim/describer" in str(screen.query_one("#survival-title").render())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, SurvivalScreen)


async def test_a_chunk_that_cannot_be_regenerated_says_so(garbled):
    from foldscope.ui.widgets.chunk_view import ChunkView

    db, sweep_id = garbled
    row = _row(db, sweep_id, "sim/garbler", "j")
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(180, 50)) as pilot:
        screen = await _open_cell(app, pilot, row)
        await pilot.press("c")
        chunk = screen.query_one(ChunkView)
        chunk.show_chunks("no-such-scenario", 0, 0)  # e.g. its file was removed since the run
        await wait_until(pilot, lambda: chunk.plain_lines[:1] and chunk.plain_lines[0]
                         .startswith("cannot regenerate this fold's input"),
                         "the chunk pane to name the failure")
        assert "no-such-scenario" in chunk.plain_lines[0]


async def test_a_cell_read_that_fails_is_reported_by_the_apps_one_worker_handler(
        garbled, monkeypatch):
    """The cell screen has no handler of its own: its failed read reaches the app's."""
    import sqlite3

    from foldscope.ui.screens.cell import CellScreen

    db, sweep_id = garbled
    row = _row(db, sweep_id, "sim/garbler", "j")

    def broken(self, *args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(Store, "cell_rows", broken)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(180, 50)) as pilot:
        await pilot.pause()
        app.push_screen(CellScreen(app.db_path, app.sweep_id, row.scenario, row.model, row.arm))
        await wait_until(pilot, lambda: any("disk I/O error" in str(n.message)
                                            for n in app._notifications), "the failure reported")
        message = next(str(n.message) for n in app._notifications if "disk I/O" in str(n.message))
        assert message.startswith("failed: read what changed in the cell")
