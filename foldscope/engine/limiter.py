"""Per-provider admission control: an adaptive in-flight limit plus an optional request rate."""

from __future__ import annotations

import asyncio
import time
from collections import deque


class AdaptiveLimiter:
    """Admits at most ``limit`` calls at once (``async with``) and ``rpm`` requests a minute (``pace``).

    The in-flight limit halves when a call is answered 429 and grows back by one after
    ``grow_after`` consecutive clean calls, never above the configured ceiling: additive
    increase, multiplicative decrease, as TCP does, so a rate-limited gateway is not hammered.
    The request rate, when set, spaces call starts so no sliding minute holds more than ``rpm``.

    Args:
        ceiling: the configured maximum calls in flight.
        rpm: the configured maximum call starts per minute (None: unlimited).
        grow_after: clean calls needed before the limit grows by one.
        clock: monotonic clock (injectable for tests).
    """

    def __init__(self, ceiling: int, rpm: int | None = None, grow_after: int = 20,
                 clock=time.monotonic) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.rpm = rpm
        self.grow_after = grow_after
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rate_limited = 0
        self.starts: deque[float] = deque()
        self._clock = clock
        self._clean = 0
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> AdaptiveLimiter:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self

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
            if len(self.starts) < self.rpm:  # type: ignore[operator]
                self.starts.append(now)
                return
            await asyncio.sleep(60.0 - (now - self.starts[0]) + 1e-3)

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def on_fault(self, kind: str) -> None:
        """Feed back a retried fault as it happens; a rate limit shrinks the in-flight limit."""
        if kind == "rate_limited":
            self.rate_limited += 1
            self.limit = max(1, self.limit // 2)
            self._clean = 0

    def record_success(self) -> None:
        """Feed back one clean call; enough of them in a row grow the limit by one."""
        self._clean += 1
        if self._clean >= self.grow_after and self.limit < self.ceiling:
            self.limit += 1
            self._clean = 0
            # Waiters blocked on the old limit may now proceed.
            asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        async with self._cond:
            self._cond.notify_all()
