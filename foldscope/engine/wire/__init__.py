"""What both ends of the Chat Completions wire share: header names, the simulated-reply marks
and the canonical request digest.

The client (``foldscope.engine.client``) and the simulated endpoint (``foldscope.engine.sim``)
both import this package, and it imports neither, so neither side depends on the other.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass

from foldscope.engine.wire.fastjson import dumps_json, utf8_json

SIMULATED_HEADER = "x-foldscope-simulated"
"""Response header a simulated endpoint sets to ``1``."""
SIM_FINGERPRINT = "foldscope-sim"
"""``system_fingerprint`` of a simulated reply."""
RETRY_COUNT_HEADER = "x-retry-count"
"""Zero-based attempt number sent with each request (simulated endpoints draw faults by it)."""
ROW_ATTEMPT_HEADER = "x-foldscope-row-attempt"
"""Which attempt of its row a call belongs to (sent from the second on), so a simulated
endpoint's fault draws differ when a failed row is run again."""
BODY_EXTENSION = "foldscope.body"
"""The httpx request extension a client puts its :class:`EncodedBody` under, so an in-process
transport can read the body it already has instead of decoding the bytes (a network transport
ignores it)."""


def body_digest(body: dict) -> str:
    """Return the sha256 hex digest of a request body in canonical JSON (sorted keys, no
    spaces), its UTF-8 hashed part by part (``fastjson.utf8_json``) when the body is plain."""
    parts = utf8_json(body, sort_keys=True, separators=(",", ":"))
    if parts is None:
        canon = dumps_json(body, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode("utf-8")).hexdigest()
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part)
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class EncodedBody:
    """A request body as it goes on the wire.

    ``content`` is the body's JSON in UTF-8 (keys in the body's order). ``parsed`` is the body
    itself when decoding ``content`` gives it back exactly, types and key order alike (a
    plain body, ``fastjson.utf8_json``), else None. An in-process transport that finds this
    object under :data:`BODY_EXTENSION`, holding the very bytes the request carries, may take
    ``parsed`` as their decoding; the body must not change while the call is made.
    """

    content: bytes
    parsed: dict | None


def encode_body(body: dict) -> EncodedBody:
    """Encode a request body for the wire (see :class:`EncodedBody`).

    Raises:
        UnicodeEncodeError: a string of the body holds a lone surrogate (no UTF-8 for it).
    """
    parts = utf8_json(body)
    if parts is None:
        return EncodedBody(dumps_json(body).encode("utf-8"), None)
    return EncodedBody(b"".join(parts), body)


def raise_open_files(needed: int) -> int:
    """Raise this process's soft limit on open files to ``needed`` (at most the hard limit),
    so that many calls in flight (a socket each) do not fail with "too many open files"; a
    soft limit already that high is left alone. Returns the soft limit now in force."""
    try:
        import resource
    except ImportError:  # not on this platform: nothing to raise
        return needed
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    return soft
