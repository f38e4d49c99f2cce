"""The one validation of a reply before anything uses, caches or stores it.

A reply comes from a server foldscope does not control, so nothing in it is trusted:

- its body is read as a stream and decoded here (gzip, deflate, zstd and brotli), and reading
  stops once the decoded body passes ``body_limit`` (a
  gzip bomb or an endless body costs at most that much memory per call);
- its JSON is parsed with bounded nesting and number size (``core.nesting``);
- its usage and cost must be finite, non-negative and in range, or they count as unknown;
- a cache entry is held to the same rules when it is replayed (one that fails is dropped).

A reply that fails validation raises ``ReplyRefused`` (a ``ValueError``): the client treats it
as a malformed reply, retried like a 5xx, never cached.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from foldscope.core.nesting import MAX_INT, NestingError, loads_json

BODY_ALLOWANCE = 262_144
"""Bytes of a reply body allowed beyond the content it may carry (the JSON envelope)."""

MAX_CALL_TOKENS = 100_000_000
"""Most tokens one call may report for its prompt or its completion; more is not a count."""

MAX_CALL_COST_USD = 10_000.0
"""Most one call may report it cost; more (like a negative or non-finite cost) is unknown."""

RETRY_AFTER_MAX_S = 300.0
"""Longest ``Retry-After`` honoured for one wait; a server asking more waits this long."""

FINISH_REASONS_KEPT = 40
"""Longest finish reason kept as the server sent it (longer ones read ``unknown``)."""


class ReplyRefused(ValueError):
    """A reply failed validation; the message (one line) says why."""


def body_limit(max_reply_bytes: int) -> int:
    """The most decoded bytes read of one reply body: room for ``max_reply_bytes`` of content
    however the server escapes it (a ``\\u`` escape of four hex digits takes six bytes for a
    character of at most four), plus the envelope."""
    return 4 * max_reply_bytes + BODY_ALLOWANCE


class CheckedResponse(httpx.Response):
    """A fully read, decoded response whose ``json()`` is the bounded parser.

    The body is parsed once: every ``json()`` call returns the same object (the client reads
    a reply's JSON twice, to tell an error body from a completion), so callers must not
    change it.
    """

    _parsed: Any = None
    _was_parsed = False

    def json(self, **kwargs: Any) -> Any:
        if not self._was_parsed:
            self._parsed = loads_json(self.content)  # a ValueError is raised again next time
            self._was_parsed = True
        return self._parsed


# -- decoding with a bound ---------------------------------------------------------------


class _Over(Exception):
    """The decoded body passed its limit."""


class _Zlib:
    def __init__(self, wbits: int, fallback: int | None = None) -> None:
        self._obj = zlib.decompressobj(wbits)
        self._fallback = fallback
        self._started = False

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = self._obj.decompress(data, room + 1)
        except zlib.error:
            if self._fallback is None or self._started:
                raise ReplyRefused("the reply body is not valid compressed data") from None
            # "deflate" is zlib-wrapped by the standard, raw by some servers: try raw once.
            self._obj, self._fallback = zlib.decompressobj(self._fallback), None
            return self.feed(data, room)
        self._started = True
        if len(out) > room:
            raise _Over
        return out

    def flush(self, room: int) -> bytes:
        out = self._obj.flush()
        if len(out) > room:
            raise _Over
        return out


class _Zstd:
    def __init__(self) -> None:
        import zstandard  # optional: advertised only when importable

        self._error: type[Exception] = zstandard.ZstdError
        self._out: list[bytes] = []
        self._room = 0
        self._writer = zstandard.ZstdDecompressor().stream_writer(
            self, write_size=65536)  # type: ignore[arg-type]  # only write() is called

    def write(self, data: bytes) -> int:  # the stream writer's sink, one bounded piece a time
        if len(data) > self._room:
            raise _Over
        self._room -= len(data)
        self._out.append(data)
        return len(data)

    def feed(self, data: bytes, room: int) -> bytes:
        self._room, self._out = room, []
        try:
            self._writer.write(data)
        except self._error as exc:  # not a zstd stream
            raise ReplyRefused(f"the reply body is not valid zstd data ({type(exc).__name__})"
                               ) from None
        return b"".join(self._out)

    def flush(self, room: int) -> bytes:
        return b""


class _Brotli:
    """brotli >= 1.2, whose ``process`` stops growing its output at a limit (older versions
    decode a whole piece at once, so they are not used: see ``_brotli_bounded``)."""

    def __init__(self) -> None:
        import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]  # untyped

        self._obj = brotli.Decompressor()
        self._error: type[Exception] = brotli.error

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = self._obj.process(data, output_buffer_limit=room + 1)
            # At its limit the decoder holds more output back; it takes no new input until
            # that is drained, so drain it here (each piece bounded by what room is left).
            while len(out) <= room and not self._obj.can_accept_more_data():
                more = self._obj.process(b"", output_buffer_limit=room - len(out) + 1)
                if not more:
                    break
                out += more
        except self._error as exc:  # not a brotli stream
            raise ReplyRefused(f"the reply body is not valid brotli data ({type(exc).__name__})"
                               ) from None
        if len(out) > room:
            raise _Over
        return out

    def flush(self, room: int) -> bytes:
        return b""


def _brotli_bounded() -> bool:
    """Whether the installed brotli can bound its output (1.2 and later)."""
    try:
        import brotli  # type: ignore[import-untyped, import-not-found, unused-ignore]  # untyped
    except ImportError:
        return False
    return hasattr(brotli.Decompressor(), "can_accept_more_data")


def _available(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


_DECODERS: dict[str, Callable[[], Any]] = {
    "gzip": lambda: _Zlib(zlib.MAX_WBITS | 16),
    "x-gzip": lambda: _Zlib(zlib.MAX_WBITS | 16),
    "deflate": lambda: _Zlib(zlib.MAX_WBITS, fallback=-zlib.MAX_WBITS),
}
if _available("zstandard"):
    _DECODERS["zstd"] = _Zstd
if _brotli_bounded():
    _DECODERS["br"] = _Brotli

ACCEPT_ENCODING = ", ".join(name for name in ("gzip", "deflate", "zstd", "br") if name in _DECODERS)
"""What the client asks for: only encodings it decodes with a bound."""


async def read_body(resp: httpx.Response, limit: int, *, max_reply_bytes: int
                    ) -> CheckedResponse:
    """Read a streamed response's body, decoding it, and stop once it passes ``limit`` bytes.

    Args:
        resp: a response opened with ``stream=True`` (the caller closes it).
        limit: the most decoded bytes accepted.
        max_reply_bytes: the model's setting (named in the refusal).

    Returns:
        The response with its decoded body in memory and ``json()`` bounded.

    Raises:
        ReplyRefused: the body is larger than ``limit`` decoded, or in an encoding that is not
            decoded here, or not valid compressed data.
    """
    headers = [(k, v) for k, v in resp.headers.multi_items()
               if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
    try:  # an in-process transport hands over a body already read (and decoded)
        ready: bytes | None = resp.content
    except httpx.ResponseNotRead:
        ready = None
    if ready is not None:
        if len(ready) > limit:
            raise ReplyRefused(f"the reply body passed {limit:,} bytes decoded (the bound for "
                               f"max_reply_bytes {max_reply_bytes:,})")
        return CheckedResponse(resp.status_code, headers=headers, content=ready,
                               request=resp.request, extensions=resp.extensions)
    encodings = [e.strip().lower() for e in resp.headers.get("content-encoding", "").split(",")]
    encodings = [e for e in encodings if e and e != "identity"]
    decoders = []
    for name in reversed(encodings):  # applied in the order listed: undone last first
        factory = _DECODERS.get(name)
        if factory is None:
            raise ReplyRefused(f"the reply is in content-encoding '{name[:40]}', which was not "
                               f"asked for (accepted: {ACCEPT_ENCODING})")
        decoders.append(factory())
    parts: list[bytes] = []
    size = 0
    try:
        async for raw in resp.aiter_raw():
            data = raw
            for decoder in decoders:
                data = decoder.feed(data, limit - size)
            size += len(data)
            if size > limit:
                raise _Over
            parts.append(data)
        for i, decoder in enumerate(decoders):  # whatever the decoders still hold
            tail = decoder.flush(limit - size)
            for later in decoders[i + 1:]:
                tail = later.feed(tail, limit - size)
            size += len(tail)
            if size > limit:
                raise _Over
            parts.append(tail)
    except _Over:
        raise ReplyRefused(f"the reply body passed {limit:,} bytes decoded (the bound for "
                           f"max_reply_bytes {max_reply_bytes:,}); reading stopped there"
                           ) from None
    return CheckedResponse(resp.status_code, headers=headers, content=b"".join(parts),
                           request=resp.request, extensions=resp.extensions)


# -- what a reply may say of itself --------------------------------------------------------


def count_or_none(value: Any) -> int | None:
    """A token count as reported: an int in ``0..MAX_CALL_TOKENS``, else None (unknown)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_CALL_TOKENS else None


def cost_or_none(value: Any) -> float | None:
    """A call's cost as reported: a finite number in ``0..MAX_CALL_COST_USD``, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and not -MAX_INT < value < MAX_INT:
        return None
    cost = float(value)
    return cost if math.isfinite(cost) and 0.0 <= cost <= MAX_CALL_COST_USD else None


MAX_PRICE_PER_MTOK = 1_000_000.0
"""Dearest price per million tokens an endpoint listing may state; more is not a price."""


def price_per_mtok_of(per_token: Any) -> float | None:
    """A gateway's listed price per token (a number or a numeric string, as OpenRouter writes
    it) as dollars per million tokens, or None when it is not a finite, non-negative price in
    range: a listing is a reply too, and its prices reach the sweep's pins and cost estimates."""
    if isinstance(per_token, bool) or not isinstance(per_token, int | float | str):
        return None
    if isinstance(per_token, str) and len(per_token) > 64:
        return None
    try:
        price = float(per_token) * 1e6
    except (ValueError, OverflowError):
        return None
    return price if math.isfinite(price) and 0.0 <= price <= MAX_PRICE_PER_MTOK else None


