"""How simulated models read text: fact extraction and fuzzy label lookup."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.engine.sim.extract import (
    KV_RE,
    NOT_LABELS,
    THE_IS_RE,
    answer_from,
    clean_value,
    digest_segment,
    extract_facts,
    find_answer,
    is_log_line,
)

SEGMENT = """[assistant] Checking the service.
[tool result: kubectl]
2026-07-12T10:14:03.221Z INFO listening on port: 9999
ledger service port: 62114
backup cutoff: 2026-07-14 01:26 UTC.
error: connection refused
[operator] For the record, the owning department is Отдел расчётов-4.
[assistant] Noted: the ledger shard count is 19 shards.
[assistant] I checked the logs and they look fine.
"""


def test_extract_from_segment_skips_logs_and_binds_labels():
    facts = extract_facts(SEGMENT)
    assert facts == [("ledger service port", "62114"),
                     ("backup cutoff", "2026-07-14 01:26 UTC"),
                     ("owning department", "Отдел расчётов-4"),
                     ("ledger shard count", "19 shards")]


def test_extract_from_headed_summary_and_json_envelope():
    summary = ("## Progress\n- Segment 1 of 6 ran 3 tools\nPlan: finish the replay\n"
               "## Facts and values\n- ledger service port: 62114\n- release tag: v4.18.2-rc3\n"
               "## Open items\n- none\n- DNS zone: zone-b.kestrel-internal.net")
    # Prose in the other sections is not read as facts, but a bulleted fact line that
    # overflowed into them (a full facts field spills into the others) is.
    assert extract_facts(summary) == [("ledger service port", "62114"),
                                      ("release tag", "v4.18.2-rc3"),
                                      ("DNS zone", "zone-b.kestrel-internal.net")]
    envelope = '{"summary": "- ledger service port: 62114", "paths": ["/a/b"]}'
    assert extract_facts(envelope) == [("ledger service port", "62114")]
    prose = "The agent ran 3 tools.\nNoted: the release tag is v4.18.2-rc3."
    assert extract_facts(prose) == [("release tag", "v4.18.2-rc3")]


def test_latest_value_wins():
    assert extract_facts("port: 1\nport: 2") == [("port", "2")]


def test_find_answer_fuzzy_labels():
    carrier = "- Ledger service port: 62114\n- signing key ID: kid-7F3A9C21"
    assert find_answer(carrier, "ledger service port") == "62114"
    assert find_answer(carrier, "signing key id") == "kid-7F3A9C21"
    assert find_answer(carrier, "service port ledger") == "62114"
    assert find_answer(carrier, "admin console port") is None
    assert find_answer("", "x") is None


def test_digest_counts_turns_tools_and_failures():
    d = digest_segment(SEGMENT)
    assert d.tools == ["kubectl"] and d.assistant_turns == 3 and d.operator_turns == 1
    assert d.log_lines == 1 and d.failures == ["error: connection refused"]


def test_log_lines():
    assert is_log_line("2026-07-12T10:14:03.221Z INFO x")
    assert is_log_line("2026-07-12 10:14:03 WARN x")
    assert not is_log_line("backup cutoff: 2026-07-14 01:26 UTC")


labels = st.text(alphabet=st.characters(whitelist_categories=("Ll",)), min_size=2, max_size=10)
values = st.from_regex(r"[A-Za-z0-9/@.\-]{1,20}", fullmatch=True).filter(
    lambda v: not v.endswith(".") and v[0] not in "\"'`")


@given(st.lists(st.tuples(labels, values), min_size=1, max_size=8, unique_by=lambda t: t[0]))
def test_round_trip_fact_lines(pairs):
    pairs = [(lab, val) for lab, val in pairs if lab not in NOT_LABELS]
    text = "\n".join(f"- {lab}: {val}" for lab, val in pairs)
    assert extract_facts(text) == pairs
    for lab, val in pairs:
        assert find_answer(text, lab) == val


def test_digest_is_memoised_but_callers_get_their_own_copy():
    first = digest_segment(SEGMENT)
    first.tools.append("mutated")
    first.facts.clear()
    again = digest_segment(SEGMENT)
    assert again.tools == ["kubectl"] and len(again.facts) == 4
    assert again is not first


def test_digest_memo_tells_apart_segments_with_the_same_length_and_edges():
    edge = "[assistant] " + "x" * 70 + "\n"
    one = edge + "[tool result: bash]\nport: 1\n" + edge
    two = edge + "[tool result: psql]\nport: 2\n" + edge
    for _ in range(2):
        assert digest_segment(one).tools == ["bash"] and digest_segment(one).facts == [("port", "1")]
        assert digest_segment(two).tools == ["psql"] and digest_segment(two).facts == [("port", "2")]


def test_answer_from_extracted_facts_matches_find_answer():
    carrier = "- Ledger service port: 62114\n- signing key ID: kid-7F3A9C21\nport: 1"
    facts = extract_facts(carrier)
    for label in ("ledger service port", "signing key id", "service port ledger", "port",
                  "admin console port"):
        assert answer_from(facts, label) == find_answer(carrier, label)
    assert answer_from([], "x") is None


# The lazy patterns the fact readers were written with; the shipped ones are greedy for speed and
# must read every line the same way (callers strip what greediness adds: trailing whitespace).
_LAZY_KV_RE = re.compile(
    r"^\s*(?:[-*•]\s+)?(?P<label>[^\W\d_][\w .'/()@#+\-]{0,59}?)\s*:\s+(?P<value>\S.*?)\s*$")
_LAZY_THE_IS_RE = re.compile(r"\bthe (?P<label>[^,;:.!?\[\]]{1,60}?) is (?P<value>\S.*?)\s*$",
                             re.I)
_line_parts = st.sampled_from(["- ", "* ", "• ", " ", "  ", "\t", "\u00a0", ":", ": ", " :", "::",
                               "the ", " is ", "The ", " IS ", "#", "[", "]", "\n", " \n", "é",
                               "ledger port", "a" * 58, "b" * 61, "62114", ".", ",", "'", "@",
                               "/opt/x", "(y)", "_", "1", "Noted", "error"])


def _read(pattern: re.Pattern[str], text: str, search: bool) -> tuple[str, str] | None:
    m = pattern.search(text) if search else pattern.match(text)
    return None if m is None else (m.group("label").strip(), clean_value(m.group("value")))


@given(st.lists(_line_parts, max_size=10).map("".join))
def test_greedy_fact_patterns_read_lines_like_the_lazy_ones(line):
    assert _read(KV_RE, line, False) == _read(_LAZY_KV_RE, line, False)
    assert _read(THE_IS_RE, line, True) == _read(_LAZY_THE_IS_RE, line, True)


_SUMMARY_LINES = st.sampled_from(["- ledger service port: 62114", "## Key facts", "the cache origin is "
                                  "cdn.example.net", "[assistant] the port is 8080", "Noted: the tag is v1",
                                  "2026-07-14 01:26 INFO ok", "[tool result: bash] x: 1", "", "- port: 1"])


@settings(max_examples=200)
@given(st.lists(_SUMMARY_LINES, max_size=8).map("\n".join))
def test_remembered_fact_pairs_are_the_pairs_read_afresh(text):
    from foldscope.engine.sim.extract import _extract_facts, extract_facts

    first = extract_facts(text)
    assert first == _extract_facts(text)
    first.append(("changed", "by the caller"))  # a caller's list is its own
    assert extract_facts(text) == _extract_facts(text)
    assert extract_facts("".join(text)) == _extract_facts(text)  # another object, equal text
