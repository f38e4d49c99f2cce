"""Graders: whole-token matching, label-bound recall grading, presence, unit and answer diagnostics.

Matching rules, decided once here so every grader and panel agrees:

* Both sides are NFC-normalised, so a composed and a decomposed ``ё`` are the same letter.
  Compatibility forms are *not* folded (no NFKC): a full-width ``６２１１４`` is a different string.
* Invisible joiners (ZWJ, ZWNJ, word joiner, BOM, soft hyphen) are deleted on both sides before
  matching: a reader cannot see them, so they neither break a value nor separate it from its
  neighbours (``62114`` + ZWJ + ``0`` reads as ``621140``). A zero-width *space* is a word
  separator in scripts without spaces, so it counts as a space.
* Identifiers compare case-sensitively (``kid-7F3A9C21`` is not ``kid-7f3a9c21``); label lookup is
  case-insensitive. ``contains_token(..., casefold=True)`` exists for diagnostics.
* Any run of whitespace in a value matches any run of whitespace in the text.
* Boundaries are checked only on a side where the value's own edge character is a word character
  (``str.isalnum()``, ``_``, or a combining mark, which belongs to the letter before it). There the
  neighbour must not be a word character, and must not be an infix joiner (``.`` or ``-``) that
  is itself glued to a word character on its far side: ``62114.`` at a sentence end matches, but
  ``62114.5``, ``/opt/x.lock.bak``, ``zone-b.kestrel-internal.net`` (for ``kestrel-internal.net``)
  and the range ``62110-62114`` (for ``62114``) do not. ``/``, ``:`` and ``@`` are not joiners, so
  ``localhost:62114`` and ``62114/tcp`` match.
* A side where the value's edge is punctuation (``@marta…``, ``…/assets/``) is not checked: the
  value's author chose that edge as the boundary.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from rapidfuzz import fuzz, process


class LabelledValue(Protocol):
    """Anything with a label and a value: a scenario fact, a test stand-in."""

    @property
    def label(self) -> str: ...  # noqa: D102 - protocol member

    @property
    def value(self) -> str: ...  # noqa: D102 - protocol member


# ---------------------------------------------------------------------------------------------
# Whole-token matching
# ---------------------------------------------------------------------------------------------

_JOINERS = ".-"
_INVISIBLES = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLES}]")
_INVISIBLE_REPLACEMENT = {"\u200b": " "}  # every other invisible character is deleted


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")


def normalize(text: str) -> str:
    """Bring a text to the form the matchers compare: invisible joiners gone, NFC.

    Args:
        text: a carrier, an answer or a value.

    Returns:
        The normalised text (the same object when nothing changes, e.g. plain ASCII).
    """
    if text.isascii():
        return text
    # Six substring scans (memchr-fast) are several times quicker than one character-class
    # regex scan over a long carrier, and almost every text has no invisible character at all.
    if any(ch in text for ch in _INVISIBLES):
        text = _INVISIBLE_RE.sub(lambda m: _INVISIBLE_REPLACEMENT.get(m.group(), ""), text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class _ValuePattern:
    parts: tuple[str, ...]
    """The value's words; empty for a value that is empty after normalisation. A one-word value
    is found with ``str.find``, which visits exactly the candidates its regex would."""
    check_left: bool
    check_right: bool
    regex: re.Pattern[str] | None = None
    """The words joined by ``\\s+``; compiled only for a value of several words."""


@lru_cache(maxsize=4096)
def _value_pattern(value: str, casefold: bool) -> _ValuePattern:
    value = normalize(value)
    if casefold:
        value = value.casefold()
    parts = value.split()
    if not parts:
        return _ValuePattern((), False, False)
    check_left, check_right = _is_word(parts[0][0]), _is_word(parts[-1][-1])
    if len(parts) == 1:
        return _ValuePattern((parts[0],), check_left, check_right)
    # No lookarounds: a pattern that opens with a literal lets the regex engine skip ahead with
    # a fast substring search (~50x faster on a 100k carrier); the boundary rule runs in Python
    # on the few candidates found.
    body = r"\s+".join(map(re.escape, parts))
    return _ValuePattern(tuple(parts), check_left, check_right, re.compile(body))


def _glued_left(text: str, start: int) -> bool:
    if start == 0:
        return False
    before = text[start - 1]
    if _is_word(before):
        return True
    return before in _JOINERS and start >= 2 and _is_word(text[start - 2])


def _glued_right(text: str, end: int) -> bool:
    if end >= len(text):
        return False
    after = text[end]
    if _is_word(after):
        return True
    return after in _JOINERS and end + 1 < len(text) and _is_word(text[end + 1])


def _contains_prepared(text: str, value: str, casefold: bool = False) -> bool:
    return next(_free_spans(text, value, casefold), None) is not None


def _free_spans(text: str, value: str, casefold: bool = False) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of every occurrence of ``value`` in ``text`` that is a whole token."""
    pattern = _value_pattern(value, casefold)
    if pattern.regex is None:
        if pattern.parts:
            yield from _literal_spans(text, pattern.parts[0], pattern.check_left,
                                      pattern.check_right)
        return
    # A value of several words matches only where each word occurs literally: a substring test
    # per word (memchr-fast) rejects most texts before the regex engine walks them.
    if not all(part in text for part in pattern.parts):
        return
    pos = 0
    # Search from every candidate start, not just after the previous match: an occurrence that
    # is glued must not hide an overlapping one that is free (``162114 62114`` style).
    while (match := pattern.regex.search(text, pos)) is not None:
        if not (pattern.check_left and _glued_left(text, match.start())) and not (
            pattern.check_right and _glued_right(text, match.end())
        ):
            yield match.start(), match.end()
        pos = match.start() + 1


