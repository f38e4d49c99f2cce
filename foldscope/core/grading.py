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

import bisect
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
from foldscope.core.memo import remember
from foldscope.core.nesting import MAX_DEPTH, json_depth


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


@lru_cache(maxsize=65536)  # per character, called around every match the matchers find
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
    extension: re.Pattern[str] | None = None
    """What extends a value of its kind on the right (``_RIGHT_EXTENSIONS``)."""


@lru_cache(maxsize=4096)
def _value_pattern(value: str, casefold: bool) -> _ValuePattern:
    value = normalize(value)
    if casefold:
        value = value.casefold()
    parts = value.split()
    if not parts:
        return _ValuePattern((), False, False)
    kind = kind_of(value)
    extension = _RIGHT_EXTENSIONS.get(kind or "")
    if kind in STRUCTURED_KINDS:
        body = r"\s+".join(map(re.escape, parts)) if len(parts) > 1 else None
        return _ValuePattern(tuple(parts), True, True, re.compile(body) if body else None,
                             structured=True, url=kind == "url", extension=extension)
    check_left, check_right = _is_word(parts[0][0]), _is_word(parts[-1][-1])
    if len(parts) == 1:
        return _ValuePattern((parts[0],), check_left, check_right, extension=extension)
    # No lookarounds: a pattern that opens with a literal lets the regex engine skip ahead with
    # a fast substring search (~50x faster on a 100k carrier); the boundary rule runs in Python
    # on the few candidates found.
    body = r"\s+".join(map(re.escape, parts))
    return _ValuePattern(tuple(parts), check_left, check_right, re.compile(body),
                         extension=extension)


_RIGHT_EXTENSIONS: dict[str, re.Pattern[str]] = {
    # A zone offset makes another instant: "2026-07-14 01:26 UTC+3", "…UTC+03", "…22:45Z-05:00",
    # and seconds or fractions another time: "…01:26:30", "…22:45.5".
    "timestamp": re.compile(r"[ ]?[+-]\d{1,2}(?::?\d{2})?(?!\d)|:\d|\.\d"),
    "time": re.compile(r"[ ]?[+-]\d{1,2}(?::?\d{2})?(?!\d)|:\d|\.\d"),
    # Build metadata or another pre-release part: "v4.18.2-rc3+build.7", "v4.18.2-rc3_1".
    "version": re.compile(r"[+_~][0-9A-Za-z]"),
    # A key id with a version or sub-key after it: "kid-7F3A9C21/2", "kid-7F3A9C21:2".
    "key_id": re.compile(r"[/:+.~_-][0-9A-Za-z]"),
    "uuid": re.compile(r"[/:+.~_-][0-9A-Za-z]"),
    "hash": re.compile(r"[/:+~_-][0-9A-Za-z]"),
    "digest": re.compile(r"[/:+~_-][0-9A-Za-z]"),
    # A trailing separator names a directory, not the file: "/opt/kestrel/state/install.lock/".
    "path": re.compile(r"/"),
}
"""Per value kind (``core.identifiers``), what glued to a value's right edge makes it another
value, beyond the general boundary rules."""


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
    if pattern.extension is not None and pattern.extension.match(text, end) is not None:
        return False
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

WORD_MATCH_CUTOFF = 85.0
"""Minimum rapidfuzz ``ratio`` for one word of a paraphrase to stand for one word of a label
(``shards`` for ``shard``, ``servce`` for ``service``); words of 5+ characters only."""

PARAPHRASE_MIN_COVERAGE = 0.5
"""A paraphrase binds a label only when it names at least this share of the label's content
words (``Ledger port``: 2 of 3 of ``ledger service port``), and no other asked label holds every
label word it names (``port`` alone names both ports: refused)."""

_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE_RE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
# Bullets, numbering, headings and quote markers a model may put in front of a label line.
_LINE_PREFIX_RE = re.compile(r"^\s*(?:(?:[-*+•·‣▪◦–—>]|#{1,6}|\(?\d{1,3}[.)]|\[\d{1,3}\])\s*)*")
_NUMBERED_RE = re.compile(r"^\s*(?:[-*+•]\s*)?\(?(\d{1,3})[.):]\s+(\S.*)$")
# A separator after a label. A colon separates only where it is not inside a value: not between
# digits (``01:26``), not before ``//`` (URLs), not glued to what follows after a digit.
_SEPARATOR_RE = re.compile(
    r"\s*(?:(?<!\d):(?!//)|：|(?<=\D):(?=\s|$)|\s[-–—=|]\s|=|→|->|\t|\?(?=\s))\s*")
_SEPARATOR_CHARS = ":：=→\t?-–—|"
"""The character each of the separator's forms turns on (``\\s[-–—=|]\\s`` on its dash or bar)."""


def _separator(text: str) -> re.Match[str] | None:
    """``_SEPARATOR_RE.search(text)``, found with ``str.find`` (sre tries every position of a
    long line against the pattern's leading ``\\s*``: ~1 ms on a 6k-character paragraph).

    A match turns on one form at some position; the search's match is the one starting
    leftmost, and a match can only start in the run of whitespace right before the position of
    the first form that holds anywhere in the text (every match's form sits at or after it, with
    only whitespace between). So the first such position is found, its whitespace run stepped
    back over, and the pattern matched there (``\\d`` is ``str.isdecimal``, ``\\s``
    ``str.isspace``; lookbehinds see the text before the start)."""
    first = len(text)
    for ch in _SEPARATOR_CHARS:
        j = text.find(ch, 0, first)
        while j >= 0:
            if _separator_at(text, j, ch):
                first = j
                break
            j = text.find(ch, j + 1, first)
    if first == len(text):
        return None
    start = first
    while start and text[start - 1].isspace():
        start -= 1
    return _SEPARATOR_RE.match(text, start)


def _separator_at(text: str, j: int, ch: str) -> bool:
    """Whether a form of the separator turns on ``text[j] == ch``."""
    if ch == ":":  # (?<!\d):(?!//), which also covers (?<=\D):(?=\s|$)
        return not (j and text[j - 1].isdecimal()) and not text.startswith("//", j + 1)
    if ch == "?":  # \?(?=\s)
        return text[j + 1:j + 2].isspace()
    if ch == "-" and text.startswith(">", j + 1):  # ->
        return True
    if ch in "-–—|":  # \s[-–—=|]\s
        return j > 0 and text[j - 1].isspace() and text[j + 1:j + 2].isspace()
    return True  # ：, =, →, a tab
_LABEL_STRIP = " \t*_`\"'«»“”‘’„[]()<>?.:"
_MARKUP = "*_`\"'«»“”‘’„"
_NO_MARKUP = str.maketrans("", "", _MARKUP)
_SPACE_RUN_RE = re.compile(r"\s+")


def _skeleton_offset(body: str, k: int) -> int:
    """Where in ``body`` the ``k``-th character of its skeleton (``_LabelIndex._at_start``)
    stands: markup skipped, whitespace before the first character and after a space skipped."""
    n = 0
    after_space = True
    for i, ch in enumerate(body):
        if ch in _MARKUP:
            continue
        space = ch.isspace()
        if space and after_space:
            continue
        if n == k:
            return i
        n += 1
        after_space = space
    raise IndexError(k)
