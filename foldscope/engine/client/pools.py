"""Connection pools shared among model clients: one pool per loop, URL, transport and size."""

from __future__ import annotations

import asyncio
import math
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

DEFAULT_CONNECTIONS = 64
"""Pool size for a client that names none (a probe, a one-off call)."""

SHARD_CONNECTIONS = 1
"""Connections per ``httpx.AsyncClient`` in a network pool (see :class:`SharedPool`)."""


class SharedPool:
    """An endpoint's connections: as many as its clients may have calls in flight, all kept alive.

    A pool smaller than the runner's limit queues calls in the client, and a keep-alive cap below
    it closes a connection after most calls (a new TCP connection per call). One
    ``httpx.AsyncClient`` holding hundreds of connections is no answer either: httpcore walks
    every connection of its pool (asking each socket whether it is still readable, and counting
    the idle ones once per connection) whenever a request starts or a response closes, so its CPU
    per call grows with the pool (about 0.5 ms per call with 16 connections a client, 14 ms with
    256). The network pool is therefore a set of lanes of ``SHARD_CONNECTIONS`` connection each,
    made as the calls in flight need them, up to ``size``: a call takes the lane freed last (its
    connection is the one most surely still open), or a new lane while there are fewer than
    ``size``; only when every lane is busy (more calls than ``size``) does it queue, on the least
    busy lane. A custom transport (the in-process simulator, a test's mock) has no connections
    to pool: one client serves it.

    Args:
        size: the most calls in flight.
        transport: the transport to send through (None: the network).
    """

    def __init__(self, size: int, transport: httpx.AsyncBaseTransport | None) -> None:
        size = max(1, size)
        self._network = transport is None
        lanes = math.ceil(size / SHARD_CONNECTIONS) if self._network else 1
        per = math.ceil(size / lanes)
        self._limits = httpx.Limits(max_connections=per, max_keepalive_connections=per)
        # One TLS context for every lane: each client would otherwise load the CA bundle anew.
        self._tls: ssl.SSLContext | bool = httpx.create_ssl_context() if self._network else True
        self._transport = transport
        self._lanes = lanes
        self.size = size
        self._clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []
        self._free: list[int] = []  # lanes with nothing in flight, the last freed on top
        self._closed = False
        self._free.append(self._add_lane())  # the first lane, there for the first call

    def _add_lane(self) -> int:
        self._clients.append(httpx.AsyncClient(transport=self._transport, limits=self._limits,
                                               verify=self._tls))
        self._busy.append(0)
        return len(self._clients) - 1

    @property
    def is_closed(self) -> bool:
        """The pool was closed (its last client released it)."""
        return self._closed

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[httpx.AsyncClient]:
        """A lane's client, counted busy until the block ends (send one request in it and close
        its response there)."""
        busy, free = self._busy, self._free
        if free:
            lane = free.pop()
        elif len(self._clients) < self._lanes:
            lane = self._add_lane()
        else:
            lane = busy.index(min(busy)) if len(busy) > 1 else 0
        busy[lane] += 1
        try:
            yield self._clients[lane]
        finally:
            busy[lane] -= 1
            if not busy[lane]:
                free.append(lane)

    async def aclose(self) -> None:
        """Close every lane's connections."""
        self._closed = True
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
