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
import json
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import httpx

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
    finish_reason_of,
    read_body,
    retry_after_s,
    retry_wait_s,
    usage_of,
)
from foldscope.engine.keys import key_problem
from foldscope.engine.wire import (
    RETRY_COUNT_HEADER,
    ROW_ATTEMPT_HEADER,
    body_digest,
)
from foldscope.engine.wire.fastjson import dumps_json

if TYPE_CHECKING:  # the config's module also knows the built-in sims; the client needs its type only
    from foldscope.engine.models import ModelConfig

log = logging.getLogger(__name__)

_PARAMS_REJECTED = "no endpoints found that can handle the requested parameters"

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
            body["response_format"] = req.response_format
        if cfg.reasoning_param == "openrouter":
            body["reasoning"] = {"enabled": False}
        elif cfg.reasoning_param == "vllm":
            body["chat_template_kwargs"] = {"enable_thinking": False}
        if cfg.is_routing_gateway and cfg.pin:
            provider: dict[str, Any] = {"order": [cfg.pin], "allow_fallbacks": False,
                                        "require_parameters": True}
            if cfg.quantizations:
                provider["quantizations"] = list(cfg.quantizations)
            body["provider"] = provider
        return body

    async def chat(self, req: ChatRequest) -> ChatReply:
        """Send one chat request, retrying infrastructure faults.

        Args:
            req: the request.

        Returns:
            The reply (its content may be anything the model wrote, valid or not).

        Raises:
            InfraError: timeouts, connect errors, 429 or 5xx persisted past ``max_retries``.
            ParameterRejected, ReasoningNotDisableable, RequestRejected: the request was refused.
            ModelError: the API-key environment variable is not set.
        """
        return await self.send(self.build_body(req), row_attempt=req.row_attempt)

    async def send(self, body: dict, *, row_attempt: int = 0) -> ChatReply:
        """Send a prepared body (see :meth:`build_body`); the probe uses this to relax parameters.

        Args:
            body: the request body.
            row_attempt: which attempt of its row the call belongs to (sent as a header from
                the second on, so a simulated endpoint's fault draws differ between attempts).
        """
        digest = body_digest(body)
        content = dumps_json(body).encode("utf-8")  # reuses the digest's escaped user message
        choice, resp, latency, kinds = await self._request("POST", "/chat/completions", content,
                                                           _completion, row_attempt)
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
                       parse: Callable[[httpx.Response], _T], row_attempt: int = 0
                       ) -> tuple[_T, httpx.Response, float, tuple[str, ...]]:
        """Send one call, retrying infrastructure faults, and return ``parse``'s reading of it.

        ``parse`` raises ``ValueError`` on a reply that is not the shape asked for (truncated or
        invalid JSON, no choices, no message): that is retried like a 5xx. A 429 does not spend
        the ``max_retries`` budget: it waits (Retry-After, else back-off) for as long as
        ``rate_limit_wait_s`` allows in total. Every attempt is bounded by ``timeout_s`` from
        connect to the last byte.
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
        while True:
            attempt += 1
            # Yield to the loop once per attempt: an endpoint that answers at once (a simulator
            # at full speed) would otherwise never let a cancellation or a signal land.
            await asyncio.sleep(0)
            headers[RETRY_COUNT_HEADER] = str(attempt - 1)
            async with self._admit() as settle:
                outcome = await self._attempt(method, url, content, headers, parse)
                settle(outcome.kind)
            if outcome.kind is None:
                return outcome.parsed, outcome.resp, outcome.latency, tuple(kinds)
            kind = outcome.kind
            if outcome.rejection is not None:
                raise self._rejection(outcome.status or 400, outcome.rejection, attempt)
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
                       headers: dict[str, str], parse: Callable[[httpx.Response], Any]
                       ) -> _Outcome:
        """One HTTP attempt, classified: parsed, a fault to retry, or a rejection to raise."""
        cfg = self.cfg
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
            async with asyncio.timeout(cfg.timeout_s):
                resp = await self._pool_request(method, url, content, headers, on_wire)
        except (TimeoutError, httpx.TimeoutException) as exc:
            return _Outcome("timeout", f"no complete reply within timeout_s {cfg.timeout_s:g} "
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
        if status >= 500 or status == 408:
            return _Outcome("server_error" if status != 408 else "timeout", detail, status=status)
        return _Outcome("rejected", detail, status=status, rejection=message)

    async def _pool_request(self, method: str, url: httpx.URL, content: bytes | None,
                            headers: dict[str, str],
                            trace: Callable[[str, dict[str, Any]], Awaitable[None]] | None = None
                            ) -> httpx.Response:
        pool = self._acquire()
        async with pool.connection() as client:
            request = client.build_request(
                method, url, content=content, headers=headers, timeout=self.cfg.timeout_s,
                extensions={"trace": trace} if trace is not None else None)
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

    def _rejection(self, status: int, message: str, attempts: int) -> ClientError:
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
        return RequestRejected(f"{model}: HTTP {status} request rejected ({message})",
                               model=model, status=status, attempts=attempts)

    def _reply(self, choice: tuple[dict, dict], resp: httpx.Response, latency: float,
               kinds: tuple[str, ...], digest: str) -> ChatReply:
        cfg = self.cfg
        data, message = choice
        content = message.get("content") or ""
        finish = finish_reason_of(data["choices"][0])
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
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


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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


def _retry_after(resp: httpx.Response) -> float | None:
    return retry_after_s(resp.headers.get("retry-after"))


def _per_mtok(value: Any) -> float | None:
    try:
        return float(value) * 1e6
    except (TypeError, ValueError):
        return None


def _endpoint_info(e: dict) -> EndpointInfo:
    pricing = e.get("pricing") or {}
    return EndpointInfo(
        name=str(e.get("name") or e.get("provider_name") or "?"),
        provider_name=str(e.get("provider_name") or e.get("name") or "?"),
        tag=e.get("tag"),
        quantization=e.get("quantization"),
        context_length=_int_or_none(e.get("context_length")),
        max_completion_tokens=_int_or_none(e.get("max_completion_tokens")),
        price_prompt_per_mtok=_per_mtok(pricing.get("prompt")),
        price_completion_per_mtok=_per_mtok(pricing.get("completion")),
        supported_parameters=tuple(e.get("supported_parameters") or ()),
    )