_VALUE_WRAPPERS = (("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("`", "`"), ('"', '"'),
                   ("'", "'"), ("«", "»"), ("“", "”"))
# What may stand between a label named at the start of a line and its value.
_AFTER_LABEL_RE = re.compile(
    r"^[\s*_`\"'«»“”‘’]*(?:(?:\([^()\n]{0,40}\)|\[[^\[\]\n]{0,40}\])[\s*_`\"'»”]*(?=[:：=?|→-]))?"
    r"(?:[^\W\d][\w ]{0,25}?(?=\s*[:：=]\s))?"
    r"\s*(?:=>|[:：=?|→,;]+|->|[-–—](?=\s))?\s*"
    r"(?:(?:is|was|are|were|remains|equals|reads|of)\b[\s:]*)?", re.IGNORECASE)
_STOPWORDS = frozenset(
    "a an the of for on in at to by is are was were be what which its it this that and or with "
    "from as s my our value values".split())
_LABEL_KEYS = ("label", "name", "field", "fact", "key", "item", "question", "attribute",
               "property", "parameter", "q")
_VALUE_KEYS = ("value", "answer", "result", "response", "val", "recalled", "recalled value", "a")
_NEXT_LINE_LEAD_RE = re.compile(r"^\s*(?:[:：=→]|=>|->|(?:answer|value|a)\s*[:：=])\s*",
                                re.IGNORECASE)
_THINKING_RE = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_RULES = (
    (re.compile(r"<tr\b[^>]*>", re.IGNORECASE), "\n| "),
    (re.compile(r"</t[dh]\s*>", re.IGNORECASE), " | "),
    (re.compile(r"<t[dh]\b[^>]*>|</?(?:table|thead|tbody|tfoot|ul|ol|span|div)\b[^>]*>",
                re.IGNORECASE), ""),
    (re.compile(r"</tr\s*>|<br\s*/?>|</?p\b[^>]*>|</li\s*>", re.IGNORECASE), "\n"),
    (re.compile(r"<li\b[^>]*>", re.IGNORECASE), "\n- "),
    (re.compile(r"</?(?:b|strong|em|i|code|u)\s*>", re.IGNORECASE), ""),
)


def _plain(answer_text: str) -> str:
    """An answer without the model's reasoning block (``<think>…</think>``: drafts, not the
    answer) and with HTML tables and lists turned into their markdown shapes."""
    text = _THINKING_RE.sub("", answer_text) if "<" in answer_text else answer_text
    if "<" in text and re.search(r"<(?:tr|td|li|br|p)\b", text, re.IGNORECASE):
        for rule, repl in _HTML_RULES:
            text = rule.sub(repl, text)
    return text
_NOTE_KEYS = ("note", "notes", "comment", "comments", "confidence", "certainty", "status",
              "remark", "remarks", "caveat")
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _norm_label(text: str) -> str:
    text = normalize(text).replace("*", "").replace("`", "")
    if "_" in text or (" " not in text.strip() and _CAMEL_RE.search(text.strip())):
        text = _CAMEL_RE.sub(" ", text.replace("_", " ")) if " " not in text.strip() \
            else text.replace("_", " ")
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


def _words(text: str) -> list[str]:
    """The content words of a phrase: identifiers taken out (a path's ``install`` is no label
    word), split at spaces, ``_`` and ``/``; a hyphenated word gives its joined form and parts."""
    text = normalize(text)
    for ident in sorted(find_identifiers(text), key=lambda i: -i.start):
        text = text[: ident.start] + " " + text[ident.end:]
    out: list[str] = []
    for raw in re.findall(r"[^\W\d_](?:[\w'’-]*\w)?", _CAMEL_RE.sub(" ", text)):
        word = raw.casefold().replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        parts = [p for p in word.split("-") if p]
        for piece in ([word.replace("-", "")] + parts if len(parts) > 1 else parts):
            if piece not in _STOPWORDS and len(piece) > 1:
                out.append(piece)
    return out


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass(frozen=True)
class _Unit:
    """One word of a label (a hyphenated word: its joined form and each part)."""

    forms: tuple[str, ...]


_READING_CACHE_ENTRIES = 8192
"""Phrases and lines a label index remembers its reading of (then it starts afresh)."""


class _LabelIndex:
    """Resolves label text (exact, with a qualifier, a typo or a paraphrase) to an asked label."""

    def __init__(self, labels: Sequence[str], synonyms: Sequence[str] = ()) -> None:
        self.asked = tuple(labels)
        self.by_norm: dict[str, str] = {}
        for label in labels:
            self.by_norm.setdefault(_norm_label(label), label)
        self.norms = sorted(self.by_norm, key=len, reverse=True)
        self.patterns = [(re.compile(r"(?<!\w)" + re.escape(norm) + r"(?!\w)"), self.by_norm[norm])
                         for norm in self.norms]
        self.synonyms: dict[str, set[str]] = {}
        for group in synonyms:
            words = {_stem(w.casefold()) for w in group.split()}
            for w in words:
                self.synonyms.setdefault(w, set()).update(words)
        self._hit_cache: dict[str, frozenset[tuple[str, int]]] = {}
        # Phrase and line readings, memoised per index: a row's carriers repeat most of their
        # lines from one fold to the next, and the grader reads each carrier once per lost fact.
        self._phrase_cache: dict[str, str | None] = {}
        self._start_cache: dict[str, tuple[str, str] | None] = {}
        # Per markers (by id, the markers kept alive beside their lines so the id stays theirs).
        self._line_cache: dict[int, tuple[_Compiled, dict[
            str, tuple[tuple[tuple[str, str, str], ...], bool]]]] = {}
        self.units: dict[str, tuple[_Unit, ...]] = {}
        for norm, label in self.by_norm.items():
            units = []
            for token in norm.split():
                parts = [p for p in re.split(r"[-/_]", token) if p]
                forms = [token.replace("-", "")] + ([p for p in parts if p not in _STOPWORDS]
                                                     if len(parts) > 1 else [])
                forms = [f for f in forms if f and f not in _STOPWORDS]
                if forms:
                    units.append(_Unit(tuple(dict.fromkeys(forms))))
            self.units[label] = tuple(units)

    # --- words ---------------------------------------------------------------------------------

    def _word_match(self, word: str, form: str) -> bool:
        if word == form:
            return True
        a, b = _stem(word), _stem(form)
        if a == b or b in self.synonyms.get(a, ()):
            return True
        if len(a) >= 3 and len(b) >= len(a) + 2 and b.startswith(a):
            return True  # an abbreviation: "cert" for "certificate"
        return min(len(a), len(b)) >= 5 and fuzz.ratio(a, b) >= WORD_MATCH_CUTOFF

    def _hits(self, word: str) -> frozenset[tuple[str, int]]:
        """The (label, unit index) pairs a phrase word matches (memoised per index)."""
        hit = self._hit_cache.get(word)
        if hit is None:
            hit = frozenset((label, i) for label, units in self.units.items()
                            for i, unit in enumerate(units)
                            if any(self._word_match(word, form) for form in unit.forms))
            self._hit_cache[word] = hit
        return hit

    def paraphrase(self, text: str) -> str | None:
        """The one asked label a phrase names by its words, or None (nothing, or ambiguous)."""
        cache = self._phrase_cache
        if text in cache:
            return cache[text]
        return remember(cache, _READING_CACHE_ENTRIES, text, self._paraphrase(text))

    def _paraphrase(self, text: str) -> str | None:
        words = _words(text)
        hits = [h for h in (self._hits(w) for w in words) if h]
        if not hits:
            return None
        fits = []
        for label, units in self.units.items():
            if not units or not all(any(lab == label for lab, _ in h) for h in hits):
                continue
            covered = len({i for h in hits for lab, i in h if lab == label})
            if covered / len(units) >= PARAPHRASE_MIN_COVERAGE:
                fits.append(label)
        return fits[0] if len(fits) == 1 else None

    # --- label text ------------------------------------------------------------------------------

    def resolve_text(self, label_text: str) -> str | None:
        """The asked label a separated label text names: exactly, with a qualifier after it
        (``ledger service port (tcp)``), with a typo, or in other words; None when none (or two)."""
        norm = _norm_label(label_text)
        if not norm:
            return None
        if norm in self.by_norm:
            return self.by_norm[norm]
        prefixed = [n for n in self.norms if norm.startswith(n) and not _is_word(norm[len(n)])]
        if prefixed:
            return self.by_norm[max(prefixed, key=len)]
        best = process.extract(norm, list(self.by_norm), scorer=fuzz.ratio,
                               score_cutoff=LABEL_MATCH_CUTOFF, limit=2)
        if best and not (len(best) == 2 and best[1][1] >= best[0][1] - 5):
            return self.by_norm[best[0][0]]
        if len(norm) > 80:
            return None  # a sentence, not a label
        return self.paraphrase(label_text)

    def at_start(self, body: str) -> tuple[str, str] | None:
        """An asked label named at the start of a line (markup around it allowed), with the text
        after it: ``**backup cutoff** 2026-07-14 01:26 UTC`` gives the label and the value."""
        cache = self._start_cache
        if body in cache:
            return cache[body]
        return remember(cache, _READING_CACHE_ENTRIES, body, self._at_start(body))

    def _at_start(self, body: str) -> tuple[str, str] | None:
        # The body's skeleton: markup left out, leading whitespace dropped, every run of
        # whitespace one space (``re``'s ``\s`` is ``str.isspace``); built in C, for a line of
        # prose runs to thousands of characters and only a label's length of it is mapped back.
        skeleton = _SPACE_RUN_RE.sub(" ", body.translate(_NO_MARKUP).lstrip())
        flat = normalize(skeleton)
        folded = flat.casefold()
        if len(folded) != len(flat) or len(flat) != len(skeleton):
            return None
        for norm in self.norms:
            if folded.startswith(norm) and (len(folded) == len(norm)
                                            or not _is_word(folded[len(norm)])):
                if len(folded) > len(norm) and folded[len(norm)] in "-." \
                        and len(folded) > len(norm) + 1 and _is_word(folded[len(norm) + 1]):
                    continue  # "release tag-2": another word
                end = _skeleton_offset(body, len(norm) - 1) + 1
                return self.by_norm[norm], body[end:]
        return None

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


@lru_cache(maxsize=64)
def _label_index(labels: tuple[str, ...], synonyms: tuple[str, ...]) -> _LabelIndex:
    """One index per label list (a sweep asks the same labels for every row)."""
    return _LabelIndex(labels, synonyms)


@dataclass(frozen=True)
class Binding:
    """One place an answer gives a value for a label."""

    label: str
    value: str
    line: int
    """The answer line (0-based) it stands on; -1 inside a JSON document."""
    how: str
    """``line``, ``table``, ``json``, ``inline``, ``sentence`` or ``position``."""


def _cell_split(line: str) -> list[str]:
    cells = [c.strip() for c in line.strip().split("|")]
    if line.strip().startswith("|"):
        cells = cells[1:]
    if line.strip().endswith("|") and cells:
        cells = cells[:-1]
    return cells


def _header_index(cells: Sequence[str], names: Sequence[str]) -> int | None:
    for i, cell in enumerate(cells):
        norm = _norm_label(cell)
        if norm in names or any(norm.startswith(n + " ") or norm.endswith(" " + n) for n in names):
            return i
    return None


def _table_bindings(block: Sequence[tuple[int, str]], index: _LabelIndex,
                    rx: _Compiled) -> list[Binding]:
    """Bind the rows of one markdown table (with or without outer pipes, any column order)."""
    rows = [(i, _cell_split(line)) for i, line in block if not _TABLE_RULE_RE.match(line)]
    has_rule = any(_TABLE_RULE_RE.match(line) for _, line in block)
    if not rows:
        return []
    head = rows[0][1]
    label_col = _header_index(head, _LABEL_KEYS)
    value_col = _header_index(head, _VALUE_KEYS)
    note_cols = [i for i, c in enumerate(head) if _norm_label(c) in _NOTE_KEYS]
    header = label_col is not None or value_col is not None or (
        has_rule and len(rows) > 1 and not any(index.resolve_text(c) for c in head))
    out: list[Binding] = []
    if not header and len(rows) > 1:
        # A transposed table: the header names the labels, the rows below hold the values.
        named = [index.resolve_text(c) if c else None for c in head]
        if sum(n is not None for n in named) >= 2 and not any(
                index.resolve_text(c) for _, cells in rows[1:] for c in cells if c):
            for i, cells in rows[1:]:
                for col, label in enumerate(named):
                    if label is not None and col < len(cells):
                        out.append(Binding(label, _clean_value(cells[col]), i, "table"))
            return out
    for i, cells in rows[1:] if header else rows:
        label = None
        at = None
        if label_col is not None and label_col < len(cells):
            label, at = index.resolve_text(cells[label_col]), label_col
        if label is None:
            for col, cell in enumerate(cells):
                if cell and not cell.replace(".", "").isdigit() and col != value_col:
                    label = index.resolve_text(cell)
                    if label is not None:
                        at = col
                        break
        if label is None or at is None:
            continue
        if value_col is not None and value_col != at:
            value = cells[value_col] if value_col < len(cells) else ""
            extra = [n for c in note_cols if c < len(cells) and c not in (at, value_col)
                     for n in [_note(_norm_label(head[c]), cells[c], rx)] if n]
        else:
            rest = [c for c in cells[at + 1:]]
            value = next((c for c in rest if c), "")
            after = rest[rest.index(value) + 1:] if value in rest else []
            extra = [c for c in after if c and _has_marker(c, rx)]
        value = _clean_value(value)
        if extra:
            value = " ; ".join([value, *extra]) if value else " ; ".join(extra)
        out.append(Binding(label, value, i, "table"))
    return out


_LOW_CONFIDENCE = frozenset("low medium moderate unsure uncertain guess guessed unknown none "
                            "partial tentative unverified".split())


def _note(key: str, value: Any, rx: _Compiled) -> str | None:
    """What a note beside a value adds to it: its text when it hedges, abstains or negates; a
    low confidence (``"confidence": "low"``, ``0.4``) as ``low confidence``; else nothing."""
    if value is None:
        return None
    text = str(value).strip()
    if key in ("confidence", "certainty"):
        try:
            number = float(text.rstrip("%"))
        except ValueError:
            return "low confidence" if text.casefold() in _LOW_CONFIDENCE else None
        scale = 100.0 if text.endswith("%") or number > 1 else 1.0
        return "low confidence" if number / scale < 0.8 else None
    return text if _has_marker(text, rx) else None


def _has_marker(text: str, rx: _Compiled) -> bool:
    return bool(rx.hedge.search(text) or rx.abstention.search(text)
                or rx.negation_start.search(text))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return " ; ".join(_scalar(v) for v in value)
    if isinstance(value, dict):
        inner = next((value[k] for k in value if _norm_label(str(k)) in _VALUE_KEYS), None)
        return _scalar(inner) if inner is not None else json.dumps(value, ensure_ascii=False)
    return str(value)


def _json_bindings(data: Any, index: _LabelIndex, rx: _Compiled, out: list[Binding],
                   depth: int = 0) -> None:
    """Walk a JSON document: keys that name labels, and ``{label: …, value: …}`` records, at any
    depth (``{"answers": [{"label": …, "value": …}]}``)."""
    if depth > 20:
        return
    if isinstance(data, list):
        for item in data:
            _json_bindings(item, index, rx, out, depth + 1)
        return
    if not isinstance(data, dict):
        return
    asked = index.asked
    numbered = [k for k in data if isinstance(k, str) and k.strip().isdigit()]
    if len(numbered) >= 2 and len(numbered) == len(data) \
            and all(1 <= int(k) <= len(asked) for k in numbered):
        # {"1": "62114", "2": "/opt/…"}: answers numbered in question order.
        for k in numbered:
            out.append(Binding(asked[int(k) - 1], _scalar(data[k]), -1, "position"))
        return
    keys = {_norm_label(str(k)): k for k in data}
    label_key = next((keys[k] for k in _LABEL_KEYS if k in keys
                      and isinstance(data[keys[k]], str)), None)
    value_key = next((keys[k] for k in _VALUE_KEYS if k in keys), None)
    if label_key is not None and value_key is not None:
        label = index.resolve_text(data[label_key])
        if label is not None:
            value = _scalar(data[value_key])
            notes = [n for k in _NOTE_KEYS if k in keys
                     for n in [_note(k, data[keys[k]], rx)] if n]
            out.append(Binding(label, " ; ".join([value, *notes]), -1, "json"))
            return
    for key, value in data.items():
        label = index.resolve_text(str(key)) if isinstance(key, str) else None
        if label is None:
            _json_bindings(value, index, rx, out, depth + 1)
            continue
        text = _scalar(value)
        if isinstance(value, dict):
            vk = next((k for k in value if _norm_label(str(k)) in _VALUE_KEYS), None)
            if vk is None:
                _json_bindings(value, index, rx, out, depth + 1)
                continue
            notes = [n for k in value if _norm_label(str(k)) in _NOTE_KEYS
                     for n in [_note(_norm_label(str(k)), value[k], rx)] if n]
            text = " ; ".join([_scalar(value[vk]), *notes])
        out.append(Binding(label, text, -1, "json"))


def _json_strings(data: Any, depth: int = 0) -> list[str]:
    """Every string in a JSON document, in order (not keys)."""
    if depth > 20:
        return []
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [t for v in data.values() for t in _json_strings(v, depth + 1)]
    if isinstance(data, list):
        return [t for v in data for t in _json_strings(v, depth + 1)]
    return []


_MAX_JSON_TRIES = 200
"""Places an answer is tried as the start of a JSON document (a bracket starting a line's
JSON, not every bracket of a long text)."""


def _json_documents(text: str) -> tuple[list[tuple[int, Any]], str]:
    """The JSON documents in an answer (whole, fenced or embedded) and the text outside them."""
    if json_depth(text) > MAX_DEPTH:  # nested past any answer's shape: read it as text only
        return [], text               # (the parser would recurse once per level)
    decoder = json.JSONDecoder()
    docs: list[tuple[int, Any]] = []
    rest: list[str] = []
    if json_depth(text) > MAX_DEPTH:
        return docs, text  # nested past any answer's need: read as lines, never recursed into
    pos = 0
    i = 0
    tries = 0
    while i < len(text):
        ch = text[i]
        if ch in "{[" and tries < _MAX_JSON_TRIES and not (i and text[i - 1] in "{["):
            tries += 1
            try:
                data, end = decoder.raw_decode(text, i)
            except (ValueError, RecursionError):
                i += 1
                continue
            if isinstance(data, (dict, list)) and data:
                docs.append((text.count("\n", 0, i), data))
                rest.append(text[pos:i])
                pos = i = end
                continue
        i += 1
    rest.append(text[pos:])
    return docs, "".join(rest)


def _is_table_row(line: str, index: _LabelIndex) -> bool:
    stripped = line.strip()
    if "|" not in stripped or _FENCE_RE.match(line):
        return False
    if stripped.startswith("|") or _TABLE_RULE_RE.match(line):
        return True
    cells = _cell_split(line)
    return len(cells) >= 2 and _separator(cells[0]) is None \
        and index.resolve_text(cells[0]) is not None


def bind_answer(answer_text: str, labels: Sequence[str],
                markers: AnswerMarkers | None = None) -> dict[str, list[Binding]]:
    """Every place an answer gives a value for each asked label, in the order they stand.

    Read: ``label: value`` lines (bullets, numbering, headings, bold or quoted labels, other
    case, ``=``, ``—``, ``?``, ``|``, a tab, or just a space after the label), markdown tables in
    any column layout (an index column, a header naming the label and value columns, no outer
    pipes, transposed), JSON anywhere in the answer (objects, lists of ``{label, value}``
    records, nested), YAML-ish ``label:``/``value:`` records, sentences (``The ledger service
    listens on port 62114.``), a value on the line after its label, continuation lines, and a
    numbered list of bare values in question order when no line names a label. Labels may be
    paraphrased (``Ledger port``, ``Cert expiry``): see :data:`PARAPHRASE_MIN_COVERAGE`.

    Args:
        answer_text: the recall answer exactly as the model returned it.
        labels: the labels asked for, in the order asked.
        markers: the answer markers (label synonyms, hedges); default the shipped ones.

    Returns:
        ``{label: [bindings]}`` for every asked label (an empty list: the answer never names it).
    """
    mk = markers or default_markers()
    rx = _compiled(mk)
    index = _label_index(tuple(labels), mk.synonyms)
    answer_text = _plain(answer_text)
    out: list[Binding] = []
    docs, text = _json_documents(answer_text) if ("{" in answer_text or "[" in answer_text) \
        else ([], answer_text)
    for at, doc in docs:
        walked: list[Binding] = []
        _json_bindings(doc, index, rx, walked)
        out += [Binding(b.label, b.value, at, b.how) for b in walked]
        if not walked:
            # No key names a label: the document's strings are text ({"summary": "- port: …"}).
            text += "\n" + "\n".join(_json_strings(doc))
    lines = text.splitlines()
    consumed: set[int] = set()
    # Tables: runs of rows.
    i = 0
    while i < len(lines):
        if _is_table_row(lines[i], index):
            j = i
            block = []
            while j < len(lines) and _is_table_row(lines[j], index):
                block.append((j, lines[j]))
                j += 1
            cut = 0
            for k in range(2, len(block)):
                if _TABLE_RULE_RE.match(block[k][1]) and not _TABLE_RULE_RE.match(block[k - 1][1]):
                    out += _table_bindings(block[cut: k - 1], index, rx)
                    cut = k - 1  # the row above a rule line heads a new table
            out += _table_bindings(block[cut:], index, rx)
            consumed.update(range(i, j))
            i = j
        else:
            i += 1
    per_line: dict[int, list[Binding]] = {}
    starts: dict[int, Binding] = {}
    record: tuple[str, int] | None = None
    for n, line in enumerate(lines):
        if n in consumed or _FENCE_RE.match(line) or not line.strip():
            continue
        found, start = _line_bindings(line, n, index, rx)
        # YAML-ish records: "- label: ledger service port" then "  value: 62114".
        split = _separated(line)
        if split is not None:
            key = _norm_label(split[0])
            if key in _LABEL_KEYS:
                named = index.resolve_text(split[1])
                if named is not None:
                    record = (named, n)
                    continue
            if key in _VALUE_KEYS and record is not None and n - record[1] <= 4:
                found, start = [Binding(record[0], _clean_value(split[1]), n, "line")], None
                record = None
        if found:
            per_line[n] = found
        if start is not None:
            starts[n] = start
    for n in sorted(per_line):
        for b in per_line[n]:
            value = b.value
            if b is starts.get(n):
                if not value:
                    nxt = next((j for j in range(n + 1, len(lines)) if lines[j].strip()), None)
                    prev = next((j for j in range(n - 1, -1, -1) if lines[j].strip()), None)
                    echoed = prev is not None and prev in starts and not starts[prev].value
                    if nxt is not None and not echoed and nxt not in per_line \
                            and nxt not in consumed \
                            and not _FENCE_RE.match(lines[nxt]) \
                            and not lines[nxt].rstrip().rstrip("*_").endswith(":"):
                        value = _clean_value(_NEXT_LINE_LEAD_RE.sub(
                            "", _LINE_PREFIX_RE.sub("", lines[nxt], count=1), count=1))
                        consumed.add(nxt)
                        value = _with_continuation(value, lines, per_line, consumed, n, nxt, rx)
                else:
                    value = _with_continuation(value, lines, per_line, consumed, n, n, rx)
            out.append(Binding(b.label, value, b.line, b.how))
    if not any(b.value.strip() for b in out if b.how not in ("inline", "sentence")):
        out += _positional(lines, labels, per_line, consumed)
    out.sort(key=lambda b: b.line)
    bound: dict[str, list[Binding]] = {label: [] for label in labels}
    seen: set[tuple[str, str, int, str]] = set()
    for b in out:
        ident = (b.label, b.value, b.line, b.how)
        if ident not in seen:
            seen.add(ident)
            bound[b.label].append(b)
    return bound


def _separated(line: str) -> tuple[str, str] | None:
    body = _LINE_PREFIX_RE.sub("", line, count=1)
    match = _separator(body)
    if match is None or match.start() == 0:
        return None
    return body[: match.start()], body[match.end():]


def _line_bindings(line: str, n: int, index: _LabelIndex, rx: _Compiled
                   ) -> tuple[list[Binding], Binding | None]:
    """The bindings one line makes, and the one at its start (whose value may be on the next
    line).

    A line's bindings depend on the line, the labels and the markers alone (``n`` only numbers
    them), so each line's are read once per label index and numbered on the way out."""
    held = index._line_cache.get(id(rx))
    if held is None or held[0] is not rx:
        held = index._line_cache[id(rx)] = (rx, {})
    cache = held[1]
    read = cache.get(line)
    if read is None:
        found, start = _read_line_bindings(line, 0, index, rx)
        read = remember(cache, _READING_CACHE_ENTRIES, line,
                        (tuple((b.label, b.value, b.how) for b in found), start is not None))
    out = [Binding(label, value, n, how) for label, value, how in read[0]]
    return out, (out[0] if read[1] else None)


def _read_line_bindings(line: str, n: int, index: _LabelIndex, rx: _Compiled
                        ) -> tuple[list[Binding], Binding | None]:
    body = _LINE_PREFIX_RE.sub("", line, count=1)
    found: list[Binding] = []
    start: Binding | None = None
    head = index.at_start(body)
    offset = 0
    if head is not None:
        label, rest = head
        after = _AFTER_LABEL_RE.match(rest)
        value = rest[after.end():] if after else rest
        start = Binding(label, _clean_value(index.cut_at_next_label(value.strip())), n, "line")
        offset = len(body) - len(rest)
    else:
        split = _separated(line)
        if split is not None and len(_norm_label(split[0])) <= 80:
            named = index.resolve_text(split[0])
            if named is not None:
                start = Binding(named, _clean_value(index.cut_at_next_label(split[1].strip())),
                                n, "line")
                offset = len(body) - len(split[1])
    if start is not None:
        found.append(start)
    found += [b for b in _inline(body, n, index, offset) if start is None or b.label != start.label
              or b.value != start.value]
    found += _sentences(body, n, index, rx, {b.label for b in found}, only_abstentions=bool(found))
    return found, start


# A connector between a label named inside a sentence and its value: "is", "was", ":", "=", …
_INLINE_CONNECTOR_RE = re.compile(
    r"^\s*(?:\*\*)?\s*(?:(?:is|was|are|were|remains|equals)\b|[:：=→]|->|[-–—](?=\s))\s*",
    re.IGNORECASE)
_CLAUSE_SPLIT_RE = re.compile(r";\s+|(?<=\S)[.!]\s+(?=[A-Z])|,?\s+(?:and|but|while|whereas)\s+"
                              r"(?=the\b|its\b|a\b)|,\s+(?=the\b)", re.IGNORECASE)


def _inline(text: str, n: int, index: _LabelIndex, offset: int) -> list[Binding]:
    """Labels a sentence names exactly, with a connector after them: ``The X is Y.``, or
    several ``X: Y, Z: W`` on one line. A value runs from its connector to the next asked label
    named on the line (or the line's end). Labels before ``offset`` are the line's own."""
    text = normalize(text).replace("**", "")
    folded = text.casefold()
    if len(folded) != len(text):  # casefold changed lengths (ß → ss): offsets would drift
        return []
    spans = sorted((m.start(), m.end(), label) for rx, label in index.patterns
                   for m in rx.finditer(folded))
    spans = [sp for sp in spans
             if not any(o[0] <= sp[0] and sp[1] <= o[1] and o != sp for o in spans)]
    paired = _respectively(text, folded, spans, n)
    if paired:
        return paired
    out = []
    for i, (begin, end, label) in enumerate(spans):
        if begin == 0 and offset:
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
            out.append(Binding(label, value, n, "inline"))
    return out


_RESPECTIVELY_RE = re.compile(r"[\s,;]*respectively\b[\s.,;]*", re.IGNORECASE)
_JOINED_LABELS_RE = re.compile(r"^\s*(?:,|and|&|,\s*and)?\s*(?:the\s+)?$", re.IGNORECASE)
_PAIR_SPLIT_RE = re.compile(r"\s*(?:,\s*and|,|;|\band\b|&)\s*", re.IGNORECASE)


def _respectively(text: str, folded: str, spans: Sequence[tuple[int, int, str]], n: int
                  ) -> list[Binding]:
    """``The ledger service port and the admin console port are 62114 and 47031, respectively``:
    labels joined by "and"/commas, one connector, as many values, bound pairwise."""
    if len(spans) < 2:
        return []
    tail = _RESPECTIVELY_RE.search(folded)
    stop = tail.start() if tail is not None else len(text.rstrip().rstrip("."))
    labels = [spans[0]]
    for sp in spans[1:]:
        if sp[0] >= stop or not _JOINED_LABELS_RE.match(text[labels[-1][1]: sp[0]]):
            break
        labels.append(sp)
    if len(labels) < 2:
        return []
    connector = _INLINE_CONNECTOR_RE.match(text[labels[-1][1]: stop])
    plural = re.match(r"\s*(?:are|were)\b", text[labels[-1][1]: stop], re.IGNORECASE)
    if connector is None or (tail is None and plural is None):
        return []  # without "respectively", only a plural "are"/"were" pairs them
    body = text[labels[-1][1] + connector.end(): stop]
    values = [v.strip() for v in _PAIR_SPLIT_RE.split(body) if v.strip()]
    if len(values) != len(labels):
        return []
    return [Binding(label, _clean_value(value), n, "inline")
            for (_, _, label), value in zip(labels, values, strict=True)]


def _sentences(text: str, n: int, index: _LabelIndex, rx: _Compiled, bound: set[str],
               only_abstentions: bool) -> list[Binding]:
    """Clauses that name one label in other words (``The ledger service listens on port
    62114``), or name it and say it is not known (``I no longer have the ledger service
    port``): the clause is the value text (the judge looks for the value's tokens in it). On a
    line that already binds something, only such abstentions are read."""
    out = []
    for clause in _CLAUSE_SPLIT_RE.split(text):
        clause = clause.strip()
        if not clause or (only_abstentions and not rx.abstention.search(clause)):
            continue
        label = index.paraphrase(clause)
        if label is not None and label not in bound:
            value = clause[:-1] if clause.endswith(".") and not clause[:-1].endswith(".") \
                else clause
            out.append(Binding(label, value.strip(), n, "sentence"))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _with_continuation(value: str, lines: Sequence[str], per_line: Mapping[int, object],
                       consumed: set[int], first: int, last: int, rx: _Compiled) -> str:
    """Append the lines that continue a label's answer: directly below it (no blank line), naming
    no label, and either indented deeper than the label's line or opening with a hedge, a
    negation or a parenthesis (``  - or 47031``, ``(possibly 47031)``). They are part of what
    the answer offers for that label, so a candidate hidden on them still competes."""
    extra = []
    for j in range(last + 1, len(lines)):
        line = lines[j]
        if not line.strip() or j in per_line or j in consumed or _FENCE_RE.match(line) \
                or line.lstrip().startswith("|"):
            break
        body = _LINE_PREFIX_RE.sub("", line, count=1).strip()
        opener = body.startswith("(") or rx.hedge.match(body) is not None \
            or rx.negation_start.match(body) is not None
        if _indent(line) <= _indent(lines[first]) and not opener:
            break
        extra.append(body)
        consumed.add(j)
    return " ".join([value, *extra]) if extra else value


def _positional(lines: Sequence[str], labels: Sequence[str], per_line: Mapping[int, object],
                consumed: set[int]) -> list[Binding]:
    """A list of bare values in question order, when no line names a label: ``1. 62114`` binds
    the first label asked; unnumbered items bind by position only when there is one per label."""
    numbered: list[Binding] = []
    plain: list[tuple[int, str]] = []
    for n, line in enumerate(lines):
        if n in per_line or n in consumed or not line.strip() or _FENCE_RE.match(line):
            continue
        if line.rstrip().rstrip("*_").endswith(":"):
            continue  # a heading: "Answers:"
        m = _NUMBERED_RE.match(line)
        if m is not None:
            k = int(m.group(1))
            if 1 <= k <= len(labels):
                numbered.append(Binding(labels[k - 1], _clean_value(m.group(2)), n, "position"))
            continue
        prefix = _LINE_PREFIX_RE.match(line)
        if prefix is not None and prefix.end() > 0:
            plain.append((n, _clean_value(_LINE_PREFIX_RE.sub("", line, count=1))))
        elif len(line.split()) <= 6:
            plain.append((n, _clean_value(line)))
    numbers = [int(m.group(1)) for n, line in enumerate(lines)
               if n not in per_line and n not in consumed and (m := _NUMBERED_RE.match(line))]
    if 2 <= len(numbered) and len(numbers) <= len(labels) and len(set(numbers)) == len(numbers):
        return numbered  # one numbered item per label at most: a list in question order
    if len(plain) == len(labels) and len(labels) >= 2:
        return [Binding(label, value, n, "position") for label, (n, value) in zip(labels, plain)]
    return []


def joined_value(bindings: Sequence[Binding]) -> str | None:
    """What an answer gives for one label across all its bindings: None when it never names it,
    else the distinct non-empty values in order, joined by `` ; `` ("" when all are empty)."""
    if not bindings:
        return None
    values = list(dict.fromkeys(b.value.strip() for b in bindings if b.value.strip()))
    return " ; ".join(values)


def parse_answer(answer_text: str, labels: Sequence[str],
                 markers: AnswerMarkers | None = None) -> dict[str, str | None]:
    """Bind each asked label to the text the answer gives for it, across the whole answer.

    Every line, cell or field bound to a label counts (``bind_answer``): a label answered twice
    with different values gets both (``62114 ; 47031``), so the judge sees competing values
    wherever they stand; the same value twice is one value.

    Args:
        answer_text: the recall answer exactly as the model returned it.
        labels: the labels asked for.
        markers: the answer markers (default: the shipped ones).

    Returns:
        ``{label: value text}`` for every asked label, in the order given; None when nothing
        names the label, "" when it is named but given no value.
    """
    return {label: joined_value(b) for label, b in bind_answer(answer_text, labels, markers).items()}


# ---------------------------------------------------------------------------------------------
# Grading a recall answer
# ---------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------
# One value per label: abstention, hedges, negation, strike-through and competing candidates
# ---------------------------------------------------------------------------------------------

_MARKER_SECTIONS = {"abstention": ("anywhere", "whole"), "hedge": ("anywhere",),
                    "negation": ("before", "after"), "strike": ("patterns",),
                    "label": ("synonyms",)}


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
    synonyms: tuple[str, ...] = ()
    """Groups of words (space-separated) that stand for each other in a paraphrased label
    (``count number total``): plain words, not patterns."""


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
            for entry in entries if section != "label" else ():
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
        synonyms=merged("label.synonyms", b.synonyms),
    )


