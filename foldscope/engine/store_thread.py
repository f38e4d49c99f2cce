"""The runner's store on a thread of its own, fed by a queue: SQLite never blocks the event loop.

A sweep's calls run on an asyncio loop; its store is SQLite with a busy timeout of 30 s. Called
from the loop, one write waiting on a lock another process holds (a verdict written in the TUI,
a long ``report``) would stop every call in flight. Here every store operation runs, in the
order it was asked, on one thread that owns the connection:

- :meth:`StoreThread.post` queues a write and returns at once: the row goes on with its next
  call while the write waits for the lock (what should be said once it is in, a "fold
  committed" event, is handed back to the loop when it is);
- :meth:`StoreThread.call` queues an operation and awaits its result (a read, or a write whose
  outcome the caller needs); it sees every write queued before it.

A posted write that fails (a full disk) is raised by the next ``post`` or ``call`` made, and
every write queued after it is dropped, so a row's later folds are never stored without the one
that failed. Operations marked ``force`` still run after a failure (recording the fault,
releasing the claim).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from foldscope.engine.store import Store

_T = TypeVar("_T")
_STOP = object()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the awaiting task was cancelled: nobody wants the outcome
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class StoreThread:
    """One :class:`Store` connection used only from a thread of its own (see the module).

    Args:
        path: the database.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name="foldscope-store", daemon=True)
        self._store: Store | None = None
        self._failed: BaseException | None = None
        """The first failure of a write nobody awaited (and of any SQLite error): raised next."""

    async def start(self) -> None:
        """Start the thread and open the store on it (its errors are raised here)."""
        def open_store(_: Store | None) -> None:
            self._store = Store(self.path)

        self._thread.start()
        await self.call(open_store, force=True)

    async def close(self) -> None:
        """Close the store after every queued operation, and end the thread."""
        if not self._thread.is_alive():
            return
        if self._store is not None:
            with contextlib.suppress(sqlite3.Error):
                await self.call(lambda store: store.close(), force=True)
        self._queue.put(_STOP)
        await asyncio.to_thread(self._thread.join)

    def post(self, op: Callable[[Store], Any], then: Callable[[], Any] | None = None) -> None:
        """Queue a write; raises a failure of an earlier write that nobody awaited.

        Args:
            op: the write.
            then: called on the event loop once the write is in (an event that says so).
        """
        self._raise_failure()
        loop = asyncio.get_running_loop() if then is not None else None
        self._queue.put((op, None, loop, False, then))

    async def call(self, op: Callable[[Store], _T], *, force: bool = False) -> _T:
        """Run ``op(store)`` after everything queued before it and return its result.

        Args:
            op: the operation.
            force: run it even after a write failed (recording how the run ended).
        """
        if not force:
            self._raise_failure()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._queue.put((op, future, loop, force, None))
        return await future

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            op, future, loop, force, then = item
            if self._failed is not None and not force:
                # After a failed write nothing more is stored (a row's later fold without the
                # one that failed); whoever waits hears of the failure.
                if future is not None:
                    self._deliver(loop, future, None, self._failed)
                continue
            try:
                result = op(self._store)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits, or kept
                if (future is None or isinstance(exc, sqlite3.Error)) and not force \
                        and self._failed is None:
                    self._failed = exc
                if future is not None:
                    self._deliver(loop, future, None, exc)
                continue
            if future is not None:
                self._deliver(loop, future, result, None)
            elif then is not None:
                with contextlib.suppress(RuntimeError):  # the loop has closed
                    loop.call_soon_threadsafe(then)

    @staticmethod
    def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any,
                 error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            loop.call_soon_threadsafe(_settle, future, result, error)
