"""Rules and searches rewritten for speed find exactly what their plain forms find.

The url, port, host and path patterns of the shipped kinds file open with checks that only make
them fast (see the file's comments). Their plain forms are kept here, built from the same shared
patterns (``(?&url)``, ``(?&path)``, ``(?&tld)``...): each shipped pattern must give the same
matches, and the same ``value`` groups, on any text and any stretch of it (the engine searches
lines by ``finditer(text, pos, endpos)``). ``_anchored``, which searches a rule around its
anchor's hits, is checked against the plain walk over every hit, on lines longer than the reach
too (stretches that overlap, a match two of them share). ``kind_of``, which stops at the first
rule with a candidate over the whole value, is checked against the overlap contest it skips.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import foldscope.core.identifiers as identifiers
from foldscope.core.identifiers import _anchored, default_patterns, default_rules
from foldscope.core.rulefile import rule_pattern

PLAIN = {
    "colour": (
        r"""(?<![\w&#])#(?=[0-9]*[a-fA-F])(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})(?![\w-])"""
        r"""|(?:(?<=[:=(,\"'])|(?<=[:=(,] ))#\d{3,8}(?![\w-])"""
    ),
    "branch": (
        '(?<![\\w./-])(?:feat|feature|fix|bugfix|hotfix|chore|release|refactor|claude|code'
        'x|cursor|copilot|wip)/(?![\\w./-]*\\.[A-Za-z][A-Za-z0-9]{0,4}(?![\\w/-]))[A-Za-z0-9'
        '][\\w.-]*(?:/[\\w.-]+)*(?<![.-])(?![\\w/-])|(?:(?:(?m:^)[ \\t]*(?:\\$[ \\t]+)?|(?<=[;&'
        '|(`\'\\"])[ \\t]*|(?<=\\bthen )|(?<=\\bdo ))git[ \\t]+(?:checkout|switch)(?:[ \\t]+-[bB'
        'cC])?|(?:(?m:^)[ \\t]*(?:\\$[ \\t]+)?|(?<=[;&|(`\'\\"])[ \\t]*|(?<=\\bthen )|(?<=\\bdo )'
        ')git[ \\t]+branch(?:[ \\t]+-[mMdDf])?|\\bgit[ \\t]+push(?:[ \\t]+(?:-u|--set-upstream'
        '|-f|--force(?:-with-lease)?))*[ \\t]+origin|\\bgit[ \\t]+worktree[ \\t]+add[ \\t]+(?:'
        '\\S+[ \\t]+)?-b|\\bOn branch|\\bbranch[ \\t]+[`\'\\"](?=[\\w./-]+[`\'\\"]))[ \\t]+[`\'\\"]?(?'
        'P<value>(?!(?:main|master|HEAD|origin|develop|trunk|-)(?![\\w/.-]))[A-Za-z0-9][\\w'
        './-]*(?<![./-]))(?![\\w/-])'
    ),
    "url": (
        r"""(?i)(?![^\s\"'`]*\$[{A-Za-z_])(?=(?:https?|ftp|wss?|s3|git|ssh|postgres(?:ql)?|mysql|redis"""
        r"|rediss|mongodb(?:\+srv)?|amqps?|nats|grpc)://)(?&url)"
    ),
    "port": (
        r"""(?:(?<![\w-])-[pP][ ]?(?=\d)|(?:(?<![A-Za-z0-9./])(?i:ports?)|(?<=[a-z])Ports?)[`'\"]?(?:["""
        r""" \t]*(?:[:=#]|=>|(?i:is|number|was|on|to)\b))*[ \t]*[`'\"]?|\bEXPOSE[ \t]+|\b(?i:listen(?:"""
        r"ing)?(?:[ \t]+on)?)[ \t]+|(?<![\w.-])localhost:|(?<![\w.])(?:(?&ipv4_octet)\.){3}(?&ipv4_o"
        r"ctet):|\]:|(?<![\w.@/-])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?&tld):|(?<![\w./@:$-])[a-z"
        r"][a-z0-9_-]*:(?=\d{4,5}(?!\d)))(?P<value>(?:6553[0-5]|655[0-2]\d|65[0-4]\d{2}|6[0-4]\d{3}|"
        r"[1-5]\d{4}|[1-9]\d{1,3}))(?![\w]|\.\w)"
    ),
    "host": (
        r"(?<![\w.@/$-])(?!(?<=[\"\t])(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?&tld)/[\w.~+-])"
        r"(?!(?:(?<=\w[(\[])|(?<==)|(?<== ))[a-z_][A-Za-z0-9_]*\.(?:page|run|store|sit"
        r"e|online|tech|app|dev|info|me|to|us|at|no|my|tv|fm|ly|co|ai|io|gg|test|local|internal|clou"
        r"d|biz|xyz|int|lan)(?=[ \t]*[),;\]}]|[ \t]+[*+%<>=!?&|-][ \t=]))(?!(?:this|self|cls|super|w"
        r"indow|document|process|module|exports|console|globalThis|req|res|ctx|config|options|opts|p"
        r"rops|state|env|os|sys|json|math|path|fs|np|pd|torch|tf|obj|data|item|result|user|event|e|e"
        r"rr|error|args|kwargs|it|x|y|utils|util|settings|logger|t|p|m|v)\.[a-z]+(?![\w.-]))(?:[a-z0"
        r"-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?&tld)(?![\w(-]|\.[\w])"
    ),
    "path": (
        r"""(?<![\w.:/~<$#\\}@-]@)(?<!from '@)(?<!from "@)(?<!import '@)(?<!import "@)(?<!require\('@)"""
        r"""(?<!require\("@)(?![\w@+.-]*\.(?:md|mdx|ts|tsx|js|jsx|py|json|ya?ml|toml|txt|go|rs|rb|sh|css|html)/)"""
        r"""(?!\.(?:(?<=from '\.)|(?<=from "\.)|(?<=import '\.)|(?<=import "\.)"""
        r"""|(?<=require\('\.)|(?<=require\("\.)|(?<=import\('\.)|(?<=import\("\.)|(?<=module '\.)"""
        r"""|(?<=module "\.)))(?&path)(?!\*)"""
    ),
}
"""The rules' patterns as they read before their speed-ups (main at dae2e0f; host with noise's
module-path rule of session 6 added; path with session 7's mentions, scoped imports and globs)."""

