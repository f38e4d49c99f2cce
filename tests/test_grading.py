"""Tests for the graders: whole-token boundaries, label binding, presence and diagnostics."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from kestrel_facts import KESTREL_FACTS, Fact

from foldscope.core.grading import (
    contains_token,
    contains_token_normalized,
    grade_answer,
    is_abstention,
    is_structured_name,
    normalize,
    parse_answer,
    presence,
    present_in,
    recall,
    unit_dropped,
)

KESTREL = KESTREL_FACTS
LABELS = [f.label for f in KESTREL]


# --- contains_token: the hostile cases ------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("port is 62114.", "62114"),
        ("port is 62114. Next", "62114"),
        ("62114", "62114"),
        ("62114 at start", "62114"),
        ("at end 62114", "62114"),
        ("localhost:62114", "62114"),
        ("62114/tcp", "62114"),
        ("(62114)", "62114"),
        ("**62114**", "62114"),
        ("`62114`", "62114"),
        ("ports 62114, 47031", "62114"),
        ("lock at /opt/x.lock.", "/opt/x.lock"),
        ("lock at /opt/x.lock", "/opt/x.lock"),
        ("«Отдел расчётов-4»", "Отдел расчётов-4"),
        ("owner: Отдел расчётов-4.", "Отдел расчётов-4"),
        ("cut 2026-07-14  01:26 UTC ok", "2026-07-14 01:26 UTC"),
        ("cut 2026-07-14\n01:26\u00a0UTC", "2026-07-14 01:26 UTC"),
        ("19 shards.", "19 shards"),
        ("ping @marta.v-oncall now", "@marta.v-oncall"),
        ("see https://origin-7.cdn.kestrel-internal.net/assets.",
         "https://origin-7.cdn.kestrel-internal.net/assets"),
        ("zone zone-b.kestrel-internal.net.", "zone-b.kestrel-internal.net"),
        ("tag v4.18.2-rc3", "v4.18.2-rc3"),
        ("freeze 2026-07-18T22:45Z, then", "2026-07-18T22:45Z"),
        ("162114 then 62114", "62114"),  # first glued, second free
        ("12 12 12", "12 12"),
        ("112 12 12", "12 12"),  # overlapping: glued at 1, free at 4
        ("port 62114\u200b!", "62114"),  # zero-width space separates
        ("port 621\u200d14", "62114"),  # an invisible joiner inside is ignored
        ("value: x.", "x."),  # a value ending in '.'
        ("(see note a)", "note a)"),  # a value ending in ')'
        ("ends with path/", "path/"),
    ],
)
def test_whole_token_matches(text, value):
    assert contains_token(text, value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("621140", "62114"),
        ("162114", "62114"),
        ("62114.5", "62114"),
        ("62114_backup", "62114"),
        ("ports 62110-62114", "62114"),  # a range is not the port
        ("/opt/x.lockfile", "/opt/x.lock"),
        ("/opt/x.lock.bak", "/opt/x.lock"),
        ("v4.18.2-rc31", "v4.18.2-rc3"),
        ("v4.18.2-rc3.1", "v4.18.2-rc3"),
        ("Отдел расчётов-42", "Отдел расчётов-4"),
        ("подОтдел расчётов-4", "Отдел расчётов-4"),
        ("zone-b.kestrel-internal.network", "kestrel-internal.net"),
        ("zone-b.kestrel-internal.net", "kestrel-internal.net"),
        # Paths, URLs, handles and hosts are bounded by what could extend them (issue 8).
        ("ping x@marta.v-oncall", "@marta.v-oncall"),
        ("bob@marta.v-oncall", "@marta.v-oncall"),
        ("/var/opt/kestrel/state/install.lock", "/opt/kestrel/state/install.lock"),
        ("~/opt/kestrel/state/install.lock", "/opt/kestrel/state/install.lock"),
        ("./opt/kestrel/state/install.lock", "/opt/kestrel/state/install.lock"),
        ("/opt/kestrel/state/install.lock/x", "/opt/kestrel/state/install.lock"),
        ("https://origin-7.cdn.kestrel-internal.net/assets/v2",
         "https://origin-7.cdn.kestrel-internal.net/assets"),
        ("https://origin-7.cdn.kestrel-internal.net/assets?v=2",
         "https://origin-7.cdn.kestrel-internal.net/assets"),
        ("https://zone-b.kestrel-internal.net", "zone-b.kestrel-internal.net"),
        ("zone-b.kestrel-internal.net/x", "zone-b.kestrel-internal.net"),
        ("zone-b.kestrel-internal.net:53", "zone-b.kestrel-internal.net"),
        ("ops@zone-b.kestrel-internal.net", "zone-b.kestrel-internal.net"),
        ("@marta.v-oncall.bak", "@marta.v-oncall"),
        ("@marta.v-oncall-2", "@marta.v-oncall"),
        ("2026-07-14 01:26 UTC-5", "2026-07-14 01:26 UTC"),
        ("kid-7f3a9c21", "kid-7F3A9C21"),  # identifiers are case-sensitive
        ("６２１１４", "62114"),  # full-width digits are not folded (NFC, not NFKC)
        ("port 62114\u0301", "62114"),  # a combining mark glues to the digit
        ("port 62114\u200d0", "62114"),  # a joiner is invisible: this reads 621140
        ("", "62114"),
        ("anything", ""),
        ("anything", "   "),
    ],
)
def test_whole_token_rejects(text, value):
    assert not contains_token(text, value)


def test_nfc_both_sides():
    composed, decomposed = "расчётов", "расче\u0308тов"
    assert contains_token(f"Отдел {decomposed}-4", f"Отдел {composed}-4")
    assert contains_token(f"Отдел {composed}-4", f"Отдел {decomposed}-4")
    assert normalize("e\u0301") == "\u00e9"


def test_casefold_option_is_for_diagnostics():
    assert contains_token("KID-7f3a9c21", "kid-7F3A9C21", casefold=True)
    assert not contains_token("KID-7f3a9c210", "kid-7F3A9C21", casefold=True)


# --- contains_token: properties -------------------------------------------------------------

WORD_CHARS = "abcxyzXYZ0123456789_жЖёЯдф"
PUNCT = ".-/@:()«»#+"
VALUE_ALPHABET = WORD_CHARS + PUNCT + " "
# Characters that end a token on either side: not word characters and not the infix joiners.
FREE_SEPARATORS = " ,;:!?()«»\"'\n\t/"
GLUE = "aZ9_жЁ"

values = st.text(alphabet=VALUE_ALPHABET, min_size=1, max_size=20).map(str.strip).filter(bool)
free_prefixes = st.one_of(
    st.just(""),
    st.tuples(st.text(alphabet=VALUE_ALPHABET, max_size=10), st.sampled_from(FREE_SEPARATORS))
    .map("".join),
)
free_suffixes = st.one_of(
    st.just(""),
    st.just("."),  # a sentence end
    st.tuples(st.sampled_from(FREE_SEPARATORS), st.text(alphabet=VALUE_ALPHABET, max_size=10))
    .map("".join),
    st.tuples(st.just("."), st.sampled_from(" \n"), st.text(alphabet=VALUE_ALPHABET, max_size=10))
    .map("".join),
)


def is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


@given(free_prefixes, values, free_suffixes)
@example("«", "Отдел расчётов-4", "»")
@example("", "62114", ". Next")
def test_free_value_always_matches(prefix, value, suffix):
    assume(not is_structured_name(value))  # names have their own boundaries (tested below)
    assert contains_token(prefix + value + suffix, value)


@given(values, st.sampled_from(GLUE), st.sampled_from(["", ".", "-"]))
def test_glued_right_edge_never_matches(value, glue, joiner):
    assume(is_word(value[-1]))
    text = value + joiner + glue
    assume(text.find(value, 1) == -1)  # the only occurrence is the glued one
    assert not contains_token(text, value)


@given(values, st.sampled_from(GLUE), st.sampled_from(["", ".", "-"]))
def test_glued_left_edge_never_matches(value, glue, joiner):
    assume(is_word(value[0]))
    text = glue + joiner + value
    assume(text.find(value) == len(glue + joiner))  # the only occurrence is the glued one
    assert not contains_token(text, value)


@given(values, st.sampled_from(GLUE))
def test_punctuation_edges_are_not_checked(value, glue):
    assume(not is_word(value[-1]) and not is_structured_name(value))
    assert contains_token(value + glue, value)


@given(values, st.lists(st.sampled_from([" ", "  ", "\t", "\n", "\u00a0", " \n "]), min_size=10,
                        max_size=10))
def test_whitespace_runs_are_equivalent(value, spaces):
    parts = value.split()
    respaced = parts[0] + "".join(s + p for s, p in zip(spaces, parts[1:]))
    assert contains_token(f"is {respaced}!", value)


@given(values)
def test_every_value_matches_itself(value):
    assert contains_token(value, value)


def _reference_contains(text: str, value: str) -> bool:
    """The module's rules written as one plain regex scan (the shape the fast paths replace)."""
    text, parts = normalize(text), normalize(value).split()
    if not parts:
        return False

    def word(ch: str) -> bool:
        return ch.isalnum() or ch == "_" or unicodedata.category(ch).startswith("M")

    def glued(i: int, step: int) -> bool:  # i: the neighbour's index, step: away from the value
        if not 0 <= i < len(text):
            return False
        if word(text[i]):
            return True
        far = i + step
        return text[i] in ".-" and 0 <= far < len(text) and word(text[far])

    pattern = re.compile(r"\s+".join(map(re.escape, parts)))
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        if not (word(parts[0][0]) and glued(m.start() - 1, -1)) and not (
                word(parts[-1][-1]) and glued(m.end(), 1)):
            return True
        pos = m.start() + 1
    return False


