"""User signatures (``$FOLDSCOPE_SIGNATURES``) reach every place that checks stock values: the
audit's new-after values and ``classify``, both through ``engine.rulefiles.load_signatures``."""

from __future__ import annotations

import json
from pathlib import Path

from foldscope.cli.main import main
from foldscope.engine.rulefiles import SIGNATURES_ENV

FIXTURES = Path(__file__).parent / "fixtures" / "audit"

# 8080 is the value the port-drop session re-invents; a house rule names it differently, and
# replaces the shipped well_known_port rule (same name) with one that no longer lists 8080.
USER_RULES = """
[[signature]]
name = "house_default_port"
match = "port"
values = ["8080"]

[[signature]]
name = "well_known_port"
match = "port"
values = ["443"]
"""


def _json(capsys, *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_audit_and_classify_both_read_the_user_signature_file(capsys, tmp_path, monkeypatch):
    rules = tmp_path / "signatures.toml"
    rules.write_text(USER_RULES, encoding="utf-8")
    shipped = _json(capsys, "audit", str(FIXTURES / "port-drop.jsonl"), "--json")
    shipped_new = {n["value"]: n["signatures"] for n in shipped["compactions"][0]["new_after"]}
    assert "well_known_port" in shipped_new["8080"]

    monkeypatch.setenv(SIGNATURES_ENV, str(rules))
    audit = _json(capsys, "audit", str(FIXTURES / "port-drop.jsonl"), "--json")
    new = {n["value"]: n["signatures"] for n in audit["compactions"][0]["new_after"]}
    assert "house_default_port" in new["8080"] and "well_known_port" not in new["8080"]

    verdict = _json(capsys, "classify", "--label", "ledger port", "--planted", "62114",
                    "--answer", "8080", "--json")
    assert "house_default_port" in verdict["signatures"]
    assert "well_known_port" not in verdict["signatures"]


def test_a_broken_user_signature_file_is_one_line_for_audit(capsys, tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[signature]\n", encoding="utf-8")
    monkeypatch.setenv(SIGNATURES_ENV, str(bad))
    code = main(["audit", str(FIXTURES / "port-drop.jsonl"), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and str(bad) in err and len(err.strip().splitlines()) == 1
