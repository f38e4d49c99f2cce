"""The cell screen: the rows of one model × arm, stepped through fold by fold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, get_current_worker

from foldscope.core.answers import checks_table
from foldscope.core.fabrication import answer_counts
from foldscope.core.find import FindResult, Query, find, row_findable
from foldscope.core.forensics import FactSpan, fact_spans
from foldscope.core.row import FoldRecord, RowRecord, StoredCheck
from foldscope.core.scenario import Fact
from foldscope.core.status import RowStatus
from foldscope.core.text import literal
from foldscope.engine.userconfig import current_author
from foldscope.engine.views import read_cell_changes
from foldscope.engine.writes import SetFlag, WriteStatus
from foldscope.ui.messages import WriteDone
from foldscope.ui.screens.compare import CompareScreen, MarksRows, marked_row
from foldscope.ui.widgets.answer_table import AnswerTable
from foldscope.ui.widgets.carrier_view import CarrierView
from foldscope.ui.widgets.filter_bar import FilterBar
from foldscope.ui.widgets.fold_inspector import FoldInspector
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.literal_lines import LiteralLines
from foldscope.ui.widgets.memory import release_drawn_lines
from foldscope.ui.widgets.rows_table import SORTABLE, RowsTable
from foldscope.ui.writer import StoreWrites


def row_error_text(row: RowRecord | None) -> str | None:
    """The line naming why a failed row ended (None for a row that has not failed), with its
    id, the attempt and what happens next."""
    if row is None or row.status != RowStatus.FAILED:
        return None
    error = literal(row.infra_error or "no error was recorded", keep_newlines=False)
    retry = ("an infrastructure failure: resuming the sweep runs it again while it has "
             "attempts left (run --resume ID --retry-failed once they are used up)"
             if row.retryable else "a rejected request: it is not retried")
    return (f"✗ row {row.id} failed (attempt {row.attempt + 1}, after {row.folds_done} "
            f"folds): {error} · {retry}")


def answer_detail_text(check: StoredCheck | None) -> Text:
    """One checked answer, whole: label, expected and answered values (literal), its class and
    the final carrier's state of the fact."""
    if check is None:
        return Text("no checked answer (the row has not finished, or it failed)", style="dim")
    one = lambda s: literal(s, keep_newlines=False)  # noqa: E731 - local shorthand
    return Text.assemble(
        (one(check.label), "bold"), "  expected ", (one(check.expected), "bold"),
        "  answered ", (one(check.found) if check.found is not None else "—", "bold"),
        (f"  · {check.classification} · final carrier: "
         f"{check.carrier_state or ('held it' if check.in_carrier else 'lacked it')}", "dim"))


@dataclass
class CellData:
    """Everything the cell screen shows, merged from its reads."""

    rows: list[RowRecord]
    folds: dict[int, list[FoldRecord]]
    facts: list[tuple[str, str, bool]]
    fact_objects: list[Fact]
    checks: dict[int, list[StoredCheck]]
    answer_spans: dict[int, list[FactSpan]]
    """Per row: its answer's spans of the graded facts (found in the read's thread)."""


def answer_spans(rows: list[RowRecord], facts: list[Fact]) -> dict[int, list[FactSpan]]:
    """Each row's answer's spans of the graded facts, as the Answer tab highlights them."""
    graded = [f for f in facts if f.graded]
    return {r.id: fact_spans(r.answer or "", graded) for r in rows}


@dataclass
class RowsFound(Message):
    """The rows a filter matched (found in a thread)."""

    query: Query
    row_ids: set[int]
    result: FindResult


@dataclass
class CellChanges(Message):
    """What changed in the cell since the last read (read from the store in a thread)."""

    rows: list[RowRecord]
    """The rows whose change sequence moved."""
    folds: dict[int, tuple[int, list[FoldRecord]]]
    """Per changed row: the fold index read from, and the folds from there on."""
    checks: dict[int, list[StoredCheck]]
    """Per changed row: its checks as now stored."""
    facts: list[Fact] | None
    """The scenario's planted facts (graded first), on the first read with rows only."""
    seq: int
    """The highest change sequence read."""
    answer_spans: dict[int, list[FactSpan]]
    """Per changed row: its answer's spans of the graded facts."""


