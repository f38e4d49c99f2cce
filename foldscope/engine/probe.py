"""Capability probe: does this model × endpoint × request accept a strict-schema call, and how?

A probe sends the sweep's own largest schemas (the schema arm with the most fields and the one
with the largest declared ceiling; all schema arms when no sweep is given), reasoning suppressed
per the model's ``reasoning_param``, the pin applied, in each schema dialect of the provider's
ladder (``core/data/dialects.toml``) until one is accepted and answered in shape. A refusal of a
rung names its parameter (``response_format.type``) as the culprit and the next rung is tried. A
gateway's refusal of the harness's own parameters (no endpoint for them, reasoning mandatory) is
searched the older way: each optional parameter relaxed in turn, the first that passes named.
The verdict says which dialect a sweep will use; a sweep records it with the pin. A verdict is
about the model *on that endpoint with that request*, never about the model alone.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from foldscope.core.arms import ARMS, Arm
from foldscope.core.carrier import close_json
from foldscope.core.dialects import shipped as shipped_dialects
from foldscope.core.errors import ModelError
from foldscope.core.nesting import loads_json
from foldscope.engine.client.chat import ChatRequest
from foldscope.engine.client.errors import (
    ClientError,
    InfraError,
    ParameterRejected,
    ReasoningNotDisableable,
    RequestRejected,
)
from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.connect import make_client
from foldscope.engine.models import ModelConfig

OK = "ok"
REJECTED_PARAMETERS = "probe_rejected_no_endpoint_for_parameters"
REJECTED_REASONING = "probe_rejected_reasoning_not_disableable"
NONCONFORMING = "schema_advertised_reply_nonconforming"
TRANSPORT_ERROR = "transport_error"
REJECTED_DIALECTS = "probe_rejected_every_schema_dialect"
VERDICTS = (OK, REJECTED_PARAMETERS, REJECTED_REASONING, NONCONFORMING, TRANSPORT_ERROR,
            REJECTED_DIALECTS)

PROBE_PROPERTY = "status"
PROBE_SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "probe",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {PROBE_PROPERTY: {"type": "string", "maxLength": 16}},
            "required": [PROBE_PROPERTY],
            "additionalProperties": False,
        },
    },
}
PROBE_MESSAGES: list[dict] = [
    {"role": "system", "content": "You are a capability probe. Reply with JSON only."},
    {"role": "user", "content": 'Reply with the JSON object {"status": "ok"}.'},
]
PROBE_MAX_TOKENS = 32

ARM_PROBE_MESSAGES: list[dict] = [
    {"role": "system", "content": "You are a capability probe. Reply with JSON only."},
    {"role": "user", "content": "Reply with one JSON object that matches the response schema, "
                                "with the word ok as the value of every field."},
]
ARM_PROBE_TOKENS_PER_FIELD = 48
"""Output budget per schema field of an arm probe (short values, room for the JSON around)."""


def probe_arms(arm_ids: Sequence[str] | None = None) -> list[Arm]:
    """The schema arms whose schemas a probe sends: of ``arm_ids`` (all arms when None), the one
    with the most fields and the one with the largest single declared ceiling (one arm when
    both are the same); none when no schema arm is among them."""
    arms = [ARMS[a] for a in (arm_ids if arm_ids is not None else ARMS)
            if a in ARMS and ARMS[a].representation == "schema"]
    if not arms:
        return []
    most = max(arms, key=lambda a: (len(a.fields), a.declared_ceiling or 0))
    widest = max(arms, key=lambda a: (max((f.max_length or 0 for f in a.fields), default=0),
                                      len(a.fields)))
    return [most] if most is widest else [most, widest]


@dataclass(frozen=True)
class Relaxation:
    """One optional parameter a re-probe can relax: its name, when it applies, how to relax."""

    name: str
    applies: Callable[[dict], bool]
    relax: Callable[[dict], None]


def _drop(key: str) -> Callable[[dict], None]:
    return lambda body: body.pop(key, None)


def _set_provider(key: str, value: Any) -> Callable[[dict], None]:
    def relax(body: dict) -> None:
        if value is None:
            body["provider"].pop(key, None)
        else:
            body["provider"][key] = value
    return relax


def _provider_has(key: str, truthy: bool = True) -> Callable[[dict], bool]:
    return lambda body: isinstance(body.get("provider"), dict) and (
        bool(body["provider"].get(key)) if truthy else key in body["provider"])


def _strict(body: dict) -> bool:
    rf = body.get("response_format")
    return isinstance(rf, dict) and bool((rf.get("json_schema") or {}).get("strict"))


def _unstrict(body: dict) -> None:
    body["response_format"]["json_schema"]["strict"] = False


RELAXATIONS: tuple[Relaxation, ...] = (
    # Order matters: the first relaxation that passes is named, so the cheapest-to-drop and most
    # often guilty parameters come first and un-pinning comes last.
    Relaxation("reasoning", lambda b: "reasoning" in b, _drop("reasoning")),
    Relaxation("chat_template_kwargs", lambda b: "chat_template_kwargs" in b,
               _drop("chat_template_kwargs")),
    Relaxation("response_format.strict", _strict, _unstrict),
    Relaxation("seed", lambda b: "seed" in b, _drop("seed")),
    Relaxation("temperature", lambda b: "temperature" in b, _drop("temperature")),
    Relaxation("provider.require_parameters", _provider_has("require_parameters"),
               _set_provider("require_parameters", False)),
    Relaxation("provider.quantizations", _provider_has("quantizations"),
               _set_provider("quantizations", None)),
    Relaxation("response_format", lambda b: "response_format" in b, _drop("response_format")),
    Relaxation("provider.order", _provider_has("order"), _drop("provider")),
)


@dataclass(frozen=True)
class ProbeResult:
    """The verdict for one model × endpoint × request."""

    model: str
    verdict: str
    culprit: str | None
    pin: str | None
    endpoint: dict | None
    """The pinned endpoint as the gateway lists it (None when it has no listing)."""
    request: list[str]
    """Parameter names sent in the first probe request."""
    detail: str
    simulated: bool = False
    tried: list[dict] = field(default_factory=list)
    """Each re-probe: ``{"relaxed": name, "passed": bool}``."""
    dialect: str | None = None
    """The schema dialect a sweep will use on this endpoint (None: no schema was probed)."""
    ladder: list[dict] = field(default_factory=list)
    """Each rung tried: ``{"dialect", "arm", "outcome" (accepted, nonconforming, rejected,
    transport_error), "parameter", "detail"}``."""
    arms: list[str] = field(default_factory=list)
    """The arms whose schemas were sent."""

    def to_json(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the ``--json`` output object)."""
        return {"model": self.model, "verdict": self.verdict, "culprit": self.culprit,
                "pin": self.pin, "endpoint": self.endpoint, "request": self.request,
                "detail": self.detail, "simulated": self.simulated, "tried": self.tried,
                "dialect": self.dialect, "ladder": self.ladder, "arms": self.arms}


