"""The compare view: two rows side by side at the same fold, facts aligned (core.compare), the
default pairing (j vs q, same model, scenario and repeat: engine.compare), opened from a cell
(mark one row, compare on another) or the review, stepped with ←/→ on both at once, every value
whole."""

from __future__ import annotations

import pytest
from conftest import definition, run_sweep, wait_until

from foldscope.core.compare import align_facts, counterpart_arm
from foldscope.core.forensics import MUTATED, NOT_YET, PRESENT
from foldscope.core.row import FoldRecord
from foldscope.core.scenario import Fact
from foldscope.core.text import literal
from foldscope.engine.compare import CompareError, counterpart, read_pair
from foldscope.engine.store import Store
from foldscope.ui.app import FoldscopeApp

# -- core --------------------------------------------------------------------------------------


def _fold(index, status, mutations=None, last_chunk=None):
    return FoldRecord(
        fold_index=index, first_chunk=index, last_chunk=index if last_chunk is None else last_chunk,
        catch_up=False, reply="", carrier="", carrier_chars=0, carrier_tokens_est=0,
        clipped_chars=0, headings_carried=5, fill_fraction=None, parse_status="ok", recovery="",
        finish_reason="stop", prompt_tokens=None, completion_tokens=None, est_prompt_tokens=0,
        latency_s=0.0, cost_usd=None, attempts=1, simulated=True, fact_status=status,
        created_at=0.0, cached=False, content_class=None, fact_mutations=mutations or {})


FACTS = [Fact(label="port", value="62114", role="tool", chunk=0, graded=True, kind="port"),
         Fact(label="digest", value="sha256:" + "ab" * 32, role="tool", chunk=0, graded=True,
              kind="digest"),
         Fact(label="late", value="x-1", role="tool", chunk=3, graded=False, kind="id")]


def test_facts_align_one_line_per_planted_fact_with_each_rows_state():
    a = _fold(1, {"port": "present", "digest": "present", "late": "missing"})
    b = _fold(1, {"port": "mutated", "digest": "present", "late": "missing"},
              {"port": ("6114", "char_dropped")})
    pairs = align_facts(FACTS, a, b)
    assert [p.label for p in pairs] == ["port", "digest", "late"]
    port, digest, late = pairs
    assert port.a.state == PRESENT and port.b.state == MUTATED and port.b.altered == "6114"
    assert port.differs and not digest.differs
    assert late.a.state == NOT_YET and late.b.state == NOT_YET  # its chunk not read yet
    assert digest.expected == FACTS[1].value  # the value whole


def test_a_row_without_the_fold_reads_none_and_differs():
    pairs = align_facts(FACTS, _fold(0, {"port": "present"}), None)
    assert all(p.b is None for p in pairs) and pairs[0].differs


def test_the_default_counterpart_is_the_other_side_of_j_vs_q():
    assert counterpart_arm("j", ["f", "j", "q"]) == "q"
    assert counterpart_arm("q", ["q", "j"]) == "j"
    assert counterpart_arm("m", ["j", "q", "m"]) == "j"
    assert counterpart_arm("j", ["j", "m"]) == "m"  # no q: the first other arm
    assert counterpart_arm("j", ["j"]) is None


# -- engine and screen -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("compare") / "compare.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler", "sim/describer"),
                                        arms=("j", "q", "m"), repeats=2))
    return db, sweep_id


def _rows(db, sweep_id):
    with Store(db, readonly=True) as store:
        return store.rows(sweep_id)


def test_read_pair_pairs_a_row_with_its_counterpart(swept):
    db, sweep_id = swept
    rows = _rows(db, sweep_id)
    a = next(r for r in rows if r.arm == "j" and r.repeat == 1 and r.model == "sim/garbler")
    with Store(db, readonly=True) as store:
        b = counterpart(store, sweep_id, a)
        pair = read_pair(store, sweep_id, a.id)
        with pytest.raises(CompareError, match="compared with itself"):
            read_pair(store, sweep_id, a.id, a.id)
        with pytest.raises(CompareError, match="no row 99999"):
            read_pair(store, sweep_id, 99999)
    assert b is not None and (b.arm, b.model, b.repeat, b.scenario) == (
        "q", a.model, a.repeat, a.scenario)
    assert pair.b.row.id == b.id and pair.a.row.answer is not None
    assert pair.a.folds and pair.facts


async def _compare_shown(pilot, app):
    from foldscope.ui.screens.compare import CompareScreen

    await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen)
                     and app.screen.shown is not None, "the compare screen drawn")
    return app.screen


