"""The study screen: the study's tables of one sweep (as ``foldscope report --format md``) with
recall by arm and a fill-vs-recall scatter plotted in the terminal."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from foldscope.core.study import FillPoint, StudyTables, Table, cell_text
from foldscope.core.text import literal
from foldscope.engine.views import read_study
from foldscope.ui.widgets.fill_scatter import FillScatter
from foldscope.ui.widgets.keys_footer import KeysFooter
from foldscope.ui.widgets.recall_bars import RecallBars


@dataclass
class StudyData(Message):
    """The study's tables and scatter points of one sweep, read from the store in a thread."""

    studies: list[StudyTables]
    points: dict[str, list[FillPoint]]


def _table_widget(table: Table, key: str) -> DataTable:
    grid: DataTable = DataTable(id=key, classes="study-table", cursor_type="row",
                                zebra_stripes=True)
    grid.fixed_columns = 1  # the key column (arm, model or class) stays in view
    grid.add_columns(*table.columns)
    for row in table.rows:
        # Model ids and scenario names are outside text: shown literally, never as markup.
        grid.add_row(*(Text(literal(cell_text(c, v), keep_newlines=False))
                       for c, v in zip(table.columns, row)))
    return grid


class StudyScreen(Screen[None]):
    """The study's tables of one sweep, per scenario, with two plots."""

    DEFAULT_CSS = """
    StudyScreen #study-body { padding: 0 1; }
    StudyScreen .study-plots { height: auto; margin: 1 0; }
    StudyScreen.-narrow .study-plots { layout: vertical; }
    StudyScreen .study-scenario { text-style: bold; margin: 1 0 0 0; }
    StudyScreen .study-notes { color: $warning; }
    StudyScreen .study-title { text-style: bold; margin: 1 0 0 0; }
    StudyScreen .study-table { height: auto; overflow-x: auto; }
    StudyScreen .study-table-notes { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", tooltip="Back to the sweep grid"),
        Binding("r", "reload", "Reload",
                tooltip="Read the sweep again (a running sweep's tables grow as rows finish)"),
    ]
    """Key bindings of the study screen."""

    def __init__(self, db_path: str, sweep_id: str) -> None:
        super().__init__()
        self.db_path, self.sweep_id = db_path, sweep_id
        self.studies: list[StudyTables] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="study-body"):
            yield Static(Text(f"study tables · sweep {literal(self.sweep_id)} · reading…"),
                         id="study-heading")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.load()

    def action_reload(self) -> None:
        """Read the sweep again (a running sweep's tables grow as rows finish)."""
        self.load()

    @work(thread=True, group="study-load", exclusive=True, exit_on_error=False,
          description="build the study's tables from the store")
    def load(self) -> None:
        """Read the sweep's rows, folds and checks and build its tables in a thread."""
        model = read_study(self.db_path, self.sweep_id)
        if not get_current_worker().is_cancelled:
            self.post_message(StudyData(model.studies, model.points))

    @on(StudyData)
    async def show(self, message: StudyData) -> None:
        """Lay out every scenario's plots and tables (rebuilt on each read)."""
        self.studies = message.studies
        body = self.query_one("#study-body", VerticalScroll)
        await body.remove_children(".study-part")
        self.query_one("#study-heading", Static).update(Text.assemble(
            (f"study tables · sweep {literal(self.sweep_id)}", "bold"),
            "   r: reload · escape: back to the grid"))
        parts: list[Static | DataTable | Horizontal] = []
        for index, study in enumerate(message.studies):
            scenario = literal(study.scenario, keep_newlines=False)
            parts.append(Static(Text(f"scenario {scenario}"), classes="study-part study-scenario"))
            if study.notes:
                parts.append(Static(Text("\n".join(literal(n) for n in study.notes)),
                                    classes="study-part study-notes"))
            bars = RecallBars(classes="study-bars")
            scatter = FillScatter(classes="study-scatter")
            recall = study.table("recall")
            bars.show(recall.records() if recall else [])
            scatter.show(message.points.get(study.scenario, []))
            parts.append(Horizontal(bars, scatter, classes="study-part study-plots"))
            for table in study.tables:
                parts.append(Static(Text(table.title), classes="study-part study-title"))
                parts.append(_table_widget(table, f"study-{index}-{table.name}"))
                parts[-1].add_class("study-part")
                if table.notes:
                    parts.append(Static(Text("\n".join(table.notes)),
                                        classes="study-part study-table-notes"))
        if not message.studies:
            parts.append(Static(Text("no rows in this sweep"), classes="study-part"))
        await body.mount_all(parts)

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """Show a failed read in the heading rather than crashing the app."""
        if event.state == WorkerState.ERROR and event.worker.group == "study-load":
            self.query_one("#study-heading", Static).update(
                Text(literal(f"cannot read {self.db_path}: {event.worker.error}")))
            return True
        return False
