"""``foldscope sim serve`` under hostile requests, over real loopback HTTP: every bad body or
header gets a 400-class OpenAI-style error, no handler dies, nothing reaches stderr; port
errors are one line and exit 2."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from foldscope.cli.main import main
from foldscope.engine.sim.server import MAX_BODY_BYTES, SimServerThread

GOOD = {"model": "sim/faithful", "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 64}


@pytest.fixture(scope="module")
def server():
    with SimServerThread() as srv:
        yield srv


def _raw(server, request: bytes) -> tuple[int, dict, bytes]:
    """Send raw bytes, read until the server closes or a whole response arrived."""
    host, port = server.server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


def _post(server, body: bytes, *, length: str | None = None) -> tuple[int, dict, bytes]:
    cl = str(len(body)) if length is None else length
    req = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           + f"Content-Length: {cl}\r\n\r\n".encode() + body)
    return _raw(server, req)


def _assert_openai_error(status: int, body: bytes, expected: int = 400) -> dict:
    assert status == expected
    err = json.loads(body)["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert isinstance(err["message"], str) and "\n" not in err["message"]
    return err


def _with(**fields) -> bytes:
    return json.dumps({**GOOD, **fields}).encode()


@pytest.mark.parametrize("body, param", [
    (_with(max_tokens="abc"), "max_tokens"),
    (_with(max_tokens=-5), "max_tokens"),
    (_with(response_format={"type": "json_schema", "json_schema": 5}),
     "response_format.json_schema"),
    (_with(response_format={"type": "json_schema", "json_schema": {"schema": {
        "properties": []}}}), "response_format.json_schema.schema.properties"),
    (_with(provider={"order": 5, "allow_fallbacks": False}), "provider.order"),
    (_with(messages="hello"), "messages"),
    (_with(messages=[{"role": "user", "content": 7}]), "messages[0].content"),
    (_with(model=5), "model"),
    (_with(temperature="hot"), "temperature"),
])
def test_wrongly_typed_fields_get_400_naming_the_param(server, capfd, body, param):
    status, _, reply = _post(server, body)
    err = _assert_openai_error(status, reply)
    assert err["param"] == param and err["type"] == "invalid_request_error"
    # The server still answers a good request afterwards, and nothing was printed.
    assert httpx.post(server.base_url + "/chat/completions", json=GOOD).status_code == 200
    assert capfd.readouterr().err == ""


def test_deep_array_lone_surrogate_and_bad_utf8(server, capfd):
    deep = b'{"model": "sim/faithful", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    medium = b'{"model": "sim/faithful", "messages": [], "x": ' + b"[" * 500 + b"]" * 500 + b"}"
    for body in (deep, medium, b"[" * 100_000,
                 _with(messages=[{"role": "user", "content": "\ud800"}]),
                 b'{"model": "sim/faithful", "messages": [{"role": "user", '
                 b'"content": "\\udc00 lone"}]}',
                 b'{"model": "sim/faithful", "messages": [], "x": "\xed\xa0\x80"}',
                 b"not json", b""):
        status, _, reply = _post(server, body)
        _assert_openai_error(status, reply)
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", " -0x10"])
def test_bad_content_length_is_refused_at_once(server, capfd, length):
    status, headers, reply = _post(server, b"", length=length)
    _assert_openai_error(status, reply)
    assert headers.get("connection") == "close"
    assert capfd.readouterr().err == ""


def test_oversized_body_is_refused_without_reading_it(server, capfd):
    status, _, reply = _post(server, b"", length=str(MAX_BODY_BYTES + 1))
    _assert_openai_error(status, reply, expected=413)
    assert capfd.readouterr().err == ""


def test_port_in_use_is_one_line_exit_2(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["sim", "serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--port {port}" in err and "Traceback" not in err


@pytest.mark.parametrize("port", ["70000", "-1"])
def test_port_out_of_range_is_one_line_exit_2(capsys, port):
    assert main(["sim", "serve", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of range" in err
