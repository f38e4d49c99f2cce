"""Model configuration: the ``ModelConfig`` schema, the TOML model file and the id registry."""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from foldscope.core.dialects import ProviderDialect, Timeouts
from foldscope.core.dialects import shipped as shipped_dialects
from foldscope.core.errors import ConfigError, ModelError
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.text import ID_MAX_CHARS, VALUE_MAX_CHARS, check_field, skeleton
from foldscope.engine.keys import env_name_problem
from foldscope.engine.sim import catalog
from foldscope.engine.sim.faults import FaultConfig

Provider = Literal["sim", "openrouter", "openai", "vllm", "ollama", "llamacpp"]
ReasoningParam = Literal["openrouter", "vllm", "ollama", "none"]

SIM_BASE_URL = "http://sim.foldscope.invalid/v1"
"""Base URL of the in-process simulated endpoint (``.invalid`` never resolves, so nothing leaks
onto the network if a sim config is ever sent through a real transport)."""

DEFAULT_BASE_URLS: dict[str, str] = {
    "sim": SIM_BASE_URL,
    "openrouter": "https://openrouter.ai/api/v1",
    "openai": "https://api.openai.com/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "ollama": "http://127.0.0.1:11434/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
}

DEFAULT_REASONING_PARAM: dict[str, str] = {
    # From the dialect data (sims speak the gateway dialect so that probe culprits are testable
    # offline).
    name: entry.reasoning for name, entry in shipped_dialects().providers.items()
}

DEFAULT_API_KEY_ENV: dict[str, str] = {
    "openrouter": "OPENROUTER_API_KEY",
    "openai": "OPENAI_API_KEY",
}

ROUTING_GATEWAYS = frozenset({"openrouter", "sim"})
"""Providers that route one model to many endpoints (sims imitate one, with a single endpoint)."""

MAX_REPLY_BYTES = 100_000_000
"""The largest ``max_reply_bytes`` a config may set: the body a call reads is bounded by it
(``client.reply_check.body_limit``), so a sweep file cannot lift the memory bound."""