def _literal_spans(text: str, literal: str, check_left: bool, check_right: bool
                   ) -> Iterator[tuple[int, int]]:
    # The one-word case of ``_free_spans``: ``str.find`` visits the same candidate starts, in
    # the same order, as the escaped-literal regex would, several times faster.
    start = text.find(literal)
    size = len(literal)
    while start >= 0:
        if not (check_left and _glued_left(text, start)) and not (
            check_right and _glued_right(text, start + size)
        ):
            yield start, start + size
        start = text.find(literal, start + 1)


def token_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Where a value occurs in a text as a whole token, for highlighting.

    Args:
        text: a text already through ``normalize`` (offsets refer to it).
        value: the value.

    Returns:
        ``(start, end)`` offsets of every free occurrence, in order.
    """
    return list(_free_spans(text, value))


def contains_token(text: str, value: str, *, casefold: bool = False) -> bool:
    """Tell whether a value occurs in a text as a whole token (see the module rules).

    Args:
        text: the text to search (an answer line, a carrier).
        value: the expected value; an empty or all-whitespace value never matches.
        casefold: compare case-insensitively (diagnostics only; grading is case-sensitive).

    Returns:
        True when at least one occurrence is free on every side the rules check.
    """
    text = normalize(text)
    return _contains_prepared(text.casefold() if casefold else text, value, casefold)


def contains_token_normalized(text: str, value: str) -> bool:
    """``contains_token`` for a text that has already been through ``normalize``.

    Checking many values against one long carrier should normalise the carrier once; this skips
    the per-call normalisation and gives the same answer (``normalize`` is idempotent).

    Args:
        text: ``normalize(some_text)``.
        value: the expected value (normalised here, as by ``contains_token``).

    Returns:
        True when at least one occurrence is free on every side the rules check.
    """
    return _contains_prepared(text, value)


def present_in(text: str, value: str) -> bool:
    """Presence grader for one value: the same whole-token rule as ``contains_token``.

    Args:
        text: a carrier (or any text).
        value: the planted value.

    Returns:
        True when the carrier holds the value as a whole token.
    """
    return contains_token(text, value)


def presence(carrier_text: str, facts: Iterable[LabelledValue]) -> dict[str, bool]:
    """Presence grader for a carrier: which planted values it holds.

    Args:
        carrier_text: the carrier exactly as the next fold receives it.
        facts: the facts to look for.

    Returns:
        ``{label: present}`` in the order of ``facts``.
    """
    text = normalize(carrier_text)  # once, not once per fact: carriers run to 100k characters
    return {fact.label: _contains_prepared(text, fact.value) for fact in facts}


# ---------------------------------------------------------------------------------------------
# Binding answer lines to labels
# ---------------------------------------------------------------------------------------------

LABEL_MATCH_CUTOFF = 85.0
"""Minimum rapidfuzz ``ratio`` for a near label (a typo, a dropped letter) to bind."""

_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE_RE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
# Bullets, numbering, headings and quote markers a model may put in front of a label line.
_LINE_PREFIX_RE = re.compile(r"^\s*(?:(?:[-*+•·‣▪◦–—>]|#{1,6}|\(?\d{1,3}[.)])\s*)*")
# The first separator after the label. Spaced dashes only, so ``on-call handle`` stays one label.
_SEPARATOR_RE = re.compile(r"\s*(?::|：|\s[-–—=]\s|=|→|->|\t)\s*")
_LABEL_STRIP = " \t*_`\"'«»“”‘’„[]()<>?."
_VALUE_WRAPPERS = (("**", "**"), ("__", "__"), ("`", "`"), ('"', '"'), ("'", "'"), ("«", "»"),
                   ("“", "”"))


def _norm_label(text: str) -> str:
    text = normalize(text).replace("*", "").replace("`", "")
    return " ".join(text.strip(_LABEL_STRIP).split()).casefold()


def _clean_value(text: str) -> str:
    text = text.strip()
    # ``**label:** value`` leaves an unpaired ``**`` in front of the value.
    if text.startswith("**") and text.count("**") % 2 == 1:
        text = text[2:].strip()
    # Wrappers models put around a value. Only matched pairs go, so a value that itself ends in
    # punctuation keeps it.
    changed = True
    while changed:
        changed = False
        for opening, closing in _VALUE_WRAPPERS:
            if len(text) > len(opening) + len(closing) and text.startswith(opening) \
                    and text.endswith(closing):
                text = text[len(opening): len(text) - len(closing)].strip()
                changed = True
    return text


@dataclass(frozen=True)
class _Line:
    label_text: str
    value: str
    separated: bool  # False for a line with no separator: a bare label, or "label value"


def _split_line(line: str) -> _Line | None:
    """Split one answer line into its label text and value text; None for non-content lines."""
    if _FENCE_RE.match(line) or not line.strip():
        return None
    if line.lstrip().startswith("|"):  # a markdown table row: | label | value |
        if _TABLE_RULE_RE.match(line):
            return None
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        return _Line(cells[0], "|".join(cells[1:]).strip(), True)
    body = _LINE_PREFIX_RE.sub("", line, count=1)
    match = _SEPARATOR_RE.search(body)
    if match is None:
        return _Line(body, "", False)
    return _Line(body[: match.start()], body[match.end():], True)


class _LabelIndex:
    """Resolves the label text of an answer line to one of the asked labels."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.by_norm: dict[str, str] = {}
        for label in labels:
            self.by_norm.setdefault(_norm_label(label), label)
        self.norms = list(self.by_norm)

    def resolve(self, line: _Line) -> tuple[str, str] | None:
        """Return (asked label, value text) for a line that names a label, else None."""
        norm = _norm_label(line.label_text)
        if not norm:
            return None
        if norm in self.by_norm:
            return self.by_norm[norm], line.value
        # An asked label followed by more words. Longest wins so that one label being a prefix
        # of another cannot steal its line.
        prefixed = [n for n in self.norms if norm.startswith(n) and not _is_word(norm[len(n)])]
        if prefixed:
            label = self.by_norm[max(prefixed, key=len)]
            if line.separated:  # "ledger service port (tcp): 62114": the words were a qualifier
                return label, line.value
            # "ledger service port 62114": no separator, the words after the label are the value.
            rest = _LINE_PREFIX_RE.sub("", line.label_text, count=1)
            words = rest.split()
            return label, " ".join(words[len(label.split()):])
        if not line.separated:
            return None  # fuzzy matching a whole prose line against labels would bind noise
        best = process.extract(norm, self.norms, scorer=fuzz.ratio,
                               score_cutoff=LABEL_MATCH_CUTOFF, limit=2)
        if not best or (len(best) == 2 and best[0][1] == best[1][1]):
            return None  # nothing near, or equally near two labels: binding either is a guess
        return self.by_norm[best[0][0]], line.value


