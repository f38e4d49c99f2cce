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
* A side where the value's edge is punctuation (``(see note a)``, ``path/``) is not checked: the
  value's author chose that edge as the boundary.
* Except for names: a path, URL, e-mail, handle or dotted host name (``core.identifiers`` kinds
  ``STRUCTURED_KINDS``) is bounded on both sides by the characters that could extend it. On the
  left: a word character, ``/``, ``@``, ``~``, a ``.``/``-`` glued to a word character, and a
  ``.`` before a path (``./opt``); on the right: a word character, or ``/ . - @ :`` glued to a word
  character. So ``/var/opt/kestrel/state/install.lock``, ``…/assets/v2``, ``…/assets?v=2``,
  ``bob@marta.v-oncall`` and ``zone-b.kestrel-internal.net:53`` do not hold the planted name,
  while ``/opt/x.lock.`` at a sentence end and ``…/assets/`` before a space do.

One value per label (``judge_value``): a label's answer is correct only when it asserts the
planted value and nothing competing — no other planted or decoy value, no other token of the
value's kind or exact shape, no hedge (``or``, ``maybe``, ``?``), no negation of a candidate
(``not 62114``), no abstention marker and no strike-through (``~~62114~~``, ``<del>``). Such an
answer is ``hedged`` and never credited. The markers are data
(``foldscope/core/data/answer_markers.toml``), extended by a user file (``markers_from_data``).
"""

from __future__ import annotations

import json
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

from rapidfuzz import fuzz, process

from foldscope.core.errors import ConfigError
from foldscope.core.identifiers import find_identifiers, kind_of, main_kind


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


STRUCTURED_KINDS = frozenset({"path", "url", "email", "handle", "host"})
"""Identifier kinds (``core.identifiers``) whose values are names that ``/ . - @ :`` extend."""

_NAME_EXTENDERS = "/.-@:"


def is_structured_name(value: str) -> bool:
    """Tell whether a value is a path, URL, e-mail, handle or dotted host name.

    Such a value is bounded by the characters that could extend it, on both sides, whatever
    its edge characters are (see the module rules).

    Args:
        value: a planted value.

    Returns:
        True when ``core.identifiers.kind_of`` names one of ``STRUCTURED_KINDS``.
    """
    return _value_pattern(value, False).structured


@dataclass(frozen=True)
class _ValuePattern:
    parts: tuple[str, ...]
    """The value's words; empty for a value that is empty after normalisation. A one-word value
    is found with ``str.find``, which visits exactly the candidates its regex would."""
    check_left: bool
    check_right: bool
    regex: re.Pattern[str] | None = None
    """The words joined by ``\\s+``; compiled only for a value of several words."""
    structured: bool = False
    """A path, URL, e-mail, handle or host: both edges are checked with the name extenders."""
    url: bool = False
    """A URL: a query (``?``) or fragment (``#``) after it also extends it."""


@lru_cache(maxsize=4096)
def _value_pattern(value: str, casefold: bool) -> _ValuePattern:
    value = normalize(value)
    if casefold:
        value = value.casefold()
    parts = value.split()
    if not parts:
        return _ValuePattern((), False, False)
    kind = kind_of(value)
    if kind in STRUCTURED_KINDS:
        body = r"\s+".join(map(re.escape, parts)) if len(parts) > 1 else None
        return _ValuePattern(tuple(parts), True, True, re.compile(body) if body else None,
                             structured=True, url=kind == "url")
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


def _name_glued_left(text: str, start: int, value_start: str) -> bool:
    """A structured name is extended on the left by a word character, ``/``, ``@`` or ``~``
    next to it, ``.``/``-`` glued to a word character (``api.zone-b…``), and, for a path, a
    ``.`` (``./opt``, ``../opt``). ``:`` is not an extender on the left: it is how labels end."""
    if start == 0:
        return False
    before = text[start - 1]
    if _is_word(before) or before in "/@~":
        return True
    if value_start == "/" and before == ".":
        return True
    return before in ".-" and start >= 2 and _is_word(text[start - 2])


def _name_glued_right(text: str, end: int, url: bool) -> bool:
    """A structured name is extended on the right by a word character, or by ``/ . - @ :``
    glued to a word character (``…/assets/v2``, ``…net:53``, ``….lock.bak``); a sentence's
    full stop or a trailing slash before a space is not an extension. A URL is also extended by
    a query or fragment (``?``, ``#`` followed by anything but a space)."""
    if end >= len(text):
        return False
    after = text[end]
    if _is_word(after):
        return True
    far = text[end + 1] if end + 1 < len(text) else ""
    if after in _NAME_EXTENDERS and far and (_is_word(far) or far in _NAME_EXTENDERS):
        return True
    return url and after in "?#" and bool(far) and not far.isspace()


def _free(text: str, start: int, end: int, pattern: _ValuePattern) -> bool:
    if pattern.structured:
        return not (_name_glued_left(text, start, pattern.parts[0][0])
                    or _name_glued_right(text, end, pattern.url))
    return not (pattern.check_left and _glued_left(text, start)) and not (
        pattern.check_right and _glued_right(text, end))


def _contains_prepared(text: str, value: str, casefold: bool = False) -> bool:
    return next(_free_spans(text, value, casefold), None) is not None


def _free_spans(text: str, value: str, casefold: bool = False) -> Iterator[tuple[int, int]]:
    """Yield ``(start, end)`` of every occurrence of ``value`` in ``text`` that is a whole token."""
    pattern = _value_pattern(value, casefold)
    if pattern.regex is None:
        if pattern.parts:
            yield from _literal_spans(text, pattern)
        return
    # A value of several words matches only where each word occurs literally: a substring test
    # per word (memchr-fast) rejects most texts before the regex engine walks them.
    if not all(part in text for part in pattern.parts):
        return
    pos = 0
    # Search from every candidate start, not just after the previous match: an occurrence that
    # is glued must not hide an overlapping one that is free (``162114 62114`` style).
    while (match := pattern.regex.search(text, pos)) is not None:
        if _free(text, match.start(), match.end(), pattern):
            yield match.start(), match.end()
        pos = match.start() + 1


def _literal_spans(text: str, pattern: _ValuePattern) -> Iterator[tuple[int, int]]:
    # The one-word case of ``_free_spans``: ``str.find`` visits the same candidate starts, in
    # the same order, as the escaped-literal regex would, several times faster.
    literal = pattern.parts[0]
    start = text.find(literal)
    size = len(literal)
    while start >= 0:
        if _free(text, start, start + size, pattern):
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
_VALUE_WRAPPERS = (("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("`", "`"), ('"', '"'),
                   ("'", "'"), ("«", "»"), ("“", "”"))


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
        self.patterns = [(re.compile(r"(?<!\w)" + re.escape(norm) + r"(?!\w)"), self.by_norm[norm])
                         for norm in self.norms]

    def cut_at_next_label(self, value: str) -> str:
        """The part of a value before another asked label named with a connector after it
        (``v4.18.2-rc3, signing key id: kid-…`` gives ``v4.18.2-rc3``): several labels on one
        line each keep their own value."""
        folded = normalize(value).casefold()
        if len(folded) != len(value):
            return value
        cut = len(value)
        for rx, _label in self.patterns:
            for m in rx.finditer(folded):
                if m.start() < cut and _INLINE_CONNECTOR_RE.match(value[m.end():]) is not None:
                    cut = m.start()
        return value if cut == len(value) else value[:cut].rstrip().rstrip(",;").strip()

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
    stripped = "\n".join(line for line in answer_text.strip().splitlines()
                         if not _FENCE_RE.match(line))
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
        label, value = hit[0], _clean_value(index.cut_at_next_label(hit[1]))
        last = i
        if not value:
            nxt = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
            if nxt is not None and resolved[nxt] is None and split[nxt] is not None:
                value = _clean_value(_LINE_PREFIX_RE.sub("", lines[nxt], count=1))
                last = nxt
        if value:
            value = _with_continuation(value, lines, split, resolved, i, last)
        bound[label] = value
    if any(v is None for v in bound.values()):
        _bind_inline(lines, index, bound)
    return bound


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _with_continuation(value: str, lines: Sequence[str], split: Sequence[_Line | None],
                       resolved: Sequence[tuple[str, str] | None], first: int, last: int) -> str:
    """Append the lines that continue a label's answer: directly below it (no blank line), naming
    no label, and either indented deeper than the label's line or opening with a hedge, a
    negation or a parenthesis (``  - or 47031``, ``(possibly 47031)``). They are part of what
    the answer offers for that label, so a candidate hidden on them still competes."""
    rx = _compiled(default_markers())
    extra = []
    for j in range(last + 1, len(lines)):
        line = lines[j]
        if not line.strip() or resolved[j] is not None or split[j] is None \
                or line.lstrip().startswith("|"):
            break
        body = _LINE_PREFIX_RE.sub("", line, count=1).strip()
        opener = body.startswith("(") or rx.hedge.match(body) is not None \
            or rx.negation_start.match(body) is not None
        if _indent(line) <= _indent(lines[first]) and not opener:
            break
        extra.append(body)
    return " ".join([value, *extra]) if extra else value


# A connector between a label named inside a sentence and its value: "is", "was", ":", "=", …
_INLINE_CONNECTOR_RE = re.compile(r"^\s*(?:\*\*)?\s*(?:(?:is|was|are|were|remains|equals)\b|[:：=→]|->|[-–—](?=\s))\s*",
                                  re.IGNORECASE)


def _bind_inline(lines: Sequence[str], index: _LabelIndex, bound: dict[str, str | None]) -> None:
    """Bind labels that no line starts with but a sentence names: ``The X is Y.``, or several
    ``X: Y, Z: W`` on one line. A label's value runs from its connector to the next asked label
    named on the line (or the line's end). Only labels still unbound are filled."""
    patterns = index.patterns
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

# ---------------------------------------------------------------------------------------------
# One value per label: abstention, hedges, negation, strike-through and competing candidates
# ---------------------------------------------------------------------------------------------

_MARKER_SECTIONS = {"abstention": ("anywhere", "whole"), "hedge": ("anywhere",),
                    "negation": ("before", "after"), "strike": ("patterns",)}


@dataclass(frozen=True)
class AnswerMarkers:
    """The phrases the grader reads in an answer (``core/data/answer_markers.toml``).

    Every list holds Python regular expressions (see the data file for how they are matched).
    """

    abstention: tuple[str, ...]
    """Say the value is not known, anywhere in the answer (``I don't know``, ``not recorded``)."""
    abstention_whole: tuple[str, ...]
    """Abstain only as the whole answer (``none``, ``-``, ``?``)."""
    hedge: tuple[str, ...]
    """Decline to commit to one value (``or``, ``maybe``, ``possibly``, ``?``)."""
    negation_before: tuple[str, ...]
    """Negate the candidate that follows within two words (``not``, ``isn't``, ``never``)."""
    negation_after: tuple[str, ...]
    """Negate the candidate just before them (``is wrong``, ``(outdated)``)."""
    strike: tuple[str, ...]
    """Strike text out; the group ``struck`` is the struck text (``~~x~~``, ``<del>x</del>``)."""


def markers_from_data(data: Mapping[str, Any], source: str = "answer markers",
                      base: AnswerMarkers | None = None) -> AnswerMarkers:
    """Build answer markers from parsed TOML data, added to ``base`` when given.

    Args:
        data: the parsed file (``[abstention] anywhere/whole``, ``[hedge] anywhere``,
            ``[negation] before/after``, ``[strike] patterns``; every key optional).
        source: what to call the file in errors.
        base: markers to extend (the shipped ones for a user file); None builds from scratch.

    Returns:
        The markers.

    Raises:
        ConfigError: one line naming the file, the list and what is wrong.
    """
    lists: dict[str, list[str]] = {}
    for section, keys in _MARKER_SECTIONS.items():
        table = data.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{source}: [{section}] must be a table")
        extra = sorted(set(table) - set(keys))
        if extra:
            raise ConfigError(f"{source}: [{section}] unknown key {extra[0]!r}")
        for key in keys:
            entries = table.get(key, [])
            if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
                raise ConfigError(f"{source}: [{section}] {key} must be a list of non-empty strings")
            for entry in entries:
                try:
                    re.compile(entry)
                except re.error as err:
                    raise ConfigError(f"{source}: [{section}] {key}: bad pattern {entry!r}: {err}"
                                      ) from None
            lists[f"{section}.{key}"] = entries
    unknown = sorted(set(data) - set(_MARKER_SECTIONS))
    if unknown:
        raise ConfigError(f"{source}: unknown section [{unknown[0]}]")

    def merged(key: str, old: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*old, *lists[key])))

    b = base or AnswerMarkers((), (), (), (), (), ())
    return AnswerMarkers(
        abstention=merged("abstention.anywhere", b.abstention),
        abstention_whole=merged("abstention.whole", b.abstention_whole),
        hedge=merged("hedge.anywhere", b.hedge),
        negation_before=merged("negation.before", b.negation_before),
        negation_after=merged("negation.after", b.negation_after),
        strike=merged("strike.patterns", b.strike),
    )


