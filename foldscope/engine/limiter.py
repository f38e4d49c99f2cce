"""An adaptive concurrency limit per provider: shrinks on rate limits, grows back slowly."""

from __future__ import annotations

import asyncio


class AdaptiveLimiter:
    """An async context manager that admits at most ``limit`` calls at once.

    The limit halves when a call reports a rate limit (429) and grows back by one after
    ``grow_after`` consecutive clean calls, never above the configured ceiling: additive
    increase, multiplicative decrease, as TCP does, so a gateway is never hammered.

    Args:
        ceiling: the configured maximum calls in flight.
        grow_after: clean calls needed before the limit grows by one.
    """

    def __init__(self, ceiling: int, grow_after: int = 20) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.grow_after = grow_after
        self.in_flight = 0
        self.peak_in_flight = 0
        self._clean = 0
        self._cond = asyncio.Condition()

    async def __aenter__(self) -> AdaptiveLimiter:
        async with self._cond:
            await self._cond.wait_for(lambda: self.in_flight < self.limit)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def record(self, *, rate_limited: bool) -> None:
        """Feed back one call's outcome."""
        if rate_limited:
            self.limit = max(1, self.limit // 2)
            self._clean = 0
            return
        self._clean += 1
        if self._clean >= self.grow_after and self.limit < self.ceiling:
            self.limit += 1
            self._clean = 0
