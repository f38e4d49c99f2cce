"""Tests for ``foldscope grade``."""

from __future__ import annotations

import importlib.util
import io
import json

import pytest

from foldscope.cli import grade_cmd
from foldscope.cli.main import main
from foldscope.core.scenario import Fact


def _fact(label: str, value: str, kind: str) -> Fact:
    return Fact(label=label, value=value, role="tool", chunk=0, graded=True, kind=kind)


FACTS = [
    _fact("ledger service port", "62114", "port"),
    _fact("ledger shard count", "19 shards", "count"),
    _fact("owning department", "Отдел расчётов-4", "department"),
    _fact("on-call handle", "@marta.v-oncall", "handle"),
]

ANSWER = (
    "- **ledger service port**: 62114\n"
    "- ledger shard count: 19\n"
    "- Owning Department: «Отдел расчётов-4»\n"
    "- on-call handle: unknown\n"
)


@pytest.fixture
def fake_scenario(monkeypatch):
    seen = []

    def load(name):
        seen.append(name)
        return FACTS, [f.value for f in FACTS]

    monkeypatch.setattr(grade_cmd, "_load_graded", load)
    return seen


@pytest.fixture
def answer_file(tmp_path):
    path = tmp_path / "answer.txt"
    path.write_text(ANSWER, encoding="utf-8")
    return path


def test_text_output(fake_scenario, answer_file, capsys):
    assert main(["grade", "--scenario", "fake", "--answer", str(answer_file)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert fake_scenario == ["fake"]
    assert lines[0].startswith("correct") and "62114" in lines[0]
    assert lines[1].startswith("wrong") and "[unit dropped]" in lines[1]
    assert "[expected: 19 shards]" in lines[1]
    assert lines[2].startswith("correct") and "Отдел расчётов-4" in lines[2]
    assert lines[3].startswith("abstained")
    assert lines[-1].startswith("recall 2/4 = 0.500")


def test_json_output(fake_scenario, answer_file, capsys):
    assert main(["grade", "--scenario", "fake", "--answer", str(answer_file), "--json"]) == 0
    out = capsys.readouterr().out
    assert "Отдел" in out  # ensure_ascii=False
    doc = json.loads(out)
    assert doc["scenario"] == "fake"
    assert doc["recall"] == 0.5 and doc["correct"] == 2 and doc["graded"] == 4
    assert doc["facts"][1] == {
        "label": "ledger shard count", "expected": "19 shards", "found": "19",
        "correct": False, "abstained": False, "hedged": False, "unit_dropped": True,
        "class": "fabricated", "carrier_state": "missing", "detail": None, "nothing": False,
    }
    assert set(doc["facts"][0]) == {"label", "expected", "found", "correct", "abstained",
                                    "hedged", "unit_dropped", "class", "carrier_state",
                                    "detail", "nothing"}
    # Without a carrier every fact counts as lost: an abstention is honest.
    assert doc["facts"][3]["class"] == "honest_abstention"


def test_json_classes_judged_by_the_carrier(fake_scenario, answer_file, tmp_path, capsys):
    carrier = tmp_path / "carrier.txt"
    carrier.write_text("- shards: 19 shards\n- handle: @marta.v-oncall\n", encoding="utf-8")
    assert main(["grade", "--scenario", "fake", "--answer", str(answer_file), "--carrier",
                 str(carrier), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)["facts"]
    assert [(f["class"], f["carrier_state"]) for f in facts] == [
        ("correct", "missing"), ("read_failure", "present"), ("correct", "missing"),
        ("read_failure", "present")]


def test_missing_carrier_file_is_one_line(fake_scenario, answer_file, capsys):
    assert main(["grade", "--scenario", "fake", "--answer", str(answer_file), "--carrier",
                 "/no/such/carrier"]) == 2
    assert capsys.readouterr().err.strip() == "foldscope: error: carrier file not found: /no/such/carrier"


def test_answer_from_stdin(fake_scenario, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO("ledger service port: 62114\n"))
    assert main(["grade", "--scenario", "fake", "--answer", "-", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["correct"] == 1


def test_missing_answer_file_is_a_one_line_error(fake_scenario, tmp_path, capsys):
    missing = tmp_path / "nope.txt"
    assert main(["grade", "--scenario", "fake", "--answer", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(missing) in err and "Traceback" not in err
    assert fake_scenario == []  # failed before loading the scenario


def test_non_utf8_answer_file(fake_scenario, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00broken")
    assert main(["grade", "--scenario", "fake", "--answer", str(bad)]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_control_characters_in_answers_are_shown_literally(fake_scenario, tmp_path, capsys):
    path = tmp_path / "a.txt"
    path.write_text("ledger service port: \x1b[31m8080\n", encoding="utf-8")
    main(["grade", "--scenario", "fake", "--answer", str(path)])
    out = capsys.readouterr().out
    assert "\x1b" not in out and "␛[31m8080" in out


def test_missing_required_flag_is_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["grade", "--answer", "x"])
    assert exc.value.code == 2


@pytest.mark.skipif(importlib.util.find_spec("foldscope.core.scenario") is None,
                    reason="scenario loader not built yet")
def test_real_kestrel_scenario(tmp_path, capsys):
    from foldscope.engine.loader import load_scenario

    try:
        graded = load_scenario("kestrel").graded
    except Exception as exc:  # noqa: BLE001 - another engineer's file may be mid-edit
        pytest.skip(f"kestrel scenario not loadable: {exc}")
    path = tmp_path / "answer.txt"
    path.write_text("\n".join(f"{f.label}: {f.value}" for f in graded), encoding="utf-8")
    assert main(["grade", "--scenario", "kestrel", "--answer", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["graded"] == len(graded) and doc["recall"] == 1.0