_scan_alphabet = st.sampled_from(list("ab 0123456789.-_/:@\t\n") + [
    "\u200b", "\u200d", "\u00ad", "\ufeff", "e\u0301", "é", "ё", "е\u0308", "\u0301", "６",
    "\u00a0", "62114", "621140", "19 shards", "kid-7F3A9C21", "Отдел расчётов-4", ".."])
_scan_values = st.sampled_from(["62114", "19 shards", "Отдел расчётов-4", "kid-7F3A9C21", "é",
                                "ё", "a.b", "-a-", " 62114 ", "x  y", "\u200d", "1"])


@given(st.lists(_scan_alphabet, max_size=25).map("".join), _scan_values)
@example("62114.5 62114", "62114")
@example("1621140 62114", "62114")
def test_fast_paths_agree_with_a_plain_regex_scan(text, value):
    expected = _reference_contains(text, value)
    assert contains_token(text, value) == expected
    assert contains_token_normalized(normalize(text), value) == expected


# --- presence -------------------------------------------------------------------------------

def test_presence_of_a_carrier():
    carrier = (
        "## Facts and values\n- ledger port 62114; admin console 470310 (typo)\n"
        "- lock: /opt/kestrel/state/install.lock.\n- department «Отдел расчётов-4»\n"
    )
    got = presence(carrier, KESTREL)
    assert list(got) == LABELS
    assert got["ledger service port"] and got["install lock path"] and got["owning department"]
    assert not got["admin console port"]
    assert sum(got.values()) == 3
    assert present_in(carrier, "62114") and not present_in(carrier, "47031")