@lru_cache(maxsize=1)
def default_markers() -> AnswerMarkers:
    """The shipped answer markers (``foldscope/core/data/answer_markers.toml``)."""
    text = resources.files("foldscope.core.data").joinpath("answer_markers.toml").read_text("utf-8")
    return markers_from_data(tomllib.loads(text), source="answer_markers.toml")


_AT_START = r"(?:(?<!\w)|(?!\w))"
_AT_END = r"(?:(?!\w)|(?<!\w))"


def _phrase_body(entry: str) -> str:
    """One marker entry as a regex: spaces match whitespace runs, ``'`` matches ``’`` too."""
    return re.sub(r"(?<!\\) ", r"\\s+", entry).replace("'", "['’]")


def _phrase(entry: str) -> str:
    """One marker entry as a regex (:func:`_phrase_body`) where a word character at either end
    only matches at a word boundary there."""
    return _AT_START + "(?:" + _phrase_body(entry) + ")" + _AT_END


def _phrases(entries: tuple[str, ...]) -> str:
    """Marker entries as one regex matching exactly where ``|``-joined :func:`_phrase` s would,
    found first in the same order: the boundary tests, the same for every entry and taking no
    characters, stand once around the alternation instead of twice in each entry. Written per
    entry, sre tries both boundary alternatives in front of every entry at every position (about
    70 us to scan a 35-character answer against the ~80 abstention markers; 6.5 us this way)."""
    if not entries:
        return _NEVER
    return _AT_START + "(?:" + "|".join("(?:" + _phrase_body(e) + ")" for e in entries) + ")" \
        + _AT_END


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
_PLACEHOLDER_RE = re.compile(f"[{_CANDIDATE}{_RIVAL}]")
_ALNUM_RE = re.compile(r"[^\W_]")
"""One character ``str.isalnum`` holds (``re``'s ``\\w`` is ``isalnum`` or ``_``)."""
_EITHER = f"[{_CANDIDATE}{_RIVAL}]"
_STROKES_RE = re.compile("(?:.[\u0335\u0336\u0337\u0338])+", re.DOTALL)


