"""The stored fact timeline: kept as folds commit, read back, recomputed by reindex, and shown
headless by ``foldscope inspect``."""

from __future__ import annotations

import json
import sqlite3

from conftest import definition, run_sweep

from foldscope.cli.main import main
from foldscope.core.forensics import display_order, fact_timeline, timeline_document
from foldscope.engine.loader import load_scenario
from foldscope.engine.store import SCHEMA_VERSION, Store
from foldscope.engine.timelines import read_row_timeline, sweep_forensics


def _sweep(db, models=("sim/garbler", "sim/describer"), arms=("j", "q")):
    return run_sweep(db, definition(models=models, arms=arms, repeats=2))


def test_courses_stored_as_folds_commit_equal_the_timeline_from_the_carriers(db):
    sweep_id = _sweep(db)
    scenario = load_scenario("smoke")
    with Store(db, readonly=True) as store:
        for row in store.rows(sweep_id):
            folds = store.folds(row.id)
            whole = fact_timeline([(f.first_chunk, f.last_chunk, f.carrier) for f in folds],
                                  scenario.facts)
            assert store.fact_histories(row.id) == list(whole.facts)
            for fold, entry in zip(folds, whole.folds, strict=True):
                assert dict(fold.fact_status) == {f.label: f.state for f in entry.facts}
                assert dict(fold.fact_mutations) == {
                    f.label: (f.altered, f.rule) for f in entry.facts if f.state == "mutated"}


def test_the_garbler_leaves_mutated_facts_with_their_original_and_edit(db):
    sweep_id = _sweep(db, models=("sim/garbler",), arms=("q",))
    with Store(db, readonly=True) as store:
        mutated = [(h, r.id) for r in store.rows(sweep_id) for h in store.fact_histories(r.id)
                   if h.final_state == "mutated"]
    assert mutated, "the garbler mutates a share of identifier values"
    for history, _ in mutated:
        assert history.final_altered and history.final_altered != history.value
        assert history.final_rule and history.lost_fold is not None


def test_reindex_restores_a_timeline_an_old_database_lacks(db, capsys):
    sweep_id = _sweep(db)
    with Store(db) as store:
        row_id = store.rows(sweep_id)[0].id
        expected = read_row_timeline(store, row_id).timeline
        checks_before = store.checks(row_id)
        store.db.execute("DELETE FROM fact_histories")
        store.db.execute("UPDATE folds SET fact_mutations_json='{}', fact_status_json='{}'")
        store.db.execute("UPDATE checks SET classification='fabricated'")
    assert main(["reindex", "--db", str(db), "--sweep", sweep_id]) == 0
    assert "reindexed 8 rows" in capsys.readouterr().out
    with Store(db, readonly=True) as store:
        assert read_row_timeline(store, row_id).timeline == expected
        assert [c.classification for c in store.checks(row_id)] == [
            c.classification for c in checks_before]