# --- parse_answer ---------------------------------------------------------------------------

def test_parse_tolerates_markdown_bullets_case_and_numbering():
    answer = """Here is what the summary says:
1. **Ledger service port:** 62114
- **install lock path**: `/opt/kestrel/state/install.lock`
* Backup Cutoff - 2026-07-14 01:26 UTC
  2) admin console port = 47031
### ledger shard count
19 shards
> on-call handle: "@marta.v-oncall"
"""
    got = parse_answer(answer, LABELS)
    assert got["ledger service port"] == "62114"
    assert got["install lock path"] == "/opt/kestrel/state/install.lock"
    assert got["backup cutoff"] == "2026-07-14 01:26 UTC"
    assert got["admin console port"] == "47031"
    assert got["ledger shard count"] == "19 shards"
    assert got["on-call handle"] == "@marta.v-oncall"
    assert got["tenant UUID"] is None


def test_parse_binds_near_labels_with_rapidfuzz_only_above_cutoff():
    got = parse_answer("ledger servce port: 62114\nshard: 19 shards\n", LABELS)
    assert got["ledger service port"] == "62114"
    assert got["ledger shard count"] is None


def test_parse_label_with_qualifier_and_label_then_value_without_separator():
    got = parse_answer("ledger service port (TCP): 62114\nrelease tag v4.18.2-rc3\n", LABELS)
    assert got["ledger service port"] == "62114"
    assert got["release tag"] == "v4.18.2-rc3"