@lru_cache(maxsize=1)
def default_markers() -> AnswerMarkers:
    """The shipped answer markers (``foldscope/core/data/answer_markers.toml``)."""
    text = resources.files("foldscope.core.data").joinpath("answer_markers.toml").read_text("utf-8")
    return markers_from_data(tomllib.loads(text), source="answer_markers.toml")


def _phrase(entry: str) -> str:
    """One marker entry as a regex: spaces match whitespace runs, ``'`` matches ``’`` too, and a
    word character at either end only matches at a word boundary there."""
    body = re.sub(r"(?<!\\) ", r"\\s+", entry).replace("'", "['’]")
    return r"(?:(?<!\w)|(?!\w))(?:" + body + r")(?:(?!\w)|(?<!\w))"


@dataclass(frozen=True)
class _Compiled:
    abstention: re.Pattern[str]
    abstention_whole: re.Pattern[str]
    hedge: re.Pattern[str]
    negation_before: re.Pattern[str]
    negation_after: re.Pattern[str]
    negation_start: re.Pattern[str]
    strike: tuple[re.Pattern[str], ...]


_NEVER = r"(?!x)x"
_CANDIDATE = "\ue000"  # stands for the planted value in the text being judged
_RIVAL = "\ue001"  # stands for a competing candidate
_EITHER = f"[{_CANDIDATE}{_RIVAL}]"
_STROKES_RE = re.compile("(?:.[\u0335\u0336\u0337\u0338])+", re.DOTALL)


