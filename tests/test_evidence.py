"""The evidence package: export, verify, tampering caught, secrets never written."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main
from foldscope.engine.evidence import export_package, verify_package
from foldscope.engine.report import cells as report_cells
from foldscope.engine.store import Store

SECRET = "sk-or-v1-planted-0123456789abcdef"
PRIVATE_HOST = "gpu7.corp-lab.internal"
LOCAL_PATH = "/home/alice/studies/kestrel-private"
EMAIL = "alice.researcher@example.org"


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path]:
    """Two databases of one study sharded by model, each with one small simulated sweep."""
    root = tmp_path_factory.mktemp("study")
    first, second = root / "a.sqlite", root / "b.sqlite"
    run_sweep(first, definition(models=("sim/faithful", "sim/describer"), arms=("j", "q"),
                                repeats=3))
    run_sweep(second, definition(models=("sim/gister",), arms=("j", "q"), repeats=3))
    return first, second


def _plant_secrets(db: Path) -> None:
    """Write the kind of private detail a real sweep's stored config holds."""
    conn = sqlite3.connect(db)
    config_json, pins_json = conn.execute("SELECT config_json, pins_json FROM sweeps").fetchone()
    config = json.loads(config_json)
    config["sweep"]["name"] = f"study by {EMAIL}"
    config["sweep"]["scenario"] = f"{LOCAL_PATH}/kestrel.toml"
    # Details on the models the sweep ran (adding models would plan rows it does not hold,
    # which `check` flags and export refuses).
    config["models"][0].update({"base_url": f"http://{PRIVATE_HOST}:8000/v1",
                                "api_key_env": "FOLDSCOPE_PLANTED_KEY"})
    config["models"][1].update({"base_url": "https://openrouter.ai/api/v1"})
    pins = json.loads(pins_json)
    pins["acme/model"] = {"endpoint": f"http://{PRIVATE_HOST}:8000/v1", "owner": EMAIL,
                          "key_header": f"Bearer {SECRET}"}
    conn.execute("UPDATE sweeps SET config_json=?, pins_json=?, name=?",
                 [json.dumps(config), json.dumps(pins), f"study {LOCAL_PATH}"])
    conn.execute("UPDATE rows SET infra_error=? WHERE id=1",
                 [f"connect to http://{PRIVATE_HOST}:8000/v1 failed"])
    conn.commit()
    conn.close()


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, records: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)


def _rehash(package: Path, name: str) -> None:
    """Tamper consistently: update the manifest so only recomputation can catch the change."""
    manifest = json.loads((package / "manifest.json").read_text())
    manifest["files"][name] = hashlib.sha256((package / name).read_bytes()).hexdigest()
    (package / "manifest.json").write_text(json.dumps(manifest))


@pytest.fixture
def package(study, tmp_path) -> Path:
    out = tmp_path / "pkg"
    export_package(list(study), out)
    return out


def test_export_then_verify_passes(package, study, capsys):
    names = {p.name for p in package.iterdir()}
    assert names == {"rows.csv", "checks.csv", "aggregates.csv", "contrasts.csv", "study.csv",
                     "config.json", "provenance.lock.json", "README.txt", "manifest.json"}
    assert main(["verify", str(package)]) == 0
    out = capsys.readouterr().out
    assert "18 rows" in out and "108 checks" in out and "6 cells" in out


def test_aggregates_agree_with_the_report(package, study):
    """The package's figures and the report's are computed by different code from different
    reads of the store; they must agree."""
    stated = {(a["model"], a["arm"]): a for a in _read(package / "aggregates.csv")}
    for db in study:
        store = Store(db, readonly=True)
        try:
            for cell in report_cells(store, store.latest_sweep_id()):
                mine = stated[(cell["model"], cell["arm"])]
                assert int(mine["valid_rows"]) == cell["valid_rows"]
                assert float(mine["mean_recall"]) == pytest.approx(cell["mean_recall"])
                assert int(mine["checks"]) == cell["checks"]
                if cell["icc"] is not None:
                    assert float(mine["icc"]) == pytest.approx(cell["icc"], abs=1e-4)
        finally:
            store.close()