def test_parse_every_answer_counts_but_an_echoed_question_does_not():
    # Issue 18: a label answered twice is one label with two values (it was "first wins").
    answer = "- ledger service port\n- admin console port\n\nledger service port: 62114\n" \
             "admin console port: 47031\nledger service port: 99999\n"
    got = parse_answer(answer, ["ledger service port", "admin console port"])
    assert got == {"ledger service port": "62114 ; 99999", "admin console port": "47031"}
    grades = {g.label: g for g in grade_answer(answer, KESTREL)}
    assert grades["ledger service port"].hedged and not grades["ledger service port"].correct
    assert grades["admin console port"].correct


def test_parse_table_and_json_answers():
    table = "| label | value |\n|---|---|\n| DNS zone | zone-b.kestrel-internal.net |\n"
    assert parse_answer(table, LABELS)["DNS zone"] == "zone-b.kestrel-internal.net"
    js = '```json\n{"DNS zone": "zone-b.kestrel-internal.net", "release tag": null}\n```'
    got = parse_answer(js, LABELS)
    assert got["DNS zone"] == "zone-b.kestrel-internal.net"
    assert got["release tag"] == "null" and is_abstention(got["release tag"])


def test_parse_prose_is_not_bound():
    got = parse_answer("I think the service probably uses 62114.", LABELS)
    assert got["ledger service port"] is None


def test_parse_empty_value_is_empty_string():
    got = parse_answer("ledger service port:\nadmin console port: 47031", LABELS)
    assert got["ledger service port"] == ""


# --- grade_answer ---------------------------------------------------------------------------

def test_grade_full_answer():
    answer = "\n".join(f"- {f.label}: {f.value}" for f in KESTREL)
    grades = grade_answer(answer, KESTREL)
    assert all(g.correct for g in grades)
    assert recall(grades) == 1.0


def test_value_under_the_wrong_label_is_not_correct():
    answer = "ledger service port: 47031\nadmin console port: 62114\n"
    grades = {g.label: g for g in grade_answer(answer, KESTREL)}
    assert not grades["ledger service port"].correct
    assert not grades["admin console port"].correct


def test_unit_drop_is_wrong_and_flagged():
    answer = "ledger shard count: 19\nbackup cutoff: 2026-07-14 01:26\ncertificate expiry: " \
             "2026-08-02 06:10 UTC\n"
    grades = {g.label: g for g in grade_answer(answer, KESTREL)}
    shards = grades["ledger shard count"]
    assert not shards.correct and shards.unit_dropped and not shards.abstained
    assert grades["backup cutoff"].unit_dropped and not grades["backup cutoff"].correct
    assert grades["certificate expiry"].correct and not grades["certificate expiry"].unit_dropped


def test_abstentions():
    answer = "ledger service port: unknown\nadmin console port: N/A\nrelease tag: **unknown**\n" \
             "DNS zone: not in summary\nsigning key id:\n"
    grades = {g.label: g for g in grade_answer(answer, KESTREL)}
    for label in ("ledger service port", "admin console port", "release tag", "DNS zone"):
        assert grades[label].abstained and not grades[label].correct, label
    # Issue 21: a label named with no value, or never named, gave nothing: not an abstention.
    for label in ("signing key id", "tenant UUID"):
        assert grades[label].nothing and not grades[label].abstained, label
    assert grades["tenant UUID"].found is None


def test_grade_is_frozen_and_recall_of_nothing_is_nan():
    grade = grade_answer("", [Fact("a", "1")])[0]
    with pytest.raises(AttributeError):
        grade.correct = True  # type: ignore[misc]
    assert recall([]) != recall([])  # NaN


@pytest.mark.parametrize(
    ("expected", "answer", "dropped"),
    [
        ("19 shards", "19", True),
        ("19 shards", "19 shards", False),
        ("19 shards", "19 Shards", False),  # the unit is there, the case is off: not a drop
        ("19 shards", "190", False),
        ("19 shards", "20", False),
        ("2026-07-14 01:26 UTC", "2026-07-14 01:26", True),
        ("2026-07-14 01:26 UTC", "2026-07-14 01:26Z", False),
        ("62114", "62114", False),
        ("Отдел расчётов-4", "Отдел", False),
        ("19 shards", None, False),
    ],
)
def test_unit_dropped(expected, answer, dropped):
    assert unit_dropped(expected, answer) is dropped


