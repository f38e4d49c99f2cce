"""The simulated endpoint: one function maps an HTTP request to a response, shared by the
in-process transport and the ``foldscope sim serve`` HTTP server.

It speaks the OpenAI Chat Completions dialect with OpenRouter's extras (``provider`` routing,
``reasoning``, the endpoint listing), injects configured faults, and marks every reply simulated
(``system_fingerprint``, the ``x-foldscope-simulated`` header).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.nesting import loads_json
from foldscope.engine.sim import catalog, temperaments
from foldscope.engine.sim.body_check import (
    BodyProblem,
    check_chat_body,
    decode_body,
    decoded_as,
    may_hold_surrogate,
)
from foldscope.engine.sim.faults import FaultConfig, FaultDraw, draw_faults
from foldscope.engine.sim.request import USAGE, parse_request
from foldscope.engine.wire import (
    RETRY_COUNT_HEADER,
    ROW_ATTEMPT_HEADER,
    SIM_FINGERPRINT,
    SIMULATED_HEADER,
    body_digest,
)

PARAMS_REJECTED_MESSAGE = "No endpoints found that can handle the requested parameters."
REASONING_MANDATORY_MESSAGE = "reasoning is mandatory for this endpoint and cannot be disabled"
NO_PROVIDER_MESSAGE = "No allowed providers are available for the selected model."
CONTEXT_LENGTH = 131072
SUPPORTED_PARAMETERS = ("max_tokens", "temperature", "seed", "stop", "response_format",
                        "structured_outputs", "reasoning", "include_reasoning")


@dataclass(frozen=True)
class SimResponse:
    """What the endpoint answers; the server or transport applies ``delay_s`` and ``stall``."""

    status: int
    headers: dict[str, str]
    body: bytes
    delay_s: float = 0.0
    """Simulated latency (before scaling)."""
    stall: bool = False
    """Simulate a timeout: the transport raises ReadTimeout, the server stalls."""
    stall_s: float = 0.0


def _json(status: int, obj: Any, *, headers: Mapping[str, str] | None = None,
          delay_s: float = 0.0) -> SimResponse:
    h = {"content-type": "application/json", SIMULATED_HEADER: "1"}
    h.update(headers or {})
    return SimResponse(status, h, json.dumps(obj, ensure_ascii=False).encode("utf-8"), delay_s)


_ERROR_TYPES = {400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error",
                413: "invalid_request_error", 429: "rate_limit_error"}


def error_response(status: int, message: str, *, param: str | None = None,
                   **kw: Any) -> SimResponse:
    """An OpenAI-style error: ``{"error": {"message", "type", "param", "code"}}``.

    Args:
        status: the HTTP status (also the ``code``, as OpenRouter sends it).
        message: one line saying what is wrong.
        param: the offending request parameter, if one is to blame.
        **kw: ``headers`` and ``delay_s`` for the response.
    """
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return _json(status, {"error": {"message": message, "type": kind, "param": param,
                                    "code": status}}, **kw)



def suppresses_reasoning(body: dict) -> bool:
    """True when a body asks to disable reasoning (any dialect)."""
    r = body.get("reasoning")
    if isinstance(r, dict) and (r.get("enabled") is False or r.get("effort") == "none"
                                or r.get("max_tokens") == 0):
        return True
    kw = body.get("chat_template_kwargs")
    if isinstance(kw, dict) and kw.get("enable_thinking") is False:
        return True
    return body.get("reasoning_effort") == "none"


def carries_reasoning_param(body: dict) -> bool:
    """True when a body carries any reasoning-control parameter."""
    return any(k in body for k in ("reasoning", "chat_template_kwargs", "reasoning_effort"))


@dataclass
class SimEndpoint:
    """A simulated gateway serving every built-in sim plus configured variants.

    Args:
        faults: configured faults by wire model name (``sim/faithful:slow``); laid over the
            built-in faults of that model's temperament.
    """

    faults: Mapping[str, FaultConfig] = field(default_factory=dict)

    def model_names(self) -> list[str]:
        """Wire model names this endpoint serves by name in its listing."""
        names = catalog.builtin_ids()
        return names + [n for n in self.faults if n not in names and catalog.temperament_of(n)]

    def faults_for(self, wire_model: str) -> FaultConfig | None:
        """The faults a model's endpoint injects (built-in ones merged with configured ones)."""
        temperament = catalog.temperament_of(wire_model)
        base = catalog.BUILTIN_FAULTS.get(temperament or "")
        configured = self.faults.get(wire_model)
        if base is None:
            return configured
        return base.merged(configured)

    def respond(self, method: str, path: str, headers: Mapping[str, str], body: bytes, *,
                parsed: dict | None = None) -> SimResponse:
        """Answer one HTTP request.

        Args:
            method: ``GET`` or ``POST``.
            path: the URL path (``/v1/chat/completions``; ``/api/v1`` and ``/v1`` prefixes are
                accepted).
            headers: request headers (only the retry and row-attempt counters are read: they
                pick the attempt's fault draw).
            body: the raw request body.
            parsed: what ``body`` decodes to, when the caller knows it exactly (the in-process
                transport, from the client's ``engine.wire.EncodedBody``); the reply is the
                one decoding ``body`` would give.

        Returns:
            The response.
        """
        path = path.split("?", 1)[0].rstrip("/")
        for prefix in ("/api/v1", "/v1"):
            if path.startswith(prefix):
                path = path[len(prefix):]
                break
        if method == "GET" and path == "/models":
            return _json(200, {"object": "list", "data": [self._model_card(n)
                                                          for n in self.model_names()]})
        if method == "GET" and path.startswith("/models/") and path.endswith("/endpoints"):
            return self._endpoints(path[len("/models/"):-len("/endpoints")])
        if path == "/chat/completions":
            if method != "POST":
                return error_response(405, "use POST for chat completions")
            lower = {k.lower(): v for k, v in headers.items()}
            return self._chat(body, lower, parsed)
        return error_response(404, f"no route for {method} {path}")

    # -- listings -----------------------------------------------------------------------

    def _model_card(self, name: str) -> dict:
        temperament = catalog.temperament_of(name) or ""
        return {"id": name, "object": "model", "created": 0, "owned_by": catalog.SIM_ENDPOINT_TAG,
                "name": f"Simulated {temperament}", "simulated": True,
                "description": catalog.TEMPERAMENTS.get(temperament, ""),
                "context_length": CONTEXT_LENGTH, "pricing": {"prompt": "0", "completion": "0"},
                "supported_parameters": self._supported(name)}

    def _supported(self, name: str) -> list[str]:
        faults = self.faults_for(name)
        if faults is not None and faults.refuse_reasoning_param:
            return [p for p in SUPPORTED_PARAMETERS if p not in ("reasoning", "include_reasoning")]
        return list(SUPPORTED_PARAMETERS)

    def _endpoints(self, name: str) -> SimResponse:
        if catalog.temperament_of(name) is None:
            return error_response(404, f"model '{name}' is not a simulated model")
        endpoint = {
            "name": f"{catalog.SIM_ENDPOINT_TAG} | {name}",
            "provider_name": catalog.SIM_ENDPOINT_TAG,
            "tag": catalog.SIM_ENDPOINT_TAG,
            "quantization": "bf16",
            "context_length": CONTEXT_LENGTH,
            "max_completion_tokens": 32768,
            "pricing": {"prompt": "0", "completion": "0"},
            "supported_parameters": self._supported(name),
            "status": 0,
        }
        return _json(200, {"data": {"id": name, "name": self._model_card(name)["name"],
                                    "endpoints": [endpoint]}})

    # -- chat ---------------------------------------------------------------------------

    def _chat(self, raw: bytes, headers: Mapping[str, str], parsed: dict | None = None
              ) -> SimResponse:
        # Bytes the client encoded from ``parsed`` are UTF-8 (so they hold no lone surrogate)
        # and decode to it: only the nesting check is left of decode_body.
        body = decode_body(raw) if parsed is None else decoded_as(parsed)
        if isinstance(body, BodyProblem):
            return error_response(400, body.message, param=body.param)
        problem = check_chat_body(body, surrogates=parsed is None and may_hold_surrogate(raw))
        if problem is not None:
            return error_response(400, problem.message, param=problem.param)
        model = body["model"]
        temperament = catalog.temperament_of(model)
        if temperament is None:
            return error_response(404, f"model '{model}' is not a simulated model")
        if body.get("stream"):
            return error_response(400, "streaming is not supported by the simulated endpoint")
        faults = self.faults_for(model)
        attempt = _int(headers.get(RETRY_COUNT_HEADER) or headers.get("x-stainless-retry-count"))
        # The body's digest (a sha256 of its ~100 kB canonical JSON) seeds the fault draw and
        # the reply's random choices; it is computed only for a request that needs one of them.
        draw = (draw_faults(faults, body_digest(body), attempt,
                            _int(headers.get(ROW_ATTEMPT_HEADER)))
                if faults is not None else FaultDraw())

        # Routing and parameter refusals come first, as a gateway decides them before any
        # provider sees the request.
        routing = body.get("provider")
        provider = routing if isinstance(routing, dict) else {}
        order = [str(p).casefold() for p in provider.get("order") or []]
        if order and provider.get("allow_fallbacks") is False and not any(
                p.split("/", 1)[0] == catalog.SIM_ENDPOINT_TAG for p in order):
            return error_response(404, NO_PROVIDER_MESSAGE)
        if faults is not None and faults.refuse_reasoning_param and carries_reasoning_param(body):
            return error_response(404, PARAMS_REJECTED_MESSAGE)
        if faults is not None and faults.reasoning_mandatory and suppresses_reasoning(body):
            return error_response(400, REASONING_MANDATORY_MESSAGE)

        if draw.infra == "timeout":
            return SimResponse(504, {}, b"", delay_s=draw.latency_s, stall=True,
                               stall_s=faults.timeout_stall_s if faults else 60.0)
        if draw.infra == "rate_limited":
            retry_after = faults.retry_after_s if faults else 1.0
            return error_response(429, "Rate limit exceeded (simulated)", delay_s=draw.latency_s,
                          headers={"retry-after": _num(retry_after)})
        if draw.infra == "server_error":
            return error_response(503, "Upstream provider unavailable (simulated)", delay_s=draw.latency_s)

        req = parse_request(body)
        rng = SeededOnUse(lambda: body_seed(body))
        content = temperaments.respond(catalog.behaviour_of(temperament), req, rng)
        finish = "stop"
        if draw.nonconforming and req.shape.kind == "json":
            content = _drop_required(content, req.shape.required)
        if draw.truncate and len(content) > 1:
            content, finish = content[: max(1, len(content) // 2)], "length"
        if len(content) > req.budget_chars:
            content, finish = content[: req.budget_chars], "length"
        prompt_tokens = req.prompt_tokens
        completion_tokens = USAGE.tokens(content)
        if finish == "length":
            # A simulated length stop is the model reaching the budget it was given (a real
            # server reports fewer tokens only when it cut the budget itself: a server cut).
            completion_tokens = max(completion_tokens, USAGE.of_chars(req.budget_chars))
        reply = {
            "id": reply_id(model, body, content),
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "provider": catalog.SIM_ENDPOINT_TAG,
            "system_fingerprint": SIM_FINGERPRINT,
            "choices": [{"index": 0, "logprobs": None, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            # No "cost": a simulated endpoint has no bill, so the client prices calls from the
            # model's configured prices, which is how budgets are exercised offline.
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        if draw.malformed is not None:
            return _malformed(draw.malformed, reply, draw.latency_s)
        return _json(200, reply, delay_s=draw.latency_s)


def body_seed(body: dict) -> int:
    """The seed of a request's random choices: the first 64 bits of the sha256 hex digest of
    the body's digest (``engine.wire.body_digest``)."""
    return int(hashlib.sha256(body_digest(body).encode()).hexdigest()[:16], 16)


class SeededOnUse(random.Random):
    """A ``random.Random`` seeded with ``seed()`` when it is first drawn from: the same draws
    as ``random.Random(seed())``, and no seed computed for a reply that draws nothing (a
    faithful fold). Every draw of ``random.Random`` goes through ``random`` or
    ``getrandbits``, the two methods that seed it first here."""

    def __init__(self, seed: Callable[[], int]) -> None:
        self._seed_source: Callable[[], int] | None = seed
        super().__init__(0)

    def _seeded(self) -> None:
        source = self._seed_source
        if source is not None:
            self._seed_source = None
            self.seed(source())
            # Seeded: later draws go straight to the C methods (as on a plain Random).
            self.random = super().random  # type: ignore[method-assign]
            self.getrandbits = super().getrandbits  # type: ignore[method-assign]

    def random(self) -> float:
        """As ``random.Random.random``, seeded first."""
        self._seeded()
        return super().random()

    def getrandbits(self, k: int, /) -> int:
        """As ``random.Random.getrandbits``, seeded first."""
        self._seeded()
        return super().getrandbits(k)


def reply_id(model: str, body: dict, content: str) -> str:
    """A reply's id (``chatcmpl-sim-`` and 24 hex digits): a label for logs, a function of the
    request's model, seed and size and of the reply, so a sim's replies are the same bytes on
    every run without hashing the whole request."""
    size = [len(m.get("content") or "") if isinstance(m, dict) and isinstance(
        m.get("content"), str) else -1 for m in body.get("messages") or []]
    key = json.dumps([model, body.get("seed"), body.get("max_tokens"), size, content],
                     ensure_ascii=False, default=str)
    return "chatcmpl-sim-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def _malformed(kind: str, reply: dict, delay_s: float) -> SimResponse:
    """A 200 that is not a chat completion (``faults.MALFORMED_KINDS``)."""
    if kind == "empty_choices":
        return _json(200, {**reply, "choices": []}, delay_s=delay_s)
    if kind == "no_message":
        choice = {k: v for k, v in reply["choices"][0].items() if k != "message"}
        return _json(200, {**reply, "choices": [choice]}, delay_s=delay_s)
    whole = _json(200, reply, delay_s=delay_s)
    if kind == "truncated_json":  # the connection dropped mid-body
        return SimResponse(200, whole.headers, whole.body[: len(whole.body) // 2], delay_s)
    return SimResponse(200, whole.headers, b"{'choices': [" + whole.body[:40] + b"}", delay_s)


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _drop_required(content: str, required: list[str]) -> str:
    # The reply keeps its text but under a name the schema does not declare, so a required
    # property is missing — what a model that ignores strict mode tends to do.
    try:
        obj = loads_json(content)
    except ValueError:
        return content
    if not isinstance(obj, dict) or not required:
        return content
    name = required[0]
    if name in obj:
        obj = {(f"{k}_text" if k == name else k): v for k, v in obj.items()}
    return json.dumps(obj, ensure_ascii=False)
