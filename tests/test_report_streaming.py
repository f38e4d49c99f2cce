"""Whole-sweep commands stream (issue 24 item 6): the report reads a sweep a batch of rows at a
time and keeps, per row, only the summaries of its folds and checks; every figure is the one
the checks themselves give."""

from __future__ import annotations

import json
import math
from collections import Counter
from itertools import pairwise

import pytest
from conftest import definition, run_sweep
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.fabrication import (
    ANSWER_CLASSES,
    RowChecks,
    abstains,
    answer_counts,
    answer_reach,
)
from foldscope.core.row import Check, StoredCheck
from foldscope.core.stats import cell_summary, check_counts, clustering, icc_binary, icc_counts
from foldscope.core.study import FoldMeasure, RowFolds, at_ceiling
from foldscope.engine.report import sweep_report
from foldscope.engine.store import Store
from foldscope.engine.store import rows as rows_repo
from foldscope.engine.study import iter_study_rows


def _icc_of_every_check(groups: list[list[int]]) -> float:
    """The ANOVA ICC(1) as it was computed before rows were summarised: every check a term."""
    clusters = [[float(y) for y in g] for g in groups if len(g) > 0]
    k = len(clusters)
    total = sum(len(c) for c in clusters)
    if k < 2 or total - k <= 0:
        return math.nan
    grand = math.fsum(math.fsum(c) for c in clusters) / total
    means = [math.fsum(c) / len(c) for c in clusters]
    ssb = math.fsum(len(c) * (m - grand) ** 2 for c, m in zip(clusters, means))
    ssw = math.fsum((y - m) ** 2 for c, m in zip(clusters, means) for y in c)
    msb, msw = ssb / (k - 1), ssw / (total - k)
    n0 = (total - math.fsum(len(c) ** 2 for c in clusters) / total) / (k - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 0:
        return math.nan
    return (msb - msw) / denominator


GROUPS = st.lists(st.lists(st.integers(0, 1), max_size=16), max_size=40)


@settings(max_examples=300, deadline=None)
@given(GROUPS)
def test_the_icc_from_row_counts_is_the_icc_of_every_check_to_the_last_bit(groups):
    expected = _icc_of_every_check(groups)
    got = icc_counts(check_counts(groups))
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    assert (math.isnan(icc_binary(groups)) and math.isnan(expected)) or icc_binary(groups) == expected
    # Rows in another order, counts given as pairs: the same figure (fsum is exact).
    shuffled = list(reversed([(len(g), sum(g)) for g in groups]))
    again = icc_counts(shuffled)
    assert (math.isnan(again) and math.isnan(got)) or again == got
    c = clustering(groups)
    assert c.checks == sum(map(len, groups)) and c.rows == sum(1 for g in groups if g)


@settings(max_examples=100, deadline=None)
@given(GROUPS, st.lists(st.floats(0, 1), max_size=10), st.one_of(st.none(), st.floats(1, 20)))
def test_a_cell_summary_reads_only_row_counts(groups, recalls, de):
    s = cell_summary(recalls, groups, interval_de=de)
    assert s.checks == sum(map(len, groups))


CLASSES = st.sampled_from([*ANSWER_CLASSES, "honest_abstention"])
DETAILS = st.sampled_from([None, "nothing", "abstained", "other_value"])
CHECKS = st.lists(st.builds(
    lambda label, found, cls, detail, state, unit, flagged, cid: StoredCheck(
        label, "v", found, cls == "correct", cls == "honest_abstention", unit, state == "present",
        cls, state, detail, cid, 1, flagged),
    st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), st.sampled_from(["", "x", "v"])),
    CLASSES, DETAILS, st.sampled_from(["present", "mutated", "missing", "odd"]), st.booleans(),
    st.booleans(), st.integers(1, 10**6)), max_size=20)


