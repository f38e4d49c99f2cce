"""The fabrication screen: how failing rows failed per arm and model, and the confident wrong
values of a sweep for a person to mark fabricated, not fabricated or unsure, fast, by keyboard."""

from __future__ import annotations

import queue
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
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.errors import ConfigError, FlagRefused
from foldscope.core.fabrication import FailingRows, HumanVerdict, ReviewValue
from foldscope.core.text import literal
from foldscope.engine.review import failing_row_table, flag_agreement_json, review_values
from foldscope.engine.rulefiles import load_signatures
from foldscope.engine.store import Store
from foldscope.engine.userconfig import current_author
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.widgets.reason_input import ReasonInput
from foldscope.ui.widgets.review_table import ReviewTable, detail_text

FAILING_COLUMNS = ("model", "arm", "valid rows", "failing", "fabricate, never abstain",
                   "abstain somewhere", "neither", "stopped early", "items reached")
"""The failing-row table's columns."""


@dataclass
class ReviewData(Message):
    """Everything the screen shows, read from the store in a thread."""

    failing: list[FailingRows]
    values: list[ReviewValue]
    agreement: dict[str, Any]
    author: str
    warning: str | None = None


@dataclass
class VerdictsChanged(Message):
    """A write landed: the touched checks' verdicts now, and the agreement now."""

    verdicts: dict[int, HumanVerdict | None]
    agreement: dict[str, Any]
    refused: str | None = None


@dataclass(frozen=True)
class _Op:
    """One write for the writer thread: a verdict (``verdict`` set) or an undo."""

    check_id: int
    verdict: str | None = None
    reason: str | None = None


