"""Failed rows are visible: counted in the grid cell, their error in the rows table and above
the inspector; the export's row ids are taken by inspect."""

import sqlite3

import pytest
from conftest import definition, fresh_poll, run_sweep, wait_group, wait_until

from foldscope.cli.inspect_cmd import parse_row_id
from foldscope.core.errors import StoreError
from foldscope.core.tally import CellTally
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.widgets.sweep_grid import metric_parts

ERROR = ("fold 1: http 400 from https://api.example.org/v1/chat/completions?deployment="
         "kestrel-eu-west-2&trace=9f86d081884c7d659a2feaa0c55ad015: unsupported parameter")


def test_a_cell_counts_its_failed_rows():
    cell = CellTally("smoke", "sim/faithful", "j", rows=3, done_rows=1, failed_rows=2,
                     valid_rows=1)
    text = "".join(part for part, _ in metric_parts(cell, "recall", running=False))
    assert "✗2" in text and "1/3" in text
    assert "✗" not in "".join(p for p, _ in metric_parts(
        CellTally("smoke", "sim/faithful", "j", rows=1, done_rows=1, valid_rows=1),
        "recall", running=False))


@pytest.mark.parametrize("text,row", [("48", 48), ("db1-48", 48), (" db12-7 ", 7)])
def test_inspect_takes_screen_and_export_row_ids(text, row):
    assert parse_row_id(text) == row


@pytest.mark.parametrize("text", ["db1-", "row48", "-3", "db-4", "4.5", ""])
def test_inspect_refuses_other_ids_in_one_line(text):
    with pytest.raises(StoreError, match="ROW_ID"):
        parse_row_id(text)


@pytest.fixture
def failed_db(tmp_path):
    db = tmp_path / "failed.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("j",), repeats=2))
    with sqlite3.connect(db) as conn:  # one row failed before its first fold
        (row_id,) = conn.execute("SELECT id FROM rows WHERE repeat = 1").fetchone()
        conn.execute("DELETE FROM checks WHERE row_id = ?", (row_id,))
        conn.execute("DELETE FROM fact_histories WHERE row_id = ?", (row_id,))
        conn.execute("DELETE FROM folds WHERE row_id = ?", (row_id,))
        conn.execute("UPDATE rows SET status = 'failed', infra_error = ?, folds_done = 0, "
                     "valid = 0, validity_reason = 'failed', retryable = 0, recall = NULL, "
                     "seq = seq + 1000 WHERE id = ?", (ERROR, row_id))
    return db, sweep_id, row_id


async def test_a_failed_row_shows_its_error_in_the_table_and_the_inspector(failed_db):
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.fold_inspector import FoldInspector
    from foldscope.ui.widgets.rows_table import RowsTable
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    db, sweep_id, row_id = failed_db
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await fresh_poll(app, pilot)
        grid = app.screen.query_one(SweepGrid)
        assert "✗1" in grid.get_cell("j", "sim/faithful").plain
        grid.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CellScreen), "the cell")
        screen = app.screen
        await wait_group(app, "cell-load")
        await wait_until(pilot, lambda: screen._data is not None, "the rows")
        table = screen.query_one(RowsTable)
        assert str(table.get_cell(str(row_id), "row")) == str(row_id)
        assert str(table.get_cell(str(row_id), "error")) == ERROR  # whole, never cut
        table.move_cursor(row=table.get_row_index(str(row_id)))
        await wait_until(pilot, lambda: screen.row_id == row_id, "the failed row")
        await pilot.pause()
        banner = str(screen.query_one("#row-error").render())
        assert f"row {row_id} failed" in banner and "not retried" in banner
        assert ERROR in banner.replace("\n", "")
        title = str(screen.query_one(FoldInspector).query_one("#fold-title").render())
        assert "failed before its first fold" in title


async def test_slash_status_failed_keeps_only_the_failed_rows(failed_db):
    from conftest import wait_group as wait_workers

    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.rows_table import RowsTable

    db, sweep_id, row_id = failed_db
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CellScreen)
                         and app.screen._data is not None, "the cell")
        screen = app.screen
        for key in ["slash", *"status", "colon", *"fail", "enter"]:
            await pilot.press(key)
        await wait_workers(app, "cell-filter")
        await wait_until(pilot, lambda: screen.query_one(RowsTable).row_ids() == [row_id],
                         "only the failed row")
        assert "1 of 2 rows" in str(screen.query_one("#filter-status").render())
        assert screen.row_id == row_id


async def test_the_answer_view_shows_the_highlighted_answer_whole_at_80x24(failed_db):
    from foldscope.engine.store import Store
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.widgets.answer_table import AnswerTable
    from foldscope.ui.widgets.sweep_grid import SweepGrid

    db, sweep_id, failed = failed_db
    with Store(db, readonly=True) as store:
        done = next(r for r in store.rows(sweep_id) if r.id != failed)
        checks = store.checks(done.id)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await fresh_poll(app, pilot)
        app.screen.query_one(SweepGrid).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CellScreen), "the cell")
        screen = app.screen
        await wait_until(pilot, lambda: screen._data is not None, "the rows")
        screen.row_id = done.id
        await pilot.press("a")
        table = screen.query_one(AnswerTable)
        await wait_until(pilot, lambda: table.row_count == len(checks), "the answers")
        for i in range(len(checks)):
            table.move_cursor(row=i)
            await pilot.pause()
            check = table.current()
            detail = str(screen.query_one("#answer-detail").render()).replace("\n", "")
            assert check is not None and check.expected in detail
            assert (check.found or "—") in detail
