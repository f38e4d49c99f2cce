"""Find, sort and compare on screen (Pilot): ``/`` filters the rows table and the review list by
a query (core.find) and says N of M, escape clears it; ``s``/``S`` and header clicks sort any
column with ▲/▼ in its header."""

from __future__ import annotations

import pytest
from conftest import definition, run_sweep, wait_group, wait_until

from foldscope.core.find import find, parse_query, row_findable
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("find") / "find.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler", "sim/inventor"), arms=("j", "q"),
                                        repeats=3))
    return db, sweep_id


def _cell_rows(db, sweep_id, model, arm):
    with Store(db, readonly=True) as store:
        rows = store.cell_rows(sweep_id, None, model, arm)
        return [(r, store.folds(r.id), store.checks(r.id)) for r in rows]


async def _open_cell(app, pilot, model, arm):
    from foldscope.ui.screens.cell import CellScreen

    await pilot.pause()
    screen = CellScreen(app.db_path, app.sweep_id, None, model, arm)
    app.push_screen(screen)
    await wait_until(pilot, lambda: app.screen is screen and screen._data is not None,
                     "the cell screen to read its rows")
    return screen


async def _type(pilot, text):
    for ch in text:
        await pilot.press({" ": "space", "/": "slash", '"': "quotation_mark",
                           ":": "colon", "-": "minus", ",": "comma"}.get(ch, ch))


def _shown(screen):
    from foldscope.ui.widgets.rows_table import RowsTable

    return set(screen.query_one(RowsTable).row_ids())


def _status(screen):
    return str(screen.query_one("#filter-status").render())


@pytest.mark.asyncio
async def test_slash_filters_the_rows_by_a_query_and_escape_clears_it(swept):
    db, sweep_id = swept
    model, arm = "sim/garbler", "j"
    rows = _cell_rows(db, sweep_id, model, arm)
    # A value held in some carriers and not others: the first fact state that differs.
    carrier_words = [set(" ".join(f.carrier for f in folds).split()) for _, folds, _ in rows]
    distinct = sorted(set.union(*carrier_words) - set.intersection(*carrier_words))
    assert distinct, "the rows' carriers should differ somewhere"
    word = next(w for w in distinct if w.isalnum() and len(w) > 3)
    expected = {r.id for r, folds, checks in rows
                if find(parse_query(word), [row_findable(r, folds, checks)]).matched}
    assert expected

    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_cell(app, pilot, model, arm)
        assert _shown(screen) == {r.id for r, _, _ in rows}
        await pilot.press("slash")
        await _type(pilot, word)
        await wait_group(app, "cell-filter")
        await wait_until(pilot, lambda: _shown(screen) == expected, "the filtered rows")
        await wait_until(pilot, lambda: f"{len(expected)} of {len(rows)} rows" in _status(screen),
                         "the N of M line")
        # Keys typed went to the filter, not to the screen (no fold step, no sort).
        assert screen.query_one("RowsTable").sort_column == "position"
        await pilot.press("enter")
        await pilot.pause()
        assert screen.query_one("RowsTable").has_focus
        assert _shown(screen) == expected  # enter keeps the filter
        await pilot.press("escape")  # the first escape clears it, the screen stays
        await wait_until(pilot, lambda: _shown(screen) == {r.id for r, _, _ in rows},
                         "every row again")
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


@pytest.mark.asyncio
async def test_a_bad_query_is_named_and_the_table_keeps_the_last_good_one(swept):
    db, sweep_id = swept
    rows = _cell_rows(db, sweep_id, "sim/inventor", "q")
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_cell(app, pilot, "sim/inventor", "q")
        await pilot.press("slash")
        await _type(pilot, "arm:q")
        await wait_group(app, "cell-filter")
        await wait_until(pilot, lambda: f"{len(rows)} of {len(rows)}" in _status(screen),
                         "every row matches arm:q")
        await _type(pilot, " /(a/")
        await pilot.pause()
        assert "bad regular expression /(a/" in _status(screen)
        assert _shown(screen) == {r.id for r, _, _ in rows}
        await pilot.press("enter")  # an error keeps the line open
        await pilot.pause()
        assert screen.query_one("#filter-input").has_focus
        await pilot.press("backspace", "backspace", "backspace", "backspace", "backspace")
        await _type(pilot, "model:garbler")
        await wait_group(app, "cell-filter")
        await wait_until(pilot, lambda: _shown(screen) == set(), "no row (wrong model)")
        assert f"0 of {len(rows)} rows" in _status(screen)


