"""Untrusted text as data: store any reply, show any model or scenario text literally, and the
one rule for what an identifier or scenario field may contain.

``literal`` is the one function every screen, report, notification and CLI line uses to show
model or scenario text; ``check_field`` is the one rule ids and scenario fields must pass before
anything is planned.
"""

from __future__ import annotations

import json
import re
import unicodedata

_SURROGATE_RE = re.compile("[\ud800-\udfff]")

BIDI_CONTROLS = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)]     # LRE RLE PDF LRO RLO
    + [chr(c) for c in range(0x2066, 0x206A)]   # LRI RLI FSI PDI
    + ["\u200e", "\u200f", "\u061c"])           # LRM RLM ALM
"""Characters that reorder how a terminal shows the text around them (Trojan Source)."""

ID_MAX_CHARS = 200
"""Longest model id, arm id, scenario name, fact label or kind."""

VALUE_MAX_CHARS = 1000
"""Longest planted value or scenario description."""

# Control characters (ESC, CSI U+009B and the other C1 codes included) and bidi controls become
# visible stand-ins, one character for one, so highlight offsets stay exact: C0 codes their
# Unicode "control pictures" (ESC shows as ␛), DEL ␡, C1 codes and bidi controls U+FFFD, a tab
# one space. Lone surrogates (unencodable) become U+FFFD too.
_LITERAL_TABLE: dict[int, int] = {c: 0x2400 + c for c in range(0x20)}
_LITERAL_TABLE.update({0x09: 0x20, 0x7F: 0x2421, **{c: 0xFFFD for c in range(0x80, 0xA0)}})
_LITERAL_TABLE.update({ord(c): 0xFFFD for c in BIDI_CONTROLS})
_LITERAL_TABLE.update({c: 0xFFFD for c in range(0xD800, 0xE000)})
_LITERAL_KEEP_NEWLINES = {k: v for k, v in _LITERAL_TABLE.items() if k != 0x0A}


def cost_text(usd: float, unpriced_calls: int = 0) -> str:
    """A spend as shown: dollars to four places, or ``unknown`` when any call of it was not
    priced (the provider reported no cost and the model has no prices): never a made-up $0."""
    return "unknown" if unpriced_calls else f"${usd:.4f}"


def storable(text: str) -> str:
    """Replace lone UTF-16 surrogates (legal in JSON escapes, unencodable in UTF-8) with U+FFFD.

    Everything else, markup and escape sequences included, is kept exactly: it is data, and the
    UI shows it literally.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)
    return text


def literal(text: str, *, keep_newlines: bool = True) -> str:
    """Text as it may be shown: nothing in it can drive a terminal or reorder what surrounds it.

    Replaces control characters, bidi controls and lone surrogates by visible stand-ins, one
    character for one (so offsets into the original still hold). Markup is not touched here:
    widgets show the result as ``Text``/``Content``, never parsed.

    Args:
        text: model output, scenario text, an id — anything from outside.
        keep_newlines: keep line breaks (multi-line views); False shows them as ␊ (one line).

    Returns:
        The text to display.
    """
    if text.isprintable():  # every character the tables replace is unprintable
        return text
    return text.translate(_LITERAL_KEEP_NEWLINES if keep_newlines else _LITERAL_TABLE)


def unsafe_character(text: str) -> str | None:
    """Describe the first character an id or scenario field may not contain, or None.

    Refused: C0 and C1 control characters (newline, tab and ESC included; U+009B is an 8-bit
    CSI), DEL, bidi controls, lone surrogates, and any other unassigned or format-breaking
    code point that ``str.isprintable`` rejects except ordinary spaces.
    """
    for i, ch in enumerate(text):
        code = ord(ch)
        if ch in BIDI_CONTROLS:
            return f"bidi control U+{code:04X} at position {i}"
        if code < 0x20 or 0x7F <= code < 0xA0:
            return f"control character U+{code:04X} at position {i}"
        if 0xD800 <= code < 0xE000:
            return f"lone surrogate U+{code:04X} at position {i}"
        if not ch.isprintable() and ch != " ":
            return f"unprintable character U+{code:04X} at position {i}"
    return None


def check_field(value: str, *, limit: int) -> str:
    """The one rule for ids and scenario fields: printable, one line, at most ``limit`` chars.

    Written to be used as (or from) a pydantic validator: the message names the problem, the
    caller's error names the field.

    Args:
        value: the text to check.
        limit: the longest allowed length in characters.

    Returns:
        ``value`` unchanged.

    Raises:
        ValueError: one line saying what is wrong (the value itself is not repeated).
    """
    if len(value) > limit:
        raise ValueError(f"must be at most {limit} characters (got {len(value)})")
    problem = unsafe_character(value)
    if problem:
        raise ValueError(f"must be one line of printable text without control or bidi characters "
                         f"(found {problem})")
    return value


_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in [0x7F, *range(0x80, 0xA0), *map(ord, BIDI_CONTROLS)]}


def json_text(obj: object, *, indent: int | None = None) -> str:
    """JSON as foldscope prints it: UTF-8 text kept readable, but nothing a terminal acts on.

    ``json.dumps`` already escapes C0 controls (ESC included); DEL, C1 controls (U+009B, an
    8-bit CSI) and bidi controls are escaped here too. The document parses to the same data.

    Args:
        obj: plain data.
        indent: as for ``json.dumps``.

    Returns:
        The JSON text.
    """
    return json.dumps(obj, ensure_ascii=False, indent=indent).translate(_JSON_ESCAPES)


_CONFUSABLES = str.maketrans({
    "ł": "l", "Ł": "L", "ı": "i", "ſ": "s", "ø": "o", "Ø": "O", "đ": "d", "ħ": "h",
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ɡ": "g", "ν": "v", "ο": "o", "α": "a", "ε": "e",
    "ι": "i", "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "А": "A", "Е": "E", "О": "O",
    "Р": "P", "С": "C", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S", "ℓ": "l", "−": "-", "‐": "-",
    "‑": "-", "–": "-", "／": "/", "∕": "/", "⁄": "/",
})


def skeleton(text: str) -> str:
    """What an identifier looks like, for telling look-alikes apart: compatibility forms
    folded, accents dropped, common homoglyphs (Cyrillic and Greek letters, ``ł``, dashes,
    slashes) mapped to ASCII, case folded. Two ids with one skeleton read as the same id."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_CONFUSABLES))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return plain.translate(_CONFUSABLES).casefold()
