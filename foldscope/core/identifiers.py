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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from itertools import accumulate, compress, repeat
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.core.memo import remember
from foldscope.core.rulefile import SHARED_TABLE, named_tables, rule_pattern, shared_patterns
from foldscope.core.shapes import SHAPES

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
    """Build rules from parsed TOML data (``{"kind": [{"name", "pattern", "description"}, ...]}``,
    and ``{"patterns": {name: pattern}}``: named patterns a rule uses as ``(?&name)``, laid over
    the shipped file's; ``core.rulefile.shared_patterns``).

    Args:
        data: the parsed file.
        source: what to call the file in errors (its path).

    Returns:
        The rules in file order.

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    rules: list[KindRule] = []
    shared = shared_patterns(data, source, base=default_patterns())
    for name, entry, where in named_tables(data, "kind",
                                           {"name", "pattern", "description", "track", "weight",
                                            "requires", "anchor"},
                                           source, MAX_RULES, "port", others=frozenset({SHARED_TABLE})):
        compiled = rule_pattern(entry, "pattern", where, shared=shared)
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
        anchor_re = rule_pattern(entry, "anchor", where, required=False, shared=shared)
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
def _shipped_data() -> dict[str, Any]:
    text = resources.files("foldscope.core.data").joinpath("identifier_kinds.toml").read_text("utf-8")
    return tomllib.loads(text)


@lru_cache(maxsize=1)
def default_patterns() -> dict[str, str]:
    """The named patterns every kinds file may use: the shapes of URLs, e-mail addresses and paths
    (``core.shapes.SHAPES``: ``url``, ``email``, ``path``) and the shipped file's ``[patterns]``."""
    return shared_patterns(_shipped_data(), "identifier_kinds.toml", base=SHAPES)


@lru_cache(maxsize=1)
def default_rules() -> tuple[KindRule, ...]:
    """The shipped rules (``foldscope/core/data/identifier_kinds.toml``)."""
    return rules_from_data(_shipped_data(), source="identifier_kinds.toml")


def tracked_kinds(rules: Sequence[KindRule] | None = None) -> frozenset[str]:
    """The kinds worth tracking as a task's values (every kind not marked ``track = false``)."""
    rules = default_rules() if rules is None else rules
    return frozenset(rule.name for rule in rules if rule.track)


def _anchored(pattern: re.Pattern[str], anchor: re.Pattern[str], text: str,
              stops: frozenset[int] = frozenset()) -> Iterable[re.Match[str]]:
    """The matches of ``pattern`` on the lines holding a hit of ``anchor`` (each line searched
    once, newline included so that patterns may look at it, but the line breaks at ``stops``:
    those end a text's last line, searched as the text's end; on a very long line, the stretch
    around the hit; a match two stretches share, once)."""
    done = -1
    spans: set[tuple[int, int]] | None = None  # the matches of the stretches of one long line
    size = len(text)
    find, rfind = text.find, text.rfind
    # An anchor that cannot run over a line break: once a line is searched, its other hits are
    # not walked through; the search for hits starts again after the line (what it finds first
    # is what the search under way would have found next).
    afresh = _keeps_to_its_line(anchor)
    hits = anchor.finditer(text)
    while True:
        for hit in hits:
            at = hit.start()
            if at < done:
                continue
            lo = rfind("\n", 0, at) + 1
            line_end = find("\n", at)
            line_end = size if line_end < 0 else line_end if line_end in stops else line_end + 1
            lo = max(lo, at - ANCHOR_REACH)
            hi = min(line_end, hit.end() + ANCHOR_REACH)
            # Stretches overlap only along one long line: one that starts where the last ended
            # (or later) shares no match with those before it, one that ends its line none with
            # those after it.
            shared = lo < done
            if not shared:
                spans = None
            if shared or hi < line_end:
                if spans is None:
                    spans = set()
                for match in pattern.finditer(text, lo, hi):
                    span = match.span()
                    if span not in spans:
                        spans.add(span)
                        yield match
            else:
                yield from pattern.finditer(text, lo, hi)
            done = hi
            if afresh and hi == line_end:
                hits = anchor.finditer(text, done)
                break
        else:
            return


_LINE_BOUND: dict[re.Pattern[str], bool] = {}