def _json_lines(answer_text: str) -> list[str] | None:
    """Turn a JSON-object answer into ``label: value`` lines; None when it is not one."""
    stripped = "\n".join(l for l in answer_text.strip().splitlines() if not _FENCE_RE.match(l))
    if not stripped.strip().startswith("{"):
        return None
    try:
        data = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return [f"{key}: {'null' if val is None else val}" for key, val in data.items()]


def parse_answer(answer_text: str, labels: Sequence[str]) -> dict[str, str | None]:
    """Bind each asked label to the value the answer gives for it.

    Lines are ``label: value``; bullets, numbering, headings, bold or quoted labels, other case,
    ``label = value``, ``label — value``, markdown table rows and a JSON object are all read.
    A label line with nothing after the separator takes the next line as its value unless that
    line names a label itself. When a label is answered twice, the first non-empty answer wins
    (an echoed question list does not hide the real answer below it).

    Args:
        answer_text: the recall answer exactly as the model returned it.
        labels: the labels asked for.

    Returns:
        ``{label: value text}`` for every asked label, in the order given; None when no line
        names the label, "" when a line names it but gives no value.
    """
    index = _LabelIndex(labels)
    lines = _json_lines(answer_text) or answer_text.splitlines()
    split = [_split_line(line) for line in lines]
    resolved = [index.resolve(parts) if parts is not None else None for parts in split]
    bound: dict[str, str | None] = {label: None for label in labels}
    for i, hit in enumerate(resolved):
        if hit is None or bound[hit[0]]:
            continue
        label, value = hit[0], _clean_value(hit[1])
        if not value:
            nxt = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
            if nxt is not None and resolved[nxt] is None and split[nxt] is not None:
                value = _clean_value(_LINE_PREFIX_RE.sub("", lines[nxt], count=1))
        bound[label] = value
    if any(v is None for v in bound.values()):
        _bind_inline(lines, index, bound)
    return bound


