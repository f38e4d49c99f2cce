"""Per-cell metrics from running sums: the right base for each rate, the row-level interval."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.fabrication import ANSWER_COUNTS as ANSWER_CLASSES
from foldscope.core.metrics import METRIC_BY_NAME, METRICS, cell_metric, live_row_status
from foldscope.core.stats import row_mean, row_mean_from_sums
from foldscope.core.tally import CellTally


def Sums(fabricated=0, hedged=0, **fields):
    """A cell tally with the given sums (answer classes by name)."""
    counts = [0] * len(ANSWER_CLASSES)
    counts[ANSWER_CLASSES.index("fabricated")] = fabricated
    counts[ANSWER_CLASSES.index("hedged")] = hedged
    return CellTally("s", "m", "j", class_counts=tuple(counts), **fields)


def test_recall_carries_the_row_level_interval_of_the_evidence_package():
    recalls = [1.0, 0.5, 0.25]
    sums = Sums(recall_rows=3, recall_sum=sum(recalls), recall_sq_sum=sum(r * r for r in recalls))
    value = cell_metric("recall", sums)
    expected = row_mean(recalls)
    assert value.value == expected.mean and value.n == 3
    assert value.ci == expected.ci and value.tone == "fair"
    one = cell_metric("recall", Sums(recall_rows=1, recall_sum=0.9, recall_sq_sum=0.81))
    assert one.ci is None and one.tone == "good"
    assert cell_metric("recall", Sums()).value is None and cell_metric("recall", Sums()).tone == "none"


def test_rates_use_their_own_base():
    sums = Sums(folds=8, parse_failures=4, checks=20, abstained=5, fabricated=2, hedged=1,
                headings_rows=2, headings_sum=8, fill_rows=0)
    assert cell_metric("parse", sums).value == 0.5 and cell_metric("parse", sums).n == 8
    assert cell_metric("abstention", sums).value == 0.25
    assert cell_metric("fabrication", sums).value == 0.1
    assert cell_metric("fabrication", sums).tone == "fair"
    assert cell_metric("hedged", sums).value == 0.05
    assert cell_metric("headings", sums).value == 4.0
    assert cell_metric("fill", sums).value is None


def test_a_dead_runners_rows_read_interrupted():
    assert live_row_status("running", False) == "interrupted"
    assert live_row_status("running", True) == "running"
    assert live_row_status("done", False) == "done"


@settings(max_examples=80)
@given(st.lists(st.floats(0, 1), min_size=0, max_size=30))
def test_the_interval_from_sums_is_the_interval_from_values(values):
    a = row_mean(values)
    b = row_mean_from_sums(len(values), math.fsum(values), math.fsum(v * v for v in values))
    assert a.n == b.n
    if values:
        assert math.isclose(a.mean, b.mean, abs_tol=1e-12)
    if len(values) >= 2:
        assert math.isclose(a.sd, b.sd, abs_tol=1e-6)
        for x, y in zip(a.ci, b.ci):
            assert math.isclose(x, y, abs_tol=1e-6)


@settings(max_examples=60)
@given(st.integers(0, 50), st.integers(0, 50), st.integers(0, 50))
def test_every_metric_formats_in_five_characters(n, part, whole):
    part = min(part, whole)
    sums = Sums(recall_rows=n, recall_sum=n * 0.5, recall_sq_sum=n * 0.25, headings_rows=n,
                headings_sum=5 * n, fill_rows=n, fill_sum=0.3 * n, folds=whole,
                parse_failures=part, checks=whole, abstained=part, fabricated=part, hedged=part)
    for metric in METRICS:
        value = cell_metric(metric.name, sums)
        assert value.tone in ("good", "fair", "poor", "none")
        assert len(metric.format(value.value)) == 5
    assert set(METRIC_BY_NAME) == {m.name for m in METRICS}