CELL_SCREEN = "foldscope-cell"
"""The name the app's reused cell screen is installed under (``open_cell``)."""

WARM_AFTER_S = 0.5
"""How long composing the cell screen ahead waits again when keys are being pressed."""

HOLD_FRAMES_S = 0.5
"""The longest a cell screen being opened holds the app's frames for its first read."""


class CellScreen(Screen[None]):
    """The rows of one (scenario, model, arm) cell; pick a row, step through its folds."""

    DEFAULT_CSS = """
    CellScreen {
        #cell-body { padding: 0 1; }
        #cell-title { margin: 1 0; }
        #rows { height: auto; max-height: 12; }
        #tabs { height: 1fr; }
        #answer-title { margin: 1 0 0 0; color: $text-muted; }
        #answer-crosstab { color: $text-muted; }
        #answer-detail { height: auto; max-height: 6; }
        #row-error { color: $error; display: none; height: auto; }
        #answer-pane { height: 1fr; }
        #answers { width: 1fr; }
        #answer-text { width: 1fr; }
        &.-short {
            #cell-title, #answer-title { margin: 0; }
            #rows { max-height: 5; }
            #answer-crosstab { display: none; }
        }
        &.-narrow {
            #answer-pane { layout: vertical; }
            #answers { width: 100%; height: 3fr; }
            #answer-text { width: 100%; height: 2fr; }
        }
    }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back to the grid (with a filter in force: "
                "clear it first)"),
        Binding("slash", "filter", "Filter", key_display="/", tooltip="Filter the rows: "
                "class: status: model: arm: label: text: or a word, /regex/ over answers and carriers "
                "(the README has the syntax); the line says N of M"),
        Binding("left_square_bracket", "step(-1)", "Prev fold"),
        Binding("right_square_bracket", "step(1)", "Next fold"),
        Binding("left", "step(-1)", "Prev fold", show=False, priority=True,
                tooltip="← and → step folds too"),
        Binding("right", "step(1)", "Next fold", show=False, priority=True),
        Binding("c", "toggle_chunk", "Chunk/diff", tooltip="Beside the carrier: the input chunk "
                "of the fold (planted values highlighted), or the diff from the fold before"),
        Binding("o", "show_tab('folds-tab')", "Folds", tooltip="The row's folds: each planted "
                "fact's state after every fold, beside the carrier"),
        Binding("a", "show_tab('answer-tab')", "Answer", tooltip="The row's recall answer, "
                "fact by fact with its class"),
        Binding("s", "sort_rows", "Sort rows", tooltip="Order the rows by the next column "
                "(row, repeat, position, status, recall, validity, error, headings, fill, folds, "
                "catch-up, parse, cost, answer); a click on a header sorts by it"),
        Binding("S", "reverse_rows", "Reverse", show=False,
                tooltip="Reverse the rows' order"),
        Binding("w", "toggle_wrap", "Wrap", tooltip="Wrap the carrier, diff, chunk and answer "
                "panes at their width, or show long lines whole"),
        Binding("m", "mark_row", "Mark row", tooltip="Mark the highlighted row for a comparison "
                "(again: unmark); v on another row, in this cell or another, compares the two"),
        Binding("v", "compare", "Compare", tooltip="The highlighted row beside the marked one, "
                "carrier by carrier at the same fold with the facts aligned; with none marked, "
                "beside its counterpart: the same model, scenario and repeat under the other arm "
                "of j vs q (else the sweep's first other arm)"),
    ]
    """Key bindings of the cell screen."""

    # Neither repaints the screen when set (a reactive's default): the widgets that show the
    # row and fold repaint what changed, and a whole-screen repaint was half of a fold step.
    row_id: reactive[int | None] = reactive(None, repaint=False)
    """The row being inspected."""
    fold_index: reactive[int] = reactive(0, repaint=False)
    """The fold whose carrier and fact states are shown."""

    def __init__(self, db_path: str, sweep_id: str, scenario: str | None, model: str,
                 arm: str, *, sweep_running: Callable[[], bool] | None = None,
                 row_id: int | None = None) -> None:
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.scenario, self.model, self.arm = scenario, model, arm
        self.sweep_running = sweep_running or (lambda: True)
        """Whether the sweep's runner is alive (rows it left running read interrupted)."""
        self._data: CellData | None = None
        self._seq: int | None = None
        self._loading: Worker[Any] | None = None
        self._open_row = row_id
        """The row to open on (at its last fold) instead of the first, once it is read."""
        self.pending = 0
        """Flag writes asked for whose outcome has not come back (tests wait for 0)."""
        self._holding = False
        """The app's frames are held until the cell is drawn (``hold_frames``)."""
        self._styled_for: int | None = None
        """The app's CSS generation this screen's styles were last brought up to date for."""
        self._poll: Timer | None = None
        self._aimed = True
        """It shows a cell (a screen composed ahead, ``warm_cell_screen``, shows none yet)."""
        self._banner: str | None = None
        """The failed row's error the banner holds (None: it is empty)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="cell-body"):
            yield Static(id="cell-title")
            yield FilterBar("rows", id="rows-filter")
            yield RowsTable(id="rows")
            yield Static(id="row-error")
            with TabbedContent(id="tabs"):
                with TabPane("Folds", id="folds-tab"):
                    yield FoldInspector(id="inspector")
                with TabPane("Answer", id="answer-tab"):
                    yield Static(id="answer-title")
                    yield Static(id="answer-crosstab")
                    yield Static(id="answer-detail")
                    with Horizontal(id="answer-pane"):
                        yield AnswerTable(id="answers")
                        yield CarrierView(id="answer-text")
        yield KeysFooter()

    def hold_frames(self) -> None:
        """Draw nothing of this screen until its rows and the row's fold are drawn (at most
        ``HOLD_FRAMES_S``): the key that opens it answers with the whole cell in one frame
        instead of an empty screen, then its rows, then its fold, each a full repaint."""
        if not self._holding:
            self._holding = True
            self.app._begin_batch()  # what App.batch_update does, across the reads' workers
            self.app.set_timer(HOLD_FRAMES_S, self._release_frames)

    def _release_frames(self) -> None:
        if self._holding:
            self._holding = False
            self.app._end_batch()
            self.refresh()  # the whole screen, once: the frames held were never rendered

    def _compositor_refresh(self) -> None:
        # While frames are held Textual still renders the layout passes (it only drops the
        # result): ~20 ms of a cell's opening spent on a frame nobody sees.
        if not self._holding:
            super()._compositor_refresh()

    @on(FoldInspector.Drawn)
    def _fold_drawn(self) -> None:
        self._release_frames()

    def on_unmount(self) -> None:
        self._release_frames()
        release_drawn_lines()

    def on_mount(self) -> None:
        # Rows still folding are followed live; a finished cell is read once.
        self._poll = self.set_interval(1.0, self._refresh_if_running)
        if not self._aimed:  # composed ahead: nothing to read until a cell is opened on it
            self._poll.pause()
            self.call_after_refresh(self._lay_out_ahead)
            return
        self._title(simulated=False)
        self.load()
        # A cell opened before the screen was composed ahead: its widgets' CSS is in the
        # stylesheet now, so the themes can be parsed ahead from here (once keys pause).
        self.call_after_refresh(self._parse_themes_ahead)

    def _parse_themes_ahead(self) -> None:
        parse_ahead = getattr(self.app, "parse_themes_ahead", None)
        if parse_ahead is not None:
            parse_ahead()

    def _lay_out_ahead(self) -> None:
        """Arrange the screen composed ahead at the terminal's size, as its first showing
        would (its styles are the stylesheet's as it stands: no restyle on that showing)."""
        if self.is_attached and not self.is_current:
            self._styled_for = self.app._css_update_count
            self._refresh_layout(self.app.size)
        # Its widgets' CSS is in the stylesheet now: the other themes can be parsed ahead.
        self._parse_themes_ahead()

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler. A reused screen (``open_cell``) whose styles are
        # up to date with the app's CSS (no theme switch since) is not restyled whole: its
        # ~50 widgets restyled were a fifth of the key that opened it. A theme switched
        # while it was away, or its first showing, restyles as Textual would.
        count = self.app._css_update_count
        if self._styled_for == count:
            event.refresh_styles = False
        self._styled_for = count
        if self._poll is not None:
            self._poll.resume()

    def on_screen_suspend(self) -> None:
        if self._poll is not None:
            self._poll.pause()  # a cell not on show is not followed
        self._release_frames()
        release_drawn_lines()

    def aim(self, db_path: str, sweep_id: str, scenario: str | None, model: str, arm: str, *,
            sweep_running: Callable[[], bool] | None = None,
            row_id: int | None = None) -> None:
        """Show another cell on this (mounted, not shown) screen, as a new screen would show
        it: no filter, rows in execution order, the Folds tab, the diff beside the carrier,
        every pane wrapped and scrolled home, the rows table focused; reads still running for
        the cell before are dropped. Marks for a comparison are the app's and stay."""
        self.workers.cancel_group(self, "cell-load")
        self.workers.cancel_group(self, "cell-filter")
        self._aimed = True
        self.db_path, self.sweep_id = db_path, sweep_id
        self.scenario, self.model, self.arm = scenario, model, arm
        self.sweep_running = sweep_running or (lambda: True)
        self._data, self._seq, self._loading, self._open_row = None, None, None, row_id
        self.set_reactive(CellScreen.row_id, None)
        self.set_reactive(CellScreen.fold_index, 0)
        self.query_one(FilterBar).reset()
        rows = self.query_one(RowsTable)
        rows.reset()
        self.query_one("#row-error", Static).display = False
        self.query_one(FoldInspector).reset()
        self.query_one(AnswerTable).reset()
        self.query_one("#answer-text", CarrierView).reset()
        for name in ("#answer-title", "#answer-crosstab", "#answer-detail"):
            self.query_one(name, Static).update("")
        tabs = self.query_one(TabbedContent)
        if tabs.active != "folds-tab":
            tabs.active = "folds-tab"
        self.set_focus(rows, scroll_visible=False)
        self._title(simulated=False)
        self.load()

    def load(self) -> Worker[Any] | None:
        """Read what changed in the cell since the last read, unless a read is running."""
        if self._loading is not None and not self._loading.is_finished:
            return None  # polls never overlap: this tick is skipped
        data = self._data
        known = {rid: len(folds) for rid, folds in data.folds.items()} if data else {}
        facts = data.fact_objects if data else []
        self._loading = self._read_changes(self._seq, known, facts)
        return self._loading

    @work(thread=True, group="cell-load", exit_on_error=False,
          description="read what changed in the cell's rows and folds")
    def _read_changes(self, since: int | None, known: dict[int, int],
                      facts: list[Fact]) -> None:
        """Read the rows changed since ``since``, their new folds and their checks, and find
        the facts in their answers (``facts``: the planted facts, unless not read yet)."""
        read = read_cell_changes(self.db_path, self.sweep_id, self.scenario, self.model, self.arm,
                                 since=since, known=known, need_facts=not facts)
        planted = read.facts if read.facts is not None else facts
        spans = answer_spans(read.rows, planted)
        if not get_current_worker().is_cancelled:
            self.post_message(CellChanges(read.rows, read.folds, read.checks, read.facts,
                                          read.seq, spans))

    @on(CellChanges)
    def merge_changes(self, message: CellChanges) -> None:
        """Merge a read into what the screen holds, and show it."""
        old = self._data
        self._seq = message.seq
        if old is not None and not message.rows:
            return
        rows = {r.id: r for r in old.rows} if old else {}
        folds = dict(old.folds) if old else {}
        checks = dict(old.checks) if old else {}
        spans = dict(old.answer_spans) if old else {}
        for r in message.rows:
            rows[r.id] = r
            start, new = message.folds[r.id]
            folds[r.id] = folds.get(r.id, [])[:start] + new
            checks[r.id] = message.checks[r.id]
            spans[r.id] = message.answer_spans[r.id]
        planted = message.facts if message.facts is not None else (
            old.fact_objects if old else [])
        self.show_rows(CellData(sorted(rows.values(), key=lambda r: r.position), folds,
                                [(f.label, f.value, f.graded) for f in planted], planted, checks,
                                spans))

    def show_rows(self, message: CellData) -> None:
        """Map a fresh read onto the screen, keeping the row (and fold) being inspected.

        Rows already listed are updated cell by cell; a fold index at the newest fold follows
        new folds as they land, one set further back stays where the person put it.
        """
        old = self._data
        self._data = message
        simulated = any(r.simulated for r in message.rows)
        self._title(simulated)
        self.query_one(RowsTable).show(message.rows, message.folds, self.sweep_running())
        if self.query_one(FilterBar).applied is not None:
            self._find(self.query_one(FilterBar).applied)  # new folds may match, or stop matching
        if not message.rows:
            self._release_frames()  # nothing more to wait for
            return
        if self._open_row is not None and self._open_row in {r.id for r in message.rows}:
            row, self._open_row = self._open_row, None
            table = self.query_one(RowsTable)
            table.move_cursor(row=table.get_row_index(str(row)))
            self.row_id = row
            return
        if self.row_id is None or self.row_id not in {r.id for r in message.rows}:
            self.row_id = message.rows[0].id
            return
        folds = self._folds()
        previous = len(old.folds.get(self.row_id, [])) if old else 0
        if len(folds) != previous:  # tables are only rebuilt when there is something new
            if self.fold_index >= previous - 1:
                self.fold_index = max(0, len(folds) - 1)  # was at the newest: follow it
            self._show_fold()
        row_now = next(r for r in message.rows if r.id == self.row_id)
        row_then = next((r for r in old.rows if r.id == self.row_id), None) if old else None
        if row_then is None or row_then.status != row_now.status:
            self._show_answer()

    def _title(self, simulated: bool) -> None:
        # Ids and names are data: shown literally, on one line.
        model, arm, scenario, sweep = (literal(x, keep_newlines=False) for x in (
            self.model, self.arm, self.scenario or "", self.sweep_id))
        marked = marked_row(self.app)
        self.query_one("#cell-title", Static).update(Text.assemble(
            (f"{model} × arm {arm}", "bold"), f" · {scenario} · sweep {sweep}",
            (" · simulated replies", "italic") if simulated else "",
            (f" · row {marked} marked for compare", "bold") if marked is not None else ""))

    def _refresh_if_running(self) -> None:
        if not self._aimed:
            return
        if self._data is None or any(not r.finished for r in self._data.rows):
            self.load()

    @on(DataTable.RowHighlighted, "#rows")
    def pick_row(self, event: DataTable.RowHighlighted) -> None:
        """Inspect the highlighted row from its last fold."""
        if event.row_key.value is not None:
            self.row_id = int(event.row_key.value)

    def watch_row_id(self, row_id: int | None) -> None:
        folds = self._folds()
        self.fold_index = max(0, len(folds) - 1)
        self._show_fold()
        self._show_answer()

    def _show_answer(self) -> None:
        """Map the row's recall answer and its per-fact checks onto the Answer tab."""
        if not self.is_mounted or self._data is None:
            return
        if self.row_id is None:  # no row shown (a filter matching none): nothing of one
            self.query_one(AnswerTable).show([])
            self.query_one("#answer-text", CarrierView).show("", [])
            return
        row = next((r for r in self._data.rows if r.id == self.row_id), None)
        checks = self._data.checks.get(self.row_id, [])
        self.query_one(AnswerTable).show(checks)
        self.show_answer_detail()
        answer = (row.answer if row else None) or ""
        self._answer_summary(checks)
        self.query_one("#answer-text", CarrierView).show(
            answer, self._data.answer_spans.get(self.row_id, ()))

    @on(DataTable.RowHighlighted, "#answers")
    def show_answer_detail(self, event: DataTable.RowHighlighted | None = None) -> None:
        """The highlighted answer whole, wrapping at the width: label, expected, answered,
        class and whether the final carrier held it (values never cut)."""
        check = self.query_one(AnswerTable).current()
        self.query_one("#answer-detail", Static).update(answer_detail_text(check))

    def _answer_summary(self, checks: list[StoredCheck]) -> None:
        counts = answer_counts(checks)
        flagged = sum(c.flagged for c in checks)
        row = checks_table(checks)
        cell = checks_table(c for cs in (self._data.checks.values() if self._data else [])
                            for c in cs)
        self.query_one("#answer-title", Static).update(Text(
            " · ".join(f"{n} {k}" for k, n in counts.items()) + f" · ⚑ {flagged} flagged by hand"))
        self.query_one("#answer-crosstab", Static).update(Text(
            "final carrier had it × answer got it — row: "
            + f"had·got {row.held_correct}  had·missed {row.held_wrong}  "
            + f"lacked·got {row.lost_correct}  lacked·missed {row.lost_wrong}"
            + " · cell: "
            + f"had·got {cell.held_correct}  had·missed {cell.held_wrong}  "
            + f"lacked·got {cell.lost_correct}  lacked·missed {cell.lost_wrong}"))

    @on(AnswerTable.FlagToggled)
    def flag(self, event: AnswerTable.FlagToggled) -> None:
        """Record a person's fabrication flag through the app's writer (by the settings'
        author); the flag shows at once and is put back to what the store holds if the write is
        refused or fails."""
        self._set_flag(event.check_id, event.flagged)
        app = self.app
        assert isinstance(app, StoreWrites)
        self.pending += 1
        app.write(SetFlag(event.check_id, event.flagged, current_author()), self)

    def _set_flag(self, check_id: int, flagged: bool) -> None:
        for checks in (self._data.checks.values() if self._data else []):
            for i, check in enumerate(checks):
                if check.id == check_id:
                    checks[i] = replace(check, flagged=flagged)
        if self._data is not None and self.row_id is not None:
            self._answer_summary(self._data.checks.get(self.row_id, []))

    @on(WriteDone)
    def flag_written(self, message: WriteDone) -> None:
        """A flag's write ended: refused or failed, the flag shows what the store holds and the
        person is told (a failed one: not saved)."""
        self.pending -= 1
        outcome = message.outcome
        if not isinstance(outcome.op, SetFlag) or outcome.saved:
            return
        if outcome.known:
            stored = outcome.stored is not None and outcome.stored.verdict == "fabricated"
        else:
            stored = not outcome.op.flagged
        self._set_flag(outcome.op.check_id, stored)
        self.query_one(AnswerTable).set_flag(outcome.op.check_id, stored)
        failed = outcome.status is WriteStatus.FAILED
        text = (f"flag NOT saved ({outcome.attempts} attempts): {outcome.message}"
                if failed else outcome.message or "refused")
        self.notify(literal(text, keep_newlines=False), severity="error" if failed else "warning",
                    timeout=10 if failed else 5, markup=False)

    def watch_fold_index(self, index: int) -> None:
        self._show_fold()

    # -- compare -------------------------------------------------------------------------

    def action_mark_row(self) -> None:
        """Mark the highlighted row for a comparison, or unmark it."""
        app = self.app
        if not isinstance(app, MarksRows) or self.row_id is None:
            return
        app.marked_row = None if app.marked_row == self.row_id else self.row_id
        self._title(any(r.simulated for r in self._data.rows) if self._data else False)
        self.notify(f"row {self.row_id} marked: v on another row compares the two"
                    if app.marked_row is not None else f"row {self.row_id} unmarked", timeout=4)

    def action_compare(self) -> None:
        """Open the highlighted row beside the marked one (or its counterpart)."""
        if self.row_id is None:
            return
        marked = marked_row(self.app)
        if marked is not None and marked != self.row_id:
            a, b = marked, self.row_id
        else:
            a, b = self.row_id, None
        self.app.push_screen(CompareScreen(self.db_path, self.sweep_id, a, b,
                                           fold=self.fold_index))

    # -- filter --------------------------------------------------------------------------

    def action_filter(self) -> None:
        """Open the filter line (``/``)."""
        self.query_one(FilterBar).open()

    def action_back(self) -> None:
        """Escape: clear a filter in force, else go back to the grid."""
        bar = self.query_one(FilterBar)
        if bar.active:
            bar.clear()
        else:
            self.app.pop_screen()

    @on(FilterBar.Changed, "#rows-filter")
    def filter_changed(self, event: FilterBar.Changed) -> None:
        """A new query (or none): find its rows off the UI thread."""
        if event.query is None:
            self.workers.cancel_group(self, "cell-filter")
            self.query_one(RowsTable).set_visible(None)
            return
        self._find(event.query)

    @on(FilterBar.Closed, "#rows-filter")
    def filter_closed(self, event: FilterBar.Closed) -> None:
        """Editing ended: the rows take the keys again."""
        self.query_one(RowsTable).focus()

    def _find(self, query: Query | None) -> None:
        if query is not None and self._data is not None:
            self._find_rows(query, self._data, self.sweep_running())

    @work(thread=True, group="cell-filter", exclusive=True, exit_on_error=False,
          description="find the rows a filter matches")
    def _find_rows(self, query: Query, data: CellData, live: bool) -> None:
        """Match the query against every row (answers and carriers of every fold included;
        its status as the table shows it)."""
        worker = get_current_worker()
        subjects = [row_findable(r, data.folds.get(r.id, ()), data.checks.get(r.id, ()),
                                 sweep_running=live)
                    for r in data.rows]
        result = find(query, subjects, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(RowsFound(query, {data.rows[i].id for i in result.matched},
                                        result))

    @on(RowsFound)
    def rows_found(self, message: RowsFound) -> None:
        """Show only the rows found (a result for a query since replaced is dropped)."""
        bar = self.query_one(FilterBar)
        if bar.applied is not message.query:
            return
        table = self.query_one(RowsTable)
        table.set_visible(message.row_ids)
        bar.show_count(len(message.row_ids), table.total, message.result.note())
        if not message.row_ids:  # nothing matches: the panes must not show a row left out
            self.row_id = None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While the filter is typed, the arrows and letters belong to it.
        if isinstance(self.focused, Input) and action in ("step", "toggle_chunk", "show_tab",
                                                           "sort_rows", "reverse_rows",
                                                           "toggle_wrap", "filter", "mark_row",
                                                           "compare"):
            return False
        return True

    def action_sort_rows(self) -> None:
        """Order the rows by the next column."""
        table = self.query_one(RowsTable)
        table.sort_by(SORTABLE[(SORTABLE.index(table.sort_column) + 1) % len(SORTABLE)],
                      table.sort_reverse)  # the header marks the column and the order

    def action_reverse_rows(self) -> None:
        """Reverse the rows' order."""
        table = self.query_one(RowsTable)
        table.sort_by(table.sort_column, not table.sort_reverse)

    def action_toggle_wrap(self) -> None:
        """Wrap the text panes (carrier, diff, chunk, answer) at their width, or not."""
        views = list(self.query(LiteralLines))
        wrap = not views[0].wrap if views else True
        for view in views:
            view.wrap = wrap

    def action_show_tab(self, tab: str) -> None:
        """Switch between the Folds and Answer tabs (the answer table takes the keys)."""
        tabs = self.query_one(TabbedContent)
        if tab == "answer-tab":
            tabs.active = tab
            # Focus once the pane is shown (a hidden widget cannot take focus).
            self.call_after_refresh(self.query_one(AnswerTable).focus)
        else:
            # Move the focus out of the answer pane first: focus left inside a pane that is
            # being hidden makes the tabs switch back to it (so `o` needed two presses).
            self.query_one("#rows").focus()
            tabs.active = tab

    def action_step(self, delta: int) -> None:
        """Step to the previous or next fold of the row."""
        folds = self._folds()
        if folds:
            self.fold_index = min(max(0, self.fold_index + delta), len(folds) - 1)

    def _folds(self) -> list[FoldRecord]:
        if self._data is None or self.row_id is None:
            return []
        return self._data.folds.get(self.row_id, [])

    def _show_fold(self) -> None:
        """Map the selected fold onto the fold inspector, and a failed row's error above it."""
        if not self.is_mounted or self._data is None:
            return
        row = next((r for r in self._data.rows if r.id == self.row_id), None)
        inspector = self.query_one(FoldInspector)
        error = row_error_text(row)
        banner = self.query_one("#row-error", Static)
        if error != self._banner:  # an update lays the screen out: only when it changed
            self._banner = error
            banner.update(Text(error or "", style="bold"))
        banner.display = error is not None
        if row is None and self.query_one(FilterBar).applied is not None:
            inspector.empty_text = "no row matches the filter (escape clears it)"
        else:
            inspector.empty_text = (f"row {row.id}: no folds committed" if row is not None
                                    else "no folds committed for this row yet")
        if row is not None and row.status == RowStatus.FAILED:
            inspector.empty_text += " — it failed before its first fold (see the error above)"
        elif row is not None and row.status == RowStatus.PLANNED:
            inspector.empty_text += " yet (not started)"
        inspector.show(row.scenario if row else None, self._data.fact_objects, self._folds(),
                       self.fold_index, row.id if row is not None else None)

    def action_toggle_chunk(self) -> None:
        """Show the input chunk of the fold beside the carrier, or the diff again."""
        self.query_one(FoldInspector).toggle_chunk()


def open_cell(app: App[Any], db_path: str, sweep_id: str, scenario: str | None, model: str,
              arm: str, *, sweep_running: Callable[[], bool] | None = None,
              row_id: int | None = None) -> CellScreen:
    """Show a cell (from the grid or the review), its rows and the row's fold in one frame.

    The app keeps one cell screen installed and aims it at each cell opened: composing,
    mounting and styling a new screen's ~50 widgets was most of the key's time. While that
    screen is on the stack (a cell opened from a screen above it), a new one is pushed and
    removed when closed, as before.
    """
    installed = app._installed_screens.get(CELL_SCREEN)
    screen: CellScreen
    if (isinstance(installed, CellScreen) and installed.is_mounted
            and installed not in app.screen_stack):
        screen = installed
        screen.aim(db_path, sweep_id, scenario, model, arm, sweep_running=sweep_running,
                   row_id=row_id)
    else:
        screen = CellScreen(db_path, sweep_id, scenario, model, arm,
                            sweep_running=sweep_running, row_id=row_id)
        if installed is None:
            app.install_screen(screen, CELL_SCREEN)
    screen.hold_frames()
    app.push_screen(screen)
    return screen


def warm_cell_screen(app: App[Any], db_path: str, sweep_id: str) -> None:
    """Compose and mount the app's cell screen ahead, not shown (the grid is up and keys have
    paused), so even the first cell opened takes only the aiming (``open_cell``)."""
    if CELL_SCREEN in app._installed_screens:
        return
    screen = CellScreen(db_path, sweep_id, None, "", "")
    screen._aimed = False
    # Born with the width and height classes its first layout would give it (each class
    # changed later restyles the whole screen).
    size = app.size
    for breakpoints, extent in ((app.HORIZONTAL_BREAKPOINTS, size.width),
                                (app.VERTICAL_BREAKPOINTS, size.height)):
        screen.add_class(*screen._get_breakpoint_classes(extent, breakpoints or []))
    app.install_screen(screen, CELL_SCREEN)
    app._load_screen_css(screen)
    app._register(app, screen)  # what pushing it first does: composed and mounted, not shown