def parameter_names(body: dict) -> list[str]:
    """Name the parameters of a body: top-level keys, with ``provider`` and ``response_format``
    expanded one level (``provider.require_parameters``, ``response_format.strict``)."""
    names: list[str] = []
    for key, value in body.items():
        if key == "provider" and isinstance(value, dict):
            names += [f"provider.{k}" for k in value]
        elif key == "response_format" and isinstance(value, dict):
            names.append(key)
            if _strict(body):
                names.append("response_format.strict")
        else:
            names.append(key)
    return names


def conformance_problem(content: str, response_format: dict) -> str | None:
    """Check a reply against a flat JSON schema (the probe's, or an arm's).

    Args:
        content: the reply text.
        response_format: the ``response_format`` that was sent.

    Returns:
        None if the reply conforms, else a one-line reason.
    """
    schema = (response_format.get("json_schema") or {}).get("schema") or {}
    try:
        # Bounded: a reply nested 200k deep is just not JSON here. A raw newline inside a string
        # says nothing of the shape (the carrier parser reads past it too).
        obj = loads_json(content, strict=False)
    except ValueError:
        return "reply is not JSON"
    if not isinstance(obj, dict):
        return "reply is not a JSON object"
    props = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if name not in obj:
            return f"reply lacks required property '{name}'"
    for name, prop in props.items():
        if name in obj and prop.get("type") == "string" and not isinstance(obj[name], str):
            return f"property '{name}' is not a string"
        if name in obj and prop.get("type") == "array" and not isinstance(obj[name], list):
            return f"property '{name}' is not an array"
    if schema.get("additionalProperties") is False:
        extra = sorted(set(obj) - set(props))
        if extra:
            return f"reply has undeclared property '{extra[0]}'"
    return None


