"""The five fixed carrier sections and their headings."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One fixed section of a carrier: a field key and the heading it renders as."""

    key: str
    heading: str


SECTIONS: tuple[Section, ...] = (
    Section("progress", "Progress"),
    Section("facts_and_values", "Facts and values"),
    Section("decisions_and_constraints", "Decisions and constraints"),
    Section("failures", "Failures"),
    Section("open_items", "Open items"),
)
"""The five sections every headed carrier is asked for, in order."""

OTHER = Section("other", "Other")
"""Catch-all for carrier text that sits outside any of the five headings."""

_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s*(?P<title>.+?)\s*#*\s*$")


def heading_line(section: Section) -> str:
    """Return the markdown heading line a section renders as (``## Progress``)."""
    return f"## {section.heading}"


def match_heading(line: str) -> Section | None:
    """Return the fixed section a heading line names, or None.

    Matching is case-insensitive and tolerant of trailing colons, so ``### FACTS AND VALUES:``
    counts as the facts section.
    """
    if "#" not in line[:4]:
        # A heading's first '#' comes after at most three spaces (_HEADING_RE): the regex
        # could not match, and most lines of a carrier are no heading.
        return None
    m = _HEADING_RE.match(line)
    if not m:
        return None
    title = m.group("title").rstrip(":").strip().casefold()
    for section in SECTIONS:
        if title == section.heading.casefold() or title == section.key.replace("_", " "):
            return section
    return None
