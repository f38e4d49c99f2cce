"""The new-sweep form: scenario, models, arms, repeats, design and concurrency, or a sweep file,
validated by the same rules as ``foldscope run`` (errors shown inline, one line)."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from foldscope.core.errors import FoldscopeError
from foldscope.core.text import literal
from foldscope.engine.launch import Prepared, SweepFields, start_from_fields, whole_number
from foldscope.engine.loader import scenario_names

DEFAULTS = {"models": "sim/faithful,sim/describer", "arms": "j,q,m", "repeats": "2",
            "concurrency": "4"}
"""What the form offers before anything is typed (a small simulated sweep)."""


class NewSweepScreen(ModalScreen[str | None]):
    """Plan a sweep from the form (or a sweep file) and hand its id back; escape leaves."""

    DEFAULT_CSS = """
    NewSweepScreen {
        align: center middle;
        #form { width: 90; height: auto; border: round $accent; padding: 1 2;
                background: $surface; }
        #form Label { margin: 1 0 0 0; }
        #form-error { color: $error; margin: 1 0 0 0; height: auto; }
        #buttons { height: auto; margin: 1 0 0 0; }
        #buttons Button { margin: 0 1 0 0; }
    }
    """

    BINDINGS = [Binding("escape", "leave", "Back", tooltip="Close the form; nothing is planned")]
    """Key bindings of the form."""

    def __init__(self, db_path: str) -> None:
        super().__init__()
        self.db_path = db_path

    def compose(self) -> ComposeResult:
        names = scenario_names()
        with Vertical(id="form"):
            yield Static("New sweep (the same rules as foldscope run; a sweep file's values "
                         "are overridden by the fields you fill)", markup=False)
            yield Label("Sweep file (optional)")
            yield Input(placeholder="examples/kestrel-sweep.toml", id="sweep-file")
            yield Label("Scenario")
            yield Select([(literal(n), n) for n in names], id="scenario",
                         value="smoke" if "smoke" in names else Select.NULL,
                         prompt="(from the sweep file)")
            yield Label("Models (comma-separated ids)")
            yield Input(DEFAULTS["models"], id="models")
            yield Label("Arms (comma-separated)")
            yield Input(DEFAULTS["arms"], id="arms")
            yield Label("Repeats")
            yield Input(DEFAULTS["repeats"], id="repeats")
            yield Label("Design")
            yield Select([("latin", "latin"), ("williams", "williams")], id="design",
                         value="latin", allow_blank=False)
            yield Label("Concurrency (calls in flight per provider)")
            yield Input(DEFAULTS["concurrency"], id="concurrency")
            yield Static(id="form-error", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Back", id="back")

    def fields(self) -> SweepFields:
        """What the form says, as the fields ``foldscope run`` reads from its flags.

        Raises:
            FoldscopeError: a count that is not a whole number (one line naming the field).
        """
        def text(widget_id: str) -> str | None:
            return self.query_one(f"#{widget_id}", Input).value.strip() or None

        scenario = self.query_one("#scenario", Select).value
        return SweepFields(
            sweep_file=text("sweep-file"),
            scenario=None if scenario is Select.NULL else str(scenario),
            models=text("models"), arms=text("arms"),
            repeats=whole_number(self.query_one("#repeats", Input).value, "repeats"),
            design=str(self.query_one("#design", Select).value),
            concurrency=whole_number(self.query_one("#concurrency", Input).value, "concurrency"))

    def show_error(self, message: str) -> None:
        """Show one error line under the fields."""
        self.query_one("#form-error", Static).update(literal(message, keep_newlines=False))

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def start(self) -> None:
        """Validate and plan the sweep in a thread; the form stays open on an error."""
        try:
            fields = self.fields()
        except FoldscopeError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        self.query_one("#start", Button).disabled = True
        self.plan(fields)

    @work(thread=True, group="new-sweep", exit_on_error=False, description="plan the sweep")
    def plan(self, fields: SweepFields) -> Prepared:
        """Plan (or find) the sweep, by ``foldscope run``'s rules."""
        return start_from_fields(self.db_path, fields)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """Hand the planned sweep back, or show why it was refused."""
        if event.worker.group != "new-sweep":
            return False
        if event.state == WorkerState.SUCCESS and event.worker.result is not None:
            self.dismiss(event.worker.result.sweep_id)
        elif event.state == WorkerState.ERROR:
            self.query_one("#start", Button).disabled = False
            error = event.worker.error
            self.show_error(str(error) if isinstance(error, FoldscopeError)
                            else f"cannot plan the sweep: {error}")
        return True

    @on(Button.Pressed, "#back")
    def action_leave(self) -> None:
        """Close the form without planning anything."""
        self.dismiss(None)
