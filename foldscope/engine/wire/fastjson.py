"""The JSON fast path: ``json.dumps`` with memoised escaping of long strings.

A fold body carries a ~100k-character user message, and escaping it for JSON is most of the
cost of encoding the body (~0.25 ms). It is escaped several times per call (canonically for
the digest, again for the wire body, and once more by an in-process simulated endpoint for its
own digest), and from one fold to the next the message differs only in its head (the carrier)
while its tail (the chunk and the instruction) repeats across every row of a sweep. Escaping
is a pure, per-character function of the string, so escaped forms are memoised at two levels:
whole strings (the repeat encodes of one message) and fixed-size blocks cut from the end of the
string (so a repeated tail lands on the same blocks whatever the head's length). The output is
exactly ``json.dumps(obj, ensure_ascii=False, ...)``: the same C encoder runs, only its
string-escaping step is memoised, and escape(a + b) == escape(a) + escape(b) without quotes.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from typing import Any

_MEMO_MIN_CHARS = 4096
"""Strings shorter than this are escaped directly (the memo would cost more than it saves)."""

WHOLE_ENTRIES = 8
"""Whole strings remembered: a call needs one (its user message), the rest is interleaving slack."""

_BLOCK_CHARS = 8192
"""Size of the blocks a long string is cut into, counted from its end."""

_BLOCK_BUDGET_CHARS = 16_000_000
"""Characters (blocks plus the escaped forms asked for: text, or UTF-8 bytes on the wire path)
the block memo keeps, least recently used out first: about 16 MB of ASCII, room for every
chunk × instruction of a 12-arm sweep."""

_escape_json_string = json.encoder.encode_basestring  # the C escaper when _json is built
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
_default_encoder = json.JSONEncoder()


def fingerprint(text: str) -> tuple[int, str, str]:
    # Hashing a str reads all of it (~25 us per 100k characters, again for every new string
    # object, e.g. each freshly decoded request body), so long texts are keyed by their length
    # and edges instead; a hit is confirmed by comparing the whole text (a memcmp, much cheaper).
    return len(text), text[:64], text[-64:]


class _EscapeMemo:
    """JSON string escaping with bounded LRU memos (see above); a drop-in for the C escaper.
    ``utf8`` gives the escaped form's UTF-8, remembered the same way (whole strings and blocks)."""

    def __init__(self) -> None:
        # fingerprint -> (text, escaped with quotes, its UTF-8), either form None until asked for
        self._whole: OrderedDict[tuple[int, str, str], tuple[str, str | None, bytes | None]] = (
            OrderedDict())
        # fingerprint -> (block, escaped without quotes, its UTF-8), each form once asked for
        self._blocks: OrderedDict[tuple[int, str, str],
                                  tuple[str, str | None, bytes | None]] = OrderedDict()
        self._block_chars = 0
        self._lock = threading.Lock()  # a UI worker thread and the main thread may both encode

    def __call__(self, text: str) -> str:
        if len(text) < _MEMO_MIN_CHARS:
            return _escape_json_string(text)
        escaped: str = self._whole_form(text, False)
        return escaped

    def utf8(self, text: str) -> bytes:
        """``self(text).encode("utf-8")`` (a fold's user message is encoded for the wire and
        again for its digest: its UTF-8 is remembered, whole and by blocks, like its escaping).

        Raises:
            UnicodeEncodeError: the text holds a lone surrogate.
        """
        if len(text) < _MEMO_MIN_CHARS:
            return _escape_json_string(text).encode("utf-8")
        raw: bytes = self._whole_form(text, True)
        return raw

    def _whole_form(self, text: str, utf8: bool) -> Any:
        """The whole string escaped, with its quotes: str, or its UTF-8 when ``utf8``;
        remembered beside the other form once that was asked for."""
        form = 2 if utf8 else 1
        key = fingerprint(text)
        with self._lock:
            entry = self._whole.get(key)
            if entry is not None and entry[0] != text:
                entry = None  # another string with the same fingerprint: replaced below
            if entry is not None and entry[form] is not None:
                self._whole.move_to_end(key)
                return entry[form]
            parts = self._by_blocks(text, utf8)
            escaped, raw = (entry[1], entry[2]) if entry is not None else (None, None)
            value: str | bytes
            if utf8:
                value = raw = b'"' + b"".join(parts) + b'"'
            else:
                value = escaped = '"' + "".join(parts) + '"'
            self._whole[key] = (text, escaped, raw)
            self._whole.move_to_end(key)
            if len(self._whole) > WHOLE_ENTRIES:
                self._whole.popitem(last=False)
        return value

    def _by_blocks(self, text: str, utf8: bool) -> list[Any]:
        """The escaped text without its quotes, in parts: str, or UTF-8 bytes when ``utf8``.
        A block keeps the form it was asked for (the bytes alone on the wire path)."""
        head = len(text) % _BLOCK_CHARS
        parts: list[Any] = []
        if head:
            escaped_head = _escape_json_string(text[:head])[1:-1]
            parts.append(escaped_head.encode("utf-8") if utf8 else escaped_head)
        blocks = self._blocks
        form = 2 if utf8 else 1
        try:
            for start in range(head, len(text), _BLOCK_CHARS):
                block = text[start:start + _BLOCK_CHARS]
                key = fingerprint(block)
                entry = blocks.get(key)
                if entry is not None and entry[0] == block:
                    blocks.move_to_end(key)
                    if entry[form] is not None:
                        parts.append(entry[form])
                        continue
                elif entry is not None:  # another block with the same fingerprint: replace it
                    self._block_chars -= _size(entry)
                    entry = None
                escaped = (entry[1] if entry is not None and entry[1] is not None
                           else _escape_json_string(block)[1:-1])
                new: tuple[str, str | None, bytes | None]
                if utf8:
                    # UnicodeEncodeError on a lone surrogate, as encoding the whole would raise
                    raw = escaped.encode("utf-8")
                    new = (block, entry[1] if entry is not None else None, raw)
                else:
                    new = (block, escaped, entry[2] if entry is not None else None)
                if entry is not None:
                    self._block_chars -= _size(entry)
                blocks[key] = new
                blocks.move_to_end(key)
                self._block_chars += _size(new)
                parts.append(new[form])
        finally:
            while self._block_chars > _BLOCK_BUDGET_CHARS:
                _, dropped = blocks.popitem(last=False)
                self._block_chars -= _size(dropped)
        return parts


