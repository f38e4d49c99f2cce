"""The model client: async Chat Completions calls with pinning, retries and typed errors.

One dialect (OpenAI Chat Completions) covers OpenRouter, OpenAI, vLLM, llama.cpp server, Ollama
and the simulated models (whose transport the caller injects). Infrastructure faults (connect
errors, timeouts, 429, 5xx) are retried
with bounded exponential backoff; rejections of the request itself are raised at once, typed, so a
probe can tell the harness's parameters from the model. A reply that does not fit its schema is
the model's behaviour and is returned like any other.

Reasoning suppression for ``reasoning_param="openrouter"`` is sent as
``"reasoning": {"enabled": false}``: OpenRouter documents ``enabled`` for every model, whereas
``effort: "none"`` only exists for some OpenAI-style models.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import random
import re
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx

from foldscope.core.dialects import needs_schema_prompt, schema_of, schema_prompt
from foldscope.core.dialects import render as render_schema
from foldscope.core.dialects import shipped as shipped_dialects
from foldscope.core.tokens import estimate_tokens
from foldscope.engine.client.chat import ChatReply, ChatRequest, EndpointInfo
from foldscope.engine.client.errors import (
    ClientError,
    InfraError,
    KeyRejected,
    MissingApiKey,
    ParameterRejected,
    ReasoningNotDisableable,
    RequestRejected,
)
from foldscope.engine.client.pools import POOLS, SharedPool
from foldscope.engine.client.reply_check import (
    ACCEPT_ENCODING,
    ReplyRefused,
    body_limit,
    count_or_none,
    finish_reason_of,
    listed_text_of,
    price_per_mtok_of,
    read_body,
    retry_after_s,
    retry_wait_s,
    usage_of,
    without_key,
)
from foldscope.engine.keys import key_problem
from foldscope.engine.wire import (
    BODY_EXTENSION,
    RETRY_COUNT_HEADER,
    ROW_ATTEMPT_HEADER,
    EncodedBody,
    body_digest,
    encode_body,
)
from foldscope.engine.wire.fastjson import dumps_json

if TYPE_CHECKING:  # the config's module also knows the built-in sims; the client needs its type only
    from foldscope.engine.models import ModelConfig

log = logging.getLogger(__name__)

_PARAMS_REJECTED = "no endpoints found that can handle the requested parameters"

INFO_TIMEOUT_S = 10.0
"""Deadline of one server-information call (``/v1/models``, ``/tokenize``)."""

ALIVE_CHECK_S = 3.0
"""How long a TCP connect may take when telling a slow server (it connects) from a dead one."""

RetryHook = Callable[[str, float], None]
Sleep = Callable[[float], Awaitable[Any]]
Settle = Callable[[str | None], None]
"""Told how an attempt ended: None (a reply) or its fault kind."""
_T = TypeVar("_T")


class Gate(Protocol):
    """Admission for every HTTP attempt (the runner's per-provider limiter is one).

    ``attempt()`` is entered around each attempt, retries included, so back-off waits hold no
    slot; it yields a callback told how the attempt ended (None: a reply; else its fault kind:
    ``rate_limited``, ``server_error``, ``timeout``, ``connect``, ``malformed``, ``rejected``).
    """

    def attempt(self) -> AbstractAsyncContextManager[Settle]: ...


def _ignore(fault: str | None) -> None:
    return None


@dataclass(frozen=True)
class _Outcome:
    """How one attempt ended: ``kind`` None with the parsed reply, or a fault to retry or raise."""

    kind: str | None
    detail: str
    status: int | None = None
    retry_after: float | None = None
    rejection: str | None = None
    """The endpoint's message when it refused the request (4xx): raised, never retried."""
    resp: Any = None
    parsed: Any = None
    latency: float = 0.0
    parameter: str | None = None
    """The refused parameter, when the error body names it (``param``, a validation path)."""


class ModelClient:
    """Calls one configured model.

    Args:
        cfg: the model config.
        transport: the httpx transport to send through (None: the network). The caller chooses
            it (``foldscope.engine.connect`` wires the in-process simulator for built-in sims);
            this client knows nothing of simulators.
        sleep: the coroutine used for backoff waits (tests inject a recorder).
        rng: random source for backoff jitter.
        on_retry: called with ``(kind, delay_s)`` before each backoff wait.
        gate: entered around every HTTP attempt, retries included (the runner's limiter paces
            a provider's request rate and bounds its calls in flight here, and learns from
            each attempt's outcome).
        connections: the most calls this client's endpoint may have in flight (the runner's
            limit), so its shared connection pool holds and keeps alive that many connections
            (None: ``pools.DEFAULT_CONNECTIONS``).
    """

    def __init__(self, cfg: ModelConfig, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Sleep = asyncio.sleep, rng: random.Random | None = None,
                 on_retry: RetryHook | None = None, gate: Gate | None = None,
                 connections: int | None = None) -> None:
        self.cfg = cfg
        self.connections = connections
        self.on_retry = on_retry
        self.gate = gate
        self._transport = transport
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._pool_key: tuple | None = None
        self._pool: SharedPool | None = None
        self._urls: dict[str, httpx.URL] = {}
        self.dialect: str = cfg.schema_dialect or cfg.dialect_entry.ladder[0]
        """The schema dialect requests are built in (the runner sets the probed one)."""
        self.server_fingerprint = ""
        """A digest of what the server reports of the model (``engine.serverinfo``), set by the
        runner; part of the response cache's key."""

    def __repr__(self) -> str:
        return f"ModelClient(id={self.cfg.id!r}, provider={self.cfg.provider!r})"

    async def __aenter__(self) -> ModelClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Release this client's share of its connection pool."""
        if self._pool_key is not None:
            key, self._pool_key, self._pool = self._pool_key, None, None
            await POOLS.release(key)

    # -- request building ---------------------------------------------------------------

    def build_body(self, req: ChatRequest) -> dict:
        """Return the JSON body for ``req`` under this model's config (pin, reasoning, seed)."""
        cfg = self.cfg
        body: dict[str, Any] = {
            "model": cfg.wire_model,
            "messages": req.messages,
            "max_tokens": req.max_tokens,
            "temperature": cfg.temperature if req.temperature is None else req.temperature,
        }
        seed = cfg.seed if req.seed is None else req.seed
        if seed is not None:
            body["seed"] = seed
        if req.response_format is not None:
            body.update(self.schema_params(req.response_format, body))
        body.update(shipped_dialects().reasoning_body(cfg.reasoning_param))
        if cfg.is_routing_gateway and cfg.pin:
            provider: dict[str, Any] = {"order": [cfg.pin], "allow_fallbacks": False,
                                        "require_parameters": True}
            if cfg.quantizations:
                provider["quantizations"] = list(cfg.quantizations)
            body["provider"] = provider
        return body

    def schema_params(self, response_format: dict, body: dict | None = None) -> dict:
        """The parameters that ask for ``response_format`` in this client's schema dialect.

        When the dialect does not hand the endpoint the schema (``json_object``, ``prompt``),
        the schema is spelled out at the end of the body's last user message instead.
        """
        dialect = shipped_dialects().dialect(self.dialect)
        params = render_schema(dialect, response_format, self.cfg.dialect_entry.max_length)
        if body is not None and needs_schema_prompt(dialect) and response_format.get(
                "type") == "json_schema":
            messages = [dict(m) for m in body["messages"]]
            for message in reversed(messages):
                if message.get("role") == "user":
                    message["content"] = (f"{message.get('content') or ''}\n\n"
                                          f"{schema_prompt(schema_of(response_format))}")
                    break
            body["messages"] = messages
        return params

    def deadline(self, body: dict) -> float:
        """Seconds one attempt at ``body`` may take: the model's floor plus its allowances for
        the estimated prompt tokens and the output budget asked for."""
        timeouts = self.cfg.timeouts
        prompt = 0
        if timeouts.per_prompt_token_s:
            # Estimating a fold's ~100k characters costs ~0.3 ms; an endpoint that allows no
            # time per prompt token (a simulated one) does not need the figure.
            messages = body.get("messages") or []
            prompt = sum(estimate_tokens(str(m.get("content") or "")) for m in messages
                         if isinstance(m, dict))
        budget = body.get("max_tokens")
        budget = budget if isinstance(budget, int) and not isinstance(budget, bool) else 0
        return timeouts.deadline(prompt, budget)

    async def chat(self, req: ChatRequest, *, digest: str | None = None) -> ChatReply:
        """Send one chat request, retrying infrastructure faults.

        Args:
            req: the request.
            digest: the body's digest (``engine.wire.body_digest``) when the caller has it
                already (the response cache's key holds it), ``""`` when the caller keeps no
                record of it (no cache: ``ChatReply.request_digest`` is then empty, as a replayed
                reply's is); None computes it. Hashing a fold's ~100 kB body costs ~0.2 ms.

        Returns:
            The reply (its content may be anything the model wrote, valid or not).

        Raises:
            InfraError: timeouts, connect errors, 429 or 5xx persisted past ``max_retries``.
            ParameterRejected, ReasoningNotDisableable, RequestRejected: the request was refused.
            ModelError: the API-key environment variable is not set.
        """
        return await self.send(self.build_body(req), row_attempt=req.row_attempt, digest=digest)

    async def send(self, body: dict, *, row_attempt: int = 0, digest: str | None = None
                   ) -> ChatReply:
        """Send a prepared body (see :meth:`build_body`); the probe uses this to relax parameters.

        Args:
            body: the request body.
            row_attempt: which attempt of its row the call belongs to (sent as a header from
                the second on, so a simulated endpoint's fault draws differ between attempts).
            digest: as for :meth:`chat`.
        """
        if digest is None:
            digest = body_digest(body)
        encoded = encode_body(body)  # reuses the digest's escaped user message
        choice, resp, latency, kinds = await self._request("POST", "/chat/completions",
                                                           encoded.content, _completion,
                                                           row_attempt,
                                                           deadline=self.deadline(body),
                                                           body=body, encoded=encoded)
        return self._reply(choice, resp, latency, kinds, digest)

    async def list_endpoints(self) -> list[EndpointInfo]:
        """List the gateway's endpoints for this model (``GET /models/{author}/{slug}/endpoints``).

        Returns:
            The endpoints, in the gateway's order.
        """
        _, resp, _, _ = await self._request("GET", f"/models/{self.cfg.wire_model}/endpoints",
                                            None, _as_is)
        try:
            data = resp.json()["data"]
            items = data.get("endpoints") or []
            return [_endpoint_info(e) for e in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise RequestRejected(f"{self.cfg.id}: endpoint listing is not in the expected shape",
                                  model=self.cfg.id, status=resp.status_code) from None

    async def fetch_json(self, method: str, path: str, payload: dict | None = None, *,
                         root: bool = False, timeout_s: float = INFO_TIMEOUT_S) -> Any:
        """One unretried call for server information (model metadata, token counts).

        Args:
            method: ``GET`` or ``POST``.
            path: the path after the base URL (or after its host when ``root``: llama.cpp's
                and vLLM's ``/tokenize`` live beside ``/v1``, not under it).
            payload: the JSON body of a POST.
            root: resolve ``path`` against the server's root rather than the base URL.
            timeout_s: the deadline of the call.

        Returns:
            The parsed JSON, or None when the server has no such endpoint, refuses, times out
            or answers something that is not JSON.
        """
        base = self.cfg.base_url
        if root:
            parts = httpx.URL(base)
            base = str(parts.copy_with(path="", query=None, fragment=None)).rstrip("/")
        try:
            headers = self._headers()
            content = dumps_json(payload).encode("utf-8") if payload is not None else None
            async with asyncio.timeout(timeout_s):
                resp = await self._pool_request(method, httpx.URL(base + path), content,
                                                headers, limit_s=timeout_s)
        except (TimeoutError, httpx.HTTPError, ClientError, ReplyRefused, OSError):
            return None
        if resp.status_code >= 400:
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    # -- transport and retries ----------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json",
                   "accept-encoding": ACCEPT_ENCODING}
        env = self.cfg.api_key_env
        if env:
            # Read at call time so the key lives only in this dict and the outgoing request.
            key = os.environ.get(env)
            if not key:
                raise MissingApiKey(f"model '{self.cfg.id}': environment variable {env} "
                                    "(api_key_env) is not set", model=self.cfg.id, attempts=0)
            problem = key_problem(key)
            if problem is not None:
                raise MissingApiKey(f"model '{self.cfg.id}': environment variable {env} "
                                    f"(api_key_env) {problem}", model=self.cfg.id, attempts=0)
            headers["authorization"] = f"Bearer {key}"
        if self.cfg.provider == "openrouter":
            headers["x-title"] = "foldscope"
        return headers

    def _secret(self) -> str | None:
        env = self.cfg.api_key_env
        return os.environ.get(env) if env else None

    def _scrub(self, text: str) -> str:
        # A gateway could echo the key in an error body; never let it into a message.
        secret = self._secret()
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
        return " ".join(text.split())[:300]

    def _acquire(self) -> SharedPool:
        if self._pool is None or self._pool.is_closed:
            self._pool_key, self._pool = POOLS.acquire(self.cfg.base_url, self._transport,
                                                       self.connections)
        return self._pool

    async def _request(self, method: str, path: str, content: bytes | None,
                       parse: Callable[[httpx.Response], _T], row_attempt: int = 0, *,
                       deadline: float | None = None, body: dict | None = None,
                       encoded: EncodedBody | None = None
                       ) -> tuple[_T, httpx.Response, float, tuple[str, ...]]:
        """Send one call, retrying infrastructure faults, and return ``parse``'s reading of it.

        ``parse`` raises ``ValueError`` on a reply that is not the shape asked for (truncated or
        invalid JSON, no choices, no message): that is retried like a 5xx. A 429 does not spend
        the ``max_retries`` budget: it waits (Retry-After, else back-off) for as long as
        ``rate_limit_wait_s`` allows in total. Every attempt is bounded by ``deadline`` (else
        ``timeout_s``) from connect to the last byte; after a ``slow`` timeout (the server took
        the connection but did not finish in time) the next attempt's deadline doubles, since the
        server is busy (often still with the abandoned call) rather than gone. A refusal of the
        request (4xx, or a 5xx whose body is a validation error) is raised at once, naming the
        parameter when the body does. ``encoded`` (``content`` with the body it encodes) goes
        with every attempt as the request's ``BODY_EXTENSION``.
        """
        cfg = self.cfg
        headers = self._headers()
        if row_attempt:
            headers[ROW_ATTEMPT_HEADER] = str(row_attempt)
        # Parsed once per path (a handful per client) rather than on every call: httpx parses a
        # str URL each time (~13 us); a URL object is copied as it is.
        url = self._urls.get(path)
        if url is None:
            url = self._urls[path] = httpx.URL(cfg.base_url + path)
        kinds: list[str] = []
        faults = 0  # attempts that failed on anything but a 429: they spend max_retries
        limited = 0  # consecutive 429s, for the back-off when no Retry-After is given
        waited = 0.0  # time spent waiting out 429s
        attempt = 0
        limit_s = deadline if deadline is not None else cfg.timeout_s
        while True:
            attempt += 1
            # Yield to the loop once per attempt: an endpoint that answers at once (a simulator
            # at full speed) would otherwise never let a cancellation or a signal land.
            await asyncio.sleep(0)
            headers[RETRY_COUNT_HEADER] = str(attempt - 1)
            async with self._admit() as settle:
                outcome = await self._attempt(method, url, content, headers, parse, limit_s,
                                              encoded)
                settle(outcome.kind)
            if outcome.kind is None:
                return outcome.parsed, outcome.resp, outcome.latency, tuple(kinds)
            kind = outcome.kind
            if outcome.rejection is not None:
                raise self._rejection(outcome.status or 400, outcome.rejection, attempt,
                                      outcome.parameter or _named_parameter(outcome.rejection,
                                                                            body))
            if kind == "timeout" and await self._alive(url):
                kind = "slow"
                outcome = dataclasses.replace(outcome, kind=kind, detail=(
                    f"{outcome.detail}; the server takes connections, so it is slow or busy "
                    "rather than gone"))
                limit_s *= 2
            if kind == "rate_limited":
                limited += 1
                delay = retry_wait_s(outcome.retry_after, self._delay(limited, None))
                give_up = waited + delay > cfg.rate_limit_wait_s
            else:
                faults += 1
                limited = 0
                delay = self._delay(faults, None)
                give_up = faults > cfg.max_retries
            if give_up:
                why = (f"after {attempt} attempt{'s' if attempt > 1 else ''}"
                       if kind != "rate_limited" else
                       f"after waiting {waited:.0f}s of rate_limit_wait_s "
                       f"{cfg.rate_limit_wait_s:g}" + (
                           f"; the server asked to wait {outcome.retry_after:g}s, beyond "
                           "rate_limit_wait_s" if outcome.retry_after is not None
                           and waited + outcome.retry_after > cfg.rate_limit_wait_s else ""))
                raise InfraError(f"{cfg.id}: {kind} {why} (last: {self._scrub(outcome.detail)})",
                                 model=cfg.id, kind=kind, status=outcome.status,
                                 attempts=attempt) from None
            if kind == "rate_limited":
                waited += delay
            kinds.append(kind)
            log.info("retrying %s after %s (attempt %d, waiting %.2fs)", cfg.id, kind, attempt, delay)
            if self.on_retry is not None:
                self.on_retry(kind, delay)
            await self._sleep(delay)

    def _admit(self) -> AbstractAsyncContextManager[Settle]:
        if self.gate is not None:
            return self.gate.attempt()
        return nullcontext(_ignore)

    async def _attempt(self, method: str, url: httpx.URL, content: bytes | None,
                       headers: dict[str, str], parse: Callable[[httpx.Response], Any],
                       limit_s: float | None = None, encoded: EncodedBody | None = None
                       ) -> _Outcome:
        """One HTTP attempt, classified: parsed, a fault to retry, or a rejection to raise."""
        limit_s = self.cfg.timeout_s if limit_s is None else limit_s
        started = time.monotonic()
        sent: list[float] = []

        async def on_wire(event: str, info: dict[str, Any]) -> None:
            # httpcore's first event for a request comes when a connection takes it (connect,
            # or sending its headers on a kept-alive one): the call's latency counts from there,
            # not from the wait for a free connection in the pool.
            if not sent:
                sent.append(time.monotonic())

        try:
            # The total deadline: httpx's own timeout restarts with every byte read, so a body
            # dripped one byte at a time would otherwise outlast timeout_s many times over.
            async with asyncio.timeout(limit_s):
                resp = await self._pool_request(method, url, content, headers, on_wire,
                                                limit_s=limit_s, encoded=encoded)
        except (TimeoutError, httpx.TimeoutException) as exc:
            return _Outcome("timeout", f"no complete reply within the deadline {limit_s:g}s "
                            f"({type(exc).__name__})")
        except ReplyRefused as exc:
            return _Outcome("malformed", f"reply refused: {exc}")
        except (httpx.ProtocolError, httpx.DecodingError) as exc:
            # The server answered, but not in HTTP (or its body in no valid encoding): the
            # connection itself was fine.
            return _Outcome("malformed", f"broken HTTP from the endpoint ({type(exc).__name__}: "
                            f"{self._scrub(str(exc))[:120]})")
        except httpx.TransportError as exc:
            return _Outcome("connect", type(exc).__name__)
        latency = time.monotonic() - (sent[0] if sent else started)
        status = resp.status_code
        if 300 <= status < 400:  # redirects are never followed: a key must not travel on
            where = self._scrub(resp.headers.get("location", ""))[:120]
            message = (f"redirect not followed (HTTP {status}"
                       + (f" to {where}" if where else "") + "); point base_url at the final URL")
            return _Outcome("rejected", message, status=status, rejection=message)
        if status < 400 and not _is_error_body(resp):
            try:
                parsed = parse(resp)
            except ValueError as exc:
                return _Outcome("malformed", f"HTTP {status} reply is not a chat completion "
                                f"({exc})", status=status)
            return _Outcome(None, "", resp=resp, parsed=parsed, latency=latency, status=status)
        if status < 400:  # a 200 carrying {"error": …}: use the code it states
            status = _error_code(resp) or 502
        message = self._scrub(_error_message(resp))
        detail = f"HTTP {status} {message}".strip()
        if status == 429:
            return _Outcome("rate_limited", detail, status=status,
                            retry_after=_retry_after(resp))
        parameter = _error_param(resp)
        if status >= 500 and _is_validation_error(message):
            # The server refused a parameter but reports it as its own fault (llama-cpp-python
            # answers a response_format it does not know with a 500 holding pydantic's error):
            # retrying cannot help, and the endpoint is not overloaded.
            return _Outcome("rejected", detail, status=status, rejection=message,
                            parameter=parameter)
        if status >= 500 or status == 408:
            return _Outcome("server_error" if status != 408 else "timeout", detail, status=status)
        return _Outcome("rejected", detail, status=status, rejection=message, parameter=parameter)

    async def _alive(self, url: httpx.URL) -> bool:
        """True when the endpoint's host still accepts TCP connections (a slow server does; a
        dead or unreachable one does not). A busy llama.cpp server answers no HTTP request
        while it generates, so the socket is what tells slow from dead."""
        if self._transport is not None:  # an injected transport (tests, simulators): no socket
            return bool(getattr(self._transport, "alive", False))
        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            async with asyncio.timeout(ALIVE_CHECK_S):
                _, writer = await asyncio.open_connection(url.host, port)
        except (OSError, TimeoutError):
            return False
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return True

    async def _pool_request(self, method: str, url: httpx.URL, content: bytes | None,
                            headers: dict[str, str],
                            trace: Callable[[str, dict[str, Any]], Awaitable[None]] | None = None,
                            *, limit_s: float | None = None, encoded: EncodedBody | None = None
                            ) -> httpx.Response:
        pool = self._acquire()
        extensions: dict[str, Any] = {}
        if trace is not None:
            extensions["trace"] = trace
        if encoded is not None:
            extensions[BODY_EXTENSION] = encoded
        async with pool.connection() as client:
            request = client.build_request(
                method, url, content=content, headers=headers,
                timeout=self.cfg.timeout_s if limit_s is None else limit_s,
                extensions=extensions or None)
            # Streamed, so reading stops at the body's bound however large or endless it is.
            resp = await client.send(request, stream=True)
            try:
                return await read_body(resp, body_limit(self.cfg.max_reply_bytes),
                                       max_reply_bytes=self.cfg.max_reply_bytes)
            finally:
                await resp.aclose()

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_wait_s(retry_after, 0.0)
        # Equal jitter: half the exponential step is fixed, half random, so waits stay bounded
        # below and concurrent rows that failed together do not retry in lockstep.
        step = min(self.cfg.backoff_cap_s, self.cfg.backoff_base_s * 2 ** (attempt - 1))
        return step / 2 + self._rng.uniform(0, step / 2)

    def _rejection(self, status: int, message: str, attempts: int,
                   parameter: str | None = None) -> ClientError:
        low = message.casefold()
        model = self.cfg.id
        if status in (401, 403):
            env = self.cfg.api_key_env or "no api_key_env"
            return KeyRejected(f"key rejected for {model} (HTTP {status} from the endpoint; "
                               f"key from {env}): {message}", model=model, status=status,
                               attempts=attempts)
        if status == 404 and _PARAMS_REJECTED in low:
            return ParameterRejected(f"{model}: HTTP 404 no endpoint accepts the request's "
                                     f"parameters ({message})", model=model, status=status,
                                     attempts=attempts)
        if status == 400 and "reasoning" in low and any(
                s in low for s in ("mandatory", "cannot be disabled", "can't be disabled",
                                   "not be disabled", "cannot disable")):
            return ReasoningNotDisableable(f"{model}: HTTP 400 reasoning cannot be disabled "
                                           f"({message})", model=model, status=status,
                                           attempts=attempts)
        named = f" parameter {parameter}" if parameter else ""
        return RequestRejected(f"{model}: HTTP {status} request rejected{named} ({message})",
                               model=model, status=status, attempts=attempts,
                               parameter=parameter)

    def _reply(self, choice: tuple[dict, dict], resp: httpx.Response, latency: float,
               kinds: tuple[str, ...], digest: str) -> ChatReply:
        cfg = self.cfg
        data, message = choice
        content = message.get("content") or ""
        finish = finish_reason_of(data["choices"][0])
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        content = without_key(content, self._secret())  # a reply echoing the key: never stored
        content, cut = cap_text(content, cfg.max_reply_bytes)
        usage = usage_of(data, cfg.price_prompt_per_mtok, cfg.price_completion_per_mtok)
        # Only the configuration says a model is simulated: a real endpoint's reply cannot
        # label itself so (by a header or a fingerprint).
        simulated = cfg.provider == "sim"
        return ChatReply(content=content, finish_reason=finish, prompt_tokens=usage.prompt_tokens,
                         completion_tokens=usage.completion_tokens, latency_s=latency,
                         cost_usd=usage.cost_usd,
                         simulated=simulated, attempts=len(kinds) + 1, request_digest=digest,
                         retry_kinds=kinds, truncated=cut)


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` of UTF-8 (never inside a character).

    Returns:
        The text kept and whether anything was cut.
    """
    if len(text) * 4 <= max_bytes:  # cannot exceed the cap: skip the encoding
        return text, False
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", errors="ignore"), True


def _as_is(resp: httpx.Response) -> None:
    return None


def _completion(resp: httpx.Response) -> tuple[dict, dict]:
    """The reply's JSON and its first choice's message; ``ValueError`` when it has neither.

    Truncated or invalid JSON, no ``choices`` (or an empty list) and a choice without a
    ``message`` object are all malformed replies, retried like a 5xx.
    """
    data = resp.json()  # json.JSONDecodeError is a ValueError
    if not isinstance(data, dict):
        raise ValueError("the reply is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ValueError("the reply has no choices")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise ValueError("the first choice has no message")
    return data, message


def _is_error_body(resp: httpx.Response) -> bool:
    if "json" not in resp.headers.get("content-type", ""):
        return False
    try:
        data = resp.json()
    except ValueError:
        return False
    return isinstance(data, dict) and "error" in data and "choices" not in data and "data" not in data


def _error_code(resp: httpx.Response) -> int | None:
    try:
        code = resp.json()["error"].get("code")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return code if isinstance(code, int) and 400 <= code < 600 else None


def _error_message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:300]
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)
    if isinstance(err, str):
        return err
    return json.dumps(data, ensure_ascii=False)[:300]


_VALIDATION_MARKERS = ("validation error", "input should be", "field required",
                       "extra inputs are not permitted", "unrecognized request argument",
                       "invalid value", "is not supported", "unsupported parameter")

_VALIDATION_LOC = re.compile(r"""['"]loc['"]\s*:\s*[(\[](?P<loc>[^)\]]*)[)\]]""")

_VALIDATION_PATH = re.compile(r"validation errors? for \w+\s+(?P<path>[A-Za-z_][\w.\[\]]*)")


def _is_validation_error(message: str) -> bool:
    low = message.casefold()
    return any(marker in low for marker in _VALIDATION_MARKERS)


def _error_param(resp: httpx.Response) -> str | None:
    """The parameter an error body names: OpenAI's ``error.param``, FastAPI's ``detail[].loc``."""
    try:
        data = resp.json()
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    err = data.get("error")
    param = err.get("param") if isinstance(err, dict) else data.get("param")
    if isinstance(param, str) and param:
        return param
    detail = data.get("detail")
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        loc = [str(p) for p in detail[0].get("loc") or () if p != "body"]
        if loc:
            return ".".join(loc)
    return None


def _named_parameter(message: str, body: dict | None) -> str | None:
    """The request parameter a refusal's message names, if it names one of the body's.

    A pydantic message names a path (``1 validation error for X\nresponse_format.type\n …``);
    otherwise the longest dotted body parameter the message mentions is taken.
    """
    match = _VALIDATION_LOC.search(message)
    if match:  # pydantic's error list as a repr: 'loc': ('body', 'response_format', 'type')
        parts = [p.strip().strip("'\"") for p in match.group("loc").split(",")]
        parts = [p for p in parts if p and p != "body"]
        if parts:
            return ".".join(parts)
    match = _VALIDATION_PATH.search(message)
    if match:
        return match.group("path").rstrip(".")
    if not body:
        return None
    names: list[str] = []
    for key, value in body.items():
        if key in ("messages", "model"):
            continue
        names.append(key)
        if isinstance(value, dict):
            names += [f"{key}.{inner}" for inner in value]
    low = message.casefold()
    hits = [n for n in names if re.search(rf"(?<![\w.]){re.escape(n.casefold())}(?![\w])", low)]
    return max(hits, key=len) if hits else None


def _retry_after(resp: httpx.Response) -> float | None:
    return retry_after_s(resp.headers.get("retry-after"))


def _endpoint_info(e: dict) -> EndpointInfo:
    pricing = e.get("pricing")
    pricing = pricing if isinstance(pricing, dict) else {}
    name = listed_text_of(e.get("name"))
    provider = listed_text_of(e.get("provider_name"))
    parameters = e.get("supported_parameters")
    return EndpointInfo(
        name=name or provider or "?",
        provider_name=provider or name or "?",
        tag=listed_text_of(e.get("tag")),
        quantization=listed_text_of(e.get("quantization")),
        context_length=count_or_none(e.get("context_length")),
        max_completion_tokens=count_or_none(e.get("max_completion_tokens")),
        price_prompt_per_mtok=price_per_mtok_of(pricing.get("prompt")),
        price_completion_per_mtok=price_per_mtok_of(pricing.get("completion")),
        supported_parameters=tuple(p for p in parameters if listed_text_of(p, longest=80))
        if isinstance(parameters, list) else (),
    )
