"""A one-line reason for a verdict: Enter confirms it, Escape skips it (the verdict stands)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Input


class ReasonInput(Input):
    """The optional reason typed after a verdict key with shift (F, N, U)."""

    BINDINGS = [Binding("escape", "skip", "Skip the reason")]
    """Enter (the input's own submit) confirms; Escape records the verdict without a reason."""

    @dataclass
    class Skipped(Message):
        """The person pressed Escape: no reason."""

        reason_input: ReasonInput

        @property
        def control(self) -> ReasonInput:
            """The input that was skipped."""
            return self.reason_input

    def __init__(self, **kwargs: object) -> None:
        super().__init__(placeholder="reason (one line) · enter: save · escape: no reason",
                         max_length=200, **kwargs)  # type: ignore[arg-type]

    def action_skip(self) -> None:
        """Leave the reason empty."""
        self.post_message(self.Skipped(self))
