"""``foldscope sim serve``: the simulated endpoint over real HTTP, on loopback only.

Uses the standard library's ``ThreadingHTTPServer`` and the same request → response function as
the in-process transport, so the official ``openai`` package (or curl) can talk to a sim.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.engine.sim.endpoint import SimEndpoint, SimResponse, error_response
from foldscope.engine.wire import raise_open_files

MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted (413 above it); a kestrel catch-up fold is well under 1 MB."""

READ_TIMEOUT_S = 30.0

LISTEN_BACKLOG = 4096
"""Connections the kernel queues before the server accepts them (it caps this at somaxconn)."""

MAX_CONNECTIONS = 4096
"""Connections the server makes room for (a thread and a socket each; a kept-alive connection
keeps both): its open-files limit is raised to fit them."""


def check_loopback(host: str) -> str:
    """Return the address to bind for ``host``, refusing anything that is not loopback.

    Args:
        host: ``127.0.0.1``, ``localhost``, ``::1`` or another loopback address.

    Returns:
        The address to bind.

    Raises:
        ConfigError: the host is not a loopback address.
    """
    if host == "localhost":
        return "127.0.0.1"
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        addr = None
    if addr is None or not addr.is_loopback:
        raise ConfigError(f"--host {host!r} is not a loopback address; the simulated endpoint "
                          "only serves 127.0.0.1")
    return host


class _Handler(BaseHTTPRequestHandler):
    server: SimHTTPServer
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT_S
    """Socket timeout: a client that announces a body and never sends it frees its thread."""

    def _reply(self, resp: SimResponse) -> None:
        self.send_response(resp.status)
        for name, value in resp.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(resp.body)))
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(resp.body)

    def _refuse(self, status: int, message: str) -> None:
        # The body's extent is unknown (bad length, or not read): this connection cannot carry
        # another request.
        self.close_connection = True
        self._reply(error_response(status, message))

    def _read_body(self) -> bytes | None:
        """The request body, or None after answering a bad or oversized Content-Length."""
        raw = self.headers.get("content-length")
        if raw is None:
            if self.headers.get("transfer-encoding"):
                self._refuse(411, "send a Content-Length (chunked bodies are not supported)")
                return None
            return b""
        raw = raw.strip()
        if not raw.isdigit():  # also refuses "-1", which would read until the client leaves
            self._refuse(400, "Content-Length must be a non-negative integer")
            return None
        length = int(raw)
        if length > MAX_BODY_BYTES:
            self._refuse(413, f"request body is larger than {MAX_BODY_BYTES} bytes")
            return None
        body = self.rfile.read(length) if length else b""
        if len(body) < length:
            self._refuse(400, "request body is shorter than its Content-Length")
            return None
        return body

    def _serve(self) -> None:
        arrived = time.monotonic()  # the request's headers are in
        try:
            body = self._read_body()
        except (TimeoutError, OSError):
            self.close_connection = True
            return
        if body is None:
            return
        srv = self.server
        try:
            resp = srv.endpoint.respond(self.command, self.path, dict(self.headers.items()), body)
        except Exception as exc:  # noqa: BLE001 - a handler must answer, never die
            if srv.verbose:
                self.log_message("internal error: %s", f"{type(exc).__name__}: {exc}")
            resp = error_response(500, "internal error in the simulated endpoint")
        # The simulated latency is the request's, from its arrival: the time spent reading and
        # answering it is part of it, not added to it (1,000 requests of 100 kB arriving at once
        # take the server seconds to read and answer, which would lengthen every call).
        delay = resp.delay_s * srv.latency_scale - (time.monotonic() - arrived)
        if delay > 0:
            time.sleep(delay)
        if resp.stall:
            # A timeout, simulated for real: hold the connection, then drop it unanswered.
            # (Unscaled: it has to outlast the client's own timeout, which is not scaled.)
            time.sleep(resp.stall_s)
            self.close_connection = True
            return
        self._reply(resp)

    do_GET = _serve
    do_POST = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            super().log_message(format, *args)


class SimHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server around a :class:`SimEndpoint`."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    """socketserver listens with a backlog of 5: a sweep opening hundreds of connections at
    once would see most of its connects refused (and its limiter halve on each)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 endpoint: SimEndpoint | None = None, latency_scale: float = 1.0,
                 verbose: bool = False) -> None:
        address = check_loopback(host)
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port {port} is out of range (0-65535; 0 picks a free port)")
        if ":" in address:
            self.address_family = socket.AF_INET6
        try:
            super().__init__((address, port), _Handler)
        except OSError as exc:
            # In use, or privileged: the person picks another port, no traceback needed.
            raise ConfigError(f"--port {port}: cannot listen on {address} "
                              f"({exc.strerror or exc}); choose another port") from None
        raise_open_files(MAX_CONNECTIONS + 64)
        self.endpoint = endpoint or SimEndpoint()
        self.latency_scale = latency_scale
        self.verbose = verbose

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-reply is not the server's problem: no traceback on stderr."""
        if self.verbose:
            super().handle_error(request, client_address)

    @property
    def base_url(self) -> str:
        """The Chat Completions base URL (``http://127.0.0.1:PORT/v1``)."""
        address, port = self.server_address[:2]
        host = address.decode() if isinstance(address, bytes) else str(address)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/v1"


class SimServerThread:
    """Run a :class:`SimHTTPServer` in a background thread (a context manager, for tests).

    Args:
        host: loopback address to bind.
        port: port (0: an ephemeral one).
        endpoint: the simulated endpoint.
        latency_scale: multiplier on simulated latency.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 endpoint: SimEndpoint | None = None, latency_scale: float = 0.0) -> None:
        self.server = SimHTTPServer(host, port, endpoint=endpoint, latency_scale=latency_scale)
        self._thread = threading.Thread(target=self.server.serve_forever, name="foldscope-sim",
                                        daemon=True)

    @property
    def base_url(self) -> str:
        """The served base URL."""
        return self.server.base_url

    def __enter__(self) -> SimServerThread:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
