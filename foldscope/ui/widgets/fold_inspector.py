"""The fold inspector of one row: the measures of fold k, the fact strip with the fold each fact
was lost at, the highlighted fact's detail, the carrier, and beside it the diff against fold
k−1 or (on a key) the input chunk fold k read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widget import Widget
from textual.widgets import ContentSwitcher, DataTable, Static

from foldscope.core.carrier import carried_sections
from foldscope.core.forensics import PlantedFact, fact_spans, fold_changes, timeline_document
from foldscope.core.row import FoldRecord, stored_timeline
from foldscope.core.sections import SECTIONS
from foldscope.core.text import literal
from foldscope.ui.widgets.carrier_view import CarrierView
from foldscope.ui.widgets.chunk_view import ChunkView
from foldscope.ui.widgets.diff_view import DiffView
from foldscope.ui.widgets.fact_detail import FactDetail
from foldscope.ui.widgets.fact_history import FactHistory


def fold_measures(fold: FoldRecord, folds: int) -> str:
    """One line of a fold's stored measures: chunks, which headings arrived, fill of the declared
    ceiling, carried and clipped characters, finish reason, parse status and recovery."""
    have = {s.key for s in carried_sections(fold.carrier)}
    headings = " ".join(s.heading.split()[0].lower() if s.key in have else "·"
                        for s in SECTIONS)
    fill = ("no ceiling" if fold.fill_fraction is None
            else f"fill {fold.fill_fraction:.0%} of ceiling")
    parts = [f"fold {fold.fold_index + 1}/{folds}",
             f"chunks {fold.first_chunk + 1}–{fold.last_chunk + 1}"
             + (" (catch-up)" if fold.catch_up else ""),
             f"headings {len(have)}/5 [{headings}]", fill,
             f"{fold.carrier_chars:,} chars carried, {fold.clipped_chars:,} clipped",
             f"finish {fold.finish_reason}", f"parse {fold.parse_status}"]
    if fold.recovery:
        parts.append(f"recovery {fold.recovery}")
    return literal(" · ".join(parts), keep_newlines=False)


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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.doc: dict[str, Any] | None = None
        """The timeline document shown (``core.forensics.timeline_document``)."""
        self._scenario: str | None = None
        self._fold: FoldRecord | None = None

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

    def show(self, scenario: str | None, facts: Sequence[PlantedFact],
             folds: Sequence[FoldRecord], index: int) -> None:
        """Show fold ``index`` (0-based) of a row.

        Args:
            scenario: the row's scenario name (its chunks are regenerated on demand).
            facts: the planted facts in display order.
            folds: the row's folds.
            index: the fold to show.
        """
        self._scenario = scenario
        title = self.query_one("#fold-title", Static)
        carrier = self.query_one(CarrierView)
        if not folds:
            self.doc = None
            self._fold = None
            self.query_one(FactHistory).show(None)
            self.query_one(FactDetail).show(None, None)
            title.update(Text("no folds committed for this row yet", style="dim"))
            carrier.show("")
            self.query_one(DiffView).set_lines([])
            return
        timeline = stored_timeline(folds, facts)
        self.doc = timeline_document(timeline, index)
        fold = folds[index]
        self._fold = fold
        title.update(Text(fold_measures(fold, len(folds))))
        # Model output is data: the view never parses markup and shows control characters as
        # visible symbols; planted values are highlighted where they stand.
        carrier.show(fold.carrier, fact_spans(fold.carrier, facts))
        self.query_one(FactHistory).show(self.doc)
        before = folds[index - 1] if index > 0 else None
        changes = fold_changes(timeline.folds[index - 1] if index > 0 else None,
                               timeline.folds[index])
        self.query_one(DiffView).show_diff(index, before.carrier if before else None,
                                           fold.carrier, changes)
        if self.chunk_shown:
            self._load_chunk()
        self._show_detail()

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
        doc = self.doc
        if doc is None or not doc["folds"] or not 0 <= table.cursor_row < len(doc["facts"]):
            self.query_one(FactDetail).show(None, None)
            return
        i = table.cursor_row
        self.query_one(FactDetail).show(doc["facts"][i], doc["folds"][-1]["facts"][i])