@lru_cache(maxsize=8)
def _compiled(markers: AnswerMarkers) -> _Compiled:
    def alt(entries: tuple[str, ...]) -> str:
        return "|".join(_phrase(e) for e in entries) or _NEVER

    flags = re.IGNORECASE
    gap = r"[\s*_`\"'«»“”(\[:,=]*"
    return _Compiled(
        abstention=re.compile(alt(markers.abstention), flags),
        abstention_whole=re.compile("|".join(markers.abstention_whole) or _NEVER, flags),
        hedge=re.compile(alt(markers.hedge), flags),
        negation_before=re.compile(
            f"(?:{alt(markers.negation_before)})(?:{gap}[^\\s{_CANDIDATE}{_RIVAL}]+){{0,2}}?{gap}"
            + _EITHER, flags),
        negation_after=re.compile(
            _EITHER + r"[\s*_`\"'»”)\],:;—–(-]*(?:" + alt(markers.negation_after) + ")", flags),
        negation_start=re.compile(alt(markers.negation_before), flags),
        strike=tuple(re.compile(p, re.IGNORECASE | re.DOTALL) for p in markers.strike),
    )


_KIND_TAGS = {
    "port": "port", "count": "number", "number": "number", "quantity": "number",
    "hostname": "host", "host": "host", "domain": "host", "dns_zone": "host", "zone": "host",
    "path": "path", "file": "path", "url": "url", "uri": "url", "handle": "handle",
    "email": "email", "uuid": "uuid", "timestamp": "timestamp", "date": "timestamp",
    "datetime": "timestamp", "time": "time", "version": "version", "release": "version",
    "key_id": "key_id", "digest": "digest", "image_digest": "digest", "hash": "hash",
    "commit": "hash", "ip": "ip", "ticket": "ticket", "env_var": "env_var",
}
"""Scenario ``kind`` tags (free-form) that name an identifier kind of ``core.identifiers``."""