def _keeps_to_its_line(anchor: re.Pattern[str]) -> bool:
    """Whether no match of ``anchor`` can hold a line break (conservatively: nothing in it
    can match one, look at one or see a text's start)."""
    got = _LINE_BOUND.get(anchor)
    if got is None:
        try:
            parsed = _RE_PARSER.parse(anchor.pattern, anchor.flags)
            got = not _sees_newline_or_edge(parsed.data, parsed.state.flags, ends=False,
                                            behind_only=False)
        except Exception:  # noqa: BLE001 - a pattern the reading does not follow: assume it can
            got = False
        got = remember(_LINE_BOUND, 1024, anchor, got)
    return got


def _whole_candidates(text: str, rules: Sequence[KindRule], orders: Iterable[int],
                      out: list[tuple[int, int, int, str]], stops: frozenset[int] = frozenset()
                      ) -> None:
    """Append the candidates ``(-length, rule order, start, kind)`` of the rules at ``orders``,
    each searched over the whole text (around its anchor's hits when it has one; ``stops``: see
    :func:`_anchored`). A candidate is the match's ``value`` group when it took part, else the
    whole match; empty ones are none."""
    append = out.append
    for order in orders:
        rule = rules[order]
        pattern, anchor, kind = rule.pattern, rule.anchor, rule.name
        if anchor is not None and not _may_match(anchor, text):
            continue
        matches = (pattern.finditer(text) if anchor is None else
                   _anchored(pattern, anchor, text, stops))
        if "value" in pattern.groupindex:
            for match in matches:
                start, end = match.span("value")
                if start < 0:
                    start, end = match.span()
                if end > start:
                    append((start - end, order, start, kind))
        else:
            for match in matches:
                start, end = match.span()
                if end > start:
                    append((start - end, order, start, kind))


# --- literal pre-screen (a speed-up only: exact) -----------------------------------------------
#
# Scanning a text with an anchor costs sre a match attempt at nearly every position when the
# anchor starts with a repeat, a case-insensitive word or an alternation; finding a short
# literal costs a fraction of that. So each anchor gets a few *factor sets*, read off its parsed
# pattern: sets of strings such that every match of the anchor contains one string of each set
# (e.g. ``\d\d:`` ... gives no set from the digits, ``-`` from the dash; ``(?:toolu|msg)[_-]``
# gives {toolu_, toolu-, msg_, msg-}). A text lacking every string of one set holds no match,
# so the anchor is not scanned there. Only what is certain is used: a character class with a
# category (``\d`` takes every Unicode digit), a negated class or ``.`` is an unknown
# character, and case-insensitive letters take their case folds (``(?i)k`` also takes the
# Kelvin sign).

FACTOR_SET_MAX = 32
"""Most strings in one factor set (more would cost more to look for than the scan saves)."""

FACTOR_RUN_MAX = 5
"""Longest factor string read off a run of known characters."""

_IGNORECASE_EXTRA = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
"""The ASCII letters whose case-insensitive match takes more than their two cases."""


def _char_set(op: str, arg: Any, ignorecase: bool) -> frozenset[str] | None:
    """The characters one parsed item takes, or None when unknown or too many."""
    chars: set[int] = set()
    if op == "LITERAL":
        chars.add(arg)
    elif op == "IN":
        for sub_op, sub_arg in arg:
            name = str(sub_op)
            if name == "LITERAL":
                chars.add(sub_arg)
            elif name == "RANGE" and sub_arg[1] - sub_arg[0] < 64:
                chars.update(range(sub_arg[0], sub_arg[1] + 1))
            else:  # NEGATE, CATEGORY, wide ranges
                return None
    else:
        return None
    out: set[str] = set()
    for code in chars:
        ch = chr(code)
        if ignorecase and ch.lower() != ch.upper():
            if not ch.isascii():
                return None
            low = ch.lower()
            out.update((low, ch.upper(), *_IGNORECASE_EXTRA.get(low, "")))
        else:
            out.add(ch)
    return frozenset(out) if len(out) <= FACTOR_SET_MAX else None