def test_checks_csv_feeds_stats_icc(package, capsys):
    assert main(["stats", "icc", "--csv", str(package / "checks.csv"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["checks"] == 108 and data["rows"] == 18


def test_tampered_check_value_is_named(package, capsys):
    checks = _read(package / "checks.csv")
    victim = next(c for c in checks if c["value"] == "1")
    victim["value"] = "0"
    _write(package / "checks.csv", checks)
    assert main(["verify", str(package)]) == 1
    err = capsys.readouterr().err
    assert "checks.csv: sha256 does not match manifest.json" in err
    _rehash(package, "checks.csv")
    result = verify_package(package)
    assert any(f"row {victim['row_id']}: correct is" in p for p in result.problems)
    assert any(p.startswith("aggregates.csv:") for p in result.problems)  # its ICC moved


def test_tampered_aggregate_is_named(package, capsys):
    aggregates = _read(package / "aggregates.csv")
    aggregates[0]["mean_recall"] = "0.99"
    _write(package / "aggregates.csv", aggregates)
    _rehash(package, "aggregates.csv")
    assert main(["verify", str(package)]) == 1
    err = capsys.readouterr().err
    cell = "/".join(aggregates[0][k] for k in ("sweep", "scenario", "model", "arm"))
    assert f"aggregates.csv: {cell}: mean_recall is 0.99, recomputed" in err
    assert "FAILED" in err


def test_tampered_contrast_is_named(package):
    contrasts = _read(package / "contrasts.csv")
    contrasts[0]["fisher_p"] = "0.001"
    _write(package / "contrasts.csv", contrasts)
    _rehash(package, "contrasts.csv")
    assert any("contrasts.csv:" in p and "fisher_p is 0.001" in p
               for p in verify_package(package).problems)


def test_tampered_manifest_missing_and_extra_files(package, capsys):
    manifest = json.loads((package / "manifest.json").read_text())
    manifest["files"]["config.json"] = "0" * 64
    (package / "manifest.json").write_text(json.dumps(manifest))
    (package / "notes.txt").write_text("added later")
    (package / "README.txt").unlink()
    assert main(["verify", str(package)]) == 1
    err = capsys.readouterr().err
    assert "config.json: sha256 does not match manifest.json" in err
    assert "notes.txt: not listed in manifest.json" in err
    assert "README.txt: listed in manifest.json but missing" in err
    (package / "manifest.json").unlink()
    assert verify_package(package).problems == ["manifest.json: missing"]


def test_deleted_row_is_caught_even_when_rehashed(package):
    rows = _read(package / "rows.csv")
    _write(package / "rows.csv", rows[1:])
    _rehash(package, "rows.csv")
    problems = verify_package(package).problems
    assert any(f"row_id {rows[0]['row_id']} is not in rows.csv" in p for p in problems)
    assert any(p.startswith("aggregates.csv:") for p in problems)


def test_planted_secrets_never_reach_the_package(study, tmp_path, monkeypatch, capsys):
    db = tmp_path / "secret.sqlite"
    db.write_bytes(study[0].read_bytes())
    _plant_secrets(db)
    monkeypatch.setenv("FOLDSCOPE_PLANTED_KEY", SECRET)
    out = tmp_path / "pkg"
    assert main(["export", "--db", str(db), "--out", str(out)]) == 0
    capsys.readouterr()
    blob = b"".join(p.read_bytes() for p in out.iterdir())
    for needle in (SECRET, PRIVATE_HOST, LOCAL_PATH, "alice", EMAIL, str(tmp_path),
                   "FOLDSCOPE_PLANTED_KEY"):
        assert needle.encode() not in blob, needle
    config = json.loads((out / "config.json").read_text())
    models = config["sweeps"][0]["config"]["models"]
    assert models[0]["base_url"].startswith("<endpoint sha256:")
    assert models[1]["base_url"] == "https://openrouter.ai/api/v1"  # public: kept
    assert main(["verify", str(out)]) == 0


def test_answer_prefix_limits_released_text(study, tmp_path):
    out = tmp_path / "pkg"
    export_package([study[0]], out, answer_prefix=12)
    rows = _read(out / "rows.csv")
    assert all(len(r["answer_prefix"]) <= 12 for r in rows)
    assert any(int(r["answer_chars"]) > 12 for r in rows)
    lock = json.loads((out / "provenance.lock.json").read_text())
    store = Store(study[0], readonly=True)
    try:
        answer = store.row(1).answer
    finally:
        store.close()
    assert lock["answers"]["db1-1"] == hashlib.sha256(answer.encode()).hexdigest()
    assert lock["databases"][0]["file_sha256"] == hashlib.sha256(study[0].read_bytes()).hexdigest()
    assert answer.encode() not in b"".join(p.read_bytes() for p in out.iterdir())


@pytest.mark.parametrize("case", ["nonempty", "twice", "prefix"])
def test_export_bad_input_is_one_line_exit_2(study, tmp_path, capsys, case):
    out = tmp_path / "pkg"
    argv = ["export", "--db", str(study[0]), "--out", str(out)]
    if case == "nonempty":
        out.mkdir()
        (out / "x").write_text("x")
    elif case == "twice":
        argv += ["--db", str(study[0])]
    else:
        argv += ["--answer-prefix", "-1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("foldscope: error:")


def test_verify_missing_folder_exit_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "nope")]) == 2
    assert "no such package folder" in capsys.readouterr().err


def test_a_row_flipped_to_valid_is_caught(package):
    rows = _read(package / "rows.csv")
    rows[0]["valid"], rows[0]["validity_reason"] = "0", "ok"
    _write(package / "rows.csv", rows)
    _rehash(package, "rows.csv")
    problems = verify_package(package).problems
    assert any(f"row {rows[0]['row_id']}: valid is 0 but its validity_reason is ok" in p
               for p in problems)
    assert any(p.startswith("aggregates.csv:") and "valid_rows" in p for p in problems)
