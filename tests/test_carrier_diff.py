"""Carrier diffs, a mutation's marked characters, what a fold changed, and survival counts."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.answers import checks_table
from foldscope.core.carrier import carried_sections
from foldscope.core.carrier_diff import carrier_diff, char_marks
from foldscope.core.cells import CellKey
from foldscope.core.forensics import (
    FactAtFold,
    FoldFacts,
    fact_timeline,
    fold_changes,
    timeline_document,
)
from foldscope.core.survival import NEVER_LOST, death_table, survival_curves


@dataclass(frozen=True)
class P:
    label: str
    value: str
    chunk: int
    graded: bool = True
    kind: str = ""


FACTS = [P("port", "61873", 0, kind="port"), P("key", "kid-4C91E0A7", 0),
         P("zone", "zone-c.lyra-internal.net", 1), P("cluster", "kc-eu-n-5520", 1, graded=False)]
FOLDS = [(0, 0, "## Facts and values\n- port: 61873\n- key: kid-4C91E0A7"),
         (1, 1, "## Facts and values\n- key: kid-4C91E0A1\n- zone: zone-c.lyra-internal.net"),
         (2, 2, "## Progress\n- key: kid-4C91E0A1")]


def test_diff_lines_removed_and_added_with_gaps():
    before = "\n".join(f"line {i}" for i in range(20))
    after = before.replace("line 10", "line ten")
    diff = carrier_diff(before, after, context=1)
    kinds = [d.kind for d in diff]
    assert kinds == ["gap", "same", "removed", "added", "same", "gap"]
    assert diff[0].text == "9 unchanged lines" and diff[-1].text == "8 unchanged lines"
    assert carrier_diff(before, before) == []
    assert [d.kind for d in carrier_diff("", "a\nb")] == ["added", "added"]


@settings(max_examples=60)
@given(st.lists(st.sampled_from(["a", "b", "port 1", "- x", ""]), max_size=12),
       st.lists(st.sampled_from(["a", "b", "port 2", "- x", ""]), max_size=12))
def test_diff_rebuilds_both_sides(a, b):
    diff = carrier_diff("\n".join(a), "\n".join(b), context=10**6)
    assert [d.text for d in diff if d.kind in ("same", "removed")] == "\n".join(a).splitlines()
    assert [d.text for d in diff if d.kind in ("same", "added")] == "\n".join(b).splitlines()


def test_char_marks_point_at_the_edit():
    marks = char_marks("3f1c9a52", "3f1c9a25")
    assert all(a >= 6 for a, _ in marks.original) and all(a >= 6 for a, _ in marks.altered)
    dropped = char_marks("62114", "6214")
    assert dropped.altered == () and sum(b - a for a, b in dropped.original) == 1
    assert char_marks("same", "same").original == ()


def test_fold_changes_name_lost_mutated_and_added():
    tl = fact_timeline(FOLDS, FACTS)
    first = fold_changes(None, tl.folds[0])
    assert [f.label for f in first.added] == ["port", "key"] and not first.lost
    second = fold_changes(tl.folds[0], tl.folds[1])
    # The decoy planted by fold 2 and dropped by it is lost there too; the mutated key is named
    # once, as mutated (not lost as well).
    assert [f.label for f in second.lost] == ["port", "cluster"]
    assert [(f.label, f.altered) for f in second.mutated] == [("key", "kid-4C91E0A1")]
    assert [f.label for f in second.added] == ["zone"]
    third = fold_changes(tl.folds[1], tl.folds[2])
    assert [f.label for f in third.lost] == ["zone"] and not third.mutated


_STATE = st.sampled_from(["not_yet", "present", "mutated", "missing"])


def _fold_facts(states: list[tuple[str, str]]) -> FoldFacts:
    return FoldFacts(0, 0, 0, tuple(
        FactAtFold(f"f{i}", f"v{i}", state, f"w{i}{alt}" if state == "mutated" else None)
        for i, (state, alt) in enumerate(states)))


@given(st.lists(st.tuples(_STATE, st.sampled_from("ab")), min_size=1, max_size=8), st.data())
@settings(max_examples=200, deadline=None)
def test_fold_changes_name_each_fact_once(before, data):
    after = data.draw(st.lists(st.tuples(_STATE, st.sampled_from("ab")),
                               min_size=len(before), max_size=len(before)))
    changes = fold_changes(_fold_facts(before), _fold_facts(after))
    named = [f.label for f in (*changes.lost, *changes.mutated, *changes.added)]
    assert len(named) == len(set(named))
    assert all(f.state == "missing" for f in changes.lost)
    assert all(f.state == "mutated" for f in changes.mutated)
    assert all(f.state == "present" for f in changes.added)


def test_timeline_document_upto_a_fold():
    tl = fact_timeline(FOLDS, FACTS)
    doc = timeline_document(tl, 0)
    assert [f["fold"] for f in doc["folds"]] == [1]
    port = doc["facts"][0]
    assert (port["planted_fold"], port["lost_fold"], port["final_state"]) == (1, None, "present")
    whole = timeline_document(tl)
    assert whole["facts"][0]["lost_fold"] == 2
    key = whole["facts"][1]
    assert (key["final_state"], key["altered"], key["rule"]) == (
        "mutated", "kid-4C91E0A1", "digit_changed")
    assert whole["folds"][0]["facts"][2] == {"label": "zone", "value": "zone-c.lyra-internal.net",
                                             "state": "not_yet", "altered": None, "rule": None}


def test_carried_sections_names_which_headings():
    assert [s.heading for s in carried_sections(FOLDS[0][2] + "\n# PROGRESS:")] == [
        "Progress", "Facts and values"]
    assert carried_sections("no headings") == ()


def test_survival_pools_rows_and_counts_planted_facts_only():
    tl = fact_timeline(FOLDS, FACTS)
    (curve,) = survival_curves([(CellKey("s", "m", "j"), tl), (CellKey("s", "m", "j"), tl)])
    assert (curve.scenario, curve.model, curve.arm) == ("s", "m", "j")
    assert curve.rows == 2 and curve.planted == (4, 6, 6) and curve.carried == (4, 2, 0)
    assert curve.fractions == (1.0, 2 / 6, 0.0)
    deaths = death_table([tl], {"port": "port"})
    assert deaths.folds == ("2", "3", NEVER_LOST)
    assert deaths.by_chunk == {("2", 1): 2, ("3", 2): 1}
    assert deaths.by_kind[("2", "port")] == 1


@dataclass(frozen=True)
class C:
    carrier_state: str
    classification: str


def test_checks_table_counts_carrier_by_answer():
    table = checks_table([C("present", "correct"), C("present", "read_failure"),
                          C("mutated", "carried_corruption"), C("missing", "correct")])
    assert (table.held_correct, table.held_wrong, table.lost_correct, table.lost_wrong) == (
        1, 1, 1, 1)
