"""Untrusted files and databases (issue 20): sweep and scenario TOML, evidence packages, exports
that cannot be written, databases `check` would flag; each is one line and exit 2 (or a listed
problem), never a traceback, a hang or raw escapes on the terminal."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("foldscope: error:"), err
    return lines[0]


def _smoke_text() -> str:
    return (Path(__file__).parent.parent / "scenarios" / "smoke.toml").read_text()


# -- TOML nested deep -------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [5_000, 50_000])
def test_a_sweep_file_nested_deep_is_one_line_exit_2(tmp_path, capsys, depth):
    path = tmp_path / "deep.toml"
    path.write_text('[sweep]\nscenario = "smoke"\narms = ["m"]\nx = ' + "[" * depth
                    + "]" * depth + "\n")
    assert main(["run", str(path), "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
    assert "nested more than" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("nest", ["[", "{a = "])
def test_a_scenario_file_nested_deep_is_one_line_exit_2(tmp_path, capsys, nest):
    close = "]" if nest == "[" else "}"
    path = tmp_path / "deep.toml"
    path.write_text(_smoke_text() + "\nextra = " + nest * 20_000 + "1" + close * 20_000 + "\n")
    assert main(["scenario", "show", str(path)]) == 2
    assert "nested more than" in _one_line(capsys.readouterr().err)


def test_a_scenario_with_20k_facts_is_refused_quickly_with_a_clear_limit(tmp_path, capsys):
    facts = "".join(f'[[facts]]\nlabel = "fact {i}"\nvalue = "v{i:06d}x"\nrole = "tool"\n'
                    f"chunk = 1\ngraded = true\n\n" for i in range(20_000))
    head = _smoke_text().split("[[facts]]", 1)[0]
    path = tmp_path / "many.toml"
    path.write_text(head + facts)
    started = time.monotonic()
    assert main(["scenario", "show", str(path)]) == 2
    assert time.monotonic() - started < 60  # was > 150 s
    assert "at most 1,000" in _one_line(capsys.readouterr().err)


def test_a_scenario_without_graded_facts_is_refused_at_load(tmp_path, capsys):
    path = tmp_path / "nograde.toml"
    path.write_text(_smoke_text().replace("graded = true", "graded = false"))
    assert main(["scenario", "show", str(path)]) == 2
    assert "no graded fact" in _one_line(capsys.readouterr().err)


# -- sweep definitions -----------------------------------------------------------------------------


@pytest.mark.parametrize("sweep,needle", [
    ('scenarios = ["smoke", "smoke"]', "listed twice"),
    ('repeats = "2"', "repeats"),
    ('concurrency = "4"', "concurrency"),
])
def test_sweep_values_are_strict(tmp_path, capsys, sweep, needle):
    path = tmp_path / "s.toml"
    path.write_text(f'[sweep]\nscenario = "smoke"\narms = ["m"]\n{sweep}\n'
                    '[[models]]\nid = "sim/faithful"\n')
    assert main(["run", str(path), "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
    assert needle in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("model_id", ["sim/faithfuł", "sim/fаithful", "SIM/faithful",
                                      "sim/faithfu1"])
def test_a_confusable_model_id_is_refused_with_a_suggestion(tmp_path, capsys, model_id):
    assert main(["run", "--scenario", "smoke", "--arms", "m", "--models", model_id,
                 "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "did you mean 'sim/faithful'" in line


@pytest.mark.parametrize("url,needle", [("http://127.0.0.1:8000/v1?key=x", "query"),
                                        ("http://127.0.0.1:8000/v1#frag", "query"),
                                        ("http://127.0.0.1:8000/my v1", "spaces")])
def test_a_base_url_with_a_query_or_a_space_is_refused(tmp_path, capsys, url, needle):
    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nscenario = "smoke"\narms = ["m"]\n[[models]]\nid = "acme/m"\n'
                    f'provider = "vllm"\nbase_url = "{url}"\n')
    assert main(["run", str(path), "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
    assert needle in _one_line(capsys.readouterr().err)


# -- verify on a hostile package ----------------------------------------------------------------


@pytest.fixture
def package(tmp_path) -> Path:
    db = tmp_path / "d.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    out = tmp_path / "pkg"
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0
    return out


def _rehash(pkg: Path, extra: dict[str, str] | None = None) -> None:
    from foldscope.engine.evidence import sha256_file
    manifest = json.loads((pkg / "manifest.json").read_text())
    manifest["files"] = {n: sha256_file(pkg / n) for n in manifest["files"] if (pkg / n).is_file()
                         and not (pkg / n).is_symlink()}
    manifest["files"].update(extra or {})
    (pkg / "manifest.json").write_text(json.dumps(manifest))


ESCAPES = ["\x1b]0;pwned\x07", "\x1b]52;c;ZXZpbA==\x07", "\x1b[2J", "\x9b31m", "\u202e"]


def test_verify_prints_file_names_manifest_keys_and_cells_literally(package, capsys):
    for i, esc in enumerate(ESCAPES):
        (package / f"evil{i}{esc}.txt").write_text("x")
    _rehash(package, {f"key{esc}": "0" * 64 for esc in ESCAPES})
    rows = (package / "rows.csv").read_text().splitlines()
    header = rows[0].split(",")
    cells = rows[1].split(",")
    cells[header.index("recall")] = "\x1b]0;t\x07"
    (package / "rows.csv").write_text("\n".join([rows[0], ",".join(cells), *rows[2:]]) + "\n")
    _rehash(package, {f"key{esc}": "0" * 64 for esc in ESCAPES})
    assert main(["verify", str(package)]) == 1
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    for ch in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert ch not in shown
    assert "evil0" in shown


def test_verify_names_the_row_of_a_nan_recall(package, capsys):
    rows = (package / "rows.csv").read_text().splitlines()
    header = rows[0].split(",")
    cells = rows[1].split(",")
    cells[header.index("recall")] = "nan"
    (package / "rows.csv").write_text("\n".join([rows[0], ",".join(cells), *rows[2:]]) + "\n")
    _rehash(package)
    assert main(["verify", str(package)]) == 1
    err = capsys.readouterr().err
    assert "rows.csv line 2" in err and "recall" in err, err


def test_verify_refuses_special_files_and_symlinks_to_proc(package, capsys):
    (package / "aggregates.csv").unlink()
    os.symlink("/proc/self/mem", package / "aggregates.csv")
    os.mkfifo(package / "fifo")
    started = time.monotonic()
    assert main(["verify", str(package)]) == 1
    assert time.monotonic() - started < 30  # a FIFO is never opened
    err = capsys.readouterr().err
    assert "aggregates.csv: is a symbolic link (not read)" in err
    assert "Traceback" not in err


def test_verify_on_a_manifest_nested_deep_or_a_symlinked_manifest(package, capsys):
    (package / "manifest.json").write_text('{"files": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert main(["verify", str(package)]) == 2
    assert "nested more than" in _one_line(capsys.readouterr().err)
    (package / "manifest.json").unlink()
    os.symlink("/proc/self/mem", package / "manifest.json")
    assert main(["verify", str(package)]) == 2
    assert "is a symbolic link" in _one_line(capsys.readouterr().err)
    (package / "manifest.json").unlink()
    os.mkfifo(package / "manifest.json")
    assert main(["verify", str(package)]) == 2
    assert "not a regular file" in _one_line(capsys.readouterr().err)


# -- export that cannot be written ----------------------------------------------------------------


def test_export_into_a_readonly_folder_or_proc_is_one_line_and_leaves_nothing(tmp_path, capsys):
    db = tmp_path / "d.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        # (root writes into a read-only folder anyway; /proc refuses everyone)
        targets = [Path("/proc/foldscope-pkg")] + ([] if os.access(ro, os.W_OK) else [ro / "pkg"])
        for out in targets:
            capsys.readouterr()
            assert main(["export", "--db", str(db), "--out", str(out)]) == 2
            _one_line(capsys.readouterr().err)
            assert not out.exists()
    finally:
        ro.chmod(0o700)


def test_export_on_a_full_disk_leaves_no_partial_package(tmp_path, capsys, monkeypatch):
    db = tmp_path / "d.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    real = Path.write_text
    calls = {"n": 0}

    def full(self, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "write_text", full)
    out = tmp_path / "pkg"
    assert main(["export", "--db", str(db), "--out", str(out)]) == 2
    assert "No space left" in _one_line(capsys.readouterr().err)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()
                                 if p.name.startswith(".pkg")] == []
    monkeypatch.setattr(Path, "write_text", real)
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0  # the next export works
    assert main(["verify", str(out)]) == 0


# -- databases check would flag --------------------------------------------------------------------


@pytest.fixture
def sweep_db(tmp_path) -> Path:
    db = tmp_path / "d.sqlite"
    run_sweep(db, definition(models=("sim/faithful",), arms=("m",)))
    return db


@pytest.mark.parametrize("version", ["'abc'", "'99999999999999999999'", "'-3'", "'1.5'"])
def test_a_bad_schema_version_is_flagged_and_refused_in_one_line(sweep_db, capsys, version):
    with sqlite3.connect(sweep_db) as conn:
        conn.execute(f"UPDATE meta SET value={version} WHERE key='schema_version'")
    assert main(["check", "--db", str(sweep_db)]) == 1
    assert "FAIL  schema version" in capsys.readouterr().out
    for cmd in (["report", "--db", str(sweep_db)],
                ["export", "--db", str(sweep_db), "--out", str(sweep_db.parent / "p")],
                ["run", "--resume", "x", "--db", str(sweep_db), "--headless"]):
        assert main(cmd) == 2
        assert "schema_version" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("damage,needle", [
    ("UPDATE sweeps SET config_json = '{not json'", "config_json"),
    ("UPDATE rows SET recall = 'high'", "row"),
    ("UPDATE rows SET recall = 7.5", "row"),
    ("ALTER TABLE rows DROP COLUMN wall_s", "rows.wall_s"),
])
def test_report_and_export_refuse_what_check_flags(sweep_db, capsys, damage, needle):
    with sqlite3.connect(sweep_db) as conn:
        conn.execute(damage)
    assert main(["check", "--db", str(sweep_db)]) == 1
    out = capsys.readouterr().out
    assert needle in out
    for cmd in (["report", "--db", str(sweep_db)],
                ["export", "--db", str(sweep_db), "--out", str(sweep_db.parent / "p")]):
        assert main(cmd) == 2
        line = _one_line(capsys.readouterr().err)
        assert "foldscope check" in line


def test_check_flags_rows_left_running_with_no_live_runner(sweep_db, capsys):
    with sqlite3.connect(sweep_db) as conn:  # what a kill -9 mid-row leaves
        conn.execute("DELETE FROM checks WHERE row_id IN (SELECT id FROM rows LIMIT 2)")
        conn.execute("UPDATE rows SET status='running' WHERE id IN (SELECT id FROM rows LIMIT 2)")
        conn.execute("UPDATE sweeps SET status='running', runner_pid=999999999")
    assert main(["check", "--db", str(sweep_db)]) == 1
    assert "row(s) running, no live runner" in capsys.readouterr().out
    # report and export refuse what check flags; report --partial shows what was committed
    assert main(["report", "--db", str(sweep_db)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "no live runner" in line and "--partial" in line and "foldscope check" in line
    assert main(["report", "--db", str(sweep_db), "--partial"]) == 0
    assert "interrupted" in capsys.readouterr().out
    assert main(["export", "--db", str(sweep_db), "--out", str(sweep_db.parent / "p")]) == 2
    assert "no live runner" in _one_line(capsys.readouterr().err)


def test_report_refuses_only_what_concerns_its_sweep(sweep_db, tmp_path, capsys):
    """An interrupted sweep in the same database does not stop the report of another one;
    SQLite-level damage stops every report."""
    with sqlite3.connect(sweep_db) as conn:
        (sweep_id,) = conn.execute("SELECT id FROM sweeps").fetchone()
        conn.execute("INSERT INTO sweeps (id, created_at, name, status, config_json, pins_json, "
                     "config_digest, runner_pid) SELECT 'other', created_at + 1, name, 'running', "
                     "config_json, pins_json, 'x', 999999999 FROM sweeps WHERE id=?", [sweep_id])
    assert main(["check", "--db", str(sweep_db)]) == 1
    capsys.readouterr()
    assert main(["report", "--db", str(sweep_db), "--sweep", sweep_id]) == 0
    capsys.readouterr()
    # the newest sweep (the default) plans rows it does not hold: refused, naming it
    assert main(["report", "--db", str(sweep_db)]) == 2
    assert "sweep other" in _one_line(capsys.readouterr().err)


def test_report_on_a_folder_names_it(tmp_path, capsys):
    assert main(["report", "--db", str(tmp_path)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "is a folder" in line and "disk I/O" not in line


@pytest.mark.parametrize("field,value", [("timeout_s", "inf"), ("rate_limit_wait_s", "nan"),
                                         ("backoff_cap_s", "inf"), ("max_reply_bytes", "10000000000000"),
                                         ("price_prompt_per_mtok", "nan")])
def test_a_sweep_file_cannot_lift_the_bounds_of_a_call(tmp_path, capsys, field, value):
    path = tmp_path / "s.toml"
    path.write_text('[sweep]\nscenario = "smoke"\narms = ["m"]\n[[models]]\nid = "acme/m"\n'
                    f'provider = "vllm"\n{field} = {value}\n')
    assert main(["run", str(path), "--db", str(tmp_path / "d.sqlite"), "--headless"]) == 2
    assert field in _one_line(capsys.readouterr().err)


def test_the_dearest_call_counts_recall_calls_whose_cost_is_only_in_the_row(tmp_path):
    """After a resume, unknown-cost calls are counted at the dearest call stored: a recall
    call's cost lives only in its row's total, so it is that total less the row's folds."""
    from foldscope.engine.store import Store

    sweep_db = tmp_path / "d.sqlite"
    run_sweep(sweep_db, definition(models=("sim/faithful",), arms=("m", "o")))
    with sqlite3.connect(sweep_db) as conn:
        (sweep_id,) = conn.execute("SELECT id FROM sweeps").fetchone()
        conn.execute("UPDATE folds SET cost_usd = 0.1")
        conn.execute("UPDATE rows SET unpriced_calls = 0, cost_usd = 0.1 * folds_done + 0.25")
        # a row with an unpriced fold says nothing about its recall call
        conn.execute("UPDATE rows SET cost_usd = 99 WHERE id = (SELECT MIN(id) FROM rows)")
        conn.execute("UPDATE folds SET cost_usd = NULL WHERE row_id = (SELECT MIN(id) FROM rows)")
    with Store(sweep_db, readonly=True) as store:
        assert store.highest_call_cost(sweep_id) == pytest.approx(0.25)


def test_check_names_a_poisoned_cache_entry_that_report_does_not_read(sweep_db, capsys):
    good = json.dumps({"content": "ok", "prompt_tokens": 5, "finish_reason": "stop"})
    poisoned = '{"content": "ok", "prompt_tokens": ' + str(10**30) + "}"
    with sqlite3.connect(sweep_db) as conn:
        for key, text in (("k-good", good), ("k-poisoned", poisoned), ("k-text", "[[[")):
            conn.execute("INSERT INTO cache (key, model, reply_json, created_at) "
                         "VALUES (?, 'sim/faithful', ?, 0)", [key, text])
    assert main(["check", "--db", str(sweep_db)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  cached replies meet the rules a fresh reply meets: 2 found" in out
    assert "k-poisoned" in out and "k-text" in out and "k-good" not in out
    # only a rerun reads the cache, and it drops such an entry: report and export go on
    assert main(["report", "--db", str(sweep_db)]) == 0
    assert main(["export", "--db", str(sweep_db), "--out", str(sweep_db.parent / "p")]) == 0