# A connector between a label named inside a sentence and its value: "is", "was", ":", "=", …
_INLINE_CONNECTOR_RE = re.compile(r"^\s*(?:\*\*)?\s*(?:(?:is|was|are|were|remains|equals)\b|[:：=→]|->|[-–—](?=\s))\s*",
                                  re.IGNORECASE)


def _bind_inline(lines: Sequence[str], index: _LabelIndex, bound: dict[str, str | None]) -> None:
    """Bind labels that no line starts with but a sentence names: ``The X is Y.``, or several
    ``X: Y, Z: W`` on one line. A label's value runs from its connector to the next asked label
    named on the line (or the line's end). Only labels still unbound are filled."""
    patterns = [(re.compile(r"(?<!\w)" + re.escape(norm) + r"(?!\w)"), index.by_norm[norm])
                for norm in index.norms]
    for line in lines:
        text = normalize(line).replace("**", "")
        folded = text.casefold()
        if len(folded) != len(text):  # casefold changed lengths (ß → ss): offsets would drift
            continue
        spans = sorted((m.start(), m.end(), label) for rx, label in patterns
                       for m in rx.finditer(folded))
        # A label inside a longer label's span ("port" in "ledger service port") is not a label.
        spans = [sp for sp in spans
                 if not any(o[0] <= sp[0] and sp[1] <= o[1] and o != sp for o in spans)]
        for i, (_, end, label) in enumerate(spans):
            if bound[label]:
                continue
            stop = spans[i + 1][0] if i + 1 < len(spans) else len(text)
            connector = _INLINE_CONNECTOR_RE.match(text[end:stop])
            if connector is None:
                continue  # "I lost the ledger service port" names the label but gives nothing
            value = text[end + connector.end(): stop].strip().rstrip(",;").strip()
            if value.endswith(".") and not value[:-1].endswith("."):
                value = value[:-1]  # a sentence's full stop, not part of the value
            value = _clean_value(value)
            if value:
                bound[label] = value


# ---------------------------------------------------------------------------------------------
# Grading a recall answer
# ---------------------------------------------------------------------------------------------

