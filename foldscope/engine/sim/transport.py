"""``SimTransport``: the simulated endpoint served in-process, behind a real ``httpx`` client."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.wire import BODY_EXTENSION, EncodedBody


class SimTransport(httpx.AsyncBaseTransport):
    """An httpx transport that answers from a :class:`SimEndpoint` without a socket.

    Args:
        endpoint: the simulated endpoint (default: built-in sims, no configured faults).
        latency_scale: multiplier on simulated latency (0: full speed, for tests).
        sleep: the coroutine that waits out simulated latency.
    """

    def __init__(self, endpoint: SimEndpoint | None = None, *, latency_scale: float = 1.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.endpoint = endpoint or SimEndpoint()
        self.latency_scale = latency_scale
        self._sleep = sleep

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Answer one request from the simulated endpoint."""
        body = await request.aread()
        # The client's own body, when it came along with the very bytes it encodes: decoding
        # them again would give it back (json.loads of a fold's ~100 kB body costs ~0.15 ms).
        sent = request.extensions.get(BODY_EXTENSION)
        parsed = (sent.parsed if isinstance(sent, EncodedBody) and sent.content == body
                  else None)
        resp = self.endpoint.respond(request.method, request.url.path, request.headers, body,
                                     parsed=parsed)
        delay = resp.delay_s * self.latency_scale
        if delay > 0:
            await self._sleep(delay)
        if resp.stall:
            raise httpx.ReadTimeout("simulated timeout", request=request)
        return httpx.Response(resp.status, headers=resp.headers, content=resp.body)
