"""Searching line by line (with remembered lines) finds exactly what searching the whole text finds.

``find_identifiers`` with a tuple of rules takes the line-by-line path for rules whose matches
depend on their line alone; with a list it searches every rule over the whole text (the plain
definition). The two must agree on every text, and the audit's JSON must not change.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.audit import SessionAuditor, audit_json
from foldscope.core.identifiers import (
    KindRule,
    _rule_is_line_local,
    default_rules,
    find_identifiers,
    identifier_spans,
    identifier_spans_many,
    merge_rules,
)
from foldscope.engine.audit_readers import stream_session
from foldscope.engine.audit_sample import write_sample_session

FRAGMENTS = [
    "port 8080", "localhost:5432", "http://api.example.com:8443/v1/x", "/srv/app/main.py",
    "src/a/b.ts", "OPS-1234", "#42", "deadbeef12", "2026-07-14T10:11:12.123Z", "10:11",
    "v1.2.3-rc1", "10.0.0.1", "API_BASE_URL", "$HOME", "${DB_URL}", "@alice", "@Injectable",
    "@dataclass", "a@b.io", "sha256:" + "ab" * 16, "feat/login-page", "git checkout -b fix-it",
    "image: redis:7", "docker exec -it web", "--name db-1", "kid-7f3a", "\x1b[31m", "\x1b[0m",
    "node_modules/x/y.js", "#1e1e2e", "/clear", "json.load", "mod.rs:37", "Co-Authored-By: X <x@y.z>",
    "toolu_01ABCDEFGHij", "550e8400-e29b-41d4-a716-446655440000", "12", "3.14", " ", "  ", "\t",
    "\n", "\n", "\n\n", "(", ")", ",", ":", "=", "'", '"', "`", "-", ".", "/", "x" * 1200,
]


def _same(text: str, rules: tuple[KindRule, ...]) -> None:
    assert find_identifiers(text, rules) == find_identifiers(text, list(rules))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_line_by_line_finds_what_the_whole_text_search_finds(parts: list[str]) -> None:
    text = "".join(parts)
    rules = default_rules()
    _same(text, rules)
    _same(text, rules)  # again: now its lines are remembered


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1:/.-_@#\n $x")), max_size=300))
def test_remembered_lines_agree_on_arbitrary_text(text: str) -> None:
    rules = default_rules()
    _same(text, rules)
    _same(text, rules)


def _rule(pattern: str, anchor: str) -> KindRule:
    return KindRule("odd", re.compile(pattern), anchor=re.compile(anchor))


def test_rules_that_see_past_their_line_are_searched_over_the_whole_text() -> None:
    for pattern, anchor in [("x", r"\s"), (r"(?<!\s)x", "x"), ("^x", "x"), ("x", "x$"),
                            ("x", "[^a]x"), (r"(?<=[^a])x", "x"), ("x", "(?s)x."), (r"(x)\1", "x")]:
        assert not _rule_is_line_local(_rule(pattern, anchor)), (pattern, anchor)
    assert _rule_is_line_local(_rule(r"(?m)^x(?=\s)", r"(?m)x$"))
    rules = merge_rules(default_rules(), (_rule(r"(?<![^\n])x\d", r"\nx"), _rule("^y", "y")))
    for text in ["x1\nx2", "ax1\nx2\n", "y\ny", "q\nx3 y", "x1"]:
        _same(text, rules)


def test_the_audit_of_a_generated_session_matches_the_whole_text_search(tmp_path: Path,
                                                                     monkeypatch) -> None:
    path = tmp_path / "s.jsonl"
    write_sample_session(path, 1.0, compactions=3)

    def audit() -> str:
        stream = stream_session(path)
        auditor = SessionAuditor()
        auditor.feed_all(stream.items)
        return json.dumps(audit_json(stream.session(), auditor.audits()), sort_keys=True)

    fast = audit()
    import foldscope.core.identifiers as identifiers

    whole = identifiers.identifier_spans_many

    def plain(texts, rules=None):  # type: ignore[no-untyped-def]
        return whole(texts, list(default_rules() if rules is None else rules))

    monkeypatch.setattr("foldscope.core.audit.identifier_spans_many", plain)
    monkeypatch.setattr("foldscope.core.audit.identifier_spans",
                        lambda text, rules=None: plain([text], rules)[0])
    assert audit() == fast


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS + ["@marta.v", "-oncall", "port", " 80", "@a", "b."]),
                         max_size=12), max_size=8))
def test_texts_searched_together_get_what_each_gets_alone(batch: list[list[str]]) -> None:
    # Texts whose last lines run on into the next text's first line when joined: each is still
    # searched as ending where it ends (a handle is not extended by the next text's dot).
    texts = ["".join(parts) for parts in batch]
    rules = default_rules()
    expected = [identifier_spans(text, list(rules)) for text in texts]
    assert identifier_spans_many(texts, rules) == expected
    assert identifier_spans_many(texts, rules) == expected  # again: now from remembered lines


def test_a_last_line_is_searched_as_its_texts_end_among_others() -> None:
    rules = default_rules()
    texts = ["Paging @marta.v", "-oncall.", "x\nport", " 8080 now", "port 80"]
    assert identifier_spans_many(texts, rules) == [identifier_spans(t, list(rules)) for t in texts]
    assert identifier_spans_many(["Paging @marta.v", "-oncall."], rules)[0] == [(7, 15, "handle")]


def test_a_full_line_cache_is_forgotten_and_results_stay_the_same(monkeypatch) -> None:
    import foldscope.core.identifiers as identifiers

    monkeypatch.setattr(identifiers, "LINE_CACHE_CHARS", 50)
    rules = default_rules()
    texts = [f"port {8000 + i}\nsee /srv/app/f{i}.py and OPS-{i + 10}\n" * 3 for i in range(30)]
    for text in texts + texts:
        _same(text, rules)
    assert identifiers._line_cache_size <= 50
    plan = identifiers._plan(rules)
    for generation in (plan.lines, plan.old_lines):
        assert sum(len(line) + 1 for line in generation) <= 50
    for generation in (plan.tails, plan.old_tails):
        assert sum(len(line) for line in generation) <= 50


def test_lines_in_use_survive_the_cache_filling_up(monkeypatch) -> None:
    import foldscope.core.identifiers as identifiers

    monkeypatch.setattr(identifiers, "LINE_CACHE_CHARS", 200)
    rules = default_rules()
    hot = "port 8080 on OPS-12\n"
    for i in range(40):  # one new line per text, the hot line in each
        text = hot + f"see /srv/app/f{i}.py\n"
        assert identifier_spans(text, rules) == identifier_spans(text, list(rules))
    plan = identifiers._plan(rules)
    assert hot[:-1] in plan.lines or hot[:-1] in plan.old_lines


# --- the literal pre-screen: an anchor it rules out has no match -------------------------------

from foldscope.core.identifiers import _IGNORECASE_EXTRA, _may_match, _screen  # noqa: E402

ANCHOR_TEXT = st.text(alphabet=st.sampled_from(list("ab1:/.-_@#\n $xPORTportKk\u212a\u017fIi\u0130\u0131"
                                                    "toolu_msgreply@co-authoredEXPOSElisten0f9F")),
                      max_size=120)


@settings(max_examples=300, deadline=None)
@given(ANCHOR_TEXT, st.lists(st.sampled_from(FRAGMENTS), max_size=6))
def test_an_anchor_the_screen_rules_out_has_no_match(noise: str, parts: list[str]) -> None:
    text = noise + "".join(parts)
    for rule in default_rules():
        if rule.anchor is not None and not _may_match(rule.anchor, text):
            assert rule.anchor.search(text) is None, (rule.name, text)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aAbB-_:kK\u212a\u017fsSiI\u0130\u0131xX")), max_size=12))
def test_the_screen_of_odd_anchors_is_exact(text: str) -> None:
    for anchor in [r"(?i:kiss)-x", r"(?i)s[ab]_", r"(?:ab|[kK]x)(?i:i)", r"a{2,}b", r"x(?=a)a",
                   r"(?:a|b*)x", r"[a-c]{3}-", r"(?i:ax)|b"]:
        compiled = re.compile(anchor)
        if not _may_match(compiled, text):
            assert compiled.search(text) is None, (anchor, text)
    assert _screen(re.compile(r"\d+")) == ()


def test_case_folds_beyond_the_two_cases_are_known() -> None:
    import string

    for letter in string.ascii_lowercase:
        extra = {chr(c) for c in range(0x80, 0x3000)
                 if re.fullmatch("(?i)" + letter, chr(c))}
        extra |= {c for c in "\u212a\u017f" if re.fullmatch("(?i)" + letter, c)}
        assert extra == set(_IGNORECASE_EXTRA.get(letter, "")), letter


# --- anchors written for speed find what their plain forms find, where they find it -------------

PLAIN_ANCHORS = {
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-",
    "hash": r"[0-9a-fA-F]{7}",
    "key_id": r"[-_:][A-Za-z]*[0-9]|AKIA",
    "ticket": r"#[1-9]|[A-Z0-9]-\d",
    "timestamp": r"\d{4}-\d\d-\d\d",
    "env_var": r"[A-Z0-9]_[A-Z0-9]|\$[A-Z_{]",
    "port": r"(?i:port)(?<![A-Za-z0-9](?i:port))|Port|-[pP]|:\d|EXPOSE|(?i:listen)",
}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aA1f9-_:#$ {PpOoRrTtLlIiSsEeNnXxKk\u0130\u017f\u212a\n"
                                                "2026-07-14 AKIA port EXPOSE listen ")), max_size=80))
def test_the_shipped_anchors_match_their_plain_forms_span_for_span(text: str) -> None:
    shipped = {rule.name: rule.anchor for rule in default_rules()}
    for name, plain in PLAIN_ANCHORS.items():
        anchor = shipped[name]
        assert anchor is not None
        assert ([m.span() for m in anchor.finditer(text)]
                == [m.span() for m in re.finditer(plain, text)]), (name, text)


# --- one scan for several strings: the screens and ``requires`` -----------------------------------

from foldscope.core.identifiers import holds_one_of  # noqa: E402

SCREEN_ALPHABET = st.sampled_from(list("ab:/.-_@#\\|()[]*+?^$ \nKk\u212aIi\u0130\u0131é"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=SCREEN_ALPHABET, min_size=1, max_size=4), min_size=1, max_size=6),
       st.text(alphabet=SCREEN_ALPHABET, max_size=60))
def test_one_search_for_several_strings_finds_one_exactly_when_the_text_holds_one(
        strings: list[str], text: str) -> None:
    assert (holds_one_of(strings)(text) is not None) == any(s in text for s in strings)


def test_every_shipped_screen_and_requires_search_agrees_with_looking_for_each_string() -> None:
    texts = [f for f in FRAGMENTS] + ["".join(FRAGMENTS), "", "\u212a\u0130"]
    for rule in default_rules():
        sets = ([frozenset(rule.requires)] if rule.requires else []) + (
            list(_screen(rule.anchor)) if rule.anchor is not None else [])
        for strings in sets:
            search = holds_one_of(strings)
            for text in texts:
                assert (search(text) is not None) == any(s in text for s in strings), (rule.name, text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12),
       st.sets(st.sampled_from(sorted(r.name for r in default_rules())), max_size=3))
def test_asking_for_some_kinds_gets_the_winners_of_those_kinds(parts: list[str], kinds: set[str]) -> None:
    # A kind with no candidate in the text is answered without the whole search: the same answer.
    text = "".join(parts)
    rules = default_rules()
    whole = [i for i in find_identifiers(text, list(rules)) if i.kind in kinds]
    assert find_identifiers(text, rules, kinds=kinds) == whole
    assert find_identifiers(text, list(rules), kinds=kinds) == whole


_IMAGE_LINES = (
    "push it to 123456789012.dkr.ecr.us-east-1.amazonaws.com/orders-api then deploy\n"
    "the base is python:bookworm, the cache redis:7 and the db postgres:16-alpine\n"
    "docker pull ghcr.io/ana/queue-worker\n"
    "FROM node:20-alpine AS build\n"
    "image: registry.ledgerly.internal/ops/gateway:2.1\n"
    "europe-docker.pkg.dev/ledgerly/apps/api and ledgerly.azurecr.io/api:3\n")


def test_every_match_of_a_shipped_rule_is_on_a_line_its_anchor_hits() -> None:
    # The kinds file's contract: a rule's anchor is found on the line of every match of its
    # pattern, so searching only the anchored lines loses nothing. Checked over every test
    # fixture's text and lines written for the image rule's registries and base images (an
    # untagged ECR image or a word-tagged base image had no anchor hit and went unsearched).
    from foldscope.core.identifiers import default_rules

    texts = [_IMAGE_LINES]
    for path in sorted((Path(__file__).parent / "fixtures").rglob("*")):
        if path.is_file():
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    checked = 0
    for rule in default_rules():
        if rule.anchor is None:
            continue
        for text in texts:
            for m in rule.pattern.finditer(text):
                if m.end() == m.start():
                    continue
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                line = text[start:len(text) if end < 0 else end]
                assert rule.anchor.search(line), (rule.name, m.group(0)[:80])
                checked += 1
    assert checked > 100
