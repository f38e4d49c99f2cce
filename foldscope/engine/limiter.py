"""Per-provider admission control: an adaptive in-flight limit plus an optional request rate."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

REDUCING_FAULTS = frozenset({"rate_limited", "server_error", "timeout", "slow", "connect"})
"""Attempt outcomes that say the endpoint is overloaded: each halves the in-flight limit."""

LimitHook = Callable[[int, int, str], None]
"""Told ``(previous, limit, cause)`` whenever the limit changes (``cause``: a fault kind, or
``success`` when it grows)."""


class AdaptiveLimiter:
    """Admits at most ``limit`` attempts at once and ``rpm`` attempt starts a minute.

    Additive increase, multiplicative decrease, as TCP does: an attempt answered 429, 5xx, a
    timeout or a connect error halves the limit (at most once per round: attempts that began
    before the last cut do not cut again, so one burst of 429s is one halving, not eight), and
    every ``limit`` attempts answered in a row add one, never above the configured ceiling.
    Attempts hold a slot only while they are on the wire: a call backing off after a fault
    waits outside, so the limit really bounds what the endpoint sees.

    Args:
        ceiling: the configured maximum attempts in flight.
        rpm: the configured maximum attempt starts per minute (None: unlimited).
        clock: monotonic clock (injectable for tests).
        on_change: told ``(previous, limit, cause)`` on every change of the limit.
    """

    def __init__(self, ceiling: int, rpm: int | None = None, clock=time.monotonic,
                 on_change: LimitHook | None = None) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.rpm = rpm
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rate_limited = 0
        self.cuts = 0
        self.growths = 0
        self.starts: deque[float] = deque()
        self.on_change = on_change
        self._clock = clock
        self._round = 0
        self._credit = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @asynccontextmanager
    async def attempt(self) -> AsyncIterator[Callable[[str | None], None]]:
        """Hold a slot for one attempt; yields the callback told how it ended (None: a reply)."""
        while self.in_flight >= self.limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        started_round = self._round
        try:
            await self.pace()
            yield lambda fault: self._settle(fault, started_round)
        finally:
            self.in_flight -= 1
            self._wake()

    async def pace(self) -> None:
        """Wait until one more request fits the rate; awaited before every attempt, retries too.

        A sliding one-minute window: when it is full, wait until its oldest start ages out.
        """
        if not self.rpm:
            return
        while True:
            now = self._clock()
            while self.starts and now - self.starts[0] >= 60.0:
                self.starts.popleft()
            if len(self.starts) < self.rpm:
                self.starts.append(now)
                return
            await asyncio.sleep(60.0 - (now - self.starts[0]) + 1e-3)

    def _settle(self, fault: str | None, started_round: int) -> None:
        if fault == "rate_limited":
            self.rate_limited += 1
        if fault is None:
            self._credit += 1
            if self._credit >= self.limit and self.limit < self.ceiling:
                self._credit = 0
                self.growths += 1
                self._change(self.limit + 1, "success")
                self._wake()
        elif fault in REDUCING_FAULTS and started_round == self._round:
            self._round += 1
            self._credit = 0
            self.cuts += 1
            self._change(max(1, self.limit // 2), fault)

    def _change(self, limit: int, cause: str) -> None:
        previous, self.limit = self.limit, limit
        if limit != previous and self.on_change is not None:
            self.on_change(previous, limit, cause)

    def _wake(self) -> None:
        # Every waiter re-checks the limit itself; a woken waiter that was cancelled meanwhile
        # simply leaves, and the next release wakes the others again.
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


class BesideLimit:
    """A gate for the few calls that run beside a limiter's in-flight limit rather than in it (a
    sweep's schema probe at a large endpoint, ``engine.runner``): each attempt is paced by the
    rate and its outcome settles the limit as any attempt's does (a 429 still halves it), but it
    holds no slot, so the rows keep every one. ``attempts`` counts them."""

    def __init__(self, limiter: AdaptiveLimiter) -> None:
        self.limiter = limiter
        self.attempts = 0

    @asynccontextmanager
    async def attempt(self) -> AsyncIterator[Callable[[str | None], None]]:
        """One attempt beside the limit; yields the callback told how it ended."""
        lim = self.limiter
        started_round = lim._round
        await lim.pace()
        self.attempts += 1
        yield lambda fault: lim._settle(fault, started_round)
