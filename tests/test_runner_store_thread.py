"""The runner's store writes leave the event loop (issue 19 item 4): a write lock another
process holds stops no call in flight, and nothing is lost once it is released."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import httpx
from conftest import definition

from foldscope.engine.events import FoldCommitted
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.runner import SweepRunner
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.faults import FaultConfig
from foldscope.engine.sim.transport import SimTransport
from foldscope.engine.store import Store
from foldscope.engine.store_thread import WRITES_PER_WORKER, StoreThread

WAIT_S = 10.0
"""How long the test waits for calls while the lock is held (they come within a second)."""


class CountingTransport(SimTransport):
    """The in-process simulator, counting the replies it has given."""

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self.replies = 0
        self.changed = threading.Condition()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        with self.changed:
            self.replies += 1
            self.changed.notify_all()
        return response

    def wait_for(self, replies: int, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.replies >= replies, timeout)


def test_a_write_lock_held_elsewhere_stops_no_call(db):
    data = definition(models=("sim/faithful", "sim/describer"), arms=("j", "q", "m"), repeats=2)
    data["sweep"]["concurrency"] = 4
    prepared = prepare_sweep(db, data, "test", fresh=True)
    faults = {m: FaultConfig(latency_s=0.01, latency_jitter=0.0)
              for m in ("sim/faithful", "sim/describer")}
    transport = CountingTransport(SimEndpoint(faults), latency_scale=1.0)
    folds_seen = threading.Event()

    def on_event(event) -> None:
        if isinstance(event, FoldCommitted):
            folds_seen.set()

    runner = SweepRunner(db, prepared.sweep_id, transport=transport, on_event=on_event)
    outcome: dict[str, object] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("status", asyncio.run(runner.run())))
    thread.start()
    try:
        assert folds_seen.wait(WAIT_S)
        # Another process (a TUI writing a verdict, say) takes the write lock and holds it.
        # It waits for the runner's own commit in progress, then holds the lock.
        holder = sqlite3.connect(db, timeout=30, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        before = transport.replies
        try:
            # The runner's commits wait for the lock on their own thread; its calls go on.
            assert transport.wait_for(before + 12, WAIT_S), (
                f"calls stopped while the lock was held: {transport.replies - before} made")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    finally:
        thread.join(timeout=120)
    assert not thread.is_alive() and outcome["status"] == "done"
    with Store(db, readonly=True) as store:
        rows = store.rows(prepared.sweep_id)
        assert all(r.status == "done" for r in rows) and len(rows) == 12
        for row in rows:  # every fold made it, in order, with the row's counters
            folds = store.folds(row.id)
            assert [f.fold_index for f in folds] == list(range(row.folds_done))
            assert row.folds_done == len(folds) >= 1


def _until(condition, timeout: float) -> bool:
    """Poll ``condition`` (another thread changes what it reads) until it holds or time is up."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def test_the_write_queue_stays_bounded_while_a_lock_is_held(db):
    # Calls at no latency outrun writes that wait on a lock: without back-pressure the queue of
    # paid-for folds grows without bound (all lost to a kill -9). With it, every worker stops
    # before its next call once a few writes per worker wait, and the loop stays free.
    data = definition(models=("sim/faithful", "sim/describer"), arms=("j", "q", "m"), repeats=8)
    data["sweep"]["concurrency"] = 3
    prepared = prepare_sweep(db, data, "test", fresh=True)
    transport = CountingTransport(SimEndpoint({}), latency_scale=0.0)
    folds_seen = threading.Event()
    loop_turns = []

    def on_event(event) -> None:
        if isinstance(event, FoldCommitted):
            folds_seen.set()

    runner = SweepRunner(db, prepared.sweep_id, transport=transport, on_event=on_event)

    async def run_and_tick() -> str:
        async def tick() -> None:  # the loop's own pulse: it must keep turning while writes wait
            while True:
                loop_turns.append(time.monotonic())
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        try:
            return await runner.run()
        finally:
            ticker.cancel()

    outcome: dict[str, object] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("status", asyncio.run(run_and_tick())))
    thread.start()
    try:
        assert folds_seen.wait(WAIT_S)
        holder = sqlite3.connect(db, timeout=30, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            store = runner.store_thread
            assert store is not None and store.limit == 3 * WRITES_PER_WORKER
            # Every worker comes to wait for room: no call is in flight and none starts. The
            # write that committed just before the lock was taken may still be counted down
            # after they are seen waiting, and wake them once (a call each); no later write can
            # run while the lock is held, so the second time they wait, they wait for good.
            for attempt in range(2):
                ran = store.writes_run  # before they are seen waiting: a wake after it counts
                assert _until(lambda: store.waiting == 3, WAIT_S), (
                    f"{store.waiting} workers waiting, {store.queued} writes queued")
                replies, turns = transport.replies, len(loop_turns)
                assert _until(lambda t=turns: len(loop_turns) >= t + 5, WAIT_S), "the event loop stopped"
                called = transport.replies != replies  # read before writes_run: see its docstring
                if store.writes_run == ran:
                    assert not called  # no call made while the queue is full
                    break
                assert attempt == 0, "writes ran while the lock was held"
            # A worker checks for room before each call; between two calls it posts at most
            # a fold (or its usage), a finished row and the next row's start.
            assert store.limit < store.peak_queued <= store.limit + 3 * 3
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    finally:
        thread.join(timeout=120)
    assert not thread.is_alive() and outcome["status"] == "done"
    with Store(db, readonly=True) as store:
        rows = store.rows(prepared.sweep_id)
        assert all(r.status == "done" for r in rows) and len(rows) == 48
        for row in rows:
            assert [f.fold_index for f in store.folds(row.id)] == list(range(row.folds_done))


def test_room_waits_off_the_loop_and_hears_of_a_failed_write(db):
    # StoreThread on its own: with a bound of 2, room() waits while 3 writes are queued (the
    # loop keeps running), returns once they ran, and raises a failed write's error.
    prepare_sweep(db, definition(), "test", fresh=True)
    release = threading.Event()

    async def scenario() -> list[str]:
        thread = StoreThread(db, limit=2)
        await thread.start()
        seen: list[str] = []
        try:
            thread.post(lambda st: release.wait(30))
            thread.post(lambda st: None)
            thread.post(lambda st: None)
            waiting = asyncio.create_task(thread.room())
            for _ in range(50):  # the loop turns while room() waits
                await asyncio.sleep(0)
            seen.append(f"waiting={not waiting.done()} queued={thread.queued}")
            release.set()
            await asyncio.wait_for(waiting, 30)
            seen.append(f"room after {thread.queued} queued")

            def fail(st: Store) -> None:
                raise sqlite3.OperationalError("disk full")

            release.clear()
            thread.post(lambda st: release.wait(30))
            thread.post(fail)  # room() is woken only once this has run: 2 left queued
            thread.post(lambda st: None)
            thread.post(lambda st: None)
            failing = asyncio.create_task(thread.room())
            for _ in range(50):
                await asyncio.sleep(0)
            release.set()
            try:
                await asyncio.wait_for(failing, 30)
            except sqlite3.OperationalError as exc:
                seen.append(f"raised {exc}")
        finally:
            release.set()
            await thread.close()
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == "waiting=True queued=3"
    assert seen[1].startswith("room after") and int(seen[1].split()[2]) <= 2
    assert seen[2] == "raised disk full"


def test_a_read_runs_ahead_of_queued_writes_after_the_running_one(db):
    # The runner's response-cache lookups must not wait behind a wave of fold commits: read()
    # runs after the operation in progress, before the writes still queued; call() after them.
    prepare_sweep(db, definition(), "test", fresh=True)
    release = threading.Event()
    started = threading.Event()
    order: list[str] = []

    def blocking(st: Store) -> None:
        started.set()
        release.wait(30)
        order.append("running")

    async def scenario() -> None:
        thread = StoreThread(db)
        await thread.start()
        try:
            thread.post(blocking)
            assert await asyncio.to_thread(started.wait, 30)
            for i in range(3):
                thread.post(lambda st, i=i: order.append(f"write {i}"))
            ordered = asyncio.ensure_future(thread.call(lambda st: order.append("call")))
            ahead = asyncio.ensure_future(thread.read(lambda st: order.append("read a")))
            second = asyncio.ensure_future(thread.read(lambda st: order.append("read b")))
            for _ in range(20):
                await asyncio.sleep(0)
            assert order == []  # the read waits for the operation in progress
            release.set()
            await asyncio.wait_for(asyncio.gather(ordered, ahead, second), 30)
        finally:
            release.set()
            await thread.close()

    asyncio.run(scenario())
    assert order == ["running", "read a", "read b", "write 0", "write 1", "write 2", "call"]