@lru_cache(maxsize=8)
def _compiled(markers: AnswerMarkers) -> _Compiled:
    alt = _phrases

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

def tag_kind(tag: str | None) -> str | None:
    """The identifier kind a scenario's free-form ``kind`` tag names (``port``, ``hostname`` →
    ``host``), or None."""
    return _KIND_TAGS.get((tag or "").strip().lower())


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


def shape_tokens(value: str, text: str) -> list[str]:
    """Tokens of a text with the exact shape of a value (each digit any digit, each letter any
    letter; values with a digit only): ``Отдел расчётов-5`` for ``Отдел расчётов-4``."""
    shape = _shape_re(normalize(value).strip())
    return [m.group() for m in shape.finditer(normalize(text))] if shape else []


_NOT_A_UNIT = frozenset("and or nor too also then vs is was are were the a an as but if so to in "
                        "on at of for with by from port ports".split())


_LIST_SPLIT_RE = re.compile(r"\s*[,;]\s*|\s+[/|]\s+|\s+(?:or|and)\s+")

_REFERENCE_BEFORE_RE = re.compile(
    r"(?:(?<![\w-])(?:chunks?|folds?|lines?|steps?|sections?|items?|pages?|parts?|rounds?|turns?|"
    r"batch(?:es)?|phases?|rows?|columns?|entry|entries|notes?|footnotes?|refs?|references?|"
    r"paragraphs?|messages?|calls?|attempts?|retry|retries|questions?|q|no\.|nr\.?)[ \t]*[#:]?"
    r"|#)[ \t]*$", re.IGNORECASE)
