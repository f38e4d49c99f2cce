"""Recall by arm as horizontal bars: one bar per model under each arm, with its row count."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text
from textual.widget import Widget

from foldscope.core.text import literal

BAR_WIDTH = 30
"""Characters of a bar at recall 1.0."""


def bar(recall: float, width: int = BAR_WIDTH) -> str:
    """A bar of ``recall`` × ``width`` cells in eighths (█ and the partial blocks)."""
    eighths = round(max(0.0, min(1.0, recall)) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + ("" if part == 0 else " ▏▎▍▌▋▊▉"[part])


class RecallBars(Widget):
    """Mean recall per arm and model (the study's ``recall`` table), one line per cell."""

    DEFAULT_CSS = """
    RecallBars { height: auto; width: auto; padding: 0 2 0 0; }
    RecallBars > .recall-bars--high { color: $fact-present; }
    RecallBars > .recall-bars--mid { color: $fact-mutated; }
    RecallBars > .recall-bars--low { color: $fact-missing; }
    RecallBars > .recall-bars--label { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"recall-bars--high", "recall-bars--mid", "recall-bars--low",
                         "recall-bars--label"}
    """Bar colours by recall level (as the grid's: ≥ 0.8, ≥ 0.4, below) and the arm labels."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._records: list[Mapping[str, Any]] = []

    def show(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Plot the ``recall`` table's records (model, arm, valid_rows, mean_recall)."""
        self._records = list(records)
        self.refresh(layout=True)

    def render(self) -> Text:
        # Styles are read here, at render time, so a theme switch recolours the bars.
        if not self._records:
            return Text("no valid rows yet", style="dim")
        width = max(len(literal(str(r["model"]), keep_newlines=False)) for r in self._records)
        label = self.get_component_rich_style("recall-bars--label")
        out = Text("Recall by arm\n", style="bold")
        arms = list(dict.fromkeys(str(r["arm"]) for r in self._records))
        for arm in arms:
            out.append(f"arm {literal(arm, keep_newlines=False)}\n", style=label)
            for r in (r for r in self._records if r["arm"] == arm):
                model = literal(str(r["model"]), keep_newlines=False)
                recall = r["mean_recall"]
                out.append(f"  {model:<{width}} ")
                if recall is None:
                    out.append("—".ljust(BAR_WIDTH), style=label)
                else:
                    level = "high" if recall >= 0.8 else "mid" if recall >= 0.4 else "low"
                    out.append(bar(recall).ljust(BAR_WIDTH),
                               style=self.get_component_rich_style(f"recall-bars--{level}"))
                shown = "  —  " if recall is None else f"{recall:5.2f}"
                out.append(f" {shown} n={r['valid_rows']}\n")
        out.rstrip()
        return out
