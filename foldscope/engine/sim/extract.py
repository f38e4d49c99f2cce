"""How a simulated model reads text: planted-fact lines, transcript turns and summary sections.

Transcript convention (scenario generators follow it): turns start ``[assistant] …``,
``[operator] …`` or ``[tool result: name]`` (then output lines); filler log lines start with an
ISO timestamp and an upper-case level and are noise. A fact is a ``<label>: <value>`` line inside
tool output, or a turn containing ``the <label> is <value>``. Summaries carry facts as
``- label: value`` lines.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Generic, TypeVar

from rapidfuzz import fuzz, process

from foldscope.core.nesting import loads_json
from foldscope.core.sections import SECTIONS, match_heading
from foldscope.core.shapes import PATH

_V = TypeVar("_V")

LOG_LINE_RE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?\s+[A-Z]{3,8}\b")
TURN_RE = re.compile(r"^\s*\[(?P<role>assistant|operator|user|system)\]\s*(?P<text>.*)$", re.I)
TOOL_RE = re.compile(r"^\s*\[tool result:\s*(?P<name>[^\]]+)\]\s*(?P<text>.*)$", re.I)
# A label is short and starts with a letter; the value is the rest of the line.
# Both groups are greedy on purpose. Greediness never changes *whether* an anchored pattern
# matches, only where a group ends: a label cannot contain ":", so it always ends at the first
# colon, and the groups differ from lazy ones only by trailing spaces, which callers strip.
# Lazy groups matched the same lines ~3x slower (a backtracking step per character), and this
# runs on every line of every carrier.
KV_RE = re.compile(r"^\s*(?:[-*•]\s+)?(?P<label>[^\W\d_][\w .'/()@#+\-]{0,59})\s*:\s+(?P<value>\S.*)\s*$")
# Commas and colons are excluded from labels so "For the record, the X is Y" binds X, not "record".
# The label stays lazy (the first " is " binds); the value is greedy for the reason above.
THE_IS_RE = re.compile(r"\bthe (?P<label>[^,;:.!?\[\]]{1,60}?) is (?P<value>\S.*)\s*$", re.I)
PATH_RE = re.compile(PATH)
"""Paths in a line: foldscope's one shape of a path (``core.shapes.PATH``); a simulated model
notices and lists the absolute ones of two or more parts (:func:`absolute_paths`)."""

_NON_FACT_SECTIONS = {"progress", "decisions_and_constraints", "failures", "open_items"}
MAX_LABEL_WORDS = 6
MAX_VALUE_WORDS = 6
DECISION_WORDS = ("decid", "decision", "we will", "we'll", "must", "agreed", "constraint",
                  "do not", "don't", "never", "only after", "plan is")
FAILURE_WORDS = ("error", "failed", "failure", "refused", "denied", "timed out", "crash")
OPEN_WORDS = ("todo", "to do", "next", "pending", "still need", "open question", "follow up",
              "follow-up", "later", "remaining")


@dataclass
class SegmentDigest:
    """What a sim noticed in one or more transcript segments."""

    facts: list[tuple[str, str]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    """Tool names, one per tool call, in order."""
    assistant_turns: int = 0
    operator_turns: int = 0
    log_lines: int = 0
    decisions: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def is_log_line(line: str) -> bool:
    """True for filler log lines (``2026-07-12T10:14:03.221Z INFO …``)."""
    return bool(LOG_LINE_RE.match(line))


def clean_value(value: str) -> str:
    """Strip a value and one final sentence period (``19 shards.`` → ``19 shards``)."""
    value = value.strip().strip("`\"'").strip()
    if value.endswith(".") and not value.endswith(".."):
        value = value[:-1].rstrip()
    return value


NOT_LABELS = frozenset({"error", "warning", "warn", "info", "debug", "note", "noted", "fatal",
                        "exception", "traceback", "hint", "caused by", "stderr", "stdout"})
"""Words that open diagnostic lines (``error: connection refused``), not labels of facts."""


def _ok(label: str, value: str) -> bool:
    return (0 < len(label.split()) <= MAX_LABEL_WORDS and bool(value)
            and label.casefold() not in NOT_LABELS
            and len(value.split()) <= MAX_VALUE_WORDS)


# A carrier's lines travel from fold to fold (a faithful summary re-reads most of its previous
# lines every fold), and matching one costs ~1 us, so line readings are memoised; a reading is a
# pure function of the line and an immutable tuple. 4096 short lines are a few hundred kB.
@lru_cache(maxsize=4096)
def _kv(line: str) -> tuple[str, str] | None:
    m = KV_RE.match(line)
    if not m:
        return None
    label, value = m.group("label").strip(), clean_value(m.group("value"))
    return (label, value) if _ok(label, value) else None


@lru_cache(maxsize=4096)  # prose lines come back every fold too (a describer's paragraphs)
def _the_is(text: str) -> tuple[str, str] | None:
    m = THE_IS_RE.search(text)
    if not m:
        return None
    label, value = m.group("label").strip(), clean_value(m.group("value"))
    return (label, value) if _ok(label, value) else None


def _summary_text(text: str) -> str:
    # A carrier may be a raw JSON envelope (arm f): read its string values as lines.
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = loads_json(stripped)  # bounded: a carrier nested deep is just text
        except ValueError:
            return text
        if isinstance(data, dict):
            parts = [v for v in data.values() if isinstance(v, str)]
            return "\n".join(parts)
    return text


def split_sections(text: str) -> dict[str, list[str]]:
    """Split headed text into lines per fixed section key (text outside headings → ``other``).

    Args:
        text: a summary.

    Returns:
        Section key → its non-empty lines, in order; unknown headings count as ``other``.
    """
    out: dict[str, list[str]] = {}
    current = "other"
    for line in _summary_text(text).splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):  # only such a line can be a heading: skip the regex otherwise
            section = match_heading(line)
            current = section.key if section is not None else "other"
            continue
        if stripped:
            out.setdefault(current, []).append(stripped)
    return out


def extract_facts(text: str) -> list[tuple[str, str]]:
    """Extract planted-fact pairs from transcript segments or from a summary.

    Args:
        text: segment text, a headed summary, a prose summary or a JSON envelope.

    Returns:
        ``(label, value)`` pairs in order of appearance; a label seen again keeps its latest
        value at its latest position (a fresh list the caller may change).
    """
    pairs = _FACTS.get(text)
    if pairs is None:
        pairs = tuple(_extract_facts(text))
        _FACTS.put(text, pairs)
    return list(pairs)


def _extract_facts(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    in_tool = False
    current = "other"
    for raw in _summary_text(text).splitlines():
        line = raw.strip()
        if not line:
            continue
        # The line is stripped, so each anchored pattern can only match if the first character
        # fits: a digit for a log line, "#" for a heading, "[" for a turn or tool result. Testing
        # it first skips three or four regex calls on most lines (summaries are mostly "- " lines).
        first = line[0]
        if first.isdecimal() and is_log_line(line):
            continue
        if first == "#":
            heading = match_heading(line)
            current = heading.key if heading is not None else "other"
            in_tool = False
            continue
        if first == "[" and TOOL_RE.match(line):
            in_tool = True
            continue
        turn = TURN_RE.match(line) if first == "[" else None
        if turn:
            in_tool = False
            pair = _the_is(turn.group("text"))
        elif current in _NON_FACT_SECTIONS:
            # Progress or decision prose in a summary is not a fact list; but a bulleted
            # ``- label: value`` line is a fact that overflowed into this section (notes are
            # never written in that shape), so it is read like one.
            pair = _kv(line) if line.startswith("- ") else None
        else:
            pair = _kv(line)
            if pair is not None and pair[1].casefold().startswith("the "):
                # "Noted: the X is Y." is a sentence about X, not a fact labelled "Noted".
                pair = _the_is(line) or pair
            elif pair is None and not in_tool:
                pair = _the_is(line)
        if pair is not None:
            found.append(pair)
    return dedupe_facts(found)


def dedupe_facts(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Keep one pair per label (case-insensitive): the latest value, at its latest position."""
    latest: dict[str, tuple[str, str]] = {}
    for label, value in pairs:
        key = label.casefold()
        latest.pop(key, None)
        latest[key] = (label, value)
    return list(latest.values())


