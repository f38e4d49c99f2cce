"""The one way a screen writes to the store: typed write requests applied in order by one writer
(one thread, one connection of its own), each answered by a typed outcome.

A person's verdicts and flags are never shown saved unless the store holds them: the screen
shows a write as unsaved until its outcome comes back, and the outcome carries what the store
holds *after* the write (read back for that one check, never the whole sweep). A transient
SQLite error (the database locked by a long writer elsewhere, a busy timeout) is retried a few
times with a growing pause; a write that still fails comes back ``failed`` with the error, and
the screen reports it and keeps the verdict marked unsaved.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from foldscope.core.errors import FlagRefused, FoldscopeError
from foldscope.core.fabrication import CLEARED, HumanVerdict
from foldscope.engine.store import Store


@dataclass(frozen=True)
class SetVerdict:
    """Record a person's verdict on a check (``CLEARED`` withdraws it)."""

    check_id: int
    verdict: str
    reason: str | None
    author: str


@dataclass(frozen=True)
class UndoVerdict:
    """Take back the verdict entry an earlier write of this writer made (by its token)."""

    check_id: int
    undoes: int
    """The token of the :class:`SetVerdict` it takes back."""


@dataclass(frozen=True)
class SetFlag:
    """The cell screen's fabrication flag: a ``fabricated`` verdict, or its withdrawal."""

    check_id: int
    flagged: bool
    author: str


WriteOp = SetVerdict | UndoVerdict | SetFlag
"""Every write a screen may ask for."""


class WriteStatus(StrEnum):
    """How a write ended (str-valued: it is shown and compared as text)."""

    SAVED = "saved"
    """The store holds it."""
    REFUSED = "refused"
    """The rule refused it (``core.fabrication.flag_refusal``); nothing was written."""
    FAILED = "failed"
    """The store could not be written (after retries); nothing was written."""


@dataclass(frozen=True)
class WriteOutcome:
    """What became of one write, with the check's verdict as the store holds it now."""

    token: int
    op: WriteOp
    status: WriteStatus
    stored: HumanVerdict | None
    """The check's verdict after the write, read back from the store (None: no verdict; also
    None when the store could not be read, see ``known``)."""
    known: bool
    """Whether ``stored`` was read from the store (False when even the read-back failed)."""
    message: str | None = None
    """Why it was refused or failed, in one line."""
    attempts: int = 1

    @property
    def saved(self) -> bool:
        """The store holds the write."""
        return self.status is WriteStatus.SAVED


TRANSIENT = (sqlite3.OperationalError,)
"""Errors worth another attempt: a locked or busy database clears when its writer is done."""


class StoreWriter:
    """Applies writes one at a time, in the order they were submitted, with one connection
    opened in the thread that runs :meth:`run`.

    Args:
        db_path: the database.
        deliver: called (in the writer's thread) with each outcome and the ``reply_to`` it was
            submitted with; the UI posts it to that screen as a message.
        retries: further attempts after a transient error.
        backoff_s: pause before the first retry (doubled each time).
        open_store: how a connection is opened (tests inject a failing one).
    """

    def __init__(self, db_path: str | Path,
                 deliver: Callable[[WriteOutcome, object], None], *, retries: int = 3,
                 backoff_s: float = 0.2,
                 open_store: Callable[[Path], Store] | None = None) -> None:
        self.db_path = Path(db_path)
        self.deliver = deliver
        self.retries = retries
        self.backoff_s = backoff_s
        self.open_store = open_store or (lambda p: Store(p))
        self._queue: queue.Queue[tuple[int, WriteOp, object] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._next = 0
        self._entries: dict[int, int] = {}
        """Token of a saved :class:`SetVerdict` -> the verdict entry it wrote (for undo)."""
        self._stopped = threading.Event()

    def submit(self, op: WriteOp, reply_to: object = None) -> int:
        """Queue a write; its outcome goes to ``deliver`` with ``reply_to``. Returns its token."""
        with self._lock:
            self._next += 1
            token = self._next
        self._queue.put((token, op, reply_to))
        return token

    def stop(self) -> None:
        """End :meth:`run` once every write queued so far has been applied."""
        self._queue.put(None)

    def join(self, timeout_s: float) -> bool:
        """Wait for :meth:`run` to end; whether it did within ``timeout_s``."""
        return self._stopped.wait(timeout_s)

    def run(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        """Apply writes until :meth:`stop` (or ``cancelled``, after draining what is queued)."""
        store: Store | None = None
        try:
            while True:
                try:
                    item = self._queue.get(timeout=0.2)
                except queue.Empty:
                    if cancelled():
                        return
                    continue
                if item is None:
                    return
                token, op, reply_to = item
                outcome, store = self._apply(token, op, store)
                self.deliver(outcome, reply_to)
        finally:
            self._stopped.set()
            if store is not None:
                store.close()

    def _apply(self, token: int, op: WriteOp, store: Store | None
               ) -> tuple[WriteOutcome, Store | None]:
        attempts = 0
        while True:
            attempts += 1
            try:
                if store is None:
                    store = self.open_store(self.db_path)
                self._write(token, op, store)
                status, message = WriteStatus.SAVED, None
            except FlagRefused as exc:
                status, message = WriteStatus.REFUSED, str(exc)
            except TRANSIENT as exc:
                if attempts <= self.retries:
                    time.sleep(self.backoff_s * 2 ** (attempts - 1))
                    continue
                status, message = WriteStatus.FAILED, f"{type(exc).__name__}: {exc}"
            except (sqlite3.Error, FoldscopeError, OSError) as exc:
                status, message = WriteStatus.FAILED, f"{type(exc).__name__}: {exc}"
            break
        try:
            stored = store.verdict(op.check_id) if store is not None else None
            known = store is not None
        except (sqlite3.Error, FoldscopeError):
            stored, known = None, False
        return WriteOutcome(token, op, status, stored, known, message, attempts), store

    def _write(self, token: int, op: WriteOp, store: Store) -> None:
        if isinstance(op, SetVerdict):
            self._entries[token] = store.add_verdict(op.check_id, op.verdict, op.reason,
                                                     author=op.author)
        elif isinstance(op, SetFlag):
            store.add_verdict(op.check_id, "fabricated" if op.flagged else CLEARED,
                              author=op.author)
        else:
            entry = self._entries.get(op.undoes)
            if entry is None:
                raise FlagRefused("nothing saved to undo: that verdict was never stored")
            store.remove_verdict(op.check_id, entry)
            del self._entries[op.undoes]