"""What before a number makes it a reference to a place, not a candidate value."""


_UNIT_AFTER_RE = re.compile(r"[ \t]+([^\W\d_]{2,})")


def _unit_after(text: str, end: int) -> str | None:
    match = _UNIT_AFTER_RE.match(text, end)
    return match.group(1).casefold() if match else None


@dataclass(frozen=True)
class Judgement:
    """How one label's answer stands towards its planted value (see ``judge_value``)."""

    correct: bool
    hedged: bool
    abstained: bool
    competitors: tuple[str, ...] = ()
    """The competing candidates found (other planted values, tokens of the value's kind)."""
    offered: bool = False
    """The answer offers a candidate value (the value, struck or not, or a competitor)."""
    given: str | None = None
    """The one value the answer asserts, when it asserts exactly one (else None)."""
    nothing: bool = False
    """The answer gives no value and no abstention: missing, empty, or text holding no value
    of the fact's kind."""
    resolved: bool = False
    """Struck or negated candidates came first and one asserted candidate last: the answer is
    that one (``~~62115~~ 62114``)."""


def _blank(text: str, spans: Iterable[tuple[int, int]], fill: str) -> str:
    """Replace each span by ``fill`` padded with spaces to the span's length (offsets kept)."""
    out = list(text)
    for start, end in spans:
        if end > start:
            out[start:end] = [fill] + [" "] * (end - start - 1)
    return "".join(out)


