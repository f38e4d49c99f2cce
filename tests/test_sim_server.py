"""``foldscope sim serve`` over real loopback HTTP: the model client and the official openai
package talk to it unchanged; sims never need anything outside the request body."""

from __future__ import annotations

import builtins
import json
import subprocess
import sys

import openai
import pytest

from foldscope.core.errors import ConfigError
from foldscope.core.messages import fold_user_message, recall_user_message
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.models import resolve_model
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.server import SimServerThread, check_loopback

SCHEMA = {"type": "json_schema", "json_schema": {"name": "carrier", "strict": True, "schema": {
    "type": "object", "properties": {"summary": {"type": "string", "maxLength": 9600}},
    "required": ["summary"], "additionalProperties": False}}}
SEGMENT = ("[tool result: kubectl]\nledger service port: 62114\n"
           "[operator] For the record, the release tag is v4.18.2-rc3.")


@pytest.fixture(scope="module")
def server():
    with SimServerThread() as srv:
        yield srv


async def test_model_client_over_loopback(server):
    cfg = resolve_model("sim/faithful", {"base_url": server.base_url})
    async with ModelClient(cfg) as client:
        msg = fold_user_message("", [SEGMENT], 0, 1, "Summarise.")
        reply = await client.chat(ChatRequest([{"role": "user", "content": msg}], 2048, SCHEMA))
        assert reply.simulated and reply.finish_reason == "stop"
        carrier = json.loads(reply.content)["summary"]
        recall = await client.chat(ChatRequest(
            [{"role": "user", "content": recall_user_message(carrier, ["release tag", "x"])}], 256))
        endpoints = await client.list_endpoints()
    assert recall.content == "release tag: v4.18.2-rc3\nx: unknown"
    assert endpoints[0].matches_pin(cfg.pin)


def test_openai_package_unchanged(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    msg = fold_user_message("", [SEGMENT], 0, 1, "Summarise.")
    completion = client.chat.completions.create(
        model="sim/describer", messages=[{"role": "user", "content": msg}], max_tokens=1024,
        response_format=SCHEMA, seed=3)
    assert completion.model == "sim/describer"
    assert completion.system_fingerprint == "foldscope-sim"
    assert completion.choices[0].finish_reason == "stop"
    assert "summary" in json.loads(completion.choices[0].message.content)
    assert completion.usage.completion_tokens > 0
    ids = [m.id for m in client.models.list()]
    assert "sim/faithful" in ids and "sim/no-reasoning-param" in ids
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="sim/no-reasoning-param",
                                       messages=[{"role": "user", "content": "hi"}],
                                       extra_body={"reasoning": {"enabled": False}})


def test_in_process_and_server_answers_agree(server):
    import httpx

    body = {"model": "sim/gister", "messages": [{"role": "user", "content": "x"}], "seed": 1,
            "max_tokens": 50}
    over_http = httpx.post(server.base_url + "/chat/completions", json=body).json()
    in_process = json.loads(SimEndpoint().respond("POST", "/v1/chat/completions", {},
                                                  json.dumps(body).encode()).body)
    assert over_http == in_process


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "example.com", "::"])
def test_non_loopback_hosts_refused(host):
    with pytest.raises(ConfigError, match="loopback"):
        check_loopback(host)
    assert check_loopback("127.0.0.1") == "127.0.0.1"
    assert check_loopback("localhost") == "127.0.0.1"


def test_cli_refuses_public_host():
    proc = subprocess.run([sys.executable, "-m", "foldscope.cli.main", "sim", "serve", "--host",
                           "0.0.0.0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "loopback" in proc.stderr


def test_sims_need_nothing_outside_the_request(monkeypatch):
    """No files, no environment, no network: the reply is a function of the body alone."""
    msg = fold_user_message("", [SEGMENT], 0, 1, "Summarise.")
    body = json.dumps({"model": "sim/faithful", "messages": [{"role": "user", "content": msg}],
                       "response_format": SCHEMA, "max_tokens": 1024, "seed": 2}).encode()
    expected = SimEndpoint().respond("POST", "/v1/chat/completions", {}, body).body

    def forbidden(*args, **kwargs):
        raise AssertionError("a simulated model tried to read outside its request")

    monkeypatch.setattr(builtins, "open", forbidden)
    monkeypatch.setattr("socket.socket", forbidden)
    for key in list(__import__("os").environ):
        monkeypatch.delenv(key)
    assert SimEndpoint().respond("POST", "/v1/chat/completions", {}, body).body == expected


def test_sim_modules_do_not_import_study_state():
    code = ("import sys, foldscope.engine.sim.endpoint, foldscope.engine.sim.transport, "
            "foldscope.engine.sim.server\n"
            "bad = [m for m in sys.modules if m.startswith(('foldscope.engine.store', "
            "'foldscope.engine.runner', 'foldscope.engine.sweep', 'foldscope.core.scenario', "
            "'foldscope.core.scenario_gen', 'foldscope.core.arms', 'foldscope.core.prompts', "
            "'sqlite3', 'sqlite_utils', 'textual'))]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_latency_counts_from_the_requests_arrival():
    # The simulated latency is the call's, not added to the server's own time answering it:
    # an endpoint that takes 1 s to answer, with 1.2 s of latency, replies after ~1.2 s (2.2 s
    # when the latency was slept after the answer was made).
    import time

    from foldscope.engine.sim.endpoint import SimResponse
    from foldscope.engine.sim.faults import FaultConfig

    class SlowEndpoint(SimEndpoint):
        def respond(self, method, path, headers, body) -> SimResponse:  # type: ignore[override]
            time.sleep(1.0)
            return super().respond(method, path, headers, body)

    faults = {"sim/faithful": FaultConfig(latency_s=1.2, latency_jitter=0.0)}
    with SimServerThread(endpoint=SlowEndpoint(faults), latency_scale=1.0) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        start = time.monotonic()
        client.chat.completions.create(model="sim/faithful", max_tokens=64,
                                       messages=[{"role": "user", "content": "hello"}])
        took = time.monotonic() - start
    assert 1.2 <= took < 2.15  # 2.2 or more when the latency came after the answer