def test_reindex_bad_sweep_is_one_line_exit_2(db, capsys):
    _sweep(db, models=("sim/faithful",), arms=("j",))
    assert main(["reindex", "--db", str(db), "--sweep", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no sweep 'nope'" in err


def test_a_version_7_database_reads_with_not_yet_derived_and_migrates(db):
    sweep_id = _sweep(db, models=("sim/faithful",), arms=("j",))
    with Store(db) as store:
        row_id = store.rows(sweep_id)[0].id
        expected = read_row_timeline(store, row_id).timeline
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DROP TABLE fact_histories")
        conn.execute("ALTER TABLE folds DROP COLUMN fact_mutations_json")
        # Before schema 8 a fact whose chunk was not folded yet was stored as missing.
        for fid, status in conn.execute("SELECT id, fact_status_json FROM folds").fetchall():
            old = {k: ("missing" if v == "not_yet" else v) for k, v in json.loads(status).items()}
            conn.execute("UPDATE folds SET fact_status_json=? WHERE id=?", [json.dumps(old), fid])
        conn.execute("UPDATE meta SET value='7' WHERE key='schema_version'")
    conn.close()
    with Store(db, readonly=True) as store:  # read as it is, nothing written
        assert store.schema_version == 7
        assert read_row_timeline(store, row_id).timeline == expected
    with Store(db) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert read_row_timeline(store, row_id).timeline == expected


def test_inspect_json_is_the_timeline_document(db, capsys):
    sweep_id = _sweep(db, models=("sim/garbler",), arms=("j",))
    with Store(db, readonly=True) as store:
        row = store.rows(sweep_id)[0]
        found = read_row_timeline(store, row.id)
    assert main(["inspect", str(row.id), "--db", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["folds"] == timeline_document(found.timeline)["folds"]
    assert [f["fold"] for f in doc["folds"]] == [1, 2, 3]
    labels = [f.label for f in display_order(load_scenario("smoke").facts)]
    assert [f["label"] for f in doc["facts"]] == labels
    for fact in doc["facts"]:
        assert set(fact) >= {"label", "value", "planted_fold", "first_carried_fold", "lost_fold",
                             "returned", "final_state"}
    for fold in doc["folds"]:
        for fact in fold["facts"]:
            assert set(fact) >= {"label", "value", "state", "altered"}
            assert (fact["altered"] is None) == (fact["state"] != "mutated")
    # Fold 1 has not read the later chunks yet.
    assert any(f["state"] == "not_yet" for f in doc["folds"][0]["facts"])


def test_inspect_fold_k_is_the_timeline_as_it_stood(db, capsys):
    sweep_id = _sweep(db, models=("sim/describer",), arms=("j",))
    with Store(db, readonly=True) as store:
        row = store.rows(sweep_id)[0]
    assert main(["inspect", str(row.id), "--db", str(db), "--json", "--fold", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [f["fold"] for f in doc["folds"]] == [1]
    states = {f["label"]: f["state"] for f in doc["folds"][0]["facts"]}
    for fact in doc["facts"]:
        assert fact["final_state"] == states[fact["label"]]
    assert main(["inspect", str(row.id), "--db", str(db)]) == 0
    text = capsys.readouterr().out
    assert "lost at" in text and "★" in text


def test_inspect_bad_row_and_bad_fold_are_one_line_exit_2(db, capsys):
    sweep_id = _sweep(db, models=("sim/faithful",), arms=("j",))
    for argv in (["inspect", "999999", "--db", str(db)], ["inspect", "x1", "--db", str(db)],
                 ["inspect", "1", "--db", str(db), "--fold", "9"],
                 ["inspect", "1", "--db", str(db.parent / "none.sqlite")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("foldscope: error:"), err
    assert sweep_id


def test_sweep_forensics(db):
    sweep_id = _sweep(db)
    with Store(db, readonly=True) as store:
        found = sweep_forensics(store, sweep_id)
        assert found.rows == 8 and found.scenarios == ("smoke",) and found.excluded == 0
        curves = {(c.model, c.arm): c for c in found.curves}
        assert set(curves) == {(m, a) for m in ("sim/garbler", "sim/describer") for a in "jq"}
        for curve in curves.values():
            assert curve.rows == 2 and len(curve.fractions) == 3
            assert all(0.0 <= f <= 1.0 for f in curve.fractions if f is not None)
        # The describer loses facts under j: its curve ends below the garbler's under q.
        assert curves[("sim/describer", "j")].fractions[-1] < 0.5
        deaths = found.deaths["smoke"]
        total = sum(deaths.by_chunk.values())
        assert total == sum(deaths.by_kind.values()) == 8 * len(load_scenario("smoke").graded)


def _smoke_twin(tmp_path, monkeypatch):
    """A second distributed scenario: smoke's file under another name and seed."""
    from foldscope.engine.loader import SCENARIOS_ENV, scenario_dirs

    folder = tmp_path / "scenarios"
    folder.mkdir()
    smoke = next(d / "smoke.toml" for d in scenario_dirs() if (d / "smoke.toml").exists())
    text = smoke.read_text(encoding="utf-8")
    twin = text.replace('name = "smoke"', 'name = "smoke-twin"', 1)
    assert twin != text, "smoke.toml names itself"
    (folder / "smoke-twin.toml").write_text(twin, encoding="utf-8")
    monkeypatch.setenv(SCENARIOS_ENV, str(folder))
    return "smoke-twin"


def test_survival_is_per_scenario_over_valid_rows_only(db, tmp_path, monkeypatch):
    """Two scenarios, then rows made catch-up (distributed scenario), failed and running: the
    curves are per (scenario, model, arm) and count exactly the rows the report counts valid, and
    an invalid row whose carriers lost everything moves no curve."""
    from foldscope.engine.report import cells as report_cells

    twin = _smoke_twin(tmp_path, monkeypatch)
    data = definition(models=("sim/faithful",), arms=("j", "q"), repeats=3)
    data["sweep"]["scenarios"] = ["smoke", twin]
    sweep_id = run_sweep(db, data)
    with Store(db, readonly=True) as store:
        before = sweep_forensics(store, sweep_id)
        rows = store.rows(sweep_id)
    assert sorted((c.scenario, c.arm, c.rows) for c in before.curves) == [
        (s, a, 3) for s in ("smoke", twin) for a in "jq"]
    smoke_j = [r for r in rows if (r.scenario, r.arm) == ("smoke", "j")]
    twin_q = [r for r in rows if (r.scenario, r.arm) == (twin, "q")]
    spoiled = [smoke_j[0].id, smoke_j[1].id, twin_q[0].id]
    with Store(db) as store:
        store.db.execute("UPDATE rows SET catch_up=1, valid=0, validity_reason="
                         "'catch_up_distributed' WHERE id=?", [smoke_j[0].id])
        store.db.execute("UPDATE rows SET status='failed', valid=0, validity_reason='failed' "
                         "WHERE id=?", [smoke_j[1].id])
        store.db.execute("UPDATE rows SET status='running', valid=0, validity_reason="
                         "'incomplete' WHERE id=?", [twin_q[0].id])
        # Were any of them counted, every fact would read lost after every fold.
        store.db.execute("UPDATE folds SET fact_status_json=(SELECT json_group_object(key, "
                         "'missing') FROM json_each(folds.fact_status_json)) WHERE row_id IN "
                         f"({','.join('?' * len(spoiled))})", spoiled)
    with Store(db, readonly=True) as store:
        after = sweep_forensics(store, sweep_id)
        reported = {(c["scenario"], c["model"], c["arm"]): c["valid_rows"]
                    for c in report_cells(store, sweep_id)}
    curves = {(c.scenario, c.model, c.arm): c for c in after.curves}
    assert {k: c.rows for k, c in curves.items()} == reported
    assert reported[("smoke", "sim/faithful", "j")] == 1 and reported[(twin, "sim/faithful", "q")] == 2
    assert after.excluded == 3 and after.rows == 12 - 3
    assert after.scenarios == ("smoke", twin) and set(after.deaths) == {"smoke", twin}
    old = {(c.scenario, c.model, c.arm): c for c in before.curves}
    for key, curve in curves.items():
        # faithful keeps every fact: the share is the same over fewer rows, not dragged down.
        assert curve.fractions == old[key].fractions, key
    planted = len(load_scenario("smoke").graded)
    assert sum(after.deaths["smoke"].by_chunk.values()) == (3 + 1) * planted
