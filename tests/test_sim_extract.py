"""How simulated models read text: fact extraction and fuzzy label lookup."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from foldscope.engine.sim.extract import (
    NOT_LABELS,
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
    summary = ("## Progress\n- Segment 1 of 6: ran 3 tools\n## Facts and values\n"
               "- ledger service port: 62114\n- release tag: v4.18.2-rc3\n## Open items\n- none")
    assert extract_facts(summary) == [("ledger service port", "62114"),
                                      ("release tag", "v4.18.2-rc3")]
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
