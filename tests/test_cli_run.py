"""The headless CLI path: run, report --format json, and one-line errors with exit code 2."""

import dataclasses
import json

import pytest

from foldscope.cli.main import main
from foldscope.engine.events import EVENT_TYPES


def test_headless_run_then_report_json(tmp_path, capsys):
    db = str(tmp_path / "cli.sqlite")
    code = main(["run", "--scenario", "smoke", "--models", "sim/faithful,sim/describer",
                 "--arms", "j,q,m", "--repeats", "1", "--db", db, "--headless",
                 "--latency-scale", "0"])
    assert code == 0
    err = capsys.readouterr().err
    assert "rows 6/6" in err
    assert main(["report", "--db", db, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cells = {(c["model"], c["arm"]): c for c in report["cells"]}
    assert len(cells) == 6
    for cell in cells.values():
        assert {"model", "arm", "rows", "valid_rows", "mean_recall"} <= set(cell)
        assert cell["rows"] == 1
    assert cells[("sim/describer", "j")]["mean_recall"] < cells[("sim/describer", "q")]["mean_recall"]
    assert report["simulated"] is True


def test_json_events_stream(tmp_path, capsys):
    db = str(tmp_path / "ev.sqlite")
    assert main(["run", "--scenario", "smoke", "--models", "sim/faithful", "--arms", "j",
                 "--db", db, "--headless", "--json-events", "--latency-scale", "0"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "sweep_started" and kinds[-1] == "sweep_finished"
    assert kinds.count("fold") == 3 and "row_done" in kinds
    # Each line is its typed event's serialisation: the kind, the time, then its fields.
    by_kind = {t.kind: t for t in EVENT_TYPES}
    for event in events:
        names = [f.name for f in dataclasses.fields(by_kind[event["event"]]) if f.name != "t"]
        assert list(event) == ["event", "t", *names]


@pytest.mark.parametrize("argv, needle", [
    (["--arms", "j,z"], "unknown arm 'z'"),
    (["--models", "sim/nope"], "unknown model 'sim/nope'"),
    (["--scenario", "atlantis"], "unknown scenario 'atlantis'"),
])
def test_unknown_names_are_one_line_and_exit_2(tmp_path, capsys, argv, needle):
    base = {"--scenario": "smoke", "--models": "sim/faithful", "--arms": "j"}
    base.update(dict(zip(argv[::2], argv[1::2])))
    args = ["run", "--db", str(tmp_path / "x.sqlite"), "--headless"]
    for k, v in base.items():
        args += [k, v]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_bad_sweep_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[sweep]\nscenario = "smoke"\narms = ["j"]\nrepeats = "many"\n'
                   '[[models]]\nid = "sim/faithful"\n')
    assert main(["run", str(bad), "--db", str(tmp_path / "x.sqlite"), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.toml" in err and "sweep.repeats" in err and len(err.splitlines()) == 1


def test_report_on_missing_or_newer_database(tmp_path, capsys):
    assert main(["report", "--db", str(tmp_path / "none.sqlite")]) == 2
    assert "no such database" in capsys.readouterr().err


def test_help_lists_commands(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("run", "report", "demo", "scenario", "arms"):
        assert command in out


def test_example_sweep_file_runs_headless(tmp_path, capsys):
    db = str(tmp_path / "ex.sqlite")
    assert main(["run", "examples/kestrel-sweep.toml", "--scenario", "smoke", "--repeats", "1",
                 "--db", db, "--headless", "--latency-scale", "0"]) == 0
    assert "rows 6/6" in capsys.readouterr().err


def test_missing_api_key_is_named_not_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("FOLDSCOPE_TEST_KEY", raising=False)
    sweep = tmp_path / "real.toml"
    sweep.write_text('[sweep]\nscenario = "smoke"\narms = ["j"]\n[[models]]\n'
                     'id = "qwen/qwen3.6-35b-a3b"\nprovider = "openrouter"\npin = "someprovider"\n'
                     'api_key_env = "FOLDSCOPE_TEST_KEY"\n')
    assert main(["run", str(sweep), "--db", str(tmp_path / "r.sqlite"), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert "FOLDSCOPE_TEST_KEY" in err and "not set" in err and len(err.splitlines()) == 1
