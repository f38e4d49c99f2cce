"""System prompts, reply-shape instructions and field descriptions the arms are built from.

The study's protocol (DESIGN.md, "The study protocol"): arms j, q, m, p, t and u share one system
prompt byte for byte, and it asks for the five named sections; o has its own (unstructured prose).
The per-arm user instruction only names the reply's form (a JSON object, or plain text with the
section names as headings), so moving from one arm to the next never moves the section request.
"""

from __future__ import annotations

import hashlib

from foldscope.core.sections import SECTIONS, heading_line

SECTIONS_REQUEST = "\n".join(
    ["Organise the new summary in exactly these five named sections, in this order:"]
    + [heading_line(s) for s in SECTIONS])
"""The request for the five named sections, part of the shared system prompt."""

SHARED_SYSTEM_PROMPT = (
    "You keep the running summary of a long agent session. Each turn you receive the previous "
    "summary and the next segment of the conversation, and you return a new summary that "
    "replaces the old one. The agent continues from your summary alone: the conversation will "
    "not be shown again, so anything you leave out is lost.\n\n" + SECTIONS_REQUEST
)
"""The one system prompt shared byte for byte by every arm except o; it asks for the sections."""

PROSE_SYSTEM_PROMPT = (
    "You keep the running summary of a long agent session. Each turn you receive the previous "
    "summary and the next segment of the conversation, and you return a new summary that "
    "replaces the old one. The agent continues from your summary alone. Write plain prose."
)
"""Arm o's own system prompt: plain text, no headings."""

SCHEMA_INSTRUCTION = "Return the new summary as a JSON object that matches the response schema."
HEADED_INSTRUCTION = ("Write the new summary as plain text, with each section's name as a "
                      "markdown heading.")
PROSE_INSTRUCTION = "Write the new summary as plain prose, without headings or lists."

LONG_FIELD_DESCRIPTION = (
    "This field must hold the complete running summary of the agent session so far, written so "
    "that the agent can continue its work from this field alone: the conversation it summarises "
    "will not be shown again, and anything left out of this field is lost for good. Organise the "
    "text under the five named sections, in this order: Progress (what has been done so far and "
    "where the task stands now), Facts and values (every concrete value the session has produced "
    "or relied on), Decisions and constraints (what was decided, by whom, and the limits that "
    "still apply), Failures (what went wrong, the error text that showed it, and the cause when "
    "it is known) and Open items (what remains to be done, and what is waiting on whom). Under "
    "Facts and values, copy every identifier exactly as it was written, character for character: "
    "port numbers, file and directory paths, URLs and host names, DNS zones, dates, times and "
    "time zones, version and release tags, UUIDs, key ids and other ids, user and on-call "
    "handles, team and department names in their original script, counts together with their "
    "units, and any value an operator stated. Give each value beside the name of what it is, one "
    "per line, so that a later reader can find it by that name. Never round, abbreviate, "
    "translate or reformat a value, and never replace a value with a description of it: write "
    "the port, not 'the port that was configured'. Keep values from earlier summaries unless the "
    "conversation has replaced them; when a value changes, keep the new one and say which it "
    "replaced. Prefer listing concrete values over describing the conversation, and leave out "
    "greetings, tool-call mechanics and log lines that carry no value. If space runs short, "
    "shorten the prose of Progress and Failures first, and keep every value in Facts and values "
    "exactly as it was written."
)
"""Arm p's field description (the study's is 1,835 characters): what the field must hold."""


def prompt_digest(text: str) -> str:
    """Return the short SHA-256 digest recorded on every row for its arm's system prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
