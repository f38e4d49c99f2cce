"""Connection pools shared among model clients: one ``httpx.AsyncClient`` per loop, URL, transport."""

from __future__ import annotations

import asyncio

import httpx


class _PoolRegistry:
    """Shares one ``httpx.AsyncClient`` per (event loop, base URL, transport) among clients.

    An AsyncClient belongs to the loop it first ran on, so the loop is part of the key; the
    reference count closes a pool when its last ModelClient closes.
    """

    def __init__(self) -> None:
        self._pools: dict[tuple, list] = {}

    def acquire(self, base_url: str, transport: httpx.AsyncBaseTransport | None
                ) -> tuple[tuple, httpx.AsyncClient]:
        key = (id(asyncio.get_running_loop()), base_url, id(transport) if transport else None)
        entry = self._pools.get(key)
        if entry is None or entry[0].is_closed:
            pool = httpx.AsyncClient(
                transport=transport,
                limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
            )
            entry = [pool, 0]
            self._pools[key] = entry
        entry[1] += 1
        return key, entry[0]

    async def release(self, key: tuple) -> None:
        entry = self._pools.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] <= 0:
            del self._pools[key]
            await entry[0].aclose()


POOLS = _PoolRegistry()
