"""Rule files: the shared shape of foldscope's user-extendable rule sets (``[[table]]`` lists of named rules).

Identifier kinds (``core.identifiers``) and stock-value signatures (``core.signatures``) are both
kept as TOML files of named tables; this checks the common parts once (known keys, a list of
tables, lower-case unique names, a size limit, a rule's regular expression) with the same
one-line errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, overload

from foldscope.core.errors import ConfigError

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def named_tables(data: Mapping[str, Any], table: str, fields: set[str], source: str,
                 limit: int, example: str) -> list[tuple[str, dict[str, Any], str]]:
    """Check a parsed rule file's ``[[table]]`` list and return each rule's name, table and label.

    Args:
        data: the parsed file.
        table: the table name (``kind``, ``signature``).
        fields: the keys a table may hold (``name`` among them).
        source: what to call the file in errors (its path).
        limit: the most tables a file may hold.
        example: a name to show in the error for a bad name.

    Returns:
        ``(name, table, where)`` per rule in file order; ``where`` names the file and rule for
        the caller's own errors (``"my.toml: kind 'port'"``).

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    unknown = sorted(set(data) - {table})
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (expected [[{table}]] tables)")
    entries = data.get(table)
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{source}: no [[{table}]] rules")
    if len(entries) > limit:
        raise ConfigError(f"{source}: {len(entries)} rules (at most {limit})")
    out: list[tuple[str, dict[str, Any], str]] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, 1):
        where = f"{source}: {table} #{i}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table")
        extra = sorted(set(entry) - fields)
        if extra:
            raise ConfigError(f"{where}: unknown field {extra[0]!r}")
        name = entry.get("name")
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ConfigError(f"{where}: 'name' must be a lower-case identifier like {example!r}")
        where = f"{source}: {table} {name!r}"
        if name in seen:
            raise ConfigError(f"{where}: defined twice")
        seen.add(name)
        out.append((name, entry, where))
    return out


@overload
def rule_pattern(entry: Mapping[str, Any], key: str, where: str, *,
                 required: Literal[True] = True) -> re.Pattern[str]: ...
@overload
def rule_pattern(entry: Mapping[str, Any], key: str, where: str, *,
                 required: bool) -> re.Pattern[str] | None: ...
def rule_pattern(entry: Mapping[str, Any], key: str, where: str, *,
                 required: bool = True) -> re.Pattern[str] | None:
    """A rule's regular expression, compiled, or refused: the one rule for every rule file.

    A pattern is a non-empty string that compiles and cannot match the empty string (a rule
    that matches nothing-at-all would match everywhere).

    Args:
        entry: the rule's table.
        key: the key holding the pattern (``pattern``, ``anchor``).
        where: the file and rule, for the error (``named_tables``' label).
        required: False for an optional key: absent, it reads as None.

    Returns:
        The compiled pattern (None for an absent optional key).

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    value = entry.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: '{key}' must be a non-empty string")
    try:
        compiled = re.compile(value)
    except re.error as err:
        raise ConfigError(f"{where}: bad {key}: {err}") from None
    if compiled.match(""):
        raise ConfigError(f"{where}: {key} matches the empty string")
    return compiled
