"""``foldscope report --format md|json|csv`` on a simulated sweep: the study's tables."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main


@pytest.fixture(scope="module")
def sweep_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("report-study") / "sweep.sqlite"
    run_sweep(db, definition(scenario="kestrel",
                             models=("sim/faithful", "sim/describer", "sim/gister"),
                             arms=("j", "q", "m"), repeats=2))
    return db


def test_json_keeps_its_keys_and_adds_the_study(sweep_db, capsys):
    assert main(["report", "--db", str(sweep_db), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("sweep", "status", "simulated", "arms", "models", "cells", "accounting",
                "estimator"):
        assert key in data
    study = data["study"]
    assert study["thresholds"] == {"row_recalled": 0.5, "gist_fill": 0.5,
                                   "at_ceiling_tolerance": 0.005}
    [kestrel] = study["scenarios"]
    assert kestrel["scenario"] == "kestrel"
    assert "capacity table (j vs t, m vs u) left out: no t arm and no u arm in this sweep" \
        in kestrel["notes"]
    tables = kestrel["tables"]
    assert "ceiling" not in tables
    partition = {r["model"]: r for r in tables["partition"]["rows"]}
    # The simulated temperaments: the describer over-writes j and q rescues it; the gister
    # writes a gist in any shape and q does not.
    assert partition["sim/describer"]["failure_mode"] == "over-writing description"
    assert partition["sim/describer"]["q_rescues"] == "yes"
    assert partition["sim/gister"]["failure_mode"] == "under-writing gist"
    assert partition["sim/gister"]["q_rescues"] == "no"
    assert partition["sim/faithful"]["q_rescues"] == "n/a"
    recall = {(r["model"], r["arm"]): r for r in tables["recall"]["rows"]}
    cells = {(c["model"], c["arm"]): c for c in data["cells"]}
    for key, cell in cells.items():  # the study's recall is the report's cells' recall
        assert recall[key]["valid_rows"] == cell["valid_rows"]
        assert recall[key]["mean_recall"] == pytest.approx(cell["mean_recall"])


def test_markdown_prints_every_table_and_what_was_left_out(sweep_db, capsys):
    assert main(["report", "--db", str(sweep_db), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Study tables · sweep ")
    assert "> capacity table (j vs t, m vs u) left out: no t arm and no u arm in this sweep" in out
    for title in ("### Recall by model × arm", "### Capacity-matched partition",
                  "### Ladder j → q → m", "### The ceiling as a target",
                  "### Final carrier × answer", "### Abstention vs fabrication",
                  "### Clustering of checks in rows", "### Rows with recall ≥ 0.5 per cell"):
        assert title in out
    line = next(t for t in out.splitlines() if t.startswith("| sim/describer | 2 |"))
    assert "over-writing description" in line and line.rstrip().endswith("| yes |")


def test_csv_on_stdout_is_sections_and_with_out_one_file_per_table(sweep_db, tmp_path, capsys):
    assert main(["report", "--db", str(sweep_db), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    sections = {}
    for block in out.split("# ")[1:]:
        name, _, body = block.partition("\n")
        sections[name] = list(csv.DictReader(io.StringIO(body)))
    assert "partition" in sections and "ceiling" not in sections
    assert sections["recall"][0]["scenario"] == "kestrel"
    folder = tmp_path / "tables"
    assert main(["report", "--db", str(sweep_db), "--format", "csv", "--out", str(folder)]) == 0
    files = sorted(p.name for p in folder.iterdir())
    assert files == sorted(f"{name}.csv" for name in sections)
    with (folder / "partition.csv").open(newline="", encoding="utf-8") as handle:
        assert list(csv.DictReader(handle)) == sections["partition"]


def test_out_is_only_for_csv(sweep_db, tmp_path, capsys):
    assert main(["report", "--db", str(sweep_db), "--format", "md", "--out",
                 str(tmp_path)]) == 2
    assert "--out is for --format csv" in capsys.readouterr().err


def test_markdown_shows_outside_text_literally_and_keeps_its_table_shape():
    from foldscope.core.study import StudyTables, Table
    from foldscope.engine.study import study_markdown

    hostile = "[bold]evil|model\x1b[31m\u202e"
    study = StudyTables(hostile, (Table("recall", "Recall", ("model", "mean_recall"),
                                        ((hostile, 0.5),)),), (f"note about {hostile}",))
    out = study_markdown([study], "Study tables")
    assert "\x1b" not in out and "\u202e" not in out
    assert "| [bold]evil\\|model␛[31m\ufffd | 0.500 |" in out


def test_csv_out_that_cannot_be_written_is_one_line(sweep_db, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["report", "--db", str(sweep_db), "--format", "csv", "--out",
                 str(blocker / "tables")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("foldscope: error: --out ") and err.count("\n") == 1