@pytest.mark.asyncio
async def test_rows_sort_by_any_column_by_key_or_header_click(swept):
    from foldscope.ui.widgets.rows_table import ROW_COLUMNS, RowsTable

    db, sweep_id = swept
    rows = _cell_rows(db, sweep_id, "sim/garbler", "q")
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(200, 48)) as pilot:
        screen = await _open_cell(app, pilot, "sim/garbler", "q")
        table = screen.query_one(RowsTable)
        await wait_until(pilot, lambda: table.row_count == len(rows), "rows")

        def header(key):
            return table.columns[key].label.plain  # type: ignore[index]

        assert header("position") == "position ▲"
        await pilot.press("s")  # the next column
        assert table.sort_column == "status" and header("status") == "status ▲"
        assert header("position") == "position"
        await pilot.press("S")
        assert header("status") == "status ▼"
        # A click on the recall header sorts by recall; a second click reverses it.
        x = sum(table.columns[c.key].get_render_width(table) for c in ROW_COLUMNS[:4])
        await pilot.click(RowsTable, offset=(x + 2, 0))
        await pilot.pause()
        assert table.sort_column == "recall" and not table.sort_reverse
        recalls = [next(r for r, _, _ in rows if r.id == i).recall for i in table.row_ids()]
        assert recalls == sorted(recalls, key=lambda v: (v is None, v or 0))
        await pilot.click(RowsTable, offset=(x + 2, 0))
        await pilot.pause()
        assert table.sort_reverse and header("recall") == "recall ▼"


async def _open_review(app, pilot):
    from foldscope.ui.widgets.review_table import ReviewTable

    await pilot.pause()
    await pilot.press("f")
    await wait_until(pilot, lambda: app.screen.query(ReviewTable)
                     and app.screen.query_one(ReviewTable).row_count > 0, "the review values")
    return app.screen


@pytest.mark.asyncio
async def test_the_review_list_filters_by_a_query_and_sorts_by_any_column(swept):
    from foldscope.engine.review import review_values
    from foldscope.ui.widgets.review_table import ReviewTable

    db, sweep_id = swept
    with Store(db, readonly=True) as store:
        values = review_values(store, sweep_id)
    classes = {v.answer_class for v in values}
    assert values and classes, "the sweep should have values to review"
    wanted = sorted(classes)[0]
    expected = {v.check_id for v in values if v.answer_class == wanted and v.model == "sim/garbler"}
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        await pilot.press("slash")
        await _type(pilot, f"class:{wanted} model:garbler")
        await wait_group(app, "review-filter")
        await wait_until(pilot, lambda: {int(k) for k in table.shown_keys} == expected,
                         "the filtered values")
        await wait_until(pilot, lambda: f"{len(expected)} of {len(values)} values"
                         in _status(screen), "N of M values")
        await pilot.press("enter")
        await pilot.pause()
        # Keys reach the table again: a sort by the next column (the verdict), then the label.
        await pilot.press("s", "s")
        assert table.sort_column == "label"
        assert table.columns["label"].label.plain == "label ▲"  # type: ignore[index]
        labels = [table.values[k].label.casefold() for k in table.shown_keys]
        assert labels == sorted(labels) and {int(k) for k in table.shown_keys} == expected
        await pilot.press("S")
        assert table.columns["label"].label.plain == "label ▼"  # type: ignore[index]
        labels = [table.values[k].label.casefold() for k in table.shown_keys]
        assert labels == sorted(labels, reverse=True)
        # A verdict on a filtered, sorted list marks the highlighted value, then the next shown.
        shown = table.shown_keys
        first = str(table.current().check_id)  # the cursor stays on its value through sorts
        at = shown.index(first)
        second = shown[at + 1] if at + 1 < len(shown) else None
        await pilot.press("u")
        await wait_until(pilot, lambda: screen.pending == 0, "the verdict written")
        assert table.values[first].human is not None
        if second is not None:
            assert table.current().check_id == int(second)
        # A text search reads the rows' answers and carriers (a word of a value's own carrier).
        await pilot.press("escape")
        await wait_until(pilot, lambda: len(table.shown_keys) == len(values), "every value")
        v = values[0]
        await pilot.press("slash")
        await _type(pilot, '"' + v.given + '"')
        await wait_group(app, "review-filter")
        await wait_until(pilot, lambda: str(v.check_id) in table.shown_keys
                         and "of" in _status(screen), "the value found by its text")


@pytest.mark.asyncio
async def test_a_query_holding_markup_is_shown_literally(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_cell(app, pilot, "sim/garbler", "q")
        await pilot.press("slash")
        await _type(pilot, "[bold]x[/bold]")
        await wait_group(app, "cell-filter")
        await wait_until(pilot, lambda: "of" in _status(screen), "the N of M line")
        assert "[bold]x[/bold]" in _status(screen)


@pytest.mark.asyncio
async def test_a_filter_matching_no_row_leaves_no_row_in_the_panes(swept):
    from foldscope.ui.widgets.answer_table import AnswerTable
    from foldscope.ui.widgets.fold_inspector import FoldInspector

    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_cell(app, pilot, "sim/garbler", "j")
        await wait_until(pilot, lambda: screen.query_one(AnswerTable).row_count > 0, "answers")
        await pilot.press("slash")
        await _type(pilot, "zzqqxxnothing")
        await wait_group(app, "cell-filter")
        await wait_until(pilot, lambda: not _shown(screen), "no rows")
        await wait_until(pilot, lambda: screen.row_id is None, "no row inspected")
        assert screen.query_one(AnswerTable).row_count == 0
        assert screen.query_one(FoldInspector).empty_text.startswith("no row matches the filter")
        await pilot.press("escape")  # cleared: every row again, and one inspected
        await wait_until(pilot, lambda: screen.row_id is not None, "a row inspected again")