def _safe(text: str, limit: int = 200) -> str:
    # Model and gateway text is data: escape control characters so a terminal shows them literally.
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out[:limit]


async def _endpoint_record(client: ModelClient) -> dict | None:
    cfg = client.cfg
    if cfg.provider not in ("openrouter", "sim"):
        return None
    try:
        endpoints = await client.list_endpoints()
    except (ClientError, ModelError):
        return None
    if cfg.pin:
        endpoints = [e for e in endpoints if e.matches_pin(cfg.pin)]
    return endpoints[0].as_dict() if len(endpoints) == 1 or (endpoints and cfg.pin) else None


async def probe_model(cfg: ModelConfig, *, transport: httpx.AsyncBaseTransport | None = None,
                      client: ModelClient | None = None,
                      arm_ids: Sequence[str] | None = None) -> ProbeResult:
    """Probe one model.

    Args:
        cfg: the model config.
        transport: transport override (tests); ignored when ``client`` is given.
        client: an existing client to use (not closed here; its ``dialect`` is left at the
            rung the probe chose).
        arm_ids: the sweep's arms, whose largest schemas are sent (None: every arm's).

    Returns:
        The probe result.
    """
    own = client is None
    client = client or make_client(cfg, transport=transport)
    try:
        return await _probe(client, probe_arms(arm_ids))
    finally:
        if own:
            await client.aclose()


def _ladder(cfg: ModelConfig) -> list[str]:
    if cfg.schema_dialect:
        return [cfg.schema_dialect]
    return list(cfg.dialect_entry.ladder)


def _arm_request(arm: Arm) -> ChatRequest:
    return ChatRequest(ARM_PROBE_MESSAGES, ARM_PROBE_TOKENS_PER_FIELD * max(1, len(arm.fields)) + 16,
                       arm.response_format())


async def _probe(client: ModelClient, arms: Sequence[Arm] = ()) -> ProbeResult:
    cfg = client.cfg
    ladder = _ladder(cfg)
    client.dialect = ladder[0]
    first = (_arm_request(arms[0]) if arms
             else ChatRequest(PROBE_MESSAGES, PROBE_MAX_TOKENS, PROBE_SCHEMA))
    body = client.build_body(first)
    sent = parameter_names(body)
    endpoint = await _endpoint_record(client)
    rungs: list[dict] = []
    arm_names = [a.id for a in arms]

    def result(verdict: str, detail: str, culprit: str | None = None,
               tried: list[dict] | None = None, simulated: bool = cfg.is_simulated,
               dialect: str | None = None) -> ProbeResult:
        return ProbeResult(cfg.id, verdict, culprit, cfg.pin, endpoint, sent, _safe(detail),
                           simulated, tried or [], dialect, rungs, arm_names)

    culprit: str | None = None
    fallback: tuple[str, str, bool] | None = None  # the first rung accepted but not in shape
    for dialect in ladder:
        client.dialect = dialect
        outcome = "accepted"
        simulated = cfg.is_simulated
        problem_detail = ""
        candidates: list[Arm | None] = list(arms) or [None]
        requests = [_arm_request(arm) if arm is not None else first for arm in candidates]
        # A rung's requests go out at once (each is one call's latency: one after the other, a
        # 10 s endpoint took 20 s a rung before the sweep could start); their outcomes are
        # judged in order, as if sent in turn (a later one's is unused after an earlier stop).
        answers = await asyncio.gather(*(client.send(client.build_body(r)) for r in requests),
                                       return_exceptions=True)
        for arm, request, answer in zip(candidates, requests, answers, strict=True):
            rf = request.response_format or PROBE_SCHEMA
            rung: dict[str, Any] = {"dialect": dialect, "arm": arm.id if arm else None}
            try:
                if isinstance(answer, BaseException):
                    raise answer
                reply = answer
            except (ParameterRejected, ReasoningNotDisableable) as exc:
                if dialect != ladder[0]:
                    rungs.append({**rung, "outcome": "rejected", "parameter": None,
                                  "detail": _safe(str(exc))})
                    outcome = "rejected"
                    break
                verdict = (REJECTED_PARAMETERS if isinstance(exc, ParameterRejected)
                           else REJECTED_REASONING)
                found, tried = await _find_culprit(client, client.build_body(request))
                detail = str(exc) + (f"; passes without {found}" if found
                                     else "; no single relaxed parameter makes it pass")
                rungs.append({**rung, "outcome": "rejected", "parameter": found,
                              "detail": _safe(str(exc))})
                return result(verdict, detail, found, tried, dialect=dialect)
            except RequestRejected as exc:
                parameter = exc.parameter or shipped_dialects().dialect(dialect).parameter
                rungs.append({**rung, "outcome": "rejected", "parameter": parameter,
                              "detail": _safe(str(exc))})
                culprit = culprit or parameter
                outcome = "rejected"
                break
            except (InfraError, ClientError, ModelError) as exc:
                rungs.append({**rung, "outcome": "transport_error", "parameter": None,
                              "detail": _safe(str(exc))})
                return result(TRANSPORT_ERROR, str(exc), culprit, dialect=None)
            simulated = reply.simulated
            problem = conformance_problem(reply.content, rf)
            if problem is not None and _in_shape_so_far(reply.content, reply.finish_reason, rf):
                # Cut at the probe's small budget (a small model runs on inside a string): as
                # far as it went the reply is in shape, so the endpoint took the schema.
                rungs.append({**rung, "outcome": "accepted", "parameter": None,
                              "detail": f"in shape as far as it went (cut at "
                                        f"{request.max_tokens} tokens)"})
                continue
            if problem is not None:
                problem_detail = f"{problem} (finish_reason {reply.finish_reason})"
                rungs.append({**rung, "outcome": "nonconforming", "parameter": None,
                              "detail": _safe(problem_detail)})
                outcome = "nonconforming"
                break
            rungs.append({**rung, "outcome": "accepted", "parameter": None,
                          "detail": f"in shape in {reply.attempts} attempt(s)"})
        if outcome == "accepted":
            why = f"; refused before it: {culprit}" if culprit else ""
            return result(OK, f"schema dialect {dialect}: strict schema honoured{why}", culprit,
                          simulated=simulated, dialect=dialect)
        if outcome == "nonconforming" and fallback is None:
            fallback = (dialect, problem_detail, simulated)
    if fallback is not None:
        dialect, problem_detail, simulated = fallback
        client.dialect = dialect
        return result(NONCONFORMING, f"schema dialect {dialect}: {problem_detail}", culprit,
                      simulated=simulated, dialect=dialect)
    client.dialect = ladder[0]
    return result(REJECTED_DIALECTS, "every schema dialect of the provider's ladder was "
                  f"refused ({', '.join(ladder)})", culprit)