def _factor_sets(items: Any, flags: int) -> list[frozenset[str]]:
    """Factor sets of a parsed sequence: each set holds a string every match contains."""
    found: list[frozenset[str]] = []
    run: list[frozenset[str]] = []  # consecutive known characters

    def close() -> None:
        for width in range(min(len(run), FACTOR_RUN_MAX), 0, -1):
            for lo in range(len(run) - width + 1):
                strings: set[str] = {""}
                for chars in run[lo:lo + width]:
                    strings = {a + b for a in strings for b in chars}
                    if len(strings) > FACTOR_SET_MAX:
                        break
                else:
                    found.append(frozenset(strings))
        run.clear()

    for op, arg in items:
        name = str(op)
        ignorecase = bool(flags & re.IGNORECASE)
        if name in ("LITERAL", "IN"):
            chars = _char_set(name, arg, ignorecase)
            if chars is None:
                close()
            else:
                run.append(chars)
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue  # zero-width: the characters either side stand next to each other
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            single = list(sub)
            chars = None
            if len(single) == 1 and str(single[0][0]) in ("LITERAL", "IN"):
                chars = _char_set(str(single[0][0]), single[0][1], ignorecase)
            if chars is not None and low >= 1:
                run.extend([chars] * min(low, FACTOR_RUN_MAX))
                if high != low:
                    close()
            else:
                close()
                if low >= 1:
                    found.extend(_factor_sets(sub, flags))
        elif name == "SUBPATTERN":
            sub_flags = (flags | arg[1]) & ~arg[2]
            if sub_flags == flags:
                # A plain group: its characters stand in the sequence.
                inner = list(arg[3])
                if all(str(o) in ("LITERAL", "IN", "AT", "ASSERT", "ASSERT_NOT") for o, _a in inner):
                    for o, a in inner:
                        if str(o) in ("LITERAL", "IN"):
                            chars = _char_set(str(o), a, ignorecase)
                            if chars is None:
                                close()
                            else:
                                run.append(chars)
                    continue
            close()
            found.extend(_factor_sets(arg[3], sub_flags))
        elif name == "ATOMIC_GROUP":
            close()
            found.extend(_factor_sets(arg, flags))
        elif name == "BRANCH":
            close()
            union: set[str] = set()
            for branch in arg[1]:
                sets = _factor_sets(branch, flags)
                if not sets:
                    break
                union.update(_best(sets))
                if len(union) > FACTOR_SET_MAX:
                    break
            else:
                found.append(frozenset(union))
        else:
            close()
    close()
    return found


def _best(sets: list[frozenset[str]]) -> frozenset[str]:
    """The factor set one alternative adds to its alternation's: a few strings (a
    case-insensitive word gives many), the longest, then the fewest."""
    return min(sets, key=lambda f: (len(f) > 4, -min(map(len, f)), len(f)))


_SCREENS: dict[re.Pattern[str], tuple[frozenset[str], ...]] = {}


def _screen(anchor: re.Pattern[str]) -> tuple[frozenset[str], ...]:
    """An anchor's factor sets to look for, the most telling first (at most three)."""
    got = _SCREENS.get(anchor)
    if got is None:
        try:
            parsed = _RE_PARSER.parse(anchor.pattern, anchor.flags)
            sets = _factor_sets(parsed.data, parsed.state.flags)
        except Exception:  # noqa: BLE001 - a pattern the reading does not follow: no screen
            sets = []
        ranked = sorted(set(sets), key=lambda f: (-min(map(len, f)), len(f), sorted(f)))
        got = remember(_SCREENS, 1024, anchor, tuple(ranked[:3]))
    return got


_SCREEN_SEARCHES: dict[re.Pattern[str], tuple[Callable[[str], object], ...]] = {}


def _screen_searches(anchor: re.Pattern[str]) -> tuple[Callable[[str], object], ...]:
    """Per factor set of an anchor's screen, a search that finds one of its strings in a text
    (None when the text holds none): one scan of the text, not one per string."""
    got = _SCREEN_SEARCHES.get(anchor)
    if got is None:
        got = remember(_SCREEN_SEARCHES, 1024, anchor,
                       tuple(holds_one_of(strings) for strings in _screen(anchor)))
    return got


def holds_one_of(strings: Iterable[str]) -> Callable[[str], object]:
    """A search of a text for any of ``strings`` (non-empty): it returns None exactly when the
    text contains none of them (an alternation of the strings, escaped, without flags: it
    matches at a place where one of them stands)."""
    ordered = sorted(strings)
    if len(ordered) == 1:  # the string search itself is faster than the regex engine's
        only = ordered[0]
        return lambda text: True if only in text else None
    return re.compile("|".join(re.escape(string) for string in ordered)).search


