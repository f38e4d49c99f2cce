"""The compare screen: two rows side by side, carrier by carrier at the same fold, with every
planted fact's state in both (and both answers' classes) aligned one line per fact."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.compare import FactPair, align_facts
from foldscope.core.forensics import MISSING, MUTATED, NOT_YET, PRESENT, FactAtFold, fact_spans
from foldscope.core.text import literal
from foldscope.engine.compare import ComparePair, CompareSide
from foldscope.engine.views import fold_measures, read_compare
from foldscope.ui.widgets.carrier_view import HIGHLIGHTED_STATES, CarrierView
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.literal_lines import LiteralLines, PaneLayout, lay_out, styled_lines

STATE_MARKS = {PRESENT: "●", MUTATED: "◐", MISSING: "○", NOT_YET: "·"}
"""The fact strip's marks, reused for a fact's state in each row."""

FACT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("label", "label"), ("A", "a"), ("B", "b"), ("A answer", "answer_a"),
    ("B answer", "answer_b"), ("A holds", "holds_a"), ("B holds", "holds_b"),
    ("expected", "expected"))
"""The aligned facts' columns (label, key): each as wide as its widest value, the states first
(the highlighted fact's values are whole in the line below the table at any width)."""


@runtime_checkable
class MarksRows(Protocol):
    """The app keeps one marked row across screens (mark in one cell, compare in another)."""

    marked_row: int | None


def marked_row(app: object) -> int | None:
    """The row marked for a comparison, if any."""
    return app.marked_row if isinstance(app, MarksRows) else None


def _one(text: str) -> str:
    return literal(text, keep_newlines=False)


def state_word(fact: FactAtFold | None) -> str:
    """A fact's state in one row's carrier in a mark and a word (— : no such fold)."""
    if fact is None:
        return "— no fold"
    return f"{STATE_MARKS.get(fact.state, '?')} {fact.state.replace('_', ' ')}"


def holds_text(fact: FactAtFold | None) -> str:
    """What a carrier holds instead of the value, for a mutated fact (whole, literal)."""
    if fact is None or fact.state != MUTATED:
        return ""
    return _one(fact.altered or "") + (f" ({fact.rule})" if fact.rule else "")


def state_text(fact: FactAtFold | None, folds: int, index: int) -> str:
    """A fact's state in one row's carrier, its altered text whole (literal, one line)."""
    if fact is None:
        return f"— no fold {index + 1} (the row has {folds})"
    mark = STATE_MARKS.get(fact.state, "?")
    if fact.state == MUTATED:
        rule = f" ({fact.rule})" if fact.rule else ""
        return f"{mark} mutated to {_one(fact.altered or '')}{rule}"
    return f"{mark} {fact.state.replace('_', ' ')}"


def side_title(name: str, side: CompareSide, index: int) -> Text:
    """One row's line over its carrier: id, model × arm, repeat, status, recall, the fold and
    its chunks."""
    r = side.row
    recall = "—" if r.recall is None else f"{r.recall:.2f}"
    head = Text.assemble((f"{name} · row {r.id} · {_one(r.model)} × arm {_one(r.arm)}", "bold"),
                         f" · repeat {r.repeat} · {r.status} · recall {recall}")
    if index < len(side.folds):
        fold = side.folds[index]
        head.append(f" · fold {index + 1}/{len(side.folds)} · chunks {fold.first_chunk + 1}–"
                    f"{fold.last_chunk + 1}" + (" (catch-up)" if fold.catch_up else ""),
                    style="bold")
    else:
        head.append(f" · no fold {index + 1}: the row has {len(side.folds)}", style="bold")
    return head


def side_measures(side: CompareSide, index: int) -> Text:
    """The fold's stored measures (headings, fill, characters, finish, parse), dim."""
    if index >= len(side.folds):
        return Text("")
    return Text(fold_measures(side.folds[index], len(side.folds)).split(" · ", 2)[-1],
                style="dim")


def pair_detail(pair: FactPair | None, a: CompareSide, b: CompareSide, index: int) -> Text:
    """The highlighted fact whole, wrapping at the width: label, expected value and each row's
    state and answer."""
    if pair is None:
        return Text("no planted facts (the scenario file is gone)", style="dim")
    return Text.assemble(
        (_one(pair.label), "bold"), ("  ★" if pair.graded else "  decoy", "dim"),
        "  expected ", (_one(pair.expected), "bold"),
        f"\nA (row {a.row.id}): ", state_text(pair.a, len(a.folds), index),
        f" · answer {pair.answer_a or '—'}",
        f"\nB (row {b.row.id}): ", state_text(pair.b, len(b.folds), index),
        f" · answer {pair.answer_b or '—'}")


@dataclass
class PairRead(Message):
    """Both rows, read from the store in a thread."""

    pair: ComparePair


@dataclass
class CompareBuilt(Message):
    """One fold of both rows, aligned and laid out in a thread."""

    serial: int
    index: int
    facts: tuple[FactPair, ...]
    carrier_a: PaneLayout
    carrier_b: PaneLayout


def _carrier_lines(side: CompareSide, pair: ComparePair, index: int,
                   layout: tuple[int, bool]) -> PaneLayout:
    if index >= len(side.folds):
        text = (f"row {side.row.id} has no fold {index + 1}: it committed {len(side.folds)} "
                f"fold{'s' if len(side.folds) != 1 else ''} ({side.row.status})")
        return lay_out(styled_lines(text), *layout)
    carrier = side.folds[index].carrier
    spans = fact_spans(carrier, pair.facts)
    return lay_out(styled_lines(carrier, [(s.start, s.end, f"carrier-view--{s.state}")
                                          for s in spans if s.state in HIGHLIGHTED_STATES]),
                   *layout)


class CompareScreen(Screen[None]):
    """Two rows' carriers at the same fold, side by side, and their facts aligned."""

    DEFAULT_CSS = """
    CompareScreen {
        #compare-body { padding: 0 1; }
        #compare-title { margin: 1 0 0 0; height: auto; }
        #compare-facts { height: auto; max-height: 14; }
        #compare-detail { height: auto; max-height: 6; color: $text; }
        #compare-sides { height: 1fr; }
        .compare-side { width: 1fr; }
        .side-title { height: auto; }
        .side-measures { height: auto; color: $text-muted; }
        .compare-carrier { height: 1fr; }
        &.-short {
            #compare-title { margin: 0; }
            #compare-facts { max-height: 5; }
            #compare-detail { max-height: 3; }
            .side-measures { display: none; }
        }
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("left_square_bracket", "step(-1)", "Prev fold"),
        Binding("right_square_bracket", "step(1)", "Next fold"),
        Binding("left", "step(-1)", "Prev fold", show=False, priority=True,
                tooltip="← and → step both rows' folds at once"),
        Binding("right", "step(1)", "Next fold", show=False, priority=True),
        Binding("shift+left", "scroll_facts(-1)", "Facts sideways", show=False,
                tooltip="Scroll the facts table left (shift+→: right) to its other columns"),
        Binding("shift+right", "scroll_facts(1)", "Facts sideways", show=False),
        Binding("d", "only_differing", "Differing facts", tooltip="Show only the facts whose "
                "state or answer differs between the rows, or every fact again"),
        Binding("x", "swap", "Swap A/B", tooltip="Put row B on the left"),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap both carriers at their width, or "
                "show long lines whole"),
    ]
    """Key bindings of the compare screen."""

    fold_index: reactive[int] = reactive(-1, init=False)
    """The fold both carriers show (0-based)."""

    def __init__(self, db_path: str, sweep_id: str, row_a: int, row_b: int | None = None, *,
                 fold: int | None = None) -> None:
        """Compare row ``row_a`` with ``row_b`` (None: its counterpart under the other arm),
        from fold ``fold`` (None: the last fold both rows have; a row without folds aside)."""
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.row_a, self.row_b = row_a, row_b
        self.pair: ComparePair | None = None
        self.facts: tuple[FactPair, ...] = ()
        """The facts of the fold shown, aligned."""
        self.differing_only = False
        self._start = fold
        self._serial = 0
        self.shown: int | None = None
        """The fold drawn (None: nothing yet; tests wait for it)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="compare-body"):
            yield Static(Text("reading both rows…", style="dim"), id="compare-title")
            yield DataTable(id="compare-facts", cursor_type="row", zebra_stripes=True)
            yield Static(id="compare-detail")
            with Horizontal(id="compare-sides"):
                for side in ("a", "b"):
                    with Vertical(classes="compare-side"):
                        yield Static(id=f"title-{side}", classes="side-title")
                        yield Static(id=f"measures-{side}", classes="side-measures")
                        yield CarrierView(id=f"carrier-{side}", classes="compare-carrier")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one("#compare-facts", DataTable)
        for label, key in FACT_COLUMNS:
            table.add_column(label, key=key)
        table.fixed_columns = 1
        self._read()
        table.focus()

    @work(thread=True, group="compare-load", exclusive=True, exit_on_error=False,
          description="read the two rows to compare")
    def _read(self) -> None:
        pair = read_compare(self.db_path, self.sweep_id, self.row_a, self.row_b)
        if not get_current_worker().is_cancelled:
            self.post_message(PairRead(pair))

    @on(PairRead)
    def pair_read(self, message: PairRead) -> None:
        """Both rows are in: show the fold asked for (or the last both have)."""
        self.pair = message.pair
        a, b = self.pair.a, self.pair.b
        self.row_b = b.row.id
        self._show_title()
        counts = [n for n in (len(a.folds), len(b.folds)) if n]  # a row without folds aside
        last = max(0, min(counts, default=1) - 1)
        start = self._start if self._start is not None else last
        index = min(max(0, start), max(1, len(a.folds), len(b.folds)) - 1)
        if index == self.fold_index:
            self._build_fold()  # a reactive set to the value it has fires no watcher
        else:
            self.fold_index = index

    def _show_title(self) -> None:
        if self.pair is None:
            return
        a, b = self.pair.a.row, self.pair.b.row
        same = [n for n, x, y in (("model", a.model, b.model), ("arm", a.arm, b.arm),
                                  ("scenario", a.scenario, b.scenario),
                                  ("repeat", a.repeat, b.repeat)) if x == y]
        self.query_one("#compare-title", Static).update(Text.assemble(
            ("Compare", "bold"), f" row {a.id} (A, left) with row {b.id} (B, right)",
            (f" · same {', '.join(same)}" if same else "", "dim"),
            (" · only differing facts" if self.differing_only else "", "italic")))

    def watch_fold_index(self, index: int) -> None:
        self._build_fold()

    def _build_fold(self) -> None:
        if self.pair is None or self.fold_index < 0:
            return
        self._serial += 1
        layouts = (self.query_one("#carrier-a", CarrierView).layout_request(),
                   self.query_one("#carrier-b", CarrierView).layout_request())
        self._build(self._serial, self.pair, self.fold_index, layouts)

    @work(thread=True, group="compare-fold", exclusive=True, exit_on_error=False,
          description="align both rows' facts at a fold and lay out their carriers")
    def _build(self, serial: int, pair: ComparePair, index: int,
               layouts: tuple[tuple[int, bool], tuple[int, bool]]) -> None:
        a, b = pair.a, pair.b
        facts = align_facts(pair.facts, a.folds[index] if index < len(a.folds) else None,
                            b.folds[index] if index < len(b.folds) else None, a.checks, b.checks)
        built = CompareBuilt(serial, index, facts, _carrier_lines(a, pair, index, layouts[0]),
                             _carrier_lines(b, pair, index, layouts[1]))
        if not get_current_worker().is_cancelled:
            self.post_message(built)

    @on(CompareBuilt)
    def fold_built(self, message: CompareBuilt) -> None:
        """Draw a built fold (one overtaken by a later step is dropped)."""
        if message.serial != self._serial or self.pair is None:
            return
        self.facts = message.facts
        a, b = self.pair.a, self.pair.b
        self.query_one("#title-a", Static).update(side_title("A", a, message.index))
        self.query_one("#title-b", Static).update(side_title("B", b, message.index))
        self.query_one("#measures-a", Static).update(side_measures(a, message.index))
        self.query_one("#measures-b", Static).update(side_measures(b, message.index))
        self.query_one("#carrier-a", CarrierView).set_layout(message.carrier_a)
        self.query_one("#carrier-b", CarrierView).set_layout(message.carrier_b)
        self._fill_facts()
        self.shown = message.index

    def _fill_facts(self) -> None:
        table = self.query_one("#compare-facts", DataTable)
        at = table.cursor_row
        table.clear()
        for pair in self.facts:
            if self.differing_only and not pair.differs:
                continue
            style = "bold" if pair.differs else ""
            cells = {
                "label": Text(("★ " if pair.graded else "  ") + _one(pair.label), style=style),
                "a": Text(state_word(pair.a), style=style),
                "b": Text(state_word(pair.b), style=style),
                "holds_a": Text(holds_text(pair.a)), "holds_b": Text(holds_text(pair.b)),
                "answer_a": Text(pair.answer_a or "—"), "answer_b": Text(pair.answer_b or "—"),
                "expected": Text(_one(pair.expected))}
            table.add_row(*(cells[key] for _, key in FACT_COLUMNS), key=pair.label)
        if table.row_count:
            table.move_cursor(row=min(max(0, at), table.row_count - 1))
        self.show_detail()

    @on(DataTable.RowHighlighted, "#compare-facts")
    def show_detail(self, event: DataTable.RowHighlighted | None = None) -> None:
        """The highlighted fact whole under the table (it wraps: values are never cut)."""
        if self.pair is None:
            return
        table = self.query_one("#compare-facts", DataTable)
        pair = None
        if table.row_count and table.cursor_row >= 0:
            label = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            pair = next((p for p in self.facts if p.label == label), None)
        self.query_one("#compare-detail", Static).update(
            pair_detail(pair, self.pair.a, self.pair.b, self.fold_index))

    def action_step(self, delta: int) -> None:
        """Step both rows to the previous or next fold."""
        if self.pair is None:
            return
        folds = max(len(self.pair.a.folds), len(self.pair.b.folds))
        if folds:
            self.fold_index = min(max(0, self.fold_index + delta), folds - 1)

    def action_scroll_facts(self, direction: int) -> None:
        """Scroll the facts table sideways (← and → step the folds)."""
        self.query_one("#compare-facts", DataTable).scroll_relative(x=16 * direction,
                                                                     animate=False)

    def action_only_differing(self) -> None:
        """Show only the facts that differ between the rows (or every fact again)."""
        self.differing_only = not self.differing_only
        self._show_title()
        if self.pair is not None:
            self._fill_facts()

    def action_swap(self) -> None:
        """Put row B on the left and row A on the right."""
        if self.pair is None:
            return
        self.pair = ComparePair(self.pair.b, self.pair.a, self.pair.facts)
        self.row_a, self.row_b = self.pair.a.row.id, self.pair.b.row.id
        self._show_title()
        self._build_fold()

    def action_toggle_wrap(self) -> None:
        """Wrap both carriers at their width, or not."""
        views = list(self.query(LiteralLines))
        wrap = not views[0].wrap if views else True
        for view in views:
            view.wrap = wrap

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """A failed read is one line on screen, never a crash."""
        if event.state == WorkerState.ERROR and event.worker.group == "compare-load":
            message = literal(str(event.worker.error), keep_newlines=False)
            self.query_one("#compare-title", Static).update(Text(message, style="bold"))
            self.notify(message, severity="error", timeout=10, markup=False)
            return True
        return False
