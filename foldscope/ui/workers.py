"""How a worker's end reaches the screen that started it: the app's one ``Worker.StateChanged``
handler (``FoldscopeApp.worker_changed``) hands the event to the worker's node when the node is
:class:`EndsWorkers`, and reports any failure nobody handled in one line."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from textual.worker import Worker


def route_worker_events_to_app() -> None:
    """Let every worker's ``StateChanged`` bubble up to the app.

    Textual posts it to the worker's node only (``bubble=False``), which forces a handler on
    every screen that starts a worker; bubbling lets the app's one handler see them all and
    hand each to its node (:class:`EndsWorkers`), so no failure can end a thread unseen.
    """
    Worker.StateChanged.bubble = True


@runtime_checkable
class EndsWorkers(Protocol):
    """A screen or widget that shows how its own workers ended."""

    def worker_ended(self, event: Worker.StateChanged) -> bool:
        """Show a worker's new state; True when this node handled it (else the app reports a
        failure itself)."""
        ...