@settings(max_examples=300, deadline=None)
@given(CHECKS, st.sampled_from([None, "stop", "length", "server_cut"]))
def test_a_rows_check_summary_counts_what_its_checks_count(checks, finish):
    summary = RowChecks.of(checks)
    assert len(summary) == len(checks) and summary.counts == (len(checks),
                                                             sum(c.correct for c in checks))
    assert summary.answer_counts() == answer_counts(checks)
    assert summary.reach(finish) == answer_reach(checks, finish)
    assert summary.abstains == any(abstains(c) for c in checks)
    assert summary.fabricates == any(c.classification == "fabricated" for c in checks)
    assert summary.flagged == sum(c.flagged for c in checks)
    assert summary.unit_dropped == sum(c.unit_dropped for c in checks)
    kinds = Counter((c.carrier_state, c.classification, c.class_detail) for c in checks)
    assert dict(summary.kinds) == kinds
    # Kinds in the order first asked (tables list unexpected states in that order).
    assert [k for k, _ in summary.kinds] == list(dict.fromkeys(
        (c.carrier_state, c.classification, c.class_detail) for c in checks))
    # A bare Check (not stored) has no flag.
    bare = [Check(*(getattr(c, f) for f in ("label", "expected", "found", "correct", "abstained",
                                            "unit_dropped", "in_carrier", "classification",
                                            "carrier_state", "class_detail"))) for c in checks]
    assert RowChecks.of(bare).flagged == 0


FOLDS = st.lists(st.builds(
    FoldMeasure, st.integers(0, 10), st.integers(0, 9600), st.integers(0, 50), st.integers(0, 5),
    st.one_of(st.none(), st.floats(0, 1.2)), st.sampled_from(["stop", "length", "other"]),
    st.sampled_from(["ok", "failed"])), max_size=8)


@settings(max_examples=200, deadline=None)
@given(FOLDS)
def test_a_rows_fold_summary_counts_what_its_folds_count(folds):
    s = RowFolds.of(folds)
    assert len(s) == len(folds) and s.final == (folds[-1] if folds else None)
    assert s.stop == sum(f.finish_reason == "stop" for f in folds)
    assert s.length == sum(f.finish_reason == "length" for f in folds)
    assert s.ceilinged == sum(f.fill_fraction is not None for f in folds)
    assert s.at_ceiling == sum(at_ceiling(f.fill_fraction) for f in folds)
    assert s.clipped == sum(f.clipped_chars > 0 for f in folds)
    assert s.clipped_chars == sum(f.clipped_chars for f in folds)


@pytest.fixture(scope="module")
def two_scenario_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("streaming") / "sweep.sqlite"
    data = definition(models=("sim/faithful", "sim/inventor", "sim/gister"),
                      arms=("j", "q", "m", "t", "u"), repeats=2)
    data["sweep"]["scenarios"] = ["smoke", "tiny"]
    return db, run_sweep(db, data)


def test_the_report_is_the_same_whatever_the_batch_of_rows(two_scenario_db, monkeypatch):
    db, sweep_id = two_scenario_db
    with Store(db, readonly=True) as store:
        whole = json.dumps(sweep_report(store, sweep_id), sort_keys=True)
    # Batches of one, two and seven rows: a row's folds and checks never split across batches
    # or lost at a batch's edge.
    for size in (1, 2, 7):
        monkeypatch.setattr(rows_repo, "ROW_BATCH", size)
        with Store(db, readonly=True) as store:
            batches = [len(b) for b in store.row_batches(sweep_id)]
            assert max(batches) == size and sum(batches) == len(store.rows(sweep_id))
            assert json.dumps(sweep_report(store, sweep_id), sort_keys=True) == whole


def test_streamed_rows_carry_their_own_folds_and_checks(two_scenario_db):
    db, sweep_id = two_scenario_db
    with Store(db, readonly=True) as store:
        streamed = list(iter_study_rows(store, sweep_id))
        assert [r.row.id for r in streamed] == [r.id for r in store.rows(sweep_id)]
        assert [r.row.position for r in streamed] == sorted(r.row.position for r in streamed)
        for r in streamed:
            checks = store.checks(r.row.id)
            assert r.checks == RowChecks.of(checks)
            assert r.folds.count == len(store.folds(r.row.id)) == r.row.folds_done
            final = store.folds(r.row.id)[-1] if r.folds.count else None
            assert (r.final is None) == (final is None)
            if final is not None:
                assert (r.final.fold_index, r.final.carrier_chars) == (final.fold_index,
                                                                        final.carrier_chars)
    assert all(a.row.position < b.row.position for a, b in pairwise(streamed))