def listed_text_of(value: Any, *, longest: int = 200) -> str | None:
    """A short name a listing states (a provider, a tag, a quantization), or None when it is
    not a string of at most ``longest`` printable characters."""
    if not isinstance(value, str) or not value or len(value) > longest or not value.isprintable():
        return None
    return value


@dataclass(frozen=True)
class Usage:
    """A reply's accounting, every figure validated (None: unknown)."""

    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None


def usage_of(data: dict[str, Any], price_prompt_per_mtok: float | None,
             price_completion_per_mtok: float | None) -> Usage:
    """Read a reply's ``usage``: counts and cost in range or unknown; a cost the reply does not
    state (or states out of range) is computed from the configured prices when both counts are
    known, else unknown."""
    usage = data.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    prompt = count_or_none(usage.get("prompt_tokens"))
    completion = count_or_none(usage.get("completion_tokens"))
    cost = cost_or_none(usage.get("cost"))
    if (cost is None and prompt is not None and completion is not None
            and price_prompt_per_mtok is not None and price_completion_per_mtok is not None):
        cost = cost_or_none((prompt * price_prompt_per_mtok
                             + completion * price_completion_per_mtok) / 1e6)
    return Usage(prompt, completion, cost)


KEY_REDACTED = "[api key redacted]"
"""What stands in a reply where the endpoint echoed the model's own API key."""


