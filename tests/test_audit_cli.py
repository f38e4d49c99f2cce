"""Tests for ``foldscope audit`` on the fixture sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.cli.main import main
from foldscope.engine.store import Store

FIXTURES = Path(__file__).parent / "fixtures" / "audit"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", ["port-drop.jsonl", "port-drop.claude-code.jsonl"])
def test_port_drop_session_in_both_formats(capsys, name):
    code, out, _ = _run(capsys, str(FIXTURES / name), "--json")
    assert code == 0
    doc = json.loads(out)
    first, second = doc["compactions"]
    states = {i["value"]: i["state"] for i in first["identifiers"]}
    assert states["62114"] == "missing"
    assert states["47031"] == "present"
    assert states["kid-7F3A9C21"] == "mutated"
    assert states["@marta.v-oncall"] == "missing"
    # Only the config file the agent read showed the CDN origin, and the summary dropped it:
    # not a value of the task (nobody wrote it), so not listed.
    assert "https://origin-7.cdn.kestrel-internal.net/assets" not in states
    needed = {n["value"] for n in first["lost_and_needed"]}
    assert needed == {"62114", "@marta.v-oncall"}
    [new] = first["new_after"]
    assert (new["kind"], new["value"]) == ("port", "8080") and "well_known_port" in new["signatures"]
    assert (first["tokens_before"], first["tokens_after"]) == (48210, 3120)
    assert {i["value"]: i["state"] for i in second["identifiers"]}["62114"] == "present"


def test_plain_report_leads_with_lost_and_needed(capsys):
    code, out, _ = _run(capsys, str(FIXTURES / "port-drop.jsonl"))
    assert code == 0
    assert "compaction 1 at line 6" in out
    lost = out.index("LOST AND NEEDED")
    assert out.index("62114", lost) < out.index("missing:", lost)
    assert "8080  first at line 7  signatures: well_known_port" in out


def test_session_text_is_printed_literally(capsys, tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_text(
        json.dumps({"role": "tool", "content": "see https://x.ledgerly.org/\u001b[2Jboom and [red]ok[/]"})
        + "\n" + json.dumps({"type": "compaction", "summary": "nothing"})
        + "\n" + json.dumps({"role": "assistant", "content": "curl https://x.ledgerly.org/\u001b[2Jboom"})
        + "\n")
    code, out, _ = _run(capsys, str(session))
    assert code == 0
    assert "\u001b" not in out and "\u241b[2Jboom" in out


def test_no_compaction_and_skipped_lines_are_reported(capsys):
    _, out, _ = _run(capsys, str(FIXTURES / "no-compaction.jsonl"))
    assert "no compaction in this session" in out
    code, out, _ = _run(capsys, str(FIXTURES / "messy.claude-code.jsonl"))
    assert code == 0 and "4 unreadable or unknown line(s) skipped (lines 3, 5, 6, 8)" in out
    _, out, _ = _run(capsys, str(FIXTURES / "no-compaction.jsonl"), "--json")
    assert json.loads(out)["compactions"] == []


@pytest.mark.parametrize("argv, message", [
    (["missing.jsonl"], "session file not found"),
    ([str(FIXTURES / "port-drop.jsonl"), "--format", "claude-code"], None),
    ([str(FIXTURES / "port-drop.jsonl"), "--facts", "nope.toml"], "facts file not found"),
    ([str(FIXTURES / "port-drop.jsonl"), "--kinds", "nope.toml"], "identifier kinds file not found"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    if message is None:  # the wrong format: most lines skipped, refused in one line
        assert code == 2 and "lines skipped: not a claude-code session" in err
        assert len(err.strip().splitlines()) == 1
        return
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_format_flag_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", str(FIXTURES / "port-drop.jsonl"), "--format", "yaml"])
    assert exc.value.code == 2


def test_facts_file_audits_named_facts(capsys, tmp_path):
    facts = tmp_path / "facts.toml"
    facts.write_text('[[facts]]\nlabel = "ledger service port"\nvalue = "62114"\nkind = "port"\n\n'
                     '[[facts]]\nlabel = "release tag"\nvalue = "v4.18.2-rc3"\n')
    code, out, _ = _run(capsys, str(FIXTURES / "port-drop.jsonl"), "--facts", str(facts), "--json")
    assert code == 0
    first = json.loads(out)["compactions"][0]
    assert [(i["label"], i["state"]) for i in first["identifiers"]] == [
        ("ledger service port", "missing"), ("release tag", "present")]
    assert [n["label"] for n in first["lost_and_needed"]] == ["ledger service port"]


def test_kinds_file_adds_a_kind(capsys, tmp_path):
    kinds = tmp_path / "kinds.toml"
    kinds.write_text('[[kind]]\nname = "command"\npattern = \'\'\'\\bledgerctl \\w+\'\'\'\n')
    code, out, _ = _run(capsys, str(FIXTURES / "port-drop.jsonl"), "--kinds", str(kinds), "--json")
    assert code == 0
    values = {(i["kind"], i["value"]) for i in json.loads(out)["compactions"][1]["identifiers"]}
    assert ("command", "ledgerctl start") in values


def test_db_stores_the_audit_redacted_when_asked(capsys, tmp_path):
    db = tmp_path / "a.sqlite"
    code, out, _ = _run(capsys, str(FIXTURES / "port-drop.jsonl"), "--db", str(db), "--json",
                        "--redact")
    assert code == 0
    doc = json.loads(out)
    assert "62114" not in out and "port-drop" not in out and doc["stored_as"] == 1
    code, out, _ = _run(capsys, str(FIXTURES / "port-drop.jsonl"), "--db", str(db))
    assert code == 0 and "stored as audit 2" in out
    store = Store(db, readonly=True)
    try:
        newest, oldest = store.audits()
        assert (newest.id, newest.redacted, newest.compactions, newest.lost_and_needed) == (2, False, 2, 2)
        assert oldest.redacted and oldest.source is None
        assert "62114" not in json.dumps(oldest.document)
        assert store.audit(2).document["compactions"][0]["identifiers"][3]["value"] == "62114"
        assert store.audit(99) is None
    finally:
        store.close()
