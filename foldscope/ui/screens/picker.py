"""The sweep picker: every sweep in the database, newest first, then the session audits stored
there (``foldscope audit --db``); enter opens one."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.audit import StoredAudit
from foldscope.core.text import literal
from foldscope.engine.listing import SweepSummary
from foldscope.engine.views import read_picker
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.session_table import SessionTable

PICKER_COLUMNS: tuple[str, ...] = (
    "sweep", "scenarios", "models", "arms", "status", "rows", "started", "spend")
"""The picker's columns (label and key), each as wide as its widest cell (never cut: the
table scrolls sideways)."""


def _one_line(text: str) -> Text:
    """Stored names are data: shown literally on one line, whole."""
    return Text(literal(text, keep_newlines=False))


def summary_cells(s: SweepSummary) -> list[Text]:
    """One sweep as the picker's cells."""
    status = s.status + (f" · pid {s.runner_pid}" if s.runner_pid else "")
    return [_one_line(s.id), _one_line(", ".join(s.scenarios)), _one_line(", ".join(s.models)),
            _one_line(" ".join(s.arms)), Text(status),
            Text(f"{s.rows_done}/{s.rows_planned}"),
            Text(time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started))),
            Text(f"${s.spend_usd:.4f}" + (" sim" if s.simulated else ""))]


@dataclass(frozen=True)
class ResumePick:
    """The picker's answer when ``R`` asked to open a sweep and resume it."""

    sweep: SweepSummary


@dataclass
class SweepList(Message):
    """The sweeps (and stored session audits) read from the store by the picker's worker."""

    sweeps: list[SweepSummary]
    sessions: list[StoredAudit] = field(default_factory=list)


class SweepPicker(Screen[SweepSummary | StoredAudit | ResumePick | None]):
    """Choose a sweep to watch or a stored session audit to read; dismisses with the choice
    (or None on escape)."""

    DEFAULT_CSS = """
    SweepPicker #picker-body { padding: 0 1; }
    SweepPicker #picker-title { margin: 1 0; }
    SweepPicker #sweeps { height: 1fr; }
    SweepPicker #sessions-title { margin: 1 0 0 0; color: $text-muted; }
    SweepPicker #sessions { height: auto; max-height: 40%; }
    """

    BINDINGS = [
        Binding("enter", "choose", "Open sweep", tooltip="Watch the highlighted sweep, or read "
                "the highlighted session audit (tab moves between sweeps and sessions)"),
        Binding("R", "resume", "Resume sweep", tooltip="Open the highlighted sweep and resume "
                "it here from its last committed fold (stopped or interrupted), or resume its "
                "pause"),
        Binding("escape", "back", "Back", tooltip="Back to the sweep on display"),
        Binding("r", "reload", "Reload", tooltip="Read the list of sweeps again"),
    ]
    """Key bindings of the sweep picker."""

    def __init__(self, db_path: str, current: str | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.current = current
        self._sweeps: list[SweepSummary] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="picker-body"):
            yield Static(Text.assemble(("Sweeps in ", "bold"),
                                       literal(self.db_path, keep_newlines=False),
                                       "  · enter opens one, escape goes back"),
                         id="picker-title")
            yield DataTable(id="sweeps", cursor_type="row", zebra_stripes=True)
            yield Static("Sessions: audits stored with foldscope audit --db", id="sessions-title",
                         markup=False)
            yield SessionTable(id="sessions")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#sweeps", DataTable).focus()
        self.reload()

    def action_reload(self) -> None:
        """Read the list of sweeps again."""
        self.reload()

    @work(thread=True, group="picker-load", exclusive=True, exit_on_error=False,
          description="list the sweeps in the database")
    def reload(self) -> None:
        """Read every sweep's summary in a thread."""
        model = read_picker(self.db_path)
        if not get_current_worker().is_cancelled:
            self.post_message(SweepList(model.sweeps, model.sessions))

    @on(SweepList)
    def show_sweeps(self, message: SweepList) -> None:
        """Fill the table, keeping the cursor on the sweep on display."""
        table = self.query_one("#sweeps", DataTable)
        table.clear(columns=True)
        self._sweeps = list(message.sweeps)
        rows = [summary_cells(s) for s in message.sweeps]
        # Widths from the contents, set before the rows go in.
        for i, label in enumerate(PICKER_COLUMNS):
            width = max([len(label), *(cells[i].cell_len for cells in rows)])
            table.add_column(label, key=label, width=width)
        for s, cells in zip(message.sweeps, rows):
            table.add_row(*cells, key=s.id)
        ids = [s.id for s in self._sweeps]
        if self.current in ids:
            table.move_cursor(row=ids.index(self.current))
        sessions = self.query_one(SessionTable)
        sessions.show(message.sessions)
        sessions.display = self.query_one("#sessions-title").display = bool(message.sessions)

    def action_choose(self) -> None:
        """Open the highlighted sweep (or session audit, when the sessions table has focus)."""
        sessions = self.query_one(SessionTable)
        if self.focused is sessions:
            if sessions.highlighted is not None:
                self.dismiss(sessions.highlighted)
            return
        table = self.query_one("#sweeps", DataTable)
        if 0 <= table.cursor_row < len(self._sweeps):
            self.dismiss(self._sweeps[table.cursor_row])

    def action_resume(self) -> None:
        """Open the highlighted sweep and resume it."""
        table = self.query_one("#sweeps", DataTable)
        if 0 <= table.cursor_row < len(self._sweeps):
            self.dismiss(ResumePick(self._sweeps[table.cursor_row]))

    @on(DataTable.RowSelected, "#sessions")
    def session_chosen(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a stored session audit opens it."""
        stored = self.query_one(SessionTable).highlighted
        if stored is not None:
            self.dismiss(stored)

    @on(DataTable.RowSelected, "#sweeps")
    def chosen(self, event: DataTable.RowSelected) -> None:
        """Enter (or a click) on a row opens it."""
        self.action_choose()

    def action_back(self) -> None:
        """Back to the sweep (or session) on display (there must be one)."""
        if self.current is not None or len(self.app.screen_stack) > 2:
            self.dismiss(None)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """A database that cannot be read is one line in the title, not a crash."""
        if event.state == WorkerState.ERROR and event.worker.group == "picker-load":
            self.query_one("#picker-title", Static).update(Text(literal(
                f"cannot read {self.db_path}: {event.worker.error}", keep_newlines=False)))
            return True
        return False
