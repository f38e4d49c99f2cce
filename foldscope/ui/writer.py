"""The app's one store writer: every write a screen makes (fabrication verdicts, cell flags) goes
through :meth:`StoreWrites.write`, is applied in order in one thread by ``engine.writes``, and
comes back to the screen that asked as a :class:`~foldscope.ui.messages.WriteDone`."""

from __future__ import annotations

from functools import partial

from textual.app import App
from textual.message_pump import MessagePump
from textual.worker import get_current_worker

from foldscope.engine.writes import StoreWriter, WriteOp, WriteOutcome
from foldscope.ui.messages import WriteDone

WRITER_GROUP = "store-writer"
"""The worker group of the app's writer thread."""


class StoreWrites(App[None]):
    """An app whose screens write to one database through one writer thread."""

    write_backoff_s: float = 0.2
    """Pause before the first retry of a transient write error (doubled each time)."""

    db_path: str | None
    """The database screens write to (set by the app)."""

    def __init__(self) -> None:
        super().__init__()
        self._writer: StoreWriter | None = None

    def write(self, op: WriteOp, reply_to: MessagePump) -> int:
        """Queue a write; ``reply_to`` gets a ``WriteDone`` with its outcome. Returns its token."""
        if self._writer is None:
            if self.db_path is None:
                raise RuntimeError("this app was opened on session audits: it has no database")
            self._writer = StoreWriter(self.db_path, self._deliver,
                                       backoff_s=self.write_backoff_s)
            writer = self._writer
            self.run_worker(partial(writer.run, lambda: get_current_worker().is_cancelled),
                            thread=True, group=WRITER_GROUP, exit_on_error=False,
                            description="write verdicts and flags, in order")
        return self._writer.submit(op, reply_to)

    def _deliver(self, outcome: WriteOutcome, reply_to: object) -> None:
        """In the writer's thread: hand the outcome to the screen that asked (if it is still
        there; the store holds the write either way)."""
        if isinstance(reply_to, MessagePump):
            try:
                self.call_from_thread(reply_to.post_message, WriteDone(outcome))
            except RuntimeError:  # the app is closing: nothing left to show it on
                pass

    def finish_writes(self, timeout_s: float = 10.0) -> None:
        """Let the writer apply what is queued, then end it (on quit)."""
        if self._writer is not None:
            self._writer.stop()
            self._writer.join(timeout_s)
