"""Tests for the session readers (foldscope.engine.audit_readers) on the fixtures in
tests/fixtures/audit, written from the formats' documentation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.audit import Compaction, Entry
from foldscope.core.errors import ConfigError, SessionError
from foldscope.engine.audit_readers import (
    read_claude_code,
    read_facts,
    read_generic,
    read_sessions,
)
from foldscope.engine.kinds_file import KINDS_ENV, identifier_rules

FIXTURES = Path(__file__).parent / "fixtures" / "audit"


@pytest.mark.parametrize("name, fmt", [("port-drop.jsonl", "jsonl"),
                                       ("port-drop.claude-code.jsonl", "claude-code"),
                                       ("messy.claude-code.jsonl", "claude-code"),
                                       ("no-compaction.jsonl", "jsonl")])
def test_auto_tells_the_formats_apart(name, fmt):
    [session] = read_sessions(FIXTURES / name)
    assert session.format == fmt


def test_claude_code_compactions_pair_boundary_and_summary():
    [session] = read_sessions(FIXTURES / "port-drop.claude-code.jsonl", "claude-code")
    first, second = session.compactions
    assert (first.tokens_before, first.tokens_after, first.trigger) == (48210, 3120, "auto")
    assert "signing key kid-7F3A9C2l" in first.summary
    assert "running on port 62114" in second.summary
    channels = {e.channel for e in session.items if isinstance(e, Entry)}
    assert channels == {"user", "assistant", "tool_call", "tool_output"}
    tool_calls = [e.text for e in session.items if isinstance(e, Entry) and e.channel == "tool_call"]
    assert "Bash\ncommand: ledgerctl start --port 8080" in tool_calls
    assert session.skipped_lines == 0


def test_claude_code_skips_and_counts_what_it_cannot_read_and_leaves_out_sidechains():
    [session] = read_sessions(FIXTURES / "messy.claude-code.jsonl")
    assert session.skipped_lines == 4 and session.skipped_at == (3, 5, 6, 8)
    texts = " ".join(e.text for e in session.items if isinstance(e, Entry))
    assert "sub-agent" not in texts
    [compaction] = session.compactions
    # A summary with no boundary before it is still a compaction, without token counts.
    assert compaction.tokens_before is None and "kid-AB12CD34" in compaction.summary


def test_generic_jsonl_reads_messages_tool_calls_and_markers():
    lines = [
        json.dumps({"role": "user", "content": [{"type": "text", "text": "port 62114"}]}),
        json.dumps({"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "shell", "arguments": json.dumps({"cmd": "nc -z h 62114"})}},
            {"name": "read", "input": {"path": "/etc/x.conf"}}]}),
        json.dumps({"role": "tool", "content": "ok"}),
        json.dumps({"type": "compaction", "summary": "s", "tokens_before": 10, "trigger": "manual"}),
        json.dumps({"type": "compaction"}),
        json.dumps({"role": 5, "content": "x"}),
        "",
        "{broken",
    ]
    session = read_generic(lines)
    kinds = [(type(i).__name__, getattr(i, "channel", None)) for i in session.items]
    assert kinds == [("Entry", "user"), ("Entry", "tool_call"), ("Entry", "tool_call"),
                     ("Entry", "tool_output"), ("Compaction", None)]
    assert session.items[1].text == "shell\ncmd: nc -z h 62114"
    assert session.items[2].text == "read\npath: /etc/x.conf"
    [compaction] = session.compactions
    assert (compaction.tokens_before, compaction.tokens_after, compaction.trigger) == (10, None, "manual")
    assert session.skipped_at == (5, 6, 8)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=40),
                          st.dictionaries(st.sampled_from(["type", "role", "content", "message",
                                                           "summary", "isCompactSummary",
                                                           "subtype", "tool_calls"]),
                                          st.one_of(st.none(), st.integers(), st.text(max_size=10),
                                                    st.sampled_from(["user", "assistant", "system",
                                                                     "compaction", "compact_boundary"]),
                                                    st.lists(st.integers(), max_size=2)),
                                          max_size=5).map(json.dumps)),
                max_size=12))
def test_readers_never_fail_on_arbitrary_lines(lines):
    for reader in (read_claude_code, read_generic):
        session = reader(lines)
        used = {i.at for i in session.items}
        assert not used & set(session.skipped_at)
        assert all(isinstance(i, Entry | Compaction) for i in session.items)


def test_bad_path_or_format_is_one_clear_error(tmp_path):
    with pytest.raises(SessionError, match="not found"):
        read_sessions(tmp_path / "missing.jsonl")
    with pytest.raises(SessionError, match="directory"):
        read_sessions(tmp_path)
    with pytest.raises(SessionError, match="unknown session format"):
        read_sessions(FIXTURES / "port-drop.jsonl", "yaml")
    odd = tmp_path / "odd.jsonl"
    odd.write_text("hello\n{\"x\": 1}\n")
    with pytest.raises(SessionError, match="pass --format"):
        read_sessions(odd)


def test_facts_file_and_kinds_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "facts.toml"
    bad.write_text("facts = 3\n")
    with pytest.raises(ConfigError, match="facts.toml"):
        read_facts(bad)
    with pytest.raises(ConfigError, match="not found"):
        read_facts(tmp_path / "none.toml")
    kinds = tmp_path / "kinds.toml"
    kinds.write_text('[[kind]]\nname = "build_id"\npattern = \'\'\'\\bBLD-\\d{6}\\b\'\'\'\n')
    rules = identifier_rules(kinds, environ={})
    assert rules[0].name == "build_id"
    env_rules = identifier_rules(None, environ={KINDS_ENV: str(kinds)})
    assert env_rules[0].name == "build_id"
    with pytest.raises(ConfigError, match=KINDS_ENV):
        identifier_rules(None, environ={KINDS_ENV: str(tmp_path / "none.toml")})
