"""The study's failure-mode cut, in a module light enough for the command line's parsers to read
at start-up (``foldscope report --gist-fill`` shows its default); ``core.study`` uses it."""

from __future__ import annotations

GIST_FILL = 0.5
"""The failure-mode cut, a parameter (``core.study.study_tables(..., gist_fill=)``, ``foldscope
report --gist-fill``): a failing carrier that fills less than this share of its declared ceiling
is a gist (under-writing); at or above it, the carrier was written but lost the identifiers
(over-writing description). The default lies inside the study's gap between the fills of
models q did not rescue (6 % and 36 %) and those it did (59–100 %)."""