_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ModelConfig(BaseModel):
    """How to call one model. Holds the *name* of the API-key variable, never the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    """The id sweeps and the UI use (``sim/faithful``, ``qwen3-235b@deepinfra``)."""
    provider: Provider
    model: str | None = None
    """Model name sent on the wire; defaults to ``id``."""
    base_url: str = ""
    """Chat Completions base URL (``…/v1``); defaults per provider."""
    api_key_env: str | None = None
    """Name of the environment variable holding the API key, read at request time."""
    pin: str | None = None
    """The one provider endpoint a routing gateway is held to (fallbacks off)."""
    quantizations: list[str] | None = None
    reasoning_param: ReasoningParam = "none"
    """How reasoning is suppressed: ``openrouter`` (``reasoning.enabled=false``), ``vllm``
    (``chat_template_kwargs.enable_thinking=false``), ``ollama`` (``reasoning_effort="none"``)
    or ``none`` (send nothing); the default is the provider's (``core/data/dialects.toml``)."""
    schema_dialect: str | None = None
    """How a schema arm's strict schema is sent (a dialect of ``core/data/dialects.toml``:
    ``json_schema``, ``json_object_schema``, ``guided_json``, ``grammar``, ``json_object``,
    ``prompt``). None: the sweep probes the provider's ladder and records the rung it uses."""
    concurrency: int | None = Field(None, ge=1, le=1024)
    """Calls in flight on this model's endpoint. None: what the server advertises, else the
    provider's default (1 for local servers), never above the sweep's ``concurrency``."""
    temperature: float = 0.0
    seed: int | None = None
    timeout_s: float = Field(120.0, gt=0, allow_inf_nan=False)
    """The floor of one attempt's total deadline, connect to the last byte of the reply (a
    reply dripped slowly is cut off too, not only a silent one). The deadline grows with the
    request: plus ``timeout_per_prompt_token_s`` per estimated prompt token and
    ``timeout_per_output_token_s`` per output token asked for (provider defaults in
    ``core/data/dialects.toml``)."""
    timeout_per_prompt_token_s: float | None = Field(None, ge=0, allow_inf_nan=False)
    timeout_per_output_token_s: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_retries: int = Field(4, ge=0, le=20)
    """Retries of one call after a 5xx, timeout, connect error or malformed reply (a 429 is
    back-pressure and waits under ``rate_limit_wait_s`` instead)."""
    rate_limit_wait_s: float = Field(600.0, ge=0, allow_inf_nan=False)
    """Longest one call waits out 429s in total (Retry-After, else back-off) before it fails."""
    max_reply_bytes: int = Field(1_000_000, ge=1, le=MAX_REPLY_BYTES)
    """Reply text kept per call (UTF-8 bytes); a longer reply is cut here and recorded as cut."""
    backoff_base_s: float = Field(1.0, ge=0, allow_inf_nan=False)
    backoff_cap_s: float = Field(30.0, ge=0, allow_inf_nan=False)
    context_tokens: int | None = Field(None, gt=0)
    price_prompt_per_mtok: float | None = Field(None, ge=0, allow_inf_nan=False)
    price_completion_per_mtok: float | None = Field(None, ge=0, allow_inf_nan=False)
    faults: FaultConfig | None = None
    """Injected faults (provider ``sim`` only)."""
    latency_scale: float = Field(1.0, ge=0, allow_inf_nan=False)
    """Multiplier on simulated latency; tests and benchmarks use 0 to run at full speed."""

    @model_validator(mode="before")
    @classmethod
    def _fill_provider_defaults(cls, data: Any) -> Any:
        # Defaults that depend on the provider are filled before validation so the frozen model
        # never carries placeholder values.
        if not isinstance(data, dict):
            return data
        data = dict(data)
        provider = data.get("provider")
        if isinstance(provider, str):
            if not data.get("base_url"):
                data["base_url"] = DEFAULT_BASE_URLS.get(provider, "")
            if data.get("reasoning_param") is None:
                data["reasoning_param"] = DEFAULT_REASONING_PARAM.get(provider, "none")
            if "api_key_env" not in data:
                data["api_key_env"] = DEFAULT_API_KEY_ENV.get(provider)
        return data

    @field_validator("id", "model", "pin")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        # Ids reach request bodies, HTTP headers, the database and every terminal.
        return value if value is None else check_field(value, limit=ID_MAX_CHARS)

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        # A value that is not a variable name is most likely a pasted key: refuse it without
        # echoing it (the message below never includes the value).
        if value is not None and not _ENV_NAME_RE.match(value):
            raise ValueError("must name an environment variable (the key itself is never stored)")
        # The variable's value is sent as a Bearer token to base_url, which the same (possibly
        # untrusted) file names: only key-like names, or those the person allows.
        problem = None if value is None else env_name_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        check_field(value, limit=VALUE_MAX_CHARS)
        # httpx would send user:pass@ as Basic auth instead of the API key, and the URL is
        # stored with the sweep: refuse it (without echoing it) and name the fix.
        try:
            parts = urlsplit(value)
            has_credentials = parts.username is not None or parts.password is not None
        except ValueError:
            raise ValueError("must be a well-formed http(s) URL") from None
        if has_credentials or "@" in parts.netloc:
            raise ValueError("must not contain credentials (user:pass@); put the key in an "
                             "environment variable and name it with api_key_env")
        if any(c.isspace() for c in value):
            raise ValueError("must not contain spaces (percent-encode them, or remove them)")
        if "?" in value or "#" in value:
            raise ValueError("must not have a query or fragment (?… or #…): request paths are "
                             "appended to it")
        if not parts.hostname:
            raise ValueError("must name a host (http://HOST[:PORT]/…)")
        return value.rstrip("/")

    @model_validator(mode="after")
    def _sim_only_faults(self) -> ModelConfig:
        if self.faults is not None and self.provider != "sim":
            raise ValueError("faults are only for provider 'sim'")
        return self

    @model_validator(mode="after")
    def _known_dialect(self) -> ModelConfig:
        if self.schema_dialect is not None and self.schema_dialect not in shipped_dialects().dialects:
            raise ValueError(f"schema_dialect '{self.schema_dialect}' is not one of "
                             f"{', '.join(shipped_dialects().dialects)}")
        return self

    @property
    def dialect_entry(self) -> ProviderDialect:
        """The provider's entry in the dialect data."""
        return shipped_dialects().provider(self.provider)

    @property
    def timeouts(self) -> Timeouts:
        """The deadline rule of one attempt: this config's floor and allowances, else the
        provider's."""
        base = self.dialect_entry.timeouts
        return Timeouts(self.timeout_s,
                        base.per_prompt_token_s if self.timeout_per_prompt_token_s is None
                        else self.timeout_per_prompt_token_s,
                        base.per_output_token_s if self.timeout_per_output_token_s is None
                        else self.timeout_per_output_token_s)

    @property
    def is_local(self) -> bool:
        """True for a provider that is a server of one's own (one call at a time by default)."""
        return self.dialect_entry.local

    @property
    def wire_model(self) -> str:
        """The model name sent in request bodies."""
        return self.model or self.id

    @property
    def is_simulated(self) -> bool:
        """True for simulated models."""
        return self.provider == "sim"

    @property
    def is_routing_gateway(self) -> bool:
        """True when the provider routes one model to many endpoints (so a pin matters)."""
        return self.provider in ROUTING_GATEWAYS


