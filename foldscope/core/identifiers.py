"""Identifier kinds: named rules that find identifier-shaped tokens in text and name a value's kind.

One definition, used wherever foldscope asks "what kind of value is this?" or "which identifiers
does this text hold?": the grader (a competing candidate is another token of the value's kind),
the near-miss rules (what counts as a small edit depends on the kind), and session audits (the
identifiers a compaction had to keep).

The rules are data: ``foldscope/core/data/identifier_kinds.toml`` holds the defaults, and a user
file of the same format adds kinds or replaces a kind of the same name (:func:`merge_rules`; the
engine reads the file, core only receives its parsed contents). Where matches of different rules
overlap, the longest wins, and on a tie the rule listed first.

Some kinds are recognised only so that their text is not misread as another kind (``track =
false`` in the file): a member expression such as ``json.load`` is not a host, ``mod.rs:37`` holds
no port, ``@Injectable`` is no handle. They take part in the overlap contest like every kind, and
whoever asks "which identifiers does this text hold?" for a task (session audits) leaves them out
(:func:`tracked_kinds`). ``weight`` ranks kinds by how much a person loses when a value of that
kind is dropped (default 1.0).
"""

from __future__ import annotations

import bisect
import importlib
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.core.rulefile import named_tables, rule_pattern

ANCHOR_REACH = 1000
"""On a line longer than this either side of an anchor hit, a rule with an ``anchor`` searches
this far around the hit."""

MAX_RULES = 200
"""More rules than this in one file is refused (a typo'd generator, not a rule set)."""


@dataclass(frozen=True)
class KindRule:
    """One named rule: a kind of identifier and the pattern that finds it."""

    name: str
    pattern: re.Pattern[str]
    description: str = ""
    track: bool = True
    """False for kinds recognised only to keep their text from being misread as another kind."""
    weight: float = 1.0
    """How much losing a value of this kind costs (ranks lost values of equal first use)."""
    requires: tuple[str, ...] = ()
    """Strings of which every match holds at least one: a text holding none of them is not
    searched with this rule at all (a speed-up only; empty: always searched)."""
    anchor: re.Pattern[str] | None = None
    """A quick pattern found on the line of every match: the rule's pattern runs only on the
    lines (at most :data:`ANCHOR_REACH` characters either side) around its hits (a speed-up
    only; None: the whole text is searched)."""


@dataclass(frozen=True)
class Identifier:
    """One identifier found in a text: its kind, its text and where it stands (``text[start:end]``)."""

    kind: str
    value: str
    start: int
    end: int


def rules_from_data(data: Mapping[str, Any], source: str = "identifier kinds") -> tuple[KindRule, ...]:
    """Build rules from parsed TOML data (``{"kind": [{"name", "pattern", "description"}, ...]}``).

    Args:
        data: the parsed file.
        source: what to call the file in errors (its path).

    Returns:
        The rules in file order.

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    rules: list[KindRule] = []
    for name, entry, where in named_tables(data, "kind",
                                           {"name", "pattern", "description", "track", "weight",
                                            "requires", "anchor"},
                                           source, MAX_RULES, "port"):
        compiled = rule_pattern(entry, "pattern", where)
        description = entry.get("description", "")
        if not isinstance(description, str):
            raise ConfigError(f"{where}: 'description' must be a string")
        track = entry.get("track", True)
        if not isinstance(track, bool):
            raise ConfigError(f"{where}: 'track' must be true or false")
        weight = entry.get("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 100:
            raise ConfigError(f"{where}: 'weight' must be a number from 0 to 100")
        requires = entry.get("requires", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) and r for r in requires):
            raise ConfigError(f"{where}: 'requires' must be a list of non-empty strings")
        anchor_re = rule_pattern(entry, "anchor", where, required=False)
        rules.append(KindRule(name, compiled, description, track, float(weight), tuple(requires),
                              anchor_re))
    return tuple(rules)


def merge_rules(base: Sequence[KindRule], extra: Sequence[KindRule]) -> tuple[KindRule, ...]:
    """The base rules with ``extra`` replacing same-named kinds in place and adding new ones first.

    User rules come first so that, on an equal-length tie, the user's kind wins.
    """
    replacing = {rule.name: rule for rule in extra}
    kept = [replacing.pop(rule.name, rule) for rule in base]
    added = [rule for rule in extra if rule.name in replacing]
    return tuple(added + kept)


@lru_cache(maxsize=1)
def default_rules() -> tuple[KindRule, ...]:
    """The shipped rules (``foldscope/core/data/identifier_kinds.toml``)."""
    text = resources.files("foldscope.core.data").joinpath("identifier_kinds.toml").read_text("utf-8")
    return rules_from_data(tomllib.loads(text), source="identifier_kinds.toml")


def tracked_kinds(rules: Sequence[KindRule] | None = None) -> frozenset[str]:
    """The kinds worth tracking as a task's values (every kind not marked ``track = false``)."""
    rules = default_rules() if rules is None else rules
    return frozenset(rule.name for rule in rules if rule.track)