def agreement_text(a: dict[str, Any], listed: int) -> Text:
    """The agreement line (the report's ``flag_agreement``, in words)."""
    if not a["reviewed"]:
        return Text(f"no verdicts yet · {listed} values to review", style="dim")
    kappa = "undefined" if a["kappa"] is None else f"{a['kappa']:.2f}"
    observed = "—" if a["observed"] is None else f"{a['observed']:.2f}"
    expected = "—" if a["expected"] is None else f"{a['expected']:.2f}"
    return Text.assemble(("Cohen's κ ", ""), (kappa, "bold"),
                         f" automatic class vs people over {a['n']} verdicts (observed "
                         f"{observed}, chance {expected}) · {a['unsure']} unsure left out · "
                         f"{a['reviewed']} reviewed of {listed} listed")


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
        #values { height: 1fr; }
        #detail { height: 2; }
        #reason { display: none; }
        #reason.asking { display: block; }
        #review-help { color: $text-muted; }
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
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
        Binding("enter", "inspect", "Inspect row",
                tooltip="Open the row inspector at this value's row, on its final fold"),
    ]
    """Key bindings of the fabrication screen (the values table has the cursor keys)."""

    def __init__(self, db_path: str, sweep_id: str) -> None:
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.author = "unknown"
        self._listed = 0
        self._undo: list[int] = []
        self._asking: tuple[int, str] | None = None
        self._ops: queue.Queue[_Op | None] = queue.Queue()
        self.pending = 0
        """Writes queued or running (tests wait for 0)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="review-body"):
            yield Static(Text.assemble(("Fabrication review", "bold"), f" · sweep {self.sweep_id}"),
                         id="review-title")
            yield DataTable(id="failing", cursor_type="none", zebra_stripes=True)
            yield Static(id="failing-note")
            yield Static(Text("reading…", style="dim"), id="agreement")
            yield ReviewTable(id="values")
            yield Static(id="detail")
            yield ReasonInput(id="reason")
            yield Static(Text("f fabricated · n not fabricated · u unsure (F N U: with a reason) "
                              "· z undo · space next unreviewed · enter inspect the row"),
                         id="review-help")
        yield Footer()

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
        self.write_verdicts()
        self.query_one(ReviewTable).focus()

    def on_unmount(self) -> None:
        self._ops.put(None)  # ends the writer thread once it has written what was queued

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
        with Store(self.db_path, readonly=True) as store:
            failing = failing_row_table(store, self.sweep_id)
            values = review_values(store, self.sweep_id, rules)
            agreement = flag_agreement_json(store, self.sweep_id)
        author = current_author()
        if not get_current_worker().is_cancelled:
            self.post_message(ReviewData(failing, values, agreement, author, warning))

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
        self.query_one(ReviewTable).show(message.values)
        self._show_agreement(message.agreement)
        self.show_detail()

    def _show_agreement(self, agreement: dict[str, Any]) -> None:
        self.query_one("#agreement", Static).update(agreement_text(agreement, self._listed))

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
        """Show the verdict at once, queue its write, and go to the next value."""
        table = self.query_one(ReviewTable)
        reason = " ".join((reason or "").split()) or None
        table.set_verdict(check_id, HumanVerdict(0, check_id, verdict, reason, self.author,
                                                 time.time()))
        self._undo.append(check_id)
        self._queue(_Op(check_id, verdict, reason))
        if table.cursor_row < table.row_count - 1:
            table.move_cursor(row=table.cursor_row + 1)

    def action_undo(self) -> None:
        """Take back the last verdict given on this screen and go back to its value."""
        if not self._undo:
            self.notify("nothing to undo", timeout=3)
            return
        check_id = self._undo.pop()
        self.query_one(ReviewTable).select(check_id)
        self._queue(_Op(check_id))

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
            self.app.push_screen(CellScreen(self.db_path, self.sweep_id, value.scenario,
                                            value.model, value.arm, row_id=value.row_id))

    @on(DataTable.RowHighlighted, "#values")
    def show_detail(self, event: DataTable.RowHighlighted | None = None) -> None:
        """Show the highlighted value uncut under the table."""
        self.query_one("#detail", Static).update(detail_text(self.query_one(ReviewTable).current()))

    @on(DataTable.RowSelected, "#values")
    def row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a value (the table's own select): inspect its row."""
        self.action_inspect()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While the reason is being typed, letters belong to it.
        if self._asking is not None and action in ("mark", "undo", "next_unreviewed", "inspect"):
            return False
        return True

    # -- writing --------------------------------------------------------------------------

    def _queue(self, op: _Op) -> None:
        self.pending += 1
        self._ops.put(op)

    @work(thread=True, group="verdict-writer", exit_on_error=False,
          description="write verdicts in order")
    def write_verdicts(self) -> None:
        """Write verdicts and undos one at a time, in the order they were given (one
        connection of this thread's own); each landing posts the checks' verdicts now."""
        worker = get_current_worker()
        store: Store | None = None
        try:
            while not worker.is_cancelled:
                try:
                    op = self._ops.get(timeout=0.5)
                except queue.Empty:
                    continue
                if op is None:
                    break
                refused = None
                try:
                    store = store or Store(self.db_path)
                    if op.verdict is None:
                        store.undo_verdict(op.check_id)
                    else:
                        store.add_verdict(op.check_id, op.verdict, op.reason, author=self.author)
                except FlagRefused as exc:
                    refused = str(exc)
                now = store.verdicts(self.sweep_id) if store else {}
                self.post_message(VerdictsChanged({op.check_id: now.get(op.check_id)},
                                                  flag_agreement_json(store, self.sweep_id)
                                                  if store else {}, refused))
        finally:
            if store is not None:
                store.close()

    @on(VerdictsChanged)
    def verdicts_changed(self, message: VerdictsChanged) -> None:
        """A write landed: show what the store now holds."""
        self.pending -= 1
        table = self.query_one(ReviewTable)
        for check_id, human in message.verdicts.items():
            table.set_verdict(check_id, human)
        if message.agreement:
            self._show_agreement(message.agreement)
        self.show_detail()
        if message.refused:
            self.notify(literal(message.refused, keep_newlines=False), severity="warning",
                        timeout=6, markup=False)

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        """A failed read or write is one line on screen, never a crash."""
        if event.state == WorkerState.ERROR and event.worker.group in ("fabrication-load",
                                                                       "verdict-writer"):
            what = "read" if event.worker.group == "fabrication-load" else "save verdicts in"
            self.notify(literal(f"cannot {what} {self.db_path}: {event.worker.error}",
                                keep_newlines=False), severity="error", timeout=10, markup=False)
