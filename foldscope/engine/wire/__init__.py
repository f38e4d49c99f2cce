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