def _anchored(pattern: re.Pattern[str], anchor: re.Pattern[str], text: str
              ) -> Iterable[re.Match[str]]:
    """The matches of ``pattern`` on the lines holding a hit of ``anchor`` (each line searched
    once, newline included so that patterns may look at it; on a very long line, the stretch
    around the hit)."""
    done = -1
    spans: set[tuple[int, int]] = set()
    size = len(text)
    for hit in anchor.finditer(text):
        at = hit.start()
        if at < done:
            continue
        lo = text.rfind("\n", 0, at) + 1
        hi = text.find("\n", at)
        hi = size if hi < 0 else hi + 1
        lo = max(lo, at - ANCHOR_REACH)
        hi = min(hi, hit.end() + ANCHOR_REACH)
        for match in pattern.finditer(text, lo, hi):
            span = match.span()
            if span not in spans:
                spans.add(span)
                yield match
        done = hi


def _span(match: re.Match[str]) -> tuple[int, int]:
    if "value" in match.re.groupindex and match.group("value") is not None:
        return match.span("value")
    return match.span()


def _whole_candidates(text: str, rules: Sequence[KindRule], orders: Iterable[int],
                      out: list[tuple[int, int, int, str]]) -> None:
    """Append the candidates ``(-length, rule order, start, kind)`` of the rules at ``orders``,
    each searched over the whole text (around its anchor's hits when it has one)."""
    for order in orders:
        rule = rules[order]
        for match in (rule.pattern.finditer(text) if rule.anchor is None else
                      _anchored(rule.pattern, rule.anchor, text)):
            start, end = _span(match)
            if end > start:
                out.append((start - end, order, start, rule.name))


def find_identifiers(text: str, rules: Sequence[KindRule] | None = None,
                     kinds: Iterable[str] | None = None) -> list[Identifier]:
    """Every identifier in ``text``, non-overlapping, in reading order.

    Args:
        text: any text (a carrier, a chunk, an answer).
        rules: the rules to use (default: :func:`default_rules`).
        kinds: keep only identifiers of these kinds (overlaps are still resolved against all
            rules, so ``"62114"`` inside a timestamp is not reported as a number).

    Returns:
        The identifiers, longest match first where rules overlap, sorted by position.
    """
    rules = default_rules() if rules is None else rules
    active = [order for order, rule in enumerate(rules)
              if not rule.requires or any(needle in text for needle in rule.requires)]
    candidates: list[tuple[int, int, int, str]] = []  # (-length, rule order, start, kind)
    if isinstance(rules, tuple):
        local = _line_local(rules)
        by_line = tuple(order for order in active if local[order])
        _whole_candidates(text, rules, (order for order in active if not local[order]), candidates)
        if by_line:
            _line_candidates(text, rules, by_line, candidates)
    else:
        _whole_candidates(text, rules, active, candidates)
    candidates.sort()
    # Taken spans never overlap, so kept sorted by start they are sorted by end too: a new span
    # overlaps one only if it overlaps its neighbour on either side (a session of thousands of
    # identifiers must not cost a scan of every span taken so far per candidate).
    starts: list[int] = []
    ends: list[int] = []
    found: list[Identifier] = []
    for neg_len, _order, start, kind in candidates:
        end = start - neg_len
        pos = bisect.bisect_right(starts, start)
        if (pos > 0 and ends[pos - 1] > start) or (pos < len(starts) and starts[pos] < end):
            continue
        starts.insert(pos, start)
        ends.insert(pos, end)
        found.append(Identifier(kind, text[start:end], start, end))
    wanted = None if kinds is None else set(kinds)
    return sorted((i for i in found if wanted is None or i.kind in wanted), key=lambda i: i.start)


