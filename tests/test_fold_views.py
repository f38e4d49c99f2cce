"""The fold views a cell screen keeps (``widgets.fold_inspector.FoldViews``): a fold stepped to
again, or built ahead beside the one shown, is drawn from a view equal to one built afresh;
a view being built is waited for, never built twice; another row's views are not used."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from conftest import definition, open_cell, run_sweep, wait_group, wait_until
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from foldscope.engine.views import read_cell_changes
from foldscope.ui.app import FoldscopeApp
from foldscope.ui.widgets import fold_inspector
from foldscope.ui.widgets.fold_inspector import FoldInspector, FoldRequest, FoldViews, build_fold_view


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    db = tmp_path_factory.mktemp("fold-views") / "views.sqlite"
    return db, run_sweep(db, definition(models=("sim/garbler",), arms=("j",), repeats=2))


@pytest.fixture(scope="module")
def rows(swept):
    """Each row's fold requests' makings: (scenario, facts, folds, row id)."""
    db, sweep_id = swept
    from foldscope.engine.store import Store

    with Store(db, readonly=True) as store:
        first = store.rows(sweep_id)[0]
    read = read_cell_changes(db, sweep_id, first.scenario, first.model, first.arm,
                             need_facts=True)
    assert read.facts
    return [(r.scenario, tuple(read.facts), tuple(read.folds[r.id][1]), r.id)
            for r in read.rows if len(read.folds[r.id][1]) >= 2]


def _request(row, index, serial=1, width=48, wrap=True) -> FoldRequest:
    scenario, facts, folds, row_id = row
    return FoldRequest(serial, scenario, facts, folds, index, (width, wrap), (width, not wrap),
                       row_id)


def _fresh(request: FoldRequest):
    return build_fold_view(request, Console(), [])


@settings(max_examples=25)
@given(steps=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 8), st.sampled_from([30, 48]),
                                st.booleans()), min_size=1, max_size=12))
def test_a_kept_view_is_the_view_built_afresh(rows, steps):
    """Whatever rows, folds and layouts are asked for in turn (built, built ahead, taken from
    those kept), each view is the one built from nothing for that request."""
    views = FoldViews()
    for serial, (which, index, width, wrap) in enumerate(steps):
        row = rows[which % len(rows)]
        request = _request(row, index % len(row[2]), serial, width, wrap)
        for near in views.neighbours(request, 1):
            views.build(near, Console())
        got = views.get(request) or views.build(request, Console())
        assert got == _fresh(request)
        assert got.serial == serial


def test_another_rows_views_are_not_taken(rows):
    views = FoldViews()
    first, second = rows[0], rows[1]
    views.build(_request(first, 0), Console())
    assert views.get(_request(first, 0)) is not None
    assert views.get(_request(second, 0)) is None
    # The same row read again (new fold objects) is another row to the views.
    again = (first[0], first[1], tuple(type(f)(**vars(f)) for f in first[2]), first[3])
    assert views.get(_request(again, 0)) is None


def test_a_view_being_built_is_waited_for_not_built_twice(rows, monkeypatch):
    builds = []
    release = threading.Event()
    real = fold_inspector.build_fold_view

    def slow(request, console, timelines):
        builds.append(request.index)
        release.wait(5)
        return real(request, console, timelines)

    monkeypatch.setattr(fold_inspector, "build_fold_view", slow)
    views = FoldViews()
    request = _request(rows[0], 1)
    got: list = []
    threads = [threading.Thread(target=lambda s=s: got.append(
        views.build(_request(rows[0], 1, serial=s), Console()))) for s in (1, 2)]
    for t in threads:
        t.start()
    while not builds:
        threading.Event().wait(0.01)
    release.set()
    for t in threads:
        t.join(10)
    assert builds == [1]
    assert sorted(v.serial for v in got) == [1, 2]
    assert all(v == replace(_fresh(request), serial=v.serial) for v in got)


async def test_a_fold_stepped_to_again_is_drawn_at_once_as_when_first_drawn(swept):
    db, sweep_id = swept
    app = FoldscopeApp(str(db), sweep_id=sweep_id)
    async with app.run_test(size=(120, 40)) as pilot:
        cell = await open_cell(app, pilot)
        inspector = cell.query_one(FoldInspector)
        await pilot.pause()
        last = cell.fold_index
        assert last >= 1

        def drawn() -> list:
            strips = app.screen._compositor.render_strips()
            return [[(s.text, s.style) for s in strip] for strip in strips]

        first = drawn()
        await pilot.press("left")
        await wait_until(pilot, lambda: inspector.shown == last - 1, "the fold before")
        await wait_group(app, "fold-view")  # and the folds beside it, built ahead
        started = []
        build = FoldInspector._build

        def counted(self, request):
            started.append(request)
            return build(self, request)

        FoldInspector._build = counted
        try:
            await pilot.press("right")
            assert inspector.shown == last  # drawn in the key's own handler
            await pilot.pause()
            await pilot.pause()
        finally:
            FoldInspector._build = build
        assert started == []
        assert drawn() == first
