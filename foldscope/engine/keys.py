"""API keys: which environment variables may hold one, and what a usable key looks like.

A sweep file is untrusted (it may come with a shared study), and whatever variable its
``api_key_env`` names is sent as a Bearer token to its own ``base_url``. So the name must look
like a key's (``KEY_ENV_PATTERNS``), and any other name must be allowed by the person in their
own settings file (``allowed_api_key_envs`` in ``$XDG_CONFIG_HOME/foldscope/config.toml``),
never by the sweep file.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

KEY_ENV_PATTERNS: tuple[str, ...] = ("*_API_KEY", "*_APIKEY", "*_API_TOKEN", "*_TOKEN", "*_KEY")
"""Names an ``api_key_env`` may have without the person allowing it."""

NOT_KEY_WORDS = frozenset({"SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PRIVATE", "SSH",
                           "GPG", "PGP", "AWS", "NOT", "SESSION", "COOKIE"})
"""Words (between underscores) that mark a variable as something other than a model API key,
even when the name ends like one (``AWS_SECRET_ACCESS_KEY``, ``SECRET_NOT_A_KEY``)."""

ALLOW_SETTING = "allowed_api_key_envs"
"""The settings-file key listing further variable names a person allows as ``api_key_env``."""


def env_name_allowed(name: str, allowed: Iterable[str] = ()) -> bool:
    """Whether ``name`` may be an ``api_key_env``: it matches a key pattern and has no word of
    ``NOT_KEY_WORDS``, or the person listed it in ``allowed``."""
    if name in set(allowed):
        return True
    upper = name.upper()
    if set(upper.split("_")) & NOT_KEY_WORDS:
        return False
    return any(fnmatchcase(upper, pattern) for pattern in KEY_ENV_PATTERNS)


def user_allowed_envs() -> tuple[str, ...]:
    """The variable names the person's own settings file allows beyond the patterns.

    An unreadable settings file allows nothing more (the patterns still apply).
    """
    from foldscope.core.errors import ConfigError
    from foldscope.engine.userconfig import read_user_config

    try:
        value = read_user_config().get(ALLOW_SETTING)
    except ConfigError:
        return ()
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def env_name_problem(name: str) -> str | None:
    """Why ``name`` may not be an ``api_key_env`` (None: it may)."""
    if env_name_allowed(name) or env_name_allowed(name, user_allowed_envs()):
        return None
    return (f"'{name}' does not look like an API-key variable (allowed: "
            f"{', '.join(KEY_ENV_PATTERNS)}, without the words SECRET, PASSWORD, PRIVATE, AWS…); "
            f"to send it anyway, list it in {ALLOW_SETTING} in your own settings file "
            "($XDG_CONFIG_HOME/foldscope/config.toml)")


def key_problem(key: str) -> str | None:
    """Why a key's value cannot be sent in an HTTP header (None: it can). Never quotes it."""
    if key != key.strip():
        return "has leading or trailing whitespace (a newline pasted with the key?)"
    for ch in key:
        if not (0x21 <= ord(ch) <= 0x7E):
            where = "a non-ASCII character" if ord(ch) > 0x7E else "a space or control character"
            return f"holds {where} (U+{ord(ch):04X}); a key is printable ASCII"
    return None
