"""The sweep screen: the live arm × model grid, the sweep's progress and its status line."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.metrics import METRIC_BY_NAME, METRICS
from foldscope.core.status import LIVE_SWEEP_STATUSES, SweepStatus
from foldscope.core.text import literal
from foldscope.engine.control import request_control
from foldscope.engine.live import LiveSweep
from foldscope.ui.commands import PaletteCommand
from foldscope.ui.messages import ResumeSweep, SweepFinished, SweepSnapshot
from foldscope.ui.screens.cell import WARM_AFTER_S, open_cell, warm_cell_screen
from foldscope.ui.screens.fabrication import FabricationScreen
from foldscope.ui.screens.study import StudyScreen
from foldscope.ui.screens.survival import SurvivalScreen
from foldscope.ui.widgets.endpoint_lines import EndpointLines
from foldscope.ui.widgets.event_log import EventLog
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.pins_panel import PinsPanel
from foldscope.ui.widgets.run_header import RunHeader
from foldscope.ui.widgets.sweep_grid import VIEWS, SweepGrid

ANSWERS_LEGEND = ("answers: honest abstentions (A), fabrications (F), carried corruptions (C), "
                  "hedged (H) over valid rows · ⚑ flagged by hand")
"""The legend of the answers view (each metric's is its definition)."""


def legend(view: str) -> str:
    """The line under the grid for a view: what a cell shows."""
    if view == "answers":
        return ANSWERS_LEGEND
    m = METRIC_BY_NAME[view]
    return f"{m.label}: {m.definition} · valid rows / planned rows · ⟳ running"


POLL_HZ = 4.0
"""How often the screen re-reads the store; updates are coalesced to this rate."""


class SweepScreen(Screen[None]):
    """Watch one sweep: the grid fills as rows finish, polled from the database."""

    DEFAULT_CSS = """
    SweepScreen {
        #body { padding: 0 1; }
        #progress { margin: 1 0 0 0; }
        #warnings { color: $warning; margin: 0 0 1 0; display: none; }
        #legend { margin: 1 0 0 0; height: 2; }
        &.-narrow #legend { height: auto; }
        #endpoints { margin: 1 0 0 0; }
        #pins { display: none; margin: 1 0 0 0; }
        #events { margin: 1 0 0 0; }
    }
    """

    BINDINGS = [
        Binding("v", "next_view(1)", "Next metric", tooltip="Cycle what the cells show: recall, "
                "headings carried, fill fraction, parse-failure, abstention, fabrication and "
                "hedged rates, the answer classes"),
        Binding("V", "next_view(-1)", "Previous metric", show=False,
                tooltip="Cycle the metrics backwards"),
        Binding("x", "transpose", "Transpose", tooltip="Models on rows and arms on columns, "
                "or back"),
        Binding("t", "study", "Study tables",
                tooltip="The study's tables and plots of this sweep (as report --format md)"),
        Binding("l", "survival", "Survival",
                tooltip="Share of graded facts still carried after each fold, per arm, and where "
                "facts are lost (fold of loss × chunk planted in, × kind of value)"),
        Binding("r", "refresh", "Refresh", show=False, tooltip="Read the database now"),
        Binding("enter", "open_cell", "Open cell", show=False,
                tooltip="Inspect the cell's rows fold by fold"),
        Binding("f", "review", "Fabrication", tooltip="How failing rows failed, and the "
                "fabricated and corrupted values to mark by hand"),
        Binding("p", "pause_resume", "Pause/resume", tooltip="Pause the sweep (no new calls; "
                "calls in flight finish and commit), or resume it: works on a sweep any process "
                "runs, through the database"),
        Binding("R", "resume_sweep", "Resume sweep", show=False, tooltip="Resume the sweep: run it here "
                "from its last committed fold when it is stopped or interrupted, or end its "
                "pause"),
        Binding("C", "cancel_sweep", "Cancel sweep", show=False, tooltip="Stop the sweep "
                "(recorded 'stopped'; it resumes the next time it is run)"),
        Binding("e", "toggle_panel('events')", "Event log", tooltip="Show or hide the event log "
                "(retries, 429s, limiter cuts, invalid rows, stops, warnings)"),
        Binding("i", "toggle_panel('pins')", "Model pins", tooltip="Show or hide each model's "
                "pin: provider, endpoint, quantization, context length, prices"),
    ]
    """Key bindings of the sweep screen."""

    sweep_id: reactive[str | None] = reactive(None)
    """The sweep on display."""

    def __init__(self, db_path: str, sweep_id: str | None) -> None:
        super().__init__()
        self.db_path = db_path
        self.set_reactive(SweepScreen.sweep_id, sweep_id)
        self._live = LiveSweep(db_path, sweep_id)
        self._polling: Worker[Any] | None = None
        self._snapshot: SweepSnapshot | None = None
        self._shown: dict[str, Text] = {}
        self._runner_error: str | None = None
        """The last error of the sweep's runner (a child's one-line error), for the status."""
        self.own_runner_pid: int | None = None
        """The child process this app started to run the sweep: running it is not watching."""
        self._warm_asked = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="body"):
            yield RunHeader(id="run-header")
            yield ProgressBar(id="progress", show_eta=False)
            yield Static(id="warnings")
            yield SweepGrid(id="grid")
            yield Static(id="legend")
            yield EndpointLines(id="endpoints")
            yield PinsPanel(id="pins")
            yield EventLog(id="events")
        yield KeysFooter()

    def on_mount(self) -> None:
        self._legend()
        self.poll()
        self.set_interval(1.0 / POLL_HZ, self.poll)
        if self.sweep_id is not None:
            # Compose the cell screen ahead once this screen is first drawn, while its first
            # poll is read (no key waits yet): the first cell opened only aims it.
            self._warm_asked = True
            self.call_after_refresh(self._warm_cell)

    def action_next_view(self, step: int = 1) -> None:
        """Show the next (or previous) metric in the grid."""
        grid = self.query_one(SweepGrid)
        self.show_view(VIEWS[(VIEWS.index(grid.view) + step) % len(VIEWS)])

    def show_view(self, view: str) -> None:
        """Show one metric (or the answers view) in the grid."""
        self.query_one(SweepGrid).show_view(view)
        self._legend()

    def action_transpose(self) -> None:
        """Swap the grid's rows and columns."""
        self.query_one(SweepGrid).transpose()

    def action_open_cell(self) -> None:
        """Inspect the cell under the cursor."""
        grid = self.query_one(SweepGrid)
        if grid.row_count:
            self._open(grid.coordinate_to_cell_key(grid.cursor_coordinate))

    def palette_commands(self) -> list[PaletteCommand]:
        """A palette command per metric (and the answers view)."""
        out = [PaletteCommand(f"Metric: {m.label}", m.definition, partial(self.show_view, m.name))
               for m in METRICS]
        out.append(PaletteCommand("Metric: answer classes", ANSWERS_LEGEND,
                                  partial(self.show_view, "answers")))
        return out

    def on_resize(self) -> None:
        self._legend()  # the width class (``-narrow``) may have changed

    def _legend(self) -> None:
        view = self.query_one(SweepGrid).view
        narrow = self.has_class("-narrow")
        text = legend(view) + ("" if narrow else  # the footer and help name the keys
                               " · v: next metric · x: transpose · t: study tables · "
                               "f: fabrication review · enter: a cell's rows · ?: help")
        # Two lines, fixed: a new legend repaints without a layout pass; a narrow terminal
        # needs more lines for it, laid out again on each change (nothing cut at 80 columns).
        self.query_one("#legend", Static).update(Text(text, style="dim"), layout=narrow)

    def action_study(self) -> None:
        """Open the study's tables and plots for the sweep on display."""
        self._open_for_sweep(StudyScreen, "study")

    def action_review(self) -> None:
        """Open the fabrication review for the sweep on display."""
        self._open_for_sweep(FabricationScreen, "review")

    def _open_for_sweep(self, screen: Callable[[str, str], Screen[None]], what: str) -> None:
        sweep_id = self._snapshot.sweep_id if self._snapshot else self.sweep_id
        if sweep_id is None:
            self.notify(f"no sweep to {what} yet", timeout=3)
            return
        self.app.push_screen(screen(self.db_path, sweep_id))

    def action_survival(self) -> None:
        """Open the survival curves and loss tables for the sweep on display."""
        sweep_id = self._snapshot.sweep_id if self._snapshot else self.sweep_id
        if sweep_id is None:
            self.notify("no sweep to show yet", timeout=3)
            return
        self.app.push_screen(SurvivalScreen(self.db_path, sweep_id))

    def action_refresh(self) -> None:
        """Re-read the store now."""
        self.poll()

    def poll(self) -> Worker[Any] | None:
        """Read what changed since the last poll, unless a poll is still running.

        Polls never overlap and are never cancelled: a tick that finds one running is skipped,
        so a slow read delays the next one instead of being thrown away.

        Returns:
            The poll's worker, or None when a tick was skipped.
        """
        if self._polling is not None and not self._polling.is_finished:
            return None
        self._polling = self._read_changes()
        return self._polling

    @work(thread=True, group="poll", exit_on_error=False,
          description="read what changed in the sweep")
    def _read_changes(self) -> None:
        """Fold the rows changed since the last poll into the live view and post it."""
        view = self._live.poll()
        if view is not None and not get_current_worker().is_cancelled:
            self.post_message(SweepSnapshot(view.header.id, view))

    @on(SweepSnapshot)
    def show_snapshot(self, message: SweepSnapshot) -> None:
        """Map a snapshot onto the widgets; only changed cells are touched."""
        self._snapshot = message
        if not self._warm_asked:  # the grid is up: compose the cell screen once it is drawn
            self._warm_asked = True
            self.call_after_refresh(self._warm_cell)
        view = message.view
        h = view.header
        grid = self.query_one(SweepGrid)
        grid.set_layout(list(h.arms), list(h.models), list(h.scenarios))
        # Running marks only while a runner lives (paused too): a killed runner leaves rows
        # marked running.
        alive = h.status in LIVE_SWEEP_STATUSES
        grid.update_cells(view.cells, running=alive)
        p = view.progress
        bar = self.query_one(ProgressBar)
        if (bar.total, bar.progress) != (max(1, p.total), p.finished):
            bar.update(total=max(1, p.total), progress=p.finished)
        simulated = h.simulated or any(c.simulated for c in view.cells)
        if view.run is not None:
            self.query_one(RunHeader).show(h, view.run, p, simulated,
                                           own_runner=self.own_runner_pid,
                                           runner_error=self._runner_error)
        self.query_one(EndpointLines).show(view.endpoints)
        log = self.query_one(EventLog)
        log.set_models(h.models)
        log.add(view.new_events)
        self.query_one(PinsPanel).show(h.pins)
        self._show_sub_title(f"{p.finished}/{p.total} rows")
        warnings = [literal(f"⚠ {w}", keep_newlines=False) for w in h.warnings]
        self.query_one("#warnings", Static).display = bool(warnings)
        self._set("#warnings", Text("\n".join(warnings)))

    def _show_sub_title(self, sub_title: str) -> None:
        """Set the screen's sub-title and repaint the header's title line alone.

        Setting ``Screen.sub_title`` repaints the whole screen (the reactive refreshes the
        screen it is on: every widget drawn again, ~25 ms at 140 × 40 on each poll that
        finished a row) and the header's watcher lays the screen out again; the title line
        has one size whatever it says, so it is updated in place.
        """
        if sub_title == self.sub_title:
            return
        self.set_reactive(Screen.sub_title, sub_title)
        for header in self.query(Header):
            header.query_one("HeaderTitle", Static).update(header.format_title(), layout=False)

    def _set(self, selector: str, text: Text) -> None:
        """Update a line only when its text changed (a redraw costs the runner's thread time)."""
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            self.query_one(selector, Static).update(text)

    @on(SweepFinished)
    def sweep_finished(self, message: SweepFinished) -> None:
        """The sweep's runner ended: read the store now rather than at the next tick, and keep
        its error (shown literally: it can quote an endpoint's reply) for the status line."""
        if message.error is not None:
            self._runner_error = literal(message.error, keep_newlines=False)
        self.poll()

    @on(SweepGrid.CellSelected)
    def cell_selected(self, event: SweepGrid.CellSelected) -> None:
        """Enter (or a click) on a cell: inspect its rows fold by fold."""
        self._open(event.cell_key)

    def _open(self, cell_key) -> None:
        if self._snapshot is None:
            return
        ref = self.query_one(SweepGrid).cell_ref(str(cell_key.row_key.value),
                                                 str(cell_key.column_key.value))
        if ref is not None:
            open_cell(self.app, self.db_path, self._snapshot.sweep_id, ref.scenario, ref.model,
                      ref.arm, sweep_running=self._runner_alive)

    def _warm_cell(self) -> None:
        """Compose the cell screen ahead, once keys pause (not in the middle of a key's work)."""
        idle = getattr(self.app, "keys_idle", None)
        if idle is not None and not idle():
            self.set_timer(WARM_AFTER_S, self._warm_cell)
        else:
            sweep_id = self._snapshot.sweep_id if self._snapshot else self.sweep_id
            if sweep_id is not None:
                warm_cell_screen(self.app, self.db_path, sweep_id)

    def _runner_alive(self) -> bool:
        """The sweep's runner is alive, as of the last poll."""
        return (self._snapshot is not None
                and self._snapshot.view.header.status in LIVE_SWEEP_STATUSES)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """Surface a failed poll in the status line rather than crashing the app."""
        if event.state == WorkerState.ERROR and event.worker.group == "poll":
            self.notify(literal(f"cannot read {self.db_path}: {event.worker.error}",
                                keep_newlines=False), severity="error", markup=False)
        elif event.worker.group == "control" and event.state == WorkerState.SUCCESS:
            self.notify(str(event.worker.result), timeout=4, markup=False)
        elif event.worker.group == "control" and event.state == WorkerState.ERROR:
            self.notify(literal(str(event.worker.error), keep_newlines=False),
                        severity="warning", timeout=8, markup=False)
        else:
            return False
        return True

    # -- control and panels ---------------------------------------------------------------------

    def action_pause_resume(self) -> None:
        """Pause the sweep on display, or resume it when it is paused."""
        paused = self._snapshot is not None and self._snapshot.view.header.status == SweepStatus.PAUSED
        self._control("resume" if paused else "pause")

    def action_resume_sweep(self) -> None:
        """Resume the sweep on display (the app decides how: see ``ResumeSweep``)."""
        sweep_id = self._snapshot.sweep_id if self._snapshot else self.sweep_id
        if sweep_id is None:
            self.notify("no sweep on display", timeout=3)
            return
        self.app.post_message(ResumeSweep(sweep_id))

    def action_cancel_sweep(self) -> None:
        """Stop the sweep on display (committed folds stay; running it again resumes it)."""
        self._control("cancel")

    def _control(self, request: str) -> None:
        sweep_id = self._snapshot.sweep_id if self._snapshot else self.sweep_id
        if sweep_id is None:
            self.notify("no sweep on display", timeout=3)
            return
        self._send_control(sweep_id, request)

    @work(thread=True, group="control", exit_on_error=False, description="pause/resume/cancel")
    def _send_control(self, sweep_id: str, request: str) -> str:
        """Record the request in the database (the runner, wherever it runs, obeys it)."""
        pid = request_control(self.db_path, sweep_id, request, f"{request} from the TUI")
        return f"{request} requested for sweep {sweep_id} (runner pid {pid})"

    def action_toggle_panel(self, panel: str) -> None:
        """Show or hide a panel under the grid (the event log or the model pins)."""
        widget = self.query_one(f"#{panel}")
        widget.display = not widget.display