_COMPETING = {
    "number": {"number", "port"}, "port": {"number", "port"},
    "timestamp": {"timestamp", "time"}, "time": {"time", "timestamp"},
    "path": {"path", "url"}, "url": {"url", "host"}, "host": {"host", "url", "email"},
    "handle": {"handle", "email"}, "email": {"email", "handle"},
    "uuid": {"uuid", "hash"}, "hash": {"hash", "digest", "uuid"}, "digest": {"digest", "hash"},
    "key_id": {"key_id", "hash"}, "version": {"version"}, "ip": {"ip"}, "ticket": {"ticket"},
    "env_var": {"env_var"},
}
"""For each identifier kind, the kinds whose tokens are competing candidates for such a value."""


@lru_cache(maxsize=1024)  # pure; asked for every graded fact of every row
def competing_kinds(value: str, tag: str | None = None) -> frozenset[str]:
    """The identifier kinds that compete with a value: the value's own kind and its tag's.

    The value's shape decides (``core.identifiers.main_kind``: ``62114`` is a number, ``19
    shards`` a number with a unit); the scenario's free-form ``kind`` tag adds its kind when it
    names one (``port`` adds ports named as such, ``hostname`` hosts). A tag that names no
    identifier kind (``department``) adds nothing.

    Args:
        value: the planted value.
        tag: the fact's ``kind`` tag from the scenario, if any.

    Returns:
        The identifier kinds whose tokens compete with the value (empty for a value of no kind).
    """
    kinds: set[str] = set()
    own = main_kind(normalize(value))
    if own is not None:
        kinds |= _COMPETING.get(own, {own})
    tagged = _KIND_TAGS.get((tag or "").strip().lower())
    if tagged is not None:
        kinds |= _COMPETING.get(tagged, {tagged})
    return frozenset(kinds)