FRAGMENTS = [
    "http://", "https://", "HTTPS://", "ws://", "git://", "s3://", "mongodb+srv://", "ftp://",
    "xhttp://", "\x1b[31m", "\x1b[0m", "\x1b[1m", "$", "${", "$X", "}", "localhost:", "localhost",
    "port", "Port", "PORT", "ports", "httpPort", "_port", "port=", "port: ", "port is ", "-p ", "-P",
    "EXPOSE ", "listen on ", "Listening ", "10.0.0.5:", "192.168.1.", "[::1]:", "]:", "redis:",
    "api.example.com", "svc.internal", "a-b.corp", ".io", ".com:", ".local", "json.load",
    "self.x", "(", ")", "[", "]", "=", "= ", ",", ";", ":", "::", ".", "/", "//", "~/", "./", "../",
    "/srv/app/", "src/a.ts", "from '", "import \"", "require('", "a/", "b/", "-51-", "#{", ":id",
    "@", "_", "-", "8080", "65535", "70000", "3", "42", "0", "m", "M", "x", "K", "\u212a",
    "\u017f", "é", "٣", " ", " ", "\t", "\n", "'", '"', "`", "<", ">", "|", "\\", "x" * 40,
    # whole examples of each kind, to be cut and glued to the rest
    "Listening on 8080", "LISTEN 80", "EXPOSE 443", "-p 2222", "-P8080", "port 5432", "Port=9000",
    "PORTS: 3000", "web:8080", "db-1.svc.internal:6379", "http://h.io:8443/x?y=1",
    "HTTPS://Example.COM/a", "\x1b[32mhttps://x.dev/p", "git://host/$REPO", "/srv/app/main.py",
    "./a/b.js", "~/x/y", "src/a/b/", "from '../types'", "require('./lib/db')", "a.b.example.com",
    "json.loads(x)", "(bob.page)", "= task.run", "ledger-3.internal",
    "git checkout -b ", "git switch ", "git branch -m ", "git push -u origin ", "On branch ",
    "git worktree add ../w -b ", "branch `", "branch 'x' ", "then ", "do ", "$ ", "; ", "&& ",
    "feat/phase-12-mfa", "feature/", "fix/", "release/1.2", "claude/x", "wip/", "main", "HEAD",
    "#1f2937", "#fff", "#FfF0", "#12345678", "#123", "##", "&#", "color: ", "(", ", ", "'#",
    "\n$ git switch dev-2", "\n  $ git checkout -b x-1 ", "(git branch -m old-x new-x)",
]


