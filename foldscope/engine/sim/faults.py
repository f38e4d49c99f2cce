"""Fault injection for simulated endpoints: the configuration schema and deterministic draws."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field


class FaultConfig(BaseModel):
    """Faults a simulated endpoint injects, per model (TOML: ``[models.faults]``).

    Rates are probabilities per attempt. Draws are deterministic per (request digest, row
    attempt, call attempt), so a retried call, or a row run again, can succeed where an
    earlier attempt failed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency_s: float = Field(0.0, ge=0.0)
    """Mean simulated latency per call, seconds (scaled by the client's ``latency_scale``)."""
    latency_jitter: float = Field(0.5, ge=0.0, le=1.0)
    """Latency spread: a draw is uniform in ``latency_s * (1 ± latency_jitter)``."""
    rate_429: float = Field(0.0, ge=0.0, le=1.0)
    retry_after_s: float = Field(1.0, ge=0.0)
    """Value of the ``Retry-After`` header sent with a simulated 429."""
    rate_5xx: float = Field(0.0, ge=0.0, le=1.0)
    rate_timeout: float = Field(0.0, ge=0.0, le=1.0)
    timeout_stall_s: float = Field(60.0, ge=0.0)
    """How long the HTTP server stalls on a simulated timeout (the in-process transport raises)."""
    rate_malformed: float = Field(0.0, ge=0.0, le=1.0)
    """A 200 whose body is not a chat completion: truncated JSON, invalid JSON, empty
    ``choices`` or a choice without its message (one of the four, drawn per attempt)."""
    rate_truncate: float = Field(0.0, ge=0.0, le=1.0)
    rate_nonconforming: float = Field(0.0, ge=0.0, le=1.0)
    reasoning_mandatory: bool = False
    """Refuse (400) any request that disables reasoning."""
    refuse_reasoning_param: bool = False
    """Answer 404 "no endpoints found" to any request carrying a reasoning-suppression parameter."""

    def merged(self, override: FaultConfig | None) -> FaultConfig:
        """Return this config with the fields ``override`` set explicitly laid over it."""
        if override is None:
            return self
        data = self.model_dump()
        data.update({k: getattr(override, k) for k in override.model_fields_set})
        return FaultConfig(**data)


@dataclass(frozen=True)
class FaultDraw:
    """What the endpoint does to one attempt of one request."""

    latency_s: float = 0.0
    infra: str | None = None
    """``"timeout"``, ``"rate_limited"``, ``"server_error"`` or None."""
    truncate: bool = False
    nonconforming: bool = False
    malformed: str | None = None
    """One of ``MALFORMED_KINDS``, or None."""


MALFORMED_KINDS = ("truncated_json", "invalid_json", "empty_choices", "no_message")
"""The malformed 200 replies a simulated endpoint can send."""


def draw_faults(faults: FaultConfig | None, digest: str, attempt: int,
                row_attempt: int = 0) -> FaultDraw:
    """Draw the faults for one attempt, deterministically per (digest, row attempt, attempt).

    Args:
        faults: the endpoint's fault config (None: no faults).
        digest: the request body digest.
        attempt: zero-based retry count the client reports (``x-retry-count``).
        row_attempt: which attempt of its row the call belongs to (``x-foldscope-row-attempt``;
            a row run again sends the same bodies, so without it it would meet the same faults).

    Returns:
        The draw.
    """
    if faults is None:
        return FaultDraw()
    key = f"faults|{digest}|{attempt}" + (f"|row{row_attempt}" if row_attempt else "")
    seed = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    rng = random.Random(seed)
    latency = faults.latency_s * (1.0 + faults.latency_jitter * (2.0 * rng.random() - 1.0))
    # One uniform for the mutually exclusive infrastructure faults keeps the stated rates exact.
    u = rng.random()
    infra = None
    for kind, rate in (("timeout", faults.rate_timeout), ("rate_limited", faults.rate_429),
                       ("server_error", faults.rate_5xx)):
        if u < rate:
            infra = kind
            break
        u -= rate
    truncate = rng.random() < faults.rate_truncate
    nonconforming = rng.random() < faults.rate_nonconforming
    malformed = None
    if faults.rate_malformed and rng.random() < faults.rate_malformed:
        malformed = MALFORMED_KINDS[rng.randrange(len(MALFORMED_KINDS))]
    return FaultDraw(max(0.0, latency), infra, truncate, nonconforming, malformed)