class _Taken:
    """Non-overlapping spans taken so far, kept sorted: an overlap test costs a bisection, not
    a scan (an answer may hold thousands of candidate tokens)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self._starts, end)  # spans starting before ``end``
        return i > 0 and self._ends[i - 1] > start

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)

    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self._starts, self._ends, strict=True))


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
    key = (found, value, tag, tuple(rivals), id(markers))
    judged = _JUDGED.get(key)
    if judged is None or judged[0] is not markers:
        judged = remember(_JUDGED, _READING_CACHE_ENTRIES, key,
                          (markers, _judge_value(found, value, tag, key[3], markers)))
    return judged[1]


_JUDGED: dict[tuple[str | None, str, str | None, tuple[str, ...], int],
              tuple[AnswerMarkers | None, Judgement]] = {}
"""Judgements by their arguments (``judge_value`` is a function of them; markers by id, kept
alive beside the judgement): the same answer text for the same value recurs across a sweep's
rows (every correct answer is the value itself) and across a row's bindings."""


def _judge_value(found: str | None, value: str, tag: str | None, rivals: tuple[str, ...],
                 markers: AnswerMarkers | None) -> Judgement:
    """:func:`judge_value`, computed."""
    if found is None or not found.strip():
        return Judgement(False, False, False, nothing=True)
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
    cand_at: dict[int, str] = {}
    parts: list[str] = []
    spans = _Taken()
    for rival, words in _rival_order(tuple(rivals)):
        if not rival or rival in norm_value:
            continue
        if not all(word in rest for word in words):
            continue  # a whole-token match needs every word of the rival (most are absent)
        for start, end in token_spans(rest, rival):
            if not spans.overlaps(start, end):
                spans.add(start, end)
                competitors.append(rival)
                cand_at[start] = rival
    rest = _blank(rest, spans.spans(), _RIVAL)
    kinds = competing_kinds(value, tag)
    unit = split_unit(norm_value)
    found_ids = find_identifiers(rest, kinds=kinds) if kinds else []
    shape = _shape_re(norm_value)
    shaped = [(m.start(), m.end(), m.group()) for m in shape.finditer(rest)] if shape else []
    spans = _Taken()
    for start, end, token in [(i.start, i.end, i.value) for i in found_ids] + shaped:
        if spans.overlaps(start, end):
            continue
        if _RIVAL in token or _CANDIDATE in token:
            continue
        if token == norm_value:
            # The value itself, but glued to an extension of its kind ("…UTC+3"): another value.
            ext = _value_pattern(norm_value, False).extension
            grown = ext.match(rest, end) if ext is not None else None
            if grown is not None:
                more = re.match(r"[^\s,;()\[\]<>\"'`*]*", rest[grown.end():])
                token = rest[start: grown.end() + (more.end() if more else 0)].rstrip(".")
                end = start + len(token)
            else:
                parts.append(token)
                continue
        elif token in norm_value:
            parts.append(token)  # part of the value ("19" of "19 shards"): offered, not a rival
            continue
        if token[0].isdigit() and token.replace(".", "").replace(",", "").isdigit():
            following = _unit_after(rest, end)
            own_unit = unit[1].casefold() if unit else None
            if following and following != own_unit and following not in _NOT_A_UNIT \
                    and rx.hedge.fullmatch(following) is None:
                continue  # "3 regions" beside "19 shards": a number of something else
            if _REFERENCE_BEFORE_RE.search(rest, max(0, start - 24), start) \
                    or rest.startswith("%", end):
                continue  # "chunk 3", "fold 2", "#4", "100%": a reference or a share, no value
        spans.add(start, end)
        competitors.append(token)
        cand_at[start] = token
    rest = _blank(rest, spans.spans(), _RIVAL)

    hedge = rx.hedge.search(rest) is not None
    negated_at = {m.end() - 1 for m in rx.negation_before.finditer(rest)} | {
        m.start() for m in rx.negation_after.finditer(rest)}
    negated = bool(negated_at)
    rivals_n = len(competitors)
    residue = rest.strip(" \t\n.,;:!?()[]*_`\"'«»“”-")
    # A value of no identifier kind is any text; for a value of a kind, a text offers a value
    # when it holds a token of that kind, or is one bare token itself ("dns.test", "default"):
    # prose holding no such token ("the usual one") gives nothing.
    # A list of bare tokens ("1024, 32768, 512") offers each of them.
    items = [i for i in _LIST_SPLIT_RE.split(residue) if i.strip(" .")] if residue else []
    bare = bool(items) and all(len(i.split()) == 1 and _ALNUM_RE.search(i) is not None
                               for i in items)
    offered = asserted or value_struck or bool(rivals_n) or bool(parts) or bool(
        residue and not abstain and (not kinds or bare))
    if kinds and bare and not (asserted or rivals_n or parts) and len(set(items)) >= 2:
        rivals_n = len(set(items))  # several bare values of no kind: several candidates
    # A struck or negated candidate followed by one asserted candidate is that candidate
    # ("~~62115~~ 62114", "not 62115 but 62114", "62115 is wrong; 62114").
    order = sorted([(m.start(), m.group(), m.start() in negated_at)
                    for m in _PLACEHOLDER_RE.finditer(rest)]
                   + [(a, "struck", True) for (a, b), t in zip(struck_spans, struck_texts)
                      if t.strip()])
    if len(order) >= 2 and not order[-1][2] and all(c[2] for c in order[:-1]) \
            and not (hedge or abstain) and not (value_struck and order[-1][1] == _CANDIDATE):
        last = order[-1][1]
        if last == _CANDIDATE:
            return Judgement(True, False, False, (), offered=True, given=norm_value,
                             resolved=True)
        given = cand_at.get(order[-1][0]) if last == _RIVAL else None
        return Judgement(False, False, False, tuple(competitors), offered=True, given=given,
                         resolved=True)
    if asserted:
        correct = not (struck or hedge or negated or abstain or rivals_n)
        return Judgement(correct, not correct, False, tuple(competitors), offered=True,
                         given=norm_value if correct else None)
    if value_struck:
        return Judgement(False, True, False, tuple(competitors), offered=True)
    if abstain and not rivals_n:
        return Judgement(False, False, True)
    if not offered:
        # Text with no value of the fact's kind ("the default one", "see the runbook"): no value
        # given, so nothing to credit, hedge or call invented.
        return Judgement(False, False, False, nothing=True)
    hedged = rivals_n >= 2 or hedge or negated or struck or (abstain and rivals_n > 0)
    if hedged:
        given = None
    elif rivals_n == 1:
        given = competitors[0]
    elif not rivals_n and len(set(parts)) == 1:
        given = parts[0]
    else:
        given = None if kinds or shape is not None else " ".join(rest.split()) or None
    return Judgement(False, hedged, False, tuple(competitors), offered=True,
                     given=None if hedged else given)


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
    """Not correct, and the answer says it does not have the value (an abstention marker:
    ``unknown``, ``not recorded``, ``N/A``…) and offers no candidate."""
    unit_dropped: bool
    """Diagnostic only: the number survived, its unit word did not."""
    hedged: bool = False
    """Not correct: more than one candidate, or a hedged, negated or struck value (see
    ``judge_value``). Never credited, never an abstention."""
    competitors: tuple[str, ...] = ()
    """The competing candidates the answer offered beside (or instead of) the value."""
    nothing: bool = False
    """The answer gave no value and no abstention for this label: no line names it, it is
    named with no value, or its text holds no value of the fact's kind. Not an abstention."""
    given: str | None = None
    """The one value the answer asserts for the label (None: none, or several)."""


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
    bound = bind_answer(answer_text, [fact.label for fact in facts], markers)
    pool = list(dict.fromkeys([*(fact.value for fact in facts), *rivals]))
    grades = []
    for fact in facts:
        tag = getattr(fact, "kind", None)
        others = [v for v in pool if v != fact.value]
        found, verdict = _judge_bindings(bound[fact.label], fact.value, tag, others, markers)
        grades.append(FactGrade(
            label=fact.label,
            expected=fact.value,
            found=found,
            correct=verdict.correct,
            abstained=verdict.abstained,
            unit_dropped=not verdict.correct and unit_dropped(fact.value, found),
            hedged=verdict.hedged,
            competitors=verdict.competitors,
            nothing=verdict.nothing,
            given=verdict.given,
        ))
    return grades


