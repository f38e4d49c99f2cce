"""The fold inspector of one row: the measures of fold k, the fact strip with the fold each fact
was lost at, the highlighted fact's detail, the carrier, and beside it the diff against fold
k−1 or (on a key) the input chunk fold k read."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import ContentSwitcher, DataTable, Static
from textual.worker import get_current_worker

from foldscope.core.forensics import PlantedFact, Timeline
from foldscope.core.row import FoldRecord
from foldscope.engine.views import read_fold_model
from foldscope.ui.widgets.carrier_view import HIGHLIGHTED_STATES, CarrierView
from foldscope.ui.widgets.chunk_view import ChunkView
from foldscope.ui.widgets.diff_view import DiffView, fold_diff_lines
from foldscope.ui.widgets.fact_detail import FactDetail
from foldscope.ui.widgets.fact_history import FactHistory
from foldscope.ui.widgets.literal_lines import PaneLayout, lay_out, styled_lines


@dataclass(frozen=True)
class FoldRequest:
    """What a fold's view is built from (handed to the worker)."""

    serial: int
    scenario: str | None
    facts: tuple[PlantedFact, ...]
    folds: tuple[FoldRecord, ...]
    index: int
    carrier_layout: tuple[int, bool]
    """The carrier pane's width and wrap state."""
    diff_layout: tuple[int, bool]
    """The diff pane's width and wrap state."""
    row_id: int | None = None
    """The row's id (as ``foldscope inspect ROW_ID`` takes it), named in the title line."""


@dataclass(frozen=True)
class FoldView:
    """Everything the inspector draws of one fold, built off the UI thread."""

    serial: int
    index: int
    fold: FoldRecord
    title: str
    timeline: Timeline
    """The row's timeline as it stood after this fold (``core.forensics.timeline_upto``)."""
    carrier: PaneLayout
    diff: PaneLayout


def build_fold_view(request: FoldRequest, console: Console,
                    timelines: list[tuple[tuple[FoldRecord, ...], Timeline]]) -> FoldView:
    """Build fold ``request.index``'s view: the row's timeline (reused from ``timelines``),
    the timeline document, the carrier with its fact spans, the fold's changes and diff, both
    panes laid out at their width (core does the science; this only arranges it).

    Args:
        request: the row's folds and facts, the fold, the panes' layout.
        console: measures text for the layout.
        timelines: the last timeline built, with the folds it was built from (a step
            through the same row's folds reuses it); replaced when they differ.

    Returns:
        The view.
    """
    folds, index = request.folds, request.index
    cached = timelines[0] if timelines else None
    reuse = (cached[1] if cached is not None and len(cached[0]) == len(folds)
             and all(a is b for a, b in zip(cached[0], folds)) else None)
    model = read_fold_model(folds, request.facts, index, row_id=request.row_id, timeline=reuse)
    timelines[:] = [(folds, model.timeline)]  # one row at a time is stepped through
    carrier_lines = styled_lines(model.fold.carrier, [
        (s.start, s.end, f"carrier-view--{s.state}") for s in model.spans
        if s.state in HIGHLIGHTED_STATES])
    diff_lines = fold_diff_lines(index, model.before.carrier if model.before else None,
                                 model.fold.carrier, model.changes)
    return FoldView(request.serial, index, model.fold, model.title, model.shown,
                    lay_out(carrier_lines, *request.carrier_layout, console),
                    lay_out(diff_lines, *request.diff_layout, console))


def _same_row(a: FoldRequest, b: FoldRequest) -> bool:
    """Both requests are for the same row as read: its scenario, id, facts and folds (the
    same objects: a row read again, or grown by a fold, is another)."""
    return (a.scenario == b.scenario and a.row_id == b.row_id
            and len(a.folds) == len(b.folds) and len(a.facts) == len(b.facts)
            and all(x is y for x, y in zip(a.folds, b.folds))
            and all(x is y for x, y in zip(a.facts, b.facts)))


