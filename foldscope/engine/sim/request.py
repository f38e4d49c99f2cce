"""How a simulated model reads a chat request body: what is asked (fold, recall, other) and in
what shape (JSON fields with ceilings, headed plain text, or prose)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from foldscope.core import messages as m
from foldscope.core.sections import match_heading
from foldscope.core.tokens import FLAT_USAGE

USAGE = FLAT_USAGE
"""The simulated provider's usage count: the token rule at a flat rate (``core.tokens``)."""
DEFAULT_MAX_TOKENS = 4096
_SEGMENT_LABEL_RE = re.compile(r"Conversation (segments? [\d\-–]+ of \d+):")


@dataclass(frozen=True)
class StringField:
    """One string property of a requested JSON object."""

    name: str
    max_length: int | None
    description: str


@dataclass
class Shape:
    """The reply shape a request asks for.

    ``kind`` is ``json`` (a JSON object), ``headed`` (plain text under headings) or ``prose``.
    """

    kind: str
    strings: list[StringField] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)
    other_props: dict[str, Any] = field(default_factory=dict)
    """Non-string, non-array properties (name → schema), filled with neutral values."""
    required: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    """Property order as declared."""

    @property
    def divided(self) -> bool:
        """True for ≥2 string fields or headed text: the request itself partitions the carrier."""
        return self.kind == "headed" or (self.kind == "json" and len(self.strings) >= 2)


@dataclass
class SimRequest:
    """A parsed request: ``kind`` is ``fold``, ``recall`` or ``other``."""

    kind: str
    model: str
    shape: Shape
    budget_chars: int
    previous: str = ""
    segments: str = ""
    segment_label: str = ""
    labels: list[str] = field(default_factory=list)
    recall_summary: str = ""
    prompt_tokens: int = 0
    """The prompt's usage as the simulated provider counts it (``USAGE``)."""


def message_text(msg: dict) -> str:
    """Return a message's text (string content or the text parts of a content list)."""
    content = msg.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def parse_shape(response_format: dict | None, instruction_text: str) -> Shape:
    """Work out the requested reply shape.

    Args:
        response_format: the body's ``response_format`` (or None).
        instruction_text: system prompt plus the user text outside the fenced blocks; headings
            in it mean "headed plain text" (headings inside a carried summary do not count).

    Returns:
        The shape.
    """
    if isinstance(response_format, dict) and response_format.get("type") in ("json_schema",
                                                                             "json_object"):
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        props = schema.get("properties") or {}
        shape = Shape(kind="json", required=list(schema.get("required") or []),
                      order=list(props))
        for name, prop in props.items():
            ptype = prop.get("type") if isinstance(prop, dict) else None
            if ptype == "string":
                ml = prop.get("maxLength")
                shape.strings.append(StringField(name, ml if isinstance(ml, int) else None,
                                                 str(prop.get("description") or "")))
            elif ptype == "array":
                shape.arrays.append(name)
            else:
                shape.other_props[name] = prop
        if not props:  # json_object without a schema: one summary field
            shape.strings.append(StringField("summary", None, ""))
            shape.order = ["summary"]
            shape.required = ["summary"]
        return shape
    headings = {s.key for s in (match_heading(line) for line in instruction_text.splitlines()) if s}
    return Shape(kind="headed" if len(headings) >= 2 else "prose")


def parse_request(body: dict) -> SimRequest:
    """Parse a chat completion body into what a simulated summariser needs.

    Args:
        body: the request JSON.

    Returns:
        The parsed request.
    """
    msgs = [x for x in body.get("messages") or [] if isinstance(x, dict)]
    texts = [message_text(x) for x in msgs]
    users = [message_text(x) for x in msgs if x.get("role") == "user"]
    user = users[-1] if users else (texts[-1] if texts else "")
    system = "\n".join(message_text(x) for x in msgs if x.get("role") in ("system", "developer"))
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or DEFAULT_MAX_TOKENS
    budget = USAGE.chars_for(int(max_tokens))
    prompt_tokens = USAGE.count(texts)
    model = str(body.get("model") or "")
    rf = body.get("response_format")

    if m.RECALL_SUMMARY_BEGIN in user and m.QUESTIONS_HEADER in user:
        summary = m.between(user, m.RECALL_SUMMARY_BEGIN, m.RECALL_SUMMARY_END) or ""
        questions = user.split(m.QUESTIONS_HEADER, 1)[1]
        labels = [ln.strip()[2:].strip() for ln in questions.splitlines()
                  if ln.strip().startswith("- ")]
        return SimRequest("recall", model, parse_shape(rf, ""), budget, labels=labels,
                          recall_summary=summary, prompt_tokens=prompt_tokens)

    if m.SUMMARY_BEGIN in user and m.SEGMENT_BEGIN in user:
        previous = m.between(user, m.SUMMARY_BEGIN, m.SUMMARY_END) or ""
        if previous.strip() == m.EMPTY_SUMMARY:
            previous = ""
        segments = m.between(user, m.SEGMENT_BEGIN, m.SEGMENT_END) or ""
        # Instructions live outside the fences: after the segment block, and in the system prompt.
        tail = user.rsplit(m.SEGMENT_END, 1)[-1]
        label = _SEGMENT_LABEL_RE.search(user)
        return SimRequest("fold", model, parse_shape(rf, system + "\n" + tail), budget,
                          previous=previous, segments=segments,
                          segment_label=label.group(1) if label else "this segment",
                          prompt_tokens=prompt_tokens)

    return SimRequest("other", model, parse_shape(rf, system + "\n" + user), budget,
                      prompt_tokens=prompt_tokens)
