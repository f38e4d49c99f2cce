"""The user's own settings file, ``$XDG_CONFIG_HOME/foldscope/config.toml``: read at start,
written when a setting (such as the theme) changes.

The file is small TOML of plain keys and tables. Keys this version does not know are kept when
the file is rewritten, so a newer foldscope's settings survive an older one saving the theme.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from foldscope.core.errors import ConfigError
from foldscope.engine.loader import read_toml_file

CONFIG_NAME = "config.toml"


def config_path() -> Path:
    """Where the settings live: ``$XDG_CONFIG_HOME/foldscope/config.toml``, with
    ``~/.config`` when the variable is unset, empty or not absolute (the XDG rule)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "foldscope" / CONFIG_NAME


def read_user_config(path: Path | None = None) -> dict[str, Any]:
    """The settings as a table; empty when there is no file yet.

    Raises:
        ConfigError: the file exists but cannot be read or is not TOML (one line naming it).
    """
    path = path or config_path()
    if not path.exists():
        return {}
    return read_toml_file(path, "settings file")


def current_author(path: Path | None = None) -> str:
    """Who a person's verdicts are recorded as: the settings file's ``author``, else ``$USER``,
    else ``unknown``. An unreadable settings file falls back the same way (verdicts are never
    lost to a typo in it)."""
    try:
        author = read_user_config(path).get("author")
    except ConfigError:
        author = None
    if isinstance(author, str) and author.strip():
        return " ".join(author.split())
    return os.environ.get("USER", "").strip() or "unknown"


LAST_DB_KEY = "last_db"
"""The settings key holding the database the TUI opened last (an absolute path)."""


def last_database(path: Path | None = None) -> str | None:
    """The database the TUI opened last, if the settings file names one that still exists;
    None otherwise (no file, no key, a file gone, or an unreadable settings file)."""
    try:
        value = read_user_config(path).get(LAST_DB_KEY)
    except ConfigError:
        return None
    if isinstance(value, str) and value and Path(value).is_file():
        return value
    return None


def update_user_config(changes: dict[str, Any], path: Path | None = None) -> Path:
    """Set some top-level keys and write the file (atomically), keeping every other key.

    A file that cannot be parsed is not overwritten (the person may be editing it).

    Returns:
        The file written.

    Raises:
        ConfigError: the folder or file cannot be written, or the existing file is malformed.
    """
    path = path or config_path()
    data = {**read_user_config(path), **changes}
    text = dump_toml(data)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write settings ({exc.strerror or exc})") from None
    return path


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string (same escapes); control characters are escaped.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError(f"cannot write a {type(value).__name__} to the settings file")


def _key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else json.dumps(key, ensure_ascii=False)


def dump_toml(data: dict[str, Any]) -> str:
    """Plain TOML for a settings table: scalars and inline values first, then one
    ``[table]`` per nested table (tables nested deeper are written inline)."""
    lines = ["# foldscope settings (written by foldscope; edit freely)"]
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    lines += [f"{_key(k)} = {_value(v)}" for k, v in data.items() if k not in tables]
    for name, table in tables.items():
        lines += ["", f"[{_key(name)}]"]
        lines += [f"{_key(k)} = {_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"
