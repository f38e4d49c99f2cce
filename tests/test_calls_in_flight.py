"""Calls in flight over real loopback HTTP (issue 24 item 1): connections kept alive and reused,
never more than the limit, latency counted from the wire, a server that takes the load."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

from foldscope.core.messages import fold_user_message
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.client.pools import SHARD_CONNECTIONS
from foldscope.engine.models import resolve_model
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.faults import FaultConfig
from foldscope.engine.sim.server import LISTEN_BACKLOG, SimServerThread

LATENCY_S = 0.15


class CountingServer(SimServerThread):
    """A sim server that counts the TCP connections it accepts and the most handled at once."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.accepted = 0
        self.active = 0
        self.peak = 0
        self._count_lock = threading.Lock()
        server = self.server
        accept, finish = server.get_request, server.shutdown_request

        def get_request():
            conn = accept()
            with self._count_lock:
                self.accepted += 1
                self.active += 1
                self.peak = max(self.peak, self.active)
            return conn

        def shutdown_request(request):
            with self._count_lock:
                self.active -= 1
            finish(request)

        server.get_request = get_request
        server.shutdown_request = shutdown_request


def _request(i: int) -> ChatRequest:
    msg = fold_user_message("", [f"[operator] note {i}: ledger service port: 62114"], 0, 1,
                            "Summarise.")
    return ChatRequest([{"role": "user", "content": msg}], 256)


def _server(latency_s: float = LATENCY_S) -> CountingServer:
    faults = {"sim/faithful": FaultConfig(latency_s=latency_s, latency_jitter=0.0)}
    return CountingServer(endpoint=SimEndpoint(faults), latency_scale=1.0)


async def _calls(client: ModelClient, lanes: int, per_lane: int) -> list:
    async def lane(n: int) -> list:
        return [await client.chat(_request(n * per_lane + k)) for k in range(per_lane)]

    return [r for rs in await asyncio.gather(*(lane(n) for n in range(lanes))) for r in rs]


async def test_connections_are_kept_alive_and_reused():
    # More lanes than one shard holds, so the pool is split and every shard keeps its sockets.
    lanes = SHARD_CONNECTIONS + 4
    with _server(0.05) as server:
        cfg = resolve_model("sim/faithful", {"base_url": server.base_url})
        async with ModelClient(cfg, connections=lanes) as client:
            replies = await _calls(client, lanes, per_lane=4)
    assert len(replies) == 4 * lanes and all(r.finish_reason == "stop" for r in replies)
    # One TCP connection per call in flight at most, each carrying several calls.
    assert server.accepted <= lanes
    assert server.peak == lanes


async def test_a_pool_larger_than_the_calls_opens_only_the_connections_they_need():
    # Room for 64 calls, 5 in flight, several rounds: 5 connections, each reused (the lane freed
    # last is taken first), none opened for lanes never needed.
    with _server(0.05) as server:
        cfg = resolve_model("sim/faithful", {"base_url": server.base_url})
        async with ModelClient(cfg, connections=64) as client:
            replies = await _calls(client, 5, per_lane=3)
            pool = client._pool
            assert pool is not None and len(pool._clients) == 5
    assert len(replies) == 15 and all(r.finish_reason == "stop" for r in replies)
    assert server.accepted == 5


async def test_latency_counts_from_the_wire_not_the_wait_for_a_connection():
    # One connection, three calls at once: two wait their turn in the client's pool.
    with _server() as server:
        cfg = resolve_model("sim/faithful", {"base_url": server.base_url})
        async with ModelClient(cfg, connections=1) as client:
            started = asyncio.get_running_loop().time()
            replies = await asyncio.gather(*(client.chat(_request(i)) for i in range(3)))
            wall = asyncio.get_running_loop().time() - started
    assert server.accepted == 1
    assert wall >= 3 * LATENCY_S  # the calls went one after another
    for reply in replies:
        assert LATENCY_S <= reply.latency_s < 2 * LATENCY_S


async def test_server_takes_a_burst_of_connections_at_once():
    burst = 120
    assert LISTEN_BACKLOG >= 1024
    with _server(0.3) as server:
        cfg = resolve_model("sim/faithful", {"base_url": server.base_url, "max_retries": 0})
        async with ModelClient(cfg, connections=burst) as client:
            replies = await asyncio.gather(*(client.chat(_request(i)) for i in range(burst)))
    assert all(r.attempts == 1 and r.finish_reason == "stop" for r in replies)
    assert server.peak == burst and server.accepted == burst


def test_open_files_limit_is_raised_for_the_calls_in_flight():
    code = ("import resource\n"
            "from foldscope.engine.wire import raise_open_files\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))\n"
            "want = 2000 if hard == resource.RLIM_INFINITY else min(2000, hard)\n"
            "assert raise_open_files(2000) == want, raise_open_files(2000)\n"
            "assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == want\n"
            "assert raise_open_files(100) == want  # never lowered\n")
    subprocess.run([sys.executable, "-c", code], check=True)