def _may_match(anchor: re.Pattern[str], text: str) -> bool:
    """False only when the anchor certainly has no match in ``text``."""
    for search in _screen_searches(anchor):
        if search(text) is None:
            return False
    return True


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
    wanted = None if kinds is None else set(kinds)
    if wanted is not None:
        # No rule of a wanted kind has a candidate here: none can win (a quick answer for the
        # many callers asking one kind of short texts).
        rules = default_rules() if rules is None else rules
        found: list[tuple[int, int, int, str]] = []
        _whole_candidates(text, rules, (order for order, rule in enumerate(rules)
                                        if rule.name in wanted and _active(rule, text)), found)
        if not found:
            return []
    return [Identifier(kind, text[start:end], start, end)
            for start, end, kind in identifier_spans(text, rules)
            if wanted is None or kind in wanted]


def identifier_spans(text: str, rules: Sequence[KindRule] | None = None
                     ) -> list[tuple[int, int, str]]:
    """:func:`find_identifiers` as ``(start, end, kind)`` triples (no objects made: for callers
    that read every identifier of a whole session)."""
    return identifier_spans_many((text,), rules)[0]


def identifier_spans_many(texts: Sequence[str], rules: Sequence[KindRule] | None = None
                          ) -> list[list[tuple[int, int, str]]]:
    """:func:`identifier_spans` of each text (the same answers), their new lines searched
    together: one pass per rule over a whole batch of texts costs far less than one per text."""
    rules = default_rules() if rules is None else rules
    if isinstance(rules, tuple):
        return _line_spans_many(texts, rules, _plan(rules))
    return [_contest(_candidates(text, rules)) for text in texts]


def _active(rule: KindRule, text: str) -> bool:
    """Whether the text holds one of the rule's ``requires`` strings (or it has none)."""
    if not rule.requires:
        return True
    search = _REQUIRES.get(rule.requires)
    if search is None:
        search = remember(_REQUIRES, 1024, rule.requires, holds_one_of(rule.requires))
    return search(text) is not None


_REQUIRES: dict[tuple[str, ...], Callable[[str], object]] = {}


def _candidates(text: str, rules: Sequence[KindRule]) -> list[tuple[int, int, int, str]]:
    """Every candidate ``(-length, rule order, start, kind)`` of the rules whose ``requires``
    the text meets, each rule searched over the whole text (around its anchor's hits)."""
    out: list[tuple[int, int, int, str]] = []
    _whole_candidates(text, rules, (order for order, rule in enumerate(rules)
                                    if _active(rule, text)), out)
    return out


