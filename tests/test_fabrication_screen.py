"""The fabrication screen by keyboard only: twenty verdicts, reasons, undo, the row inspector at
the right row and fold, and a flag refused on an abstention."""

from __future__ import annotations

import pytest
from conftest import copy_database, definition, fresh_poll, run_sweep, wait_group, wait_until

from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.fabrication import FabricationScreen
from foldscope.ui.widgets.answer_table import AnswerTable
from foldscope.ui.widgets.review_table import ReviewTable


@pytest.fixture(scope="module")
def review_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("review") / "review.sqlite"
    sweep = run_sweep(db, definition(scenario="kestrel", models=("sim/inventor", "sim/garbler"),
                                     arms=("j", "q"), repeats=1))
    return db, sweep


@pytest.fixture
def db_copy(review_db, tmp_path):
    src, sweep = review_db
    return copy_database(src, tmp_path / "copy.sqlite"), sweep


async def _open_review(app, pilot) -> FabricationScreen:
    await pilot.pause()
    await fresh_poll(app, pilot)
    await pilot.press("f")
    await wait_until(pilot, lambda: isinstance(app.screen, FabricationScreen), "the review screen")
    screen = app.screen
    await wait_group(app, "fabrication-load")
    await wait_until(pilot, lambda: screen.query_one(ReviewTable).row_count > 0, "values listed")
    return screen


async def _settled(screen, pilot) -> None:
    await wait_until(pilot, lambda: screen.pending == 0, "verdicts written")


async def test_twenty_values_reviewed_by_keyboard_only(db_copy, monkeypatch):
    db, sweep = db_copy
    monkeypatch.setenv("USER", "reviewer")
    app = FoldscopeApp(str(db), sweep_id=sweep)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        order = [v.check_id for v in table.values.values()]
        assert len(order) >= 20
        keys = ["f", "n", "u", "f", "f", "n", "f", "f", "u", "f",
                "f", "n", "f", "f", "f", "n", "f", "u", "f"]
        await pilot.press(*keys)
        # The twentieth with a reason: F, type it, enter.
        await pilot.press("F", *"stock port", "enter")
        await _settled(screen, pilot)
        assert table.cursor_row == 20
        # A reason skipped with escape keeps the verdict.
        await pilot.press("N", "x", "escape")
        await _settled(screen, pilot)
        agreement = str(screen.query_one("#agreement").render())
        assert "21 reviewed" in agreement and "κ" in agreement
    names = {"f": "fabricated", "n": "not_fabricated", "u": "unsure"}
    with Store(db, readonly=True) as store:
        stored = store.verdicts(sweep)
        classes = {c.id: c.classification for c in store.sweep_checks(sweep)}
    want = [names[k] for k in keys] + ["fabricated", "not_fabricated"]
    assert [stored[c].verdict for c in order[:21]] == want
    assert stored[order[19]].reason == "stock port"
    assert stored[order[20]].reason is None
    assert {v.author for v in stored.values()} == {"reviewer"}
    # The automatic class is never overwritten.
    assert {classes[c] for c in order[:21]} <= {"fabricated", "carried_corruption"}


async def test_undo_takes_back_the_last_verdicts_in_order(db_copy):
    db, sweep = db_copy
    app = FoldscopeApp(str(db), sweep_id=sweep)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        first, second = list(table.values)[:2]
        await pilot.press("f", "n", "u")
        await pilot.press("z", "z")
        await _settled(screen, pilot)
        assert table.cursor_row == 1  # back on the value undone
        assert table.values[second].human is None
        await pilot.press("u")
        await _settled(screen, pilot)
    with Store(db, readonly=True) as store:
        stored = store.verdicts(sweep)
    assert stored[int(first)].verdict == "fabricated"
    assert stored[int(second)].verdict == "unsure"
    assert len(stored) == 2


async def test_enter_opens_the_row_inspector_at_the_values_row_on_its_final_fold(db_copy):
    db, sweep = db_copy
    app = FoldscopeApp(str(db), sweep_id=sweep)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        values = list(table.values.values())
        # A value of a later row: the inspector must not open on the cell's first row.
        target = next(v for v in values if v.repeat == 0 and v.model == "sim/garbler")
        table.select(target.check_id)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CellScreen), "the row inspector")
        cell = app.screen
        await wait_group(app, "cell-load")
        await wait_until(pilot, lambda: cell.row_id == target.row_id, "the value's row")
        assert (cell.model, cell.arm) == (target.model, target.arm)
        assert cell.fold_index == target.final_fold
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is screen, "back to the review")


