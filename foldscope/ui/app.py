"""The foldscope Textual app: registers themes, opens the sweep screen, runs a sweep worker."""

from __future__ import annotations

import asyncio
import threading
from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from foldscope.engine.runner import SweepRunner
from foldscope.ui.messages import SweepFinished
from foldscope.ui.screens.sweep import SweepScreen
from foldscope.ui.theme import FACT_VARIABLES, FOLDSCOPE_DARK, discover_themes


QUIT_GRACE_S = 5.0
"""Longest wait on quit for a cancelled sweep to record its stop."""


class FoldscopeApp(App[None]):
    """Watch (and optionally run) a sweep stored in a foldscope database.

    Args:
        db_path: the database.
        sweep_id: the sweep to show (default: the newest).
        run: start the sweep's runner in a background worker.
        latency_scale: passed to the runner (simulated latency multiplier).
    """

    TITLE = "foldscope"
    CSS = """
    #body { padding: 0 1; }
    #title { margin: 1 0 0 0; }
    #progress { margin: 1 0 0 0; }
    #status { color: $text-muted; margin: 0 0 1 0; }
    #warnings { color: $warning; margin: 0 0 1 0; display: none; }
    #cell-body { padding: 0 1; }
    #cell-title { margin: 1 0; }
    #rows { height: auto; max-height: 12; }
    #fold-title { margin: 1 0 0 0; color: $text-muted; }
    #tabs { height: 1fr; }
    #fold-pane, #answer-pane { height: 1fr; }
    #facts, #answers { width: 1fr; }
    #carrier, #answer-text { width: 1fr; }
    #answer-title { margin: 1 0 0 0; color: $text-muted; }
    #legend { margin: 1 0 0 0; }
    """
    BINDINGS = [Binding("ctrl+q", "quit", "Quit", priority=True)]
    """App-wide bindings."""

    def __init__(self, db_path: str, *, sweep_id: str | None = None, run: bool = False,
                 latency_scale: float | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.sweep_id = sweep_id
        self.run_sweep = run
        self.latency_scale = latency_scale
        self.runner: SweepRunner | None = None
        self.sweep_status: str | None = None
        self._sweep_done = threading.Event()
        self._sweep_done.set()  # nothing running until a sweep worker starts

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(FACT_VARIABLES)

    def on_mount(self) -> None:
        self.register_theme(FOLDSCOPE_DARK)
        themes, errors = discover_themes()
        for theme in themes:
            self.register_theme(theme)
        for error in errors:
            self.notify(error, severity="warning", timeout=10, markup=False)
        self.theme = FOLDSCOPE_DARK.name
        self.sweep_screen = SweepScreen(self.db_path, self.sweep_id)
        self.push_screen(self.sweep_screen)
        if self.run_sweep and self.sweep_id:
            self.runner = SweepRunner(self.db_path, self.sweep_id, latency_scale=self.latency_scale)
            self.execute_sweep()

    @work(thread=True, group="sweep", exit_on_error=False, description="run the sweep")
    def execute_sweep(self) -> str:
        """Run the sweep in its own thread and event loop; every fold is committed as it lands."""
        assert self.runner is not None
        self._sweep_done.clear()
        try:
            return asyncio.run(self.runner.run())
        except asyncio.CancelledError:
            return "cancelled"
        finally:
            self._sweep_done.set()

    @on(Worker.StateChanged)
    def sweep_worker_changed(self, event: Worker.StateChanged) -> None:
        """Record how the sweep worker ended and tell the person if it failed."""
        if event.worker.group != "sweep":
            return
        if event.state == WorkerState.SUCCESS:
            self.sweep_status = event.worker.result
            self.notify(f"sweep {self.sweep_id} {event.worker.result}", timeout=5, markup=False)
        elif event.state == WorkerState.ERROR:
            self.sweep_status = "error"
            # Error text can quote an endpoint's reply: show it literally, never as markup.
            self.notify(f"sweep stopped: {event.worker.error}", severity="error", timeout=30,
                        markup=False)
        else:
            return
        if self.sweep_id is not None:
            # The sweep screen reads the store once more, so its last rows show at once.
            self.sweep_screen.post_message(SweepFinished(
                self.sweep_id, self.sweep_status or "error",
                str(event.worker.error) if event.state == WorkerState.ERROR else None))

    async def action_quit(self) -> None:
        """Quit; a running sweep is cancelled first and allowed to record that it stopped."""
        self.stop_sweep()
        # Cancellation reaches the runner's loop at once; give it a moment to write "stopped"
        # and close its connection before the process goes (calls in flight are dropped).
        await asyncio.to_thread(self._sweep_done.wait, QUIT_GRACE_S)
        self.exit()

    def stop_sweep(self) -> None:
        """Cancel a running sweep: calls in flight are lost, committed folds stay."""
        if self.runner is not None:
            self.runner.cancel()

    def on_unmount(self) -> None:
        self.stop_sweep()
