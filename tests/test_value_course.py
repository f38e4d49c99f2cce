"""Classification from a value's course through the carriers, unit drops held in a carrier,
provenance by tokens of the value's kind, and the stock-path signature family (issue 18 item 4)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.cli.main import main
from foldscope.core.answers import classify_value, holds_as_kind, provenance, value_signatures
from foldscope.core.fabrication import abstains
from foldscope.core.forensics import carrier_states, value_course
from foldscope.core.row import grade_checks


@dataclass(frozen=True)
class F:
    label: str
    value: str
    kind: str = ""
    chunk: int = 0
    graded: bool = True


FACTS = [F("ledger service port", "62114", "port"), F("admin console port", "47031", "port"),
         F("ledger shard count", "19 shards", "count"),
         F("install lock path", "/opt/kestrel/state/install.lock", "path")]


def _garbled(n: int = 7) -> list[str]:
    """47031 carried, then transposed at fold 5, then transposed again at fold 6."""
    return ["## ports\n- admin console port: 47031\n- ledger service port: 62114"] * 5 + [
        "## ports\n- admin console port: 47301\n- ledger service port: 62114",
        "## ports\n- admin console port: 47310\n- ledger service port: 62114"][: n - 5]


def test_a_value_corrupted_twice_is_carried_corruption_with_the_fold_it_entered():
    carriers = _garbled()
    course = value_course(carriers, "47031", "admin console port", "port")
    assert [(f.value, f.fold, f.source) for f in course] == [("47301", 5, "47031"),
                                                           ("47310", 6, "47301")]
    v = classify_value("admin console port", "47031", "47310", carrier=carriers[-1],
                       carriers=carriers[:-1], facts=FACTS, kind="port")
    assert v.verdict.answer_class == "carried_corruption"
    assert v.verdict.carried is not None and v.verdict.carried.fold == 6
    assert v.verdict.detail == "fold 6"
    assert v.provenance.source == "earlier_carrier" and v.provenance.fold == 6
    # An answer repeating the first corruption (still in no final carrier) is carried too.
    v = classify_value("admin console port", "47031", "47301", carrier=carriers[-1],
                       carriers=carriers[:-1], facts=FACTS, kind="port")
    assert v.verdict.answer_class == "carried_corruption" and v.verdict.carried.fold == 5


def test_the_final_carrier_alone_still_shows_the_label_bound_corruption():
    v = classify_value("admin console port", "47031", "47310", carrier=_garbled()[-1],
                       facts=FACTS, kind="port")
    assert v.verdict.answer_class == "carried_corruption"


def test_a_value_no_carrier_held_is_fabricated():
    carriers = _garbled()
    v = classify_value("admin console port", "47031", "47999", carrier=carriers[-1],
                       carriers=carriers[:-1], facts=FACTS, kind="port")
    assert v.verdict.answer_class == "fabricated" and v.provenance.source == "invention"


@settings(max_examples=40, deadline=None)
@given(st.integers(10000, 99999).map(str), st.integers(1, 4), st.data())
def test_any_chain_of_single_edits_is_followed(value, edits, data):
    """Each carrier holds one more single-digit change of the form before it."""
    forms = [value]
    for _ in range(edits):
        prev = forms[-1]
        i = data.draw(st.integers(0, len(prev) - 1))
        digit = data.draw(st.sampled_from([d for d in "0123456789" if d != prev[i]
                                           and (i or d != "0")]))
        nxt = prev[:i] + digit + prev[i + 1:]
        if nxt in forms:
            break
        forms.append(nxt)
    carriers = [f"- the port: {f}" for f in forms]
    fact_label = "the port"
    course = value_course(carriers, value, fact_label, "port")
    assert [f.value for f in course] == forms[1:]
    v = classify_value(fact_label, value, forms[-1], carrier=carriers[-1], carriers=carriers[:-1],
                       kind="port")
    if len(forms) > 1:
        assert v.verdict.answer_class == "carried_corruption"
        assert v.verdict.carried.fold == len(forms) - 1


def test_a_carrier_holding_the_number_without_its_unit_holds_it_mutated():
    carrier = "## Facts\n- ledger shard count: 19\n- regions: 3\n"
    state = carrier_states(carrier, [F("ledger shard count", "19 shards", "count")], 0)[0]
    assert (state.state, state.altered, state.rule) == ("mutated", "19", "unit_dropped")
    v = classify_value("ledger shard count", "19 shards", "19", carrier=carrier, facts=FACTS,
                       kind="count")
    assert v.verdict.answer_class == "carried_corruption"
    # A bare 19 elsewhere, not given to the label, is no unit drop of the fact.
    other = carrier_states("batch 19 finished\n", [F("ledger shard count", "19 shards")], 0)[0]
    assert other.state == "missing"


def test_grade_checks_follow_the_course_across_folds():
    carriers = _garbled()
    answer = "admin console port: 47310\nledger service port: 62114\nledger shard count: 19"
    checks = {c.label: c for c in grade_checks(answer, FACTS, carrier=carriers[-1],
                                               carriers=carriers[:-1])}
    assert checks["admin console port"].classification == "carried_corruption"
    assert checks["admin console port"].class_detail == "fold 6"
    assert checks["ledger service port"].classification == "correct"
    assert checks["install lock path"].class_detail == "nothing"
    assert not abstains(checks["install lock path"])


@pytest.mark.parametrize(("found", "text", "kind", "planted", "holds"), [
    ("8080", "verified batch 8080", "port", "62114", False),
    ("8080", "listening on port 8080", "port", "62114", True),
    ("8080", "curl http://host:8080/health", "port", "62114", True),
    ("16 shards", "open=16", "count", "19 shards", False),
    ("16", "open=16 closed=3 of the shards", "count", "19 shards", False),
    ("16 shards", "rebalanced to 16 shards", "count", "19 shards", True),
    ("16", "rebalanced to 16 shards", "count", "19 shards", True),
    ("/var/lib/x.lock", "see /var/lib/x.lock.bak", "path", "/opt/y.lock", False),
])
def test_provenance_matches_tokens_of_the_value_kind(found, text, kind, planted, holds):
    assert holds_as_kind(text, found, planted, kind) is holds
    p = provenance(found, "the fact", [], [], [text], planted=planted, kind=kind)
    assert (p.source == "session_input") is holds


def test_stock_path_family():
    assert "stock_path_family" in value_signatures("/var/lib/migration/state.json", "path")
    assert "stock_path_family" in value_signatures("/opt/service/config.yaml", "path")
    assert value_signatures("/opt/kestrel/state/install.lock", "path") == ()


def test_classify_cli_reads_one_carrier_per_fold(tmp_path, capsys):
    files = []
    for i, text in enumerate(_garbled()):
        path = tmp_path / f"c{i}.txt"
        path.write_text(text, encoding="utf-8")
        files += ["--carrier", str(path)]
    assert main(["classify", "--label", "admin console port", "--planted", "47031", "--answer",
                 "47310", *files, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["class"] == "carried_corruption"
    assert doc["carried"] == {"value": "47310", "fold": 6, "rule": "transposed",
                              "source": "47301"}


def test_grade_cli_on_shapes_real_models_write(tmp_path, capsys):
    answer = tmp_path / "a.txt"
    answer.write_text("| # | Label | Value |\n|---|---|---|\n| 1 | ledger service port | 62114 |\n"
                      "| 2 | admin console port | 47031 |\n\nledger service port: 8080\n",
                      encoding="utf-8")
    assert main(["grade", "--scenario", "kestrel", "--answer", str(answer), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    facts = {f["label"]: f for f in doc["facts"]}
    assert facts["ledger service port"]["class"] == "hedged"
    assert facts["admin console port"]["class"] == "correct"
    assert facts["release tag"]["class"] == "honest_abstention"
    assert facts["release tag"]["detail"] == "nothing" and facts["release tag"]["nothing"]
    assert not facts["release tag"]["abstained"]


def test_the_planted_value_inside_an_extended_wrong_one_is_not_its_provenance():
    p = provenance("/opt/kestrel/state/install.lock/", "install lock path", FACTS, [],
                   ["lock at /opt/kestrel/state/install.lock"], kind="path")
    assert p.source == "invention"
