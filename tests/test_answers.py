"""Answer classes judged by the final carrier, the carrier × answer table, and provenance."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.answers import (
    ANSWER_CLASSES,
    READ_FAILURE_KINDS,
    carrier_answer_table,
    classify_fact,
    given_values,
    provenance,
)
from foldscope.core.grading import FactGrade, grade_answer


@dataclass(frozen=True)
class F:
    label: str
    value: str
    graded: bool = True


def _grade(value: str, found: str | None) -> FactGrade:
    return grade_answer("" if found is None else f"x: {found}", [F("x", value)])[0]


@pytest.mark.parametrize(("value", "found", "state", "altered", "cls", "detail"), [
    ("61873", "61873", "present", None, "correct", None),
    ("61873", "61873", "missing", None, "correct", None),           # right although lost
    ("61873", "unknown", "missing", None, "honest_abstention", None),
    # Issue 21: an answer that never names the label gave nothing; it did not abstain.
    ("61873", None, "missing", None, "honest_abstention", "nothing"),
    ("61873", "not recorded", "mutated", "61837", "honest_abstention", None),
    ("61873", "8080", "missing", None, "fabricated", None),
    ("61873", "61874", "missing", None, "fabricated", None),        # close in shape: still invented
    ("2026-07-18T22:45Z", "2026-07-18T00:00Z", "missing", None, "fabricated", None),
    ("61873", "8080", "present", None, "read_failure", "other_value"),
    ("61873", "unknown", "present", None, "read_failure", "abstained"),
    ("61873", None, "present", None, "read_failure", "nothing"),
    ("61873", "", "present", None, "read_failure", "nothing"),
    ("61873", "61837", "mutated", "61837", "carried_corruption", None),
    ("kid-4C91E0A7", "kid-4C91E0A1 (from notes)", "mutated", "kid-4C91E0A1",
     "carried_corruption", None),
    ("61873", "8080", "mutated", "61837", "fabricated", None),      # neither value nor mutation
    ("61873", "8080", "not_yet", None, "fabricated", None),
])
def test_classes(value, found, state, altered, cls, detail):
    verdict = classify_fact(_grade(value, found), state, altered)
    assert (verdict.answer_class, verdict.detail) == (cls, detail)
    assert verdict.answer_class in ANSWER_CLASSES
    assert verdict.detail is None or verdict.detail in READ_FAILURE_KINDS


def test_hedged_comes_from_the_grader():
    @dataclass(frozen=True)
    class Hedged(FactGrade):
        hedged: bool = True

    base = _grade("61873", "61873 or 61874")
    hedged = Hedged(**{k: getattr(base, k) for k in base.__dataclass_fields__})
    assert classify_fact(hedged, "present").answer_class == "hedged"


def test_near_miss_is_a_diagnostic_never_the_class():
    verdict = classify_fact(_grade("61873", "61874"), "missing")
    assert verdict.answer_class == "fabricated"
    assert verdict.near_miss is not None and verdict.near_miss.rule == "digit_changed"


@settings(max_examples=60)
@given(st.sampled_from(["unknown", "n/a", "not recorded", "none", "?", "", "not in the summary"]),
       st.sampled_from(["missing", "mutated", "not_yet"]))
def test_abstentions_are_never_fabrications(found, state):
    verdict = classify_fact(_grade("61873", found), state, "61837")
    assert verdict.answer_class == "honest_abstention"


def test_carrier_answer_table():
    verdicts = [classify_fact(_grade("61873", f), s) for f, s in [
        ("61873", "present"), ("1", "present"), ("61873", "missing"), ("unknown", "missing"),
        ("8080", "mutated")]]
    table = carrier_answer_table(verdicts)
    assert (table.held_correct, table.held_wrong, table.lost_correct, table.lost_wrong) == (1, 1, 1, 2)
    assert (table + table).lost_wrong == 4


FACTS = [F("port", "61873"), F("admin port", "47219"), F("cluster", "kc-eu-n-5520", graded=False)]


def test_cross_binding_names_the_fact():
    p = provenance("47219", "port", FACTS)
    assert (p.source, p.fact_label, p.fact_graded, p.value) == ("cross_binding", "admin port",
                                                                True, "47219")
    p = provenance("it is kc-eu-n-5520 I think", "port", FACTS)
    assert (p.source, p.fact_label, p.fact_graded) == ("cross_binding", "cluster", False)


def test_earlier_carrier_then_session_input_then_invention():
    carriers = ["port 61873", "port 61837 noted", "nothing"]
    chunks = ["logs: listening on 9443", "more"]
    assert provenance("61837", "port", FACTS, carriers, chunks).fold == 1
    p = provenance("probably 9443", "port", FACTS, carriers, chunks)
    assert (p.source, p.chunk, p.value) == ("session_input", 0, "9443")
    p = provenance("8080", "port", FACTS, carriers, chunks)
    assert (p.source, p.value) == ("invention", "8080")
    assert provenance("  ", "port", FACTS) is None


def test_own_value_is_no_cross_binding():
    assert provenance("61873", "port", FACTS).source == "invention"


def test_given_values():
    assert given_values("**8080** (default)")[1:] == ["8080"]
    assert given_values("`/var/lib/app/app.lock`.") == ["/var/lib/app/app.lock"]
    assert given_values("") == []
