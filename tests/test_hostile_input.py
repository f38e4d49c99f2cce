"""Hostile input: credentials in a base URL, and ids and scenario fields carrying escape, bidi or
control characters, are refused before anything is planned; what is printed is always literal."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import definition, run_sweep
from hypothesis import given
from hypothesis import strategies as st

from foldscope.cli.main import main
from foldscope.core.errors import ModelError, ScenarioError
from foldscope.core.text import (
    BIDI_CONTROLS,
    ID_MAX_CHARS,
    VALUE_MAX_CHARS,
    check_field,
    json_text,
    literal,
)
from foldscope.engine.loader import load_scenario
from foldscope.engine.models import resolve_model


@pytest.mark.parametrize("url", ["http://alice:s3cr3t@host/v1", "https://tok9@api.example/v1",
                                 "http://:secret@127.0.0.1:8000/v1"])
def test_credentials_in_base_url_are_refused_naming_the_fix(url):
    with pytest.raises(ModelError) as info:
        resolve_model("acme/m", {"provider": "vllm", "base_url": url})
    msg = str(info.value)
    assert "\n" not in msg and "api_key_env" in msg and "base_url" in msg
    assert "s3cr3t" not in msg and "secret" not in msg and "tok9" not in msg


def test_base_url_with_control_characters_is_refused():
    with pytest.raises(ModelError, match="field 'base_url': must be one line of printable"):
        resolve_model("acme/m", {"provider": "vllm", "base_url": "http://127.0.0.1:8000/v1\x1b[2J"})


def test_run_with_credentials_in_base_url_exits_2_and_stores_nothing(tmp_path, capsys):
    sweep = tmp_path / "s.toml"
    sweep.write_text('[sweep]\nscenario = "smoke"\narms = ["j"]\n[[models]]\nid = "acme/m"\n'
                     'provider = "vllm"\nbase_url = "http://bob:hunter2@127.0.0.1:9/v1"\n')
    db = tmp_path / "x.sqlite"
    assert main(["run", str(sweep), "--db", str(db), "--headless"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "api_key_env" in err and "hunter2" not in err
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert "hunter2" not in "".join(r[0] for r in conn.execute(
                "SELECT config_json FROM sweeps"))


# -- hostile identifiers and scenario fields ------------------------------------------------

HOSTILE_CHARS = ["\x1b", "\x9b", "\x07", "\x00", "\x7f", "\n", "\r", "\t", *sorted(BIDI_CONTROLS)]
TERMINAL_ACTIVE = set(HOSTILE_CHARS) - {"\n"}


def _active(text: str) -> set[str]:
    return {c for c in text if c in TERMINAL_ACTIVE or 0x80 <= ord(c) < 0xA0}


@given(st.text(alphabet=st.sampled_from(HOSTILE_CHARS + list("ab[]\\x \u0416")), max_size=40))
def test_literal_neutralises_every_active_character_one_for_one(text):
    shown = literal(text)
    assert len(shown) == len(text)
    assert not _active(shown)
    assert shown.count("\n") == text.count("\n")
    assert "\n" not in literal(text, keep_newlines=False)


@pytest.mark.parametrize("ch", HOSTILE_CHARS + ["\ud800", "\u200b"])
def test_check_field_refuses_controls_bidi_and_unprintables(ch):
    with pytest.raises(ValueError, match=f"U\\+{ord(ch):04X}"):
        check_field(f"sim/faith{ch}ful", limit=ID_MAX_CHARS)


def test_check_field_keeps_real_values_and_bounds_length():
    for value in ("Отдел расчётов-4", "https://origin-7.cdn.kestrel-internal.net/assets",
                  "@marta.v-oncall", "qwen3-235b@deepinfra", "2026-07-14 01:26 UTC"):
        assert check_field(value, limit=ID_MAX_CHARS) == value
    with pytest.raises(ValueError, match="at most 200 characters"):
        check_field("x" * (ID_MAX_CHARS + 1), limit=ID_MAX_CHARS)


def test_json_text_escapes_what_a_terminal_would_act_on():
    data = {"m": "a\x1b[2Jb\x9b31m\u202ec\x7f", "ru": "Отдел"}
    out = json_text(data)
    assert not _active(out) and "Отдел" in out and json.loads(out) == data


SCENARIO = """\
name = "hostile"
description = "{description}"
seed = 5
chunks = 1
tokens_per_chunk = 400

