"""The sweep screen: the live arm × model grid, the sweep's progress and its status line."""

from __future__ import annotations

import threading
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, ProgressBar, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.engine.report import cells as report_cells
from foldscope.engine.store import Store
from foldscope.engine.sweep import stored_mode, stored_scenarios
from foldscope.ui.messages import SweepFinished, SweepSnapshot
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.widgets.sweep_grid import SweepGrid

LEGENDS = {
    "recall": "each cell: mean recall over valid rows · valid rows / planned rows · ⟳ running",
    "answers": "each cell: honest abstentions (A), fabrications (F), carried corruptions (C), "
               "hedged (H) over valid rows · ⚑ flagged by hand",
}
"""The legend under the grid, per view."""

POLL_HZ = 4.0
"""How often the screen re-reads the store; updates are coalesced to this rate."""


class SweepScreen(Screen[None]):
    """Watch one sweep: the grid fills as rows finish, polled from the database."""

    DEFAULT_CSS = """
    SweepScreen {
        #body { padding: 0 1; }
        #title { margin: 1 0 0 0; }
        #progress { margin: 1 0 0 0; }
        #status { color: $text-muted; margin: 0 0 1 0; }
        #warnings { color: $warning; margin: 0 0 1 0; display: none; }
        #legend { margin: 1 0 0 0; }
    }
    """

    BINDINGS = [
        Binding("r", "refresh", "Refresh", show=False),
        Binding("v", "toggle_view", "Recall / answers"),
        Binding("ctrl+q", "app.quit", "Quit"),
    ]
    """Key bindings of the sweep screen."""

    sweep_id: reactive[str | None] = reactive(None)
    """The sweep on display."""

    def __init__(self, db_path: str, sweep_id: str | None) -> None:
        super().__init__()
        self.db_path = db_path
        self.set_reactive(SweepScreen.sweep_id, sweep_id)
        self._local = threading.local()
        self._snapshot: SweepSnapshot | None = None

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

    def action_toggle_view(self) -> None:
        """Switch the grid between mean recall and the answer classes (abstained/fabricated)."""
        grid = self.query_one(SweepGrid)
        grid.show_view("answers" if grid.view == "recall" else "recall")
        self._legend()

    def _legend(self) -> None:
        view = self.query_one(SweepGrid).view
        text = (LEGENDS[view] + " · v: switch view · enter: inspect a cell's rows fold by fold")
        self.query_one("#legend", Static).update(Text(text, style="dim"))

    def action_refresh(self) -> None:
        """Re-read the store now."""
        self.poll()

    def _store(self) -> Store | None:
        # sqlite connections are thread-bound: one read-only Store per poller thread.
        store = getattr(self._local, "store", None)
        if store is None:
            try:
                store = Store(self.db_path, readonly=True)
            except Exception:
                return None
            self._local.store = store
        return store

    @work(thread=True, group="poll", exclusive=True, exit_on_error=False,
          description="read sweep state from the store")
    def poll(self) -> None:
        """Read the sweep's cells and progress in a thread and post them as one snapshot."""
        store = self._store()
        if store is None:
            return
        sweep_id = self.sweep_id or store.latest_sweep_id()
        if sweep_id is None or get_current_worker().is_cancelled:
            return
        sweep = store.sweep(sweep_id)
        if sweep is None:
            return
        sweep["status"] = store.live_status(sweep)
        snapshot = SweepSnapshot(sweep_id, sweep, report_cells(store, sweep_id),
                                 store.progress(sweep_id))
        if not get_current_worker().is_cancelled:
            self.post_message(snapshot)

    @on(SweepSnapshot)
    def show_snapshot(self, message: SweepSnapshot) -> None:
        """Map a snapshot onto the widgets; only changed cells are touched."""
        self._snapshot = message
        config: dict[str, Any] = message.sweep["config"]
        s = config["sweep"]
        grid = self.query_one(SweepGrid)
        scenarios = stored_scenarios(config)
        grid.set_layout(list(s["arms"]), [m["id"] for m in config["models"]], scenarios)
        grid.update_cells(message.cells)
        p = message.progress
        finished = p["done"] + p["failed"]
        bar = self.query_one(ProgressBar)
        bar.update(total=max(1, p["total"]), progress=finished)
        simulated = message.sweep["simulated"] or any(c["simulated"] for c in message.cells)
        sim = " · simulated models" if simulated else ""
        self.query_one("#title", Static).update(Text.assemble(
            (f"sweep {message.sweep_id}", "bold"),
            f" · {', '.join(scenarios)} · arms {' '.join(s['arms'])}"
            f" · {s['repeats']} repeats · {s['design']} · {stored_mode(config)} mode{sim}"))
        reason = f" · {message.sweep['stop_reason']}" if message.sweep.get("stop_reason") else ""
        call_retries = sum(c["call_retries"] for c in message.cells)
        row_retries = sum(c["row_retries"] for c in message.cells)
        spend = sum(c["cost_usd"] for c in message.cells)
        self.query_one("#status", Static).update(Text(
            f"{message.sweep['status']}{reason} · rows {finished}/{p['total']} done "
            f"({p['running']} running, {p['failed']} failed) · {p['folds']} folds committed · "
            f"retries {call_retries} calls, {row_retries} rows · ${spend:.4f}"))
        self.sub_title = f"{finished}/{p['total']} rows"
        warnings = [f"⚠ {model}: {w}" for model, entry in message.sweep["pins"].items()
                    for w in entry.get("warnings", [])]
        box = self.query_one("#warnings", Static)
        box.display = bool(warnings)
        box.update(Text("\n".join(warnings)))

    @on(SweepFinished)
    def sweep_finished(self, message: SweepFinished) -> None:
        """The sweep worker ended: read the store now rather than at the next tick."""
        self.poll()

    @on(SweepGrid.CellSelected)
    def open_cell(self, event: SweepGrid.CellSelected) -> None:
        """Enter on a cell: inspect that model × arm's rows fold by fold."""
        row_key = str(event.cell_key.row_key.value)
        model = str(event.cell_key.column_key.value)
        if model == "arm" or self._snapshot is None:
            return
        scenario, _, arm = row_key.rpartition(" ")
        if not scenario:
            scenario = stored_scenarios(self._snapshot.sweep["config"])[0]
        self.app.push_screen(CellScreen(self.db_path, self._snapshot.sweep_id, scenario, model,
                                        arm))

    @on(Worker.StateChanged)
    def worker_failed(self, event: Worker.StateChanged) -> None:
        """Surface a failed poll in the status line rather than crashing the app."""
        if event.state == WorkerState.ERROR and event.worker.group == "poll":
            self.query_one("#status", Static).update(
                Text(f"cannot read {self.db_path}: {event.worker.error}"))
