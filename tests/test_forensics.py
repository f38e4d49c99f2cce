"""Per-fold forensics: present, mutated (near miss) or missing, and where a fact was lost."""

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.forensics import fact_state, fact_status
from foldscope.core.nearmiss import near_miss


@dataclass
class F:
    label: str
    value: str


def test_present_mutated_missing():
    carrier = "- ledger service port: 62114\n- signing key id: kid-7F3A9C2l\n"
    assert fact_state(carrier, "62114") == "present"
    assert fact_state(carrier, "kid-7F3A9C21") == "mutated"
    assert fact_state(carrier, "/opt/kestrel/state/install.lock") == "missing"


def test_glued_value_is_not_present():
    assert fact_state("port 621140", "62114") != "present"


def test_whitespace_runs_still_present():
    assert fact_status("cutoff 2026-07-14  01:26 UTC", [F("c", "2026-07-14 01:26 UTC")]) == {"c": "present"}


def test_near_miss_reports_the_altered_text():
    miss = near_miss("the tag was v4.18.2-rc4 yesterday", "v4.18.2-rc3")
    assert miss is not None and miss.altered == "v4.18.2-rc4" and miss.rule == "digit_changed"
    assert near_miss("abc", "xyz") is None


def test_fact_spans_mark_present_and_mutated_values_in_place():
    from foldscope.core.forensics import fact_spans

    carrier = "- port: 62114\n- key: kid-7F3A9C2l\n- again 62114."
    facts = [F("port", "62114"), F("key", "kid-7F3A9C21"), F("lost", "/opt/x.lock")]
    spans = fact_spans(carrier, facts)
    assert [(carrier[s.start:s.end], s.label, s.state) for s in spans] == [
        ("62114", "port", "present"), ("kid-7F3A9C2l", "key", "mutated"),
        ("62114", "port", "present")]


def test_remembered_bound_texts_are_the_ones_read_afresh():
    from foldscope.core.forensics import _BOUND_TEXTS, bound_texts

    carriers = ["- ledger shard count: 19\n- ledger service port: 62114",
                "The ledger shard count is 19 and the ledger holds 3 regions.",
                '{"facts": "ledger shard count: 19"}', "nothing here"]
    first = [bound_texts(c, "ledger shard count") for c in carriers]
    again = [bound_texts(c, "ledger shard count") for c in carriers]
    _BOUND_TEXTS.clear()
    assert first == again == [bound_texts(c, "ledger shard count") for c in carriers]
    assert first[0] == ["19"]


def _advance_reference(histories, fold):
    """advance_histories as first written: every course stepped and compared field by field."""
    from foldscope.core.forensics import NOT_YET, PRESENT, FactHistory

    out = []
    for hist, now in zip(histories, fold.facts, strict=True):
        planted = hist.planted_fold
        if planted is None and now.state != NOT_YET:
            planted = fold.fold
        first = hist.first_carried_fold
        lost, returned = hist.lost_fold, hist.returned
        if now.state == PRESENT:
            if first is None:
                first = fold.fold
            if lost is not None:
                returned = True
        elif now.state != NOT_YET and lost is None:
            lost = fold.fold
        out.append(FactHistory(hist.label, hist.value, hist.graded, hist.chunk, planted, first,
                               lost, returned, now.state, now.altered, now.rule))
    return tuple(out)


_STATE_DRAWS = st.sampled_from([("not_yet", None, None), ("present", None, None),
                                ("missing", None, None), ("mutated", "62115", "digit_changed"),
                                ("mutated", "6214", "char_dropped")])
_FOLD_OR_NONE = st.one_of(st.none(), st.integers(0, 5))


@settings(max_examples=400)
@given(st.lists(st.tuples(_STATE_DRAWS, _FOLD_OR_NONE, _FOLD_OR_NONE, _FOLD_OR_NONE,
                          st.booleans(), _STATE_DRAWS), min_size=1, max_size=6),
       st.integers(0, 6))
def test_advancing_courses_keeps_only_unmoved_ones_and_moves_the_rest_as_ever(courses, fold):
    from foldscope.core.forensics import (
        FactAtFold,
        FactHistory,
        FoldFacts,
        TimelineState,
        advance_histories,
    )

    histories, facts = [], []
    for n, (last, planted, first, lost, returned, now) in enumerate(courses):
        histories.append(FactHistory(f"f{n}", "62114", True, 0, planted, first, lost, returned,
                                     TimelineState(last[0]), last[1], last[2]))
        facts.append(FactAtFold(f"f{n}", "62114", TimelineState(now[0]), now[1], now[2]))
    entry = FoldFacts(fold, 0, 0, tuple(facts))
    got = advance_histories(histories, entry)
    assert got == _advance_reference(histories, entry)
    assert all(g is h for g, h in zip(got, histories, strict=True) if g == h)
