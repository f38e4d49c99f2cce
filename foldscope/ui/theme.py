"""foldscope's themes and the theme variables its widgets use for fact states."""

from __future__ import annotations

from textual.theme import Theme

FACT_VARIABLES = {
    "fact-present": "#3fb950",
    "fact-mutated": "#d29922",
    "fact-missing": "#f85149",
    "cell-pending": "#6e7681",
}
"""Defaults for foldscope's own variables; a theme file may override any of them."""

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
    variables=dict(FACT_VARIABLES),
)

FOLDSCOPE_LIGHT = Theme(
    name="foldscope-light",
    primary="#0969da",
    secondary="#8250df",
    accent="#bc4c00",
    warning="#9a6700",
    error="#cf222e",
    success="#1a7f37",
    background="#ffffff",
    surface="#f6f8fa",
    panel="#eaeef2",
    dark=False,
    variables={"fact-present": "#1a7f37", "fact-mutated": "#9a6700",
               "fact-missing": "#cf222e", "cell-pending": "#8c959f"},
)

THEMES = (FOLDSCOPE_DARK, FOLDSCOPE_LIGHT)
