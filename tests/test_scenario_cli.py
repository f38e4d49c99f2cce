"""Tests for the ``foldscope scenario`` command (list, show, show --json, bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import foldscope.cli.main as cli_main
from foldscope.cli.main import main


@pytest.fixture(autouse=True)
def _only_scenario_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # main() imports every command module; registering only this one keeps these tests about
    # the scenario command, not about whichever other command is mid-change in the tree.
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", ("foldscope.cli.scenario_cmd",))
    monkeypatch.delenv("FOLDSCOPE_SCENARIOS", raising=False)


def test_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["kestrel", "kestrel-single", "smoke", "tiny"]
    kestrel = out[0]
    assert "6 chunks" in kestrel
    assert "50 planted / 14 graded" in kestrel
    assert "ledger service" in kestrel
    assert "28 planted /  7 graded" in out[1]


def test_show_human(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "show", "kestrel"]) == 0
    out = capsys.readouterr().out
    assert "50 planted (14 graded, 36 decoys) · distributed" in out
    assert "total" in out
    lines = out.splitlines()
    port = next(line for line in lines if "ledger service port" in line)
    assert port.split()[:4] == ["1", "1", "tool", "graded"]  # chunks shown 1-based
    release = next(line for line in lines if "release tag" in line)
    assert release.split()[1] == "6" and release.rstrip().endswith("v4.18.2-rc3")
    assert "Отдел расчётов-4" in out
    assert sum(" decoy " in line for line in lines) == 36


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "show", "kestrel", "--json"]) == 0
    raw = capsys.readouterr().out
    assert "Отдел расчётов-4" in raw  # ensure_ascii=False
    data = json.loads(raw)
    assert set(data) == {"name", "description", "seed", "total_tokens", "chunks", "facts"}
    assert data["name"] == "kestrel"
    assert [c["index"] for c in data["chunks"]] == list(range(6))
    assert sum(c["tokens"] for c in data["chunks"]) == data["total_tokens"]
    assert all(set(c) == {"index", "tokens", "turns"} for c in data["chunks"])
    assert len(data["facts"]) == 50
    assert set(data["facts"][0]) == {"label", "value", "role", "chunk", "graded", "kind"}
    assert data["facts"][0] == {"label": "ledger service port", "value": "62114", "role": "tool",
                                "chunk": 0, "graded": True, "kind": "port"}
    assert sum(f["graded"] for f in data["facts"]) == 14


def test_show_unknown_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "show", "nope"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("foldscope: error: unknown scenario 'nope' "
                            "(known: kestrel, kestrel-single, smoke, tiny)\n")


def test_show_broken_file_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.toml").write_text('name = "broken"\nseed = [\n', encoding="utf-8")
    assert main(["scenario", "show", "broken.toml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("foldscope: error: broken.toml: invalid TOML: ")


def test_scenario_without_subcommand_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario"]) == 2
    assert "list" in capsys.readouterr().out


def test_show_requires_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["scenario", "show"])
    assert info.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