def test_labels_named_inside_sentences_and_several_per_line_bind():
    facts = [Fact("install lock path", "/opt/kestrel/state/install.lock"),
             Fact("release tag", "v4.18.2-rc3"), Fact("signing key id", "kid-7F3A9C21"),
             Fact("certificate expiry", "2026-08-02 06:10 UTC"), Fact("DNS zone", "zone-b.x.net"),
             Fact("ledger service port", "62114")]
    answer = ("* The install lock path is /opt/kestrel/state/install.lock.\n"
              "release tag: v4.18.2-rc3, signing key id: kid-7F3A9C21\n"
              "The certificate expiry was not recorded.\n"
              "I no longer have the ledger service port, sorry; the DNS zone is zone-b.x.net.\n")
    grades = {g.label: g for g in grade_answer(answer, facts)}
    assert grades["install lock path"].correct
    assert grades["signing key id"].correct and grades["signing key id"].found == "kid-7F3A9C21"
    assert grades["release tag"].correct
    assert grades["certificate expiry"].abstained
    assert grades["DNS zone"].correct
    # Naming a label and saying it is gone is an abstention, not a guess.
    assert grades["ledger service port"].abstained and not grades["ledger service port"].correct


def test_a_value_under_another_label_in_a_sentence_is_not_credited():
    facts = [Fact("ledger service port", "62114"), Fact("admin console port", "47031")]
    grades = {g.label: g for g in grade_answer(
        "The admin console port is 62114 and the ledger service port is 47031.", facts)}
    assert not grades["ledger service port"].correct and not grades["admin console port"].correct


# -- marker phrases as one alternation match where the per-entry alternation did --------------

def _old_alternation(entries):
    from foldscope.core.grading import _NEVER, _phrase

    return "|".join(_phrase(e) for e in entries) or _NEVER


_MARKER_LISTS = ("abstention", "hedge", "negation_before", "negation_after")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_MARKER_LISTS), st.data())
def test_marker_alternation_matches_exactly_where_each_phrase_did(which, data):
    import re as _re

    from foldscope.core.grading import _phrases, default_markers

    entries = getattr(default_markers(), which)
    pieces = data.draw(st.lists(st.one_of(
        st.sampled_from(entries),
        st.sampled_from(entries).map(str.upper),
        st.sampled_from(entries).map(lambda e: e.replace(" ", "  \n").replace("'", "’")),
        st.sampled_from(["62114", "x", "not", "I", "-", "'", "(", "maybe", "known", "é", "İ"]),
        st.text(max_size=4)), max_size=8))
    glue = data.draw(st.lists(st.sampled_from(["", " ", ", ", "\n", "-", "_", "a"]),
                              min_size=len(pieces), max_size=len(pieces)))
    text = "".join(p + g for p, g in zip(pieces, glue))
    old = _re.compile(_old_alternation(entries), _re.IGNORECASE)
    new = _re.compile(_phrases(entries), _re.IGNORECASE)
    assert [m.span() for m in new.finditer(text)] == [m.span() for m in old.finditer(text)]
    assert (new.fullmatch(text) is None) == (old.fullmatch(text) is None)


def _at_start_reference(index, body):
    """A label at a line's start as the grader first read it: the skeleton built character by
    character, each skeleton character's place kept."""
    from foldscope.core.grading import _MARKUP, _is_word, normalize

    skeleton, where = [], []
    for i, ch in enumerate(body):
        if ch in _MARKUP:
            continue
        if ch.isspace():
            if not skeleton or skeleton[-1] == " ":
                continue
            ch = " "
        skeleton.append(ch)
        where.append(i)
    flat = normalize("".join(skeleton))
    folded = flat.casefold()
    if len(folded) != len(flat) or len(flat) != len(skeleton):
        return None
    for norm in index.norms:
        if folded.startswith(norm) and (len(folded) == len(norm)
                                        or not _is_word(folded[len(norm)])):
            if len(folded) > len(norm) and folded[len(norm)] in "-." \
                    and len(folded) > len(norm) + 1 and _is_word(folded[len(norm) + 1]):
                continue
            return index.by_norm[norm], body[where[len(norm) - 1] + 1:]
    return None


@settings(max_examples=500)
@given(st.sampled_from(["", "**", " ", "* ", "`", "\u2003", "\t_", "«"]),
       st.sampled_from(["ledger service port", "backup  cutoff", "on-call handle", "X",
                        "Ledger Service Port", "ledger\tservice\u2003port", "on-call-handle",
                        "ledger ser*vice port", "backup cutoff.2", "x"]),
       st.lists(st.sampled_from(list("ab .-:*_`\"'«»“”‘’„") + [" ", "\t", "\n", "\u2003",
                                                            "\x1c", "ß", "e\u0301", "İ", "1"]),
                max_size=20).map("".join))
