"""What a server says about the model it serves: metadata, context, slots, and its token counts.

Local servers can swap the weights behind one alias; what they report (``/v1/models`` metadata,
Ollama's digest, llama.cpp's ``/props``) is recorded with the pin and enters the response cache's
key, so a different GGUF under the same name is never answered from the old one's replies. Where
the server has a tokenizer endpoint (llama-cpp-python's ``/extras/tokenize/count``, llama.cpp's
and vLLM's ``/tokenize``) the runner counts a scenario's tokens with it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from foldscope.engine.client.model_client import ModelClient


@dataclass(frozen=True)
class ServerModel:
    """The server's own account of the model (every field None when it says nothing)."""

    metadata: dict[str, Any] = field(default_factory=dict)
    """The model's ``/v1/models`` entry as served (plus Ollama's tag entry, llama.cpp's props)."""
    context_tokens: int | None = None
    """The context the server runs the model with (or trained with, when that is all it says)."""
    slots: int | None = None
    """Calls the server runs in parallel, when it advertises them (llama.cpp ``total_slots``)."""
    digest: str | None = None
    """The weights' digest, where the server offers one (Ollama)."""

    @property
    def fingerprint(self) -> str:
        """A short digest of everything the server reported (empty when it reported nothing)."""
        if not self.metadata and self.digest is None:
            return ""
        blob = json.dumps([self.metadata, self.digest], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (recorded with the pin)."""
        return {"metadata": self.metadata, "context_tokens": self.context_tokens,
                "slots": self.slots, "digest": self.digest, "fingerprint": self.fingerprint}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


_VOLATILE = ("created",)
"""Fields some servers fill with the time of the request: left out of the fingerprint."""


async def server_model(client: ModelClient) -> ServerModel:
    """Ask the server about the client's model (never raises; unknown stays None)."""
    cfg = client.cfg
    if cfg.is_simulated or cfg.provider in ("openrouter", "openai"):
        return ServerModel()  # gateways: the pin records the endpoint; nothing local to check
    metadata: dict[str, Any] = {}
    context: int | None = None
    slots: int | None = None
    digest: str | None = None
    listing = await client.fetch_json("GET", "/models")
    entries = listing.get("data") if isinstance(listing, dict) else None
    if isinstance(entries, list):
        match = next((e for e in entries if isinstance(e, dict) and e.get("id") == cfg.wire_model),
                     None)
        if match is None and len(entries) == 1 and isinstance(entries[0], dict):
            match = entries[0]  # a single-model server answers whatever alias is asked
        if match is not None:
            metadata["model"] = {k: v for k, v in match.items() if k not in _VOLATILE}
            raw_meta = match.get("meta")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            context = _int(match.get("max_model_len")) or _int(meta.get("n_ctx"))
            context = context or _int(meta.get("n_ctx_train"))
    if cfg.provider == "llamacpp":
        props = await client.fetch_json("GET", "/props", root=True)
        if isinstance(props, dict):
            settings = props.get("default_generation_settings")
            n_ctx = _int(settings.get("n_ctx")) if isinstance(settings, dict) else None
            context = n_ctx or context
            slots = _int(props.get("total_slots"))
            metadata["props"] = {"model_path": props.get("model_path"), "n_ctx": n_ctx,
                                 "total_slots": slots}
    if cfg.provider == "ollama":
        tags = await client.fetch_json("GET", "/api/tags", root=True)
        models = tags.get("models") if isinstance(tags, dict) else None
        if isinstance(models, list):
            for entry in models:
                if isinstance(entry, dict) and cfg.wire_model in (entry.get("name"),
                                                                  entry.get("model")):
                    digest = entry.get("digest") if isinstance(entry.get("digest"), str) else None
                    metadata["ollama"] = {k: entry.get(k) for k in ("name", "size", "details")}
                    break
    if cfg.dialect_entry.tokenizer != "none":
        # Servers that report only an alias (llama-cpp-python) still tell vocabularies apart:
        # their tokenizer's reading of a fixed text enters the fingerprint.
        reading = await tokenize_ids(client, FINGERPRINT_TEXT)
        if reading:
            metadata["tokenizer_reading"] = hashlib.sha256(
                json.dumps(reading).encode()).hexdigest()[:16]
    return ServerModel(metadata, context, slots, digest)


FINGERPRINT_TEXT = "foldscope fingerprint: Отдел расчётов-4 kid-7F3A9C21 2026-07-14 01:26 UTC"
"""A fixed text whose token ids tell one model's vocabulary from another's."""


async def tokenize_ids(client: ModelClient, text: str) -> list[int] | None:
    """The server's token ids for ``text`` (None: no tokenizer endpoint answered)."""
    cfg = client.cfg
    kind = cfg.dialect_entry.tokenizer
    attempts: list[tuple[str, dict[str, Any]]] = []
    if kind == "llamacpp":
        attempts = [("/extras/tokenize", {"input": text, "model": cfg.wire_model}),
                    ("/tokenize", {"content": text})]
    elif kind == "vllm":
        attempts = [("/tokenize", {"model": cfg.wire_model, "prompt": text})]
    for path, payload in attempts:
        got = await client.fetch_json("POST", path, payload, root=True)
        if isinstance(got, dict) and isinstance(got.get("tokens"), list):
            return [t for t in got["tokens"] if isinstance(t, int)]
    return None


async def count_tokens(client: ModelClient, text: str) -> int | None:
    """The server's own token count of ``text`` (None: it has no tokenizer endpoint, or failed).

    Tried by the provider's ``tokenizer`` entry in ``core/data/dialects.toml``: ``llamacpp``
    (llama-cpp-python's ``/extras/tokenize/count``, else llama.cpp's ``/tokenize``), ``vllm``
    (``/tokenize``); ``none`` asks nothing.
    """
    cfg = client.cfg
    kind = cfg.dialect_entry.tokenizer
    if kind == "llamacpp":
        got = await client.fetch_json("POST", "/extras/tokenize/count",
                                      {"input": text, "model": cfg.wire_model}, root=True)
        if isinstance(got, dict) and _int(got.get("count")) is not None:
            return int(got["count"])
        got = await client.fetch_json("POST", "/tokenize", {"content": text}, root=True)
        if isinstance(got, dict) and isinstance(got.get("tokens"), list):
            return len(got["tokens"])
        return None
    if kind == "vllm":
        got = await client.fetch_json("POST", "/tokenize",
                                      {"model": cfg.wire_model, "prompt": text}, root=True)
        if isinstance(got, dict):
            count = _int(got.get("count"))
            if count is None and isinstance(got.get("tokens"), list):
                count = len(got["tokens"])
            return count
    return None