def _contest(candidates: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """The winners ``(start, end, kind)`` of the overlap contest, sorted by start: longest
    first, on a tie the rule listed first (then the earlier start)."""
    candidates.sort()
    # Taken spans never overlap, so kept sorted by start they are sorted by end too: a new span
    # overlaps one only if it overlaps its neighbour on either side (a session of thousands of
    # identifiers must not cost a scan of every span taken so far per candidate).
    starts: list[int] = []
    ends: list[int] = []
    kinds: list[str] = []
    for neg_len, _order, start, kind in candidates:
        end = start - neg_len
        pos = bisect.bisect_right(starts, start)
        if (pos > 0 and ends[pos - 1] > start) or (pos < len(starts) and starts[pos] < end):
            continue
        starts.insert(pos, start)
        ends.insert(pos, end)
        kinds.insert(pos, kind)
    return list(zip(starts, ends, kinds, strict=True))


# --- line by line (a speed-up only: the same identifiers as searching the whole text) -----------
#
# A rule with an anchor searches only the lines its anchor hits. When nothing in the anchor can
# match a line break or see a text's ends, and nothing the pattern looks behind can match a line
# break or see the text's start, a line's matches depend on the line alone (its text, its own
# ``\n`` included): the same line anywhere in any text holds the same candidates. When every rule
# a text activates is such a rule, no candidate spans two lines, so no two lines' candidates
# overlap and the overlap contest falls apart into one contest per line: each line's winners
# are the text's winners on that line. So each distinct line is searched once (lines not yet
# known are searched together, joined, in one pass per rule, with every line-local rule), its
# winners are remembered (up to a bound), and a text is its lines' winners put end to end.
#
# ``requires`` decides which rules a text activates; a line's winners are the same for every
# text holding the line as long as every rule with a candidate on the line is active for the
# text — true of a rule whose candidate on the line holds one of its ``requires`` strings (the
# text holds the line). A rule whose candidate does not (its ``requires`` promise broken) is
# checked against each text; when it is inactive there, the text is searched the plain way.

LINE_CACHE_CHARS = 1_000_000
"""Characters of distinct lines whose winners are remembered, in each of two generations: when
the young one is full, the old one is forgotten and the young one becomes old; a line found in
the old one moves to the young one. So lines in use stay remembered, and the cache never holds
more than twice this much text, whatever the session."""

LINE_CACHE_MAX_CHARS = 2_000
"""Longer lines are searched every time, never remembered."""

_Spans = tuple[tuple[int, int, str], ...]  # (start, end, kind), line-relative


@dataclass
class _Plan:
    """How a rule set searches texts line by line, and the lines it remembers."""

    rules: tuple[KindRule, ...]
    whole: tuple[int, ...]
    """Rules that are not line-local: a text activating one is searched the plain way."""
    by_line: tuple[int, ...]
    lines: dict[str, _Spans] = field(default_factory=dict)
    """Winners of lines that end in a line break (keyed without it)."""
    tails: dict[str, _Spans] = field(default_factory=dict)
    """Winners of a text's last line (no line break after it)."""
    needs: dict[tuple[bool, str], tuple[int, ...]] = field(default_factory=dict)
    """Lines with candidates of rules their text may not activate: those rules."""
    old_lines: dict[str, _Spans] = field(default_factory=dict)
    """The old generation of :attr:`lines` (see :data:`LINE_CACHE_CHARS`)."""
    old_tails: dict[str, _Spans] = field(default_factory=dict)
    old_needs: dict[tuple[bool, str], tuple[int, ...]] = field(default_factory=dict)

    def needs_of(self, key: tuple[bool, str]) -> tuple[int, ...] | None:
        return self.needs.get(key) or self.old_needs.get(key)


_PLANS: dict[int, _Plan] = {}
_line_cache_size = 0
_MISS: _Spans = ((-1, -1, ""),)  # a truthy stand-in for "not remembered"


def _plan(rules: tuple[KindRule, ...]) -> _Plan:
    """The line-by-line plan of a rule set (made once per rule set)."""
    plan = _PLANS.get(id(rules))
    if plan is not None and plan.rules is rules:
        return plan
    if len(_PLANS) >= 16:
        _PLANS.clear()
    local = [_rule_is_line_local(rule) for rule in rules]
    plan = _Plan(rules, tuple(o for o, ok in enumerate(local) if not ok),
                 tuple(o for o, ok in enumerate(local) if ok))
    _PLANS[id(rules)] = plan
    return plan


def _rule_is_line_local(rule: KindRule) -> bool:
    if rule.anchor is None:
        return False
    key = (rule.pattern, rule.anchor)  # the same rule in several rule sets is read once
    got = _LINE_LOCAL.get(key)
    if got is None:
        anchor = _RE_PARSER.parse(rule.anchor.pattern, rule.anchor.flags)
        pattern = _RE_PARSER.parse(rule.pattern.pattern, rule.pattern.flags)
        got = remember(_LINE_LOCAL, 1024, key, (
            not _sees_newline_or_edge(anchor.data, anchor.state.flags, ends=True,
                                      behind_only=False)
            and not _sees_newline_or_edge(pattern.data, pattern.state.flags, ends=False,
                                          behind_only=True)))
    return got


_LINE_LOCAL: dict[tuple[re.Pattern[str], re.Pattern[str]], bool] = {}


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


def _line_spans_many(texts: Sequence[str], rules: tuple[KindRule, ...], plan: _Plan
                     ) -> list[list[tuple[int, int, str]]]:
    """The winners of each text, line by line where every rule the text activates is
    line-local: the lines none of the texts' lines remembered are searched together, once each
    (one pass per rule over them all); a text whose lines' winners do not hold for it (a rule
    with a candidate there that the text does not activate) is searched the plain way."""
    out: list[list[tuple[int, int, str]] | None] = [None] * len(texts)
    fresh: dict[tuple[bool, str], int] = {}
    searched: list[tuple[bool, str]] = []
    waiting: list[tuple[int, list[str], list[_Spans], list[int], list[int]]] = []
    for n, text in enumerate(texts):
        if any(_active(rules[order], text) for order in plan.whole):
            out[n] = _contest(_candidates(text, rules))
            continue
        lines = text.split("\n")
        tail = lines.pop()
        count = len(lines)
        got = list(map(plan.lines.get, lines, repeat(_MISS, count)))
        got.append(plan.tails.get(tail, _MISS) if tail else ())
        missed = [i for i in compress(range(count + 1), got) if got[i] is _MISS]
        if missed and (plan.old_lines or plan.old_tails):
            missed = _recall(plan, lines, tail, got, missed)
        if (plan.needs or plan.old_needs) and not _needs_hold(text, rules, plan, lines, tail, got):
            out[n] = _contest(_candidates(text, rules))
            continue
        slots: list[int] = []
        for i in missed:
            key = (True, tail) if i == count else (False, lines[i])
            slot = fresh.get(key)
            if slot is None:
                slot = fresh[key] = len(searched)
                searched.append(key)
            slots.append(slot)
        lines.append(tail)
        waiting.append((n, lines, got, missed, slots))
    spans_of, needs_of = _search_lines(searched, rules, plan) if searched else ([], [])
    for n, lines, got, missed, slots in waiting:
        text = texts[n]
        holds = True
        for i, slot in zip(missed, slots, strict=True):
            got[i] = spans_of[slot]
            needs = needs_of[slot]
            if needs and not all(_active(rules[order], text) for order in needs):
                holds = False
                break
        out[n] = _joined(lines, got) if holds else _contest(_candidates(text, rules))
    return out  # type: ignore[return-value]  # every slot is filled above


def _recall(plan: _Plan, lines: list[str], tail: str, got: list[_Spans], missed: list[int]
            ) -> list[int]:
    """Fill in ``got`` the lines at ``missed`` the old generation remembers (moving them to the
    young one); the lines still missed."""
    count = len(lines)
    still: list[int] = []
    for i in missed:
        is_tail = i == count
        line = tail if is_tail else lines[i]
        spans = (plan.old_tails if is_tail else plan.old_lines).get(line)
        if spans is None:
            still.append(i)
            continue
        got[i] = spans
        _remember(plan, is_tail, line, spans, plan.old_needs.get((is_tail, line), ()))
    return still


def _remember(plan: _Plan, is_tail: bool, line: str, spans: _Spans, needs: tuple[int, ...]) -> None:
    """Remember a line's winners (and the rules they need) in the young generation."""
    global _line_cache_size
    size = len(line) + (not is_tail)
    if size > LINE_CACHE_MAX_CHARS:
        return
    if _line_cache_size + size > LINE_CACHE_CHARS:
        for known in _PLANS.values():
            known.old_lines, known.old_tails, known.old_needs = known.lines, known.tails, known.needs
            known.lines, known.tails, known.needs = {}, {}, {}
        _line_cache_size = 0
    if needs:
        plan.needs[(is_tail, line)] = needs
    (plan.tails if is_tail else plan.lines)[line] = spans
    _line_cache_size += size


def _needs_hold(text: str, rules: tuple[KindRule, ...], plan: _Plan,
                lines: list[str], tail: str, got: list[_Spans]) -> bool:
    """Whether the rules the remembered lines' candidates need are all active for ``text``."""
    count = len(lines)
    for i in compress(range(count + 1), got):
        if got[i] is _MISS:
            continue
        needs = plan.needs_of((i == count, tail if i == count else lines[i]))
        if needs and not all(_active(rules[order], text) for order in needs):
            return False
    return True


def _joined(lines: list[str], got: list[_Spans]) -> list[tuple[int, int, str]]:
    """A text's winners from its lines' (``lines`` holds the tail last; each other line is
    followed by a line break in the text)."""
    starts = list(accumulate(map(len, lines), initial=0))
    out: list[tuple[int, int, str]] = []
    for i in compress(range(len(lines)), got):
        base = starts[i] + i
        out.extend([(base + start, base + end, kind) for start, end, kind in got[i]])
    return out


def _search_lines(searched: list[tuple[bool, str]], rules: tuple[KindRule, ...], plan: _Plan
                  ) -> tuple[list[_Spans], list[tuple[int, ...]]]:
    """Search lines ``(is a text's last line, line)`` with every line-local rule, joined (each
    followed by a line break; a last line searched as ending its text); their winners and the
    rules with a candidate on them that the line itself does not activate, both also
    remembered."""
    texts = [line + "\n" for _is_tail, line in searched]
    offsets = list(accumulate(map(len, texts), initial=0))
    stops = frozenset(offsets[j + 1] - 1 for j, (is_tail, _line) in enumerate(searched) if is_tail)
    found: list[tuple[int, int, int, str]] = []
    _whole_candidates("".join(texts), rules, plan.by_line, found, stops)
    per_line: list[list[tuple[int, int, int, str]]] = [[] for _ in searched]
    for neg_len, order, start, kind in found:
        j = bisect.bisect_right(offsets, start) - 1
        per_line[j].append((neg_len, order, start - offsets[j], kind))
    spans_of: list[_Spans] = []
    needs_of: list[tuple[int, ...]] = []
    for (is_tail, line), text, candidates in zip(searched, texts, per_line, strict=True):
        spans: _Spans = tuple(_contest(candidates)) if candidates else ()
        searched_text = line if is_tail else text
        needs = tuple(sorted(order for order in {c[1] for c in candidates}
                             if not _active(rules[order], searched_text))) if candidates else ()
        spans_of.append(spans)
        needs_of.append(needs)
        _remember(plan, is_tail, line, spans, needs)
    return spans_of, needs_of


def kind_of(value: str, rules: Sequence[KindRule] | None = None) -> str | None:
    """The kind of a whole value, or None when no single rule covers all of it.

    ``"62114"`` is a ``number`` (a port is only recognisable by its context), ``"19 shards"``
    has no single kind (see :func:`main_kind`), ``"v4.18.2-rc3"`` is a ``version``.
    """
    stripped = value.strip()
    rules = default_rules() if rules is None else rules
    memo = _kind_memo(rules)
    if memo is not None and stripped in memo:
        return memo[stripped]
    # The overlap contest lets a candidate covering the whole text win exactly when no rule
    # listed before has one too (nothing is longer; every other candidate overlaps it), and
    # the winners are that one alone; with no such candidate no winner covers it. So the kind
    # is the first rule's, in order, with a candidate over the whole text: the rules after it
    # are not searched, and nothing is contested.
    kind = None
    size = len(stripped)
    found: list[tuple[int, int, int, str]] = []
    for order, rule in enumerate(rules):
        if not _active(rule, stripped):
            continue
        _whole_candidates(stripped, rules, (order,), found)
        if any(start == 0 and neg_len == -size for neg_len, _order, start, _kind in found):
            kind = rule.name
            break
        found.clear()
    if memo is not None:
        remember(memo, KIND_OF_CACHE_SIZE, stripped, kind)
    return kind


KIND_OF_CACHE_SIZE = 8192
"""Values whose kind under the shipped rules is remembered (all are forgotten at the bound)."""

_KIND_OF: dict[str, str | None] = {}
_KIND_OF_RULES: list[tuple[KindRule, ...]] = []  # the rule set _KIND_OF holds answers of


def _kind_memo(rules: Sequence[KindRule]) -> dict[str, str | None] | None:
    """The memo of :func:`kind_of` answers under ``rules`` when they are the shipped rules
    (the object itself: answers are forgotten when it is another), else None."""
    shipped = default_rules()
    if rules is not shipped:
        return None
    if not _KIND_OF_RULES or _KIND_OF_RULES[0] is not shipped:
        _KIND_OF.clear()
        _KIND_OF_RULES[:] = [shipped]
    return _KIND_OF


def main_kind(value: str, rules: Sequence[KindRule] | None = None) -> str | None:
    """The kind of the value as a whole, else of its longest identifier (``"19 shards"`` → number)."""
    whole = kind_of(value, rules)
    if whole is not None:
        return whole
    found = find_identifiers(value.strip(), rules)
    if not found:
        return None
    return max(found, key=lambda i: (i.end - i.start, -i.start)).kind
