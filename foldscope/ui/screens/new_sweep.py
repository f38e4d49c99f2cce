"""The new-sweep form: scenario, models, arms, repeats, design and concurrency, or a sweep file,
validated by the same rules as ``foldscope run`` (every error shown inline at once, one line
each). What was typed is kept by the app, so the form reopens as it was closed."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker, WorkerState

from foldscope.core.designs import balance_note
from foldscope.core.errors import FoldscopeError
from foldscope.core.text import literal
from foldscope.engine.launch import (
    Prepared,
    SweepFields,
    field_problems,
    start_from_fields,
    whole_number,
)
from foldscope.engine.loader import scenario_names

DEFAULTS = {"models": "sim/faithful,sim/describer", "arms": "j,q,m", "repeats": "3",
            "concurrency": "4"}
"""What the form offers before anything is typed: a small simulated sweep whose Latin square
is balanced (3 arms, 3 repeats: each arm leads once)."""

FormDraft = dict[str, object]
"""What the form holds, by widget id (Input text, Select value); the app keeps one across
openings."""

INPUTS = ("sweep-file", "models", "arms", "repeats", "concurrency")
SELECTS = ("scenario", "design")


class NewSweepScreen(ModalScreen[str | None]):
    """Plan a sweep from the form (or a sweep file) and hand its id back; escape leaves."""

    DEFAULT_CSS = """
    NewSweepScreen {
        align: center middle;
        #form { width: 90; max-width: 100%; height: auto; max-height: 100%;
                border: round $accent; padding: 1 2; background: $surface; }
        #form Label { margin: 1 0 0 0; }
        #form-error { color: $error; margin: 1 0 0 0; height: auto; }
        #form-note { color: $warning; height: auto; display: none; }
        #buttons { height: auto; margin: 1 0 0 0; }
        #buttons Button { margin: 0 1 0 0; }
    }
    """

    BINDINGS = [Binding("escape", "leave", "Back", tooltip="Close the form; nothing is planned")]
    """Key bindings of the form."""

    def __init__(self, db_path: str, draft: FormDraft | None = None) -> None:
        super().__init__()
        self.db_path = db_path
        self.draft: FormDraft = draft if draft is not None else {}
        """Kept up to date as fields change; the app passes the same one at the next opening."""

    def _text(self, widget_id: str) -> str:
        value = self.draft.get(widget_id)
        return value if isinstance(value, str) else DEFAULTS.get(widget_id, "")

    def compose(self) -> ComposeResult:
        names = scenario_names()
        scenario = self.draft.get("scenario", "smoke" if "smoke" in names else Select.NULL)
        if scenario is not Select.NULL and scenario not in names:
            scenario = Select.NULL
        design = self.draft.get("design", "latin")
        # Scrolls when the terminal is shorter than the form (80×24): every field reachable.
        with VerticalScroll(id="form"):
            yield Static("New sweep (the same rules as foldscope run; a sweep file's values "
                         "are overridden by the fields you fill)", markup=False)
            yield Label("Sweep file (optional)")
            yield Input(self._text("sweep-file"), placeholder="examples/kestrel-sweep.toml",
                        id="sweep-file")
            yield Label("Scenario")
            yield Select([(literal(n), n) for n in names], id="scenario", value=scenario,
                         prompt="(from the sweep file)")
            yield Label("Models (comma-separated ids)")
            yield Input(self._text("models"), id="models")
            yield Label("Arms (comma-separated)")
            yield Input(self._text("arms"), id="arms")
            yield Label("Repeats (a multiple of the design's sequences is balanced)")
            yield Input(self._text("repeats"), id="repeats")
            yield Label("Design")
            yield Select([("latin", "latin"), ("williams", "williams")], id="design",
                         value=design if design in ("latin", "williams") else "latin",
                         allow_blank=False)
            yield Label("Concurrency (calls in flight per provider)")
            yield Input(self._text("concurrency"), id="concurrency")
            yield Static(id="form-note", markup=False)
            yield Static(id="form-error", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Start", id="start", variant="primary")
                yield Button("Back", id="back")

    def on_mount(self) -> None:
        self._note()

    @on(Input.Changed)
    @on(Select.Changed)
    def remember(self, event: Input.Changed | Select.Changed) -> None:
        """Keep what was typed (the form reopens with it) and redo the design note."""
        if event.control.id is not None:
            self.draft[event.control.id] = event.value
        self._note()

    def _note(self) -> None:
        """Say, as the arms, repeats and design are typed, when the design is unbalanced."""
        arms = [a.strip() for a in self.query_one("#arms", Input).value.split(",") if a.strip()]
        try:
            repeats = whole_number(self.query_one("#repeats", Input).value, "repeats")
            note = (balance_note(arms, repeats, str(self.query_one("#design", Select).value))
                    if repeats is not None and repeats >= 0 and len(set(arms)) == len(arms)
                    else None)
        except FoldscopeError:
            note = None  # the count's own error is shown on Start
        shown = self.query_one("#form-note", Static)
        shown.update(literal(f"⚠ {note}", keep_newlines=False) if note else "")
        shown.display = note is not None  # no empty line when balanced

    def fields(self) -> tuple[SweepFields, list[str]]:
        """What the form says, as the fields ``foldscope run`` reads from its flags, and the
        counts that are not whole numbers (one line each, naming the field; left unset in the
        fields so the other fields are still checked)."""
        def text(widget_id: str) -> str | None:
            return self.query_one(f"#{widget_id}", Input).value.strip() or None

        errors: list[str] = []

        def count(widget_id: str) -> int | None:
            try:
                return whole_number(self.query_one(f"#{widget_id}", Input).value, widget_id)
            except FoldscopeError as exc:
                errors.append(str(exc))
                return None

        scenario = self.query_one("#scenario", Select).value
        fields = SweepFields(
            sweep_file=text("sweep-file"),
            scenario=None if scenario is Select.NULL else str(scenario),
            models=text("models"), arms=text("arms"), repeats=count("repeats"),
            design=str(self.query_one("#design", Select).value),
            concurrency=count("concurrency"))
        return fields, errors

    def show_errors(self, messages: list[str]) -> None:
        """Show every error under the fields, one line each."""
        self.query_one("#form-error", Static).update(
            "\n".join(literal(m, keep_newlines=False) for m in messages))

    def show_error(self, message: str) -> None:
        """Show one error line under the fields (none for an empty message)."""
        self.show_errors([message] if message else [])

    @on(Button.Pressed, "#start")
    @on(Input.Submitted)
    def start(self) -> None:
        """Validate and plan the sweep in a thread; the form stays open listing every error."""
        fields, errors = self.fields()
        self.query_one("#start", Button).disabled = True
        self.plan(fields, errors)

    @work(thread=True, group="new-sweep", exit_on_error=False, description="plan the sweep")
    def plan(self, fields: SweepFields, errors: list[str]) -> Prepared | list[str]:
        """Every problem of the form (the counts' and ``foldscope run``'s rules'), or, when
        there is none, the planned (or found) sweep."""
        problems = [*errors, *field_problems(fields)]
        if problems:
            return problems
        return start_from_fields(self.db_path, fields)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """Hand the planned sweep back, or show every reason it was refused."""
        if event.worker.group != "new-sweep":
            return False
        result = event.worker.result
        if event.state == WorkerState.SUCCESS and isinstance(result, Prepared):
            self.dismiss(result.sweep_id)
        elif event.state == WorkerState.SUCCESS and isinstance(result, list):
            self.query_one("#start", Button).disabled = False
            self.show_errors(result)
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
