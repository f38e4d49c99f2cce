"""Carrier handling: parse a fold's reply, render schema fields to headed text, clip to the carry cap."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from foldscope.core.arms import Arm
from foldscope.core.sections import SECTIONS, Section, heading_line, match_heading
from foldscope.core.tokens import estimate_tokens

ParseStatus = Literal["ok", "plain", "repaired", "salvaged", "raw_text", "empty"]
"""How a reply became a carrier.

- ``ok``: valid JSON with every required property (or plain text for plain arms);
- ``plain``: a plain-text arm's reply, taken as is;
- ``repaired``: JSON that needed closing (truncated) or had properties missing;
- ``salvaged``: not JSON; string properties were recovered by pattern;
- ``raw_text``: nothing recoverable as JSON; the whole reply is carried as the summary;
- ``empty``: the reply was empty.
"""

PARSE_FAILURES: frozenset[str] = frozenset({"repaired", "salvaged", "raw_text", "empty"})
"""Statuses that count as the arm's own schema-parse failure on the row."""


@dataclass(frozen=True)
class ParsedReply:
    """The fields recovered from a schema reply and how they were recovered."""

    fields: dict[str, str]
    status: ParseStatus
    recovery: str


@dataclass(frozen=True)
class FoldCarrier:
    """What one fold carries forward, with the measurements recorded on the fold."""

    text: str
    parse_status: ParseStatus
    recovery: str
    clipped_chars: int
    headings_carried: int
    fill_fraction: float | None
    field_chars: dict[str, int]
    tokens: int = -1
    """``estimate_tokens(text)``, or -1 when not measured."""


def _close_json(text: str) -> str:
    """Close an unterminated JSON object: an open string, then open brackets, innermost first."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]" and stack:
            stack.pop()
    tail = ("\\" if escaped else "") + ('"' if in_string else "")
    return text + tail + "".join(reversed(stack))


def close_json(text: str) -> str:
    """Close an unterminated JSON object (a reply cut at its budget) so it can be read as far as
    it went: an open string, then open brackets, innermost first."""
    return _close_json(text)


_STRING_PROP_RE = r'"{name}"\s*:\s*"((?:[^"\\]|\\.)*)'


def parse_schema_reply(arm: Arm, content: str) -> ParsedReply:
    """Recover a schema arm's fields from a reply, saying how.

    A parse failure is the arm's own behaviour, so this never raises: it recovers what it can
    and reports the route it took.

    Args:
        arm: a schema arm.
        content: the reply's message content, exactly as returned.

    Returns:
        The carried string fields (missing ones as "") with a status and a recovery note.
    """
    names = [f.name for f in arm.carried_fields]
    if not content.strip():
        return ParsedReply({n: "" for n in names}, "empty", "empty reply")
    text = content.strip()
    if text.startswith("```"):  # fenced JSON: strip the fence, a common model habit
        text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text)
    start = text.find("{")
    for candidate, how in _json_candidates(text[start:] if start >= 0 else ""):
        try:
            obj = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if not isinstance(obj, dict):
            continue
        fields = {n: obj[n] if isinstance(obj.get(n), str) else _stringify(obj.get(n)) for n in names}
        missing = [n for n in (f.name for f in arm.fields) if n not in obj]
        if how or missing:
            notes = [how] if how else []
            if missing:
                notes.append("missing " + ", ".join(missing))
            return ParsedReply(fields, "repaired", "; ".join(notes))
        return ParsedReply(fields, "ok", "")
    found: dict[str, str] = {}
    for name in names:
        m = re.search(_STRING_PROP_RE.format(name=re.escape(name)), text, re.S)
        if m:
            found[name] = _unescape(m.group(1))
    if found:
        return ParsedReply({n: found.get(n, "") for n in names}, "salvaged",
                           "recovered " + ", ".join(found) + " by pattern")
    first = names[0] if names else "summary"
    return ParsedReply({n: (content if n == first else "") for n in names}, "raw_text",
                       f"not JSON; whole reply carried as {first}")


def _json_candidates(body: str, max_cuts: int = 8) -> Iterator[tuple[str, str]]:
    """Yield JSON texts to try: as given, then closed, then cut back before a dangling member."""
    if not body:
        return
    yield (body[: body.rfind("}") + 1] if "}" in body else body), ""
    candidate = body
    for _ in range(max_cuts):
        yield _close_json(candidate), "closed truncated JSON"
        cut = candidate.rfind(",")
        if cut <= 0:
            return
        candidate = candidate[:cut]


def _stringify(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def _unescape(raw: str) -> str:
    try:
        text: str = json.loads(f'"{raw}"')
        return text
    except json.JSONDecodeError:
        return raw.replace('\\"', '"').replace("\\n", "\n")


def render_fields(arm: Arm, fields: dict[str, str]) -> str:
    """Render a schema arm's carried fields back to headed text for the next fold.

    Fields tied to a fixed section render under that section's heading; a lone untied field
    (j, p, t, n, g) is carried as its own text, which keeps whatever headings the model wrote.
    """
    carried = arm.carried_fields
    if len(carried) == 1 and carried[0].section is None:
        return fields.get(carried[0].name, "").strip()
    parts = []
    for spec in carried:
        heading = heading_line(spec.section) if spec.section else f"## {spec.name.replace('_', ' ').capitalize()}"
        parts.append(f"{heading}\n{fields.get(spec.name, '').strip()}".rstrip())
    return "\n\n".join(parts)


def clip_to_cap(text: str, cap_tokens: int) -> tuple[str, int]:
    """Clip a carrier to the carry cap at a line boundary.

    Whole lines are kept from the top while the estimate stays within the cap, so no value is
    cut in half; a single over-long first line is cut at a character boundary.

    Returns:
        The clipped text and the number of characters removed.
    """
    clipped, removed, _ = _clip(text, cap_tokens)
    return clipped, removed


def _clip(text: str, cap_tokens: int) -> tuple[str, int, int]:
    """``clip_to_cap``, with the clipped text's estimate when it was measured (an unclipped
    text's is), else -1."""
    tokens = estimate_tokens(text)
    if tokens <= cap_tokens:
        return text, 0, tokens
    kept: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        cost = estimate_tokens(line)
        if used + cost > cap_tokens:
            break
        kept.append(line)
        used += cost
    clipped = "".join(kept)
    if not clipped:
        # Even the first line is over the cap: cut it by characters as the only way to carry anything.
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if estimate_tokens(text[:mid]) <= cap_tokens:
                lo = mid
            else:
                hi = mid - 1
        clipped = text[:lo]
    return clipped.rstrip("\n"), len(text) - len(clipped.rstrip("\n")), -1