def _compiled(source: str) -> re.Pattern[str]:
    return rule_pattern({"pattern": source}, "pattern", "test", shared=default_patterns())


def _matches(pattern: re.Pattern[str], text: str, pos: int, endpos: int
             ) -> list[tuple[tuple[int, int], tuple[int, int] | None]]:
    valued = "value" in pattern.groupindex
    return [(m.span(), m.span("value") if valued else None)
            for m in pattern.finditer(text, pos, endpos)]


SHIPPED = {rule.name: rule for rule in default_rules()}


def test_every_plain_form_stands_for_a_shipped_rule() -> None:
    for name, source in PLAIN.items():
        assert SHIPPED[name].pattern.pattern != _compiled(source).pattern, name  # sped up


@pytest.mark.parametrize("name", sorted(PLAIN))
@settings(max_examples=400, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=30), cut=st.tuples(
    st.integers(0, 400), st.integers(0, 400)))
def test_sped_up_pattern_finds_what_its_plain_form_finds(name: str, parts: list[str],
                                                         cut: tuple[int, int]) -> None:
    text = "".join(parts)
    plain, shipped = _compiled(PLAIN[name]), SHIPPED[name].pattern
    assert _matches(shipped, text, 0, len(text)) == _matches(plain, text, 0, len(text))
    pos, endpos = sorted(cut)
    assert _matches(shipped, text, pos, endpos) == _matches(plain, text, pos, endpos)


@pytest.mark.parametrize("name", sorted(PLAIN))
@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("apLlEo:/.-_@$[]\x1bm18\n P")), max_size=120))
def test_sped_up_pattern_agrees_on_arbitrary_text(name: str, text: str) -> None:
    plain, shipped = _compiled(PLAIN[name]), SHIPPED[name].pattern
    assert _matches(shipped, text, 0, len(text)) == _matches(plain, text, 0, len(text))


def _plain_anchored(pattern: re.Pattern[str], anchor: re.Pattern[str], text: str,
                    stops: frozenset[int]) -> Iterable[re.Match[str]]:
    """Every hit of the anchor walked in turn (main at dae2e0f)."""
    done = -1
    spans: set[tuple[int, int]] = set()
    size = len(text)
    for hit in anchor.finditer(text):
        at = hit.start()
        if at < done:
            continue
        lo = text.rfind("\n", 0, at) + 1
        hi = text.find("\n", at)
        hi = size if hi < 0 else hi if hi in stops else hi + 1
        lo = max(lo, at - identifiers.ANCHOR_REACH)
        hi = min(hi, hit.end() + identifiers.ANCHOR_REACH)
        for match in pattern.finditer(text, lo, hi):
            span = match.span()
            if span not in spans:
                spans.add(span)
                yield match
        done = hi


ANCHORED = sorted(rule.name for rule in default_rules() if rule.anchor is not None)
_ODD = [  # anchors that see line breaks or can match empty, patterns that span lines
    (re.compile(r"a\nb|b"), re.compile(r"[ab]\n?[ab]*")),
    (re.compile(r"(?=a)"), re.compile(r"a+")),
    (re.compile(r"^a", re.M), re.compile(r"a.*")),
    (re.compile(r"[1x][^\n]{0,6}"), re.compile(r"[^\n]")),  # hits longer than the reach
]


