"""Near misses: the one definition of "a value altered by a small, named edit".

Used wherever foldscope says *mutated*: a fact's state in a carrier (the fold timeline), the
answer classes (a carrier that held the value mutated), the grader's diagnostics and session
audits. A near miss is never the value itself: a text that holds the value verbatim as a whole
token (the grader's presence rule, ``core.grading``) has no near miss of it.

Rules, in the order they are preferred (the first that holds names the edit); the altered text
is the original with...

* ``case_changed`` -- the same letters in another case (``kid-7f3a9c21``); any value with letters.
* ``unit_dropped`` -- only the number part of ``<number> <unit words>`` (``19`` for
  ``19 shards``; ``2026-07-14 01:26`` for ``2026-07-14 01:26 UTC``).
* ``transposed`` -- two adjacent characters swapped (``3f1c9a25`` for ``3f1c9a52``).
* ``digit_changed`` -- one digit replaced by another digit (``62115`` for ``62114``).
* ``char_changed`` -- one character replaced, not digit for digit (``kid-7F3A9C2l``).
* ``char_dropped`` -- one character deleted (``6214`` for ``62114``).
* ``char_added`` -- one character inserted (``621140`` for ``62114``).
* ``minute_changed`` -- only the minutes of a time of day replaced (``01:45`` for ``01:26``);
  values of kind ``time`` or ``timestamp``.
* ``truncated`` -- only a leading part kept: a proper prefix of the value, or of a digest's hex
  after ``sha256:``, of at least ``TRUNCATED_MIN_CHARS`` characters; kinds ``uuid``, ``hash``,
  ``digest``.
* ``embedded`` -- the value verbatim but glued inside a longer token (``62114.5``,
  ``install.lock.bak``): the grader does not count it, yet it is there.

Thresholds:

* A value shorter than ``MIN_VALUE_CHARS`` characters (spaces not counted) has no near misses: at
  that length one edit is just another ordinary value.
* For an all-digit value (a port, a count) an edit must keep it all digits: ``6211a`` is not a
  near miss of ``62114``.
* In free text, ``unit_dropped`` needs a number part of at least ``MIN_VALUE_CHARS`` characters
  (a bare ``19`` is everywhere); comparing two whole values (:func:`is_near_miss`) it does not.
* Transposition, substitution, deletion and insertion are one edit each; two edits are no near
  miss (``62141`` → transposed, ``61241`` → not). Only ``minute_changed`` may change two digits.

The value's kind comes from ``core.identifiers`` (``main_kind``) unless the caller names one;
a scenario kind that is no identifier kind (``count``, ``image_digest``) falls back to the value's
own kind.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from foldscope.core.grading import normalize, split_unit, tag_kind, token_spans
from foldscope.core.identifiers import default_rules, main_kind

MIN_VALUE_CHARS = 4
"""Values shorter than this (spaces not counted) never have near misses."""

TRUNCATED_MIN_CHARS = 7
"""The shortest prefix that counts as a truncated UUID or hash (git's short commit id)."""

CASE_CHANGED = "case_changed"
UNIT_DROPPED = "unit_dropped"
TRANSPOSED = "transposed"
DIGIT_CHANGED = "digit_changed"
CHAR_CHANGED = "char_changed"
CHAR_DROPPED = "char_dropped"
CHAR_ADDED = "char_added"
MINUTE_CHANGED = "minute_changed"
TRUNCATED = "truncated"
EMBEDDED = "embedded"

RULES: tuple[str, ...] = (CASE_CHANGED, UNIT_DROPPED, TRANSPOSED, DIGIT_CHANGED, CHAR_CHANGED,
                          CHAR_DROPPED, CHAR_ADDED, MINUTE_CHANGED, TRUNCATED, EMBEDDED)
"""Every rule name, most preferred first (the order a text's best near miss is chosen by)."""

_TIME_KINDS = frozenset({"time", "timestamp", "clock"})
_TRUNCATABLE_KINDS = frozenset({"uuid", "hash", "digest"})
_MINUTE_RE = re.compile(r"(?<!\d)\d{1,2}:(\d{2})(?!\d)")
_DIGEST_PREFIX_RE = re.compile(r"^[A-Za-z0-9]+[:=-](?=[0-9a-fA-F]{16,}$)")

# Characters that separate tokens in free text whatever the value: a near miss never spans one.
_SEPARATORS = " \t\n\r\f\v,;=|()[]{}<>\"'`*«»“”‘’"
_TOKEN_RE = re.compile("[^" + re.escape(_SEPARATORS) + r"\u2028\u2029\u00a0\u200b]+")
# Inside a token, ``host:62115``, ``62115/tcp`` and ``ops@host`` hold sub-tokens worth comparing.
_SUBSPLIT_RE = re.compile(r"[:/@]")
_TRAILING = ".:!?…"


@dataclass(frozen=True)
class NearMiss:
    """A near miss of a value: the altered text, the original, and the named edit between them.

    ``start``/``end`` locate ``altered`` in the (normalised) text searched:
    ``normalize(text)[start:end] == altered``; for :func:`is_near_miss` they span the candidate.
    """

    altered: str
    original: str
    rule: str
    start: int
    end: int
    kind: str | None = None
    """The value's kind (``core.identifiers``) the rules were chosen by, None when it has none."""


# ---------------------------------------------------------------------------------------------
# Comparing two whole values
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def value_kind(value: str, kind: str | None = None) -> str | None:
    """The identifier kind the rules use: ``kind`` when it names one, else the value's own.

    One rule with the grader's: a scenario's free-form tag names a kind through
    ``core.grading.tag_kind`` (``hostname`` → ``host``), so ``ledger01`` tagged ``hostname``
    is a host here as it is to the grader.

    Args:
        value: the original value.
        kind: a kind the caller knows (a scenario's fact kind): an identifier kind, or a tag
            ``tag_kind`` maps to one; anything else is ignored.

    Returns:
        An identifier kind name, or None.
    """
    if kind is not None:
        if kind in _kind_names():
            return kind
        tagged = tag_kind(kind)
        if tagged is not None and tagged in _kind_names():
            return tagged
    return main_kind(value)


@lru_cache(maxsize=1)
def _kind_names() -> frozenset[str]:
    return frozenset(rule.name for rule in default_rules())


def _significant(value: str) -> int:
    # Characters that are not whitespace (``str.split`` splits at exactly ``str.isspace``),
    # counted in C: this runs once per candidate of every near-miss search.
    return len("".join(value.split()))


def edit_rule(altered: str, original: str, kind: str | None = None, *,
              in_text: bool = False) -> str | None:
    """Name the edit that turns ``original`` into ``altered``, or None when it is no near miss.

    Both strings are compared as given (callers normalise). Equal strings are no near miss.

    Args:
        altered: the candidate text.
        original: the value.
        kind: the value's identifier kind (see :func:`value_kind`).
        in_text: the candidate was cut out of free text (applies the ``unit_dropped`` length
            threshold).

    Returns:
        One of :data:`RULES`, or None.
    """
    if altered == original or not altered or _significant(original) < MIN_VALUE_CHARS:
        return None
    if altered.lower() == original.lower() or altered.casefold() == original.casefold():
        return CASE_CHANGED
    unit = split_unit(original)
    if unit is not None and " ".join(altered.split()) == unit[0] and (
            not in_text or _significant(unit[0]) >= MIN_VALUE_CHARS):
        return UNIT_DROPPED
    if original.isdigit() and not altered.isdigit():
        return EMBEDDED if original in altered else None
    rule = _one_edit(altered, original)
    if rule is not None:
        return rule
    if kind in _TIME_KINDS and _minute_changed(altered, original):
        return MINUTE_CHANGED
    if kind in _TRUNCATABLE_KINDS and _truncated(altered, original):
        return TRUNCATED
    if original in altered:
        return EMBEDDED
    return None


def _one_edit(a: str, v: str) -> str | None:
    if len(a) == len(v):
        diffs = [i for i in range(len(v)) if a[i] != v[i]]
        if len(diffs) == 1:
            i = diffs[0]
            return DIGIT_CHANGED if a[i].isdigit() and v[i].isdigit() else CHAR_CHANGED
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1:
            i = diffs[0]
            if a[i] == v[i + 1] and a[i + 1] == v[i]:
                return TRANSPOSED
        return None
    if len(a) == len(v) - 1:
        i = _first_diff(a, v)
        return CHAR_DROPPED if a[i:] == v[i + 1:] else None
    if len(a) == len(v) + 1:
        i = _first_diff(v, a)
        return CHAR_ADDED if a[i + 1:] == v[i:] else None
    return None


def _first_diff(shorter: str, longer: str) -> int:
    for i, ch in enumerate(shorter):
        if ch != longer[i]:
            return i
    return len(shorter)


def _minute_changed(a: str, v: str) -> bool:
    if len(a) != len(v):
        return False
    for match in _MINUTE_RE.finditer(v):
        s, e = match.span(1)
        if a[:s] == v[:s] and a[e:] == v[e:] and a[s:e].isdigit() and a[s:e] != v[s:e] \
                and int(a[s:e]) < 60:
            return True
    return False


def _truncated(a: str, v: str) -> bool:
    if len(a) < TRUNCATED_MIN_CHARS or a.endswith("-"):
        return False
    prefix = _DIGEST_PREFIX_RE.match(v)
    if len(a) < len(v) and v.startswith(a):
        # ``sha256:14e`` keeps the algorithm but too little of the digest to name it.
        return len(a) - (prefix.end() if prefix else 0) >= TRUNCATED_MIN_CHARS
    if prefix:
        body = v[prefix.end():]
        return len(a) < len(body) and body.startswith(a)
    return False


def is_near_miss(candidate: str, value: str, kind: str | None = None) -> NearMiss | None:
    """Compare two whole values: is ``candidate`` a near miss of ``value``?

    Args:
        candidate: a whole value (an answer's value, a token); surrounding spaces are ignored.
        value: the original value.
        kind: the value's kind if known (see :func:`value_kind`).

    Returns:
        The near miss (spanning the stripped candidate), or None: for the value itself (also
        with other whitespace, or as a whole token of a longer candidate), an unrelated value,
        or a value too short to have near misses.
    """
    cand, orig = normalize(candidate).strip(), normalize(value).strip()
    if not cand or not orig or cand.split() == orig.split() or token_spans(cand, orig):
        return None
    resolved = value_kind(orig, kind)
    rule = edit_rule(cand, orig, resolved)
    if rule is None:
        return None
    return NearMiss(cand, orig, rule, 0, len(cand), resolved)


def token_near_miss(candidate: str, value: str, kind: str | None = None) -> NearMiss | None:
    """Is a whole token of the value's own kind a near miss of it? The strict form of
    :func:`is_near_miss` for texts whose tokens have been found by kind (session audits).

    Beyond :func:`is_near_miss`, the candidate is never the value glued inside a longer token
    (``embedded``), never a word of letters only (a dictionary word is no garbled identifier),
    and an all-digit value's near miss keeps its length (``500`` is no garbled port ``5001``).

    Args:
        candidate: a token of the value's kind found in the text.
        value: the original value.
        kind: the value's kind.

    Returns:
        The near miss, or None.
    """
    miss = is_near_miss(candidate, value, kind)
    if miss is None or miss.rule == EMBEDDED:
        return None
    altered = miss.altered
    if altered.isalpha() and not miss.original.isalpha():
        return None
    if miss.original.isdigit() and len(altered) != len(miss.original):
        return None
    return miss


# ---------------------------------------------------------------------------------------------
# Finding a near miss inside a text
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _TextIndex:
    text: str
    words: tuple[tuple[int, int], ...]
    """Separator-delimited tokens (``start``, ``end``), trailing ``.:!?…`` trimmed."""
    by_length: dict[int, dict[str, int]]
    """Token and sub-token texts by length → first start offset."""


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    return start, end


@lru_cache(maxsize=8)
def _index(text: str) -> _TextIndex:
    words: list[tuple[int, int]] = []
    by_length: dict[int, dict[str, int]] = {}
    # One pass over the tokens, each trimmed by rstrip (what _trim does, in C): a carrier holds
    # thousands and is indexed once per fold.
    for match in _TOKEN_RE.finditer(text):
        raw = match.group()
        token = raw.rstrip(_TRAILING)
        if not token:
            continue
        start = match.start()
        size = len(token)
        end = start + size
        words.append((start, end))
        by_length.setdefault(size, {}).setdefault(token, start)
        # The raw token too: a value that itself ends in ``.`` or ``:`` is compared whole.
        if size != len(raw):
            by_length.setdefault(len(raw), {}).setdefault(raw, start)
        if _SUBSPLIT_RE.search(token):
            pos = start
            for part in _SUBSPLIT_RE.split(token):
                kept = part.rstrip(_TRAILING)
                if kept:
                    by_length.setdefault(len(kept), {}).setdefault(kept, pos)
                pos += len(part) + 1
    return _TextIndex(text, tuple(words), by_length)


def _candidates(index: _TextIndex, value: str, kind: str | None
                ) -> Iterator[tuple[str, int, int]]:
    """Texts in the index that could be a near miss of ``value``: (text, start, end)."""
    size = len(value)
    if len(value.split()) == 1:
        for length in (size - 1, size, size + 1):
            for cand, start in index.by_length.get(length, {}).items():
                yield cand, start, start + length
        if kind in _TRUNCATABLE_KINDS:
            for length in range(TRUNCATED_MIN_CHARS, size - 1):
                for cand, start in index.by_length.get(length, {}).items():
                    if cand in value:
                        yield cand, start, start + length
    else:
        n = len(value.split())
        words = index.words
        text = index.text
        # Runs of n words: (start of word i, end of word i + n - 1).
        for (start, _), (_, end) in zip(words, words[n - 1:]):
            if size - 1 <= end - start <= size + 1 and "\n" not in text[start:end]:
                yield text[start:end], start, end
    unit = split_unit(value)
    if unit is not None:
        head = unit[0]
        n = len(head.split())
        if n == 1:
            found = index.by_length.get(len(head), {}).get(head)
            if found is not None:
                yield head, found, found + len(head)
        else:
            words = index.words
            text = index.text
            first, last, least = head[0], head[-1], len(head)
            for (start, _), (_, end) in zip(words, words[n - 1:]):
                # Collapsing whitespace keeps a run's first and last characters unless they are
                # whitespace (a word may start or end with a space that is no separator, such
                # as U+2003) and never lengthens it: cheap tests before the join.
                if end - start >= least \
                        and (text[start] == first or text[start].isspace()) \
                        and (text[end - 1] == last or text[end - 1].isspace()) \
                        and " ".join(text[start:end].split()) == head:
                    yield text[start:end], start, end
    # The value glued inside a longer token: found where it occurs, widened to the token.
    text = index.text
    at = text.find(value)
    while at >= 0:
        start, end = at, at + len(value)
        while start > 0 and text[start - 1] not in _SEPARATORS:
            start -= 1
        while end < len(text) and text[end] not in _SEPARATORS:
            end += 1
        start, end = _trim(text, start, end)
        if end - start > len(value):
            yield text[start:end], start, end
        at = text.find(value, at + 1)


def near_miss(text: str, value: str, kind: str | None = None) -> NearMiss | None:
    """The best near miss of ``value`` inside ``text``.

    Candidates are the text's tokens (split at whitespace and ``, ; = | ( ) [ ] { } < >`` and
    quotes, a trailing ``. : ! ? …`` trimmed), their parts around ``: / @``, and runs of as many
    words as the value has. The best is the candidate whose rule comes first in :data:`RULES`,
    then the earliest.

    Args:
        text: a carrier, an answer, a chunk (any length; the token index of the last few texts
            is cached, so asking for many values in one text tokenises it once).
        value: the original value.
        kind: the value's kind if known (see :func:`value_kind`).

    Returns:
        The near miss, with offsets into ``normalize(text)``; None when the value is present
        verbatim as a whole token, or nothing in the text is a near miss of it.
    """
    norm = normalize(text)
    orig = normalize(value).strip()
    if not orig or not norm or _significant(orig) < MIN_VALUE_CHARS:
        return None
    if token_spans(norm, orig):
        return None
    return _search_by_lines(norm, orig, value_kind(orig, kind))


class _Prefilter:
    """A test, much cheaper than :func:`edit_rule`, that a candidate fails only when no rule can
    name an edit from the value to it (so skipping it never changes a search's result).

    Why it is exact, rule by rule, for a value ``v`` of at least ``MIN_VALUE_CHARS`` characters
    and a candidate ``c``:

    * ``case_changed`` needs ``c.lower() == v.lower()`` or ``c.casefold() == v.casefold()``: tested
      as such.
    * ``unit_dropped`` needs ``" ".join(c.split())`` to be the value's number part: tested as such.
    * ``transposed``, ``digit_changed``, ``char_changed``, ``char_dropped``, ``char_added`` (one
      edit at position ``i``): an edit that is not at the start leaves ``c[0] == v[0]``; one at the
      start (a swap of the first two characters, a first character replaced, dropped or added)
      leaves the last character where it was, since ``v`` has more than two characters.
    * ``minute_changed`` keeps everything before the minutes, at least two characters (``h:``),
      so ``c[0] == v[0]``.
    * ``truncated`` keeps a leading part of ``v`` or of its digest after the prefix: ``c in v``.
    * ``embedded`` (either branch) is ``v in c``.
    """

    __slots__ = ("first", "last", "value", "lower", "folded", "head")

    def __init__(self, value: str) -> None:
        self.first, self.last, self.value = value[:1], value[-1:], value
        self.lower, self.folded = value.lower(), value.casefold()
        unit = split_unit(value)
        self.head = unit[0] if unit is not None else None

    def admits(self, cand: str) -> bool:
        """False only when ``edit_rule(cand, value, ...)`` is None, whatever the kind."""
        return (cand[:1] == self.first or cand[-1:] == self.last or self.value in cand
                or cand in self.value or cand.lower() == self.lower
                or cand.casefold() == self.folded
                or (self.head is not None and " ".join(cand.split()) == self.head))


def _search(norm: str, orig: str, resolved: str | None, *, prefilter: bool = True
            ) -> NearMiss | None:
    """The best near miss of ``orig`` (normalised, stripped, not present as a token) in
    ``norm``; ``prefilter=False`` compares every candidate (the reference the tests hold the
    prefiltered search to)."""
    best = _best(_index(norm), orig, resolved, prefilter)
    if best is None:
        return None
    _, _, rule, start, end = best
    return NearMiss(norm[start:end], orig, rule, start, end, resolved)


_Best = tuple[int, int, str, int, int]
"""A candidate's rank: (rule's place in RULES, start, rule, start, end); the least is the best."""


def _best(index: _TextIndex, orig: str, resolved: str | None, prefilter: bool = True
          ) -> _Best | None:
    admits = _Prefilter(orig).admits if prefilter else None
    best: _Best | None = None
    for cand, start, end in _candidates(index, orig, resolved):
        if admits is not None and not admits(cand):
            continue
        rule = edit_rule(cand, orig, resolved, in_text=True)
        if rule is None:
            continue
        key = (_RULE_RANK[rule], start, rule, start, end)
        if best is None or key < best:
            best = key
    return best


_RULE_RANK = {rule: n for n, rule in enumerate(RULES)}


# ---------------------------------------------------------------------------------------------
# The same search line by line: each line's best remembered, only lines a probe finds read
# ---------------------------------------------------------------------------------------------
#
# A carrier is searched for every planted value after every fold, and most of its lines come
# back unchanged in the next fold (and in the row's final grading), so the search is taken
# apart by line, and each line's best near miss of a value is remembered. Why that is exact:
#
# * Every candidate lies inside one line: tokens and their parts never hold a ``\n`` (a
#   separator), runs of a value's words are taken only without one; the value glued inside a
#   longer token is widened only up to separators. The one exception is a run of a unit's
#   several-word number part (``2026-07-14\n01:26`` for ``2026-07-14 01:26 UTC``): such a
#   value is searched whole when one could stand across lines (:func:`_crosses_lines`).
# * The token index keeps a text's first start of each token text; a line's keeps the line's
#   first, so the earliest line's start is the text's.
# * The best is the least (rule, start); over lines in order that is the least (rule, line,
#   start within the line): the same candidate, at the same offset once the line's is added.
#
# And a line no probe of the value occurs in (:func:`_probes`) holds no candidate any rule
# names, so it is not read at all.

_EXOTIC_SPACES = ("\x1c\x1d\x1e\x1f\x85\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                  "\u2007\u2008\u2009\u200a\u202f\u205f\u3000")
"""Whitespace to ``str.split`` that separates no tokens (a token may start or end with one)."""
_EXOTIC_SPACE_RE = re.compile(f"[{_EXOTIC_SPACES}]")


@lru_cache(maxsize=4096)
def _probes(orig: str, resolved: str | None) -> tuple[str, ...]:
    """Casefolded texts one of which a line's casefolded text holds wherever the line holds a
    candidate that some rule names as a near miss of ``orig`` (at least ``MIN_VALUE_CHARS``
    long, no ``\n``). With ``h = (len(orig) - 1) // 2``, ``A = orig[:h]``, ``B = orig[h + 1:]``:

    * one edit at position ``i`` (substitution, deletion, insertion, or a swap of ``i`` and
      ``i + 1``) leaves ``orig[:i]`` in front and ``orig[i + 1:]`` or ``orig[i + 2:]`` behind:
      ``A`` when ``i >= h``, else ``B`` (which starts at ``h + 1 >= i + 1``, or ``>= i + 2``
      for a swap at ``i <= h - 1``); ``minute_changed`` keeps all but two digits at ``s >= 2``:
      ``A`` when ``s >= h``, else ``B``;
    * ``embedded`` holds the whole value, so ``A``;
    * ``case_changed``: ``c.lower() == v.lower()`` or ``c.casefold() == v.casefold()``, and
      ``casefold(lower(ch)) == casefold(ch)`` for every character (final sigma too), so either
      way ``casefold(c) == casefold(v)``, which starts with ``casefold(A)``; casefolding maps
      each character on its own, so a line's casefold holds the casefold of its every part;
    * ``unit_dropped`` in free text needs a number part of ``MIN_VALUE_CHARS``: its first word;
    * ``truncated``: a prefix of at least ``TRUNCATED_MIN_CHARS`` of the value or of a digest's
      hex after its prefix (or one of at least ``h`` characters, which holds ``A``).
    """
    h = (len(orig) - 1) // 2
    probes = {orig[:h], orig[h + 1:]}
    unit = split_unit(orig)
    if unit is not None and _significant(unit[0]) >= MIN_VALUE_CHARS:
        probes.add(unit[0].split()[0])
    if resolved in _TRUNCATABLE_KINDS:
        probes.add(orig[:TRUNCATED_MIN_CHARS])
        prefix = _DIGEST_PREFIX_RE.match(orig)
        if prefix:
            probes.add(orig[prefix.end():prefix.end() + TRUNCATED_MIN_CHARS])
    folded = {p.casefold() for p in probes if p}
    # A probe holding another is found wherever that one is: only the shortest are looked for.
    return tuple(sorted(p for p in folded if not any(q != p and q in p for q in folded)))


@dataclass(frozen=True)
class _Lines:
    lines: tuple[str, ...]
    starts: tuple[int, ...]
    folded: str | None
    """The text casefolded, when that keeps every offset (else each line is folded apart)."""
    exotic: bool
    """The text holds whitespace that separates no tokens (``_EXOTIC_SPACES``)."""


@lru_cache(maxsize=8)
def _lines_of(norm: str) -> _Lines:
    lines = norm.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    folded = norm.casefold()
    return _Lines(tuple(lines), tuple(starts), folded if len(folded) == len(norm) else None,
                  _EXOTIC_SPACE_RE.search(norm) is not None)


def _crosses_lines(norm: str, orig: str, plan: _Lines) -> bool:
    """Whether a run of the value's several-word number part could stand across lines: a
    candidate is such a run re-joined, ``w1 ws w2 …`` with the words' own edges (none is
    whitespace unless the text holds whitespace inside tokens), so ``w1\\s+w2…`` matches it."""
    unit = split_unit(orig)
    if unit is None or len(unit[0].split()) < 2 or "\n" not in norm:
        return False
    if plan.exotic:
        return True
    run, runs = _unit_run_res(unit[0])
    if run.search(norm) is None:  # no run at all (the usual answer): no need to look closer
        return False
    return any("\n" in m.group(1) for m in runs.finditer(norm))


@lru_cache(maxsize=1024)
def _unit_run_res(head: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A run of the words of ``head``, and every run (overlapping ones too)."""
    body = r"\s+".join(map(re.escape, head.split()))
    return re.compile(body), re.compile(f"(?=({body}))")


class _LineMemo:
    """Each line's best near miss of each value asked, least recently used lines out first."""

    def __init__(self, max_chars: int) -> None:
        self._items: OrderedDict[str, dict[tuple[str, str | None], _Best | None]] = OrderedDict()
        self._chars = 0
        self._max_chars = max_chars
        self._lock = threading.Lock()

    def best(self, line: str, orig: str, resolved: str | None) -> _Best | None:
        key = (orig, resolved)
        with self._lock:
            entry = self._items.get(line)
            if entry is not None:
                self._items.move_to_end(line)
                if key in entry:
                    return entry[key]
        found = _best(_line_index(line), orig, resolved)
        with self._lock:
            entry = self._items.get(line)
            if entry is None:
                entry = self._items[line] = {}
                self._chars += len(line) + 64
                while self._chars > self._max_chars and len(self._items) > 1:
                    old, _ = self._items.popitem(last=False)
                    self._chars -= len(old) + 64
            entry[key] = found
        return found


_LINE_MEMO = _LineMemo(4_000_000)
"""Lines of recent carriers (a few MB of text) and their best near misses."""


@lru_cache(maxsize=256)
def _line_index(line: str) -> _TextIndex:
    return _index.__wrapped__(line)


def _search_by_lines(norm: str, orig: str, resolved: str | None) -> NearMiss | None:
    """:func:`_search`, line by line (see above): the same near miss."""
    if "\n" in orig:
        return _search(norm, orig, resolved)
    plan = _lines_of(norm)
    if _crosses_lines(norm, orig, plan):
        return _search(norm, orig, resolved)
    probes = _probes(orig, resolved)
    lines, starts = plan.lines, plan.starts
    hit: set[int] = set()
    if plan.folded is not None:
        folded = plan.folded
        for probe in probes:
            at = folded.find(probe)
            while at >= 0:
                n = bisect.bisect_right(starts, at) - 1
                hit.add(n)
                at = folded.find(probe, starts[n + 1]) if n + 1 < len(starts) else -1
    else:
        hit = {n for n, line in enumerate(lines)
               if any(p in line.casefold() for p in probes)}
    best: _Best | None = None
    for n in sorted(hit):
        found = _LINE_MEMO.best(lines[n], orig, resolved)
        if found is None:
            continue
        rank, start, rule, _, end = found
        key = (rank, starts[n] + start, rule, starts[n] + start, starts[n] + end)
        if best is None or key < best:
            best = key
    if best is None:
        return None
    _, _, rule, start, end = best
    return NearMiss(norm[start:end], orig, rule, start, end, resolved)
