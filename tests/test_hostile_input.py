"""Hostile configuration: credentials in a base URL are refused before anything is stored."""

from __future__ import annotations

import sqlite3

import pytest

from foldscope.cli.main import main
from foldscope.core.errors import ModelError
from foldscope.engine.models import resolve_model


@pytest.mark.parametrize("url", ["http://alice:s3cr3t@host/v1", "https://tok9@api.example/v1",
                                 "http://:secret@127.0.0.1:8000/v1"])
def test_credentials_in_base_url_are_refused_naming_the_fix(url):
    with pytest.raises(ModelError) as info:
        resolve_model("acme/m", {"provider": "vllm", "base_url": url})
    msg = str(info.value)
    assert "\n" not in msg and "api_key_env" in msg and "base_url" in msg
    assert "s3cr3t" not in msg and "secret" not in msg and "tok9" not in msg


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