# --- line by line (a speed-up only: the same candidates as searching the whole text) ------------
#
# A rule with an anchor searches only the lines its anchor hits. When nothing in the anchor can
# match a line break or see a text's ends, and nothing the pattern looks behind can match a line
# break or see the text's start, a line's matches depend on the line alone (its text, its own
# ``\n`` included): the same line anywhere in any text holds the same candidates. So each distinct
# line is searched once (lines not yet known are searched together, joined, in one pass per
# rule) and its candidates are remembered, up to a bound.

LINE_CACHE_CHARS = 4_000_000
"""Characters of distinct lines whose candidates are remembered (all are forgotten when the bound
is hit), so the cache never holds more than a few MB of text, whatever the session."""

LINE_CACHE_MAX_CHARS = 2_000
"""Longer lines are searched every time, never remembered."""

_LineHits = tuple[tuple[int, int, int, str], ...]  # (start, end, rule order, kind), line-relative
_PLANS: dict[int, tuple[tuple[KindRule, ...], tuple[bool, ...]]] = {}
_LINE_CACHE: dict[tuple[int, tuple[int, ...]], dict[str, _LineHits]] = {}
_line_cache_size = 0


def _line_local(rules: tuple[KindRule, ...]) -> tuple[bool, ...]:
    """For each rule, whether its matches on a line depend on that line alone."""
    plan = _PLANS.get(id(rules))
    if plan is not None and plan[0] is rules:
        return plan[1]
    if len(_PLANS) >= 16:
        _PLANS.clear()
        _LINE_CACHE.clear()
    local = tuple(_rule_is_line_local(rule) for rule in rules)
    _PLANS[id(rules)] = (rules, local)
    return local


def _rule_is_line_local(rule: KindRule) -> bool:
    if rule.anchor is None:
        return False
    anchor = _RE_PARSER.parse(rule.anchor.pattern, rule.anchor.flags)
    pattern = _RE_PARSER.parse(rule.pattern.pattern, rule.pattern.flags)
    return (not _sees_newline_or_edge(anchor.data, anchor.state.flags, ends=True, behind_only=False)
            and not _sees_newline_or_edge(pattern.data, pattern.state.flags, ends=False,
                                          behind_only=True))