@lru_cache(maxsize=1024)
def _shape_re(value: str) -> re.Pattern[str] | None:
    """Tokens of the value's exact shape (each digit any digit, each letter any letter): a
    competitor even for values no identifier rule names (``Отдел расчётов-5``)."""
    if not any(ch.isdigit() for ch in value):
        return None  # a shape of letters only would match ordinary words
    parts = []
    for ch in value:
        if ch.isdigit():
            parts.append(r"\d")
        elif ch.isalpha():
            parts.append(r"[^\W\d_]")
        elif ch.isspace():
            parts.append(r"\s+")
        else:
            parts.append(re.escape(ch))
    return re.compile(r"(?<![\w.-])" + "".join(parts) + r"(?![\w]|[.-]\w)")


_NOT_A_UNIT = frozenset("and or nor too also then vs is was are were the a an as but if so to in "
                        "on at of for with by from port ports".split())


def _unit_after(text: str, end: int) -> str | None:
    match = re.match(r"[ \t]+([^\W\d_]{2,})", text[end:])
    return match.group(1).casefold() if match else None


@dataclass(frozen=True)
class Judgement:
    """How one label's answer stands towards its planted value (see ``judge_value``)."""

    correct: bool
    hedged: bool
    abstained: bool
    competitors: tuple[str, ...] = ()
    """The competing candidates found (other planted values, tokens of the value's kind)."""


def _blank(text: str, spans: Iterable[tuple[int, int]], fill: str) -> str:
    """Replace each span by ``fill`` padded with spaces to the span's length (offsets kept)."""
    out = list(text)
    for start, end in spans:
        if end > start:
            out[start:end] = [fill] + [" "] * (end - start - 1)
    return "".join(out)