def _size(entry: tuple[str, str | None, bytes | None]) -> int:
    """What a block entry counts against ``_BLOCK_BUDGET_CHARS``."""
    return (len(entry[0]) + (len(entry[1]) if entry[1] is not None else 0)
            + (len(entry[2]) if entry[2] is not None else 0))


_ESCAPE_MEMO = _EscapeMemo()


def dumps_json(obj: Any, *, sort_keys: bool = False,
               separators: tuple[str, str] = (", ", ": ")) -> str:
    """``json.dumps(obj, ensure_ascii=False, sort_keys=..., separators=...)``, reusing the escaped
    form of recently encoded long strings (see above).

    Args:
        obj: any JSON-serialisable object.
        sort_keys: sort object keys (canonical form).
        separators: (item separator, key separator), as for ``json.dumps``.

    Returns:
        The JSON text, identical to what ``json.dumps`` returns for the same arguments.
    """
    if _c_make_encoder is None:  # no C accelerator (another interpreter): plain json.dumps
        return json.dumps(obj, ensure_ascii=False, sort_keys=sort_keys, separators=separators)
    item_sep, key_sep = separators
    # The arguments json.dumps passes to the C encoder for ensure_ascii=False, check_circular=True,
    # allow_nan=True, skipkeys=False, indent=None; only the string escaper differs.
    encode = _c_make_encoder({}, _default_encoder.default, _ESCAPE_MEMO, None, key_sep,
                             item_sep, sort_keys, False, True)
    return "".join(encode(obj, 0))



def _float_json(value: float) -> str:
    # What the C encoder writes for a float with allow_nan (float.__repr__ when finite).
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def utf8_json(obj: Any, *, sort_keys: bool = False,
              separators: tuple[str, str] = (", ", ": ")) -> list[bytes] | None:
    """``dumps_json(obj, ...).encode("utf-8")`` cut in parts (``b"".join`` them), for a plain
    value; None for any other.

    Plain is what JSON decodes back to itself, types and key order alike: dicts with str keys,
    lists, str, int, float, bool and None, no subclasses (a tuple comes back a list, an int key
    a str, an enum its value). A long string's part is the UTF-8 the escape memo remembers
    for it, so a fold's ~100 kB user message is neither copied into one text nor encoded again.
    None too when the value cannot be encoded (a lone surrogate, a circular list): the caller's
    ``dumps_json`` then raises what it always raised.
    """
    item_sep, key_sep = separators
    parts: list[bytes] = []
    small: list[str] = []
    memo = _ESCAPE_MEMO

    def string(text: str) -> None:
        if len(text) < _MEMO_MIN_CHARS:
            small.append(_escape_json_string(text))
            return
        if small:
            parts.append("".join(small).encode("utf-8"))
            small.clear()
        parts.append(memo.utf8(text))

    def walk(item: Any) -> bool:
        kind = type(item)
        if kind is str:
            string(item)
        elif kind is dict:
            if not item:
                small.append("{}")
                return True
            if not all(type(k) is str for k in item):
                return False
            small.append("{")
            for i, key in enumerate(sorted(item) if sort_keys else item):
                if i:
                    small.append(item_sep)
                string(key)
                small.append(key_sep)
                if not walk(item[key]):
                    return False
            small.append("}")
        elif kind is list:
            if not item:
                small.append("[]")
                return True
            small.append("[")
            for i, sub in enumerate(item):
                if i:
                    small.append(item_sep)
                if not walk(sub):
                    return False
            small.append("]")
        elif kind is bool:
            small.append("true" if item else "false")
        elif kind is int:
            small.append(int.__repr__(item))
        elif kind is float:
            small.append(_float_json(item))
        elif item is None:
            small.append("null")
        else:
            return False
        return True

    try:
        if not walk(obj):
            return None
        if small:
            parts.append("".join(small).encode("utf-8"))
    except (UnicodeEncodeError, ValueError, RecursionError):
        return None
    return parts
