"""The model-pins panel: each model's provider, pinned endpoint, quantization, context length
and prices as recorded with the sweep, and a warning when a model is unpinned."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.text import literal
from foldscope.engine.live import PinInfo

COLUMNS = ("model", "provider", "pin", "endpoint", "quantization", "context", "$/Mtok in",
           "$/Mtok out", "warnings")


def _cell(value: object) -> Text:
    if value is None:
        return Text("—", style="dim")
    return Text(literal(str(value), keep_newlines=False))


def pin_row(pin: PinInfo) -> list[Text]:
    """One model's cells; an unpinned model reads ``unpinned`` (in bold when it has warnings)."""
    pinned = (_cell(pin.pin) if pin.pin else
              Text("unpinned", style="bold" if pin.warnings else "dim"))
    warnings = (Text(literal("⚠ " + "; ".join(pin.warnings), keep_newlines=False), style="bold")
                if pin.warnings else Text("—", style="dim"))
    return [_cell(pin.model), _cell(pin.provider), pinned, _cell(pin.endpoint),
            _cell(pin.quantization), _cell(pin.context_length),
            _cell(pin.price_prompt_per_mtok), _cell(pin.price_completion_per_mtok), warnings]


class PinsPanel(DataTable[Text]):
    """The pins of the sweep's models (rewritten only when the runner records new ones)."""

    DEFAULT_CSS = """
    PinsPanel { height: auto; max-height: 12; }
    """

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns(*COLUMNS)

    def show(self, pins: tuple[PinInfo, ...]) -> None:
        """Show the recorded pins (the table is rebuilt only when they changed)."""
        if pins == getattr(self, "_pins", None):
            return
        self._pins = pins
        self.clear()
        for pin in pins:
            self.add_row(*pin_row(pin), key=pin.model)