def test_a_label_at_the_start_is_read_as_the_grader_always_read_it(lead, label, tail):
    from foldscope.core.grading import _label_index, default_markers

    index = _label_index(("ledger service port", "backup cutoff", "on-call handle", "x"),
                         default_markers().synonyms)
    for body in (lead + label + tail, tail + label, lead + tail):
        assert index._at_start(body) == _at_start_reference(index, body)


def test_the_regexes_that_stand_for_str_methods_agree_with_them():
    import sys

    from foldscope.core.grading import _ALNUM_RE, _SPACE_RUN_RE

    for c in range(sys.maxunicode + 1):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        assert (_ALNUM_RE.search(ch) is not None) == ch.isalnum(), hex(c)
        assert (_SPACE_RUN_RE.fullmatch(ch) is not None) == ch.isspace(), hex(c)
        # the separator's \\d and \\s, read by str methods in _separator
        assert (re.fullmatch(r"\d", ch) is not None) == ch.isdecimal(), hex(c)
        assert (re.fullmatch(r"\s", ch) is not None) == ch.isspace(), hex(c)


_SEPARATOR_TEXT = st.text(st.sampled_from(list(":：=→\t?-–—|/> \n\u00a0\u2028\x1c1٣a.")),
                          max_size=24)


@settings(max_examples=3000)
@given(_SEPARATOR_TEXT, st.text(max_size=6))
@example("ab 12:30 - x", "")
@example("url http://x: y", "")
@example("a \t b", "")
@example("x? y", "")
@example("a->b", "")
def test_the_separator_found_by_its_characters_is_the_regex_search(text, tail):
    from foldscope.core.grading import _SEPARATOR_RE, _separator

    for t in (text, text + tail, tail + text):
        want, got = _SEPARATOR_RE.search(t), _separator(t)
        assert (want is None) == (got is None)
        if want is not None and got is not None:
            assert (want.span(), want.group()) == (got.span(), got.group())


_ANSWER_LINES = ["- ledger service port: 62114", "backup cutoff:", "  2026-07-14 01:26 UTC",
                 "The on-call handle is @marta.v-oncall.", "| label | value |", "|---|---|",
                 "| ledger service port | 62115 |", "I don't know the backup cutoff.", "",
                 "1. 62114", "- on-call handle: not recorded", "  - or @marta", "value: 47031",
                 "- label: backup cutoff", "Ledger port 62114, backup cutoff: unknown"]


@settings(max_examples=150)
@given(st.lists(st.lists(st.sampled_from(_ANSWER_LINES), max_size=8), min_size=1, max_size=4))
def test_line_readings_remembered_across_answers_bind_as_read_afresh(answers):
    from foldscope.core.grading import _label_index, bind_answer, default_markers

    labels = ["ledger service port", "backup cutoff", "on-call handle"]
    warm = [bind_answer("\n".join(lines), labels) for lines in answers]
    index = _label_index(tuple(labels), default_markers().synonyms)
    for lines, got in zip(answers, warm, strict=True):
        index._line_cache.clear()
        index._start_cache.clear()
        assert bind_answer("\n".join(lines), labels) == got


@settings(max_examples=200)
@given(st.sampled_from(["62114", "62115", "62114 or 62115", "~~62115~~ 62114", "not 62114",
                        "I don't know", "maybe 62114?", "unknown", "", "47031, 62114",
                        "port 62114 (tcp)", "19 shards", "19"]),
       st.sampled_from(["62114", "19 shards"]), st.sampled_from([None, "port", "count"]),
       st.booleans())
def test_a_remembered_judgement_is_the_one_computed(found, value, tag, own_markers):
    from foldscope.core.grading import _judge_value, default_markers, judge_value, markers_from_data

    markers = markers_from_data({"hedge": {"anywhere": ["perhaps"]}}, source="t") \
        if own_markers else None
    rivals = ["62114", "47031", "19 shards", "62115"]
    first = judge_value(found, value, tag=tag, rivals=rivals, markers=markers)
    again = judge_value(found, value, tag=tag, rivals=iter(rivals), markers=markers)
    assert first == again == _judge_value(found, value, tag, tuple(rivals), markers)
    assert judge_value(found, value, tag=tag, rivals=rivals, markers=default_markers()) == \
        _judge_value(found, value, tag, tuple(rivals), default_markers())
