"""The help screen (``?`` or F1): every key by place, every metric's definition, the recall
interval's method and the symbols, all read from the code that defines them."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from foldscope.core.metrics import INTERVAL_METHOD, METRICS

SYMBOLS: tuple[tuple[str, str], ...] = (
    ("●", "the fact is present in the carrier after that fold (verbatim, whole token)"),
    ("◐", "mutated: a near miss of the value (the near-miss rules name how)"),
    ("○", "missing from the carrier"),
    ("· (strip)", "in a row's fact strip: not yet — the fold had not read the fact's chunk"),
    ("lost at", "the fold after which a fact that had reached the carrier was no longer in it "
     "verbatim; ↺: it came back later (worth a look: a fold sees only its chunk)"),
    ("- / +", "diff pane: carrier lines removed / added by the fold; lost values reversed, "
     "added values underlined"),
    ("⋯", "diff pane: unchanged carrier lines left out between the changed ones"),
    ("★", "a graded fact (asked at the recall turn); unstarred facts are decoys"),
    ("⟳", "rows of the cell are running now (never shown once the runner has stopped)"),
    ("✗N", "grid cell: N rows of the cell failed (their error is in the rows table and the "
           "inspector); ✗ row N: the inspector's line for a failed row"),
    ("⚑", "answers a person flagged as fabricated"),
    ("✗ ✓ ?", "fabrication review: a person's verdict (fabricated, not fabricated, unsure), "
              "shown beside the automatic class, never over it"),
    ("n/m", "valid rows / planned rows of the cell"),
    ("—", "grid cell: nothing to measure yet — no row of the cell has finished, none is valid, "
          "or the arm declares no ceiling (— 0/2: two rows planned, none valid yet); in the rows "
          "table a figure the row does not have yet"),
    ("·", "grid cell: the cell has no rows yet (before the sweep's first read)"),
    ("▲ ▼", "a column header: the rows are sorted by it, ascending (▲) or descending (▼)"),
    ("● ▲ ▼", "study scatter: a valid row that recalled (●), failed over-writing description "
              "(▲) or failed writing an under-length gist (▼)"),
    ("━●━", "survival legend: an arm's line colour and the mark drawn at each of its folds "
            "(● ▲ ■ ◆ ✚ ✖ ○ △ □ ◇ ★ ▼, one per arm)"),
    ("█▌", "a bar (study tables): its length is the value, in eighths of a character"),
    ("A N F C H", "answers view: honest abstentions (said it does not know), no answer "
                  "(gave nothing for the label: not an abstention), fabrications, carried "
                  "corruptions, hedged"),
    ("⚠", "a warning: an unpinned model, an unbalanced design, a verdict not saved"),
    ("␛ ␊ �", "control characters in model text, shown as visible stand-ins, never obeyed"),
)
"""The marks the screens draw, and what each means."""

KeyPlace = tuple[str, Sequence[BindingType]]
"""A place in the app (a screen or widget) and its key bindings."""


def _keys(app, places: Sequence[KeyPlace]) -> Text:
    text = Text()
    for place, bindings in places:
        entries = [b for b in bindings if isinstance(b, Binding) and b.description]
        if not entries:
            continue
        text.append(f"{place}\n", style="bold")
        for b in entries:
            key = b.key_display or ", ".join(
                app.get_key_display(Binding(k.strip(), b.action)) for k in b.key.split(","))
            text.append(f"  {key:<14}", style="bold")
            text.append(b.description)
            text.append(f" — {b.tooltip}\n" if b.tooltip else "\n",
                        style="dim" if b.tooltip else "")
        text.append("\n")
    text.rstrip()
    return text


def _metrics() -> Text:
    text = Text()
    for m in METRICS:
        text.append(f"  {m.label:<20}", style="bold")
        text.append(f"{m.definition}\n")
    text.append("\n  Recall interval  ", style="bold")
    text.append(f"{INTERVAL_METHOD}.\n")
    text.append("  Colours  ", style="bold")
    text.append("each metric's value reads good, fair or poor by fixed thresholds (recall ≥ 0.8 "
                "good, ≥ 0.4 fair); the colours are the theme's fact-present, fact-mutated and "
                "fact-missing.")
    return text


def _symbols() -> Text:
    text = Text()
    for mark, meaning in SYMBOLS:
        text.append(f"  {mark:<8}", style="bold")
        text.append(f"{meaning}\n")
    text.rstrip()
    return text


class HelpScreen(ModalScreen[None]):
    """Every key, metric and symbol; ``escape``, ``q`` or ``?`` closes it."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 110; height: 90%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    HelpScreen .help-heading { color: $primary; text-style: bold; margin: 1 0 0 0; }
    """

    BINDINGS = [
        Binding("escape,q,question_mark,f1", "dismiss", "Close help", show=True),
    ]
    """Keys that close the help screen."""

    def __init__(self, places: Sequence[KeyPlace]) -> None:
        super().__init__()
        self.places = list(places)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("Keys", classes="help-heading", markup=False)
            yield Static(_keys(self.app, self.places), id="help-keys")
            yield Static("Metrics (v cycles them in the grid)", classes="help-heading",
                         markup=False)
            yield Static(_metrics(), id="help-metrics")
            yield Static("Symbols", classes="help-heading", markup=False)
            yield Static(_symbols(), id="help-symbols")
            yield Static(Text("ctrl+p opens the command palette: every action above, every "
                              "metric, theme and sort column by name.", style="italic"))
