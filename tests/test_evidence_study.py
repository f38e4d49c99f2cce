"""The evidence package carries what the study recomputes (issue 18 item 7): the final carrier's
headings, fill and length per row, the pooled ICC/DE, the fill and headings correlations and the
paired ceiling contrast, recomputed by verify; and the package digest binds every file."""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import definition, run_sweep

from foldscope.cli.main import main
from foldscope.engine.evidence import (
    DIGEST_LABEL,
    _digest_form,
    export_package,
    package_digest,
    verify_package,
)
from foldscope.engine.report import sweep_report
from foldscope.engine.store import Store


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("evidence-study") / "s.sqlite"
    sweep_id = run_sweep(path, definition(
        scenario="kestrel", models=("sim/faithful", "sim/describer", "sim/gister", "sim/garbler"),
        arms=("j", "t", "m"), repeats=2))
    return path, sweep_id


@pytest.fixture
def package(db, tmp_path) -> Path:
    out = tmp_path / "pkg"
    export_package([db[0]], out)
    return out


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, records: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(records)


def _rehash_manifest(package: Path, *names: str, digest: bool = True) -> None:
    """Re-hash the manifest after an edit: the files' entries, and its package digest too."""
    manifest = json.loads((package / "manifest.json").read_text())
    for name in names:
        manifest["files"][name] = hashlib.sha256((package / name).read_bytes()).hexdigest()
    if digest:
        manifest["package_sha256"] = package_digest(
            {p.name: hashlib.sha256(_digest_form(p.name, p.read_bytes())).hexdigest()
             for p in package.iterdir() if p.name != "manifest.json"})
    (package / "manifest.json").write_text(json.dumps(manifest))


def test_rows_carry_the_final_carriers_headings_fill_and_length(db, package):
    path, _ = db
    with sqlite3.connect(path) as conn:
        finals = {row_id: (h, fill, chars) for row_id, h, fill, chars in conn.execute(
            "SELECT f.row_id, f.headings_carried, f.fill_fraction, f.carrier_chars FROM folds f "
            "WHERE f.fold_index = (SELECT MAX(fold_index) FROM folds g WHERE g.row_id = f.row_id)")}
    rows = _read(package / "rows.csv")
    assert rows and all(r["row_id"].startswith("db1-") for r in rows)
    for r in rows:
        h, fill, chars = finals[int(r["row_id"].removeprefix("db1-"))]
        assert int(r["headings_carried"]) == h and int(r["carried_chars"]) == chars
        if fill is None:
            assert r["fill_fraction"] == "" and r["arm"] == "m"
        else:
            assert float(r["fill_fraction"]) == pytest.approx(fill, rel=1e-11)


def test_study_figures_are_the_reports(db, package):
    path, sweep_id = db
    [line] = _read(package / "study.csv")
    with Store(path, readonly=True) as store:
        [scenario] = sweep_report(store, sweep_id)["study"]["scenarios"]
    [icc] = scenario["tables"]["icc"]["rows"]
    assert int(line["valid_rows"]) == icc["valid_rows"] and int(line["checks"]) == icc["checks"]
    for column in ("icc_pooled", "icc_used", "design_effect", "effective_n"):
        assert float(line[column]) == pytest.approx(icc[column], abs=1e-9)
    corr = {r["measure"]: r for r in scenario["tables"]["correlations"]["rows"]}
    for prefix, measure in (("headings", "headings carried"), ("fill", "fill fraction")):
        assert int(line[f"{prefix}_n"]) == corr[measure]["n"]
        if corr[measure]["r"] is None:
            assert line[f"{prefix}_r"] == ""
        else:
            assert float(line[f"{prefix}_r"]) == pytest.approx(corr[measure]["r"], abs=1e-9)
            assert float(line[f"{prefix}_p"]) == pytest.approx(corr[measure]["p_value"], abs=1e-9)
    # The paired ceiling contrast: j − t over (model, repeat) pairs, every model pooled.
    recall = {(r["model"], r["arm"], r["repeat"]): float(r["recall"])
              for r in _read(package / "rows.csv") if r["valid"] == "1"}
    diffs = [recall[(m, "j", rep)] - recall[(m, "t", rep)] for (m, a, rep) in recall
             if a == "j" and (m, "t", rep) in recall]
    assert int(line["ceiling_pairs"]) == len(diffs) == 8
    assert float(line["ceiling_j_minus_t"]) == pytest.approx(sum(diffs) / len(diffs))
    assert float(line["ceiling_boot_low"]) <= float(line["ceiling_j_minus_t"]) \
        <= float(line["ceiling_boot_high"])


