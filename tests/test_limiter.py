"""The adaptive limiter (halves on overload, regrows on replies) and sweeps under heavy faults."""

from __future__ import annotations

import asyncio

from conftest import definition

from foldscope.engine.events import LimitChanged, Retry, RowFailed
from foldscope.engine.launch import prepare_sweep
from foldscope.engine.limiter import AdaptiveLimiter
from foldscope.engine.runner import SweepRunner
from foldscope.engine.store import Store


def test_one_burst_of_faults_halves_once_and_replies_grow_it_back():
    changes: list[tuple[int, int, str]] = []

    async def scenario() -> AdaptiveLimiter:
        limiter = AdaptiveLimiter(8, on_change=lambda *c: changes.append(c))
        # Eight attempts in flight together all meet a 429: one halving, not eight.
        async with asyncio.TaskGroup() as group:
            for _ in range(8):
                group.create_task(_attempt(limiter, "rate_limited", hold=True))
        assert limiter.limit == 4 and limiter.rate_limited == 8
        # An attempt begun after the cut may cut again (5xx and timeouts count too).
        await _attempt(limiter, "server_error")
        await _attempt(limiter, "timeout")
        assert limiter.limit == 1
        # A malformed reply or a rejected request says nothing about load.
        await _attempt(limiter, "malformed")
        await _attempt(limiter, "rejected")
        assert limiter.limit == 1
        # Additive increase: a window of replies (``limit`` of them) adds one.
        for _ in range(1 + 2 + 3):
            await _attempt(limiter, None)
        assert limiter.limit == 4
        return limiter

    limiter = asyncio.run(scenario())
    assert changes == [(8, 4, "rate_limited"), (4, 2, "server_error"), (2, 1, "timeout"),
                       (1, 2, "success"), (2, 3, "success"), (3, 4, "success")]
    assert limiter.in_flight == 0 and limiter.peak_in_flight == 8


def test_waiters_are_admitted_up_to_the_limit_only():
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(2)
        seen: list[int] = []
        gate = asyncio.Event()

        async def call() -> None:
            async with limiter.attempt() as settle:
                seen.append(limiter.in_flight)
                await gate.wait()
                settle(None)

        tasks = [asyncio.create_task(call()) for _ in range(5)]
        while len(seen) < 2:  # noqa: ASYNC110 - yield to the tasks until two are admitted
            await asyncio.sleep(0)
        assert limiter.in_flight == 2  # three wait outside
        gate.set()
        await asyncio.gather(*tasks)
        return seen

    assert max(asyncio.run(scenario())) <= 2


async def _attempt(limiter: AdaptiveLimiter, fault: str | None, hold: bool = False) -> None:
    async with limiter.attempt() as settle:
        if hold:
            await asyncio.sleep(0)  # let the others in before any settles
        settle(fault)


def _run(db, model: dict, **sweep) -> tuple[SweepRunner, str, list]:
    data = definition(models=(model,), arms=("j", "q", "m"), concurrency=4, **sweep)
    prepared = prepare_sweep(db, data, "test")
    events: list = []
    runner = SweepRunner(db, prepared.sweep_id, latency_scale=0.0, on_event=events.append)
    asyncio.run(runner.run())
    return runner, prepared.sweep_id, events


def test_no_row_is_lost_at_an_80_percent_429_rate_and_the_limit_regrows(db):
    # A 429's wait is floored at the back-off (Retry-After: 0 cannot make a client spin), which
    # grows with each 429 in a row: a base of 1 ms keeps that rule and the test quick.
    model = {"id": "sim/faithful", "faults": {"rate_429": 0.8, "retry_after_s": 0.0},
             "max_retries": 1, "backoff_base_s": 0.001}
    runner, sweep_id, events = _run(db, model)
    progress = Store(db, readonly=True).progress(sweep_id)
    assert progress["done"] == progress["total"] == 3 and progress["failed"] == 0
    assert not [e for e in events if isinstance(e, RowFailed)]
    assert sum(isinstance(e, Retry) and e.fault == "rate_limited" for e in events) > 10
    limits = [e for e in events if isinstance(e, LimitChanged)]
    assert any(e.cause == "rate_limited" and e.limit < e.previous for e in limits)
    assert any(e.cause == "success" and e.limit > e.previous for e in limits)


def test_no_row_is_lost_at_20_percent_malformed_replies(db):
    model = {"id": "sim/faithful", "faults": {"rate_malformed": 0.2}, "backoff_base_s": 0.0}
    runner, sweep_id, events = _run(db, model, repeats=3)
    progress = Store(db, readonly=True).progress(sweep_id)
    assert progress["done"] == progress["total"] == 9 and progress["failed"] == 0
    assert sum(isinstance(e, Retry) and e.fault == "malformed" for e in events) > 0
    assert runner.totals.call_retries > 0


def test_calls_beside_the_limit_hold_no_slot_but_still_settle_it():
    from foldscope.engine.limiter import BesideLimit

    async def scenario() -> None:
        limiter = AdaptiveLimiter(2)
        beside = BesideLimit(limiter)
        held = asyncio.Event()
        release = asyncio.Event()

        async def hold() -> None:
            async with limiter.attempt() as settle:
                held.set()
                await release.wait()
                settle(None)

        tasks = [asyncio.create_task(hold()) for _ in range(2)]
        await held.wait()
        await asyncio.sleep(0)
        assert limiter.in_flight == 2  # the limit is full
        # Beside it, an attempt starts at once and takes none of the rows' slots ...
        async with asyncio.timeout(1):
            async with beside.attempt() as settle:
                assert limiter.in_flight == 2
                settle("rate_limited")
        # ... but what it met still tells the limiter: a 429 halves the limit.
        assert beside.attempts == 1 and limiter.limit == 1 and limiter.rate_limited == 1
        release.set()
        await asyncio.gather(*tasks)
        assert limiter.in_flight == 0 and limiter.peak_in_flight == 2

    asyncio.run(scenario())


def test_a_probe_runs_beside_only_a_limit_a_hundred_times_its_calls():
    from foldscope.engine.runner import PROBE_BESIDE_RATIO, _probe_beside

    assert PROBE_BESIDE_RATIO == 100
    assert _probe_beside(AdaptiveLimiter(1000), 2)
    assert _probe_beside(AdaptiveLimiter(200), 2)
    assert not _probe_beside(AdaptiveLimiter(199), 2)  # 2 more than 199 is more than 1 %
    assert _probe_beside(AdaptiveLimiter(100), 1)
    assert not _probe_beside(AdaptiveLimiter(8), 1)
    assert not _probe_beside(AdaptiveLimiter(1000), 0)  # no probe
