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
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.core.rulefile import named_tables

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
        pattern = entry.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ConfigError(f"{where}: 'pattern' must be a non-empty string")
        try:
            compiled = re.compile(pattern)
        except re.error as err:
            raise ConfigError(f"{where}: bad pattern: {err}") from None
        if compiled.match(""):
            raise ConfigError(f"{where}: pattern matches the empty string")
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
        anchor = entry.get("anchor")
        anchor_re = None
        if anchor is not None:
            if not isinstance(anchor, str) or not anchor:
                raise ConfigError(f"{where}: 'anchor' must be a non-empty string")
            try:
                anchor_re = re.compile(anchor)
            except re.error as err:
                raise ConfigError(f"{where}: bad anchor: {err}") from None
            if anchor_re.match(""):
                raise ConfigError(f"{where}: anchor matches the empty string")
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
    candidates: list[tuple[int, int, int, str]] = []  # (-length, rule order, start, kind)
    for order, rule in enumerate(rules):
        if rule.requires and not any(needle in text for needle in rule.requires):
            continue
        for match in (rule.pattern.finditer(text) if rule.anchor is None else
                      _anchored(rule.pattern, rule.anchor, text)):
            start, end = _span(match)
            if end > start:
                candidates.append((start - end, order, start, rule.name))
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