def carried_sections(text: str) -> tuple[Section, ...]:
    """Which of the five fixed sections have a heading in the carrier, in their fixed order."""
    seen = set()
    if "#" not in text:  # no heading without one (sections.match_heading)
        return ()
    for line in text.splitlines():
        section = match_heading(line)
        if section is not None:
            seen.add(section.key)
    return tuple(s for s in SECTIONS if s.key in seen)


def headings_carried(text: str) -> int:
    """Count how many of the five fixed sections have a heading in the carrier (0-5)."""
    return len(carried_sections(text))


def carry_forward(arm: Arm, content: str, token_scale: float = 1.0) -> FoldCarrier:
    """Turn one fold's reply into the carrier the next fold receives.

    Args:
        arm: the row's arm.
        content: the reply's message content.
        token_scale: the model's tokens per estimated token (its server's tokenizer against
            the estimator, 1 when unknown): the carry cap is in the model's tokens.

    Returns:
        The clipped carrier with its parse status, recovery note and measurements.
    """
    fill: float | None = None
    field_chars: dict[str, int] = {}
    if arm.representation == "plain":
        status: ParseStatus = "plain" if content.strip() else "empty"
        text, recovery = content.strip(), ""
    else:
        parsed = parse_schema_reply(arm, content)
        status, recovery = parsed.status, parsed.recovery
        field_chars = {k: len(v) for k, v in parsed.fields.items()}
        ceiling = arm.declared_ceiling
        if ceiling:
            fill = sum(field_chars.values()) / ceiling
        if arm.carry_raw_json:
            text = content.strip()
        else:
            text = render_fields(arm, parsed.fields)
    cap = arm.carry_cap if token_scale == 1.0 else max(1, int(arm.carry_cap / token_scale))
    clipped, removed, tokens = _clip(text, cap)
    return FoldCarrier(clipped, status, recovery, removed, headings_carried(clipped), fill,
                       field_chars, tokens)
