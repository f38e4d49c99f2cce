"""foldscope's themes: the built-in dark theme, theme files (found and read by
``foldscope.engine.loader``), and fact colours."""

from __future__ import annotations

from pathlib import Path

from textual.color import Color
from textual.theme import Theme

from foldscope.core.errors import ConfigError
from foldscope.engine.loader import read_theme_data, theme_files

ARM_COLOURS = ("#58a6ff", "#f0883e", "#3fb950", "#ff7eb6", "#d2a8ff", "#e3d34b",
               "#39d0d8", "#b07d48", "#f85149", "#a0c15a", "#c9d1d9", "#ffc7a8")
"""The dark theme's categorical palette: one colour per arm of the catalogue (``$arm-0`` ..
``$arm-11``, in ``core.arms.ARMS`` order), hues apart and lightness alternating; every series
also has its own mark, so no two arms rely on colour alone."""

FACT_VARIABLES = {
    "fact-present": "#3fb950",
    "fact-mutated": "#d29922",
    "fact-missing": "#f85149",
    "cell-pending": "#6e7681",
    **{f"arm-{i}": colour for i, colour in enumerate(ARM_COLOURS)},
}
"""Defaults for foldscope's own variables; a theme file may override any of them."""

SCROLLBAR_THUMB = 0.45
"""How far a scrollbar's thumb goes from the panel colour towards the primary (hovered: more)."""


def scrollbar_variables(panel: str, primary: str) -> dict[str, str]:
    """A theme's scrollbar colours from its own: the track in its panel colour, the thumb
    between panel and primary, primary while dragged. Textual's default track is the
    background darkened, which draws black in every dark theme."""
    track = Color.parse(panel)
    accent = Color.parse(primary)
    return {"scrollbar-background": track.hex, "scrollbar-background-hover": track.hex,
            "scrollbar-background-active": track.hex, "scrollbar-corner-color": track.hex,
            "scrollbar": track.blend(accent, SCROLLBAR_THUMB).hex,
            "scrollbar-hover": track.blend(accent, min(1.0, SCROLLBAR_THUMB + 0.2)).hex,
            "scrollbar-active": accent.hex}


FOLDSCOPE_DARK = Theme(
    name="foldscope-dark",
    primary="#58a6ff",
    secondary="#bc8cff",
    accent="#f0883e",
    warning="#d29922",
    error="#f85149",
    success="#3fb950",
    background="#0d1117",
    surface="#161b22",
    panel="#21262d",
    dark=True,
    variables={**scrollbar_variables("#21262d", "#58a6ff"), **FACT_VARIABLES},
)
"""The default theme, built in so the app starts even without a ``themes/`` folder."""

_THEME_KEYS = {"name", "dark", "primary", "secondary", "accent", "warning", "error", "success",
               "foreground", "background", "surface", "panel", "boost", "luminosity_spread",
               "text_alpha", "variables"}


class ThemeFileError(ValueError):
    """A theme file is malformed; the message is one line naming the file and the problem."""


def load_theme_file(path: Path) -> Theme:
    """Read one theme file (TOML with Theme's keys and a ``[variables]`` table)."""
    try:
        data = read_theme_data(path)
    except ConfigError as exc:
        raise ThemeFileError(str(exc)) from None
    unknown = set(data) - _THEME_KEYS
    if unknown:
        raise ThemeFileError(f"{path}: unknown key {sorted(unknown)[0]!r}")
    if not isinstance(data.get("name"), str) or not isinstance(data.get("primary"), str):
        raise ThemeFileError(f"{path}: 'name' and 'primary' are required strings")
    own = {str(k): str(v) for k, v in data.pop("variables", {}).items()}
    try:
        # A file without a panel colour gets the track Textual would derive (its surface).
        bars = scrollbar_variables(str(data.get("panel") or data.get("surface")
                                       or data.get("background") or "#000000"),
                                   str(data["primary"]))
        variables = {**bars, **FACT_VARIABLES, **own}
        return Theme(**data, variables=variables)
    except (TypeError, ValueError) as exc:
        raise ThemeFileError(f"{path}: {exc}") from None


def discover_themes(folder: Path | None = None) -> tuple[list[Theme], list[str]]:
    """Load every ``*.toml`` theme in a folder (default: the theme search path, user folders
    first); return the themes and one-line errors."""
    themes, errors = [], []
    for path in theme_files(folder):
        try:
            themes.append(load_theme_file(path))
        except ThemeFileError as exc:
            errors.append(str(exc))
    return themes, errors
