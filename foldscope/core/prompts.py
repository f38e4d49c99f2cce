"""System prompts and reply-shape instructions the arms are built from."""

from __future__ import annotations

import hashlib

from foldscope.core.messages import headings_instruction

SHARED_SYSTEM_PROMPT = (
    "You keep the running summary of a long agent session. Each turn you receive the previous "
    "summary and the next segment of the conversation, and you return a new summary that "
    "replaces the old one. The agent continues from your summary alone: the conversation will "
    "not be shown again, so anything you leave out is lost."
)
"""The one system prompt shared byte for byte by every arm except o."""

PROSE_SYSTEM_PROMPT = (
    "You keep the running summary of a long agent session. Each turn you receive the previous "
    "summary and the next segment of the conversation, and you return a new summary that "
    "replaces the old one. The agent continues from your summary alone. Write plain prose."
)
"""Arm o's own system prompt: plain text, no headings."""

SCHEMA_INSTRUCTION = "Return the new summary as a JSON object that matches the response schema."
HEADED_INSTRUCTION = headings_instruction()
PROSE_INSTRUCTION = "Write the new summary as plain prose, without headings or lists."

LONG_FIELD_DESCRIPTION = (
    "The complete running summary of the session so far. Organise it under the headings "
    "Progress, Facts and values, Decisions and constraints, Failures and Open items. Copy every "
    "identifier exactly as written: ports, paths, dates and times, versions, handles, hostnames, "
    "keys and ids. Prefer listing concrete values over describing the conversation."
)
"""The long natural-language field description that distinguishes arm p from arm j."""


def prompt_digest(text: str) -> str:
    """Return the short SHA-256 digest recorded on every row for its arm's system prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
