"""The fabrication screen: how failing rows failed per arm and model, and the confident wrong
values of a sweep for a person to mark fabricated, not fabricated or unsure, fast, by keyboard."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.errors import ConfigError
from foldscope.core.fabrication import FailingRows, FlagAgreement, HumanVerdict, ReviewValue
from foldscope.core.find import FindResult, Query, find, value_findable
from foldscope.core.text import literal
from foldscope.engine.review import AgreementBasis, figure
from foldscope.engine.rulefiles import load_signatures
from foldscope.engine.userconfig import current_author
from foldscope.engine.views import read_review, read_row_texts
from foldscope.engine.writes import SetVerdict, UndoVerdict, WriteStatus
from foldscope.ui.messages import WriteDone
from foldscope.ui.screens.cell import open_cell
from foldscope.ui.screens.compare import CompareScreen, marked_row
from foldscope.ui.widgets.filter_bar import FilterBar
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.reason_input import ReasonInput
from foldscope.ui.widgets.review_table import SORT_KEYS, ReviewTable, detail_text
from foldscope.ui.writer import StoreWrites

FAILING_COLUMNS = ("model", "arm", "valid rows", "failing", "fabricate, never abstain",
                   "abstain somewhere", "neither", "stopped early", "items reached")
"""The failing-row table's columns."""


@dataclass
class ReviewData(Message):
    """Everything the screen shows, read from the store in a thread."""

    failing: list[FailingRows]
    values: list[ReviewValue]
    agreement: AgreementBasis
    author: str
    warning: str | None = None


@dataclass
class ValuesFound(Message):
    """The review values a filter matched (found in a thread)."""

    query: Query
    check_ids: set[int]
    result: FindResult


def agreement_text(a: FlagAgreement, listed: int) -> Text:
    """The agreement line (the report's ``flag_agreement``, in words)."""
    if not a.reviewed:
        return Text(f"no verdicts yet · {listed} values to review", style="dim")

    def shown(x: float, undefined: str) -> str:
        value = figure(x)  # the report's figure, so screen and report agree to the digit
        return undefined if value is None else f"{value:.2f}"

    k = a.kappa
    return Text.assemble(("Cohen's κ ", ""), (shown(k.kappa, "undefined"), "bold"),
                         f" automatic class vs people over {k.n} verdicts (observed "
                         f"{shown(k.observed, '—')}, chance {shown(k.expected, '—')}) · "
                         f"{a.unsure} unsure left out · {a.reviewed} reviewed of {listed} listed")


def _failing_cells(t: FailingRows) -> list[Any]:
    reached = (", ".join(str(n) for n in t.items_reached) + f" of {t.items_asked}"
               if t.items_reached else "")
    return [Text(literal(t.model, keep_newlines=False)), Text(literal(t.arm, keep_newlines=False)),
            str(t.valid_rows), str(t.failing_rows), str(t.fabricate_never_abstain),
            str(t.abstain_somewhere), str(t.neither), str(t.stopped_early), reached]