def test_verify_recomputes_the_study_figures(package, capsys):
    assert main(["verify", str(package)]) == 0
    out = capsys.readouterr().out
    assert "1 study lines recomputed identically" in out and "package digest " in out
    lines = _read(package / "study.csv")
    lines[0]["icc_pooled"] = "0.5"
    _write(package / "study.csv", lines)
    _rehash_manifest(package, "study.csv")
    problems = verify_package(package).problems
    assert any(p.startswith("study.csv: ") and "icc_pooled is 0.5" in p for p in problems)


def test_an_edited_fill_moves_the_recomputed_correlation(package):
    rows = _read(package / "rows.csv")
    for r in rows:
        if r["fill_fraction"]:
            r["fill_fraction"] = "0.5" if r["model"] != "sim/gister" else "0.9"
    _write(package / "rows.csv", rows)
    _rehash_manifest(package, "rows.csv")
    problems = verify_package(package).problems
    assert any(p.startswith("study.csv: ") and "fill_r" in p for p in problems)


@pytest.mark.parametrize("name", ["config.json", "provenance.lock.json", "README.txt"])
def test_an_edited_file_fails_even_with_the_manifest_rehashed(package, name):
    path = package / name
    if name == "config.json":
        config = json.loads(path.read_text())
        config["sweeps"][0]["config"]["sweep"]["repeats"] = 9
        path.write_text(json.dumps(config, indent=2) + "\n")
    elif name == "provenance.lock.json":
        lock = json.loads(path.read_text())
        lock["databases"][0]["content_sha256"] = "0" * 64
        path.write_text(json.dumps(lock, indent=2) + "\n")
    else:
        path.write_text(path.read_text().replace("sanitised", "complete"))
    # Re-hashing the file's entry alone, and then the manifest's digest as well: both fail.
    _rehash_manifest(package, name, digest=False)
    problems = verify_package(package).problems
    assert problems and all(not p.startswith(f"{name}: sha256") for p in problems)
    assert any("package_sha256 does not match" in p for p in problems)
    _rehash_manifest(package, name)
    problems = verify_package(package).problems
    assert problems == ["README.txt: the package digest it states does not match the files"]


def test_a_full_consistent_rewrite_is_caught_only_by_the_published_digest(package, capsys):
    published = json.loads((package / "manifest.json").read_text())["package_sha256"]
    assert main(["verify", str(package), "--digest", published]) == 0
    assert "(as expected)" in capsys.readouterr().out
    config = json.loads((package / "config.json").read_text())
    config["sweeps"][0]["name"] = "another study"
    (package / "config.json").write_text(json.dumps(config))
    # Rewrite every hash: README's stated digest and the manifest's, consistently.
    readme = package / "README.txt"
    digest = package_digest({p.name: hashlib.sha256(_digest_form(p.name, p.read_bytes()))
                             .hexdigest() for p in package.iterdir() if p.name != "manifest.json"})
    readme.write_text("\n".join(DIGEST_LABEL + digest if ln.startswith(DIGEST_LABEL) else ln
                                for ln in readme.read_text().split("\n")))
    _rehash_manifest(package, "config.json", "README.txt")
    assert verify_package(package).problems == []  # internally consistent: honest about that
    assert main(["verify", str(package), "--digest", published]) == 1
    assert f"not the expected {published}" in capsys.readouterr().err


def test_a_bad_expected_digest_is_one_line_exit_2(package, capsys):
    assert main(["verify", str(package), "--digest", "xyz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "64 hexadecimal digits" in err


def test_export_prints_the_digest_the_manifest_and_readme_state(db, tmp_path, capsys):
    out = tmp_path / "p2"
    assert main(["export", "--db", str(db[0]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    digest = json.loads((out / "manifest.json").read_text())["package_sha256"]
    assert f"package digest {digest}" in printed
    assert f"{DIGEST_LABEL}{digest}" in (out / "README.txt").read_text()
