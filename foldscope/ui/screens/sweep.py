"""The sweep screen: the live arm × model grid, the sweep's progress and its status line."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.metrics import METRIC_BY_NAME, METRICS
from foldscope.core.text import literal
from foldscope.engine.live import LiveSweep
from foldscope.ui.commands import PaletteCommand
from foldscope.ui.messages import SweepFinished, SweepSnapshot
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.fabrication import FabricationScreen
from foldscope.ui.screens.study import StudyScreen
from foldscope.ui.screens.survival import SurvivalScreen
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


def plural(n: int, word: str) -> str:
    """``1 repeat``, ``2 repeats``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


POLL_HZ = 4.0
"""How often the screen re-reads the store; updates are coalesced to this rate."""


class SweepScreen(Screen[None]):
    """Watch one sweep: the grid fills as rows finish, polled from the database."""

    DEFAULT_CSS = """
    SweepScreen {
        #body { padding: 0 1; }
        #title { margin: 1 0 0 0; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
        #progress { margin: 1 0 0 0; }
        #status { color: $text-muted; margin: 0 0 1 0; height: 1; text-wrap: nowrap;
                  text-overflow: ellipsis; }
        #warnings { color: $warning; margin: 0 0 1 0; display: none; }
        #legend { margin: 1 0 0 0; height: 2; }
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
    ]
    """Key bindings of the sweep screen."""

    sweep_id: reactive[str | None] = reactive(None)
    """The sweep on display."""

    def __init__(self, db_path: str, sweep_id: str | None) -> None:
        super().__init__()
        self.db_path = db_path
        self.set_reactive(SweepScreen.sweep_id, sweep_id)
        self._live = LiveSweep(db_path, sweep_id)
        self._polling: Worker[None] | None = None
        self._snapshot: SweepSnapshot | None = None
        self._shown: dict[str, Text] = {}
        self._runner_error: str | None = None
        """The last error of the sweep's runner (a child's one-line error), for the status."""
        self.own_runner_pid: int | None = None
        """The child process this app started to run the sweep: running it is not watching."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="body"):
            yield Static(id="title")
            yield ProgressBar(id="progress", show_eta=False)
            yield Static(id="status")
            yield Static(id="warnings")
            yield SweepGrid(id="grid")
            yield Static(id="legend")
        yield Footer()

    def on_mount(self) -> None:
        self._legend()
        self.poll()
        self.set_interval(1.0 / POLL_HZ, self.poll)

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

    def _legend(self) -> None:
        view = self.query_one(SweepGrid).view
        text = (legend(view) + " · v: next metric · x: transpose · t: study tables · "
                "f: fabrication review · enter: a cell's rows · ?: help")
        # Two lines, fixed: a new legend repaints without a layout pass.
        self.query_one("#legend", Static).update(Text(text, style="dim"), layout=False)

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

    def poll(self) -> Worker[None] | None:
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
        view = message.view
        h = view.header
        grid = self.query_one(SweepGrid)
        grid.set_layout(list(h.arms), list(h.models), list(h.scenarios))
        # Running marks only while a runner lives: a killed runner leaves rows marked running.
        alive = h.status == "running"
        grid.update_cells(view.cells, running=alive)
        p = view.progress
        bar = self.query_one(ProgressBar)
        if (bar.total, bar.progress) != (max(1, p.total), p.finished):
            bar.update(total=max(1, p.total), progress=p.finished)
        # Ids, names and warnings are data: shown literally, on one line.
        one_line = partial(literal, keep_newlines=False)
        simulated = h.simulated or any(c.simulated for c in view.cells)
        sim = " · simulated models" if simulated else ""
        self._set("#title", Text.assemble(
            (f"sweep {one_line(h.id)}", "bold"),
            f" · {one_line(', '.join(h.scenarios))} · arms {one_line(' '.join(h.arms))}"
            f" · {plural(h.repeats, 'repeat')} · {h.design} · {h.mode} mode{sim}"))
        reason = f" · {one_line(h.stop_reason)}" if h.stop_reason else ""
        call_retries = sum(c.call_retries for c in view.cells)
        row_retries = sum(c.row_retries for c in view.cells)
        spend = sum(c.cost_usd for c in view.cells)
        status = h.status
        if alive and h.runner_pid is not None and h.runner_pid not in (os.getpid(),
                                                                       self.own_runner_pid):
            status = f"watching — run by pid {h.runner_pid}"
        running = (f"{p.running} running" if alive or not p.running
                   else f"{p.running} interrupted")
        line = Text(
            f"{status}{reason} · rows {p.finished}/{p.total} done "
            f"({running}, {p.failed} failed) · {p.folds} folds committed · "
            f"retries {call_retries} calls, {row_retries} rows · ${spend:.4f}")
        if self._runner_error is not None:
            line.append(f" · runner: {self._runner_error}", style="bold")
        self._set("#status", line)
        self.sub_title = f"{p.finished}/{p.total} rows"
        warnings = [f"⚠ {one_line(w)}" for w in h.warnings]
        self.query_one("#warnings", Static).display = bool(warnings)
        self._set("#warnings", Text("\n".join(warnings)))

    FIXED = frozenset({"#title", "#status"})
    """Lines of a fixed height: updating them never needs a layout pass (polls and keys stay
    cheap while a sweep runs)."""

    def _set(self, selector: str, text: Text) -> None:
        """Update a line only when its text changed (a redraw costs the runner's thread time)."""
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            self.query_one(selector, Static).update(text, layout=selector not in self.FIXED)

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
            self.app.push_screen(CellScreen(self.db_path, self._snapshot.sweep_id, ref.scenario,
                                            ref.model, ref.arm, sweep_running=self._runner_alive))

    def _runner_alive(self) -> bool:
        """The sweep's runner is alive, as of the last poll."""
        return self._snapshot is not None and self._snapshot.view.header.status == "running"

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        """Surface a failed poll in the status line rather than crashing the app."""
        if event.state == WorkerState.ERROR and event.worker.group == "poll":
            self._set("#status", Text(literal(f"cannot read {self.db_path}: {event.worker.error}",
                                              keep_newlines=False)))