def _cells(screen):
    table = screen.query_one("#compare-facts")
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.mark.asyncio
async def test_mark_a_row_then_compare_another_and_step_both_folds(swept):
    from foldscope.ui.screens.cell import CellScreen
    from foldscope.ui.screens.compare import state_word

    db, sweep_id = swept
    rows = _rows(db, sweep_id)
    first = next(r for r in rows if (r.model, r.arm, r.repeat) == ("sim/garbler", "j", 0))
    second = next(r for r in rows if (r.model, r.arm, r.repeat) == ("sim/garbler", "j", 1))
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        cell = CellScreen(app.db_path, sweep_id, None, "sim/garbler", "j", row_id=first.id)
        app.push_screen(cell)
        await wait_until(pilot, lambda: cell.row_id == first.id, "the first row picked")
        await pilot.press("m")
        assert app.marked_row == first.id
        assert f"row {first.id} marked for compare" in str(cell.query_one("#cell-title").render())
        table = cell.query_one("#rows")
        table.move_cursor(row=table.get_row_index(str(second.id)))
        await wait_until(pilot, lambda: cell.row_id == second.id, "the second row picked")
        await pilot.press("v")
        screen = await _compare_shown(pilot, app)
        assert (screen.pair.a.row.id, screen.pair.b.row.id) == (first.id, second.id)
        folds = min(len(screen.pair.a.folds), len(screen.pair.b.folds))
        last = screen.fold_index
        # The facts table agrees with the stored fold states of both rows at that fold.
        expected = align_facts(screen.pair.facts, screen.pair.a.folds[last],
                               screen.pair.b.folds[last], screen.pair.a.checks,
                               screen.pair.b.checks)
        cells = _cells(screen)
        assert [c[1] for c in cells] == [state_word(p.a) for p in expected]
        assert [c[2] for c in cells] == [state_word(p.b) for p in expected]
        assert f"fold {last + 1}/" in str(screen.query_one("#title-a").render())
        if folds > 1:
            await pilot.press("left")
            await wait_until(pilot, lambda: screen.shown == last - 1, "one fold back")
            for side in ("a", "b"):
                title = str(screen.query_one(f"#title-{side}").render())
                assert f"fold {last}/" in title
            carrier = "\n".join(screen.query_one("#carrier-a").plain_lines)
            assert carrier == literal(screen.pair.a.folds[last - 1].carrier)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is cell, "back to the cell")


@pytest.mark.asyncio
async def test_compare_from_the_review_pairs_the_value_row_with_its_counterpart(swept):
    from foldscope.ui.widgets.review_table import ReviewTable

    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(90, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f")
        await wait_until(pilot, lambda: app.screen.query(ReviewTable)
                         and app.screen.query_one(ReviewTable).row_count > 0, "review values")
        value = app.screen.query_one(ReviewTable).current()
        await pilot.press("v")
        screen = await _compare_shown(pilot, app)
        a, b = screen.pair.a.row, screen.pair.b.row
        assert a.id == value.row_id
        assert (b.model, b.repeat, b.scenario) == (a.model, a.repeat, a.scenario) and b.arm != a.arm
        assert screen.fold_index == value.final_fold
        # The value's fact is in the table, and its detail line holds the expected value whole.
        table = screen.query_one("#compare-facts")
        table.move_cursor(row=table.get_row_index(value.label))
        await pilot.pause()
        detail = str(screen.query_one("#compare-detail").render())
        assert value.planted in detail.replace("\n", "")
        # shift+→ scrolls the facts table sideways (→ alone steps the folds).
        before = (table.scroll_x, screen.fold_index)
        await pilot.press("shift+right")
        await pilot.pause()
        assert screen.fold_index == before[1]
        assert table.max_scroll_x > 0 and table.scroll_x > before[0]  # 90 columns: it is wider
        # d keeps only the facts that differ; x swaps the sides.
        await pilot.press("d")
        assert all(p.differs for p in screen.facts if p.label in
                   {str(k.value) for k in table.rows})
        await pilot.press("x")
        await wait_until(pilot, lambda: screen.pair.a.row.id == b.id, "the sides swapped")


@pytest.fixture
def one_arm(tmp_path):
    db = tmp_path / "one-arm.sqlite"
    return db, run_sweep(db, definition(models=("sim/garbler",), arms=("j",), repeats=1))


@pytest.mark.asyncio
async def test_a_row_without_a_counterpart_says_so_in_one_line(one_arm):
    from foldscope.ui.screens.compare import CompareScreen

    db, sweep_id = one_arm
    row = _rows(db, sweep_id)[0]
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = CompareScreen(str(db), sweep_id, row.id)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.query("#compare-title") and "no counterpart" in str(
            screen.query_one("#compare-title").render()), "the error line")
        title = str(screen.query_one("#compare-title").render())
        assert f"row {row.id} has no counterpart" in title and "mark a row with m" in title
        assert app.screen is screen  # no crash, the screen stays


@pytest.fixture
def one_failed(tmp_path):
    import sqlite3

    db = tmp_path / "failed.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/garbler",), arms=("j", "q"), repeats=1))
    with sqlite3.connect(db) as conn:  # the q row failed before its first fold
        (row_id,) = conn.execute("SELECT id FROM rows WHERE arm = 'q'").fetchone()
        conn.execute("DELETE FROM checks WHERE row_id = ?", (row_id,))
        conn.execute("DELETE FROM fact_histories WHERE row_id = ?", (row_id,))
        conn.execute("DELETE FROM folds WHERE row_id = ?", (row_id,))
        conn.execute("UPDATE rows SET status = 'failed', infra_error = 'http 400', "
                     "folds_done = 0, valid = 0, validity_reason = 'failed', recall = NULL, "
                     "seq = seq + 1000 WHERE id = ?", (row_id,))
    return db, sweep_id, row_id


@pytest.mark.asyncio
async def test_a_row_without_the_fold_says_so_beside_the_other(one_failed):
    from foldscope.ui.screens.compare import CompareScreen

    db, sweep_id, failed = one_failed
    row = next(r for r in _rows(db, sweep_id) if r.id != failed)
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        screen = CompareScreen(str(db), sweep_id, row.id)
        app.push_screen(screen)
        await wait_until(pilot, lambda: screen.shown is not None, "the compare screen drawn")
        assert screen.pair.b.row.id == failed and screen.fold_index == len(screen.pair.a.folds) - 1
        k = screen.fold_index + 1
        assert f"no fold {k}: the row has 0" in str(screen.query_one("#title-b").render())
        pane = "\n".join(screen.query_one("#carrier-b").plain_lines)
        assert f"row {failed} has no fold {k}" in pane and "(failed)" in pane
        assert all(p.b is None for p in screen.facts)
        assert str(screen.query_one("#compare-facts").get_row_at(0)[2]) == "— no fold"
