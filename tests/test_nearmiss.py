"""The one near-miss definition: each named edit is found, and nothing else is."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.nearmiss import (
    MIN_VALUE_CHARS,
    RULES,
    TRUNCATED_MIN_CHARS,
    edit_rule,
    is_near_miss,
    near_miss,
)

UUID = "3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f413"
DIGEST = "sha256:14ec7ce4fb879ae6090f10d69617b72ddd1fd006ae8b66d7c20672f1f3d2e874"


def named_edit_holds(rule: str, altered: str, original: str) -> bool:
    """An independent check that ``altered`` is ``original`` changed by the named edit."""
    if rule == "case_changed":
        return altered != original and altered.casefold() == original.casefold()
    if rule == "unit_dropped":
        head = " ".join(altered.split())
        return original.startswith(head) and original[len(head):].strip().split()[0].isalpha()
    if rule == "transposed":
        return len(altered) == len(original) and any(
            original[:i] + original[i + 1] + original[i] + original[i + 2:] == altered
            for i in range(len(original) - 1))
    if rule in ("digit_changed", "char_changed"):
        diffs = [(a, b) for a, b in zip(altered, original) if a != b]
        if len(altered) != len(original) or len(diffs) != 1:
            return False
        return (rule == "digit_changed") == (diffs[0][0].isdigit() and diffs[0][1].isdigit())
    if rule == "char_dropped":
        return any(original[:i] + original[i + 1:] == altered for i in range(len(original)))
    if rule == "char_added":
        return any(altered[:i] + altered[i + 1:] == original for i in range(len(altered)))
    if rule == "minute_changed":
        return any(altered[:m.start(1)] == original[:m.start(1)]
                   and altered[m.end(1):] == original[m.end(1):]
                   and altered[m.start(1):m.end(1)].isdigit()
                   for m in re.finditer(r"\d:(\d\d)", original)) and altered != original
    if rule == "truncated":
        body = original.split(":", 1)[-1]
        return len(altered) >= TRUNCATED_MIN_CHARS and altered != original and (
            original.startswith(altered) or body.startswith(altered))
    if rule == "embedded":
        return original in altered and altered != original
    raise AssertionError(f"unknown rule {rule}")


@pytest.mark.parametrize(("text", "value", "rule", "altered"), [
    ("- port: 62115", "62114", "digit_changed", "62115"),
    ("- port: 6214.", "62114", "char_dropped", "6214"),
    ("port 621140", "62114", "char_added", "621140"),
    ("port=61214;", "62114", "transposed", "61214"),
    ("listen on host:62115/tcp", "62114", "digit_changed", "62115"),
    ("key kid-7F3A9C2l here", "kid-7F3A9C21", "char_changed", "kid-7F3A9C2l"),
    ("key kid-7f3a9c21", "kid-7F3A9C21", "case_changed", "kid-7f3a9c21"),
    ("key kid-7F3A9C12", "kid-7F3A9C21", "transposed", "kid-7F3A9C12"),
    (f"tenant {UUID[:18]}… done", UUID, "truncated", UUID[:18]),
    (f"tenant {UUID[:8]} done", UUID, "truncated", UUID[:8]),
    ("digest 14ec7ce4fb87, ok", DIGEST, "truncated", "14ec7ce4fb87"),
    ("cutoff: 2026-07-14 01:45 UTC.", "2026-07-14 01:26 UTC", "minute_changed", "2026-07-14 01:45 UTC"),
    ("cutoff: 2026-07-14 01:26.", "2026-07-14 01:26 UTC", "unit_dropped", "2026-07-14 01:26"),
    ("freeze 2026-07-18T22:15Z", "2026-07-18T22:45Z", "digit_changed", "2026-07-18T22:15Z"),
    ("shards: 18 shards", "19 shards", "digit_changed", "18 shards"),
    ("lock /opt/kestrel/state/install.lock.bak", "/opt/kestrel/state/install.lock", "embedded",
     "/opt/kestrel/state/install.lock.bak"),
    ("lock /opt/kestrel/state/instal.lock.", "/opt/kestrel/state/install.lock", "char_dropped",
     "/opt/kestrel/state/instal.lock"),
    ("owner Отдел расчётов-5", "Отдел расчётов-4", "digit_changed", "Отдел расчётов-5"),
    ("range 62114-62120", "62114", "embedded", "62114-62120"),
])
def test_each_rule_is_found_and_named(text, value, rule, altered):
    miss = near_miss(text, value)
    assert miss is not None
    assert (miss.rule, miss.altered, miss.original) == (rule, altered, value)
    assert text[miss.start:miss.end] == altered
    assert named_edit_holds(miss.rule, miss.altered, miss.original)


@pytest.mark.parametrize(("text", "value"), [
    ("port 62114 ok", "62114"),                      # verbatim
    ("ports 8080 9090 12345 47031", "62114"),        # other numbers, more than one edit away
    ("shard count 19", "19 shards"),                 # a bare short number is everywhere
    ("abc", "xyz"),
    ("the id is 9f", "9e"),                          # too short to have near misses
    ("port 6211a", "62114"),                         # an all-digit value stays all digits
    ("freeze 2026-03-11T00:00Z", "2026-07-18T22:45Z"),  # same shape, many fields changed
    ("tenant 3f1c9a5", UUID[:6] + "zz"),             # unrelated
    (f"tenant {UUID[:6]}", UUID),                    # too short a prefix to be a truncation
])
def test_not_a_near_miss(text, value):
    assert near_miss(text, value) is None


def test_the_earliest_of_the_best_rule_wins():
    miss = near_miss("a 62124 b 621140 c 62115", "62114")
    assert (miss.rule, miss.altered) == ("digit_changed", "62124")
    assert near_miss("x kid-7F3A9C2 y kid-7f3a9c21", "kid-7F3A9C21").rule == "case_changed"


def test_whole_value_comparison():
    assert is_near_miss("19", "19 shards").rule == "unit_dropped"
    assert is_near_miss(" 62115 ", "62114").altered == "62115"
    assert is_near_miss("62114", "62114") is None
    assert is_near_miss("62114 (tcp)", "62114") is None        # holds the value whole
    assert is_near_miss("2026-07-14  01:26 UTC", "2026-07-14 01:26 UTC") is None
    assert is_near_miss("2026-03-11T00:00Z", "2026-07-18T22:45Z") is None
    assert is_near_miss("@oncall", "@marta.v-oncall") is None
    assert is_near_miss("", "62114") is None


def test_kind_is_taken_from_identifiers_unless_named():
    assert near_miss("x 3f1c9a52", UUID).kind == "uuid"
    # A scenario kind that is no identifier kind falls back to the value's own kind.
    assert near_miss("x 3f1c9a52", UUID, kind="tenant_uuid").rule == "truncated"
    # Naming a kind where truncation does not apply turns it off.
    assert near_miss("x 3f1c9a52", UUID, kind="path") is None


def test_every_rule_has_a_checker():
    for rule in RULES:
        named_edit_holds(rule, "abcd", "abce")  # raises for a rule the checker does not know


# --- properties ------------------------------------------------------------------------------

_HEX = "0123456789abcdef"
_values = st.one_of(
    st.text(_HEX, min_size=8, max_size=16).filter(lambda v: any(c.isalpha() for c in v)
                                                  and any(c.isdigit() for c in v)),
    st.integers(10_000, 99_999).map(str),
    st.builds(lambda a, b: f"kid-{a}{b}", st.text("ABCDEF", min_size=3, max_size=3),
              st.integers(10_000, 99_999)),
)


def _mutations(value: str) -> st.SearchStrategy[tuple[str, str]]:
    n = len(value)
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    options = []
    swaps = [i for i in range(n - 1) if value[i] != value[i + 1]]
    if swaps:
        options.append(st.sampled_from(swaps).map(
            lambda i: ("transposed", value[:i] + value[i + 1] + value[i] + value[i + 2:])))
    if digits:
        options.append(st.tuples(st.sampled_from(digits), st.sampled_from("0123456789")).filter(
            lambda t: value[t[0]] != t[1]).map(
            lambda t: ("digit_changed", value[:t[0]] + t[1] + value[t[0] + 1:])))
        options.append(st.sampled_from(digits).map(
            lambda i: ("char_dropped", value[:i] + value[i + 1:])))
    return st.one_of(options)


_filler = st.lists(st.sampled_from(["the", "carrier", "says", "port", "value", "was", "kept",
                                    "and", "so", "on", "-", "*", "noted"]), max_size=8).map(" ".join)


@settings(max_examples=60)
@given(st.data())
def test_a_reported_mutation_is_the_named_kind_of_edit(data):
    value = data.draw(_values)
    _, altered = data.draw(_mutations(value))
    text = f"{data.draw(_filler)} {altered}. {data.draw(_filler)}"
    miss = near_miss(text, value)
    if value.isdigit() and not altered.isdigit():
        return
    assert miss is not None
    assert miss.altered == text[miss.start:miss.end]
    assert named_edit_holds(miss.rule, miss.altered, value)


@settings(max_examples=60)
@given(_values, _filler, _filler)
def test_a_verbatim_value_is_never_a_near_miss(value, before, after):
    assert near_miss(f"{before} {value}, {after}", value) is None
    assert is_near_miss(value, value) is None


@settings(max_examples=60)
@given(st.text("0123456789", min_size=MIN_VALUE_CHARS, max_size=12),
       st.lists(st.text("ghijklmnopqrstuvwxyz", min_size=1, max_size=12), max_size=12))
def test_unrelated_values_are_not_near_misses(value, words):
    # Words drawn from letters the value never has are more than one edit away.
    text = " ".join(words)
    assert near_miss(text, value) is None
    for word in words:
        assert is_near_miss(word, value) is None


@settings(max_examples=60)
@given(st.text(min_size=0, max_size=40), st.text(min_size=1, max_size=20))
def test_any_reported_rule_holds_for_arbitrary_text(text, value):
    miss = near_miss(text, value)
    if miss is not None:
        assert miss.rule in RULES
        assert miss.altered != miss.original
        assert named_edit_holds(miss.rule, miss.altered, miss.original)


def test_edit_rule_directly():
    assert edit_rule("62115", "62114") == "digit_changed"
    assert edit_rule("62114", "62114") is None
    assert edit_rule("01:45", "01:26", "time") == "minute_changed"
    assert edit_rule("01:45", "01:26", "number") is None


def test_a_scenario_tag_names_the_same_kind_for_near_misses_as_for_the_grader():
    from foldscope.core.grading import tag_kind
    from foldscope.core.nearmiss import value_kind

    # ledger01 has no kind of its own; tagged hostname it is a host to both rules.
    assert value_kind("ledger01", "hostname") == tag_kind("hostname") == "host"
    assert value_kind("ledger01", "department") == value_kind("ledger01") is None
    for tag in ("port", "domain", "zone", "file", "uri", "commit"):
        assert value_kind("x", tag) == tag_kind(tag), tag


# -- the prefilter before the near-miss search skips only what no rule could name -----------

_PREFILTER_KINDS = (None, "time", "timestamp", "hash", "uuid", "digest", "number", "port")
# Values of every shape the rules treat apart: units, times, digests, cases, long digits.
_PREFILTER_VALUES = st.one_of(
    _values,
    st.sampled_from(["19 shards", "2026-07-14 01:26 UTC", "01:26", UUID, DIGEST, "Straße-42x",
                     "İstanbul-7", "install.lock", "ledger01.internal", "62114 ms"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=4, max_size=14),
)


@st.composite
def _value_and_candidate(draw):
    value = draw(_PREFILTER_VALUES)
    shape = draw(st.sampled_from(["edit", "case", "cut", "glue", "free"]))
    if shape == "edit":
        i = draw(st.integers(0, len(value)))
        ch = draw(st.characters(codec="utf-8", exclude_categories=("Cs",)))
        op = draw(st.sampled_from(["sub", "del", "ins", "swap"]))
        cand = {"sub": value[:i] + ch + value[i + 1:], "del": value[:i] + value[i + 1:],
                "ins": value[:i] + ch + value[i:],
                "swap": value[:i] + value[i + 1:i + 2] + value[i:i + 1] + value[i + 2:]}[op]
    elif shape == "case":
        cand = draw(st.sampled_from([value.upper(), value.lower(), value.swapcase(),
                                     value.casefold(), value.title()]))
    elif shape == "cut":
        a = draw(st.integers(0, len(value)))
        cand = value[a:draw(st.integers(a, len(value)))]
    elif shape == "glue":
        cand = draw(st.text(max_size=3)) + value + draw(st.text(max_size=3))
    else:
        cand = draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)),
                            min_size=1, max_size=16))
    return value, cand


@settings(max_examples=400)
@given(_value_and_candidate(), st.sampled_from(_PREFILTER_KINDS), st.booleans())
def test_the_prefilter_rejects_only_candidates_no_rule_names(pair, kind, in_text):
    from foldscope.core.nearmiss import _Prefilter

    value, cand = pair
    if not _Prefilter(value).admits(cand):
        assert edit_rule(cand, value, kind, in_text=in_text) is None


@settings(max_examples=200)
@given(st.data(), st.sampled_from(_PREFILTER_KINDS))
def test_the_prefiltered_search_finds_what_comparing_every_candidate_finds(data, kind):
    from foldscope.core.grading import normalize, token_spans
    from foldscope.core.nearmiss import _search, value_kind

    value = data.draw(_PREFILTER_VALUES)
    cands = data.draw(st.lists(_value_and_candidate().map(lambda vc: vc[1]), max_size=4))
    # Candidates of other values, edits of this one, filler: in any order, any separators.
    parts = cands + [data.draw(_filler)]
    for _ in range(data.draw(st.integers(0, 3))):
        digits = any(c.isdigit() for c in value)
        parts.append(data.draw(_mutations(value))[1] if digits else value.upper())
    parts = data.draw(st.permutations(parts))
    # U+2003 and U+001C are whitespace to str.split() yet no token separator: runs start there.
    seps = data.draw(st.lists(st.sampled_from([" ", ", ", "\n", ". ", ":", "/", " (", ") ",
                                               "\u2003", " \u2003", "\x1c "]),
                              min_size=len(parts), max_size=len(parts)))
    text = "".join(p + s for p, s in zip(parts, seps))
    norm, orig = normalize(text), normalize(value).strip()
    if not orig or not norm or token_spans(norm, orig):
        return
    resolved = value_kind(orig, kind)
    assert _search(norm, orig, resolved) == _search(norm, orig, resolved, prefilter=False)


def _runs_reference(index, value):
    """Word runs as the near-miss search first collected them: every run of as many words as
    the value (or its number part) has, tested by slicing and re-joining each one."""
    from foldscope.core.grading import split_unit

    out = []
    words, text = index.words, index.text
    n = len(value.split())
    if n > 1:
        for i in range(len(words) - n + 1):
            start, end = words[i][0], words[i + n - 1][1]
            if abs((end - start) - len(value)) <= 1 and text[start:end].count("\n") == 0:
                out.append((text[start:end], start, end))
    unit = split_unit(value)
    if unit is not None and len(unit[0].split()) > 1:
        head, m = unit[0], len(unit[0].split())
        for i in range(len(words) - m + 1):
            start, end = words[i][0], words[i + m - 1][1]
            if " ".join(text[start:end].split()) == head:
                out.append((text[start:end], start, end))
    return sorted(out)


@settings(max_examples=200)
@given(st.sampled_from(["19 shards", "2026-07-14 01:26 UTC", "62114 ms", "3 eu west regions"]),
       st.lists(st.sampled_from(["19", "shards", "2026-07-14", "01:26", "UTC", "utc", "62114",
                                 "ms", "3", "eu", "west", "regions", "x", "\u2003", "\x1c",
                                 "19\u2003shards", "01:26\u2003UTC", "\u20032026-07-14",
                                 "01:26\u2003", "\x1c3", "west\x1c"]), max_size=14),
       st.lists(st.sampled_from([" ", "  ", "\n", "\u2003 ", " \x1c", ", "]), min_size=14,
                max_size=14))
def test_word_runs_are_the_runs_the_search_always_compared(value, words, seps):
    from foldscope.core.nearmiss import _candidates, _index

    text = "".join(w + s for w, s in zip(words, seps))
    index = _index(text)
    got = sorted(c for c in _candidates(index, value, None)
                 if len(c[0].split()) > 1 or " " in value and c[0] != value)
    ref = _runs_reference(index, value)
    multi = [c for c in got if c in ref or len(c[0].split()) > 1]
    assert sorted(set(multi)) == sorted(set(ref))


@pytest.mark.parametrize("text", [
    "backup at \u20032026-07-14 01:26 noted", "cutoff 2026-07-14 01:26\u2003 UTC-ish",
    "3 eu west\u2003 regions", "count \x1c19 shards", "62114\u2003 ms and 62114 ms"])
def test_word_runs_with_whitespace_inside_tokens(text):
    from foldscope.core.nearmiss import _candidates, _index

    for value in ("2026-07-14 01:26 UTC", "3 eu west regions", "19 shards", "62114 ms"):
        index = _index(text)
        ref = _runs_reference(index, value)
        got = set(_candidates(index, value, None))
        assert set(ref) <= got


def _index_reference(text):
    """The token index as the near-miss search first built it (character-by-character trim)."""
    from foldscope.core.nearmiss import _SUBSPLIT_RE, _TOKEN_RE, _TRAILING

    def trim(start, end):
        while end > start and text[end - 1] in _TRAILING:
            end -= 1
        return start, end

    words, by_length = [], {}

    def add(start, end):
        if end > start:
            by_length.setdefault(end - start, {}).setdefault(text[start:end], start)

    for match in _TOKEN_RE.finditer(text):
        start, end = trim(*match.span())
        if end <= start:
            continue
        words.append((start, end))
        add(start, end)
        if end != match.end():
            add(start, match.end())
        token = text[start:end]
        if _SUBSPLIT_RE.search(token):
            pos = start
            for part in _SUBSPLIT_RE.split(token):
                add(*trim(pos, pos + len(part)))
                pos += len(part) + 1
    return tuple(words), by_length


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(["host:62115", "ops@ledger01.", "a/b/c…", "...", ":",
                                           "/", "@", "62114.", "v1.2!?", "x", "é.", "\u2003"]),
                          st.text(max_size=6)), max_size=20))
def test_the_token_index_is_the_one_always_built(parts):
    from foldscope.core.nearmiss import _index

    text = " ".join(parts)
    index = _index(text)
    assert (index.words, index.by_length) == _index_reference(text)


# -- the search line by line (each line's best remembered, lines no probe finds skipped) ----

def test_the_unicode_facts_the_line_search_rests_on():
    import sys

    from foldscope.core.nearmiss import _EXOTIC_SPACES, _SEPARATORS

    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    # case_changed's probe: casefold(lower(ch)) == casefold(ch), so c.lower() == v.lower()
    # implies c.casefold() == v.casefold() (final sigma: ς and σ fold alike).
    assert all(ch.lower().casefold() == ch.casefold() for ch in chars)
    assert "ΑΣ".lower().casefold() == "ΑΣ".casefold()
    # Casefolding maps each character to one or more, never to a newline but the newline.
    assert all(ch.casefold() and ("\n" not in ch.casefold() or ch == "\n") for ch in chars)
    # Whitespace inside tokens: exactly the str.split whitespace no token separator holds.
    token_breaks = set(_SEPARATORS) | set("\u2028\u2029\u00a0\u200b")
    assert set(_EXOTIC_SPACES) == {ch for ch in chars if ch.isspace() and ch not in token_breaks}


_LINE_VALUES = st.one_of(_PREFILTER_VALUES, st.sampled_from(
    ["2026-07-14 01:26 UTC", "2026-07-14 01:26", "3 eu west regions", "62114 ms", "kc-eu-w-4471",
     "sha256:57e5eeb769a98fb32dbcb6b5b53e78ea", "ΑΣΣ-1234", "ǅemal-77"]))


@settings(max_examples=400)
@given(st.data(), st.sampled_from(_PREFILTER_KINDS))
def test_the_line_by_line_search_finds_what_the_whole_text_search_finds(data, kind):
    from foldscope.core.grading import normalize, token_spans
    from foldscope.core.nearmiss import _search, _search_by_lines, value_kind

    value = data.draw(_LINE_VALUES)
    cands = data.draw(st.lists(_value_and_candidate().map(lambda vc: vc[1]), max_size=6))
    parts = cands + [data.draw(_filler), *value.split()]
    for _ in range(data.draw(st.integers(0, 3))):
        digits = any(c.isdigit() for c in value)
        parts.append(data.draw(_mutations(value))[1] if digits else value.upper())
    parts = data.draw(st.permutations(parts))
    # Lines broken anywhere, a value's words split over lines, whitespace inside tokens.
    seps = data.draw(st.lists(st.sampled_from(["\n", " \n", "\n\n", " ", ", ", ". ", ":", "/",
                                               "\u2003", "\u2003\n", "\x1c ", "\n\x1c"]),
                              min_size=len(parts), max_size=len(parts)))
    text = "".join(p + s for p, s in zip(parts, seps))
    norm, orig = normalize(text), normalize(value).strip()
    if not orig or not norm or token_spans(norm, orig):
        return
    resolved = value_kind(orig, kind)
    assert _search_by_lines(norm, orig, resolved) == _search(norm, orig, resolved)
    assert _search_by_lines(norm, orig, resolved) == _search(norm, orig, resolved)  # remembered


@settings(max_examples=300)
@given(_value_and_candidate(), st.sampled_from(_PREFILTER_KINDS), st.text(max_size=4),
       st.text(max_size=4))
def test_a_line_holding_a_near_miss_holds_a_probe(pair, kind, before, after):
    from foldscope.core.grading import normalize
    from foldscope.core.nearmiss import _probes, _significant, value_kind

    value, cand = pair
    orig = normalize(value).strip()
    if "\n" in orig or _significant(orig) < MIN_VALUE_CHARS:
        return
    resolved = value_kind(orig, kind)
    if edit_rule(cand, orig, resolved, in_text=True) is not None:
        line = (before + cand + after).casefold()
        assert any(p in line for p in _probes(orig, resolved))


@pytest.mark.parametrize(("text", "value"), [
    ("cutoff 2026-07-14\n01:26 noted", "2026-07-14 01:26 UTC"),
    ("cutoff 2026-07-14 \n 01:26\nUTC", "2026-07-14 01:26 UTC"),
    ("a \u20032026-07-14\n01:26 b", "2026-07-14 01:26 UTC"),
    ("3 eu\nwest regions", "3 eu west regions"),
    ("port\n62115\nand 6214\n", "62114"),
    ("ΑΣ-1234\nας-1234", "ΑΣ-1235"),
    ("Straße-42y\nSTRASSE-42X", "Straße-42x"),
])
def test_the_line_by_line_search_on_lines_that_meet(text, value):
    from foldscope.core.grading import normalize
    from foldscope.core.nearmiss import _search, _search_by_lines, value_kind

    norm, orig = normalize(text), normalize(value).strip()
    resolved = value_kind(orig, None)
    assert _search_by_lines(norm, orig, resolved) == _search(norm, orig, resolved)
