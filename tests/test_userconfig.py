"""The user's settings file: where it lives, reading, and rewriting without losing keys."""

import pytest

from foldscope.core.errors import ConfigError
from foldscope.engine.userconfig import config_path, dump_toml, read_user_config, update_user_config


def test_path_follows_xdg_with_the_home_default(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "foldscope" / "config.toml"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for unset in ("", "relative/dir"):
        monkeypatch.setenv("XDG_CONFIG_HOME", unset)
        assert config_path() == tmp_path / "home" / ".config" / "foldscope" / "config.toml"


def test_update_keeps_unknown_keys_and_round_trips(tmp_path):
    path = tmp_path / "f" / "config.toml"
    assert read_user_config(path) == {}
    path.parent.mkdir()
    path.write_text('author = "Ana \\"q\\""\nfuture = [1, 2]\n[keys]\nhelp = "f1"\n')
    update_user_config({"theme": "foldscope-light"}, path)
    assert read_user_config(path) == {"author": 'Ana "q"', "future": [1, 2],
                                      "keys": {"help": "f1"}, "theme": "foldscope-light"}


def test_a_malformed_file_is_one_line_and_never_overwritten(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("theme = \n")
    with pytest.raises(ConfigError) as err:
        update_user_config({"theme": "x"}, path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)
    assert path.read_text() == "theme = \n"


def test_dump_escapes_control_characters():
    import tomllib

    data = {"theme": "a\x1b[2Jb\n", "odd key": True, "t": {"x": 1.5}}
    text = dump_toml(data)
    assert "\x1b" not in text
    assert tomllib.loads(text) == data
