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

from foldscope.core.errors import ConfigError
from foldscope.engine.sim.endpoint import SimEndpoint

MAX_BODY_BYTES = 64 * 1024 * 1024


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

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            self.send_error(413)
            return
        body = self.rfile.read(length) if length else b""
        srv = self.server
        resp = srv.endpoint.respond(self.command, self.path, dict(self.headers.items()), body)
        delay = resp.delay_s * srv.latency_scale
        if delay > 0:
            time.sleep(delay)
        if resp.stall:
            # A timeout, simulated for real: hold the connection, then drop it unanswered.
            # (Unscaled: it has to outlast the client's own timeout, which is not scaled.)
            time.sleep(resp.stall_s)
            self.close_connection = True
            return
        self.send_response(resp.status)
        for name, value in resp.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(resp.body)))
        self.end_headers()
        self.wfile.write(resp.body)

    do_GET = _serve
    do_POST = _serve

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:
            super().log_message(format, *args)


class SimHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server around a :class:`SimEndpoint`."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 endpoint: SimEndpoint | None = None, latency_scale: float = 1.0,
                 verbose: bool = False) -> None:
        address = check_loopback(host)
        if ":" in address:
            self.address_family = socket.AF_INET6
        super().__init__((address, port), _Handler)
        self.endpoint = endpoint or SimEndpoint()
        self.latency_scale = latency_scale
        self.verbose = verbose

    @property
    def base_url(self) -> str:
        """The Chat Completions base URL (``http://127.0.0.1:PORT/v1``)."""
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in str(host) else host
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