# Ways models say "I don't know". Matched at the start of the cleaned value, whole word.
_ABSTAIN_RE = re.compile(
    r"^(?:unknown|n/?a|none|null|nil|unspecified|unavailable|not\s+"
    r"(?:known|found|available|stated|given|specified|mentioned|provided|recorded|present|"
    r"included|in\s+(?:the\s+)?summary)|no\s+(?:data|information|info|value|record|mention)|"
    r"\?+|-+|—|–)(?!\w)",
    re.IGNORECASE,
)


def is_abstention(found: str | None) -> bool:
    """Tell whether a bound answer says nothing: missing, empty, or ``unknown`` and its kin.

    Args:
        found: the answer text bound to a label (None when no line named it).

    Returns:
        True for an abstention.
    """
    if found is None:
        return True
    core = found.strip().strip("*_`\"'.()[]«» \t")
    return not core or _ABSTAIN_RE.match(core) is not None


def split_unit(expected: str) -> tuple[str, str] | None:
    """Split ``19 shards`` / ``2026-07-14 01:26 UTC`` into (number part, first unit word).

    None when the value is not ``<number part> <unit words>``. The unit diagnostic and the
    near-miss ``unit_dropped`` rule (``core.nearmiss``) both split values here.
    """
    parts = normalize(expected).split()
    cut = len(parts)
    while cut > 0 and parts[cut - 1].isalpha():
        cut -= 1
    if cut == 0 or cut == len(parts) or not any(ch.isdigit() for ch in parts[cut - 1]):
        return None
    return " ".join(parts[:cut]), parts[cut]


def unit_dropped(expected: str, answer: str | None) -> bool:
    """Unit diagnostic: the answer kept the number but dropped its unit or zone word.

    Reported beside the score, never inside it: ``19`` for ``19 shards`` is still incorrect.

    Args:
        expected: the planted value, e.g. ``19 shards`` or ``2026-07-14 01:26 UTC``.
        answer: the answer text bound to the value's label.

    Returns:
        True when ``expected`` is ``<number part> <unit word(s)>``, the answer holds the number
        part as a whole token, does not hold the whole value, and nowhere names the unit word.
    """
    if not answer:
        return False
    split = split_unit(expected)
    if split is None:
        return False
    head, unit = split
    text = normalize(answer)
    return (_contains_prepared(text, head)
            and not _contains_prepared(text, expected)
            and not _contains_prepared(text.casefold(), unit, casefold=True))


@dataclass(frozen=True)
class FactGrade:
    """The grade of one graded fact in one recall answer."""

    label: str
    expected: str
    found: str | None
    """The answer text bound to the label; None when no line named it."""
    correct: bool
    """The expected value is a whole token of the text bound to *this* label."""
    abstained: bool
    """Not correct, and the answer said nothing: missing, empty or ``unknown``."""
    unit_dropped: bool
    """Diagnostic only: the number survived, its unit word did not."""


def grade_answer(answer_text: str, facts: Sequence[LabelledValue]) -> list[FactGrade]:
    """Grade a recall answer against the graded facts, binding each value to its label.

    A value given under the wrong label is not correct for either label.

    Args:
        answer_text: the recall answer exactly as the model returned it.
        facts: the graded facts asked at the recall turn.

    Returns:
        One ``FactGrade`` per fact, in the order of ``facts``.
    """
    bound = parse_answer(answer_text, [fact.label for fact in facts])
    grades = []
    for fact in facts:
        found = bound[fact.label]
        correct = bool(found) and contains_token(found, fact.value)
        grades.append(FactGrade(
            label=fact.label,
            expected=fact.value,
            found=found,
            correct=correct,
            abstained=not correct and is_abstention(found),
            unit_dropped=not correct and unit_dropped(fact.value, found),
        ))
    return grades


def recall(grades: Sequence[FactGrade]) -> float:
    """Recall of one row: the fraction of graded facts answered correctly.

    Args:
        grades: the row's fact grades.

    Returns:
        correct ÷ graded; NaN when nothing was graded.
    """
    if not grades:
        return float("nan")
    return sum(g.correct for g in grades) / len(grades)
