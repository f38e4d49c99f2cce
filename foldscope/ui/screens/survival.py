"""The survival screen: per arm, the share of graded facts still carried after each fold, and
where facts die (fold of loss by chunk planted in, and by kind of value)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.survival import NEVER_LOST, DeathTable, pool_by_arm
from foldscope.core.text import literal
from foldscope.engine.timelines import SweepForensics
from foldscope.engine.views import read_survival
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.survival_chart import Series, SurvivalChart, arm_slot


@dataclass
class ForensicsRead(Message):
    """A sweep's survival curves and death tables, read in a thread."""

    forensics: SweepForensics


class SurvivalScreen(Screen[None]):
    """Survival curves per arm of one scenario (``s``: the next one; all models pooled, or one
    model: ``m``) and that scenario's death tables, over the sweep's valid rows."""

    DEFAULT_CSS = """
    SurvivalScreen {
        #survival-body { padding: 0 1; }
        #survival-title { margin: 1 0 0 0; height: auto; }
        #survival-chart { height: 2fr; }
        #deaths { height: 1fr; }
        #by-chunk, #by-kind { width: 1fr; }
        .deaths-title { color: $text-muted; }
    }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("s", "next_scenario", "Scenario"),
        Binding("m", "next_model", "Model"),
        Binding("r", "reload", "Reload"),
    ]
    """Key bindings of the survival screen."""

    model: reactive[str | None] = reactive(None)
    """The model whose curves are drawn; None pools every model."""
    scenario: reactive[str | None] = reactive(None)
    """The scenario whose curves and death tables are drawn (scenarios are never pooled)."""

    def __init__(self, db_path: str, sweep_id: str) -> None:
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.forensics: SweepForensics | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="survival-body"):
            yield Static(id="survival-title")
            yield SurvivalChart(id="survival-chart")
            with Horizontal(id="deaths"):
                with Vertical(id="by-chunk-side"):
                    yield Static("graded facts by fold of loss × chunk planted in",
                                 classes="deaths-title")
                    yield DataTable(id="by-chunk", cursor_type="row", zebra_stripes=True)
                with Vertical(id="by-kind-side"):
                    yield Static("graded facts by fold of loss × kind of value",
                                 classes="deaths-title")
                    yield DataTable(id="by-kind", cursor_type="row", zebra_stripes=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#survival-title", Static).update(Text("reading the sweep's timelines…"))
        self.load()

    def action_reload(self) -> None:
        """Read the sweep again (rows may have finished since)."""
        self.load()

    @work(thread=True, group="survival-load", exclusive=True, exit_on_error=False,
          description="read every row's fact timeline")
    def load(self) -> None:
        """Read the folds' stored states of the whole sweep (no carrier text) in a thread."""
        found = read_survival(self.db_path, self.sweep_id)
        if not get_current_worker().is_cancelled:
            self.post_message(ForensicsRead(found))

    @on(ForensicsRead)
    def _read(self, message: ForensicsRead) -> None:
        self.forensics = message.forensics
        scenarios = message.forensics.scenarios
        if self.scenario not in scenarios:
            self.scenario = scenarios[0] if scenarios else None
        self._draw()

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """A read that failed (a scenario that cannot be loaded...) says so in one line."""
        if event.worker.group == "survival-load" and event.state == WorkerState.ERROR:
            error = event.worker.error
            self.query_one("#survival-title", Static).update(Text(literal(
                f"could not read the sweep's timelines: {error}", keep_newlines=False),
                style="bold"))
            return True
        return False

    def action_next_model(self) -> None:
        """Cycle: every model pooled, then each model alone."""
        models = sorted({c.model for c in (self.forensics.curves if self.forensics else [])})
        order: list[str | None] = [None, *models]
        self.model = order[(order.index(self.model) + 1) % len(order)] if self.model in order \
            else None

    def action_next_scenario(self) -> None:
        """Cycle through the sweep's scenarios."""
        order = list(self.forensics.scenarios if self.forensics else ())
        if order:
            self.scenario = order[(order.index(self.scenario) + 1) % len(order)] \
                if self.scenario in order else order[0]

    def watch_model(self) -> None:
        self._draw()

    def watch_scenario(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self.forensics is None:
            return
        scenario = self.scenario
        curves = pool_by_arm(self.forensics.curves, scenario, self.model) if scenario else []
        self.query_one(SurvivalChart).show(
            [Series(f"arm {c.arm} · {c.rows} rows", c.fractions, arm_slot(c.arm))
             for c in curves])
        who = "every model pooled" if self.model is None else self.model
        rows = self.forensics.rows_of(scenario) if scenario else 0
        left_out = (f" ({self.forensics.excluded} not valid, left out)"
                    if self.forensics.excluded else "")
        self.query_one("#survival-title", Static).update(Text(literal(
            f"survival of graded facts · sweep {self.sweep_id} · {scenario or 'no valid rows'} · "
            f"{who} · {rows} valid rows with folds{left_out}   s: next scenario · "
            "m: next model · r: reload", keep_newlines=False)))
        deaths = self.forensics.deaths.get(scenario) if scenario else None
        empty = DeathTable({}, {}, (NEVER_LOST,), (), ())
        _fill(self.query_one("#by-chunk", DataTable), deaths or empty, "chunk")
        _fill(self.query_one("#by-kind", DataTable), deaths or empty, "kind")


def _fill(table: DataTable, deaths: DeathTable, by: str) -> None:
    """Fill one death table: a line per chunk (or kind), a column per fold of loss."""
    table.clear(columns=True)
    keys: tuple[int | str, ...] = deaths.chunks if by == "chunk" else deaths.kinds
    counts: Mapping[tuple[str, Any], int] = deaths.by_chunk if by == "chunk" else deaths.by_kind
    table.add_column(by, key="key")
    for fold in deaths.folds:
        table.add_column("kept" if fold == NEVER_LOST else f"lost {fold}", key=fold)
    table.add_column("total", key="total")
    for key in keys:
        cells = [counts.get((fold, key), 0) for fold in deaths.folds]
        table.add_row(Text(literal(str(key), keep_newlines=False)),
                      *[Text(str(n) if n else "·", justify="right") for n in cells],
                      Text(str(sum(cells)), justify="right"), key=str(key))
