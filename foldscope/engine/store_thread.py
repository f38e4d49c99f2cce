"""The runner's store on a thread of its own, fed by a queue: SQLite never blocks the event loop.

A sweep's calls run on an asyncio loop; its store is SQLite with a busy timeout of 30 s. Called
from the loop, one write waiting on a lock another process holds (a verdict written in the TUI,
a long ``report``) would stop every call in flight. Here every store operation runs, in the
order it was asked, on one thread that owns the connection:

- :meth:`StoreThread.post` queues a write and returns at once: the row goes on with its next
  call while the write waits for the lock (what should be said once it is in, a "fold
  committed" event, is handed back to the loop when it is);
- :meth:`StoreThread.call` queues an operation and awaits its result (a read, or a write whose
  outcome the caller needs); it sees every write queued before it;
- :meth:`StoreThread.read` runs a read ahead of the posted writes still queued (it sees only
  the writes already run): for a lookup whose answer no queued write can change (the runner
  asks the response cache so before each call, unless it queued a write of that entry), which
  would otherwise wait behind a wave of fold commits.

Posted writes are bounded: :meth:`StoreThread.room` (the runner awaits it before each call)
waits, without blocking the loop, while more than ``limit`` posted writes are still queued.
Under load the writes cannot trail the calls by more than that, so a ``kill -9`` loses at most
``limit`` queued writes (a few per worker) of calls already paid for, not an unbounded backlog;
a lock held elsewhere stops new calls only once that many writes wait behind it.

A posted write that fails (a full disk) is raised by the next ``post`` or ``call`` made, and
every write queued after it is dropped, so a row's later folds are never stored without the one
that failed. Operations marked ``force`` still run after a failure (recording the fault,
releasing the claim).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from foldscope.engine.store import Store

_T = TypeVar("_T")
_STOP = object()

_READ, _IN_ORDER = 0, 1
"""Queue priorities: :meth:`StoreThread.read` first; operations of one priority in the order asked."""

WRITES_PER_WORKER = 8
"""Posted writes a worker may have queued before it waits to make its next call (the runner's
``limit`` is this times its workers). A row posts one write per call (a fold, or its usage) and
two more per row (started, finished), so at a few seconds per call this is tens of seconds of
calls: a lock held elsewhere for 10 s stops no call in flight, while the backlog a ``kill -9``
can lose stays bounded."""


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
        limit: posted writes that may wait in the queue before :meth:`room` waits (None: no
            bound; the runner sets ``WRITES_PER_WORKER`` times its workers).
    """

    def __init__(self, path: str | Path, limit: int | None = None) -> None:
        self.path = Path(path)
        self.limit = limit
        self._queue: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._seq = itertools.count()  # ties broken by arrival
        self._lock = threading.Lock()
        self._queued = 0
        """Posted writes not yet run (the thread counts them down)."""
        self.peak_queued = 0
        """The most posted writes ever waiting at once."""
        self.writes_run = 0
        """Posted writes run (or dropped) so far. It counts one before that write wakes anyone
        waiting for room, so a caller seen making no call while it stayed the same was not woken."""
        self._waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        """Who waits in :meth:`room` for the queue to fall to ``limit``."""
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
        self._put(_STOP)
        await asyncio.to_thread(self._thread.join)

    def _put(self, item: Any, priority: int = _IN_ORDER) -> None:
        self._queue.put((priority, next(self._seq), item))

    def post(self, op: Callable[[Store], Any], then: Callable[[], Any] | None = None) -> None:
        """Queue a write; raises a failure of an earlier write that nobody awaited.

        Args:
            op: the write.
            then: called on the event loop once the write is in (an event that says so).
        """
        self._raise_failure()
        loop = asyncio.get_running_loop() if then is not None else None
        with self._lock:
            self._queued += 1
            self.peak_queued = max(self.peak_queued, self._queued)
        self._put((op, None, loop, False, then))

    @property
    def queued(self) -> int:
        """Posted writes not yet run."""
        return self._queued

    @property
    def waiting(self) -> int:
        """Callers waiting in :meth:`room`."""
        return len(self._waiting)

    async def room(self) -> None:
        """Return once at most ``limit`` posted writes are queued (at once when unbounded).

        The event loop stays free meanwhile: a caller that waits is woken by the store's thread
        when enough writes have run. Raises a failure of an earlier write nobody awaited.
        """
        while True:
            self._raise_failure()
            if self.limit is None:
                return
            loop = asyncio.get_running_loop()
            future: asyncio.Future[None] = loop.create_future()
            with self._lock:
                if self._queued <= self.limit:
                    return
                self._waiting.append((loop, future))
            await future

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
        self._put((op, future, loop, force, None))
        return await future

    async def read(self, op: Callable[[Store], _T]) -> _T:
        """Run the read ``op(store)`` ahead of the posted writes still queued; return its result.

        It sees the writes already run, not those still queued: only for a read whose answer
        none of them can change (the caller knows which writes it queued). It waits for the
        operation running now, not for the queue behind it.
        """
        self._raise_failure()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._put((op, future, loop, False, None), _READ)
        return await future

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _ran_posted(self) -> None:
        """One posted write has run (or was dropped): wake who waits for room when there is."""
        with self._lock:
            self._queued -= 1
            self.writes_run += 1
            if not self._waiting or (self.limit is not None and self._queued > self.limit
                                     and self._failed is None):
                return
            woken, self._waiting = self._waiting, []
        for loop, future in woken:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
                loop.call_soon_threadsafe(_settle, future, None, None)

    def _work(self) -> None:
        while True:
            item = self._queue.get()[2]
            if item is _STOP:
                return
            op, future, loop, force, then = item
            try:
                self._run(op, future, loop, force, then)
            finally:
                if future is None:
                    self._ran_posted()

    def _run(self, op: Callable[..., Any], future: asyncio.Future[Any] | None,
             loop: asyncio.AbstractEventLoop | None, force: bool,
             then: Callable[[], Any] | None) -> None:
        if self._failed is not None and not force:
            # After a failed write nothing more is stored (a row's later fold without the
            # one that failed); whoever waits hears of the failure.
            if future is not None and loop is not None:
                self._deliver(loop, future, None, self._failed)
            return
        try:
            result = op(self._store)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever awaits, or kept
            if (future is None or isinstance(exc, sqlite3.Error)) and not force \
                    and self._failed is None:
                self._failed = exc
            if future is not None and loop is not None:
                self._deliver(loop, future, None, exc)
            return
        if future is not None and loop is not None:
            self._deliver(loop, future, result, None)
        elif then is not None and loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed
                loop.call_soon_threadsafe(then)

    @staticmethod
    def _deliver(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any,
                 error: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
            loop.call_soon_threadsafe(_settle, future, result, error)
