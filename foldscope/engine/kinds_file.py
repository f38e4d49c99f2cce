"""Reads the user's identifier-kind files and merges them over the shipped rules."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from foldscope.core.identifiers import KindRule, default_rules, merge_rules, rules_from_data
from foldscope.engine.loader import read_toml_file
from foldscope.engine.options import KINDS_ENV


def _read_rules(path: Path, what: str) -> tuple[KindRule, ...]:
    return rules_from_data(read_toml_file(path, what), source=str(path))


def identifier_rules(path: str | Path | None = None,
                     environ: Mapping[str, str] | None = None) -> tuple[KindRule, ...]:
    """The identifier rules in force: shipped, then ``$FOLDSCOPE_IDENTIFIER_KINDS``, then ``path``.

    Each later file adds kinds or replaces same-named ones (:func:`merge_rules`).

    Args:
        path: a kinds file named on the command line (``--kinds FILE``), if any.
        environ: the environment to read (default: ``os.environ``).

    Returns:
        The merged rules.

    Raises:
        ConfigError: a named file is missing or malformed (one line naming it).
    """
    environ = os.environ if environ is None else environ
    rules = default_rules()
    env_path = environ.get(KINDS_ENV, "").strip()
    if env_path:
        rules = merge_rules(rules, _read_rules(Path(env_path), f"identifier kinds file (${KINDS_ENV})"))
    if path is not None:
        rules = merge_rules(rules, _read_rules(Path(path), "identifier kinds file"))
    return rules
