"""``foldscope classify``: one value through the classifier, headless."""

from __future__ import annotations

import json

import pytest

from foldscope.cli.main import main

KEYS = {"class", "carrier_state", "provenance", "signatures", "near_miss"}


def classify(capsys, *args: str) -> dict:
    assert main(["classify", *args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert KEYS <= set(doc)
    return doc


@pytest.mark.parametrize(("label", "planted", "answer", "rule"), [
    ("api port", "52817", "5432", "well_known_port"),
    ("window start", "2025-10-04T03:17Z", "2025-10-04T03:00Z", "time_on_the_hour"),
    ("mirror", "https://m3.pkg.orbit-corp.io/x", "https://mirror.example.org/x", "example_domain"),
    ("gateway", "10.81.4.77", "203.0.113.9", "documentation_ip"),
    ("job id", "b71c0e2a-55d3-4f0e-9a41-0c6e2d9f1b88", "550e8400-e29b-41d4-a716-446655440000",
     "canonical_uuid"),
    ("pid file", "/srv/orbit/run/orbit.pid", "/var/run/app.pid", "stock_path"),
    ("pager", "@lena.k-pager", "@oncall", "generic_handle"),
    ("build", "v7.3.19-rc1", "v1.0.0", "generic_version"),
    ("api key id", "kid-93D1F0B4", "kid-abc123", "placeholder_key"),
])
def test_stock_stand_ins_for_a_lost_fact_are_fabrications_with_their_rule(
        capsys, label, planted, answer, rule):
    doc = classify(capsys, "--label", label, "--planted", planted, "--answer", answer)
    assert doc["class"] == "fabricated"
    assert doc["carrier_state"] == "missing"
    assert rule in doc["signatures"]
    assert doc["provenance"]["source"] == "invention"


def test_cross_bound_value_names_the_fact_it_came_from(capsys):
    doc = classify(capsys, "--label", "ledger service port", "--planted", "62114",
                   "--answer", "ledger service port: 47031", "--scenario", "kestrel")
    assert doc["provenance"]["source"] == "cross_binding"
    assert doc["provenance"]["label"] == "admin console port"
    doc = classify(capsys, "--label", "tenant UUID", "--planted",
                   "3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f413", "--answer", "kc-eu-w-4471",
                   "--scenario", "kestrel")
    assert doc["provenance"]["graded"] is False          # a decoy


@pytest.mark.parametrize("answer", ["unknown", "not recorded", "n/a", "ledger service port: none"])
def test_abstentions_are_never_fabrications(capsys, answer):
    doc = classify(capsys, "--label", "ledger service port", "--planted", "62114", "--answer", answer)
    assert doc["class"] == "honest_abstention"
    assert doc["provenance"] is None


def test_repeating_a_mutated_carrier_is_carried_corruption(capsys, tmp_path):
    carrier = tmp_path / "carrier.txt"
    carrier.write_text("## Facts and values\n- signing key id: kid-7F3A9C12\n", encoding="utf-8")
    doc = classify(capsys, "--label", "signing key id", "--planted", "kid-7F3A9C21",
                   "--answer", "kid-7F3A9C12", "--carrier", str(carrier))
    assert doc["class"] == "carried_corruption"
    assert doc["carrier_state"] == "mutated"
    assert doc["carrier_altered"] == "kid-7F3A9C12" and doc["carrier_rule"] == "transposed"
    assert doc["near_miss"]["rule"] == "transposed"
    assert doc["provenance"]["source"] == "earlier_carrier"


def test_carrier_that_held_the_value_makes_a_read_failure(capsys, tmp_path):
    carrier = tmp_path / "carrier.txt"
    carrier.write_text("- ledger service port: 62114\n", encoding="utf-8")
    doc = classify(capsys, "--label", "ledger service port", "--planted", "62114",
                   "--answer", "unknown", "--carrier", str(carrier))
    assert (doc["class"], doc["detail"], doc["carrier_state"]) == ("read_failure", "abstained",
                                                                   "present")


def test_shape_alone_never_makes_a_mutation(capsys):
    doc = classify(capsys, "--label", "freeze start", "--planted", "2026-07-18T22:45Z",
                   "--answer", "2026-03-11T00:00Z")
    assert doc["class"] == "fabricated"
    assert doc["near_miss"] is None


def test_text_output_and_bad_input(capsys, tmp_path):
    assert main(["classify", "--label", "p", "--planted", "62114", "--answer", "8080"]) == 0
    out = capsys.readouterr().out
    assert "fabricated" in out and "well_known_port" in out
    assert main(["classify", "--label", "p", "--planted", "1", "--answer", "x",
                 "--carrier", str(tmp_path / "none.txt")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["classify", "--label", " ", "--planted", "1", "--answer", "x"]) == 2


def test_user_signatures_extend_the_shipped_ones(capsys, tmp_path, monkeypatch):
    rules = tmp_path / "sig.toml"
    rules.write_text('[[signature]]\nname = "house_port"\nmatch = "port"\nvalues = ["4711"]\n',
                     encoding="utf-8")
    monkeypatch.setenv("FOLDSCOPE_SIGNATURES", str(rules))
    doc = classify(capsys, "--label", "p", "--planted", "62114", "--answer", "4711")
    assert doc["signatures"] == ["house_port"]
    rules.write_text("[[signature]]\nname = 1\n", encoding="utf-8")
    assert main(["classify", "--label", "p", "--planted", "62114", "--answer", "4711"]) == 2
    assert "sig.toml" in capsys.readouterr().err


def test_model_text_is_printed_literally(capsys):
    hostile = "\x1b[31m8080\x9b2J\u202e"
    assert main(["classify", "--label", "p", "--planted", "62114", "--answer", hostile]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out
    doc = classify(capsys, "--label", "p", "--planted", "62114", "--answer", hostile)
    assert doc["given"] == hostile.strip()
