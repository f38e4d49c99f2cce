"""Stock-value signatures: named rules recognising the stand-in values models reach for.

When a model has lost a value and answers anyway, it tends to reach for a stock stand-in: port
8080, a time on the hour, ``example.com``, the UUID from a documentation page, ``/tmp``,
``@oncall``, ``v1.0.0``, ``abc123``. A signature names such a value; a hit is evidence for a
person reviewing a wrong answer (is this an invention?), never a grade on its own.

The rules are data: ``foldscope/core/data/signatures.toml`` holds the defaults (its header
documents the format), and a user file of the same format adds rules or replaces a rule of the
same name (:func:`merge_signatures`; the caller reads the file, core only receives its parsed
contents).
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from foldscope.core.errors import ConfigError
from foldscope.core.identifiers import find_identifiers, kind_of
from foldscope.core.nearmiss import value_kind
from foldscope.core.rulefile import named_tables, rule_pattern

MAX_SIGNATURES = 200
"""More rules than this in one file is refused (a generator gone wrong, not a rule set)."""

MATCH_PARTS: tuple[str, ...] = ("value", "number", "port", "time", "host", "ip", "path")
"""The parts of a value a signature can look at (see the data file's header)."""

_FIELDS = {"name", "description", "match", "kinds", "values", "pattern", "networks", "track"}
_IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Signature:
    """One named rule recognising a stock stand-in value."""

    name: str
    match: str
    """Which part of a value the rule looks at: one of :data:`MATCH_PARTS`."""
    description: str = ""
    kinds: frozenset[str] | None = None
    """Apply only to values of these identifier kinds; None for any."""
    values: frozenset[str] | None = None
    """Literal values, casefolded."""
    pattern: re.Pattern[str] | None = None
    networks: tuple[_IPNetwork, ...] = ()
    track: bool = True
    """False: a value it recognises is nobody's (reserved for documentation or tests, typed by
    hand as a stand-in, ``example.com``, ``abc123def456``, or everyone's, ``github.com``): a
    session audit does not track it as one of the task's values (it is still reported, with
    this signature, when it turns up new after a compaction)."""


def signatures_from_data(data: Mapping[str, Any], source: str = "signatures"
                         ) -> tuple[Signature, ...]:
    """Build signatures from parsed TOML data (``{"signature": [{...}, ...]}``).

    Args:
        data: the parsed file.
        source: what to call the file in errors (its path).

    Returns:
        The signatures in file order.

    Raises:
        ConfigError: one line naming the file, the rule and what is wrong.
    """
    tables = named_tables(data, "signature", _FIELDS, source, MAX_SIGNATURES, "stock_port")
    return tuple(_one(entry, name, where) for name, entry, where in tables)


def _one(entry: dict[str, Any], name: str, where: str) -> Signature:
    match = entry.get("match", "value")
    if match not in MATCH_PARTS:
        raise ConfigError(f"{where}: 'match' must be one of {', '.join(MATCH_PARTS)} "
                          f"(got {match!r})")
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{where}: 'description' must be a string")
    kinds = entry.get("kinds")
    if kinds is not None and (not isinstance(kinds, list) or not kinds
                              or not all(isinstance(k, str) and k for k in kinds)):
        raise ConfigError(f"{where}: 'kinds' must be a non-empty list of kind names")
    given = [key for key in ("values", "pattern", "networks") if key in entry]
    if len(given) != 1:
        raise ConfigError(f"{where}: give exactly one of 'values', 'pattern' or 'networks'")
    track = entry.get("track", True)
    if not isinstance(track, bool):
        raise ConfigError(f"{where}: 'track' must be true or false")
    sig = Signature(name, match, description, frozenset(kinds) if kinds else None, track=track)
    if "values" in entry:
        values = entry["values"]
        if not isinstance(values, list) or not values or not all(
                isinstance(v, str) and v.strip() for v in values):
            raise ConfigError(f"{where}: 'values' must be a non-empty list of strings")
        return replace(sig, values=frozenset(v.strip().casefold() for v in values))
    if "pattern" in entry:
        return replace(sig, pattern=rule_pattern(entry, "pattern", where))
    if match != "ip":
        raise ConfigError(f"{where}: 'networks' needs match = \"ip\"")
    networks = entry["networks"]
    if not isinstance(networks, list) or not networks:
        raise ConfigError(f"{where}: 'networks' must be a non-empty list of CIDR strings")
    parsed: list[_IPNetwork] = []
    for net in networks:
        try:
            parsed.append(ipaddress.ip_network(str(net), strict=False))
        except ValueError:
            raise ConfigError(f"{where}: bad network {net!r}") from None
    return replace(sig, networks=tuple(parsed))


def merge_signatures(base: Sequence[Signature], extra: Sequence[Signature]
                     ) -> tuple[Signature, ...]:
    """The base rules with ``extra`` replacing same-named rules in place, new ones added after."""
    replacing = {sig.name: sig for sig in extra}
    kept = [replacing.pop(sig.name, sig) for sig in base]
    return tuple(kept + [sig for sig in extra if sig.name in replacing])


@lru_cache(maxsize=1)
def default_signatures() -> tuple[Signature, ...]:
    """The shipped rules (``foldscope/core/data/signatures.toml``)."""
    text = resources.files("foldscope.core.data").joinpath("signatures.toml").read_text("utf-8")
    return signatures_from_data(tomllib.loads(text), source="signatures.toml")


# ---------------------------------------------------------------------------------------------
# The parts of a value
# ---------------------------------------------------------------------------------------------

_NUMBER_RE = re.compile(r"^(\d+(?:\.\d+)?)(?:\s+[^\W\d_]+)*$")
_PORT_SUFFIX_RE = re.compile(r"(?<=[\w\]]):(\d{1,5})$")
_TIME_RE = re.compile(r"(?<![\d:])(\d{1,2}:\d{2}(?::\d{2})?)(?![\d:])")


def _number(value: str) -> list[str]:
    m = _NUMBER_RE.match(value)
    return [m.group(1)] if m else []


def _port(value: str) -> list[str]:
    if value.isdigit():
        return [value]
    # "host:8080", "10.0.0.5:8080", "https://h:8443/x", "port 8080": the port a value names.
    port = _PORT_SUFFIX_RE.search(value.split("/", 3)[2] if "://" in value else value)
    if port:
        return [port.group(1)]
    return [i.value for i in find_identifiers(value, kinds=("port",))]


def _hosts(value: str) -> list[str]:
    if "://" in value:
        try:
            host = urlsplit(value).hostname
        except ValueError:
            host = None
        return [host] if host else []
    if "@" in value[1:] and not value.startswith("@"):
        return [value.rsplit("@", 1)[1]]
    bare = value.rsplit(":", 1)[0] if re.search(r":\d{1,5}$", value) else value
    if bare.casefold() == "localhost" or kind_of(bare) == "host":
        return [bare]
    return []


def _ips(value: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    candidates = [value, value.strip("[]")]
    if "://" in value:
        try:
            host = urlsplit(value).hostname
        except ValueError:
            host = None
        candidates = [host] if host else []
    elif value.startswith("["):
        candidates.append(value[1:].split("]", 1)[0])
    elif value.count(":") == 1:
        candidates.append(value.split(":", 1)[0])
    out = []
    for cand in candidates:
        try:
            out.append(ipaddress.ip_address(cand))
        except ValueError:
            continue
    return out[:1]


def _paths(value: str) -> list[str]:
    if value.startswith("file://"):
        return [urlsplit(value).path]
    if value.startswith("/"):
        return [value.split()[0]]
    return []


def _parts(value: str, match: str) -> list[str]:
    if match == "value":
        return [value]
    if match == "number":
        return _number(value)
    if match == "port":
        return _port(value)
    if match == "time":
        return _TIME_RE.findall(value)
    if match == "host":
        return _hosts(value)
    if match == "path":
        return _paths(value)
    return []


def signature_hits(value: str, kind: str | None = None,
                   rules: Sequence[Signature] | None = None,
                   parts: Mapping[str, list[str]] | None = None) -> list[str]:
    """The names of the signatures a value hits, in rule order.

    Args:
        value: a value (typically a wrong answer's value).
        kind: the identifier kind the value stands for, when known (a scenario's fact kind that
            is no identifier kind is ignored); else the value's own kind (``core.identifiers``).
            Only rules that declare ``kinds`` look at it.
        rules: the signatures (default: :func:`default_signatures`).
        parts: parts of the value the caller already knows, by ``match`` (a found host's
            ``{"host": [host]}``): not worked out again.

    Returns:
        Rule names; empty for a value no rule recognises.
    """
    value = value.strip().strip("`\"'")
    if not value:
        return []
    rules = default_signatures() if rules is None else rules
    resolved: str | None = None
    hits: list[str] = []
    known: dict[str, list[Any]] = dict(parts or {})  # the value's parts by match, each worked out once
    for sig in rules:
        if sig.kinds is not None:
            if resolved is None:
                resolved = value_kind(value, kind) or ""
            if resolved not in sig.kinds:
                continue
        if _hit(sig, value, known):
            hits.append(sig.name)
    return hits


def _hit(sig: Signature, value: str, known: dict[str, list[Any]]) -> bool:
    if sig.match == "ip":
        addresses = known.get("ip")
        if addresses is None:
            addresses = known["ip"] = _ips(value)
        if sig.networks:
            return any(a in net for a in addresses for net in sig.networks
                       if a.version == net.version)
        parts = [str(a) for a in addresses]
    else:
        got = known.get(sig.match)
        if got is None:
            got = known[sig.match] = _parts(value, sig.match)
        parts = got
    for part in parts:
        if sig.values is not None and part.casefold() in sig.values:
            return True
        if sig.pattern is not None and sig.pattern.fullmatch(part):
            return True
    return False