def _builtin_fields(model_id: str) -> dict[str, Any]:
    return {"id": model_id, "provider": "sim", "pin": catalog.SIM_ENDPOINT_TAG,
            "price_prompt_per_mtok": 0.0, "price_completion_per_mtok": 0.0,
            "context_tokens": 131072}


def resolve_model(model_id: str, overrides: Mapping[str, Any] | None = None) -> ModelConfig:
    """Resolve a model id to its configuration.

    Args:
        model_id: the id to resolve.
        overrides: config fields for this model (a sweep's or model file's entry, minus ``id``).
            For a built-in sim they are laid over its defaults (``faults``, ``latency_scale``…);
            any other id needs them, with at least ``provider``.

    Returns:
        The configuration.

    Raises:
        ModelError: the id is neither built in nor configured, or its fields are invalid.
    """
    try:
        check_field(model_id, limit=ID_MAX_CHARS)  # before any message quotes it
    except ValueError as exc:
        raise ModelError(f"model id: {exc}") from None
    overrides = {k: v for k, v in (overrides or {}).items() if k != "id"}
    lookalike = _sim_lookalike(model_id)
    if lookalike is not None:
        raise ModelError(f"model id '{model_id}' looks like the built-in '{lookalike}' but is "
                         f"not it; did you mean '{lookalike}'?")
    base = _builtin_fields(model_id) if catalog.temperament_of(model_id) else None
    if base is None and "provider" not in overrides:
        names = ", ".join(catalog.builtin_ids())
        raise ModelError(f"unknown model '{model_id}' (built-in: {names}; "
                         "others need an entry in the config file)")
    data = {**(base or {}), **overrides, "id": model_id}
    if base is not None and overrides.get("provider", "sim") != "sim":
        # A configured entry that reuses a sim id for a real provider starts from scratch.
        data = {**overrides, "id": model_id}
    try:
        return ModelConfig(**data)
    except ValidationError as exc:
        raise ModelError(f"model '{model_id}': {_first_error(exc)}") from None


def _sim_lookalike(model_id: str) -> str | None:
    """The built-in sim id ``model_id`` imitates without being it (``sim/faithfuł``,
    ``sim/fаithful`` with a Cyrillic а, ``SIM/Faithful``), or None. A row of such a model would
    read as simulated (or as another model) everywhere it is shown."""
    if catalog.temperament_of(model_id) is not None:
        return None
    base = model_id.split(":", 1)[0]
    shape = skeleton(base)
    for builtin in catalog.builtin_ids():
        if shape == skeleton(builtin):
            return builtin
    if shape.startswith(catalog.SIM_PREFIX):  # sim/… that is no built-in: suggest the nearest
        near = difflib.get_close_matches(shape, catalog.builtin_ids(), n=1, cutoff=0.75)
        return near[0] if near else None
    return None


