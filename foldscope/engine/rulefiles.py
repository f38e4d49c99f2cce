"""User rule files: read a user's stock-value signature file and merge it over the shipped rules."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path

from foldscope.core.errors import ConfigError
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.signatures import (
    Signature,
    default_signatures,
    merge_signatures,
    signatures_from_data,
)
from foldscope.engine.options import SIGNATURES_ENV


def load_signatures(path: str | Path | None = None,
                    env: Mapping[str, str] | None = None) -> tuple[Signature, ...]:
    """The shipped signatures, with a user file's rules merged over them.

    Args:
        path: the user file; None reads ``$FOLDSCOPE_SIGNATURES`` (unset or empty: no user file).
        env: the environment to read (default: ``os.environ``).

    Returns:
        The rules.

    Raises:
        ConfigError: one line naming the file and what is wrong with it.
    """
    if path is None:
        path = (os.environ if env is None else env).get(SIGNATURES_ENV) or None
    if path is None:
        return default_signatures()
    path = Path(path)
    try:
        data = loads_toml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read signature file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, NestingError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid TOML file ({exc})") from None
    return merge_signatures(default_signatures(), signatures_from_data(data, source=str(path)))
