"""The study's tables (core.study), on hand-built typed rows with hand-computed figures."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.errors import StatsError
from foldscope.core.fabrication import abstains
from foldscope.core.row import Check, RowRecord
from foldscope.core.study import (
    GIST_FILL,
    NO_FILL,
    OVER_WRITING,
    RECALLED,
    UNDER_WRITING,
    FoldMeasure,
    StudyRow,
    at_ceiling,
    cell_text,
    check_gist_fill,
    failure_mode,
    fill_points,
    fisher_floor,
    study_tables,
)

Z = 1.959963984540054  # two-sided 95 % normal quantile


def fold(i=0, *, fill=None, headings=5, chars=100, clipped=0, finish="stop"):
    return FoldMeasure(fold_index=i, carrier_chars=chars, clipped_chars=clipped,
                       headings_carried=headings, fill_fraction=fill, finish_reason=finish,
                       parse_status="ok")


def check(cls="correct", state="present", detail=None, label="x"):
    return Check(label=label, expected="v", found=None, correct=cls == "correct",
                 abstained=False, unit_dropped=False, in_carrier=state == "present",
                 classification=cls, carrier_state=state, class_detail=detail)


_ids = iter(range(1, 10_000))


def row(model, arm, repeat, recall, *, folds=(), checks=(), valid=True, scenario="kestrel"):
    rid = next(_ids)
    r = RowRecord(id=rid, position=rid, scenario=scenario, model=model, arm=arm, repeat=repeat,
                  status="done", recall=recall, valid=valid,
                  validity_reason="ok" if valid else "catch_up_distributed")
    return StudyRow(r, tuple(folds), tuple(checks))


def checks_for(recall, n=4):
    """n graded checks of which recall·n are correct, the rest honest abstentions."""
    k = round(recall * n)
    return [check("correct")] * k + [check("honest_abstention", "missing")] * (n - k)


def two_models():
    """D over-writes in j (fill 0.7) and is rescued by q; G writes a gist (fill 0.04) in both."""
    rows = []
    for rep in (0, 1):
        rows.append(row("D", "j", rep, 0.0, folds=[fold(0, fill=0.2), fold(1, fill=0.7)],
                        checks=checks_for(0.0)))
        rows.append(row("D", "q", rep, [1.0, 0.5][rep], folds=[fold(0, fill=0.4)],
                        checks=checks_for([1.0, 0.5][rep])))
        rows.append(row("G", "j", rep, 0.0, folds=[fold(0, fill=0.04)], checks=checks_for(0.0)))
        rows.append(row("G", "q", rep, 0.25, folds=[fold(0, fill=0.03)],
                        checks=checks_for(0.25)))
    # An invalid row never enters a figure, whatever its recall.
    rows.append(row("D", "j", 2, 1.0, folds=[fold(0, fill=0.9)], checks=checks_for(1.0),
                    valid=False))
    return rows


def test_failure_mode_rule():
    assert GIST_FILL == 0.5  # inside the study's gap: not rescued at 6 % and 36 %, rescued ≥ 59 %
    assert failure_mode(0.5, 0.01) == RECALLED
    assert failure_mode(0.49, 0.5) == OVER_WRITING and failure_mode(0.3, 0.59) == OVER_WRITING
    assert failure_mode(0.0, 0.4999) == UNDER_WRITING and failure_mode(0.3, 0.36) == UNDER_WRITING
    assert failure_mode(0.0, None) == NO_FILL
    # The cut is a parameter.
    assert failure_mode(0.0, 0.36, gist_fill=0.1) == OVER_WRITING
    assert failure_mode(0.0, 0.36, gist_fill=0.4) == UNDER_WRITING


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan"), float("inf"), True, "0.5"])
def test_the_cut_must_lie_between_0_and_1(bad):
    with pytest.raises(StatsError, match="between 0 and 1"):
        check_gist_fill(bad)
    with pytest.raises(StatsError):
        study_tables([], ["A"], ["j"], gist_fill=bad)


def test_the_cut_is_shown_with_the_tables_and_moves_the_modes():
    study = study_tables(two_models(), ["D", "G"], ["j", "q"], gist_fill=0.8)
    assert study.gist_fill == 0.8
    partition = {r["model"]: r for r in study.table("partition").records()}
    assert partition["D"]["failure_mode"] == UNDER_WRITING  # 0.7 < 0.8
    assert any("fill ≥ 0.8" in n for n in study.table("partition").notes)
    assert "0.8" in study.table("failure_mode_separation").title


def test_recall_table_counts_rows_and_uses_only_valid_rows():
    rows = [row("A", "j", r, v) for r, v in enumerate((0.5, 0.75, 1.0))]
    rows.append(row("A", "j", 3, 0.0, valid=False))
    study = study_tables(rows, ["A"], ["j"])
    [rec] = study.table("recall").records()
    assert rec["rows"] == 4 and rec["valid_rows"] == 3
    assert rec["mean_recall"] == pytest.approx(0.75)
    # sd 0.25 over three rows; t(0.975, 2) = 4.302652729911275
    assert rec["ci_low"] == pytest.approx(0.75 - 4.302652729911275 * 0.25 / math.sqrt(3))
    assert rec["ci_high"] == 1.0  # clipped to recall's range


def test_partition_contrast_names_the_failure_mode_and_whether_q_rescues():
    study = study_tables(two_models(), ["D", "G"], ["j", "q"])
    by_model = {r["model"]: r for r in study.table("partition").records()}
    d, g = by_model["D"], by_model["G"]
    assert d["j_rows"] == 2 and d["j_recall"] == 0.0
    assert d["j_fill"] == pytest.approx(0.7)  # the final fold's fill, invalid row left out
    assert d["failure_mode"] == OVER_WRITING
    assert d["q_recall"] == pytest.approx(0.75) and d["pairs"] == 2
    # Paired differences q − j are 1.0 and 0.5: resampled means can only be 1, 0.75 or 0.5,
    # each end with probability 1/4, so the 95 % percentile interval is [0.5, 1.0].
    assert d["q_minus_j"] == pytest.approx(0.75)
    assert (d["boot_low"], d["boot_high"]) == pytest.approx((0.5, 1.0))
    # Rows >= 0.5: q 2 of 2, j 0 of 2 -> two-sided Fisher p = 2 · 1/C(4, 2) = 1/3.
    assert (d["j_recalled"], d["q_recalled"]) == (0, 2)
    assert d["fisher_p"] == pytest.approx(1 / 3)
    assert d["fisher_floor"] == pytest.approx(1 / 3)  # the best two rows per arm can do
    assert d["q_rescues"] == "yes"
    assert g["failure_mode"] == UNDER_WRITING and g["j_fill"] == pytest.approx(0.04)
    assert g["q_recall"] == pytest.approx(0.25) and g["q_rescues"] == "no"
    assert g["fisher_p"] == pytest.approx(1.0)


def test_a_model_that_recalls_under_j_has_nothing_to_rescue():
    rows = [row("F", a, r, 1.0, folds=[fold(fill=0.4)]) for a in ("j", "q") for r in (0, 1)]
    [f] = study_tables(rows, ["F"], ["j", "q"]).table("partition").records()
    assert f["failure_mode"] == RECALLED and f["q_rescues"] == "n/a"


def test_pairs_are_by_repeat_and_unpaired_rows_are_left_out_of_the_bootstrap():
    rows = [row("A", "j", 0, 0.0, folds=[fold(fill=0.5)]), row("A", "q", 0, 1.0),
            row("A", "q", 1, 1.0)]
    [a] = study_tables(rows, ["A"], ["j", "q"]).table("partition").records()
    assert a["pairs"] == 1 and a["q_rows"] == 2 and a["q_minus_j"] == 1.0
    # Fisher uses every valid row: q 2/2 vs j 0/1. With the margins fixed, q's recalled rows
    # are 2 with P = C(2,2)·C(1,0)/C(3,2) = 1/3 or 1 with P = 2/3, so two-sided p = 1/3.
    assert a["fisher_p"] == pytest.approx(1 / 3)


def test_fisher_floor():
    # 2 vs 2: 2/C(4, 2); 3 vs 1: the extreme tables have p 1/4 (q all, j none) either way.
    assert fisher_floor(2, 2) == pytest.approx(1 / 3)
    assert fisher_floor(1, 3) == pytest.approx(0.25)
    assert fisher_floor(0, 3) is None


def test_headings_and_correlations():
    rows = [row("A", "m", 0, 0.0, folds=[fold(headings=5), fold(headings=0)]),
            row("A", "m", 1, 0.0, folds=[fold(headings=0)]),
            row("A", "j", 0, 1.0, folds=[fold(headings=5, fill=0.5)]),
            row("A", "j", 1, 0.5, folds=[fold(headings=5, fill=0.5)])]
    study = study_tables(rows, ["A"], ["j", "m"])
    assert study.table("headings").rows == ((0, 2, 0.0, 0), (5, 2, 0.75, 2))
    corr = {r["measure"]: r for r in study.table("correlations").records()}
    # x = 0,0,5,5; y = 0,0,1,0.5: Sxy = 3.75, Sxx = 25, Syy = 0.6875.
    assert corr["headings carried"]["r"] == pytest.approx(3.75 / math.sqrt(25 * 0.6875))
    assert corr["headings carried"]["n"] == 4
    # Two rows have a fill fraction: too few for r, reported as undefined, not raised.
    assert corr["fill fraction"]["n"] == 2 and corr["fill fraction"]["r"] is None


def test_ceiling_table_compares_j_and_t():
    rows = [row("A", "j", 0, 1.0, folds=[fold(0, chars=900), fold(1, chars=1000)]),
            row("A", "t", 0, 0.25, folds=[fold(0, chars=800, clipped=40),
                                          fold(1, chars=700, clipped=10)]),
            row("A", "t", 1, 0.5, folds=[fold(0, chars=500)])]
    study = study_tables(rows, ["A"], ["j", "t"])
    recs = {r["arm"]: r for r in study.table("ceiling").records()}
    assert recs["j"]["rows_recalled"] == 1 and recs["j"]["carried_chars"] == 1000
    t = recs["t"]
    assert (t["valid_rows"], t["rows_recalled"], t["folds"], t["folds_clipped"],
            t["clipped_chars"]) == (2, 1, 3, 2, 50)
    assert t["carried_chars"] == pytest.approx(600) and t["max_carried_chars"] == 700


def test_capacity_table_has_m_and_u_rows_when_present():
    rows = [row("A", "j", 0, 1.0, folds=[fold(0, chars=1000)]),
            row("A", "t", 0, 0.0, folds=[fold(0, chars=500)]),
            row("A", "m", 0, 1.0, folds=[fold(0, chars=3000)]),
            row("A", "u", 0, 1.0, folds=[fold(0, chars=2000, clipped=300)]),
            row("A", "q", 0, 1.0)]
    study = study_tables(rows, ["A"], ["j", "q", "t", "m", "u"])
    recs = {r["arm"]: r for r in study.table("ceiling").records()}
    assert list(recs) == ["j", "t", "m", "u"]  # q is no capacity arm
    assert recs["u"]["folds_clipped"] == 1 and recs["m"]["carried_chars"] == 3000
    # m and u alone make the table too (the plain-text capacity pair).
    only_plain = study_tables([row("A", a, 0, 1.0) for a in "mu"], ["A"], ["m", "u"])
    assert [r["arm"] for r in only_plain.table("ceiling").records()] == ["m", "u"]


def test_pooled_representation_contrast_with_fisher():
    # Schema arms: 4 of 23 rows recalled over two models; plain text: 8 of 8.
    rows = ([row("A", "j", r, 1.0 if r < 2 else 0.0) for r in range(12)]
            + [row("B", "t", r, 1.0 if r < 2 else 0.25) for r in range(11)]
            + [row(m, "m", r, 1.0) for m in "AB" for r in range(2)]
            + [row(m, "u", r, 0.75) for m in "AB" for r in range(2)])
    study = study_tables(rows, ["A", "B"], ["j", "t", "m", "u"])
    recs = {r["contrast"]: r for r in study.table("representation").records()}
    pooled = recs["schema vs plain text"]
    assert (pooled["a_arms"], pooled["a_recalled"], pooled["a_rows"]) == ("j,t", 4, 23)
    assert (pooled["b_arms"], pooled["b_recalled"], pooled["b_rows"]) == ("m,u", 8, 8)
    from scipy.stats import fisher_exact as scipy_fisher
    assert pooled["fisher_p"] == pytest.approx(scipy_fisher([[4, 19], [8, 0]])[1])
    assert recs["full capacity"]["a_rows"] == 12 and recs["reduced capacity"]["b_rows"] == 4
    # With only j and m the pooled line is the one contrast (not repeated per capacity).
    jm = study_tables([row("A", a, 0, 1.0) for a in "jm"], ["A"], ["j", "m"])
    assert [r["contrast"] for r in jm.table("representation").records()] == ["schema vs plain text"]
    jq = study_tables([row("A", a, 0, 1.0) for a in "jq"], ["A"], ["j", "q"])
    assert jq.table("representation") is None
    assert any(n.startswith("representation contrast") for n in jq.notes)


def _failing(model, fill, q_recall, reps=3):
    out = []
    for r in range(reps):
        out.append(row(model, "j", r, 0.0, folds=[fold(0, fill=fill)], checks=checks_for(0.0)))
        out.append(row(model, "q", r, q_recall, folds=[fold(0, fill=0.5)],
                       checks=checks_for(q_recall)))
    return out


def test_failure_mode_separation_fills_rescues_margin_and_chance():
    # The study's shape: six over-writers rescued (fills 0.59..1.00), two gisters not (0.06, 0.36).
    fills = {"D1": 0.59, "D2": 0.7, "D3": 0.8, "D4": 0.9, "D5": 0.95, "D6": 1.0}
    rows = [r for m, f in fills.items() for r in _failing(m, f, 1.0)]
    rows += _failing("G1", 0.06, 0.0) + _failing("G2", 0.36, 0.25)
    rows += [row("F", a, r, 1.0, folds=[fold(0, fill=0.4)]) for a in "jq" for r in range(3)]
    models = [*fills, "G1", "G2", "F"]
    recs = study_tables(rows, models, ["j", "q"]).table("failure_mode_separation").records()
    over, under, sep = recs
    assert over["group"] == OVER_WRITING and (over["models"], over["rescued"]) == (6, 6)
    assert over["fills"] == "0.59, 0.70, 0.80, 0.90, 0.95, 1.00"
    assert (over["fill_min"], over["fill_max"]) == (0.59, 1.0)
    assert under["group"] == UNDER_WRITING and (under["rescued"], under["not_rescued"]) == (0, 2)
    assert under["fills"] == "0.06, 0.36"
    assert (sep["n"], sep["k"], sep["rescued"], sep["not_rescued"]) == (8, 2, 6, 2)
    assert sep["margin"] == pytest.approx(0.59 - 0.36)
    assert sep["chance"] == pytest.approx(1 / 28) and sep["cut_in_gap"] is True
    # A cut outside the gap says so; the separation itself does not depend on the cut.
    low = study_tables(rows, models, ["j", "q"], gist_fill=0.3).table("failure_mode_separation")
    assert low.records()[2]["cut_in_gap"] is False
    assert low.records()[2]["chance"] == pytest.approx(1 / 28)
    # Overlapping fills: no clean separation, no chance figure.
    rows += _failing("G3", 0.8, 0.0)
    sep = study_tables(rows, [*models, "G3"], ["j", "q"]).table(
        "failure_mode_separation").records()[2]
    assert sep["margin"] < 0 and sep["chance"] is None and sep["k"] == 3


def test_carrier_had_it_answer_missed_it_per_arm():
    had = [check("correct"), check("read_failure", "present", "nothing"),
           check("hedged", "present"), check("honest_abstention", "missing")]
    rows = [row("A", "j", 0, 0.25, checks=had), row("B", "j", 0, 0.25, checks=had),
            row("A", "q", 0, 1.0, checks=[check("correct")] * 4),
            row("A", "q", 1, 0.0, checks=[check("read_failure", "present")] * 4, valid=False)]
    recs = {r["arm"]: r for r in study_tables(rows, ["A", "B"], ["j", "q"]).table(
        "carrier_had_answer_missed").records()}
    j = recs["j"]
    assert (j["valid_rows"], j["graded"], j["carrier_had"], j["answered"], j["missed"]) == \
        (2, 8, 6, 2, 4)
    assert j["missed_share"] == pytest.approx(4 / 6)
    assert (j["read_failure"], j["hedged"], j["honest_abstention"]) == (2, 2, 0)
    q = recs["q"]  # the invalid row is left out
    assert (q["carrier_had"], q["missed"], q["missed_share"]) == (4, 0, 0.0)


def test_tables_that_need_a_missing_arm_are_left_out_and_say_so():
    rows = [row("A", a, 0, 1.0) for a in ("j", "m")]
    study = study_tables(rows, ["A"], ["j", "m"])
    assert study.table("partition") is None and study.table("ceiling") is None
    assert "partition contrast (j vs q) left out: no q arm in this sweep" in study.notes
    assert "capacity table (j vs t, m vs u) left out: no t arm and no u arm in this sweep" \
        in study.notes
    assert study.table("failure_mode_separation") is None
    assert "failure-mode separation (j vs q) left out: no q arm in this sweep" in study.notes
    # The ladder runs over the arms it has, and says which rung is missing.
    assert [r["rung"] for r in study.table("ladder").records()] == ["j→m"]
    assert any("no q arm" in n for n in study.notes if n.startswith("ladder"))
    only_m = study_tables([row("A", "m", 0, 1.0)], ["A"], ["m"])
    assert only_m.table("ladder") is None
    assert "ladder (j → q → m) left out: no j arm and no q arm in this sweep" in only_m.notes


def test_ladder_fisher_per_rung():
    rows = ([row("A", "j", r, 0.0) for r in range(3)] + [row("A", "q", r, 1.0) for r in range(3)]
            + [row("A", "m", r, v) for r, v in enumerate((1.0, 1.0, 0.0))])
    recs = study_tables(rows, ["A"], ["j", "q", "m"]).table("ladder").records()
    jq, qm = recs
    # j 0/3 vs q 3/3: two-sided p = 2 / C(6, 3) = 0.1.
    assert (jq["rung"], jq["from_recalled"], jq["to_recalled"]) == ("j→q", 0, 3)
    assert jq["fisher_p"] == pytest.approx(0.1) and jq["fisher_floor"] == pytest.approx(0.1)
    # q 3/3 vs m 2/3: every table is at least as likely as the observed one -> p = 1.
    assert qm["fisher_p"] == pytest.approx(1.0)


def test_ceiling_as_a_target_counts_every_fold_and_the_half_percent_band():
    rows = [row("A", "j", 0, 1.0, folds=[fold(0, fill=1.004), fold(1, fill=0.994, finish="length"),
                                         fold(2, fill=1.0, finish="content_filter"),
                                         fold(3, fill=0.5)]),
            row("A", "j", 1, None, folds=[fold(0, fill=0.995, finish="length")], valid=False),
            row("A", "m", 0, 1.0, folds=[fold(0), fold(1, finish="length")])]
    recs = {r["arm"]: r for r in
            study_tables(rows, ["A"], ["j", "m"]).table("ceiling_target").records()}
    j = recs["j"]
    assert (j["folds"], j["stop"], j["length"], j["other"]) == (5, 2, 2, 1)
    assert j["stop_share"] == pytest.approx(0.4) and j["length_share"] == pytest.approx(0.4)
    assert j["at_ceiling"] == 3 and j["at_ceiling_share"] == pytest.approx(0.6)
    m = recs["m"]
    assert (m["folds"], m["length"], m["at_ceiling"], m["at_ceiling_share"]) == (2, 1, None, None)


def test_at_ceiling_band():
    assert at_ceiling(1.005) and at_ceiling(0.995) and at_ceiling(1.0)
    assert not at_ceiling(1.0051) and not at_ceiling(0.9949) and not at_ceiling(None)


def test_carrier_answer_and_abstention_vs_fabrication():
    fab = [check("fabricated", "missing"), check("correct")]
    mixed = [check("fabricated", "missing"), check("honest_abstention", "missing"),
             check("correct")]
    read_abst = [check("read_failure", "present", "abstained"), check("carried_corruption",
                                                                      "mutated")]
    passing = [check("correct"), check("correct"), check("fabricated", "missing")]
    rows = [row("A", "j", 0, 0.0, checks=fab + [check("read_failure", "present", "other_value")]),
            row("A", "j", 1, 1 / 3, checks=mixed),
            row("A", "j", 2, 0.0, checks=read_abst),
            row("A", "j", 3, 2 / 3, checks=passing),
            row("A", "j", 4, 0.0, checks=[check("fabricated", "missing")], valid=False)]
    study = study_tables(rows, ["A"], ["j"])
    [rec] = study.table("answer_classes").records()
    assert (rec["valid_rows"], rec["correct"], rec["fabricated"], rec["honest_abstention"],
            rec["read_failure"], rec["carried_corruption"], rec["hedged"]) == (4, 4, 3, 1, 2, 1, 0)
    assert (rec["failing_rows"], rec["fabricate_never_abstain"], rec["abstain_somewhere"]) == \
        (3, 1, 2)
    cross = {r["carrier"]: r for r in study.table("carrier_answer").records()}
    assert (cross["present"]["correct"], cross["present"]["read_failure"],
            cross["present"]["total"]) == (4, 2, 6)
    assert (cross["missing"]["fabricated"], cross["missing"]["honest_abstention"]) == (3, 1)
    assert cross["mutated"]["carried_corruption"] == 1 and cross["mutated"]["total"] == 1


def test_abstains():
    assert abstains(check("honest_abstention", "missing"))
    assert abstains(check("read_failure", "present", "abstained"))
    assert not abstains(check("read_failure", "present", "nothing"))
    assert not abstains(check("fabricated", "missing"))


def _ck(*values):
    return [check("correct") if v else check("honest_abstention", "missing") for v in values]


def test_icc_line_is_the_pooled_icc_with_the_cells_mean_as_a_diagnostic():
    rows = [row("A", "j", 0, 1.0, checks=_ck(1, 1)), row("A", "j", 1, 0.0, checks=_ck(0, 0)),
            # Every check alike: the cell's ICC is undefined and the diagnostic skips it.
            row("A", "q", 0, 1.0, checks=_ck(1, 1)), row("A", "q", 1, 1.0, checks=_ck(1, 1))]
    [rec] = study_tables(rows, ["A"], ["j", "q"]).table("icc").records()
    # Pooled over the four rows: grand mean 0.75, MSB = 1.5 / 3, MSW = 0 -> ICC 1; m = 2, DE 2.
    assert rec == {"valid_rows": 4, "checks": 8, "m": 2.0, "icc_pooled": 1.0, "icc_used": 1.0,
                   "design_effect": 2.0, "effective_n": 4.0, "icc_cells_diagnostic": 1.0,
                   "cells_used": 1}


def test_pooled_and_per_cell_iccs_differ_and_only_the_pooled_one_discounts():
    # Cell j: rows alike between, different inside (ICC -1); cell q: all-or-nothing (ICC 1).
    rows = [row("A", "j", 0, 0.5, checks=_ck(1, 0)), row("A", "j", 1, 0.5, checks=_ck(1, 0)),
            row("A", "q", 0, 1.0, checks=_ck(1, 1)), row("A", "q", 1, 0.0, checks=_ck(0, 0)),
            row("A", "q", 2, 1.0, checks=_ck(1, 1), valid=False)]
    [rec] = study_tables(rows, ["A"], ["j", "q"]).table("icc").records()
    assert rec["icc_cells_diagnostic"] == pytest.approx(0.0) and rec["cells_used"] == 2
    # Pooled: MSB = 1/3, MSW = 1/4, n0 = 2 -> ICC = (1/12) / (7/12) = 1/7; DE = 8/7.
    assert rec["icc_pooled"] == pytest.approx(1 / 7) and rec["icc_used"] == pytest.approx(1 / 7)
    assert rec["design_effect"] == pytest.approx(8 / 7)
    assert rec["effective_n"] == pytest.approx(7.0) and rec["valid_rows"] == 4


def test_a_negative_icc_is_shown_raw_and_never_discounts_below_independent_checks():
    # Rows alike between, different inside: MSB = 0, MSW = 0.5, n0 = 2 -> ICC = -1.
    rows = [row("A", "j", 0, 0.5, checks=_ck(1, 0)), row("A", "j", 1, 0.5, checks=_ck(1, 0))]
    [rec] = study_tables(rows, ["A"], ["j"]).table("icc").records()
    assert rec["icc_pooled"] == pytest.approx(-1.0) and rec["icc_used"] == 0.0
    assert rec["design_effect"] == 1.0 and rec["effective_n"] == 4.0


def test_an_undefined_pooled_icc_counts_each_row_as_one_trial():
    rows = [row("A", "j", r, 1.0, checks=_ck(1, 1, 1)) for r in range(3)]
    [rec] = study_tables(rows, ["A"], ["j"]).table("icc").records()
    assert rec["icc_pooled"] is None and rec["icc_used"] == 1.0
    assert rec["design_effect"] == 3.0 and rec["effective_n"] == 3.0


def test_rows_recalled_with_a_wilson_interval_over_rows():
    rows = [row("A", "j", r, v) for r, v in enumerate((1.0, 0.5, 0.25))]
    [rec] = study_tables(rows, ["A"], ["j"]).table("rows_recalled").records()
    assert (rec["valid_rows"], rec["rows_recalled"]) == (3, 2)
    p, n = 2 / 3, 3
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    assert rec["share"] == pytest.approx(p)
    assert (rec["wilson_low"], rec["wilson_high"]) == pytest.approx((centre - half, centre + half))


def test_scenarios_are_never_pooled():
    with pytest.raises(ValueError, match="one scenario"):
        study_tables([row("A", "j", 0, 1.0), row("A", "j", 0, 1.0, scenario="smoke")],
                     ["A"], ["j"])


def test_fill_points_colour_rows_by_failure_mode():
    points = fill_points(two_models())
    modes = {(p.model, p.arm, p.repeat): p.mode for p in points}
    assert modes[("D", "j", 0)] == OVER_WRITING and modes[("G", "j", 1)] == UNDER_WRITING
    assert modes[("D", "q", 0)] == RECALLED and len(points) == 8  # the invalid row left out


def test_cell_text():
    assert cell_text("fisher_p", 1 / 3) == "0.333" and cell_text("p_value", 0.00012345) == "0.000123"
    assert cell_text("mean_recall", 0.75) == "0.750" and cell_text("rows", 3) == "3"
    assert cell_text("icc", None) == "—" and cell_text("carried_chars", 600.4) == "600"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", "B"]), st.sampled_from(["j", "q", "m", "t"]),
                          st.integers(0, 3), st.sampled_from([0.0, 0.25, 0.5, 1.0]),
                          st.booleans()), max_size=30))
def test_counts_agree_across_tables_for_any_rows(spec):
    rows = [row(m, a, r, v, valid=ok, folds=[fold(fill=0.3 if a != "m" else None)])
            for m, a, r, v, ok in spec]
    study = study_tables(rows, ["A", "B"], ["j", "q", "m", "t"])
    recall = {(r["model"], r["arm"]): r for r in study.table("recall").records()}
    recalled = {(r["model"], r["arm"]): r for r in study.table("rows_recalled").records()}
    assert recall.keys() == recalled.keys()
    for key, rec in recall.items():
        cell = [s for s in spec if (s[0], s[1]) == key]
        assert rec["rows"] == len(cell)
        assert rec["valid_rows"] == recalled[key]["valid_rows"] == sum(s[4] for s in cell)
        assert recalled[key]["rows_recalled"] == sum(s[4] and s[3] >= 0.5 for s in cell)
    headings = study.table("headings")
    assert sum(r[1] for r in headings.rows) == sum(s[4] for s in spec)