def _judge_bindings(bindings: Sequence[Binding], value: str, tag: str | None,
                    rivals: Sequence[str], markers: AnswerMarkers | None
                    ) -> tuple[str | None, Judgement]:
    """One label, one value, across every binding: the bindings that offer a value or an
    abstention are judged together (two different values are competing candidates wherever
    they stand); bindings that offer neither (an echoed label, "see below") are dropped when
    another one says something."""
    texts = list(dict.fromkeys(b.value.strip() for b in bindings if b.value.strip()))
    if not texts:
        return ("" if bindings else None), judge_value(None, value, tag=tag, rivals=rivals,
                                                       markers=markers)
    judged = [(t, judge_value(t, value, tag=tag, rivals=rivals, markers=markers)) for t in texts]
    saying = [(t, j) for t, j in judged if not j.nothing]
    if not saying:
        return texts[0], judged[0][1]
    if len(saying) == 1:
        return saying[0]
    found = " ; ".join(t for t, _ in saying)
    whole = judge_value(found, value, tag=tag, rivals=rivals, markers=markers)
    if whole.correct and not whole.resolved and not all(j.correct for _, j in saying):
        # Another binding says something else (a value of no kind the judge looks for, an
        # abstention, a hedge): one label, two answers.
        whole = Judgement(False, True, False, whole.competitors, offered=True)
    elif not (whole.correct or whole.hedged or whole.abstained) and len(
            {j.given for _, j in saying if not j.abstained}) > 1:
        whole = Judgement(False, True, False, whole.competitors, offered=True)
    return found, whole


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