def digest_segment(text: str) -> SegmentDigest:
    """Read transcript segment text: facts, tool calls, turns and notable lines.

    Args:
        text: one or more segments' transcript text.

    Returns:
        The digest (a fresh object the caller may change).
    """
    d = _SEGMENT_DIGESTS.get(text)
    if d is None:
        d = _read_segment(text)
        _SEGMENT_DIGESTS.put(text, d)
    return replace(d, facts=list(d.facts), tools=list(d.tools), decisions=list(d.decisions),
                   failures=list(d.failures), open_items=list(d.open_items), paths=list(d.paths))


class _TextMemo(Generic[_V]):
    """A small thread-safe LRU keyed by long texts, without hashing them.

    Every row of a sweep folds the same ~100k-character chunks, and reading one costs a couple
    of milliseconds of line-by-line regex work, so segment digests are memoised by the segment
    text (a digest is a pure function of it). Each request arrives as a new string object, and
    hashing it would read all 100k characters again (~25 us), so entries are keyed by length
    and edges and a hit is confirmed by comparing the whole text (a memcmp). The bound keeps at
    most ``entries`` texts (a few MB) alive. The values are shared: callers hand out copies.
    """

    def __init__(self, entries: int) -> None:
        self._entries = entries
        self._items: OrderedDict[tuple[int, str, str], tuple[str, _V]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(text: str) -> tuple[int, str, str]:
        return len(text), text[:64], text[-64:]

    def get(self, text: str) -> _V | None:
        key = self._key(text)
        with self._lock:
            item = self._items.get(key)
            if item is None or item[0] != text:
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, text: str, value: _V) -> None:
        key = self._key(text)
        with self._lock:
            self._items[key] = (text, value)
            self._items.move_to_end(key)
            while len(self._items) > self._entries:
                self._items.popitem(last=False)