@pytest.fixture
def gister_db(tmp_path):
    db = tmp_path / "g.sqlite"
    return db, run_sweep(db, definition(scenario="kestrel", models=("sim/gister",), arms=("j",)))


async def test_a_flag_on_an_abstention_is_refused_with_a_message(gister_db):
    db, sweep = gister_db
    app = FoldscopeApp(str(db), sweep_id=sweep)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        await fresh_poll(app, pilot)
        await pilot.press("right", "enter")  # arm j × sim/gister
        await wait_until(pilot, lambda: isinstance(app.screen, CellScreen), "the cell screen")
        await wait_group(app, "cell-load")
        await pilot.press("a")
        answers = app.screen.query_one(AnswerTable)
        await wait_until(pilot, lambda: answers.row_count > 0, "the answer table")
        checks = list(answers._checks.values())
        index = next(i for i, c in enumerate(checks) if c.classification == "honest_abstention")
        answers.move_cursor(row=index)
        await pilot.press("f")
        await wait_until(pilot, lambda: any("abstained" in str(n.message)
                                            for n in app._notifications), "the refusal")
    with Store(db, readonly=True) as store:
        assert store.verdicts(sweep) == {}
        assert not any(c.flagged for c in store.sweep_checks(sweep))


def _inject(monkeypatch, failures: int | None):
    """Make Store.add_verdict raise a locked-database error: the first ``failures`` calls, or
    every call (None). Returns the list of calls seen."""
    import sqlite3

    real = Store.add_verdict
    calls: list[int] = []

    def add_verdict(self, check_id, *args, **kwargs):
        calls.append(check_id)
        if failures is None or len(calls) <= failures:
            raise sqlite3.OperationalError("database is locked")
        return real(self, check_id, *args, **kwargs)

    monkeypatch.setattr(Store, "add_verdict", add_verdict)
    return calls


def _shown_saved_is_stored(table, db, sweep) -> dict:
    with Store(db, readonly=True) as store:
        stored = store.verdicts(sweep)
    for check_id, human in table.shown_saved().items():
        assert (human.verdict if human else None) == (
            stored[check_id].verdict if check_id in stored else None), check_id
    return stored


async def test_a_store_error_during_review_leaves_no_verdict_shown_saved_that_is_not_stored(
        db_copy, monkeypatch):
    db, sweep = db_copy
    calls = _inject(monkeypatch, None)
    app = FoldscopeApp(str(db), sweep_id=sweep)
    app.write_backoff_s = 0.001
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        first_three = [int(k) for k in list(table.values)[:3]]
        await pilot.press("f", "n", "u")
        await _settled(screen, pilot)
        stored = _shown_saved_is_stored(table, db, sweep)
        assert stored == {}
        assert {int(k) for k, m in table.unsaved.items() if m.error} == set(first_three)
        assert all(table.values[str(c)].human is None for c in first_three)
        assert len(calls) == 3 * (1 + 3)  # each write tried, then retried three times
        assert any("NOT saved" in str(n.message) for n in app._notifications)
        assert "NOT SAVED" in str(table.get_cell(str(first_three[0]), "reason"))
        # The store works again: the same keys on the same values save them.
        monkeypatch.undo()
        table.move_cursor(row=0)
        await pilot.press("f", "n", "u")
        await _settled(screen, pilot)
        stored = _shown_saved_is_stored(table, db, sweep)
        assert [stored[c].verdict for c in first_three] == ["fabricated", "not_fabricated",
                                                             "unsure"]
        assert not table.unsaved


async def test_a_transient_store_error_is_retried_and_each_verdict_reads_one_check(
        db_copy, monkeypatch):
    db, sweep = db_copy
    _inject(monkeypatch, 1)
    app = FoldscopeApp(str(db), sweep_id=sweep)
    app.write_backoff_s = 0.001
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await _open_review(app, pilot)
        table = screen.query_one(ReviewTable)
        reads: list[str] = []
        for name in ("verdicts", "sweep_checks", "rows"):
            real = getattr(Store, name)
            monkeypatch.setattr(Store, name, lambda self, *a, _n=name, _r=real, **k: (
                reads.append(_n), _r(self, *a, **k))[1])
        await pilot.press("f", "n", "u", "z")
        await _settled(screen, pilot)
        assert reads == []  # no verdict re-reads the sweep
        stored = _shown_saved_is_stored(table, db, sweep)
        assert sorted(v.verdict for v in stored.values()) == ["fabricated", "not_fabricated"]
        assert not table.unsaved
        assert "2 reviewed" in str(screen.query_one("#agreement").render())