_RE_PARSER: Any = importlib.import_module("re._parser")  # the standard library's own regex parser
_NEWLINE = ord("\n")
_NEWLINE_CATEGORIES = {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD"}


def _set_takes_newline(items: Any) -> bool:
    negate = False
    takes = False
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            takes = takes or arg == _NEWLINE
        elif name == "RANGE":
            takes = takes or arg[0] <= _NEWLINE <= arg[1]
        elif name == "CATEGORY":
            takes = takes or str(arg) in _NEWLINE_CATEGORIES
        else:
            return True
    return takes != negate


def _sees_newline_or_edge(items: Any, flags: int, *, ends: bool, behind_only: bool,
                          inside: bool = False) -> bool:
    """Conservatively: can this parsed pattern match a line break or a text's start (or, with
    ``ends``, its end)? With ``behind_only`` only lookbehinds are asked about line breaks (the
    start is asked about everywhere). Anything not understood counts as yes."""
    multiline = bool(flags & re.MULTILINE)
    for op, arg in items:
        name = str(op)
        asked = inside or not behind_only
        if name == "AT":
            at = str(arg)
            if at == "AT_BEGINNING_STRING" or (at == "AT_BEGINNING" and not multiline):
                return True
            if ends and (at == "AT_END_STRING" or (at == "AT_END" and not multiline)):
                return True
        elif name in ("LITERAL", "NOT_LITERAL", "ANY", "IN", "CATEGORY"):
            if not asked:
                continue
            if name == "LITERAL" and arg == _NEWLINE:
                return True
            if name == "NOT_LITERAL" and arg != _NEWLINE:
                return True
            if name == "ANY" and flags & re.DOTALL:
                return True
            if name == "IN" and _set_takes_newline(arg):
                return True
            if name == "CATEGORY":
                return True
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            if _sees_newline_or_edge(arg[2], flags, ends=ends, behind_only=behind_only,
                                     inside=inside):
                return True
        elif name == "SUBPATTERN":
            sub_flags = (flags | arg[1]) & ~arg[2]
            if _sees_newline_or_edge(arg[3], sub_flags, ends=ends, behind_only=behind_only,
                                     inside=inside):
                return True
        elif name == "ATOMIC_GROUP":
            if _sees_newline_or_edge(arg, flags, ends=ends, behind_only=behind_only,
                                     inside=inside):
                return True
        elif name == "BRANCH":
            for branch in arg[1]:
                if _sees_newline_or_edge(branch, flags, ends=ends, behind_only=behind_only,
                                         inside=inside):
                    return True
        elif name in ("ASSERT", "ASSERT_NOT"):
            behind = arg[0] < 0
            if _sees_newline_or_edge(arg[1], flags, ends=ends, behind_only=behind_only,
                                     inside=inside or behind):
                return True
        else:
            return True
    return False


def _line_candidates(text: str, rules: tuple[KindRule, ...], orders: tuple[int, ...],
                     out: list[tuple[int, int, int, str]]) -> None:
    """Append the candidates of the line-local rules at ``orders``, line by line."""
    global _line_cache_size
    key = (id(rules), orders)
    cache = _LINE_CACHE.get(key)
    if cache is None:
        cache = _LINE_CACHE[key] = {}
    lines = text.split("\n")
    last = len(lines) - 1
    at = 0
    missed: list[tuple[int, str]] = []  # (where the line starts in text, line with its \n)
    for i, line in enumerate(lines):
        if i < last:
            line += "\n"
        hits = cache.get(line)
        if hits is None:
            missed.append((at, line))
        else:
            for start, end, order, kind in hits:
                out.append((start - end, order, at + start, kind))
        at += len(line)
    if not missed:
        return
    joined = "".join(line for _at, line in missed)
    found: list[tuple[int, int, int, str]] = []
    _whole_candidates(joined, rules, orders, found)
    offsets: list[int] = []
    pos = 0
    for _at, line in missed:
        offsets.append(pos)
        pos += len(line)
    per_line: list[list[tuple[int, int, int, str]]] = [[] for _ in missed]
    for neg_len, order, start, kind in found:
        i = bisect.bisect_right(offsets, start) - 1
        rel = start - offsets[i]
        per_line[i].append((rel, rel - neg_len, order, kind))
        out.append((neg_len, order, missed[i][0] + rel, kind))
    if _line_cache_size >= LINE_CACHE_CHARS:
        for known in _LINE_CACHE.values():
            known.clear()
        _line_cache_size = 0
    for (_at, line), hits_list in zip(missed, per_line, strict=True):
        if len(line) <= LINE_CACHE_MAX_CHARS and line not in cache:
            cache[line] = tuple(hits_list)
            _line_cache_size += len(line)


def kind_of(value: str, rules: Sequence[KindRule] | None = None) -> str | None:
    """The kind of a whole value, or None when no single rule covers all of it.

    ``"62114"`` is a ``number`` (a port is only recognisable by its context), ``"19 shards"``
    has no single kind (see :func:`main_kind`), ``"v4.18.2-rc3"`` is a ``version``.
    """
    stripped = value.strip()
    found = find_identifiers(stripped, rules)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(stripped):
        return found[0].kind
    return None


def main_kind(value: str, rules: Sequence[KindRule] | None = None) -> str | None:
    """The kind of the value as a whole, else of its longest identifier (``"19 shards"`` → number)."""
    whole = kind_of(value, rules)
    if whole is not None:
        return whole
    found = find_identifiers(value.strip(), rules)
    if not found:
        return None
    return max(found, key=lambda i: (i.end - i.start, -i.start)).kind