# -- export: records streamed to the package --------------------------------------------------


def _stream_text(tmp_path, records, piece, forbidden=()):
    from foldscope.engine import evidence

    path = tmp_path / f"s{piece}.csv"
    stream = evidence._CSVStream(path, ("a", "b"), list(forbidden))
    stream.PIECE = piece
    with stream:
        for rec in records:
            stream.write(rec)
    return stream, path.read_bytes()


@pytest.mark.parametrize("piece", [1, 7, 64, 1 << 20])
def test_a_streamed_file_is_the_text_and_finds_private_values_across_pieces(tmp_path, piece):
    import csv
    import hashlib
    import io

    records = [(f"row-{i}", f"value {i} " * (i % 5)) for i in range(300)]
    stream, data = _stream_text(tmp_path, records, piece)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("a", "b"))
    writer.writerows(records)
    assert data == buffer.getvalue().encode("utf-8") and stream.records == 300
    assert stream.sha256 == hashlib.sha256(data).hexdigest() and not stream.private
    # A private value (or a key) whole only across two records' pieces is still found.
    secret = "/home/alice/private-study"
    split = [*records[:100], ("x", "/home/alice/"), *records[100:]]
    assert not _stream_text(tmp_path, split, piece, [secret])[0].private
    joined = [*records[:100], ("x", secret), *records[100:]]
    assert _stream_text(tmp_path, joined, piece, [secret])[0].private
    keyed = [*records[:150], ("x", "Bearer"), ("abcdefghijklmnop", "z"), *records[150:]]
    assert _stream_text(tmp_path, keyed, piece)[0].private  # as KEY_SHAPED reads the whole text
    # Never a key where the whole text has none: a piece is searched from a line's start.
    word = [*records[:50], ("xsk-0123456789abcdefghij", "y"), *records[50:]]
    assert not _stream_text(tmp_path, word, piece)[0].private


def test_an_export_written_in_small_pieces_is_the_same_package(two_scenario_db, tmp_path,
                                                               monkeypatch):
    from foldscope.engine import evidence
    from foldscope.engine.evidence import export_package
    from foldscope.engine.store import export as store_export

    db, _ = two_scenario_db
    whole = export_package([db], tmp_path / "whole")
    monkeypatch.setattr(evidence._CSVStream, "PIECE", 100)
    monkeypatch.setattr(store_export, "EXPORT_BATCH", 3)
    pieces = export_package([db], tmp_path / "pieces")
    assert pieces.digest == whole.digest and pieces.rows == whole.rows > 0
    for path in sorted((tmp_path / "whole").iterdir()):
        assert path.read_bytes() == (tmp_path / "pieces" / path.name).read_bytes(), path.name


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=60), st.integers(0, 5),
       st.integers(1, 500))
def test_the_bootstraps_block_of_draws_never_changes_its_interval(values, seed, draws):
    from foldscope.core import inference

    second = [1 - v for v in values]
    expected = inference.paired_bootstrap(values, second, resamples=300, seed=seed)
    saved = inference._BLOCK_DRAWS
    try:
        inference._BLOCK_DRAWS = draws
        assert inference.paired_bootstrap(values, second, resamples=300, seed=seed) == expected
    finally:
        inference._BLOCK_DRAWS = saved


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 80), min_size=4, max_size=4))
def test_fishers_weights_are_the_binomial_products(cells):
    from foldscope.core import inference

    a, b, c, d = cells
    r1, c1, total = a + b, a + c, a + b + c + d
    lo, hi = max(0, r1 + c1 - total), min(r1, c1)
    expected = {x: math.comb(c1, x) * math.comb(total - c1, r1 - x) for x in range(lo, hi + 1)}
    assert inference._hypergeometric_weights(r1, c1, total, lo, hi) == expected

