"""The foldscope Textual app: registers themes, opens a sweep (or the picker), runs a sweep
worker, and keeps the help screen, the command palette and the remembered theme."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from dataclasses import replace
from functools import partial

from textual import on, work
from textual.app import App
from textual.binding import Binding
from textual.theme import Theme
from textual.worker import Worker, WorkerState

from foldscope.core.audit import StoredAudit
from foldscope.core.audit_view import AuditView, audit_view
from foldscope.core.errors import ConfigError, SweepClaimed
from foldscope.core.text import literal
from foldscope.engine.listing import SweepSummary
from foldscope.engine.runner import SweepRunner
from foldscope.engine.store import writable
from foldscope.engine.userconfig import read_user_config, update_user_config
from foldscope.ui.commands import FoldscopeCommands, PaletteCommand
from foldscope.ui.messages import SweepFinished
from foldscope.ui.screens.audit import AuditScreen
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.fabrication import FabricationScreen
from foldscope.ui.screens.help import HelpScreen, KeyPlace
from foldscope.ui.screens.picker import SweepPicker
from foldscope.ui.screens.study import StudyScreen
from foldscope.ui.screens.survival import SurvivalScreen
from foldscope.ui.screens.sweep import SweepScreen
from foldscope.ui.theme import FACT_VARIABLES, FOLDSCOPE_DARK, discover_themes
from foldscope.ui.widgets.answer_table import AnswerTable
from foldscope.ui.widgets.reason_input import ReasonInput


QUIT_GRACE_S = 5.0
"""Longest wait on quit for a cancelled sweep to record its stop."""


class FoldscopeApp(App[None]):
    """Watch (and optionally run) a sweep stored in a foldscope database.

    Args:
        db_path: the database.
        sweep_id: the sweep to show; None opens the sweep picker first.
        run: start the sweep's runner in a background worker.
        latency_scale: passed to the runner (simulated latency multiplier).
        retry_failed: the runner runs rows that failed on infrastructure again.
        audits: audited sessions to open instead of a sweep (``foldscope audit PATH``);
            ``db_path`` may then be None (no picker).
    """

    TITLE = "foldscope"
    COMMANDS = App.COMMANDS | {FoldscopeCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, tooltip="Quit (a sweep running here "
                "stops; it resumes the next time it is opened)"),
        Binding("question_mark,f1", "help", "Help", key_display="? F1",
                tooltip="This help: every key, metric and symbol"),
        Binding("s", "pick_sweep", "Sweeps", tooltip="Pick another sweep of this database"),
        Binding("T", "next_theme", "Theme", show=False,
                tooltip="Next theme: dark, light, colour-blind safe, high contrast (remembered)"),
    ]
    """App-wide bindings."""

    def __init__(self, db_path: str | None, *, sweep_id: str | None = None, run: bool = False,
                 latency_scale: float | None = None, retry_failed: bool = False,
                 audits: list[AuditView] | None = None) -> None:
        super().__init__()
        self.audits = audits
        self.retry_failed = retry_failed
        self.db_path = db_path
        self.sweep_id = sweep_id
        self.run_sweep = run
        self.latency_scale = latency_scale
        self.runner: SweepRunner | None = None
        self.sweep_status: str | None = None
        self.watching_pid: int | None = None
        """Another process running the sweep on display, when this app only watches it."""
        self.sweep_screen: SweepScreen | None = None
        self._theme_names: list[str] = []
        self._sweep_done = threading.Event()
        self._sweep_done.set()  # nothing running until a sweep worker starts

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(FACT_VARIABLES)

    def on_mount(self) -> None:
        # SIGTERM quits like ctrl+q: a sweep this app runs records that it stopped and why.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self._terminated)
        self.register_theme(FOLDSCOPE_DARK)
        themes, errors = discover_themes()
        for theme in themes:
            self.register_theme(theme)
        for error in errors:
            self.notify(error, severity="warning", timeout=10, markup=False)
        self._theme_names = [FOLDSCOPE_DARK.name, *(t.name for t in themes)]
        self.theme = self._remembered_theme(themes)
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        if self.audits is not None:
            self.push_screen(AuditScreen(self.audits, quit_on_back=True))
        elif self.sweep_id is None and self.db_path is not None:
            self.push_screen(SweepPicker(self.db_path), self._picked)
        else:
            self._show_sweep(self.sweep_id)
            if self.run_sweep:
                self._start_runner(self.sweep_id)

    # -- sweeps -----------------------------------------------------------------------------

    def _show_sweep(self, sweep_id: str) -> None:
        self.sweep_id = sweep_id
        screen = SweepScreen(self.db_path, sweep_id)
        if self.sweep_screen is None or self.screen is not self.sweep_screen:
            self.push_screen(screen)
        else:
            self.switch_screen(screen)
        self.sweep_screen = screen

    def _start_runner(self, sweep_id: str) -> None:
        self.runner = SweepRunner(self.db_path, sweep_id, latency_scale=self.latency_scale,
                                  retry_failed=self.retry_failed)
        self.execute_sweep()

    def _picked(self, picked: SweepSummary | StoredAudit | None) -> None:
        """Open the sweep chosen in the picker; resume it here if it is unfinished, nobody
        else runs it, this app runs nothing else, and the database can be written. A stored
        session audit opens the audit screen (back from it returns to the picker when no sweep
        is open)."""
        if isinstance(picked, StoredAudit):
            self._show_audit(picked)
            return
        if picked is None or (picked.id == self.sweep_id and self.sweep_screen is not None):
            return
        self._show_sweep(picked.id)
        if (picked.status != "done" and picked.runner_pid is None and self._sweep_done.is_set()
                and writable(self.db_path)):
            self._start_runner(picked.id)

    def _show_audit(self, stored: StoredAudit) -> None:
        try:
            view = replace(audit_view(stored.document), stored_as=stored.id)
        except ConfigError as exc:
            self.notify(literal(str(exc), keep_newlines=False), severity="error", markup=False)
            return
        reopen = self.sweep_screen is None and self.audits is None and self.db_path is not None
        self.push_screen(AuditScreen([view]),
                         (lambda _: self.action_pick_sweep()) if reopen else None)

    def action_pick_sweep(self) -> None:
        """Open the sweep picker."""
        assert self.db_path is not None
        self.push_screen(SweepPicker(self.db_path, self.sweep_id), self._picked)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick_sweep":
            # From the grid (or before any sweep is open), not from inside a cell or a dialog.
            return self.db_path is not None and (
                self.sweep_screen is None or self.screen is self.sweep_screen)
        return True

    # -- help, themes, palette --------------------------------------------------------------

    def key_places(self) -> list[KeyPlace]:
        """Every key binding of foldscope, by the place it works in (for the help screen)."""
        return [("Everywhere", self.BINDINGS), ("Sweep grid", SweepScreen.BINDINGS),
                ("A cell's rows and folds", CellScreen.BINDINGS),
                ("Survival", SurvivalScreen.BINDINGS),
                ("Answer tab (table focused)", AnswerTable.BINDINGS),
                ("Fabrication review", FabricationScreen.BINDINGS),
                ("Reason for a verdict", ReasonInput.BINDINGS),
                ("Sweep picker", SweepPicker.BINDINGS),
                ("Study tables", StudyScreen.BINDINGS),
                ("Session audit", AuditScreen.BINDINGS),
                ("Tables", [Binding("up,down,left,right", "", "Move the cursor"),
                            Binding("pageup,pagedown", "", "A page up or down"),
                            Binding("enter", "", "Open what the cursor is on"),
                            Binding("tab", "", "Next pane (shift+tab: previous)"),
                            Binding("ctrl+p", "", "Command palette: every action by name")])]

    def action_help(self) -> None:
        """Open the help screen (every key, metric and symbol)."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_places()))

    def action_next_theme(self) -> None:
        """Switch to the next foldscope theme (the choice is remembered)."""
        names = [n for n in self._theme_names if n in self.available_themes]
        if names:
            current = names.index(self.theme) if self.theme in names else -1
            self.theme = names[(current + 1) % len(names)]

    def palette_commands(self) -> list[PaletteCommand]:
        """One palette command per foldscope theme."""
        return [PaletteCommand(f"Theme: {name}", "Switch theme (remembered in the settings file)",
                               partial(setattr, self, "theme", name))
                for name in self._theme_names if name in self.available_themes]

    def _remembered_theme(self, themes: list[Theme]) -> str:
        """The theme the settings file names, if it is known; else the built-in dark one."""
        try:
            wanted = read_user_config().get("theme")
        except ConfigError as exc:
            self.notify(str(exc), severity="warning", timeout=10, markup=False)
            return FOLDSCOPE_DARK.name
        if isinstance(wanted, str) and wanted in self.available_themes:
            return wanted
        if wanted is not None:
            self.notify(f"settings: unknown theme {wanted!r}; using {FOLDSCOPE_DARK.name}",
                        severity="warning", timeout=10, markup=False)
        return FOLDSCOPE_DARK.name

    def _remember_theme(self, theme: Theme) -> None:
        self.save_settings({"theme": theme.name})

    @work(thread=True, group="settings", exit_on_error=False, description="save settings")
    def save_settings(self, changes: dict[str, object]) -> None:
        """Write the settings file in a thread; a failure is one warning line."""
        try:
            update_user_config(changes)
        except ConfigError as exc:
            self.call_from_thread(self.notify, str(exc), severity="warning", timeout=10,
                                  markup=False)

    @work(thread=True, group="sweep", exit_on_error=False, description="run the sweep")
    def execute_sweep(self) -> str:
        """Run the sweep in its own thread and event loop; every fold is committed as it lands.

        A sweep another live process already runs is watched, not run: that is not an error.
        """
        assert self.runner is not None
        self._sweep_done.clear()
        try:
            return asyncio.run(self.runner.run())
        except asyncio.CancelledError:
            return "cancelled"
        except SweepClaimed as exc:
            self.watching_pid = exc.pid
            return "watching"
        finally:
            self._sweep_done.set()

    @on(Worker.StateChanged)
    def sweep_worker_changed(self, event: Worker.StateChanged) -> None:
        """Record how the sweep worker ended and tell the person if it failed."""
        if event.worker.group != "sweep":
            return
        sweep_id = self.runner.sweep_id if self.runner is not None else self.sweep_id
        if event.state == WorkerState.SUCCESS:
            self.sweep_status = event.worker.result
            if event.worker.result != "watching":  # watching another runner is a quiet state
                self.notify(f"sweep {sweep_id} {event.worker.result}", timeout=5, markup=False)
        elif event.state == WorkerState.ERROR:
            self.sweep_status = "error"
            # Error text can quote an endpoint's reply: show it literally, never as markup.
            self.notify(literal(f"sweep stopped: {event.worker.error}", keep_newlines=False),
                        severity="error", timeout=30, markup=False)
        else:
            return
        if sweep_id is not None and self.sweep_screen is not None:
            # The sweep screen reads the store once more, so its last rows show at once.
            self.sweep_screen.post_message(SweepFinished(
                sweep_id, self.sweep_status or "error",
                str(event.worker.error) if event.state == WorkerState.ERROR else None))

    def _terminated(self) -> None:
        self.stop_sweep("interrupted by SIGTERM")
        self.call_later(self.action_quit)

    async def action_quit(self) -> None:
        """Quit; a running sweep is cancelled first and allowed to record that it stopped."""
        self.stop_sweep()
        # Cancellation reaches the runner's loop at once; give it a moment to write "stopped"
        # and close its connection before the process goes (calls in flight are dropped).
        await asyncio.to_thread(self._sweep_done.wait, QUIT_GRACE_S)
        self.exit()

    def stop_sweep(self, reason: str = "quit from the TUI") -> None:
        """Cancel a running sweep: calls in flight are lost, committed folds stay (only the
        first reason counts)."""
        if self.runner is not None:
            self.runner.cancel(reason)

    def on_unmount(self) -> None:
        self.stop_sweep()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
