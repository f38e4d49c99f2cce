"""Tests for the model client: request bodies, retries, typed errors, accounting, secrets."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.errors import ModelError
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.errors import (
    InfraError,
    ParameterRejected,
    ReasoningNotDisableable,
    RequestRejected,
)
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.client.pools import POOLS
from foldscope.engine.models import ModelConfig
from foldscope.engine.wire import body_digest
from foldscope.engine.wire.fastjson import dumps_json

SECRET = "sk-or-v1-THIS-IS-A-TEST-SECRET-0123456789"
REQ = ChatRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=64)


def ok_reply(content: str = "hello", usage: dict | None = None) -> httpx.Response:
    return httpx.Response(200, json={
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 5},
    })


class Script:
    """A MockTransport handler replaying scripted responses and recording requests."""

    def __init__(self, *responses: httpx.Response | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        item = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        if isinstance(item, Exception):
            raise item
        return item

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests]


def make(cfg: ModelConfig, script: Script, delays: list[float] | None = None,
         retries: list[tuple[str, float]] | None = None) -> ModelClient:
    async def sleep(d: float) -> None:
        if delays is not None:
            delays.append(d)

    hook = (lambda kind, d: retries.append((kind, d))) if retries is not None else None
    return ModelClient(cfg, transport=httpx.MockTransport(script), sleep=sleep, on_retry=hook)


def openrouter(**kw) -> ModelConfig:
    base = dict(id="qwen/qwen3-235b", provider="openrouter", api_key_env="FS_TEST_KEY",
                pin="deepinfra/fp8", quantizations=["fp8"], max_retries=3)
    base.update(kw)
    return ModelConfig(**base)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("FS_TEST_KEY", SECRET)


async def test_openrouter_body_pins_and_suppresses_reasoning():
    script = Script(ok_reply())
    rf = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {}}}
    async with make(openrouter(seed=7), script) as client:
        await client.chat(ChatRequest(REQ.messages, 64, response_format=rf))
    body = script.bodies()[0]
    assert body["model"] == "qwen/qwen3-235b"
    assert body["max_tokens"] == 64 and body["temperature"] == 0.0 and body["seed"] == 7
    assert body["response_format"] == rf
    assert body["reasoning"] == {"enabled": False}
    assert body["provider"] == {"order": ["deepinfra/fp8"], "allow_fallbacks": False,
                                "require_parameters": True, "quantizations": ["fp8"]}
    assert script.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert str(script.requests[0].url) == "https://openrouter.ai/api/v1/chat/completions"


async def test_vllm_and_none_reasoning_params():
    script = Script(ok_reply())
    cfg = ModelConfig(id="local", provider="vllm", pin="ignored")
    async with make(cfg, script) as client:
        await client.chat(REQ)
    body = script.bodies()[0]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert "provider" not in body and "reasoning" not in body and "seed" not in body
    assert "authorization" not in script.requests[0].headers
    script = Script(ok_reply())
    async with make(ModelConfig(id="m", provider="ollama"), script) as client:
        await client.chat(REQ)
    assert not {"reasoning", "chat_template_kwargs"} & set(script.bodies()[0])


async def test_reply_accounting_and_digest():
    script = Script(ok_reply(usage={"prompt_tokens": 1000, "completion_tokens": 500}))
    cfg = openrouter(price_prompt_per_mtok=2.0, price_completion_per_mtok=10.0)
    async with make(cfg, script) as client:
        reply = await client.chat(REQ)
    assert reply.content == "hello" and reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens) == (1000, 500)
    assert reply.cost_usd == pytest.approx((1000 * 2 + 500 * 10) / 1e6)
    assert reply.attempts == 1 and not reply.simulated
    assert reply.request_digest == body_digest(script.bodies()[0])
    script = Script(ok_reply(usage={"prompt_tokens": 1, "completion_tokens": 1, "cost": 0.25}))
    async with make(cfg, script) as client:
        assert (await client.chat(REQ)).cost_usd == 0.25
    script = Script(ok_reply())
    async with make(openrouter(), script) as client:
        assert (await client.chat(REQ)).cost_usd is None


@pytest.mark.parametrize("status,kind", [(500, "server_error"), (502, "server_error"),
                                         (503, "server_error")])
async def test_infra_status_retried_then_raised(status, kind):
    script = Script(httpx.Response(status, json={"error": {"message": "busy"}}))
    delays: list[float] = []
    retries: list[tuple[str, float]] = []
    async with make(openrouter(max_retries=3), script, delays, retries) as client:
        with pytest.raises(InfraError) as info:
            await client.chat(REQ)
    assert info.value.kind == kind and info.value.attempts == 4
    assert len(script.requests) == 4 and len(delays) == 3
    assert [k for k, _ in retries] == [kind] * 3
    # Bounded exponential backoff with jitter: each wait within [step/2, step].
    for i, d in enumerate(delays):
        step = min(30.0, 1.0 * 2 ** i)
        assert step / 2 <= d <= step


async def test_retry_after_is_honoured_and_retry_can_succeed():
    script = Script(httpx.Response(429, headers={"retry-after": "7"}, json={"error": {}}),
                    httpx.Response(429, headers={"retry-after": "2.5"}, json={"error": {}}),
                    ok_reply("fine"))
    delays: list[float] = []
    async with make(openrouter(), script, delays) as client:
        reply = await client.chat(REQ)
    assert delays == [7.0, 2.5]
    assert reply.content == "fine" and reply.attempts == 3
    assert reply.retry_kinds == ("rate_limited", "rate_limited") and reply.rate_limited
    assert [r.headers["x-retry-count"] for r in script.requests] == ["0", "1", "2"]


@pytest.mark.parametrize("exc,kind", [
    (httpx.ReadTimeout("slow"), "timeout"),
    (httpx.ConnectTimeout("slow"), "timeout"),
    (httpx.ConnectError("refused"), "connect"),
])
async def test_transport_faults_retried(exc, kind):
    script = Script(exc, ok_reply())
    delays: list[float] = []
    async with make(openrouter(), script, delays) as client:
        reply = await client.chat(REQ)
    assert reply.attempts == 2 and len(delays) == 1
    script = Script(exc)
    async with make(openrouter(max_retries=1), script, []) as client:
        with pytest.raises(InfraError) as info:
            await client.chat(REQ)
    assert info.value.kind == kind and info.value.attempts == 2


async def test_parameter_rejection_not_retried():
    script = Script(httpx.Response(404, json={"error": {
        "message": "No endpoints found that can handle the requested parameters.", "code": 404}}))
    delays: list[float] = []
    async with make(openrouter(), script, delays) as client:
        with pytest.raises(ParameterRejected):
            await client.chat(REQ)
    assert len(script.requests) == 1 and delays == []


async def test_reasoning_refusal_not_retried():
    script = Script(httpx.Response(400, json={"error": {
        "message": "Reasoning is mandatory for this endpoint and cannot be disabled."}}))
    delays: list[float] = []
    async with make(openrouter(), script, delays) as client:
        with pytest.raises(ReasoningNotDisableable):
            await client.chat(REQ)
    assert len(script.requests) == 1 and delays == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_other_4xx_rejected_not_retried(status):
    script = Script(httpx.Response(status, json={"error": {"message": "nope"}}))
    delays: list[float] = []
    async with make(openrouter(), script, delays) as client:
        with pytest.raises(RequestRejected) as info:
            await client.chat(REQ)
    assert info.value.status == status and len(script.requests) == 1 and delays == []


async def test_nonconforming_json_is_returned_not_retried():
    script = Script(ok_reply('{"wrong": 1'))
    rf = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {}}}
    async with make(openrouter(), script, []) as client:
        reply = await client.chat(ChatRequest(REQ.messages, 64, response_format=rf))
    assert reply.content == '{"wrong": 1' and reply.attempts == 1 and len(script.requests) == 1


async def test_error_inside_200_body_is_classified():
    script = Script(httpx.Response(200, json={"error": {"message": "overloaded", "code": 503}}),
                    ok_reply())
    async with make(openrouter(), script, []) as client:
        assert (await client.chat(REQ)).attempts == 2


async def test_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("FS_TEST_KEY")
    async with make(openrouter(), Script(ok_reply())) as client:
        with pytest.raises(ModelError, match="FS_TEST_KEY"):
            await client.chat(REQ)


async def test_keys_never_leak(caplog):
    caplog.set_level(logging.DEBUG)
    echo = httpx.Response(401, json={"error": {"message": f"bad key Bearer {SECRET}"}})
    cfg = openrouter(max_retries=1)
    seen: list[str] = [repr(cfg), cfg.model_dump_json(), str(cfg)]
    for responses in ([echo], [httpx.Response(503, text=f"down {SECRET}")],
                      [httpx.ConnectError(f"refused {SECRET}")]):
        async with make(cfg, Script(*responses), []) as client:
            seen.append(repr(client))
            with pytest.raises(Exception) as info:
                await client.chat(REQ)
            seen += [str(info.value), repr(info.value), repr(vars(info.value))]
            assert info.value.__cause__ is None
    async with make(cfg, Script(ok_reply()), []) as client:
        reply = await client.chat(REQ)
    seen.append(repr(reply))
    seen += [r.getMessage() for r in caplog.records]
    for text in seen:
        assert SECRET not in text


async def test_pools_shared_per_base_url_and_released():
    transport = httpx.MockTransport(Script(ok_reply()))
    a = ModelClient(openrouter(id="a"), transport=transport)
    b = ModelClient(openrouter(id="b"), transport=transport)
    await a.chat(REQ)
    await b.chat(REQ)
    assert a._pool is b._pool
    pool = a._pool
    await a.aclose()
    assert not pool.is_closed
    await b.aclose()
    assert pool.is_closed
    assert not any(k[1] == "https://openrouter.ai/api/v1" and k[2] == id(transport)
                   for k in POOLS._pools)


async def test_list_endpoints_parses_openrouter_shape():
    listing = {"data": {"id": "qwen/qwen3-235b", "endpoints": [
        {"name": "DeepInfra | qwen/qwen3-235b", "provider_name": "DeepInfra", "tag": "deepinfra/fp8",
         "quantization": "fp8", "context_length": 40960, "max_completion_tokens": 8192,
         "pricing": {"prompt": "0.0000002", "completion": "0.0000006"},
         "supported_parameters": ["max_tokens", "response_format", "reasoning"]}]}}
    script = Script(httpx.Response(200, json=listing))
    async with make(openrouter(), script) as client:
        endpoints = await client.list_endpoints()
    assert str(script.requests[0].url).endswith("/models/qwen/qwen3-235b/endpoints")
    (e,) = endpoints
    assert e.quantization == "fp8" and e.context_length == 40960
    assert e.price_prompt_per_mtok == pytest.approx(0.2)
    assert e.matches_pin("deepinfra/fp8") and e.matches_pin("DeepInfra")
    assert not e.matches_pin("together")


async def test_a_hostile_endpoint_listing_gives_unknowns_not_nan_prices_or_a_crash():
    listing = {"data": {"endpoints": [
        {"name": "A", "provider_name": "A", "tag": 7, "quantization": "\x1b]52;c;aGk=\x07",
         "context_length": -5, "max_completion_tokens": 10**15,
         "pricing": {"prompt": "NaN", "completion": "Infinity"},
         "supported_parameters": ["max_tokens", 3, "x" * 500]},
        {"name": "B", "pricing": {"prompt": "-0.000001", "completion": True}},
        {"name": "C", "pricing": ["0.1"], "supported_parameters": "max_tokens"},
        {"name": "D", "pricing": {"prompt": "1e400", "completion": "0.0000006"}}]}}
    script = Script(httpx.Response(200, json=listing))
    async with make(openrouter(), script) as client:
        a, b, c, d = await client.list_endpoints()
    assert a.tag is None and a.quantization is None
    assert a.context_length is None and a.max_completion_tokens is None
    assert a.supported_parameters == ("max_tokens",)
    for e in (a, b, c):
        assert e.price_prompt_per_mtok is None and e.price_completion_per_mtok is None
    assert c.supported_parameters == () and b.provider_name == "B"
    assert d.price_prompt_per_mtok is None and d.price_completion_per_mtok == pytest.approx(0.6)
    assert json.loads(json.dumps([e.as_dict() for e in (a, b, c, d)], allow_nan=False))


_json_text = st.text(alphabet=st.sampled_from(list('ab "\\\n\t\x00\x1fé中😀\u2028Ё')), max_size=40)


@settings(max_examples=60)
@given(st.lists(_json_text, min_size=1, max_size=4), _json_text, st.integers(0, 3))
def test_dumps_json_is_json_dumps(heads, tail_unit, repeat):
    # Long strings sharing a tail exercise the escaped-block memo; each must encode exactly as
    # json.dumps does, in wire form and in canonical form, however often it is seen.
    tail = (tail_unit or "x") * (9000 // max(1, len(tail_unit or "x")) + 1) * (repeat + 1)
    for head in heads:
        body = {"messages": [{"role": "user", "content": head + tail}, {"content": head}],
                "model": "m", "n": [1, 2.5, None, True, float("nan")], "t": tail}
        for kwargs in ({}, {"sort_keys": True, "separators": (",", ":")}):
            expected = json.dumps(body, ensure_ascii=False, **kwargs)
            assert dumps_json(body, **kwargs) == expected
            assert dumps_json(json.loads(expected), **kwargs) == expected
        canon = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        assert body_digest(body) == hashlib.sha256(canon.encode()).hexdigest()


def test_escape_memo_is_bounded(monkeypatch):
    from foldscope.engine.wire import fastjson

    monkeypatch.setattr(fastjson, "_BLOCK_BUDGET_CHARS", 100_000)
    for i in range(40):
        body = {"content": f"{i:06d}é" * (5000 - i % 3 * 1000)}
        # both forms of each text, in either order, and the text again: json.dumps's exactly
        for form in (("text", "utf8", "text") if i % 2 else ("utf8", "text", "utf8")):
            if form == "text":
                assert dumps_json(body) == json.dumps(body, ensure_ascii=False)
            else:
                assert b"".join(fastjson.utf8_json(body) or []) == json.dumps(
                    body, ensure_ascii=False).encode()
    memo = fastjson._ESCAPE_MEMO
    assert memo._block_chars <= 100_000
    assert memo._block_chars == sum(map(fastjson._size, memo._blocks.values()))
    assert len(memo._whole) <= fastjson.WHOLE_ENTRIES


def test_memos_tell_apart_texts_with_the_same_length_and_edges():
    edge = "e" * 64
    texts = [edge + middle * 20000 + edge for middle in ('"', "\n", "x", "\\")]
    for _ in range(2):
        for text in texts:
            body = {"content": text, "more": [text[:9000], text[1:]]}
            assert dumps_json(body) == json.dumps(body, ensure_ascii=False)
            canon = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            assert body_digest(body) == hashlib.sha256(canon.encode()).hexdigest()


async def test_429_is_back_pressure_not_a_spent_retry():
    # Ten 429s in a row, then a reply: max_retries=1 would have given up after two attempts,
    # but a 429 waits (here by back-off, no Retry-After) under rate_limit_wait_s instead.
    busy = httpx.Response(429, json={"error": {"message": "slow down"}})
    script = Script(*[busy] * 10, ok_reply("patience"))
    delays: list[float] = []
    async with make(openrouter(max_retries=1, backoff_cap_s=4.0), script, delays) as client:
        reply = await client.chat(REQ)
    assert reply.content == "patience" and reply.attempts == 11
    assert len(delays) == 10 and max(delays) <= 4.0
    # Waits add up to the deadline: past it the call fails as rate_limited, one line.
    script = Script(httpx.Response(429, headers={"retry-after": "3"}, json={"error": {}}))
    delays = []
    async with make(openrouter(rate_limit_wait_s=10.0), script, delays) as client:
        with pytest.raises(InfraError) as info:
            await client.chat(REQ)
    # Retry-After is honoured, floored at the back-off that would apply without it.
    assert info.value.kind == "rate_limited" and delays[:2] == [3.0, 3.0]
    assert all(d >= 3.0 for d in delays) and sum(delays) <= 10.0
    assert "rate_limit_wait_s" in str(info.value) and "\n" not in str(info.value)


def _chat_body(**over) -> dict:
    body = {"choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "ok"}}]}
    body.update(over)
    return body


@pytest.mark.parametrize("bad", [
    httpx.Response(200, headers={"content-type": "application/json"},
                   content=json.dumps(_chat_body()).encode()[:25]),          # truncated JSON
    httpx.Response(200, headers={"content-type": "application/json"},
                   content=b"{'choices': [nope"),                             # invalid JSON
    httpx.Response(200, json=_chat_body(choices=[])),                        # empty choices
    httpx.Response(200, json=_chat_body(choices=[{"finish_reason": "stop"}])),  # no message
    httpx.Response(200, json=[1, 2]),                                        # not an object
    httpx.Response(200, text="<html>gateway</html>"),                        # not JSON at all
])
async def test_malformed_replies_are_retried_like_5xx(bad):
    retries: list[tuple[str, float]] = []
    script = Script(bad, ok_reply("second time"))
    async with make(openrouter(), script, [], retries) as client:
        reply = await client.chat(REQ)
    assert reply.content == "second time" and reply.attempts == 2
    assert [k for k, _ in retries] == ["malformed"]
    script = Script(bad)
    async with make(openrouter(max_retries=2), script, []) as client:
        with pytest.raises(InfraError) as info:
            await client.chat(REQ)
    assert info.value.kind == "malformed" and info.value.attempts == 3


class Drip(httpx.AsyncByteStream):
    """A reply body that never ends: one byte now and then, each well inside any read timeout."""

    async def __aiter__(self):
        yield b'{"choices": ['
        while True:
            await asyncio.sleep(0.02)
            yield b" "


async def test_timeout_is_a_total_deadline_even_for_a_dripped_body():
    attempts = []

    async def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        return httpx.Response(200, headers={"content-type": "application/json"}, stream=Drip())

    cfg = openrouter(timeout_s=0.2, max_retries=1, timeout_per_prompt_token_s=0,
                     timeout_per_output_token_s=0)
    async with ModelClient(cfg, transport=httpx.MockTransport(handler),
                           sleep=lambda d: asyncio.sleep(0)) as client:
        # Without the total deadline this would drip forever (each byte resets httpx's
        # read timeout); the outer bound only stops a broken test from hanging the suite.
        with pytest.raises(InfraError) as info:
            await asyncio.wait_for(client.chat(REQ), 30)
    assert info.value.kind == "timeout" and len(attempts) == 2
    assert "deadline 0.2s" in str(info.value)


async def test_reply_over_the_size_cap_is_cut_and_marked():
    text = "é" * 3000  # 6000 bytes of UTF-8
    async with make(openrouter(max_reply_bytes=1001), Script(ok_reply(text))) as client:
        reply = await client.chat(REQ)
    assert reply.truncated and reply.content == "é" * 500  # never half a character
    async with make(openrouter(), Script(ok_reply(text))) as client:
        reply = await client.chat(REQ)
    assert not reply.truncated and reply.content == text


async def test_every_attempt_passes_the_gate_and_reports_its_outcome():
    seen: list[str | None] = []

    class Gate:
        @contextlib.asynccontextmanager
        async def attempt(self):
            yield seen.append

    script = Script(httpx.Response(503, json={"error": {}}),
                    httpx.Response(429, json={"error": {}}), ok_reply())
    cfg = openrouter()
    async with ModelClient(cfg, transport=httpx.MockTransport(script), gate=Gate(),
                           sleep=lambda d: asyncio.sleep(0)) as client:
        await client.chat(REQ)
    assert seen == ["server_error", "rate_limited", None]