class FoldViews:
    """The fold views built for the row being stepped through, by fold and the panes' layout:
    a fold stepped to again is drawn at once, and the folds beside the one shown are built
    ahead (``neighbours``) while the person looks at it. Built in workers, read on the UI
    thread: a lock keeps the two apart, and a view being built is waited for, not built twice.
    """

    LIMIT = 8
    """The most views kept (of one row: another row's replace them)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._row: FoldRequest | None = None
        """A request for the row the views are of."""
        self._views: dict[tuple[int, tuple[int, bool], tuple[int, bool]], FoldView] = {}
        self._building: dict[tuple[Any, ...], threading.Event] = {}
        """Views being built, by row (its id and folds) and key: waited for, not built twice."""
        self._timelines: list[tuple[tuple[FoldRecord, ...], Timeline]] = []
        """The last timeline built and its folds: every fold of the row reuses it."""

    @staticmethod
    def _key(request: FoldRequest) -> tuple[int, tuple[int, bool], tuple[int, bool]]:
        return request.index, request.carrier_layout, request.diff_layout

    @classmethod
    def _build_key(cls, request: FoldRequest) -> tuple[Any, ...]:
        return (cls._key(request), request.row_id, tuple(map(id, request.folds)))

    def clear(self) -> None:
        """Forget every view (another cell is shown); builds under way are dropped."""
        with self._lock:
            self._row = None
            self._views.clear()
            self._timelines = []

    def _take_row(self, request: FoldRequest) -> None:
        # Under the lock: the views kept are this request's row's.
        if self._row is None or not _same_row(self._row, request):
            self._row = request
            self._views.clear()

    def get(self, request: FoldRequest) -> FoldView | None:
        """The view ``request`` asks for if it is built (with the request's serial)."""
        with self._lock:
            if self._row is None or not _same_row(self._row, request):
                return None
            view = self._views.get(self._key(request))
        return replace(view, serial=request.serial) if view is not None else None

    def build(self, request: FoldRequest, console: Console) -> FoldView:
        """The view ``request`` asks for: kept, waited for while another thread builds it, or
        built here (``build_fold_view``) and kept. Runs in a worker."""
        while True:
            with self._lock:
                self._take_row(request)
                key = self._key(request)
                view = self._views.get(key)
                if view is not None:
                    return replace(view, serial=request.serial)
                event = self._building.get(self._build_key(request))
                if event is None:
                    event = self._building[self._build_key(request)] = threading.Event()
                    break
            event.wait()  # another worker builds it: take its view
        timelines = self._timelines
        try:
            view = build_fold_view(request, console, timelines)
        finally:
            with self._lock:
                self._building.pop(self._build_key(request), None)
                event.set()
        with self._lock:
            if self._row is not None and _same_row(self._row, request):
                self._views[key] = view
                while len(self._views) > self.LIMIT:
                    del self._views[next(iter(self._views))]
        return view

    def neighbours(self, request: FoldRequest, step: int) -> list[FoldRequest]:
        """The folds beside ``request``'s not built nor being built, the one a step of
        ``step`` (−1 or 1) would show next first."""
        order = (request.index + step, request.index - step)
        out = []
        with self._lock:
            same = self._row is not None and _same_row(self._row, request)
            for index in order:
                near = replace(request, index=index)
                if (0 <= index < len(request.folds) and self._build_key(near) not in self._building
                        and not (same and self._key(near) in self._views)):
                    out.append(near)
        return out


EMPTY_TEXT = "no folds committed for this row yet"
"""What the title says of a row without folds, unless the screen says more."""


class FoldInspector(Widget):
    """Everything about fold k of one row; the screen owns which row and fold."""

    SCOPED_CSS = False
    """Its rules name it in full, so they can follow the screen's width class (``-narrow``)."""

    DEFAULT_CSS = """
    FoldInspector { height: 1fr; }
    FoldInspector #fold-title { color: $text-muted; margin: 1 0 0 0; height: auto; }
    FoldInspector #fold-pane { height: 1fr; }
    FoldInspector #fact-side { width: 1fr; }
    FoldInspector #facts { height: 1fr; }
    FoldInspector #text-panes { width: 2fr; }
    FoldInspector #carrier, FoldInspector #side { width: 1fr; }
    FoldInspector #fold-keys { color: $text-muted; height: auto; }
    .-narrow FoldInspector #fold-pane { layout: vertical; }
    .-narrow FoldInspector #fact-side { width: 100%; height: 2fr; layout: horizontal; }
    .-narrow FoldInspector #facts { width: 1fr; height: 100%; }
    .-narrow FoldInspector FactDetail { width: 1fr; border-top: none; border-left: solid $panel; }
    .-narrow FoldInspector #text-panes { width: 100%; height: 3fr; }
    .-short FoldInspector #fold-title { margin: 0; }
    .-short FoldInspector #fold-keys { display: none; }
    """

    @dataclass
    class Built(Message):
        """A fold's view was built in the worker."""

        inspector: FoldInspector
        view: FoldView

        @property
        def control(self) -> FoldInspector:
            """The inspector the view is for."""
            return self.inspector

    @dataclass
    class Drawn(Message):
        """The inspector drew the fold asked for last (or said the row has none)."""

        inspector: FoldInspector

        @property
        def control(self) -> FoldInspector:
            """The inspector that drew."""
            return self.inspector

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.timeline: Timeline | None = None
        """The timeline shown, as it stood after the fold shown (``core.forensics.timeline_upto``)."""
        self.shown: int | None = None
        """The index of the fold drawn; None while nothing is."""
        self.empty_text = EMPTY_TEXT
        """What the title says of a row without folds (the screen names a failed row's error)."""
        self._scenario: str | None = None
        self._fold: FoldRecord | None = None
        self._serial = 0
        """Counts show requests: only the latest one's view is drawn."""
        self._views = FoldViews()
        """The row's fold views built so far (a fold stepped to again is drawn at once)."""
        self._step = -1
        """The direction of the last step (the fold built ahead first)."""
        self._request: FoldRequest | None = None
        """The last fold asked for."""

    def compose(self) -> ComposeResult:
        yield Static(id="fold-title")
        yield Static("←/→ or [ ] step folds · c the input chunk or the diff · w wrap the panes",
                     id="fold-keys")
        with Horizontal(id="fold-pane"):
            with Vertical(id="fact-side"):
                yield FactHistory(id="facts")
                yield FactDetail(id="fact-detail")
            # Narrow terminals stack the fact strip above the two text panes.
            with Horizontal(id="text-panes"):
                yield CarrierView(id="carrier")
                with ContentSwitcher(initial="diff", id="side"):
                    yield DiffView(id="diff")
                    yield ChunkView(id="chunk")

    def reset(self) -> None:
        """As first mounted: nothing shown, the diff beside the carrier, every pane wrapped and
        scrolled home, the first fact highlighted next (the screen shows another cell); a
        view still being built is dropped when it lands."""
        self._serial += 1
        self.workers.cancel_group(self, "fold-view")
        self.timeline, self._fold, self.shown, self._scenario = None, None, None, None
        self._views.clear()
        self._step = -1
        self._request = None
        self.empty_text = EMPTY_TEXT
        self.query_one(FactHistory).reset()
        self.query_one(FactDetail).show(None, None)
        self.query_one("#fold-title", Static).update("")
        for view in (self.query_one(CarrierView), self.query_one(DiffView)):
            view.reset()
        self.query_one(ChunkView).reset()
        self.query_one(ContentSwitcher).current = "diff"

    def show(self, scenario: str | None, facts: Sequence[PlantedFact],
             folds: Sequence[FoldRecord], index: int, row_id: int | None = None) -> None:
        """Show fold ``index`` (0-based) of a row: the view is built in a worker (timeline,
        fact spans, fold changes, the diff and the panes' layout) and drawn when it lands, so
        a fold step never waits on a 100k-character carrier.

        Args:
            scenario: the row's scenario name (its chunks are regenerated on demand).
            facts: the planted facts in display order.
            folds: the row's folds.
            index: the fold to show.
            row_id: the row's id, named in the title line.
        """
        self._serial += 1
        self._scenario = scenario
        if not folds:
            self._show_empty()
            return
        carrier = self.query_one(CarrierView)
        diff = self.query_one(DiffView)
        request = FoldRequest(self._serial, scenario, tuple(facts), tuple(folds), index,
                              carrier.layout_request(), diff.layout_request(), row_id)
        self._request = request
        if self.shown is not None and index != self.shown:
            self._step = 1 if index > self.shown else -1
        view = self._views.get(request)
        if view is not None:  # built already (stepped to before, or ahead): drawn now
            self._draw(view)
        else:
            self._build(request)

    def _show_empty(self) -> None:
        self.timeline = None
        self._fold = None
        self.shown = None
        self.query_one(FactHistory).show(None)
        self.query_one(FactDetail).show(None, None)
        self.query_one("#fold-title", Static).update(Text(self.empty_text, style="dim"))
        self.query_one(CarrierView).show("")
        self.query_one(DiffView).set_lines([])
        self.post_message(self.Drawn(self))

    @work(thread=True, group="fold-view", exclusive=True, exit_on_error=False,
          description="build a fold's view: timeline, fact spans, changes, diff, layout")
    def _build(self, request: FoldRequest) -> None:
        """Compute everything fold ``request.index`` shows, off the UI thread."""
        view = self._views.build(request, self.app.console)
        if not get_current_worker().is_cancelled:
            self.post_message(self.Built(self, view))

    @work(thread=True, group="fold-view", exclusive=True, exit_on_error=False,
          description="build the views of the folds beside the one shown")
    def _build_ahead(self, requests: list[FoldRequest]) -> None:
        """Build the views of the folds a step would show next (a step asked meanwhile
        cancels this, once the view under way is built and kept)."""
        worker = get_current_worker()
        for request in requests:
            if worker.is_cancelled:
                return
            self._views.build(request, self.app.console)

    def _ahead(self, request: FoldRequest) -> None:
        """Once the fold drawn is on screen: build the folds beside it, unless a step has
        asked for another fold since (its build or drawing goes first)."""
        if request.serial == self._serial and self.is_mounted:
            wanted = self._views.neighbours(request, self._step)
            if wanted:
                self._build_ahead(wanted)

    @on(Built)
    def _built(self, message: Built) -> None:
        """Draw a built view (a stale one, overtaken by a later step, is dropped)."""
        message.stop()
        if message.view.serial == self._serial:
            self._draw(message.view)

    def _draw(self, view: FoldView) -> None:
        """Draw a fold's view (the latest asked for), then build its neighbours ahead."""
        self.timeline = view.timeline
        self._fold = view.fold
        self.query_one("#fold-title", Static).update(Text(view.title))
        self.query_one(CarrierView).set_layout(view.carrier)
        self.query_one(FactHistory).show(view.timeline)
        self.query_one(DiffView).set_layout(view.diff)
        if self.chunk_shown:
            self._load_chunk()
        self._show_detail()
        self.shown = view.index
        self.post_message(self.Drawn(self))
        request = self._request
        if request is not None and request.serial == view.serial:
            self.call_after_refresh(self._ahead, request)

    @property
    def chunk_shown(self) -> bool:
        """The side pane shows the input chunk (else the diff)."""
        return self.query_one(ContentSwitcher).current == "chunk"

    def toggle_chunk(self) -> None:
        """Switch the side pane between the diff and the input chunk of the fold."""
        switcher = self.query_one(ContentSwitcher)
        switcher.current = "diff" if self.chunk_shown else "chunk"
        if self.chunk_shown:
            self._load_chunk()

    def _load_chunk(self) -> None:
        if self._scenario is not None and self._fold is not None:
            self.query_one(ChunkView).show_chunks(self._scenario, self._fold.first_chunk,
                                                  self._fold.last_chunk)

    @on(DataTable.RowHighlighted, "#facts")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    def _show_detail(self) -> None:
        table = self.query_one(FactHistory)
        shown = self.timeline
        if shown is None or not shown.folds or not 0 <= table.cursor_row < len(shown.facts):
            self.query_one(FactDetail).show(None, None)
            return
        i = table.cursor_row
        self.query_one(FactDetail).show(shown.facts[i], shown.folds[-1].facts[i])
