"""Sanitising what leaves the machine: private endpoints, local paths, e-mail and secret values.

An evidence package must let anyone recompute a study's figures without learning where it ran
or who ran it. What would say so is replaced by a short digest (``sha256:`` and 16 hex digits),
so two mentions of the same endpoint still match each other in the released files.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from foldscope.core import shapes

PUBLIC_HOSTS: frozenset[str] = frozenset({
    "openrouter.ai", "api.openai.com", "api.anthropic.com", "api.together.xyz",
    "api.deepinfra.com", "api.groq.com", "api.fireworks.ai", "api.mistral.ai",
    "generativelanguage.googleapis.com", "api.deepseek.com",
    "sim.foldscope.invalid",
})
"""Well-known public gateways whose base URL says nothing private; any other host is hashed."""

REDACTED_KEYS: frozenset[str] = frozenset({"api_key_env", "api_key", "authorization", "headers"})
"""Config keys whose values are never released (a key's variable name can itself be a key)."""

# The scrubber's patterns are built from the shapes every reader shares (``core.shapes``), reaching
# as far as a reader could take one: a value scrubbed that needed no scrubbing costs a digest, one
# missed leaks who ran the study. They cover what the identifier kinds file finds as URLs, e-mail
# addresses and absolute or home paths; tests/test_scrub_corpus.py checks that and pins the output.
EMAIL_SHAPE = re.compile(shapes.EMAIL_REACH)
"""What an export treats as an e-mail address (``core.shapes.EMAIL_REACH``)."""
URL_SHAPE = re.compile(shapes.URL_REACH)
"""What an export treats as a URL: a scheme, ``://`` and the rest of its token
(``core.shapes.URL_REACH``)."""
LOCAL_PATH_SHAPE = re.compile(shapes.LOCAL_PATH)
"""What an export treats as a local path (``core.shapes.LOCAL_PATH``): an absolute POSIX path of
two or more parts, a home-relative path, or a Windows drive path (a relative path names no
machine and is kept)."""


KEY_SHAPED = re.compile(
    r"\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_\-]{16,}"  # sk-…, sk-proj-…, sk-or-v1-…
    r"|\bBearer\s+[A-Za-z0-9._~+/\-]{8,}=*"                 # an Authorization header's value
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|xox[abprs]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,})")
"""Text shaped like an API key or a bearer token, whichever variable (if any) it came from:
scrubbed from everything released even when no configured key's value is known."""


def scrub_keys(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace every given secret value and every key-shaped string with ``<secret>``."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, "<secret>")
    return KEY_SHAPED.sub("<secret>", text)


def holds_key(text: str, secrets: Iterable[str] = ()) -> bool:
    """Whether ``text`` holds a given secret value or anything key-shaped."""
    return any(s and s in text for s in secrets) or KEY_SHAPED.search(text) is not None


def digest(text: str) -> str:
    """A short, stable stand-in for a value that is not released: ``sha256:`` + 16 hex digits."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def public_url(url: str) -> bool:
    """Whether a URL points at a well-known public gateway (see ``PUBLIC_HOSTS``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return (parts.hostname or "").lower() in PUBLIC_HOSTS and not parts.username \
        and not parts.password


def sanitize_url(url: str) -> str:
    """A public gateway's URL without its query; any other endpoint as ``<endpoint sha256:…>``."""
    if public_url(url):
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.hostname}{parts.path}"
    return f"<endpoint {digest(url)}>"


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace secret values, private URLs, local paths and e-mail addresses in a text.

    Args:
        text: any text from a configuration, a name or an error message.
        secrets: literal values that must never appear (e.g. API keys read from the
            environment); each is replaced wherever it occurs.

    Returns:
        The text with every such value replaced by a digest placeholder.
    """
    text = scrub_keys(text, secrets)
    text = URL_SHAPE.sub(lambda m: sanitize_url(m.group(0)), text)
    text = EMAIL_SHAPE.sub(lambda m: f"<email {digest(m.group(0))}>", text)
    return LOCAL_PATH_SHAPE.sub(lambda m: f"<path {digest(m.group(0))}>", text)


def scrub_answer(text: str, secrets: Iterable[str] = ()) -> str:
    """Scrub model output: secret values and e-mail addresses only.

    Answers quote planted facts, and those include paths and URLs (an install lock path, a
    cache origin) that are the study's data, not the author's machine; they are kept.
    """
    text = scrub_keys(text, secrets)
    return EMAIL_SHAPE.sub(lambda m: f"<email {digest(m.group(0))}>", text)


def sanitize_config(value: Any, secrets: Iterable[str] = ()) -> Any:
    """Sanitise a stored configuration (sweep definition, endpoint pins) for release.

    Keys in ``REDACTED_KEYS`` lose their values; ``base_url`` keeps only a public gateway's URL;
    every other string goes through ``scrub_text``. Dict keys are scrubbed too (pins are keyed by
    model id, which could be a local path).

    Returns:
        A new structure of the same shape.
    """
    secrets = tuple(secrets)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = scrub_text(str(key), secrets)
            if str(key).lower() in REDACTED_KEYS:
                out[name] = None if item is None else "<redacted>"
            elif str(key) == "base_url" and isinstance(item, str):
                out[name] = sanitize_url(item)
            else:
                out[name] = sanitize_config(item, secrets)
        return out
    if isinstance(value, list):
        return [sanitize_config(v, secrets) for v in value]
    if isinstance(value, str):
        return scrub_text(value, secrets)
    return value
