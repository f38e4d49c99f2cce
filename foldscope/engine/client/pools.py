"""Connection pools shared among model clients: one pool per loop, URL, transport and size."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

DEFAULT_CONNECTIONS = 64
"""Pool size for a client that names none (a probe, a one-off call)."""

SHARD_CONNECTIONS = 16
"""Connections per ``httpx.AsyncClient`` in a network pool (see :class:`SharedPool`)."""


class SharedPool:
    """An endpoint's connections: as many as its clients may have calls in flight, all kept alive.

    A pool smaller than the runner's limit queues calls in the client, and a keep-alive cap below
    it closes a connection after most calls (a new TCP connection per call). One
    ``httpx.AsyncClient`` holding hundreds of connections is no answer either: httpcore walks
    every connection of its pool (asking each socket whether it is still readable) whenever a
    request starts or a response closes, so its CPU per call grows with the pool. The network
    pool is therefore split into shards of ``SHARD_CONNECTIONS`` and each request goes to the
    least busy shard: with no more calls in flight than ``size``, a shard always has a free
    connection, so no call waits in the client. A custom transport (the in-process simulator, a
    test's mock) has no connections to pool: one client serves it.

    Args:
        size: the most calls in flight.
        transport: the transport to send through (None: the network).
    """

    def __init__(self, size: int, transport: httpx.AsyncBaseTransport | None) -> None:
        size = max(1, size)
        shards = 1 if transport is not None else math.ceil(size / SHARD_CONNECTIONS)
        per = math.ceil(size / shards)
        limits = httpx.Limits(max_connections=per, max_keepalive_connections=per)
        # One TLS context for every shard: each client would otherwise load the CA bundle anew.
        tls = httpx.create_ssl_context() if transport is None else True
        self.size = size
        self._clients = [httpx.AsyncClient(transport=transport, limits=limits, verify=tls)
                         for _ in range(shards)]
        self._busy = [0] * shards

    @property
    def is_closed(self) -> bool:
        """The pool was closed (its last client released it)."""
        return self._clients[0].is_closed

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[httpx.AsyncClient]:
        """The least busy shard, counted busy until the block ends (send one request in it and
        close its response there)."""
        busy = self._busy
        shard = busy.index(min(busy)) if len(busy) > 1 else 0
        busy[shard] += 1
        try:
            yield self._clients[shard]
        finally:
            busy[shard] -= 1

    async def aclose(self) -> None:
        """Close every shard's connections."""
        for client in self._clients:
            await client.aclose()


class _PoolRegistry:
    """Shares one :class:`SharedPool` per (event loop, base URL, transport, size) among clients.

    An AsyncClient belongs to the loop it first ran on, so the loop is part of the key; the
    reference count closes a pool when its last ModelClient closes.
    """

    def __init__(self) -> None:
        self._pools: dict[tuple, list] = {}

    def acquire(self, base_url: str, transport: httpx.AsyncBaseTransport | None,
                connections: int | None = None) -> tuple[tuple, SharedPool]:
        size = max(1, connections or DEFAULT_CONNECTIONS)
        key = (id(asyncio.get_running_loop()), base_url, id(transport) if transport else None,
               size)
        entry = self._pools.get(key)
        if entry is None or entry[0].is_closed:
            entry = [SharedPool(size, transport), 0]
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