[[facts]]
label = "{label}"
value = "{value}"
role = "tool"
chunk = 1
graded = true
kind = "port"
"""


@pytest.mark.parametrize("field, text, needle", [
    ("label", "ledger \\u202eport", "facts[0].label: must be one line of printable text"),
    ("label", "ledger \\u2066port", "U+2066"),
    ("description", "Fine \\u009b31m text.", "description: must be one line of printable"),
    ("value", "62\\u001b[7m114", "facts[0].value"),
    ("value", "6" * (VALUE_MAX_CHARS + 1), "facts[0].value: must be at most 1000 characters"),
    ("label", "l" * (ID_MAX_CHARS + 1), "facts[0].label: must be at most 200 characters"),
])
def test_hostile_scenario_fields_are_refused_naming_the_field(tmp_path, field, text, needle):
    fields = {"description": "A scenario.", "label": "ledger port", "value": "62114"}
    fields[field] = text
    path = tmp_path / "hostile.toml"
    path.write_text(SCENARIO.format(**fields), encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    msg = str(info.value)
    assert needle in msg and "\n" not in msg and not _active(msg) and len(msg) < 300


def test_megabyte_fact_value_is_refused(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text(SCENARIO.format(description="Big.", label="blob", value="7" * 1_000_000))
    with pytest.raises(ScenarioError, match="at most 1000 characters"):
        load_scenario(path)


@pytest.mark.parametrize("flag, value, field", [
    ("--models", "sim/faithful\x1b[31m", "models[0].id"),
    ("--models", "sim/faithful:\u202etag", "models[0].id"),
    ("--models", "sim/" + "x" * 300, "models[0].id"),
    ("--arms", "j\x1b[2J", "--arms"),
    ("--scenario", "smoke\x9b2J", "--scenario"),
])
def test_hostile_ids_are_refused_before_anything_is_planned(tmp_path, capsys, flag, value, field):
    args = {"--scenario": "smoke", "--models": "sim/faithful", "--arms": "j", flag: value}
    db = tmp_path / "x.sqlite"
    argv = ["run", "--db", str(db), "--headless"]
    for k, v in args.items():
        argv += [k, v]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and field in err and not _active(err + captured.out)
    if db.exists():
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM sweeps").fetchone()[0] == 0


def test_model_file_entry_with_hostile_id_names_entry_and_field(tmp_path):
    from foldscope.core.errors import ConfigError
    from foldscope.engine.models import load_models_toml

    path = tmp_path / "m.toml"
    path.write_text('[[models]]\nid = "acme/\\u001b]0;pwned\\u0007"\nprovider = "vllm"\n')
    with pytest.raises(ConfigError) as info:
        load_models_toml(path)
    assert "models[0]" in str(info.value) and "printable" in str(info.value)


def test_report_never_prints_raw_escape_sequences(tmp_path, capsys):
    db = tmp_path / "r.sqlite"
    sweep_id = run_sweep(db, definition(models=("sim/faithful",), arms=("j",)))
    hostile = "endpoint said \x1b[2J\x1b]8;;http://x\x07click\x9b7m \u202egnp.exe"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE sweeps SET pins_json=?", [json.dumps(
            {"sim/faithful": {"provider": "sim", "pin": None, "warnings": [hostile],
                              "endpoint": None}})])
        conn.execute("UPDATE rows SET model=?", ["sim/faithful\x1b[31m"])
    for fmt in ("table", "json"):
        assert main(["report", "--db", str(db), "--sweep", sweep_id, "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert not _active(out), fmt
        assert "click" in out
