"""The foldscope Textual app: registers themes, opens a sweep (or the picker), runs a sweep in a
child process it watches through the database, and keeps the help screen, the command palette
and the remembered theme."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from textual import events, on, work
from textual.app import ScreenError, SystemCommand
from textual.binding import Binding
from textual.css.stylesheet import Stylesheet
from textual.dom import DOMNode
from textual.geometry import Region
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from foldscope.core.audit import StoredAudit
from foldscope.core.audit_view import AuditView
from foldscope.core.distributions import t_ppf
from foldscope.core.errors import ConfigError, SweepClaimed
from foldscope.core.identifiers import default_rules
from foldscope.core.status import FINISHED_SWEEP_STATUSES, SweepStatus
from foldscope.core.text import literal
from foldscope.engine.control import request_control
from foldscope.engine.listing import SweepSummary
from foldscope.engine.runner import SweepRunner
from foldscope.engine.runner_process import RunnerProcess
from foldscope.engine.store import writable
from foldscope.engine.userconfig import LAST_DB_KEY, read_user_config, update_user_config
from foldscope.engine.views import read_audit_view, read_resume_state
from foldscope.ui.commands import FoldscopeCommands, PaletteCommand
from foldscope.ui.messages import ResumeSweep, SweepFinished
from foldscope.ui.screens.audit import AuditScreen
from foldscope.ui.screens.cell import CellScreen
from foldscope.ui.screens.compare import CompareScreen
from foldscope.ui.screens.fabrication import FabricationScreen
from foldscope.ui.screens.help import HelpScreen, KeyPlace
from foldscope.ui.screens.new_sweep import NewSweepScreen
from foldscope.ui.screens.picker import ResumePick, SweepPicker
from foldscope.ui.screens.study import StudyScreen
from foldscope.ui.screens.survival import SurvivalScreen
from foldscope.ui.screens.sweep import SweepScreen
from foldscope.ui.theme import FACT_VARIABLES, FOLDSCOPE_DARK, discover_themes
from foldscope.ui.widgets.answer_table import AnswerTable
from foldscope.ui.widgets.filter_bar import FilterBar
from foldscope.ui.widgets.memory import KeyPausedCollector
from foldscope.ui.widgets.reason_input import ReasonInput
from foldscope.ui.workers import EndsWorkers, route_worker_events_to_app
from foldscope.ui.writer import StoreWrites

FINISHED = FINISHED_SWEEP_STATUSES
"""Sweep statuses with nothing left to run."""

QUIT_GRACE_S = 5.0
"""Longest wait on quit for a cancelled sweep to record its stop (then its child is killed)."""


class RunnerFailed(Exception):
    """The sweep's child runner ended with an error (its one-line message)."""


def _css_key(variables: dict[str, str], sources: dict[Any, Any]) -> tuple[Any, ...]:
    """What a parsed stylesheet depends on: its variables and its sources."""
    return tuple(variables.items()), tuple(sources.items())


def _walk_except(root: DOMNode, away: set[Screen[Any]]) -> Iterable[DOMNode]:
    """``root`` and its descendants, depth first, leaving out the subtrees of ``away``."""
    stack: list[DOMNode] = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed([child for child in node._nodes if child not in away]))


@contextlib.contextmanager
def refreshes_once() -> Iterator[None]:
    """Within the block, a widget's plain refresh (no regions, no recompose) asked on this
    thread is only recorded; at the block's end each widget is refreshed once, with every kind
    of refresh asked of it (a layout if any asked one, a repaint if any did), in the order
    first asked.

    Restyling a node sets its rules one by one and each changed one refreshes the node, a
    colour its whole subtree as well: a theme switch refreshed about 1,600 widgets for some 50
    on show, each working out its dirty region again. A refresh only sets flags and clears
    caches, so one call with the flags of many leaves the same state as the many."""
    original = Widget.refresh
    thread = threading.get_ident()
    wanted: dict[int, tuple[Widget, bool, bool]] = {}

    def deferred(self: Widget, *regions: Region, repaint: bool = True, layout: bool = False,
                 recompose: bool = False) -> Widget:
        if regions or recompose or threading.get_ident() != thread:
            return original(self, *regions, repaint=repaint, layout=layout, recompose=recompose)
        had = wanted.get(id(self))
        if had is not None:
            layout, repaint = layout or had[1], repaint or had[2]
        wanted[id(self)] = (self, layout, repaint)
        return self

    Widget.refresh = deferred  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Widget.refresh = original  # type: ignore[method-assign]
        for widget, layout, repaint in wanted.values():
            original(widget, layout=layout, repaint=repaint)


