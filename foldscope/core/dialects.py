"""Provider dialects as data: how a strict schema is sent, reasoning turned off, calls timed.

The facts live in ``foldscope/core/data/dialects.toml``; this module reads them and turns an arm's
strict ``json_schema`` response_format into the request parameters of one dialect. Pure: no I/O
beyond reading the shipped file.
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from foldscope.core.errors import ConfigError

SHAPES = ("json_schema", "json_object_schema", "guided_json", "grammar", "json_object", "prompt")
"""How a dialect carries the schema (see the data file's header)."""

MAX_LENGTH_MODES = ("keep", "describe")


@dataclass(frozen=True)
class Dialect:
    """One way of asking for a schema."""

    name: str
    shape: str
    parameter: str
    """The request parameter the dialect stands or falls by (the culprit when it is refused)."""
    strict: bool
    """True when the endpoint itself enforces the schema (not only the prompt)."""
    description: str


@dataclass(frozen=True)
class Timeouts:
    """A per-attempt deadline: a floor plus allowances per prompt token and per output token."""

    floor_s: float
    per_prompt_token_s: float
    per_output_token_s: float

    def deadline(self, prompt_tokens: int, max_tokens: int) -> float:
        """Seconds one attempt may take for a request of this size."""
        return (self.floor_s + self.per_prompt_token_s * max(0, prompt_tokens)
                + self.per_output_token_s * max(0, max_tokens))


@dataclass(frozen=True)
class ProviderDialect:
    """What one provider honours and how it is spoken to."""

    provider: str
    ladder: tuple[str, ...]
    max_length: str
    honoured: tuple[str, ...]
    reasoning: str
    local: bool
    concurrency: int
    """Calls in flight per endpoint when the sweep does not say (0: the sweep's concurrency)."""
    tokenizer: str
    timeouts: Timeouts


@dataclass(frozen=True)
class Dialects:
    """The whole data file, checked."""

    dialects: dict[str, Dialect]
    reasoning: dict[str, dict[str, Any]]
    providers: dict[str, ProviderDialect]

    def dialect(self, name: str) -> Dialect:
        """The dialect called ``name``.

        Raises:
            ConfigError: no such dialect.
        """
        try:
            return self.dialects[name]
        except KeyError:
            raise ConfigError(f"unknown schema dialect '{name}' (known: "
                              f"{', '.join(self.dialects)})") from None

    def provider(self, name: str) -> ProviderDialect:
        """The provider entry (an unknown provider speaks OpenAI's dialect)."""
        return self.providers.get(name) or self.providers["openai"]

    def reasoning_body(self, method: str) -> dict[str, Any]:
        """The parameters that turn reasoning off by ``method`` (a fresh copy)."""
        return copy.deepcopy(self.reasoning.get(method, {}))


def _req(table: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = table.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"dialects.toml: {where}.{key}: missing or of the wrong type")
    return value


def dialects_from_data(data: dict[str, Any]) -> Dialects:
    """Check and build the dialect tables from parsed TOML.

    Raises:
        ConfigError: one line naming the table and key that is wrong.
    """
    dialects: dict[str, Dialect] = {}
    for name, entry in (data.get("dialects") or {}).items():
        where = f"dialects.{name}"
        shape = _req(entry, "shape", str, where)
        if shape not in SHAPES:
            raise ConfigError(f"dialects.toml: {where}.shape: '{shape}' is not one of "
                              f"{', '.join(SHAPES)}")
        dialects[name] = Dialect(name, shape, _req(entry, "parameter", str, where),
                                 bool(entry.get("strict", False)),
                                 str(entry.get("description", "")))
    reasoning = {name: dict(_req(entry, "body", dict, f"reasoning.{name}"))
                 for name, entry in (data.get("reasoning") or {}).items()}
    providers: dict[str, ProviderDialect] = {}
    for name, entry in (data.get("providers") or {}).items():
        where = f"providers.{name}"
        ladder = tuple(_req(entry, "ladder", list, where))
        for rung in ladder:
            if rung not in dialects:
                raise ConfigError(f"dialects.toml: {where}.ladder: unknown dialect '{rung}'")
        max_length = _req(entry, "max_length", str, where)
        if max_length not in MAX_LENGTH_MODES:
            raise ConfigError(f"dialects.toml: {where}.max_length: '{max_length}' is not one of "
                              f"{', '.join(MAX_LENGTH_MODES)}")
        method = _req(entry, "reasoning", str, where)
        if method not in reasoning:
            raise ConfigError(f"dialects.toml: {where}.reasoning: unknown method '{method}'")
        t = _req(entry, "timeout", dict, where)
        timeouts = Timeouts(float(_req(t, "floor_s", (int, float), f"{where}.timeout")),
                            float(_req(t, "per_prompt_token_s", (int, float), f"{where}.timeout")),
                            float(_req(t, "per_output_token_s", (int, float), f"{where}.timeout")))
        providers[name] = ProviderDialect(
            name, ladder, max_length, tuple(_req(entry, "honoured", list, where)), method,
            bool(entry.get("local", False)), int(entry.get("concurrency", 0)),
            str(entry.get("tokenizer", "none")), timeouts)
    if "openai" not in providers:
        raise ConfigError("dialects.toml: providers.openai is required (the fallback dialect)")
    return Dialects(dialects, reasoning, providers)


@lru_cache(maxsize=1)
def shipped() -> Dialects:
    """The shipped dialects (``foldscope/core/data/dialects.toml``)."""
    text = resources.files("foldscope.core.data").joinpath("dialects.toml").read_text("utf-8")
    return dialects_from_data(tomllib.loads(text))


def _describe_max_length(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` whose ``maxLength`` bounds are written into the descriptions."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("maxLength"), int) and not isinstance(node["maxLength"], bool):
                limit = node.pop("maxLength")
                note = f"At most {limit:,} characters."
                node["description"] = (f"{node['description']} {note}"
                                       if node.get("description") else note)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


def schema_of(response_format: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema inside a ``json_schema`` response_format (empty when it has none)."""
    inner = response_format.get("json_schema")
    if isinstance(inner, dict) and isinstance(inner.get("schema"), dict):
        found: dict[str, Any] = inner["schema"]
        return found
    schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else {}


def render(dialect: Dialect, response_format: dict[str, Any], max_length: str = "keep"
           ) -> dict[str, Any]:
    """The request parameters that ask for ``response_format``'s schema in ``dialect``.

    Args:
        dialect: how to send it.
        response_format: an arm's strict ``json_schema`` response_format.
        max_length: ``keep`` the schema's ``maxLength`` bounds, or ``describe`` them in the
            field descriptions instead.

    Returns:
        Parameters to merge into the body (empty for ``prompt``).
    """
    if response_format.get("type") != "json_schema":
        return {"response_format": response_format}  # already in some dialect: as it is
    schema = schema_of(response_format)
    if max_length == "describe":
        schema = _describe_max_length(schema)
    inner = response_format.get("json_schema") or {}
    if dialect.shape == "json_schema":
        if schema is schema_of(response_format):
            return {"response_format": response_format}
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {**inner, "schema": schema}}}
    if dialect.shape == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if dialect.shape == "guided_json":
        return {"guided_json": schema}
    if dialect.shape == "grammar":
        return {"json_schema": schema}
    if dialect.shape == "json_object":
        return {"response_format": {"type": "json_object"}}
    return {}


def schema_prompt(schema: dict[str, Any]) -> str:
    """The schema spelled out for a prompt, for dialects whose endpoint does not enforce it."""
    return ("Reply with one JSON object and nothing else. It must match this JSON schema:\n"
            + json.dumps(schema, ensure_ascii=False, indent=1))


def needs_schema_prompt(dialect: Dialect) -> bool:
    """True when the endpoint is not told the schema, so the prompt must carry it."""
    return dialect.shape in ("json_object", "prompt")
