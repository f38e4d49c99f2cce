"""Tests for the pure session-audit core (foldscope.core.audit)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.audit import (
    AuditFact,
    AuditOptions,
    Compaction,
    Entry,
    Session,
    audit_json,
    audit_session,
    facts_from_data,
    redact,
)
from foldscope.core.errors import ConfigError


def _session(*items: Entry | Compaction) -> Session:
    return Session(tuple(items), "jsonl")


PORT_DROP = _session(
    Entry(1, "user", "Move the ledger. Ticket OPS-4821, on-call @marta.v-oncall."),
    Entry(2, "tool_call", "Bash\ncommand: cat /opt/kestrel/ledger.conf"),
    Entry(3, "tool_output", "listen port = 62114\nsigning_key = kid-7F3A9C21\nrelease = v4.18.2-rc3"),
    Compaction(4, "Ticket OPS-4821. Config at /opt/kestrel/ledger.conf, key kid-7F3A9C2l, "
                  "release v4.18.2-rc3.", 40000, 2000),
    Entry(5, "tool_call", "Bash\ncommand: ledgerctl start --port 8080"),
    Entry(6, "tool_output", "health check failed on port 8080"),
    Entry(7, "user", "The on-call is still @marta.v-oncall."),
    Entry(8, "tool_output", "listen port = 62114"),
    Entry(9, "tool_call", "Bash\ncommand: ledgerctl start --port 62114"),
)


def _states(audit) -> dict[str, str]:
    return {i.value: i.state for i in audit.identifiers}


def test_each_identifier_of_the_replaced_history_gets_its_state_in_the_summary():
    [audit] = audit_session(PORT_DROP)
    states = _states(audit)
    assert states["OPS-4821"] == "present"
    assert states["/opt/kestrel/ledger.conf"] == "present"
    assert states["v4.18.2-rc3"] == "present"
    assert states["62114"] == "missing"
    assert states["@marta.v-oncall"] == "missing"
    assert states["kid-7F3A9C21"] == "mutated"
    [mutated] = [i for i in audit.identifiers if i.state == "mutated"]
    assert mutated.altered == "kid-7F3A9C2l"
    assert (audit.index, audit.tokens_before, audit.tokens_after) == (1, 40000, 2000)


def test_lost_and_needed_names_the_first_agent_use_after_the_compaction():
    [audit] = audit_session(PORT_DROP)
    needed = {n.value: (n.used_at, n.used_in, n.recovered) for n in audit.lost_and_needed}
    # The port (only tool output had shown it before the compaction) comes back in tool output
    # at line 8 and the agent types it at line 9 (recovered first): the agent needed it, so it
    # is one of the compaction's identifiers after all. The handle comes back only from the
    # person (line 7): neither the agent needing it nor a tool-output reappearance.
    assert needed == {"62114": (9, "tool_call", True)}
    [need] = audit.lost_and_needed
    assert "--port 62114" in need.context
    assert audit.reappeared == ()


def test_a_value_the_person_retypes_is_no_reappearance_but_tool_output_is():
    session = _session(Entry(1, "user", "the gateway is gw-3.corp.internal, ticket OPS-9"),
                       Compaction(2, "working on it"),
                       Entry(3, "user", "reminder: gw-3.corp.internal"),
                       Entry(4, "tool_output", "ticket OPS-9 is open"))
    [audit] = audit_session(session)
    assert {r.value: (r.at, r.channel) for r in audit.reappeared} == {"OPS-9": (4, "tool_output")}
    assert audit.lost_and_needed == ()


def test_values_only_tool_output_showed_count_when_carried_or_needed_never_as_plain_losses():
    session = _session(
        Entry(1, "user", "Run the tests for the billing service on port 62114."),
        Entry(2, "tool_call", "Bash\ncommand: mix test"),
        Entry(3, "tool_output", "row 5b1e0c8a-1d2f-4e3a-9b8c-7d6e5f4a3b21 inserted\n"
                                "phoenix 1.7.14\nsee /srv/app/test/billing_test.exs\n"
                                "signing key kid-7F3A9C21 rotated"),
        Compaction(4, "Tests for billing on port 62114; signing key kid-7F3A9C2l."),
        Entry(5, "tool_call", "Bash\ncommand: mix test /srv/app/test/billing_test.exs"),
        Entry(6, "tool_output", "phoenix 1.7.14 row 5b1e0c8a-1d2f-4e3a-9b8c-7d6e5f4a3b21"),
    )
    [audit] = audit_session(session)
    # The row id and the version only tool output showed, the summary dropped and nobody
    # wrote again: not the task's values, not listed. The key the summary garbled is listed
    # (the summary carries it); the test file the agent needed again is listed as lost.
    assert _states(audit) == {"62114": "present", "kid-7F3A9C21": "mutated",
                              "/srv/app/test/billing_test.exs": "missing"}
    assert [(n.value, n.used_at, n.recovered) for n in audit.lost_and_needed] == [
        ("/srv/app/test/billing_test.exs", 5, False)]
    assert audit.reappeared == ()


def test_new_after_lists_values_of_lost_kinds_never_seen_before_with_signatures():
    [audit] = audit_session(PORT_DROP)
    new = {n.value: n for n in audit.new_after}
    assert set(new) == {"8080"}
    assert new["8080"].kind == "port" and new["8080"].first_seen_at == 5
    assert "well_known_port" in new["8080"].signatures


def test_second_compaction_audits_the_history_since_the_first_plus_its_summary():
    session = _session(
        Entry(1, "assistant", "port 62114 and /srv/a.lock"),
        Compaction(2, "kept /srv/a.lock"),
        Entry(3, "assistant", "ticket OPS-77"),
        Compaction(4, "OPS-77 open"),
    )
    first, second = audit_session(session)
    assert _states(first) == {"62114": "missing", "/srv/a.lock": "present"}
    # /srv/a.lock reaches the second compaction through the first summary; 62114 does not.
    assert _states(second) == {"/srv/a.lock": "missing", "OPS-77": "present"}


def test_a_session_without_compaction_has_no_audits():
    assert audit_session(_session(Entry(1, "user", "port 62114"))) == []


def test_numbers_are_left_out_by_default_and_can_be_let_in():
    session = _session(Entry(1, "assistant", "copied 4096 files, port 62114"), Compaction(2, "done"))
    [audit] = audit_session(session)
    assert [i.value for i in audit.identifiers] == ["62114"]
    [audit] = audit_session(session, AuditOptions(excluded_kinds=frozenset()))
    assert [i.value for i in audit.identifiers] == ["4096", "62114"]


def test_a_near_miss_that_is_another_value_of_the_history_is_not_a_mutation():
    session = _session(Entry(1, "user", "key kid-7F3A9C21 and key kid-7F3A9C22"),
                       Compaction(2, "use kid-7F3A9C22"))
    [audit] = audit_session(session)
    assert _states(audit) == {"kid-7F3A9C21": "missing", "kid-7F3A9C22": "present"}


def test_a_url_also_yields_the_port_inside_it():
    session = _session(Entry(1, "assistant", "serving http://ledger-1.internal:62114/health"),
                       Compaction(2, "ledger on port 62114"))
    [audit] = audit_session(session)
    assert _states(audit) == {"http://ledger-1.internal:62114/health": "missing",
                              "ledger-1.internal": "missing", "62114": "present"}


def test_named_facts_replace_the_kind_rules():
    facts = (AuditFact("ledger port", "62114", "port"), AuditFact("shards", "19 shards", "number"),
             AuditFact("never said", "zzz-1", "value"))
    session = _session(Entry(1, "tool_output", "listen 62114; 19 shards; OPS-1"),
                       Compaction(2, "19 shards"), Entry(3, "assistant", "curl :62114"))
    [audit] = audit_session(session, AuditOptions(facts=facts))
    assert [(i.label, i.value, i.state) for i in audit.identifiers] == [
        ("ledger port", "62114", "missing"), ("shards", "19 shards", "present")]
    assert [(n.label, n.used_at) for n in audit.lost_and_needed] == [("ledger port", 3)]
    assert audit.new_after == ()


def test_json_document_has_the_contract_keys():
    doc = audit_json(PORT_DROP, audit_session(PORT_DROP), source="s.jsonl")
    [c] = doc["compactions"]
    assert {"index", "tokens_before", "tokens_after", "identifiers", "lost_and_needed",
            "new_after"} <= set(c)
    assert set(c["identifiers"][0]) >= {"kind", "value", "state", "altered"}
    assert set(c["lost_and_needed"][0]) >= {"kind", "value", "used_at"}
    assert set(c["new_after"][0]) >= {"kind", "value", "first_seen_at", "signatures"}
    assert doc["source"] == "s.jsonl"


def test_redacted_json_holds_kinds_and_hashes_never_values():
    key = b"k" * 32
    doc = audit_json(PORT_DROP, audit_session(PORT_DROP), redacted=True, source="secret/path.jsonl",
                     redact_key=key)
    text = repr(doc)
    for value in ("62114", "@marta.v-oncall", "kid-7F3A9C21", "kid-7F3A9C2l", "8080", "secret/path"):
        assert value not in text
    kinds = {i["kind"] for i in doc["compactions"][0]["identifiers"]}
    assert {"port", "handle", "key_id"} <= kinds
    assert redact("62114", key) in text and redact("62114", key).startswith("hmac:")
    # Without the key, trying every port does not find the redacted one.
    assert redact("62114", b"other" * 8) != redact("62114", key)
    assert "--port" not in text  # no context text either


def test_facts_file_data_is_checked_and_a_scenario_file_is_accepted():
    facts = facts_from_data({"name": "x", "facts": [
        {"label": "ledger service port", "value": "62114", "role": "tool", "chunk": 1, "kind": "port"},
        {"label": "tag", "value": "v4.18.2-rc3"}]})
    assert [(f.label, f.kind) for f in facts] == [("ledger service port", "port"), ("tag", "version")]
    for data, problem in (({}, "no .*facts"), ({"facts": [{"label": "a"}]}, "'value'"),
                          ({"facts": [{"label": "a", "value": "1"}, {"label": "a", "value": "2"}]},
                           "used twice")):
        with pytest.raises(ConfigError, match=problem):
            facts_from_data(data, source="f.toml")


_TEXT = st.text(alphabet=st.sampled_from(list("ab :/.-_@0123456789 port\nkidOPS")), max_size=60)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _TEXT), max_size=8))
def test_any_session_audits_without_error_and_present_means_in_the_summary(parts):
    items: list[Entry | Compaction] = []
    for at, (is_compaction, text) in enumerate(parts, 1):
        items.append(Compaction(at, text) if is_compaction else Entry(at, "tool_output", text))
    session = _session(*items)
    audits = audit_session(session)
    assert len(audits) == len(session.compactions)
    for audit, compaction in zip(audits, session.compactions, strict=True):
        for ident in audit.identifiers:
            if ident.kind == "path":
                continue  # paths are compared normalised (a/./b is a/b)
            if ident.state == "present":
                assert ident.value in compaction.summary
            if ident.value not in compaction.summary:
                assert ident.state != "present"
        for need in audit.lost_and_needed:
            assert need.used_at > compaction.at
