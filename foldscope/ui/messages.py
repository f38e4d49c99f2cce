"""App-wide messages: snapshots of the store that pollers post to screens, and the outcomes of
the writes screens ask for."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from foldscope.engine.live import LiveView
from foldscope.engine.writes import WriteOutcome


@dataclass
class SweepSnapshot(Message):
    """The latest header, cells and progress of one sweep, read from the store by a poller."""

    sweep_id: str
    view: LiveView

    def can_replace(self, message: Message) -> bool:
        # Only the newest snapshot matters; older ones queued behind it can be dropped.
        return isinstance(message, SweepSnapshot) and message.sweep_id == self.sweep_id


@dataclass
class SweepFinished(Message):
    """The sweep worker ended (done, stopped, cancelled or failed); the app posts it to the
    sweep screen, which reads the store once more."""

    bubble = False

    sweep_id: str
    status: str
    error: str | None = None


@dataclass
class WriteDone(Message):
    """A store write a screen asked for has ended: saved, refused or failed (``engine.writes``).
    The app's writer posts it to the screen that asked."""

    bubble = False

    outcome: WriteOutcome


@dataclass
class ResumeSweep(Message):
    """A person asked to resume a sweep (``R`` on the grid or the picker, or the palette); the
    app resumes it here, asks its live runner to resume a pause, or says why it cannot."""

    sweep_id: str
