"""Wire a model config to a client: the network for real providers, the in-process simulated
endpoint for built-in sims.

This is the one place that knows both the real client and the simulator; the client itself only
sends through the transport it is given.
"""

from __future__ import annotations

from typing import Any

import httpx

from foldscope.engine.client.model_client import ModelClient
from foldscope.engine.models import SIM_BASE_URL, ModelConfig
from foldscope.engine.sim.endpoint import SimEndpoint
from foldscope.engine.sim.transport import SimTransport


def transport_for(cfg: ModelConfig) -> httpx.AsyncBaseTransport | None:
    """Return the transport a model's calls go through (None: the network).

    A built-in sim at the simulated base URL is answered in-process, with the config's faults
    and latency scale; a sim served over HTTP (``foldscope sim serve``) has a real base URL and
    goes through the network like any provider.
    """
    if cfg.provider != "sim" or cfg.base_url != SIM_BASE_URL:
        return None
    faults = {cfg.wire_model: cfg.faults} if cfg.faults is not None else {}
    return SimTransport(SimEndpoint(faults), latency_scale=cfg.latency_scale)


def make_client(cfg: ModelConfig, *, transport: httpx.AsyncBaseTransport | None = None,
                **kwargs: Any) -> ModelClient:
    """Return a client for ``cfg`` sending through :func:`transport_for` unless told otherwise.

    Args:
        cfg: the model config.
        transport: override the transport (tests).
        **kwargs: passed to :class:`ModelClient` (``sleep``, ``rng``, ``on_retry``,
            ``gate``).

    Returns:
        The client.
    """
    return ModelClient(cfg, transport=transport or transport_for(cfg), **kwargs)
