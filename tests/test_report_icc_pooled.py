"""The report's ``icc_pooled`` is the pooled one-way ICC(1) recomputed straight from the database
(issue 18 item 5), and every check-level interval names the design effect it used."""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import definition, run_sweep
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.cli.main import main
from foldscope.core.stats import icc_binary

FOUR_SIMS = ("sim/faithful", "sim/describer", "sim/gister", "sim/garbler")


def anova_icc(groups: list[list[int]]) -> float:
    """One-way random-effects ICC(1), written out from the textbook ANOVA table on its own
    (sums of squares about the grand mean, Searle's n0 for unequal cluster sizes)."""
    ys = [y for g in groups for y in g]
    big_n, k = len(ys), len(groups)
    grand = sum(ys) / big_n
    sst = sum((y - grand) ** 2 for y in ys)
    ssb = sum(len(g) * (sum(g) / len(g) - grand) ** 2 for g in groups)
    ssw = sst - ssb
    msb, msw = ssb / (k - 1), ssw / (big_n - k)
    n0 = (big_n - sum(len(g) ** 2 for g in groups) / big_n) / (k - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator <= 1e-15:
        raise ZeroDivisionError
    return (msb - msw) / denominator


@pytest.fixture(scope="module")
def four_sim_db(tmp_path_factory) -> tuple[Path, str]:
    db = tmp_path_factory.mktemp("icc-pooled") / "sweep.sqlite"
    sweep_id = run_sweep(db, definition(scenario="kestrel", models=FOUR_SIMS,
                                        arms=("j", "q", "m"), repeats=2))
    return db, sweep_id


def _db_groups(db: Path, sweep_id: str) -> dict[str, list[list[int]]]:
    """Each scenario's valid rows' graded checks, read with plain SQL (not the store)."""
    by_row: dict[tuple[str, int], list[int]] = defaultdict(list)
    with sqlite3.connect(db) as conn:
        for scenario, row_id, correct in conn.execute(
                "SELECT r.scenario, r.id, c.correct FROM checks c JOIN rows r ON r.id = c.row_id "
                "WHERE r.sweep_id = ? AND r.valid = 1 ORDER BY r.id, c.id", [sweep_id]):
            by_row[(scenario, row_id)].append(int(correct))
    out: dict[str, list[list[int]]] = defaultdict(list)
    for (scenario, _), checks in by_row.items():
        out[scenario].append(checks)
    return out


def test_icc_pooled_equals_the_one_way_icc_recomputed_from_the_database(four_sim_db, capsys):
    db, sweep_id = four_sim_db
    assert main(["report", "--db", str(db), "--sweep", sweep_id, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    groups = _db_groups(db, sweep_id)["kestrel"]
    [scenario] = data["study"]["scenarios"]
    [line] = scenario["tables"]["icc"]["rows"]
    expected = anova_icc(groups)
    checks = sum(map(len, groups))
    m = checks / len(groups)
    assert line["valid_rows"] == len(groups) and line["checks"] == checks
    assert line["icc_pooled"] == pytest.approx(expected, abs=1e-9)
    used = min(1.0, max(0.0, expected))
    assert line["icc_used"] == pytest.approx(used, abs=1e-9)
    assert line["design_effect"] == pytest.approx(1 + (m - 1) * used, abs=1e-9)
    assert line["effective_n"] == pytest.approx(checks / (1 + (m - 1) * used), abs=1e-6)
    # The per-cell figure stays, named as the diagnostic it is; it is not the pooled one here.
    assert "icc_cells_diagnostic" in line and "icc" not in line
    # Every cell's interval uses that DE and says so.
    for cell in data["cells"]:
        if cell["check_ci95"] is None:
            continue
        assert cell["interval_design_effect_source"] == "icc_pooled"
        assert cell["interval_design_effect"] == pytest.approx(line["design_effect"], abs=1e-4)
        assert cell["effective_checks"] == pytest.approx(cell["checks"] / line["design_effect"])


def test_the_table_output_shows_the_pooled_figures(four_sim_db, capsys):
    db, sweep_id = four_sim_db
    assert main(["report", "--db", str(db), "--sweep", sweep_id]) == 0
    out = capsys.readouterr().out
    expected = anova_icc(_db_groups(db, sweep_id)["kestrel"])
    line = next(ln for ln in out.splitlines() if ln.startswith("kestrel: icc_pooled"))
    assert f"icc_pooled {expected:.3f}" in line and "icc_cells_diagnostic" in line
    assert "intervals use the pooled DE" in out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 1), min_size=1, max_size=16), min_size=2, max_size=30))
def test_the_one_implementation_matches_the_textbook_formula(groups):
    ys = [y for g in groups for y in g]
    ours = icc_binary(groups)
    if len(ys) - len(groups) <= 0 or len(set(ys)) == 1:
        assert math.isnan(ours)
        return
    try:
        reference = anova_icc(groups)
    except ZeroDivisionError:  # MSB + (n0 − 1)·MSW = 0: undefined
        assert math.isnan(ours)
        return
    assert ours == pytest.approx(reference, rel=1e-9, abs=1e-9)


def test_each_scenario_has_its_own_pooled_icc(tmp_path, capsys):
    # Scenarios are never pooled: a two-scenario sweep has one icc_pooled per scenario, each the
    # ICC of that scenario's valid rows only, and each cell's interval uses its own scenario's DE.
    data = definition(models=("sim/faithful", "sim/describer", "sim/gister"), arms=("j", "q"),
                      repeats=2)
    del data["sweep"]["scenario"]
    data["sweep"]["scenarios"] = ["smoke", "kestrel-single"]
    db = tmp_path / "two.sqlite"
    sweep_id = run_sweep(db, data)
    assert main(["report", "--db", str(db), "--sweep", sweep_id, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    groups = _db_groups(db, sweep_id)
    assert set(groups) == {"smoke", "kestrel-single"}
    design_effects = {}
    for scenario in report["study"]["scenarios"]:
        [line] = scenario["tables"]["icc"]["rows"]
        mine = groups[scenario["scenario"]]
        expected = anova_icc(mine)
        assert line["icc_pooled"] == pytest.approx(expected, abs=1e-9)
        assert line["valid_rows"] == len(mine)
        design_effects[scenario["scenario"]] = line["design_effect"]
    for cell in report["cells"]:
        if cell["check_ci95"] is not None:
            assert cell["interval_design_effect"] == pytest.approx(
                design_effects[cell["scenario"]], abs=1e-4)
