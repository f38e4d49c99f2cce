"""The report's per-cell interval is the design-effect-adjusted one, named in the JSON (issue 8)."""

import pytest
from conftest import definition, run_sweep

from foldscope.core.stats import cell_summary
from foldscope.engine.report import INTERVAL_METHOD, _interval, sweep_report
from foldscope.engine.store import Store


def test_negative_icc_is_shown_as_measured_with_de_floored_at_one():
    summary = cell_summary([0.5, 0.5, 0.5], [[1, 0], [0, 1], [1, 0]])
    assert summary.icc < 0
    shown = _interval(summary)
    assert shown["icc"] == pytest.approx(summary.icc)
    assert shown["design_effect"] == 1.0 and shown["design_effect_raw"] < 1.0
    assert "negative ICC" in shown["icc_note"]
    assert shown["check_ci95"] == list(summary.ci)
    assert shown["interval_method"] == INTERVAL_METHOD == "wilson_design_effect"


def test_all_or_nothing_rows_widen_the_interval():
    summary = cell_summary([1.0, 0.0], [[1] * 14, [0] * 14])
    shown = _interval(summary)
    assert shown["design_effect"] == pytest.approx(14.0)
    assert shown["effective_checks"] == pytest.approx(2.0)
    low, high = shown["check_ci95"]
    assert high - low > 0.6 and shown["icc_note"] is None


def test_report_json_names_one_interval_method_per_cell(tmp_path):
    db = tmp_path / "r.sqlite"
    sweep_id = run_sweep(db, definition(repeats=2))
    with Store(db, readonly=True) as store:
        cells = sweep_report(store, sweep_id)["cells"]
    assert cells
    for cell in cells:
        assert cell["interval_method"] == "wilson_design_effect"
        if cell["check_ci95"] is not None:
            low, high = cell["check_ci95"]
            assert 0.0 <= low <= high <= 1.0
            assert cell["design_effect"] is None or cell["design_effect"] >= 1.0