def lookup_model(model_id: str, registry: Mapping[str, ModelConfig] | None = None) -> ModelConfig:
    """Return ``registry[model_id]`` (as from :func:`load_models_toml`) or the built-in config.

    Raises:
        ModelError: the id is neither in the registry nor built in.
    """
    if registry and model_id in registry:
        return registry[model_id]
    return resolve_model(model_id)


def load_models_toml(path: str | Path) -> dict[str, ModelConfig]:
    """Load a model file: ``[[models]]`` tables, each one ``ModelConfig`` (faults under
    ``[models.faults]``). A sweep file works too; its ``[sweep]`` table is ignored here.

    Args:
        path: the TOML file.

    Returns:
        Configs by id, in file order.

    Raises:
        ConfigError: one line naming the file and the offending entry and field.
    """
    path = Path(path)
    try:
        raw = loads_toml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read model file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, NestingError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {_one_line(str(exc))}") from None
    # A sweep file is also a model file: its [sweep] table is for `foldscope run`.
    extra = sorted(set(raw) - {"models", "sweep"})
    if extra:
        raise ConfigError(f"{path}: unknown top-level key '{extra[0]}' (expected [[models]] tables)")
    entries = raw.get("models", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"{path}: field 'models' must be an array of tables ([[models]])")
    out: dict[str, ModelConfig] = {}
    for i, entry in enumerate(entries):
        where = f"models[{i}]" + (f" ('{entry['id']}')" if isinstance(entry.get("id"), str) else "")
        if not isinstance(entry.get("id"), str):
            raise ConfigError(f"{path}: {where}: field 'id': required")
        try:
            # Same resolution as a sweep's entries: a built-in sim id needs no provider.
            cfg = resolve_model(entry["id"], entry)
        except ModelError as exc:
            detail = str(exc).removeprefix(f"model '{entry['id']}': ")
            raise ConfigError(f"{path}: {where}: {detail}") from None
        if cfg.id in out:
            raise ConfigError(f"{path}: {where}: field 'id': duplicate model id '{cfg.id}'")
        out[cfg.id] = cfg
    return out


def sweep_arm_ids(path: str | Path) -> list[str] | None:
    """The arms a sweep file's ``[sweep]`` table names (None: a plain model file, or no list).

    The file has been read by :func:`load_models_toml` already, so it parses.
    """
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    arms = (raw.get("sweep") or {}).get("arms") if isinstance(raw.get("sweep"), dict) else None
    if isinstance(arms, list) and all(isinstance(a, str) for a in arms):
        return arms
    return None


def warnings(cfg: ModelConfig) -> list[str]:
    """Return human-readable warnings about a config that would weaken a sweep's validity."""
    out: list[str] = []
    if cfg.is_routing_gateway and not cfg.pin:
        out.append("no pin on a routing gateway")
    elif not cfg.pin:
        out.append("unpinned: no endpoint named, so nothing fixes which weights serve it (the "
                   "server's fingerprint recorded with the pin is what identifies them)")
    if cfg.quantizations and not cfg.pin:
        out.append("quantizations given without a pin")
    if cfg.provider in DEFAULT_API_KEY_ENV and not cfg.api_key_env:
        out.append("no api_key_env for a hosted provider")
    if cfg.temperature != 0.0:
        out.append(f"temperature {cfg.temperature} (sweeps usually run at 0)")
    return out


def _first_error(exc: ValidationError) -> str:
    # Only the location and pydantic's message: never ``input_value``, which could be a secret.
    err = exc.errors(include_url=False, include_input=False)[0]
    loc = ".".join(str(p) for p in err.get("loc", ())) or "(entry)"
    msg = err.get("msg", "invalid").removeprefix("Value error, ")
    return f"field '{loc}': {_one_line(msg)}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