class FabricationScreen(Screen[None]):
    """Review a sweep's fabricated and corrupted values, beside how its failing rows failed."""

    DEFAULT_CSS = """
    FabricationScreen {
        #review-body { padding: 0 1; }
        #review-title { margin: 1 0 0 0; }
        #failing { height: auto; max-height: 10; margin: 1 0 0 0; }
        #failing-note, #agreement { color: $text-muted; }
        #agreement { margin: 1 0 0 0; }
        #values { height: 1fr; min-height: 6; }
        #detail { height: auto; max-height: 8; }
        #reason { display: none; }
        #reason.asking { display: block; }
        #review-help { color: $text-muted; }
        &.-short {
            #review-title, #agreement, #failing { margin: 0; }
            #failing { max-height: 5; }
            #failing-note, #review-help { display: none; }
        }
    }
    """

    BINDINGS = [
        Binding("escape", "back", "Back", tooltip="Back (with a filter in force: clear it first)"),
        Binding("slash", "filter", "Filter", key_display="/", tooltip="Filter the values: "
                "class: model: arm: label: text: or a word, /regex/ over the values, the rows' "
                "answers and carriers (the README has the syntax); the line says N of M"),
        Binding("s", "sort(1)", "Sort", tooltip="Order the values by the next column (a click "
                "on a header sorts by it)"),
        Binding("S", "sort(0)", "Reverse", show=False, tooltip="Reverse the values' order"),
        Binding("f", "mark('fabricated')", "Fabricated",
                tooltip="Mark the highlighted value fabricated and go to the next"),
        Binding("n", "mark('not_fabricated')", "Not fabricated",
                tooltip="Mark it not fabricated (e.g. it is in the input) and go to the next"),
        Binding("u", "mark('unsure')", "Unsure", tooltip="Mark it unsure and go to the next"),
        Binding("F", "mark('fabricated', True)", "Fabricated, with a reason", show=False,
                tooltip="Type a one-line reason first (enter saves it, escape skips it)"),
        Binding("N", "mark('not_fabricated', True)", "Not fabricated, with a reason",
                show=False),
        Binding("U", "mark('unsure', True)", "Unsure, with a reason", show=False),
        Binding("z", "undo", "Undo", tooltip="Take back the last verdict given here"),
        Binding("space", "next_unreviewed", "Next unreviewed",
                tooltip="Go to the next value without a verdict"),
        Binding("v", "compare", "Compare rows", tooltip="The value's row beside the row marked "
                "(m on a cell's rows) or, none marked, beside its counterpart under the other "
                "arm of j vs q, carrier by carrier from the final fold, facts aligned"),
        Binding("enter", "inspect", "Inspect row",
                tooltip="Open the row inspector at this value's row, on its final fold"),
    ]
    """Key bindings of the fabrication screen (the values table has the cursor keys)."""

    def __init__(self, db_path: str, sweep_id: str) -> None:
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.author = "unknown"
        self._listed = 0
        self._undo: list[tuple[int, int]] = []
        """(write token, check) of the verdicts given here, latest last. The writer applies
        writes in order, so an undo asked for before its verdict's outcome came back still
        follows it; a verdict that was never stored is refused as nothing to undo."""
        self._asking: tuple[int, str] | None = None
        self._agreement: AgreementBasis | None = None
        self._texts: dict[int, tuple[str, ...]] = {}
        """Each reviewed row's answer and carriers, read once for text filters (in a thread)."""
        self.pending = 0
        """Writes asked for whose outcome has not come back (tests wait for 0)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review-body"):
            yield Static(Text.assemble(("Fabrication review", "bold"), f" · sweep {self.sweep_id}"),
                         id="review-title")
            yield DataTable(id="failing", cursor_type="none", zebra_stripes=True)
            yield Static(id="failing-note")
            yield Static(Text("reading…", style="dim"), id="agreement")
            yield FilterBar("values", id="values-filter")
            yield ReviewTable(id="values")
            yield Static(id="detail")
            yield ReasonInput(id="reason")
            yield Static(Text("f fabricated · n not fabricated · u unsure (F N U: with a reason) "
                              "· z undo · space next unreviewed · enter inspect · v compare · "
                              "/ filter"),
                         id="review-help")
        yield KeysFooter()

    def on_mount(self) -> None:
        failing = self.query_one("#failing", DataTable)
        for label in FAILING_COLUMNS:
            failing.add_column(label, key=label)
        self.query_one("#failing-note", Static).update(Text(
            "failing rows: valid rows with recall < 0.5 · abstain: an honest abstention or an "
            "abstention from a carrier that held the value · stopped early: the answer has no "
            "line for the last labels asked; items reached: labels up to its last line",
            style="dim"))
        self.load()
        self.query_one(ReviewTable).focus()

    # -- reading --------------------------------------------------------------------------

    @work(thread=True, group="fabrication-load", exclusive=True, exit_on_error=False,
          description="read the values to review")
    def load(self) -> None:
        """Read the failing-row table, the values (traced) and the agreement in a thread."""
        warning = None
        try:
            rules = load_signatures()
        except ConfigError as exc:  # a broken user rule file: review with the shipped rules
            rules, warning = None, str(exc)
        model = read_review(self.db_path, self.sweep_id, rules)
        author = current_author()
        if not get_current_worker().is_cancelled:
            self.post_message(ReviewData(model.failing, model.values, model.agreement, author,
                                         warning))

    @on(ReviewData)
    def show_data(self, message: ReviewData) -> None:
        """Map a read onto the tables."""
        self.author = message.author
        if message.warning:
            self.notify(message.warning, severity="warning", timeout=10, markup=False)
        failing = self.query_one("#failing", DataTable)
        failing.clear()
        for t in message.failing:
            failing.add_row(*_failing_cells(t))
        self._listed = len(message.values)
        self._agreement = message.agreement
        self.query_one(ReviewTable).show(message.values)
        bar = self.query_one(FilterBar)
        if bar.applied is not None:  # a filter in force: applied to the values read now
            self._find_values(bar.applied, message.values)
        self._show_agreement()
        self.show_detail()

    def _show_agreement(self) -> None:
        if self._agreement is not None:
            self.query_one("#agreement", Static).update(
                agreement_text(self._agreement.agreement(), self._listed))

    # -- marking --------------------------------------------------------------------------

    def action_mark(self, verdict: str, with_reason: bool = False) -> None:
        """Mark the highlighted value and move to the next (with a reason: ask for it first)."""
        value = self.query_one(ReviewTable).current()
        if value is None:
            return
        if with_reason:
            self._asking = (value.check_id, verdict)
            reason = self.query_one(ReasonInput)
            reason.value = ""
            reason.add_class("asking")
            reason.border_title = f"reason for {verdict.replace('_', ' ')}"
            reason.focus()
            return
        self._record(value.check_id, verdict, None)

    @on(ReasonInput.Submitted)
    def reason_given(self, event: ReasonInput.Submitted) -> None:
        """Enter in the reason: record the verdict with it."""
        self._close_reason(event.value)

    @on(ReasonInput.Skipped)
    def reason_skipped(self, event: ReasonInput.Skipped) -> None:
        """Escape in the reason: record the verdict without one."""
        self._close_reason(None)

    def _close_reason(self, reason: str | None) -> None:
        asking, self._asking = self._asking, None
        self.query_one(ReasonInput).remove_class("asking")
        table = self.query_one(ReviewTable)
        table.focus()
        if asking is not None:
            table.select(asking[0])
            self._record(asking[0], asking[1], reason)

    def _record(self, check_id: int, verdict: str, reason: str | None) -> None:
        """Show the verdict at once as unsaved, ask the writer for it, and go to the next value
        (it reads saved only once the store holds it)."""
        table = self.query_one(ReviewTable)
        reason = " ".join((reason or "").split()) or None
        table.set_unsaved(check_id, HumanVerdict(0, check_id, verdict, reason, self.author,
                                                 time.time()))
        token = self._write(SetVerdict(check_id, verdict, reason, self.author))
        self._undo.append((token, check_id))
        if table.cursor_row < table.row_count - 1:
            table.move_cursor(row=table.cursor_row + 1)

    def action_undo(self) -> None:
        """Take back the last verdict given (and saved) on this screen; go back to its value."""
        if not self._undo:
            self.notify("nothing to undo", timeout=3)
            return
        token, check_id = self._undo.pop()
        table = self.query_one(ReviewTable)
        table.select(check_id)
        table.set_unsaved(check_id, None)
        self._write(UndoVerdict(check_id, token))

    def action_next_unreviewed(self) -> None:
        """Go to the next value without a verdict."""
        table = self.query_one(ReviewTable)
        row = table.next_unreviewed()
        if row is None:
            self.notify("every listed value has a verdict", timeout=3)
        else:
            table.move_cursor(row=row)

    def action_inspect(self) -> None:
        """Open the row inspector at the value's row, on its final fold."""
        value = self.query_one(ReviewTable).current()
        if value is not None:
            open_cell(self.app, self.db_path, self.sweep_id, value.scenario, value.model,
                      value.arm, row_id=value.row_id)

    def action_compare(self) -> None:
        """Open the value's row beside the marked row (or its counterpart), at its final fold."""
        value = self.query_one(ReviewTable).current()
        if value is None:
            return
        marked = marked_row(self.app)
        other = marked if marked is not None and marked != value.row_id else None
        self.app.push_screen(CompareScreen(self.db_path, self.sweep_id, value.row_id, other,
                                           fold=value.final_fold))

    @on(DataTable.RowHighlighted, "#values")
    def show_detail(self, event: DataTable.RowHighlighted | None = None) -> None:
        """Show the highlighted value uncut under the table."""
        table = self.query_one(ReviewTable)
        value = table.current()
        if value is None and table.values:  # every value is filtered out
            self.query_one("#detail", Static).update(
                Text("no listed value matches the filter (escape clears it)", style="dim"))
            return
        self.query_one("#detail", Static).update(detail_text(value))

    @on(DataTable.RowSelected, "#values")
    def row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a value (the table's own select): inspect its row."""
        self.action_inspect()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While the reason is being typed, letters belong to it.
        if (self._asking is not None or isinstance(self.focused, Input)) and action in (
                "mark", "undo", "next_unreviewed", "inspect", "sort", "filter", "compare"):
            return False
        return True

    # -- filter and sort ------------------------------------------------------------------

    def action_back(self) -> None:
        """Escape: clear a filter in force, else go back."""
        bar = self.query_one(FilterBar)
        if bar.active:
            bar.clear()
        else:
            self.app.pop_screen()

    def action_filter(self) -> None:
        """Open the filter line (``/``)."""
        self.query_one(FilterBar).open()

    def action_sort(self, step: int) -> None:
        """Order by the next column (step 1) or reverse the order (step 0)."""
        table = self.query_one(ReviewTable)
        if step == 0:
            table.sort_by(table.sort_column or SORT_KEYS[0], not table.sort_reverse)
            return
        keys = (None, *SORT_KEYS)
        table.sort_by(keys[(keys.index(table.sort_column) + 1) % len(keys)], table.sort_reverse)
        self.show_detail()

    @on(FilterBar.Changed, "#values-filter")
    def filter_changed(self, event: FilterBar.Changed) -> None:
        """A new query (or none): find its values off the UI thread."""
        table = self.query_one(ReviewTable)
        if event.query is None:
            self.workers.cancel_group(self, "review-filter")
            table.set_visible(None)
            self.show_detail()
            return
        self._find_values(event.query, list(table.values.values()))

    @on(FilterBar.Closed, "#values-filter")
    def filter_closed(self, event: FilterBar.Closed) -> None:
        """Editing ended: the values take the keys again."""
        self.query_one(ReviewTable).focus()

    @work(thread=True, group="review-filter", exclusive=True, exit_on_error=False,
          description="find the review values a filter matches")
    def _find_values(self, query: Query, values: list[ReviewValue]) -> None:
        """Match the query against every value (its row's answer and carriers read once, only
        for a query that reads texts)."""
        worker = get_current_worker()
        if query.reads_texts:
            missing = sorted({v.row_id for v in values} - set(self._texts))
            if missing:
                self._texts.update(read_row_texts(self.db_path, missing,
                                                  lambda: worker.is_cancelled))
                if worker.is_cancelled:
                    return
        subjects = [value_findable(v, self._texts.get(v.row_id, ())) for v in values]
        result = find(query, subjects, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.post_message(ValuesFound(query, {values[i].check_id for i in result.matched},
                                          result))

    @on(ValuesFound)
    def values_found(self, message: ValuesFound) -> None:
        """Show only the values found (a result for a query since replaced is dropped)."""
        bar = self.query_one(FilterBar)
        if bar.applied is not message.query:
            return
        table = self.query_one(ReviewTable)
        table.set_visible(message.check_ids)
        bar.show_count(len(message.check_ids), len(table.values), message.result.note())
        self.show_detail()

    # -- writing --------------------------------------------------------------------------

    def _write(self, op: SetVerdict | UndoVerdict) -> int:
        app = self.app
        assert isinstance(app, StoreWrites)
        self.pending += 1
        return app.write(op, self)

    @on(WriteDone)
    def write_done(self, message: WriteDone) -> None:
        """A write ended: show what the store now holds; a write that failed stays on screen
        marked unsaved and is reported (give the verdict again to retry it)."""
        self.pending -= 1
        outcome = message.outcome
        op = outcome.op
        table = self.query_one(ReviewTable)
        if outcome.known:
            table.set_verdict(op.check_id, outcome.stored)
            if self._agreement is not None:
                self._agreement = self._agreement.with_verdict(op.check_id, outcome.stored)
                self._show_agreement()
        if outcome.status is WriteStatus.FAILED:
            table.set_failed(op.check_id, outcome.message or "not saved")
            what = "undo" if isinstance(op, UndoVerdict) else "verdict"
            self.notify(literal(f"{what} NOT saved ({outcome.attempts} attempts): "
                                f"{outcome.message} — give it again to retry",
                                keep_newlines=False), severity="error", timeout=12, markup=False)
        elif outcome.status is WriteStatus.REFUSED:
            self.notify(literal(outcome.message or "refused", keep_newlines=False),
                        severity="warning", timeout=6, markup=False)
        self.show_detail()

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """A failed read is one line on screen, never a crash (writes report their own
        outcomes: ``write_done``)."""
        if event.state == WorkerState.ERROR and event.worker.group == "fabrication-load":
            self.notify(literal(f"cannot read {self.db_path}: {event.worker.error}",
                                keep_newlines=False), severity="error", timeout=10, markup=False)
            return True
        return False