@pytest.mark.parametrize("reach", [3, 12, identifiers.ANCHOR_REACH])
@settings(max_examples=120, deadline=None)
@given(data=st.data(), parts=st.lists(st.sampled_from(
    [*FRAGMENTS, "x1x1x1x1x1", "1a1a1a1", "a\nb", "aaa", *"ab1:/.-_@#\n $xp8P"]), max_size=40))
def test_anchored_search_finds_what_walking_every_hit_finds(reach: int, data: st.DataObject,
                                                           parts: list[str]) -> None:
    text = "".join(parts)
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]
    stops = frozenset(data.draw(st.lists(st.sampled_from(newlines), max_size=3)) if newlines
                      else [])
    pairs = [(SHIPPED[name].anchor, SHIPPED[name].pattern) for name in ANCHORED]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(identifiers, "ANCHOR_REACH", reach)  # a short reach: long lines are common
        _same_anchored([*pairs, *_ODD], text, stops)


def _same_anchored(pairs: list[tuple[re.Pattern[str] | None, re.Pattern[str]]], text: str,
                   stops: frozenset[int]) -> None:
    for anchor, pattern in pairs:
        assert anchor is not None
        # (an empty match is no candidate: one two stretches both end with may come twice)
        got = [m.span() for m in _anchored(pattern, anchor, text, stops) if m.end() > m.start()]
        assert got == [m.span() for m in _plain_anchored(pattern, anchor, text, stops)
                       if m.end() > m.start()]


def _plain_kind_of(value: str, rules: tuple[identifiers.KindRule, ...] | None = None) -> str | None:
    """``kind_of`` as it read before it stopped at the first rule covering the whole value
    (main at 732003c): the contest's winners, one of them over the whole value."""
    stripped = value.strip()
    found = identifiers.find_identifiers(stripped, rules)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(stripped):
        return found[0].kind
    return None


_USER_RULES = identifiers.merge_rules(default_rules(), identifiers.rules_from_data({"kind": [
    # a user kind listed first, one replacing a shipped kind, a value group that may be empty
    {"name": "service", "pattern": r"\b[a-z]+-\d+(?:\.[a-z]+)*\b"},
    {"name": "ticket", "pattern": r"(?<![\w-])(?P<value>[A-Z]{2,5}-\d+|\d*)[.:]"},
]}, "test"))

KIND_VALUES = [
    "8080", "ledger-3.internal", "ledger-3.internal:8080", "http://h.io:8443/x", "/srv/app/a.py",
    "OPS-1234", "v4.18.2-rc3", "19 shards", "json.load", "10.0.0.5", "[::1]", "localhost",
    "2026-07-14T10:00:00Z", "16:32:05", "@Injectable", "#1f2937", "feat/phase-12-mfa",
    "LEDGER_GATEWAY_URL", "${PORT}", "a1b2c3d4e5f6a1", "5c1f0e2a-0000-4000-8000-00000000beef",
    "bob@ledgerly.io", "toolu_01ABC", " ", "", "x\ny.com", "a.b", ".com", "port 5432",
]


@settings(max_examples=400, deadline=None)
@given(value=st.one_of(
    st.sampled_from(KIND_VALUES),
    st.lists(st.sampled_from([*FRAGMENTS, *KIND_VALUES]), max_size=4).map("".join),
    st.text(alphabet=st.sampled_from(list("ab1:/.-_@#$[]\n PO8x")), max_size=24)))
def test_kind_of_is_the_contest_winner_over_the_whole_value(value: str) -> None:
    for rules in (None, _USER_RULES, list(_USER_RULES)):
        assert identifiers.kind_of(value, rules) == _plain_kind_of(value, rules), rules
        assert identifiers.kind_of(value, rules) == _plain_kind_of(value, rules)  # remembered
