"""``foldscope plan``: rows per cell with the design effect, ICC from a stored sweep, tokens, cost."""

from __future__ import annotations

import json
import math

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main
from foldscope.core.arms import get_arm
from foldscope.core.planning import checks_for_two_proportions, row_tokens
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import Store


def plan_json(capsys, *argv: str) -> dict:
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_with_given_icc(capsys):
    data = plan_json(capsys, "--scenario", "kestrel", "--models", "sim/describer",
                     "--contrast", "j:q", "--p1", "0.3", "--p2", "0.9", "--icc", "0.8")
    n = checks_for_two_proportions(0.3, 0.9)
    assert data["rows_per_cell"] == math.ceil(n * (1 + 13 * 0.8) / 14)
    assert data["scenarios"][0]["m"] == 14
    assert data["arms"] == ["j", "q"] and data["contrast"] == ["j", "q"]
    assert data["cells"] == 2 and data["rows_total"] == 2 * data["rows_per_cell"]
    scenario = load_scenario("kestrel")
    per_row = sum(row_tokens(get_arm(a), scenario).prompt_tokens for a in "jq")
    assert data["tokens"]["prompt"] == data["rows_per_cell"] * per_row
    assert data["cost_usd"] == 0.0  # simulated models cost nothing


def test_plan_prices_models_from_a_sweep_file(tmp_path, capsys):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nscenario = "smoke"\narms = ["j", "q", "m"]\nrepeats = 2\n\n'
                     '[[models]]\nid = "acme/m"\nprovider = "openrouter"\npin = "x"\n'
                     'price_prompt_per_mtok = 0.5\nprice_completion_per_mtok = 2.0\n\n'
                     '[[models]]\nid = "free/m"\nprovider = "vllm"\n')
    data = plan_json(capsys, str(sweep), "--contrast", "j:q", "--p1", "0.2", "--p2", "0.8",
                     "--icc", "1")
    priced, unpriced = data["by_model"]
    assert priced["cost_usd"] == pytest.approx(
        (priced["prompt_tokens"] * 0.5 + priced["completion_tokens"] * 2.0) / 1e6, abs=1e-6)
    assert unpriced["cost_usd"] is None and data["cost_usd"] is None
    assert any("free/m: no price" in n for n in data["notes"])
    assert any("has 2 repeat(s)" in n for n in data["notes"])
    assert data["arms"] == ["j", "q", "m"]


def test_plan_takes_the_icc_from_a_stored_sweep(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/describer", "sim/gister"), arms=("j", "q"),
                                        repeats=3))
    data = plan_json(capsys, "--scenario", "smoke", "--models", "sim/describer", "--contrast",
                     "j:q", "--p1", "0.3", "--p2", "0.9", "--db", str(db), "--sweep", sweep_id)
    assert data["icc_source"].startswith(f"sweep {sweep_id}")
    assert -1 <= data["icc"] <= 1
    assert data["scenarios"][0]["design_effect"] == pytest.approx(1 + 5 * data["icc_used"])
    # The token estimate is an upper bound on what the sweep's folds were estimated to cost.
    store = Store(db, readonly=True)
    try:
        rows = store.rows(sweep_id)
    finally:
        store.close()
    scenario = load_scenario("smoke")
    for r in rows:
        assert r.est_prompt_tokens <= row_tokens(get_arm(r.arm), scenario).prompt_tokens
    # ...and the stored sweep's reported tokens per row give a second, observed estimate.
    per_arm = {arm: [r.prompt_tokens for r in rows if r.arm == arm] for arm in "jq"}
    expected = data["rows_per_cell"] * sum(sum(v) / len(v) for v in per_arm.values())
    assert data["tokens_observed"]["prompt"] == round(expected)
    assert data["tokens_observed"]["prompt"] < data["tokens"]["prompt"]
    assert data["cost_usd_observed"] == 0.0


def test_plan_text_output(capsys):
    assert main(["plan", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j,q",
                 "--p1", "0.5", "--p2", "0.7", "--icc", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "valid rows per cell" in out and "DE = 2.5" in out


@pytest.mark.parametrize("extra,needle", [
    ([], "--icc X, or a stored sweep"),
    (["--icc", "0.5", "--db", "x.sqlite"], "not both"),
    (["--icc", "0.5", "--contrast", "j"], "--contrast: expected two different arms"),
    (["--icc", "0.5", "--contrast", "j:zz"], "zz"),
    (["--icc", "0.5", "--contrast", "j:q", "--arms", "j,m"], "arm 'q' is not among"),
    (["--icc", "2", "--contrast", "j:q"], "--icc must be between"),
    (["--db", "/nonexistent/x.sqlite", "--contrast", "j:q"], "no such database"),
])
def test_plan_bad_input_is_one_line_exit_2(capsys, extra, needle):
    argv = ["plan", "--scenario", "smoke", "--models", "sim/faithful", "--p1", "0.3", "--p2",
            "0.9", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_plan_equal_recalls_is_an_error(capsys):
    assert main(["plan", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j,q",
                 "--p1", "0.5", "--p2", "0.5", "--icc", "0.1"]) == 2
    assert "no contrast to detect" in capsys.readouterr().err
