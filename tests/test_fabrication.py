"""Core fabrication review: the failing-row table, how far an answer reached, the flag rule and
Cohen's kappa (hand-worked, and against an independent computation)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.fabrication import (
    CLEARED,
    Reach,
    answer_reach,
    automatic_verdict,
    failing_rows,
    flag_agreement,
    flag_refusal,
)
from foldscope.core.row import Check, RowRecord
from foldscope.core.stats import cohen_kappa
from foldscope.core.validity import OK


def _check(label="port", cls="fabricated", found="8080", detail=None, state="missing"):
    return Check(label, "62114", found, cls == "correct", cls == "honest_abstention", False,
                 state == "present", cls, state, detail)


_ids = iter(range(1, 10_000))


def _row(recall, arm="j", model="m", valid=True):
    return RowRecord(id=next(_ids), position=0, scenario="s", model=model, arm=arm, repeat=0,
                     status="done", valid=valid, validity_reason=OK if valid else "parse_failure",
                     recall=recall)


# -- reach ------------------------------------------------------------------------------------


def test_an_answer_that_ends_before_the_last_labels_stopped_early_and_says_how_far():
    checks = [_check(found="1"), _check(found="unknown", cls="honest_abstention"),
              _check(found=""), _check(found=None), _check(found=None)]
    assert answer_reach(checks) == Reach(5, 3)
    assert answer_reach(checks).stopped_early


def test_a_label_skipped_in_the_middle_is_not_a_stop():
    checks = [_check(found="1"), _check(found=None), _check(found="3")]
    assert answer_reach(checks) == Reach(3, 3)
    assert not answer_reach(checks).stopped_early
    assert answer_reach([_check(found=None)] * 2) == Reach(2, 0)
    assert not answer_reach([]).stopped_early


# -- failing rows -----------------------------------------------------------------------------


def test_failing_rows_split_by_fabricating_without_abstaining_vs_abstaining_somewhere():
    fab = [_check(), _check(cls="read_failure", detail="other_value", state="present")]
    abst = [_check(), _check(found="not recorded", cls="honest_abstention")]
    abst_from_held = [_check(cls="read_failure", found="unknown", detail="abstained",
                             state="present")]
    neither = [_check(cls="carried_corruption", state="mutated")]
    short = [_check(), _check(found=None, cls="honest_abstention")]
    rows = [(_row(0.0), fab), (_row(0.1), abst), (_row(0.2), abst_from_held),
            (_row(0.3), neither), (_row(0.9), fab),            # recalled: not failing
            (_row(0.0, valid=False), fab),                     # invalid: never counted
            (_row(0.0, arm="q"), short), (_row(0.4, arm="q"), fab)]
    j, q = failing_rows(rows)
    assert (j.arm, j.valid_rows, j.failing_rows) == ("j", 5, 4)
    assert (j.fabricate_never_abstain, j.abstain_somewhere, j.neither) == (1, 2, 1)
    assert (j.stopped_early, j.items_reached) == (0, ())
    # An answer that bound nothing to the last label abstains there and stopped early.
    assert (q.failing_rows, q.fabricate_never_abstain, q.abstain_somewhere) == (2, 1, 1)
    assert (q.stopped_early, q.items_reached, q.items_asked) == (1, (1,), 2)


def test_cells_keep_plan_order_and_scenarios_apart():
    rows = [(_row(0.0, model="b"), [_check()]), (_row(0.0, model="a"), [_check()])]
    assert [t.model for t in failing_rows(rows)] == ["b", "a"]


# -- the flag rule ----------------------------------------------------------------------------


def test_verdicts_on_correct_answers_abstentions_and_empty_answers_are_refused():
    for verdict in ("fabricated", "not_fabricated", "unsure"):
        assert "correct" in flag_refusal(_check(cls="correct", found="62114"), verdict)
        assert "abstained" in flag_refusal(_check(cls="honest_abstention", found="n/a"), verdict)
        assert "abstained" in flag_refusal(
            _check(cls="read_failure", detail="abstained", found="unknown"), verdict)
        assert "nothing" in flag_refusal(_check(cls="read_failure", detail="nothing", found=" "),
                                         verdict)
        assert flag_refusal(_check(), verdict) is None
        assert flag_refusal(_check(cls="carried_corruption", state="mutated"), verdict) is None
    assert "unknown verdict" in flag_refusal(_check(), "maybe")
    assert flag_refusal(_check(cls="correct"), CLEARED) is None  # withdrawing is always allowed


# -- agreement --------------------------------------------------------------------------------


def test_kappa_hand_worked():
    # 10 items: both say yes on 4, both no on 3, rater 1 yes / rater 2 no on 2, reverse on 1.
    # p_o = 7/10; rater 1 yes 6/10, rater 2 yes 5/10: p_e = .6*.5 + .4*.5 = .5;
    # kappa = (.7 - .5) / (1 - .5) = .4
    pairs = [("y", "y")] * 4 + [("n", "n")] * 3 + [("y", "n")] * 2 + [("n", "y")]
    k = cohen_kappa(pairs)
    assert k.n == 10
    assert math.isclose(k.observed, 0.7)
    assert math.isclose(k.expected, 0.5)
    assert math.isclose(k.kappa, 0.4)
    assert k.table == (("n", "n", 3), ("n", "y", 1), ("y", "n", 2), ("y", "y", 4))


def test_kappa_edges():
    assert math.isnan(cohen_kappa([]).kappa)
    assert math.isnan(cohen_kappa([("y", "y")] * 3).kappa)  # chance agreement is total
    assert cohen_kappa([("y", "n"), ("n", "y")]).kappa == -1.0
    assert cohen_kappa([("y", "y"), ("n", "n")]).kappa == 1.0


def _kappa_by_matrix(pairs):
    """Independent computation: a confusion matrix over the sorted category list."""
    cats = sorted({c for p in pairs for c in p})
    index = {c: i for i, c in enumerate(cats)}
    m = [[0] * len(cats) for _ in cats]
    for a, b in pairs:
        m[index[a]][index[b]] += 1
    n = len(pairs)
    po = sum(m[i][i] for i in range(len(cats))) / n
    rows = [sum(r) for r in m]
    cols = [sum(m[i][j] for i in range(len(cats))) for j in range(len(cats))]
    pe = sum(rows[i] * cols[i] for i in range(len(cats))) / n / n
    return (po - pe) / (1 - pe) if pe < 1 else float("nan")


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abc")), min_size=1,
                max_size=40))
def test_kappa_matches_an_independent_computation(pairs):
    got, want = cohen_kappa(pairs).kappa, _kappa_by_matrix(pairs)
    assert (math.isnan(got) and math.isnan(want)) or math.isclose(got, want, abs_tol=1e-12)
    assert got != got or -1.0 - 1e-12 <= got <= 1.0 + 1e-12


def test_flag_agreement_reads_the_class_as_the_automatic_verdict_and_leaves_unsure_out():
    fab, corrupt = _check(), _check(cls="carried_corruption", state="mutated")
    assert (automatic_verdict(fab), automatic_verdict(corrupt)) == ("fabricated", "not_fabricated")
    a = flag_agreement([(fab, "fabricated"), (corrupt, "not_fabricated"), (fab, "unsure"),
                        (fab, "not_fabricated")])
    assert (a.reviewed, a.unsure, a.kappa.n) == (4, 1, 3)
    # p_o = 2/3; auto fab 2/3, human fab 1/3: p_e = 2/9 + 2/9 = 4/9; kappa = (2/9)/(5/9) = .4
    assert math.isclose(a.kappa.kappa, 0.4)
