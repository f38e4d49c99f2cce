"""A small OpenAI-compatible fault server on 127.0.0.1 for tests: each request is answered by a
function of the request (a list of raw replies to serve in turn, the last repeating)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Raw:
    """One reply as bytes on the wire."""

    body: bytes | Iterable[bytes] = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


def chat_body(content: str = "ok", *, usage: str = '{"prompt_tokens": 5, "completion_tokens": 2}',
              finish: str = "stop", extra: str = "") -> bytes:
    """A chat completion with ``usage`` spliced in as raw JSON text (so NaN, 10**30 or a
    4,000-digit number can be sent as a real server would)."""
    return ('{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": '
            f'{json.dumps(finish)}, "message": {{"role": "assistant", "content": '
            f'{json.dumps(content)}}}}}], "usage": {usage}{extra}}}').encode()


def ok(content: str = "ok", **kw: str) -> Raw:
    return Raw(chat_body(content, **kw), headers={"content-type": "application/json"})


class FaultServer:
    """Serve ``replies`` (a callable of the request count and the request body, or a list served
    in turn with the last repeating) on a loopback port, in a thread."""

    def __init__(self, replies: list[Raw] | Callable[[int, dict], Raw]) -> None:
        self.replies = replies
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.other: list[str] = []
        """Paths asked that are not chat calls (answered 404)."""
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer({})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                self._answer(body)

            def _answer(self, body: dict) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    # Anything else a client asks (the models list, a tokenizer) is not served:
                    # only chat calls take the scripted replies, and only they are counted.
                    outer.other.append(self.path)
                    self._send(Raw(b'{"error": {"message": "not found"}}', status=404,
                                   headers={"content-type": "application/json"}))
                    return
                with outer._lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers.items()))
                self._send(outer._reply(n, body))

            def _send(self, reply: Raw) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if isinstance(reply.body, bytes):
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    try:
                        self.wfile.write(reply.body)
                    except OSError:
                        pass
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for piece in reply.body:
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client stopped reading: what a bounded client does
                    self.close_connection = True

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                # A client that dropped a kept-alive connection (a cancelled call) resets it
                # while the handler waits for its next request: that is no server failure.
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _reply(self, n: int, body: dict) -> Raw:
        if callable(self.replies):
            return self.replies(n, body)
        return self.replies[min(n, len(self.replies) - 1)]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def sweep_file(path, base_url: str, *, sweep: str = "", model: str = "",
               arms: str = '["m"]', repeats: int = 1) -> str:
    """Write a one-model sweep file against ``base_url`` and return its path."""
    path.write_text(
        f'[sweep]\nscenario = "smoke"\narms = {arms}\nrepeats = {repeats}\n{sweep}\n'
        f'[[models]]\nid = "acme/m"\nprovider = "vllm"\nbase_url = "{base_url}"\n'
        f'max_retries = 1\nbackoff_base_s = 0\nbackoff_cap_s = 0\n{model}\n')
    return str(path)
