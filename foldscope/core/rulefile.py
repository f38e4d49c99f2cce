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
                 limit: int, example: str, *, others: frozenset[str] = frozenset()
                 ) -> list[tuple[str, dict[str, Any], str]]:
    """Check a parsed rule file's ``[[table]]`` list and return each rule's name, table and label.

    Args:
        data: the parsed file.
        table: the table name (``kind``, ``signature``).
        fields: the keys a table may hold (``name`` among them).
        source: what to call the file in errors (its path).
        limit: the most tables a file may hold.
        example: a name to show in the error for a bad name.
        others: other top-level keys the file may hold (``patterns``), checked by their reader.

    Returns:
        ``(name, table, where)`` per rule in file order; ``where`` names the file and rule for
        the caller's own errors (``"my.toml: kind 'port'"``).

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    unknown = sorted(set(data) - {table} - others)
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
                 required: Literal[True] = True,
                 shared: Mapping[str, str] | None = None) -> re.Pattern[str]: ...
@overload
def rule_pattern(entry: Mapping[str, Any], key: str, where: str, *,
                 required: bool,
                 shared: Mapping[str, str] | None = None) -> re.Pattern[str] | None: ...
def rule_pattern(entry: Mapping[str, Any], key: str, where: str, *,
                 required: bool = True,
                 shared: Mapping[str, str] | None = None) -> re.Pattern[str] | None:
    """A rule's regular expression, compiled, or refused: the one rule for every rule file.

    A pattern is a non-empty string that compiles and cannot match the empty string (a rule
    that matches nothing-at-all would match everywhere).

    Args:
        entry: the rule's table.
        key: the key holding the pattern (``pattern``, ``anchor``).
        where: the file and rule, for the error (``named_tables``' label).
        required: False for an optional key: absent, it reads as None.
        shared: the file's named patterns (:func:`shared_patterns`); each ``(?&name)`` in the
            pattern is replaced by ``(?:`` + that pattern + ``)`` before it is compiled.

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
    if "(?&" in value:
        value = _expand(value, shared or {}, f"{where}: '{key}'")
    try:
        compiled = re.compile(value)
    except re.error as err:
        raise ConfigError(f"{where}: bad {key}: {err}") from None
    if compiled.match(""):
        raise ConfigError(f"{where}: {key} matches the empty string")
    return compiled


SHARED_TABLE = "patterns"
"""A rule file's table of named patterns its rules share (``[patterns]``)."""

_USE_RE = re.compile(r"\(\?&([a-z][a-z0-9_]{0,39})\)")
"""A use of a shared pattern in a rule's pattern: ``(?&name)`` (PCRE's spelling of a call to a
named pattern; Python's ``re`` has no such group, so a file using one cannot mean anything else)."""


def shared_patterns(data: Mapping[str, Any], source: str,
                    base: Mapping[str, str] | None = None) -> dict[str, str]:
    """A rule file's named patterns: its ``[patterns]`` table (name = regular expression) laid
    over ``base`` (the shipped file's, so a user file may use those too).

    A shared pattern is defined once and used by several rules as ``(?&name)`` — the same TLD
    list for hosts and for ports after a host, the same IPv4 octet for addresses and for ports
    after one. It may not use another.

    Raises:
        ConfigError: one line naming the file, the pattern and what is wrong.
    """
    table = data.get(SHARED_TABLE, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [{SHARED_TABLE}] must be a table of named patterns")
    out = dict(base or {})
    for name, fragment in table.items():
        where = f"{source}: {SHARED_TABLE}.{name}"
        if not _NAME_RE.match(name):
            raise ConfigError(f"{source}: [{SHARED_TABLE}] {name!r}: a name must be a lower-case "
                              "identifier like 'tld'")
        if not isinstance(fragment, str) or not fragment:
            raise ConfigError(f"{where}: must be a non-empty string")
        if "(?&" in fragment:
            raise ConfigError(f"{where}: a shared pattern cannot use another")
        try:
            re.compile(fragment)
        except re.error as err:
            raise ConfigError(f"{where}: bad pattern: {err}") from None
        out[name] = fragment
    return out


def _expand(value: str, shared: Mapping[str, str], where: str) -> str:
    def use(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in shared:
            known = ", ".join(sorted(shared)) or "none"
            raise ConfigError(f"{where} uses (?&{name}), which is not a shared pattern "
                              f"(defined: {known})")
        return f"(?:{shared[name]})"

    return _USE_RE.sub(use, value)