@lru_cache(maxsize=256)
def _rival_order(rivals: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The distinct rivals, normalised, longest first, each with its words (memoised: a
    scenario asks the same rivals for every label of every row)."""
    order = sorted({normalize(r).strip() for r in rivals}, key=len, reverse=True)
    return tuple((rival, tuple(rival.split())) for rival in order)


def judge_value(found: str | None, value: str, *, tag: str | None = None,
                rivals: Iterable[str] = (), markers: AnswerMarkers | None = None) -> Judgement:
    """Judge one label's answer against its planted value: one value per label.

    The answer is ``correct`` only when it asserts the value (a whole token, not struck out) and
    nothing competes with it. It is ``hedged`` when it asserts or strikes the value and also
    offers a competing candidate (another planted or decoy value in ``rivals``, another token
    of the value's kind, or of its exact shape), a hedge, a negation of a candidate, an
    abstention marker or any strike-through; and, without the value, when it offers two or more
    candidates, or one under a hedge, negation, strike or abstention. It is ``abstained`` when
    it is missing, empty, or says only that the value is unknown. Anything else is a plain wrong
    answer (neither flag). Parts of the value are not competitors (``01:26`` in
    ``2026-07-14 01:26 UTC``), nor is a number with another unit (``3 regions`` beside
    ``19 shards``).

    Args:
        found: the answer text bound to the label (None when no line named it).
        value: the planted value.
        tag: the fact's ``kind`` tag from the scenario (see ``competing_kinds``).
        rivals: the scenario's other planted values, graded and decoys.
        markers: the answer markers (default: ``default_markers()``).

    Returns:
        The judgement.
    """
    if found is None or not found.strip():
        return Judgement(False, False, True)
    rx = _compiled(markers or default_markers())
    text = normalize(found)
    norm_value = normalize(value).strip()

    # Strike-through: markdown/HTML spans and combining strokes (6̶2̶1̶1̶4̶).
    struck_spans: list[tuple[int, int]] = []
    struck_texts: list[str] = []
    for pattern in rx.strike:
        for m in pattern.finditer(text):
            struck_spans.append(m.span())
            struck_texts.append(m.group("struck") if "struck" in pattern.groupindex else m.group())
    for m in _STROKES_RE.finditer(text):
        struck_spans.append(m.span())
        struck_texts.append(re.sub("[\u0335-\u0338]", "", m.group()))
    live = _blank(text, struck_spans, " ")
    struck = any(t.strip() for t in struck_texts)
    value_struck = any(_contains_prepared(normalize(t), norm_value) for t in struck_texts)

    value_spans = token_spans(live, norm_value) if norm_value else []
    asserted = bool(value_spans)
    rest = _blank(live, value_spans, _CANDIDATE)

    whole_abstention = not asserted and rx.abstention_whole.fullmatch(
        rest.strip().strip("*_`\"'.()[]«» \t")) is not None
    abstain_spans = [m.span() for m in rx.abstention.finditer(rest)]
    rest = _blank(rest, abstain_spans, " ")
    abstain = whole_abstention or bool(abstain_spans)

    # Competing candidates: other planted values, then tokens of the value's kinds or shape.
    competitors: list[str] = []
    spans: list[tuple[int, int]] = []
    for rival, words in _rival_order(tuple(rivals)):
        if not rival or rival in norm_value:
            continue
        if not all(word in rest for word in words):
            continue  # a whole-token match needs every word of the rival (most are absent)
        for start, end in token_spans(rest, rival):
            if not any(s < end and start < e for s, e in spans):
                spans.append((start, end))
                competitors.append(rival)
    rest = _blank(rest, spans, _RIVAL)
    kinds = competing_kinds(value, tag)
    unit = split_unit(norm_value)
    found_ids = find_identifiers(rest, kinds=kinds) if kinds else []
    shape = _shape_re(norm_value)
    shaped = [(m.start(), m.end(), m.group()) for m in shape.finditer(rest)] if shape else []
    spans = []
    for start, end, token in [(i.start, i.end, i.value) for i in found_ids] + shaped:
        if token in norm_value or any(s < end and start < e for s, e in spans):
            continue
        if _RIVAL in token or _CANDIDATE in token:
            continue
        if token[0].isdigit() and token.replace(".", "").replace(",", "").isdigit():
            following = _unit_after(rest, end)
            own_unit = unit[1].casefold() if unit else None
            if following and following != own_unit and following not in _NOT_A_UNIT \
                    and rx.hedge.fullmatch(following) is None:
                continue  # "3 regions" beside "19 shards": a number of something else
        spans.append((start, end))
        competitors.append(token)
    rest = _blank(rest, spans, _RIVAL)

    hedge = rx.hedge.search(rest) is not None
    negated = (rx.negation_before.search(rest) is not None
               or rx.negation_after.search(rest) is not None)
    rivals_n = len(competitors)
    if asserted:
        correct = not (struck or hedge or negated or abstain or rivals_n)
        return Judgement(correct, not correct, False, tuple(competitors))
    if value_struck:
        return Judgement(False, True, False, tuple(competitors))
    if abstain and not rivals_n:
        return Judgement(False, False, True)
    hedged = rivals_n >= 2 or hedge or negated or struck or (abstain and rivals_n > 0)
    return Judgement(False, hedged, False, tuple(competitors))


def is_abstention(found: str | None, markers: AnswerMarkers | None = None) -> bool:
    """Tell whether a bound answer says nothing: missing, empty, or only an abstention marker.

    Args:
        found: the answer text bound to a label (None when no line named it).
        markers: the answer markers (default: ``default_markers()``).

    Returns:
        True for an abstention (an answer that also offers a candidate is not one: it is hedged).
    """
    if found is None or not found.strip():
        return True
    rx = _compiled(markers or default_markers())
    core = normalize(found).strip().strip("*_`\"'.()[]«» \t")
    if not core or rx.abstention_whole.fullmatch(core):
        return True
    return bool(rx.abstention.search(core)) and not find_identifiers(
        rx.abstention.sub(" ", core)) and not any(ch.isdigit() for ch in rx.abstention.sub(" ", core))


@lru_cache(maxsize=4096)
def split_unit(expected: str) -> tuple[str, str] | None:
    """Split ``19 shards`` / ``2026-07-14 01:26 UTC`` into (number part, first unit word).

    None when the value is not ``<number part> <unit words>``. The unit diagnostic and the
    near-miss ``unit_dropped`` rule (``core.nearmiss``) both split values here (memoised: the
    near-miss search asks once per candidate, always about the same few planted values).
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
    """The answer asserts the expected value, as a whole token, and nothing competing with it."""
    abstained: bool
    """Not correct, and the answer said nothing: missing, empty, or only an abstention marker."""
    unit_dropped: bool
    """Diagnostic only: the number survived, its unit word did not."""
    hedged: bool = False
    """Not correct: more than one candidate, or a hedged, negated or struck value (see
    ``judge_value``). Never credited, never an abstention."""
    competitors: tuple[str, ...] = ()
    """The competing candidates the answer offered beside (or instead of) the value."""


def grade_answer(answer_text: str, facts: Sequence[LabelledValue], *,
                 rivals: Iterable[str] = (), markers: AnswerMarkers | None = None
                 ) -> list[FactGrade]:
    """Grade a recall answer against the graded facts: one value per label.

    Each label is bound to the text the answer gives for it (``parse_answer``) and judged by
    ``judge_value``: correct only when that text asserts the planted value as a whole token and
    nothing competes with it. For the ledger service port (62114):

    * correct: ``62114``, ``**62114**``, ``62114 (TCP)``, ``The ledger service port is 62114.``,
      ``62114 … 62114`` (the same value twice);
    * hedged: ``62114 or 47031``, ``47031 (or maybe 62114)``, ``unknown (possibly 62114)``,
      ``not 62114``, ``~~62114~~``, ``62114, 8080`` (another port), a line listing every planted
      value;
    * abstained: ``I don't know``, ``The summary does not record it``, ``N/A``, nothing;
    * wrong: ``47031``, ``/var/opt/kestrel/state/install.lock`` for the lock path.

    A value given under the wrong label is not correct for either label.

    Args:
        answer_text: the recall answer exactly as the model returned it.
        facts: the graded facts asked at the recall turn (a ``kind`` attribute, when present,
            is the scenario's tag for the value; see ``competing_kinds``).
        rivals: the scenario's other planted values (decoys too); the graded facts' values are
            always rivals of each other.
        markers: the answer markers (default: ``default_markers()``).

    Returns:
        One ``FactGrade`` per fact, in the order of ``facts``.
    """
    bound = parse_answer(answer_text, [fact.label for fact in facts])
    pool = list(dict.fromkeys([*(fact.value for fact in facts), *rivals]))
    grades = []
    for fact in facts:
        found = bound[fact.label]
        verdict = judge_value(found, fact.value, tag=getattr(fact, "kind", None),
                              rivals=[v for v in pool if v != fact.value], markers=markers)
        grades.append(FactGrade(
            label=fact.label,
            expected=fact.value,
            found=found,
            correct=verdict.correct,
            abstained=verdict.abstained,
            unit_dropped=not verdict.correct and unit_dropped(fact.value, found),
            hedged=verdict.hedged,
            competitors=verdict.competitors,
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
