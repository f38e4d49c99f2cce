"""The endpoint pins a runner records with a sweep (``Store.set_pins``), typed both ways.

The runner builds each model's record when a run starts and validates it into ``ModelPin``
before it is stored: its provider and pin, the endpoint a routing gateway holds it to, warnings,
and what it learnt of the endpoint (dialect, probe, server, token sources, concurrency). Readers
validate the stored JSON once into the same records (:func:`stored_pins`) instead of each
reading the dict its own way; what they do not name is kept (``extra``), so the report still
prints an entry as stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator


class PinnedEndpoint(BaseModel):
    """The gateway endpoint a pinned model is held to, as the gateway listed it
    (``engine.client.chat.EndpointInfo``)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str | None = None
    provider_name: str | None = None
    tag: str | None = None
    quantization: str | None = None
    context_length: int | None = None
    max_completion_tokens: int | None = None
    # int | float: a price listed as 0 stays 0 (a float field would store it as 0.0).
    price_prompt_per_mtok: int | float | None = None
    price_completion_per_mtok: int | float | None = None

    @property
    def shown_name(self) -> str | None:
        """The name to show: the endpoint's, else its provider's."""
        return self.name or self.provider_name


class ModelPin(BaseModel):
    """One model's recorded pin."""

    model_config = ConfigDict(extra="allow", frozen=True)

    provider: str = "?"
    pin: str | None = None
    """The endpoint the model is held to; None: unpinned."""
    endpoint: PinnedEndpoint | None = None
    """The pinned endpoint as the gateway lists it, when it was found."""
    warnings: tuple[str, ...] = ()
    """What the runner found wrong or doubtful at the start (the header and report show them)."""
    context_tokens: int | None = None
    """The model's context length (configured, else what the server reported)."""

    def stored(self) -> dict[str, Any]:
        """The record as the store keeps it (JSON-ready except for what ``json.dumps`` does:
        tuples are lists there), every field the runner wrote and nothing added."""
        return self.model_dump()

    @field_validator("provider", mode="before")
    @classmethod
    def _provider_text(cls, value: Any) -> Any:
        return "?" if value is None else str(value)

    @field_validator("warnings", mode="before")
    @classmethod
    def _warning_texts(cls, value: Any) -> Any:
        return tuple(str(w) for w in value) if isinstance(value, list | tuple) else value

    @field_validator("endpoint", mode="before")
    @classmethod
    def _no_endpoint(cls, value: Any) -> Any:
        return None if value == {} else value


def stored_pins(pins: Mapping[str, Any]) -> dict[str, ModelPin]:
    """A sweep's stored pins (plain data, as the store returns them), by model id, in order.

    Raises:
        ValueError: an entry is not a pin record (``foldscope check`` names what is wrong).
    """
    return {str(model): ModelPin.model_validate(entry) for model, entry in pins.items()}
