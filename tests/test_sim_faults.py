"""Fault injection on the simulated endpoint, exercised through the real client and its retries."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest

from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.errors import InfraError, ParameterRejected, ReasoningNotDisableable
from foldscope.engine.connect import make_client
from foldscope.engine.models import resolve_model
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.faults import FaultConfig, draw_faults
from foldscope.engine.sim.transport import SimTransport

Q = ChatRequest([{"role": "user", "content": "hello"}], 64)
SCHEMA = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": {
    "type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"],
    "additionalProperties": False}}}


def client(model="sim/faithful", *, delays=None, kinds=None, max_retries=3,
           rate_limit_wait_s=600.0, **faults):
    overrides = {"latency_scale": 0, "max_retries": max_retries,
                 "rate_limit_wait_s": rate_limit_wait_s}
    if faults:
        overrides["faults"] = faults
    cfg = resolve_model(model, overrides)

    async def sleep(d):
        if delays is not None:
            delays.append(d)

    hook = (lambda k, d: kinds.append(k)) if kinds is not None else None
    return make_client(cfg, sleep=sleep, on_retry=hook)


async def test_429_with_retry_after_is_retried_and_honoured():
    delays, kinds = [], []
    async with client(rate_429=1.0, retry_after_s=3, delays=delays, kinds=kinds,
                      rate_limit_wait_s=9.0) as c:
        with pytest.raises(InfraError) as info:
            await c.chat(Q)
    assert info.value.kind == "rate_limited" and info.value.attempts in (3, 4)
    # Retry-After is honoured, floored at the normal back-off (1, 2, 4 s steps with jitter).
    assert delays[:2] == [3.0, 3.0] and all(d >= 3.0 for d in delays)
    assert kinds == ["rate_limited"] * len(delays) and sum(delays) <= 9.0


async def test_fault_draws_depend_on_attempt_so_retries_can_succeed():
    delays: list[float] = []
    outcomes = []
    async with client(rate_5xx=0.3, delays=delays, max_retries=10) as c:
        for i in range(20):
            reply = await c.chat(ChatRequest([{"role": "user", "content": f"q{i}"}], 64))
            outcomes.append(reply.attempts)
    assert max(outcomes) > 1 and min(outcomes) == 1
    # Deterministic: the same requests meet the same faults.
    again = []
    async with client(rate_5xx=0.3, max_retries=10, delays=[]) as c:
        for i in range(20):
            again.append((await c.chat(ChatRequest([{"role": "user", "content": f"q{i}"}],
                                                   64))).attempts)
    assert again == outcomes


@pytest.mark.parametrize("fault,kind", [("rate_5xx", "server_error"), ("rate_timeout", "timeout")])
async def test_infra_faults_exhaust_retries(fault, kind):
    async with client(**{fault: 1.0}, delays=[]) as c:
        with pytest.raises(InfraError) as info:
            await c.chat(Q)
    assert info.value.kind == kind and info.value.attempts == 4


async def test_truncation_and_nonconforming_are_returned_not_retried():
    async with client(rate_truncate=1.0, delays=[]) as c:
        reply = await c.chat(ChatRequest(Q.messages, 64, SCHEMA))
    assert reply.finish_reason == "length" and reply.attempts == 1
    async with client(rate_nonconforming=1.0, delays=[]) as c:
        reply = await c.chat(ChatRequest(Q.messages, 64, SCHEMA))
    assert reply.attempts == 1 and "summary" not in json.loads(reply.content)


async def test_builtin_fault_sims_refuse_without_retry():
    delays: list[float] = []
    async with client("sim/no-reasoning-param", delays=delays) as c:
        with pytest.raises(ParameterRejected):
            await c.chat(Q)
    async with client("sim/reasoning-mandatory", delays=delays) as c:
        with pytest.raises(ReasoningNotDisableable):
            await c.chat(Q)
    async with client("sim/nonconforming", delays=delays) as c:
        reply = await c.chat(ChatRequest(Q.messages, 64, SCHEMA))
    assert delays == [] and reply.attempts == 1
    assert "summary" not in json.loads(reply.content)


async def test_reasoning_mandatory_accepts_requests_that_leave_reasoning_on():
    cfg = resolve_model("sim/reasoning-mandatory", {"reasoning_param": "none"})
    async with make_client(cfg) as c:
        assert (await c.chat(Q)).finish_reason == "stop"


async def test_latency_is_scaled():
    slept: list[float] = []

    async def sleep(d):
        slept.append(d)

    endpoint = SimEndpoint({"sim/faithful": FaultConfig(latency_s=2.0, latency_jitter=0.5)})
    for scale, expect_sleep in ((0.0, False), (0.5, True)):
        slept.clear()
        transport = SimTransport(endpoint, latency_scale=scale, sleep=sleep)
        async with make_client(resolve_model("sim/faithful"), transport=transport) as c:
            await c.chat(Q)
        assert bool(slept) == expect_sleep
        assert all(0.5 <= d <= 1.5 for d in slept)


def test_draws_are_deterministic_and_rates_hold():
    cfg = FaultConfig(rate_429=0.2, rate_5xx=0.1, rate_timeout=0.1)
    draws = [draw_faults(cfg, f"d{i}", 0).infra for i in range(4000)]
    assert draws == [draw_faults(cfg, f"d{i}", 0).infra for i in range(4000)]
    assert abs(draws.count("rate_limited") / 4000 - 0.2) < 0.03
    assert abs(draws.count(None) / 4000 - 0.6) < 0.03
    assert draw_faults(None, "x", 0).infra is None


async def test_unknown_model_on_the_sim_endpoint_is_rejected():
    transport = SimTransport()
    async with httpx.AsyncClient(transport=transport) as http:
        r = await http.post("http://sim/v1/chat/completions",
                            json={"model": "gpt-9", "messages": []})
    assert r.status_code == 404


async def test_malformed_replies_are_retried_and_every_kind_is_drawn():
    from foldscope.engine.sim.faults import MALFORMED_KINDS

    kinds: list[str] = []
    async with client(rate_malformed=0.5, kinds=kinds, delays=[], max_retries=20) as c:
        for i in range(40):
            reply = await c.chat(ChatRequest([{"role": "user", "content": f"m{i}"}], 64))
            assert reply.finish_reason == "stop"
    assert kinds and set(kinds) == {"malformed"}
    faults = FaultConfig(rate_malformed=1.0)
    drawn = {draw_faults(faults, f"d{i}", 0).malformed for i in range(60)}
    assert drawn == set(MALFORMED_KINDS)


def test_fault_draws_differ_between_row_attempts():
    faults = FaultConfig(rate_5xx=0.5)
    first = [draw_faults(faults, f"body{i}", 0).infra for i in range(64)]
    assert first == [draw_faults(faults, f"body{i}", 0, 0).infra for i in range(64)]
    again = [draw_faults(faults, f"body{i}", 0, 1).infra for i in range(64)]
    assert first != again  # a row run again meets fresh draws, not the faults that failed it
    assert again == [draw_faults(faults, f"body{i}", 0, 1).infra for i in range(64)]


async def test_the_client_sends_its_row_attempt_to_the_endpoint():
    seen = []
    endpoint = SimEndpoint()
    real = endpoint.respond

    def respond(method, path, headers, body, **kw):
        seen.append(headers.get("x-foldscope-row-attempt"))
        return real(method, path, headers, body, **kw)

    endpoint.respond = respond  # type: ignore[method-assign]
    cfg = resolve_model("sim/faithful", {"latency_scale": 0})
    async with make_client(cfg, transport=SimTransport(endpoint, latency_scale=0)) as c:
        await c.chat(Q)
        await c.chat(dataclasses.replace(Q, row_attempt=2))
    assert seen == [None, "2"]