def without_key(content: str, key: str | None) -> str:
    """The reply's text with the model's own API key (if the endpoint echoed it) replaced, so
    the key never reaches the database, a cache entry, a log or an export. Keys under 8
    characters are left alone (too likely to be ordinary text)."""
    if key and len(key) >= 8 and key in content:
        return content.replace(key, KEY_REDACTED)
    return content


def finish_reason_of(choice: Any) -> str:
    """The first choice's finish reason as a short printable word, or ``unknown``."""
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    if (isinstance(finish, str) and 0 < len(finish) <= FINISH_REASONS_KEPT
            and finish.isprintable() and finish.isascii()):
        return finish
    return "unknown"


def retry_after_s(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds: a finite, non-negative number, else None (the
    caller's own back-off then applies). HTTP dates are not trusted either (clock skew)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip()[:32])
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def retry_wait_s(asked: float | None, backoff_s: float) -> float:
    """How long to wait before a 429's retry: what the server asked, floored at the normal
    back-off (``Retry-After: 0`` cannot make a client spin) and capped at
    ``RETRY_AFTER_MAX_S``."""
    if asked is None:
        return backoff_s
    return min(max(asked, backoff_s), max(RETRY_AFTER_MAX_S, backoff_s))


# -- the response cache ------------------------------------------------------------------


CACHED_FIELDS: dict[str, tuple[type, ...]] = {
    "content": (str,), "finish_reason": (str,), "simulated": (bool,),
    "request_digest": (str,), "truncated": (bool,),
}


def cached_reply_problem(record: Any) -> str | None:
    """Why a cache entry may not be replayed (None: it may), by the rules a fresh reply meets."""
    if not isinstance(record, dict):
        return "not an object"
    for name, types in CACHED_FIELDS.items():
        if name in record and not isinstance(record[name], types):
            return f"field '{name}' has the wrong type"
    if not isinstance(record.get("content"), str):
        return "no content"
    for name in ("prompt_tokens", "completion_tokens"):
        value = record.get(name)
        if value is not None and count_or_none(value) is None:
            return f"field '{name}' is not a token count in range"
    cost = record.get("cost_usd")
    if cost is not None and cost_or_none(cost) is None:
        return "field 'cost_usd' is not a cost in range"
    latency = record.get("latency_s")
    if latency is not None and not (isinstance(latency, int | float) and not isinstance(latency, bool)
                                    and math.isfinite(latency) and latency >= 0):
        return "field 'latency_s' is not a duration"
    if finish_reason_of(record) != record.get("finish_reason", "unknown"):
        return "field 'finish_reason' is not a finish reason"
    return None


def parse_cached(text: str) -> dict[str, Any] | None:
    """A stored cache entry's JSON, parsed bounded; None when it cannot be (drop it)."""
    try:
        record = loads_json(text)
    except (NestingError, ValueError):
        return None
    return record if isinstance(record, dict) else None