_SEGMENT_DIGESTS: _TextMemo[SegmentDigest] = _TextMemo(32)
"""Digests of the last 32 segment texts: every chunk of a few scenarios and their catch-ups.
The cached digests are never handed out: callers get copies, so nothing can alter them."""

_FACTS: _TextMemo[tuple[tuple[str, str], ...]] = _TextMemo(64)
"""The fact pairs of the last 64 texts read (``extract_facts`` is a function of the text): a
fold's previous carrier is mostly one that another row's fold already read (a faithful model
writes the same carrier for every repeat), and a recall reads the carrier the last fold did."""


def _read_segment(text: str) -> SegmentDigest:
    d = SegmentDigest(facts=extract_facts(text))
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if is_log_line(line):
            d.log_lines += 1
            continue
        tool = TOOL_RE.match(line)
        if tool:
            d.tools.append(tool.group("name").strip())
            continue
        for path in absolute_paths(line):
            if path not in d.paths:
                d.paths.append(path)
        turn = TURN_RE.match(line)
        if not turn:
            low = line.casefold()
            if any(w in low for w in FAILURE_WORDS) and _kv(line) is None:
                d.failures.append(line)
            continue
        role, said = turn.group("role").casefold(), turn.group("text").strip()
        if role == "assistant":
            d.assistant_turns += 1
        elif role == "operator":
            d.operator_turns += 1
        if _the_is(said) is not None:
            continue
        low = said.casefold()
        if any(w in low for w in DECISION_WORDS):
            d.decisions.append(said)
        elif any(w in low for w in FAILURE_WORDS):
            d.failures.append(said)
        elif any(w in low for w in OPEN_WORDS):
            d.open_items.append(said)
    return d


def absolute_paths(line: str) -> list[str]:
    """The absolute paths of two or more parts in a line (``/srv/ledger/shards``), in order: what
    a simulated model notices and lists (a relative path, ``~/x`` or one part, ``/tmp``, it
    passes over; a URL's path is part of the URL, not a path)."""
    if "/" not in line:
        return []
    return [p for p in PATH_RE.findall(line) if p.startswith("/") and p.count("/") >= 2]


def find_answer(carrier: str, label: str, *, cutoff: float = 85.0) -> str | None:
    """Find the value a carrier gives for ``label``, matching labels fuzzily.

    Args:
        carrier: the summary to read.
        label: the label asked for.
        cutoff: minimum rapidfuzz score (0-100) for a label match.

    Returns:
        The value, or None when the carrier holds nothing for that label.
    """
    return answer_from(extract_facts(carrier), label, cutoff=cutoff)


def answer_from(facts: list[tuple[str, str]], label: str, *, cutoff: float = 85.0) -> str | None:
    """Find the value for ``label`` among facts already extracted from a carrier.

    A recall asks for many labels from one carrier; extracting its facts once and asking this
    for each label gives the same answers as ``find_answer`` per label without re-reading it.

    Args:
        facts: ``extract_facts(carrier)``.
        label: the label asked for.
        cutoff: minimum rapidfuzz score (0-100) for a label match.

    Returns:
        The value, or None when the facts hold nothing for that label.
    """
    if not facts:
        return None
    exact = {lab.casefold(): val for lab, val in facts}
    if label.casefold() in exact:
        return exact[label.casefold()]
    labels = [lab for lab, _ in facts]
    best = process.extractOne(label, labels, scorer=fuzz.token_sort_ratio,
                              processor=str.casefold, score_cutoff=cutoff)
    if best is None:
        return None
    return facts[best[2]][1]


SECTION_KEYS = tuple(s.key for s in SECTIONS)
