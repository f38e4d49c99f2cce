"""The client's request and reply types: a chat call, its reply with accounting, a gateway endpoint."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChatRequest:
    """One chat call: what the fold or recall layer asks for."""

    messages: list[dict]
    max_tokens: int
    response_format: dict | None = None
    temperature: float | None = None
    """None: the model config's temperature."""
    seed: int | None = None
    """None: the model config's seed (if any)."""
    row_attempt: int = 0
    """Which attempt of its row the call belongs to (0: the first)."""


@dataclass(frozen=True)
class ChatReply:
    """What came back from a successful call, with its accounting."""

    content: str
    finish_reason: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    """Wall time of the successful attempt (retries and backoff excluded)."""
    cost_usd: float | None
    simulated: bool
    attempts: int
    request_digest: str
    retry_kinds: tuple[str, ...] = ()
    """The fault kind behind each retry, in order (``rate_limited``, ``timeout``, …)."""
    truncated: bool = False
    """The reply was longer than the model's ``max_reply_bytes`` and was cut there."""

    @property
    def rate_limited(self) -> bool:
        """True when any attempt was answered 429 (adaptive concurrency backs off on this)."""
        return "rate_limited" in self.retry_kinds


@dataclass(frozen=True)
class EndpointInfo:
    """One provider endpoint of a model as a gateway lists it (OpenRouter shape)."""

    name: str
    provider_name: str
    tag: str | None
    quantization: str | None
    context_length: int | None
    max_completion_tokens: int | None
    price_prompt_per_mtok: float | None
    price_completion_per_mtok: float | None
    supported_parameters: tuple[str, ...]

    def matches_pin(self, pin: str) -> bool:
        """True when ``pin`` names this endpoint (by tag, provider name or its slug)."""
        pin = pin.casefold()
        names = {self.name.casefold(), self.provider_name.casefold(),
                 self.provider_name.casefold().replace(" ", "-")}
        if self.tag:
            names |= {self.tag.casefold(), self.tag.casefold().split("/", 1)[0]}
        return pin in names

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (for probe output and pin records)."""
        return {
            "name": self.name, "provider_name": self.provider_name, "tag": self.tag,
            "quantization": self.quantization, "context_length": self.context_length,
            "max_completion_tokens": self.max_completion_tokens,
            "price_prompt_per_mtok": self.price_prompt_per_mtok,
            "price_completion_per_mtok": self.price_completion_per_mtok,
            "supported_parameters": list(self.supported_parameters),
        }