def _in_shape_so_far(content: str, finish: str, response_format: dict) -> bool:
    """True for a reply cut on length whose JSON, closed where it stopped, has only declared
    properties of the declared types (the properties after the cut are simply missing)."""
    if finish != "length" or not content.lstrip().startswith("{"):
        return False
    schema = (response_format.get("json_schema") or {}).get("schema") or {}
    present = {**schema, "required": []}  # what was cut off is missing, not wrong
    cut = {"json_schema": {"schema": present}}
    return conformance_problem(close_json(content.strip()), cut) is None


async def _find_culprit(client: ModelClient, body: dict) -> tuple[str | None, list[dict]]:
    tried: list[dict] = []
    for relaxation in RELAXATIONS:
        if not relaxation.applies(body):
            continue
        relaxed = copy.deepcopy(body)
        relaxation.relax(relaxed)
        try:
            await client.send(relaxed)
        except (ClientError, ModelError):
            tried.append({"relaxed": relaxation.name, "passed": False})
            continue
        tried.append({"relaxed": relaxation.name, "passed": True})
        return relaxation.name, tried
    return None, tried


async def probe_models(cfgs: Sequence[ModelConfig], *,
                       transport: httpx.AsyncBaseTransport | None = None,
                       arm_ids: Sequence[str] | None = None) -> list[ProbeResult]:
    """Probe several models concurrently; results keep the input order."""
    return list(await asyncio.gather(*(probe_model(c, transport=transport, arm_ids=arm_ids)
                                       for c in cfgs)))


def format_line(result: ProbeResult) -> str:
    """One human-readable line for a result."""
    culprit = f" culprit={result.culprit}" if result.culprit else ""
    dialect = f" dialect={result.dialect}" if result.dialect else ""
    culprit = dialect + culprit
    pin = f" pin={result.pin}" if result.pin else ""
    sim = " [simulated]" if result.simulated else ""
    return f"{result.model}: {result.verdict}{culprit}{pin}{sim} — {result.detail}"