class FoldscopeApp(StoreWrites):
    """Watch (and optionally run) a sweep stored in a foldscope database.

    Args:
        db_path: the database.
        sweep_id: the sweep to show; None opens the sweep picker first.
        run: run the sweep (resume it) while it is shown.
        latency_scale: passed to the runner (simulated latency multiplier).
        retry_failed: the runner runs rows that failed on infrastructure again.
        audits: audited sessions to open instead of a sweep (``foldscope audit PATH``);
            ``db_path`` may then be None (no picker).
        in_process: run the sweep in a thread of this process (tests) instead of a child
            process. By default a child process runs it — the headless runner, tied to this
            process so it stops when the app goes — and the app watches the database, so the
            runner and the screen never share an interpreter.
    """

    TITLE = "foldscope"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    """Screens narrower than 120 columns stack their panes (class ``-narrow``)."""
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]
    """Screens under 36 lines drop margins and notes the footer or help repeats (``-short``)."""
    COMMANDS = {FoldscopeCommands}
    """One provider: foldscope's commands first, then Textual's generic ones (see
    ``FoldscopeCommands``)."""
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, tooltip="Quit (a sweep running here "
                "stops; it resumes the next time it is opened)"),
        Binding("question_mark,f1", "help", "Help", key_display="?",
                tooltip="This help: every key, metric and symbol"),
        Binding("s", "pick_sweep", "Sweeps", tooltip="Pick another sweep of this database"),
        Binding("n", "new_sweep", "New sweep", show=False, tooltip="Plan and run a sweep from a form (or a "
                "sweep file), by the rules of foldscope run"),
        Binding("T", "next_theme", "Theme", show=False,
                tooltip="Next theme: dark, light, colour-blind safe, high contrast (remembered)"),
    ]
    """App-wide bindings."""

    def __init__(self, db_path: str | None, *, sweep_id: str | None = None, run: bool = False,
                 latency_scale: float | None = None, retry_failed: bool = False,
                 audits: list[AuditView] | None = None, in_process: bool = False) -> None:
        super().__init__()
        route_worker_events_to_app()
        self.audits = audits
        self.in_process = in_process
        self.retry_failed = retry_failed
        self.db_path = db_path
        self.sweep_id = sweep_id
        self.run_sweep = run
        self.latency_scale = latency_scale
        self.runner: SweepRunner | RunnerProcess | None = None
        """What runs the sweep on display: a child process, or (tests) an in-process runner."""
        self.sweep_status: str | None = None
        self.watching_pid: int | None = None
        """Another process running the sweep on display, when this app only watches it."""
        self.sweep_screen: SweepScreen | None = None
        self.marked_row: int | None = None
        """The row marked (``m`` on a cell's rows) to be compared with another (``v``)."""
        self._theme_names: list[str] = []
        self._settings_lock = threading.Lock()
        self._form_draft: dict[str, object] = {}
        """What the new-sweep form held when last closed: it reopens with it."""
        self._sweep_done = threading.Event()
        self._sweep_done.set()  # nothing running until a sweep worker starts
        self._collector = KeyPausedCollector()
        self._parsed_css: dict[tuple[Any, ...], list[Any]] = {}
        """Parsed stylesheet rules by their variables and sources (``_parse_css``)."""
        self._themes_parsed_ahead = False
        """The cyclic collector waits while keys are pressed (``ui.widgets.memory``)."""

    @property
    def _db(self) -> str:
        """The database path: only an app opened on session audits has none, and it opens no
        sweep."""
        assert self.db_path is not None
        return self.db_path

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
        if self.db_path is not None and self.audits is None:
            # Every command's --db defaults to the database the TUI opened last.
            self.save_settings({LAST_DB_KEY: str(Path(self.db_path).resolve())})
        if self.audits is not None:
            self.push_screen(AuditScreen(self.audits, quit_on_back=True))
        elif self.sweep_id is None and self.db_path is not None:
            self.push_screen(SweepPicker(self.db_path), self._picked)
        else:
            assert self.sweep_id is not None  # no picker: the command named the sweep
            self._show_sweep(self.sweep_id)
            if self.run_sweep:
                self._start_runner(self.sweep_id)
        self._warm_up()
        self.call_after_refresh(self._collector.start)
        self.set_interval(0.1, self._collector.tick)

    @work(thread=True, group="warm-up", exit_on_error=False,
          description="load the maths the grid's intervals use")
    def _warm_up(self) -> None:
        """Compile the identifier rules the fact spans of a cell's answers are found with
        (``core.identifiers.default_rules``: ~0.1 s of regular expressions, once per process),
        then import what the grid's intervals compute with (``scipy.special``: about a second),
        in a thread, before the first cell opened or poll needs them and holds its key."""
        default_rules()
        t_ppf(0.975, 3.0)

    def keys_idle(self) -> bool:
        """No key or click for a moment (``ui.widgets.memory.HOLD_S``): work no key waits
        for (composing the cell screen ahead) may take the UI thread now."""
        return self._collector.idle()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown, events.MouseScrollDown,
                              events.MouseScrollUp)):
            self._collector.key()
        await super().on_event(event)

    # -- sweeps -----------------------------------------------------------------------------

    def _show_sweep(self, sweep_id: str) -> None:
        self.sweep_id = sweep_id
        screen = SweepScreen(self._db, sweep_id)
        if isinstance(self.runner, RunnerProcess) and self.runner.sweep_id == sweep_id:
            screen.own_runner_pid = self.runner.pid
        if self.sweep_screen is None or self.screen is not self.sweep_screen:
            self.push_screen(screen)
        else:
            self.switch_screen(screen)
        self.sweep_screen = screen

    def _start_runner(self, sweep_id: str) -> None:
        kind = SweepRunner if self.in_process else RunnerProcess
        self._sweep_done.clear()  # at once: a resume asked meanwhile sees this sweep run here
        self.runner = kind(self._db, sweep_id, latency_scale=self.latency_scale,
                           retry_failed=self.retry_failed)
        self.execute_sweep()

    def _picked(self, picked: SweepSummary | StoredAudit | ResumePick | None) -> None:
        """Open the sweep chosen in the picker; resume it here if it is unfinished, nobody
        else runs it, this app runs nothing else, and the database can be written (``R`` in
        the picker asks for the resume by name and is told why when it cannot). A stored
        session audit opens the audit screen (back from it returns to the picker when no sweep
        is open)."""
        if isinstance(picked, StoredAudit):
            self._show_audit(picked)
            return
        if isinstance(picked, ResumePick):
            if picked.sweep.id != self.sweep_id or self.sweep_screen is None:
                self._show_sweep(picked.sweep.id)
            self.post_message(ResumeSweep(picked.sweep.id))
            return
        if picked is None or (picked.id == self.sweep_id and self.sweep_screen is not None):
            return
        self._show_sweep(picked.id)
        if picked.status in FINISHED or picked.runner_pid is not None:
            return
        if self._sweep_done.is_set() and writable(self._db):
            self._start_runner(picked.id)
        elif not self._sweep_done.is_set():
            self.notify(f"sweep {picked.id} is {picked.status}; {self._busy_text(picked.id)}",
                        severity="warning", timeout=8, markup=False)

    def _busy_text(self, sweep_id: str) -> str:
        """Why a sweep cannot be resumed here while this app runs another."""
        running = self.runner.sweep_id if self.runner is not None else "another sweep"
        return (f"sweep {running} runs here: cancel it (C) and press R, or resume {sweep_id} "
                f"in another terminal: foldscope run --db {self._db} --resume {sweep_id} "
                "--headless")

    @on(ResumeSweep)
    def resume_requested(self, message: ResumeSweep) -> None:
        """Resume a sweep by name (``R`` on the grid or in the picker, or the palette)."""
        self._read_resumable(message.sweep_id)

    @work(thread=True, group="resume", exit_on_error=False, description="read a sweep's status")
    def _read_resumable(self, sweep_id: str) -> None:
        state = read_resume_state(self._db, sweep_id)
        self.call_from_thread(self._resume, sweep_id, state.status if state else None,
                              state.runner_pid if state else None)

    def _resume(self, sweep_id: str, status: str | None, pid: int | None) -> None:
        """Resume here, ask a paused sweep's runner to go on, or say why neither can be."""
        if status is None:
            self.notify(f"no sweep {sweep_id} in {self._db}", severity="warning", markup=False)
        elif status in FINISHED:
            self.notify(f"sweep {sweep_id} is {status}: nothing left to resume", timeout=5,
                        markup=False)
        elif status == SweepStatus.PAUSED and pid is not None:
            self._request_resume(sweep_id)
        elif pid is not None or (self.runner is not None and self.runner.sweep_id == sweep_id
                                 and not self._sweep_done.is_set()):
            self.notify(f"sweep {sweep_id} is already running"
                        + (f" (pid {pid})" if pid is not None else ""), timeout=4, markup=False)
        elif not self._sweep_done.is_set():
            self.notify(self._busy_text(sweep_id), severity="warning", timeout=10, markup=False)
        elif not writable(self._db):
            self.notify(f"{self._db} is read-only: sweep {sweep_id} can only be watched",
                        severity="warning", timeout=6, markup=False)
        else:
            if sweep_id != self.sweep_id or self.sweep_screen is None:
                self._show_sweep(sweep_id)
            self._start_runner(sweep_id)
            self.notify(f"resuming sweep {sweep_id} from its last committed fold", timeout=4,
                        markup=False)

    @work(thread=True, group="resume", exit_on_error=False, description="resume a paused sweep")
    def _request_resume(self, sweep_id: str) -> None:
        try:
            pid = request_control(self._db, sweep_id, "resume", "resume from the TUI")
        except ConfigError as exc:
            self.call_from_thread(self.notify, str(exc), severity="warning", markup=False)
            return
        self.call_from_thread(self.notify, f"resume requested for sweep {sweep_id} (runner pid "
                              f"{pid})", timeout=4, markup=False)

    @work(thread=True, group="audit-read", exit_on_error=False,
          description="read a stored session audit")
    def _show_audit(self, stored: StoredAudit) -> None:
        """Read a stored session audit into the audit screen's records in a thread, then show
        it (a malformed document is one error line)."""
        try:
            view = read_audit_view(stored)
        except ConfigError as exc:
            self.call_from_thread(self.notify, literal(str(exc), keep_newlines=False),
                                  severity="error", markup=False)
            return
        self.call_from_thread(self._push_audit, view)

    def _push_audit(self, view: AuditView) -> None:
        reopen = self.sweep_screen is None and self.audits is None and self.db_path is not None
        self.push_screen(AuditScreen([view]),
                         (lambda _: self.action_pick_sweep()) if reopen else None)

    def action_pick_sweep(self) -> None:
        """Open the sweep picker."""
        assert self.db_path is not None
        self.push_screen(SweepPicker(self.db_path, self.sweep_id), self._picked)

    def action_new_sweep(self) -> None:
        """Open the new-sweep form; the sweep it plans opens and runs here."""
        if not self._sweep_done.is_set():
            self.notify("a sweep is already running here: pause or cancel it, or start the new "
                        "one from another terminal", severity="warning", timeout=6)
            return
        self.push_screen(NewSweepScreen(self._db, self._form_draft), self._new_sweep_planned)

    def _new_sweep_planned(self, sweep_id: str | None) -> None:
        if sweep_id is None:
            return
        self._show_sweep(sweep_id)
        self._start_runner(sweep_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "new_sweep":  # from the grid or the picker, not over a cell or a dialog
            return (self.sweep_screen is None or self.screen is self.sweep_screen
                    or isinstance(self.screen, SweepPicker))
        if action == "pick_sweep":
            # From the grid (or before any sweep is open), not from inside a cell or a dialog.
            return self.db_path is not None and (
                self.sweep_screen is None or self.screen is self.sweep_screen)
        return True

    @property
    def _background_screens(self) -> list[Screen[Any]]:
        """Textual's (the screens under the current one that may show through it), except
        that none shows through an opaque screen: Textual lists the one below whatever the
        current screen's background, so each repaint of the grid under a cell screen (its
        polls, its clock) repainted the cell screen over the same region, the whole screen
        in one frame out of two of a fold step."""
        stack = self._screen_stack
        if stack and stack[-1].styles.background.a == 1:
            return []
        return super()._background_screens

    # -- help, themes, palette --------------------------------------------------------------

    def refresh_css(self, animate: bool = True) -> None:
        """Textual's, except that a screen kept installed but on no stack (the reused cell
        screen, ``screens.cell.open_cell``) is not restyled: it restyles when it is next
        shown (its resume sees the CSS changed), so a theme switch costs what is on show; and
        the stylesheet is parsed once per theme (``_parse_css``); restyled nodes are refreshed
        once each (``refreshes_once``)."""
        away = {screen for screen in self._installed_screens.values()
                if isinstance(screen, Screen) and screen.is_attached
                and not any(screen in stack for stack in self._screen_stacks.values())}
        stylesheet = self.stylesheet
        stylesheet.set_variables(self.get_css_variables())
        self._parse_css(stylesheet)
        with refreshes_once():
            stylesheet.update_nodes(_walk_except(self, away), animate=animate)
        with contextlib.suppress(ScreenError):
            if self.screen.is_mounted:
                self.screen._refresh_layout(self.size)
                self.screen._css_update_count = self._css_update_count
        for screen in self.screen_stack:  # as Textual does: the screens under the current one
            if screen != self.screen:
                with refreshes_once():
                    stylesheet.update(screen, animate=animate)
                screen._css_update_count = self._css_update_count

    def _parse_css(self, stylesheet: Stylesheet) -> None:
        """``stylesheet.reparse()``, its rules remembered by its variables and sources: a theme
        switched to again (or parsed ahead, ``_parse_themes_ahead``) takes the rules parsed
        for it, not a new parse of every widget's CSS (a fifth of the key)."""
        key = _css_key(stylesheet._variables, stylesheet.source)
        rules = self._parsed_css.get(key)
        if rules is None:
            stylesheet.reparse()
            self._parsed_css[key] = stylesheet.rules
            return
        stylesheet._rules = rules
        stylesheet._rules_map = None
        stylesheet._require_parse = False

    def parse_themes_ahead(self) -> None:
        """Parse the stylesheet for every foldscope theme, in a thread (the grid is up, the
        cell screen composed ahead and keys have paused): the first switch to each takes its
        rules ready-made (the one shown too: it was parsed before the cell screen's CSS)."""
        if not self._themes_parsed_ahead:
            self._themes_parsed_ahead = True
            sources = dict(self.stylesheet.source)
            self._parse_themes(sources, [self._theme_css_variables(self.get_theme(name))
                                         for name in self._theme_names
                                         if self.get_theme(name)])

    def _theme_css_variables(self, theme: Theme | None) -> dict[str, str]:
        """The CSS variables ``get_css_variables`` gives while ``theme`` is the app's."""
        assert theme is not None
        variables = {**theme.to_color_system().generate(), **theme.variables}
        return {**self.get_theme_variable_defaults(), **variables}

    @work(thread=True, group="parse-themes", exit_on_error=False,
          description="parse the stylesheet for each theme ahead of its first switch")
    def _parse_themes(self, sources: dict[Any, Any], variables: list[dict[str, str]]) -> None:
        for theme_variables in variables:
            while not self.keys_idle():  # a parse holds the interpreter: not while keys work
                time.sleep(0.05)
            sheet = Stylesheet(variables=theme_variables)
            for read_from, (css, is_defaults, tie_breaker, scope) in sources.items():
                sheet.add_source(css, read_from=read_from, is_default_css=is_defaults,
                                 tie_breaker=tie_breaker, scope=scope)
            sheet.parse()
            self.call_from_thread(self._parsed_css.setdefault,
                                  _css_key(theme_variables, sheet.source), sheet.rules)

    def key_places(self) -> list[KeyPlace]:
        """Every key binding of foldscope, by the place it works in (for the help screen)."""
        return [("Everywhere", self.BINDINGS), ("Sweep grid", SweepScreen.BINDINGS),
                ("A cell's rows and folds", CellScreen.BINDINGS),
                ("Compare two rows (v on a cell's rows or the review)", CompareScreen.BINDINGS),
                ("Survival", SurvivalScreen.BINDINGS),
                ("Answer tab (table focused)", AnswerTable.BINDINGS),
                ("Fabrication review", FabricationScreen.BINDINGS),
                ("Reason for a verdict", ReasonInput.BINDINGS),
                ("Sweep picker", SweepPicker.BINDINGS),
                ("New-sweep form", NewSweepScreen.BINDINGS),
                ("Study tables", StudyScreen.BINDINGS),
                ("Session audit", AuditScreen.BINDINGS),
                ("Filter line (/ on the rows or the review list)", [
                    Binding("enter", "", "Keep the filter and go back to the table"),
                    *FilterBar.BINDINGS]),
                ("Tables", [Binding("up,down,left,right", "", "Move the cursor"),
                            Binding("click", "", "A click on a column's header sorts by it "
                                    "(a second click: the other way)"),
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

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Textual's own palette commands, without its theme picker: foldscope's Theme entry
        (``T``) and its ``Theme: name`` commands are the one way to switch, so the palette
        lists one Theme, not two."""
        for command in super().get_system_commands(screen):
            if command.title != "Theme":
                yield command

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
        """Write the settings file in a thread (one write at a time, so none is lost); a
        failure is one warning line."""
        try:
            with self._settings_lock:
                update_user_config(changes)
        except ConfigError as exc:
            self.call_from_thread(self.notify, str(exc), severity="warning", timeout=10,
                                  markup=False)

    @work(thread=True, group="sweep", exit_on_error=False, description="run the sweep")
    def execute_sweep(self) -> str:
        """Run the sweep to its end (in a child process, or here in tests); return its status.

        Every fold is committed as it lands, and the sweep screen reads them from the store. A
        sweep another live process already runs is watched, not run: that is not an error.

        Raises:
            RunnerFailed: the child runner reported an error (or could not start).
        """
        assert self.runner is not None
        self._sweep_done.clear()
        try:
            if isinstance(self.runner, RunnerProcess):
                return self._run_child(self.runner)
            return asyncio.run(self.runner.run())
        except asyncio.CancelledError:
            return "cancelled"
        except SweepClaimed as exc:
            self.watching_pid = exc.pid
            return "watching"
        finally:
            self._sweep_done.set()

    def _run_child(self, child: RunnerProcess) -> str:
        """Start the child runner and wait (in the worker's thread) for it to end."""
        child.start()
        self.call_from_thread(self._child_started, child)
        outcome = child.wait()
        if outcome.watching_pid is not None:
            self.watching_pid = outcome.watching_pid
            return "watching"
        if outcome.error is not None:
            raise RunnerFailed(outcome.error)
        return outcome.status

    def _child_started(self, child: RunnerProcess) -> None:
        """The sweep screen shows the child this app started as running, not as watched."""
        if self.sweep_screen is not None and self.sweep_screen.sweep_id == child.sweep_id:
            self.sweep_screen.own_runner_pid = child.pid

    @on(Worker.StateChanged)
    def worker_changed(self, event: Worker.StateChanged) -> None:
        """The app's one worker handler: the sweep worker's end is the app's own; any other
        worker's goes to the screen or widget that started it (``ui.workers.EndsWorkers``), and
        a failure nobody shows is reported here in one line (never a silent thread death)."""
        if event.worker.group == "sweep":
            self._sweep_worker_changed(event)
            return
        node = event.worker.node
        if isinstance(node, EndsWorkers) and node.worker_ended(event):
            return
        if event.state == WorkerState.ERROR:
            what = event.worker.description or event.worker.group or "a background task"
            self.notify(literal(f"failed: {what}: {event.worker.error}", keep_newlines=False),
                        severity="error", timeout=10, markup=False)

    def _sweep_worker_changed(self, event: Worker.StateChanged) -> None:
        """Record how the sweep worker ended and tell the person if it failed."""
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
        """Quit at once; a running sweep is asked to stop first.

        A child runner records its stop on its own (it commits each fold as it lands, and
        SIGTERM or its parent going makes it write ``stopped``): the app goes without waiting
        for it, and waits for it afterwards (``wait_for_runner``), with the terminal already
        given back, so the resume line printed then reads what the runner recorded. A runner in
        this process (tests) is waited for here, as it cannot outlive the app.
        """
        self.stop_sweep()
        if not isinstance(self.runner, RunnerProcess):
            await asyncio.to_thread(self._sweep_done.wait, QUIT_GRACE_S)
        # Verdicts and flags given just before quitting are written before the app goes.
        await asyncio.to_thread(self.finish_writes)
        self.exit()

    def wait_for_runner(self) -> None:
        """Wait for a child runner asked to stop to record how it stopped; one that does not
        answer within ``QUIT_GRACE_S`` is killed (its sweep then reads interrupted, and
        resumes where its committed folds end)."""
        if not self._sweep_done.wait(QUIT_GRACE_S) and isinstance(self.runner, RunnerProcess):
            self.runner.kill()
            self._sweep_done.wait(QUIT_GRACE_S)

    async def _process_messages(self, *args: Any, **kwargs: Any) -> None:
        # Textual's whole run, the terminal given back at its end; then the child runner asked
        # to stop is waited for, off the app's time (``action_quit``).
        try:
            await super()._process_messages(*args, **kwargs)
        finally:
            self.stop_sweep()
            await asyncio.to_thread(self.wait_for_runner)

    def stop_sweep(self, reason: str = "quit from the TUI") -> None:
        """Cancel a running sweep: calls in flight are lost, committed folds stay (only the
        first reason counts)."""
        if self.runner is not None:
            self.runner.cancel(reason)

    def on_unmount(self) -> None:
        self._collector.stop()
        self.stop_sweep()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
