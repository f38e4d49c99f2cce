"""``foldscope stats``: JSON contracts, text output and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest

from foldscope.cli.main import main


def run_json(capsys, *argv: str) -> dict:
    # --json goes first: after `--` every word is positional.
    assert main(["stats", argv[0], "--json", *argv[1:]]) == 0
    return json.loads(capsys.readouterr().out)


def test_fisher_json(capsys):
    data = run_json(capsys, "fisher", "1/10", "8/10")
    assert data["p_value"] == pytest.approx(1012 / 184756)
    assert data["table"] == [[1, 9], [8, 2]]
    assert data["alternative"] == "two-sided"
    assert data["odds_ratio"] == pytest.approx(1 / 36)


def test_fisher_table_and_infinite_odds_ratio(capsys):
    data = run_json(capsys, "fisher", "--table", "5,0,0,5", "--alternative", "greater")
    assert data["odds_ratio"] is None  # infinite: JSON has no Infinity
    assert data["p_value"] == pytest.approx(1 / 252)


def test_fisher_on_row_recalls(capsys):
    data = run_json(capsys, "fisher", "--rows", "0,0.2,0.5,0.1", "1,0.9,0.5,0.4")
    assert data["table"] == [[1, 3], [3, 1]]
    assert data["p_value"] == pytest.approx(34 / 70)


def test_separation_json(capsys):
    assert run_json(capsys, "separation", "8", "2")["probability"] == pytest.approx(1 / 28)


def test_icc_json_from_csv(tmp_path, capsys):
    path = tmp_path / "checks.csv"
    path.write_text("row_id,check,value\n" + "".join(
        f"r{r},c{c},{v}\n" for r, vals in enumerate([[1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 0, 0]])
        for c, v in enumerate(vals)))
    data = run_json(capsys, "icc", "--csv", str(path))
    from foldscope.core.stats import icc_binary

    icc = icc_binary([[1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 0, 0]])
    assert data["icc"] == pytest.approx(icc)
    assert data["design_effect"] == pytest.approx(1 + 2 * icc)
    assert data["effective_n"] == pytest.approx(12 / (1 + 2 * icc))


def test_tost_pearson_bootstrap_json(capsys):
    tost = run_json(capsys, "tost", "--margin", "0.1", "--", "-0.01,0.02,0.0,0.01")
    assert tost["design"] == "one-sample" and tost["equivalent"] is True
    paired = run_json(capsys, "tost", "--margin", "0.1", "--paired", "1,0.5,0.8", "0.9,0.5,0.7")
    assert paired["design"] == "paired" and paired["estimate"] == pytest.approx(0.2 / 3)
    welch = run_json(capsys, "tost", "--margin", "0.2", "0.5,0.6,0.7", "0.5,0.5,0.8,0.6")
    assert welch["design"] == "welch" and welch["n"] == [3, 4]
    r = run_json(capsys, "pearson", "1,2,3,4,5", "2,4,5,4,5")
    assert r["r"] == pytest.approx(6 / 60 ** 0.5)
    boot = run_json(capsys, "bootstrap", "1,0,1,1", "0,0,1,0", "--seed", "4")
    assert boot["estimate"] == pytest.approx(0.5) and boot["seed"] == 4
    assert run_json(capsys, "bootstrap", "1,0,1,1", "0,0,1,0", "--seed", "4") == boot


def test_text_output(capsys):
    assert main(["stats", "fisher", "1/10", "8/10"]) == 0
    assert "p = 0.00547749" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["fisher", "1/10"], "two groups"),
    (["fisher", "11/10", "1/2"], "successes <= total"),
    (["fisher", "a/10", "1/2"], "not a number"),
    (["fisher", "--table", "1,2,3"], "four counts"),
    (["separation", "3", "5"], "0 <= k <= n"),
    (["icc", "--csv", "/nonexistent/checks.csv"], "no such file"),
    (["tost", "--margin", "0", "1,2,3"], "margin"),
    (["tost", "--margin", "0.1", "1,,2"], "comma-separated"),
    (["pearson", "1,2,3", "1,2"], "same length"),
    (["bootstrap", "1,2", "1,2", "--resamples", "5"], "resamples"),
    (["bootstrap", "1,nan", "1,2"], "finite"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, needle):
    assert main(["stats", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_icc_csv_errors(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("row_id,check,value\nr1,a,2\n")
    assert main(["stats", "icc", "--csv", str(bad)]) == 2
    assert "line 2: value must be 0 or 1" in capsys.readouterr().err
    cols = tmp_path / "cols.csv"
    cols.write_text("row,check,value\nr1,a,1\n")
    assert main(["stats", "icc", "--csv", str(cols)]) == 2
    assert "missing column(s) row_id" in capsys.readouterr().err
    dup = tmp_path / "dup.csv"
    dup.write_text("row_id,check,value\nr1,a,1\nr1,a,0\n")
    assert main(["stats", "icc", "--csv", str(dup)]) == 2
    assert "appears twice" in capsys.readouterr().err
