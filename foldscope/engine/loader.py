"""Finding and reading scenario and theme files: the search path, the files, the cache.

Built-in scenarios and themes ship inside the package (``foldscope/data/``, which in a source
checkout links to the top-level ``scenarios/`` and ``themes/`` folders). Folders named in
``$FOLDSCOPE_SCENARIOS`` and ``$FOLDSCOPE_THEMES`` (several joined with ``os.pathsep``) are
searched first, so a user's file of the same name takes the place of a built-in one.
Core receives the text (``foldscope.core.scenario.parse_scenario``); nothing there reads a file.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from foldscope.core.errors import ConfigError, ScenarioError, UnknownScenario
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.scenario import Fact, Scenario, parse_facts, parse_scenario

SCENARIOS_ENV = "FOLDSCOPE_SCENARIOS"
"""Environment variable naming extra scenario folders, searched before the built-in ones."""

THEMES_ENV = "FOLDSCOPE_THEMES"
"""Environment variable naming extra theme folders, searched before the built-in ones."""

BUILTIN_DATA = Path(__file__).resolve().parents[1] / "data"
"""The package's data folder: ``scenarios/`` and ``themes/`` as shipped."""


def _search_path(env: str, builtin: str) -> list[Path]:
    user = [Path(p).expanduser() for p in os.environ.get(env, "").split(os.pathsep) if p]
    return [*user, BUILTIN_DATA / builtin]


def scenario_dirs() -> list[Path]:
    """The folders scenario names are looked up in, first match wins: ``$FOLDSCOPE_SCENARIOS``'s
    folders, then the built-in scenarios."""
    return _search_path(SCENARIOS_ENV, "scenarios")


def theme_dirs() -> list[Path]:
    """The folders themes are read from: ``$FOLDSCOPE_THEMES``'s folders, then the built-in ones."""
    return _search_path(THEMES_ENV, "themes")


def _toml_files(folders: list[Path]) -> dict[str, Path]:
    """``*.toml`` files by stem across ``folders``; the first folder holding a stem wins."""
    found: dict[str, Path] = {}
    for folder in folders:
        if folder.is_dir():
            for path in sorted(folder.glob("*.toml")):
                found.setdefault(path.stem, path)
    return dict(sorted(found.items()))


def display_path(path: Path) -> str:
    """A path as error messages show it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


# --- scenarios ----------------------------------------------------------------------------------


def scenario_names() -> list[str]:
    """The names of every scenario on the search path, sorted."""
    return list(_toml_files(scenario_dirs()))


# Scenario generation is deterministic from the file, so a loaded scenario stays valid until the
# file changes; keyed by mtime and size, an edited file is reloaded on the next call.
_CACHE: dict[Path, tuple[tuple[int, int], Scenario]] = {}


def read_scenario(path: Path) -> Scenario:
    """Read and parse one scenario file (cached while the file is unchanged).

    Raises:
        ScenarioError: The file is missing, unreadable, not UTF-8 or malformed; the one-line
            message starts with the file's name.
    """
    resolved, stamp, where = _stat(path)
    hit = _CACHE.get(resolved)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    scenario = parse_scenario(_read_text(resolved, where), where, path=path)
    _CACHE[resolved] = (stamp, scenario)
    return scenario


def _stat(path: Path) -> tuple[Path, tuple[int, int], str]:
    where = display_path(path)
    resolved = path.resolve()
    try:
        stat = resolved.stat()
    except FileNotFoundError:
        raise ScenarioError(f"{where}: no such scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{where}: cannot read: {exc.strerror or exc}") from None
    return resolved, (stat.st_mtime_ns, stat.st_size), where


def _read_text(resolved: Path, where: str) -> str:
    try:
        raw = resolved.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{where}: no such scenario file") from None
    except OSError as exc:
        raise ScenarioError(f"{where}: cannot read: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{where}: not UTF-8 text (byte {exc.start})") from None


def load_scenario_facts(name_or_path: str | Path) -> list[Fact]:
    """A scenario's planted facts, found as :func:`load_scenario` finds the file, without
    generating its transcript unless it is loaded already (generating kestrel's six 100k-character
    chunks costs ~0.25 s of CPU; a report needs only the facts).

    Raises:
        UnknownScenario, ScenarioError: as :func:`load_scenario`.
    """
    resolved, stamp, where = _stat(_scenario_path(name_or_path))
    hit = _CACHE.get(resolved)
    if hit is not None and hit[0] == stamp:
        return hit[1].facts
    return parse_facts(_read_text(resolved, where), where)


def _looks_like_path(value: str) -> bool:
    return value.endswith(".toml") or "/" in value or os.sep in value


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a scenario by name (from the search path) or from a file path.

    Args:
        name_or_path: A scenario name such as ``"kestrel"``, or a path to a ``.toml`` file (a
            ``Path``, or a string containing a slash or ending in ``.toml``).

    Returns:
        The scenario with its chunks generated. Repeated loads of an unchanged file return the
        same cached object.

    Raises:
        UnknownScenario: The name matches no file on the search path.
        ScenarioError: The file is malformed or fails its load-time checks.
    """
    return read_scenario(_scenario_path(name_or_path))


def _scenario_path(name_or_path: str | Path) -> Path:
    if isinstance(name_or_path, Path) or _looks_like_path(name_or_path):
        return Path(name_or_path)
    files = _toml_files(scenario_dirs())
    path = files.get(name_or_path)
    if path is None:
        known = ", ".join(files) or "none"
        raise UnknownScenario(f"unknown scenario {name_or_path!r} (known: {known})")
    return path


def list_scenarios() -> list[Scenario]:
    """Load every scenario on the search path, sorted by name.

    Raises:
        ScenarioError: One of the files is malformed (the message names it).
    """
    return [read_scenario(path) for path in _toml_files(scenario_dirs()).values()]


# --- themes -------------------------------------------------------------------------------------


def theme_files(folder: Path | None = None) -> list[Path]:
    """Theme files to load: every ``*.toml`` in ``folder``, or on the theme search path."""
    return list(_toml_files([folder] if folder is not None else theme_dirs()).values())


def read_theme_data(path: Path) -> dict[str, Any]:
    """Read one theme file's TOML table (the UI turns it into a theme).

    Raises:
        ConfigError: The file cannot be read or is not TOML; one line naming it.
    """
    try:
        return loads_toml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, NestingError) as exc:
        raise ConfigError(f"{path}: cannot read theme ({exc})") from None


def read_toml_file(path: str | Path, what: str) -> dict[str, Any]:
    """Read a user's TOML file (facts, identifier kinds...) as a table.

    Args:
        path: the file.
        what: what to call it in errors ("facts file").

    Raises:
        ConfigError: the file is missing, unreadable or not TOML; one line naming it.
    """
    path = Path(path)
    try:
        return loads_toml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} is a directory: {path}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} is not UTF-8 text: {path}") from None
    except (tomllib.TOMLDecodeError, NestingError) as exc:
        raise ConfigError(f"{what} {path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc.strerror}") from None
