"""What both ends of the Chat Completions wire share: header names, the simulated-reply marks
and the canonical request digest.

The client (``foldscope.engine.client``) and the simulated endpoint (``foldscope.engine.sim``)
both import this package, and it imports neither, so neither side depends on the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from foldscope.engine.wire.fastjson import WHOLE_ENTRIES, dumps_json, fingerprint

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

_BODY_DIGESTS: OrderedDict[tuple[int, str, str], tuple[str, str]] = OrderedDict()
"""Recent canonical bodies and their digests (see ``body_digest``), at most WHOLE_ENTRIES."""
_BODY_DIGESTS_LOCK = threading.Lock()



def body_digest(body: dict) -> str:
    """Return the sha256 hex digest of a request body in canonical JSON (sorted keys)."""
    canon = dumps_json(body, sort_keys=True, separators=(",", ":"))
    # The same canonical text is digested twice per call when an in-process simulated endpoint
    # answers (the client for its record, the endpoint for its seed), and hashing ~100 kB costs
    # ~60 us, so the last few digests are remembered, confirmed by comparing the whole text.
    key = fingerprint(canon)
    with _BODY_DIGESTS_LOCK:
        entry = _BODY_DIGESTS.get(key)
        if entry is not None and entry[0] == canon:
            return entry[1]
    digest = hashlib.sha256(canon.encode("utf-8")).hexdigest()
    with _BODY_DIGESTS_LOCK:
        _BODY_DIGESTS[key] = (canon, digest)
        _BODY_DIGESTS.move_to_end(key)
        while len(_BODY_DIGESTS) > WHOLE_ENTRIES:
            _BODY_DIGESTS.popitem(last=False)
    return digest


_PLAIN_SCALARS = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    """True when ``json.loads(json.dumps(value))`` gives ``value`` back with the very types:
    dicts with str keys, lists, str, int, float, bool and None, no subclasses (a tuple comes
    back a list, an int key a str, an enum its value)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not all(type(k) is str for k in item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind not in _PLAIN_SCALARS:
            return False
    return True


@dataclass(frozen=True, eq=False)
class EncodedBody:
    """A request body as it goes on the wire.

    ``content`` is the body's JSON in UTF-8 (keys in the body's order). ``parsed`` is the body
    itself when decoding ``content`` gives it back exactly, types and key order alike
    (:func:`_plain`), else None. An in-process transport that finds this object under
    :data:`BODY_EXTENSION`, holding the very bytes the request carries, may take ``parsed`` as
    their decoding; the body must not change while the call is made.
    """

    content: bytes
    parsed: dict | None


def encode_body(body: dict) -> EncodedBody:
    """Encode a request body for the wire (see :class:`EncodedBody`).

    Raises:
        UnicodeEncodeError: a string of the body holds a lone surrogate (no UTF-8 for it).
    """
    content = dumps_json(body).encode("utf-8")
    return EncodedBody(content, body if _plain(body) else None)


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
