"""Reading untrusted JSON and TOML with bounded nesting and number size.

Python's parsers recurse once per level of nesting (a reply or a sweep file nested 200k deep
raises ``RecursionError``) and its JSON parser turns any digit string into an ``int`` (a
4,000-digit usage count overflows the first float or SQLite integer it meets). Everything read
from outside (model replies, cache entries, sweep, scenario and settings files, evidence
manifests) is parsed here: nesting is measured before the parser runs, integers of 2^63 or more
and over-long number literals are refused while parsing, and every refusal is a ``ValueError``
(``NestingError``) with one line saying what was too big.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 64
"""The deepest nesting accepted (arrays and objects/tables, counted together)."""

MAX_INT = 2**63
"""Integers must lie strictly between -MAX_INT and MAX_INT (what SQLite and C code can hold)."""

MAX_NUMBER_CHARS = 64
"""Longest number literal accepted (a float with more digits than this is not a measurement)."""


class NestingError(ValueError):
    """Input nested too deep or holding a number too large (the message is one line)."""


_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_TOML_SKIP = re.compile(
    r"'''[\s\S]*?'''"                       # multi-line literal string
    r'|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*"""'  # multi-line basic string
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"'        # basic string
    r"|'[^'\n]*'"                           # literal string
    r"|#[^\n]*")                            # comment
_KEY_RUN = re.compile(r"(?<![\w.\- \t])[\w.\- \t]+")
"""A run of the characters a bare dotted key is written in (each run found once: it starts where
the one before ended)."""


def _bracket_depth(brackets: str, limit: int) -> int:
    """The deepest running depth of a string of brackets, stopping as soon as it passes
    ``limit`` (so a hostile input costs at most ``limit`` steps past its head)."""
    if len(brackets) <= limit:
        return min(len(brackets), limit)
    depth = deepest = 0
    for ch in brackets:
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        else:
            depth -= 1
    return deepest


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep ``text`` nests arrays and objects (brackets inside strings do not count);
    a value past ``limit`` means "more than limit"."""
    if text.count("[") + text.count("{") <= limit:  # the usual case: nothing to measure
        return 0
    return _bracket_depth(_NOT_BRACKET.sub("", _JSON_STRING.sub("", text)), limit)


def _int(literal: str) -> int:
    digits = literal.lstrip("-")
    if len(digits) > 19:
        raise NestingError(f"integer with {len(digits)} digits (at most 19 accepted)")
    value = int(literal)
    if not -MAX_INT < value < MAX_INT:
        raise NestingError("integer out of range (must be below 2^63 in size)")
    return value


def _float(literal: str) -> float:
    if len(literal) > MAX_NUMBER_CHARS:
        raise NestingError(f"number literal of {len(literal)} characters "
                           f"(at most {MAX_NUMBER_CHARS} accepted)")
    return float(literal)


def loads_json(text: str | bytes, *, max_depth: int = MAX_DEPTH, strict: bool = True) -> Any:
    """``json.loads`` for untrusted text: nesting at most ``max_depth`` deep, integers below
    2^63, number literals at most ``MAX_NUMBER_CHARS`` long. ``NaN`` and ``Infinity`` parse as
    floats (callers that need finite numbers check them; see ``finite_number``). ``strict``
    False lets control characters (a raw newline) stand inside strings, as ``json.loads`` does.

    Raises:
        NestingError: too deep, or a number too large (a ``ValueError``).
        json.JSONDecodeError: not JSON (also a ``ValueError``).
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="surrogatepass")
    depth = json_depth(text, max_depth)
    if depth > max_depth:
        raise NestingError(f"JSON nested more than {max_depth} deep")
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, strict=strict)
    except RecursionError:  # cannot happen after the depth check; never let it escape
        raise NestingError(f"JSON nested more than {max_depth} deep") from None


def toml_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep a TOML text nests, at most: its arrays and inline tables, plus the tables its
    longest dotted key or table header opens (``a.b.c = 1`` nests three deep; strings and
    comments skipped, a quoted segment counted). An upper bound, so the parser never meets a
    key of 20,000 segments (``tomllib`` takes seconds over one before anything can refuse it);
    ``check_nesting`` measures the parsed value exactly."""
    if text.count("[") + text.count("{") + text.count(".") < limit:  # nothing to measure
        return 0
    bare = _TOML_SKIP.sub("", text)
    depth = _bracket_depth(_NOT_BRACKET.sub("", bare), limit)
    if depth > limit:
        return depth
    return depth + max((run.count(".") for run in _KEY_RUN.findall(bare)), default=0)


def loads_toml(text: str, *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """``tomllib.loads`` for untrusted text: arrays, inline tables and dotted keys or table
    headers nested at most ``max_depth`` deep, integers below 2^63.

    Raises:
        NestingError: too deep, or an integer too large (a ``ValueError``).
        tomllib.TOMLDecodeError: not TOML (also a ``ValueError``).
    """
    if toml_depth(text, max_depth) > max_depth:
        raise NestingError(f"TOML nested more than {max_depth} deep")
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise NestingError(f"TOML nested more than {max_depth} deep") from None
    check_nesting(data, max_depth=max_depth)
    return data


def check_nesting(value: Any, *, max_depth: int = MAX_DEPTH) -> None:
    """Refuse an already-parsed value nested deeper than ``max_depth`` or holding an integer
    of 2^63 or more (iteratively: a deep value cannot exhaust the stack here).

    Raises:
        NestingError: what was too deep or too large.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= max_depth:
                raise NestingError(f"nested more than {max_depth} deep")
            children: Iterable[Any] = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, int) and not isinstance(item, bool) and not -MAX_INT < item < MAX_INT:
            raise NestingError("integer out of range (must be below 2^63 in size)")
