"""Session audits: what each compaction in a real agent history kept, garbled or dropped, and
whether the agent needed the dropped values afterwards.

A real session is a row whose folds are its compactions: the history a compaction replaced
(every entry since the previous compaction, plus the previous summary) is the chunk, the new
summary is the carrier. For each compaction the audit lists the identifiers of the replaced
history (found by the tracked kinds of :mod:`foldscope.core.identifiers`, or the named facts of a
facts file) that are the task's — written by the agent or typed by the person, or carried by
the summary; a value only tool output showed (a row id in test output, a version in a lock file)
is listed only if the summary carries it or the agent writes it again — and their state in the
summary — ``present``, ``mutated`` (a near miss, decided by
:func:`foldscope.core.forensics.value_state`) or ``missing``; ``unknown`` when the carrier is
opaque (a Codex compaction whose summary is encrypted or absent). Then, for every identifier not
carried intact:

* *lost and needed* — the agent itself wrote it again after the compaction (its text or a tool
  call's input), with where, the text around it, and whether it had come back through tool
  output first (``recovered``);
* *reappeared* — it only came back in tool output so far (a value the person types again is
  the person's reminder, not a reappearance);

and *new after*: values of the lost kinds the summary or the agent wrote after the compaction
that nothing — no entry of any channel, tool output included — had shown before (likely
re-invented), with their stock-value signatures.

"The same value" is one notion: identifiers are compared by key, which is the value itself
except for paths, which are normalised against the session's working directories and home (an
absolute path carried repo-relative is carried); a file counts as carried when the summary names
its directory and its file name.

The audit streams (:class:`SessionAuditor`): each entry's identifiers are found once as it
arrives, nothing of its text is kept, and each compaction costs what its own window holds — time
is linear in the session and in its compactions, memory bounded by the largest window plus the
values still waiting to be used again.

Pure: readers in ``foldscope.engine.audit_readers`` turn files into items.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import ipaddress
import posixpath
import re
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple
from urllib.parse import urlsplit

from foldscope.core.errors import ConfigError
from foldscope.core.forensics import MISSING, MUTATED, PRESENT, UNKNOWN, TimelineState, value_state
from foldscope.core.grading import contains_token_normalized, normalize
from foldscope.core.identifiers import (
    KindRule,
    default_rules,
    identifier_spans,
    identifier_spans_many,
    main_kind,
    tracked_kinds,
)
from foldscope.core.memo import remember
from foldscope.core.signatures import Signature, default_signatures, signature_hits
from foldscope.core.text import literal

Channel = Literal["user", "system", "assistant", "tool_call", "tool_output"]
"""Who wrote an entry's text: the person, the runtime, the agent (prose or a tool call) or a tool."""

AUTHORED_CHANNELS: frozenset[str] = frozenset({"assistant", "tool_call"})
"""Where a value counts as written by the agent: its own text and its tool calls' input. Only a
value written here after a compaction is *lost and needed*; tool output is what the world
returned, not the agent needing the value."""

RETURNED_CHANNELS: frozenset[str] = frozenset({"tool_output"})
"""Where a lost value can come back without the agent writing it (*reappeared*): tool output.
A value the person types again is the person's, not a reappearance."""

WRITTEN_CHANNELS: frozenset[str] = AUTHORED_CHANNELS | {"user"}
"""Where a value becomes one of the task's: written by the agent or typed by the person. A value
only tool output (or the runtime) showed — a row id in test output, a dependency's version in
a lock file — is not tracked for a compaction unless one of them wrote it too (or the previous
summary carried it)."""

AGENT_CHANNELS: frozenset[str] = AUTHORED_CHANNELS | {"tool_output"}
"""The agent's side of the session: what it wrote and what its tools returned to it."""

DEFAULT_EXCLUDED_KINDS: frozenset[str] = frozenset({"number"})
"""Tracked kinds left out of audits by default: a bare ``number`` is every count, size and line
number in a session, far too noisy to call a lost fact. A port, version or timestamp has its own
kind. (Kinds marked ``track = false`` are never audited.)"""

CONTEXT_CHARS = 60
"""Characters of text kept on each side of a value where it was used again (``context``)."""

State = Literal[TimelineState.PRESENT, TimelineState.MUTATED, TimelineState.MISSING, TimelineState.UNKNOWN]
"""An identifier's state in a compaction's summary: a value's state in a text (``core.forensics``),
or ``unknown`` where the summary is opaque."""
STATES: tuple[State, ...] = (PRESENT, MUTATED, MISSING, UNKNOWN)
Carrier = Literal["text", "opaque", "empty"]


@dataclass(frozen=True)
class Entry:
    """One piece of session text: who wrote it, where it stands, what it says.

    ``at`` is where a person finds it: the 1-based line of a JSONL file, or the 1-based message
    number of a log read through an API.
    """

    at: int
    channel: Channel
    text: str


@dataclass(frozen=True)
class Compaction:
    """A compaction marker: the summary that replaced the history before it.

    ``summary_at`` is where the summary itself stands when that is not the marker's line (a
    Claude Code summary follows its boundary); ``kept_from`` is the first entry the compaction
    kept verbatim (a pi compaction keeps the most recent entries): entries from there on are
    carried, not replaced. ``carrier`` says whether the summary is readable text, opaque (an
    encrypted or otherwise unreadable summary) or empty. ``carried`` is text the runtime put
    back verbatim beside the summary (a Codex replacement history's instructions and
    environment): a value in it is still in the context, but the runtime's text makes no value
    one of the task's.
    """

    at: int
    summary: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    kind: str = "summary"
    trigger: str | None = None
    summary_at: int | None = None
    kept_from: int | None = None
    carrier: Carrier = "text"
    carried: str = ""


@dataclass(frozen=True)
class Context:
    """Session metadata as it becomes known: its working directory, home, and its own ids
    (the session id: a value of the log, never of the task)."""

    at: int
    cwd: str | None = None
    home: str | None = None
    own_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Usage:
    """The context size a model call reported (input tokens, cached ones included): the size
    right after a compaction when the log does not record it there."""

    at: int
    tokens: int


Item = Entry | Compaction | Context | Usage


@dataclass(frozen=True)
class Session:
    """An agent history as ordered items, plus what the reader skipped and noted."""

    items: tuple[Item, ...]
    format: str
    skipped_lines: int = 0
    skipped_at: tuple[int, ...] = ()
    name: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def compactions(self) -> list[Compaction]:
        """The compaction markers in order."""
        return [item for item in self.items if isinstance(item, Compaction)]


@dataclass(frozen=True)
class AuditFact:
    """A named value to audit instead of the identifiers the rules find (``--facts``)."""

    label: str
    value: str
    kind: str


@dataclass(frozen=True, slots=True)
class IdentifierState:
    """One identifier of a replaced history and its state in the new summary."""

    kind: str
    value: str
    state: str
    altered: str | None = None
    label: str | None = None


@dataclass(frozen=True, slots=True)
class LostAndNeeded:
    """An identifier the summary did not carry intact that the agent itself wrote again."""

    kind: str
    value: str
    used_at: int
    used_in: str
    state: str
    label: str | None = None
    context: str = ""
    recovered: bool = False
    """The value came back through tool output before the agent used it."""


@dataclass(frozen=True, slots=True)
class Reappeared:
    """An identifier the summary did not carry that came back only in tool output (or from the
    person), never yet written by the agent."""

    kind: str
    value: str
    at: int
    channel: str
    state: str
    label: str | None = None
    context: str = ""


@dataclass(frozen=True, slots=True)
class NewAfter:
    """A value of a lost kind written after the compaction that nothing had shown before it."""

    kind: str
    value: str
    first_seen_at: int
    signatures: tuple[str, ...]


@dataclass(frozen=True)
class CompactionAudit:
    """The audit of one compaction."""

    index: int
    at: int
    kind: str
    trigger: str | None
    tokens_before: int | None
    tokens_after: int | None
    identifiers: tuple[IdentifierState, ...]
    lost_and_needed: tuple[LostAndNeeded, ...]
    new_after: tuple[NewAfter, ...]
    reappeared: tuple[Reappeared, ...] = ()
    carrier: str = "text"
    summary_at: int | None = None

    def count(self, state: str) -> int:
        """How many identifiers are in ``state``."""
        return sum(1 for i in self.identifiers if i.state == state)


@dataclass(frozen=True)
class AuditOptions:
    """What to look for: the identifier rules and kinds, or named facts instead; and the
    stock-value signatures new-after values are checked against (None: the shipped ones)."""

    rules: tuple[KindRule, ...] = field(default_factory=default_rules)
    excluded_kinds: frozenset[str] = DEFAULT_EXCLUDED_KINDS
    facts: tuple[AuditFact, ...] | None = None
    signatures: tuple[Signature, ...] | None = None


COMPOSITE_KINDS: frozenset[str] = frozenset({"url"})
"""Kinds whose parts are identifiers too: a summary that drops ``http://ledger-1.internal:62114/``
but keeps "ledger-1.internal, port 62114" has kept the host and the port."""


# --- one notion of "the same value" -------------------------------------------------------------


def home_of(cwd: str) -> str | None:
    """The home directory a working directory lies in (``/home/u/...``, ``/Users/u/...``,
    ``/root/...``), or None."""
    parts = cwd.split("/")
    if len(parts) >= 3 and parts[0] == "" and parts[1] in ("home", "Users") and parts[2]:
        return "/".join(parts[:3])
    if len(parts) >= 2 and parts[0] == "" and parts[1] == "root":
        return "/root"
    return None


@dataclass
class PathContext:
    """The working directories and home a session's paths are relative to."""

    cwds: list[str] = field(default_factory=list)
    home: str | None = None
    version: int = 0
    """Changes whenever a working directory or the home is added (keys may change)."""

    def add(self, cwd: str | None, home: str | None = None) -> None:
        before = (len(self.cwds), self.home)
        if cwd and cwd.startswith("/"):
            cwd = posixpath.normpath(cwd)
            if cwd not in self.cwds and cwd != "/":
                self.cwds.append(cwd)
                self.cwds.sort(key=len, reverse=True)
            if self.home is None:
                self.home = home_of(cwd)
        if home and home.startswith("/"):
            self.home = posixpath.normpath(home)
        if (len(self.cwds), self.home) != before:
            self.version += 1

    def key(self, kind: str, value: str) -> str:
        """The value as compared: a path relative to the working directory (or ``~/`` under
        home), normalised; any other value as it is."""
        if kind != "path":
            return value
        v = value
        if v.startswith("~/") and self.home:
            v = self.home + v[1:]
        if v.startswith("/"):
            v = posixpath.normpath(v)
            for cwd in self.cwds:
                if v == cwd:
                    return "."
                if v.startswith(cwd + "/"):
                    return v[len(cwd) + 1:]
            if self.home and v.startswith(self.home + "/"):
                return "~/" + v[len(self.home) + 1:]
            return v
        return posixpath.normpath(v)


# --- identifiers of a text -----------------------------------------------------------------------


class _Found(NamedTuple):
    kind: str
    value: str
    key: str
    start: int
    end: int
    label: str | None = None
    seen_as: tuple[str, ...] = ()
    """What seeing it shows: its key, and for a path its directory, for a URL its host."""
    nobodys: bool = False
    """Nobody's value: a signature with ``track = false`` recognises it (``example.com``, a URL
    or e-mail address under it, ``abc123def456``, ``github.com``): never tracked, still new
    after a compaction."""


_Derived = tuple[tuple[tuple[str, str, str, int, int, tuple[str, ...], bool], ...], bool]
"""What an identifier's kind and text give, whatever the text around it: its found values
``(kind, value, key, start, end, seen_as, nobodys)`` relative to it (a URL's host and port
follow it), and whether it is one of the log's own ids."""


class _Finder:
    """Finds the identifiers (or named facts) of texts: every kind but the untracked ones,
    numbers included (a lost port written back as a bare number is a use of it)."""

    def __init__(self, options: AuditOptions, paths: PathContext) -> None:
        self.options = options
        self.paths = paths
        self.tracked = tracked_kinds(options.rules)
        # Kinds the audit leaves out are not searched for at all (a bare number is everywhere);
        # a lost port the agent writes back as a bare number is found by :meth:`numbers`.
        self.rules = tuple(r for r in options.rules if r.name not in options.excluded_kinds)
        self.inner = tuple(r for r in self.rules if r.name not in COMPOSITE_KINDS)
        self.weights = {r.name: r.weight for r in options.rules}
        signatures = default_signatures() if options.signatures is None else options.signatures
        self.untracked = tuple(sig for sig in signatures if not sig.track)
        self._untracked_of: dict[str, tuple[Signature, ...]] = {}  # by kind: the ones that can hit
        self.own_ids: set[str] = set()
        self.code_names: set[str] = set()
        """UPPER_SNAKE names the session's code declared, imported or assigned (the
        ``code_name`` kind): no environment variables, unless :attr:`env_names` has them too."""
        self.env_names: set[str] = set()
        """Names the session's code reads from the environment (``process.env.X``,
        ``os.environ['X']``, ``getenv("X")``, ``config.get('X')``, ``export X=``)."""
        self._part_cache: dict[str, list[tuple[str, str, int]]] = {}
        # (kind, text) -> what it gives; keys depend on the session's places and own ids, so
        # the cache is forgotten when they change (and when it is full).
        self._derived: dict[tuple[str, str], _Derived] = {}
        self._old_derived: dict[tuple[str, str], _Derived] = {}  # the generation before
        self._derived_for: tuple[int, int] = (-1, -1)

    def find(self, text: str, spans: list[tuple[int, int, str]] | None = None) -> list[_Found]:
        """The identifiers of a text (``spans``: its :func:`identifier_spans`, when known)."""
        if self.options.facts is not None:
            return self._facts(text)
        if self._derived_for != (self.paths.version, len(self.own_ids)):
            self._derived, self._old_derived = {}, {}
            self._derived_for = (self.paths.version, len(self.own_ids))
        derived = self._derived
        tracked = self.tracked
        out: list[_Found] = []
        for start, end, kind in identifier_spans(text, self.rules) if spans is None else spans:
            if kind not in tracked:
                if kind == CODE_NAME_KIND:
                    self.code_names.update(_UPPER_SNAKE.findall(text, start, end))
                elif kind == TASK_REF_KIND and end - start >= 6:
                    # The runtime's id of a sub-agent or background command: its own, wherever
                    # it stands (the summary's "agent a291e03" too), like the session's id.
                    self.own_ids.add(text[start:end])
                continue
            ident = text[start:end]
            if kind == "env_var" and _ENV_READ.search(text, max(0, start - 40), start):
                self.env_names.add(ident.lstrip("${").rstrip("}"))
            got = derived.get((kind, ident))
            if got is None:
                got = self._old_derived.get((kind, ident))
                if got is None:
                    got = self._derive(kind, ident)
                if len(derived) >= DERIVED_CACHE_SIZE:
                    self._old_derived, self._derived = derived, {}
                    derived = self._derived
                derived[(kind, ident)] = got
            values, own = got
            if own:
                continue
            for k, value, key, at, to, seen_as, nobodys in values:
                out.append(_Found(k, value, key, start + at, start + to, None, seen_as,
                                  nobodys))
        return out

    def _derive(self, kind: str, ident: str) -> _Derived:
        """What an identifier gives (see :data:`_Derived`)."""
        if self._own(ident):
            return (), True
        value = ident
        if kind == "env_var":  # $NAME, ${NAME} and NAME are one variable
            value = value.lstrip("${").rstrip("}")
        key = self.paths.key(kind, value)
        seen_as = _seen_as(kind, key)
        parts: list[tuple[str, str, str, int, int, tuple[str, ...], bool]] = []
        if kind in COMPOSITE_KINDS:
            split = self._parts(ident)
            # The URL's host, as its parts name it (no second parse of the URL).
            known: dict[str, list[Any]] = {"host": [], "ip": []}
            for part_kind, part, _at in split:
                if part_kind != "port":
                    known["host"].append(part)
                if part_kind == "ip":
                    known["ip"].extend(_ip(part))
            nobodys = self._nobodys(kind, value, known)
            hosts: list[str] = []
            for part_kind, part, at in split:
                if part_kind == "host":
                    hosts.append(part)
                if part_kind in self.tracked:
                    part_key = self.paths.key(part_kind, part)
                    parts.append((part_kind, part, part_key, at, at + len(part), (part_key,),
                                  nobodys or self._nobodys(part_kind, part)))
            seen_as = (key, *hosts)
        else:
            nobodys = self._nobodys(kind, value, {"host": [value]} if kind == "host" else None)
        return ((kind, value, key, 0, len(ident), seen_as, nobodys), *parts), False

    def _nobodys(self, kind: str, value: str, known: Mapping[str, list[Any]] | None = None) -> bool:
        """Whether a signature with ``track = false`` recognises the value (``core.signatures``):
        of the rules looking at a host, an IP or a path, only those of the kinds that have one
        (a host, a URL's, an e-mail address's host) look at it. ``known``: its parts the caller
        has (``core.signatures.signature_hits``)."""
        rules = self._untracked_of.get(kind)
        if rules is None:
            rules = self._untracked_of[kind] = tuple(
                sig for sig in self.untracked if (sig.kinds is None or kind in sig.kinds)
                and kind in _PART_KINDS.get(sig.match, (kind,)))
        if not rules:
            return False
        return bool(signature_hits(value, kind, rules, known))

    def _parts(self, url: str) -> list[tuple[str, str, int]]:
        """A URL's host and port (kinds by the rules: a dotted host, an IP), where they stand."""
        cached = self._part_cache.get(url)
        if cached is None:
            cached = remember(self._part_cache, PART_CACHE_SIZE, url, self._split([url])[0])
        return cached

    def prepare(self, texts: Sequence[str], spans: Sequence[list[tuple[int, int, str]]]) -> None:
        """Work out ahead, together, the parts of the URLs among these texts' identifiers (their
        hosts' kinds found in one batch)."""
        cache = self._part_cache
        urls = list(dict.fromkeys(text[start:end] for text, found in zip(texts, spans, strict=True)
                                  for start, end, kind in found if kind in COMPOSITE_KINDS))
        urls = [url for url in urls if url not in cache]
        if not urls:
            return
        if len(cache) + len(urls) > PART_CACHE_SIZE:
            cache.clear()
        cache.update(zip(urls, self._split(urls), strict=True))

    def _split(self, urls: Sequence[str]) -> list[list[tuple[str, str, int]]]:
        """The parts of each URL (see :meth:`_parts`)."""
        splits: list[tuple[str | None, int | None] | None] = []
        for url in urls:
            try:
                split = urlsplit(url)
                splits.append((split.hostname, split.port))
            except ValueError:
                splits.append(None)
        hosts = [got[0] for got in splits if got is not None and got[0]]
        host_spans = iter(identifier_spans_many(hosts, self.inner))
        out: list[list[tuple[str, str, int]]] = []
        for url, got in zip(urls, splits, strict=True):
            parts: list[tuple[str, str, int]] = []
            out.append(parts)
            if got is None:
                continue
            host, port = got
            netloc_at = url.find("//") + 2
            if host:
                at = url.lower().find(host, netloc_at)
                whole = [kind for start, end, kind in next(host_spans)
                         if start == 0 and end == len(host)]
                if whole and at >= 0:
                    parts.append((whole[0], url[at:at + len(host)], at))
            if port is not None:
                text = str(port)
                at = url.find(":" + text, netloc_at)
                if at >= 0:
                    parts.append(("port", text, at + 1))
        return out

    def numbers(self, text: str) -> list[_Found]:
        """The bare numbers of a text (for uses of lost numeric values: the agent's own text is
        short, so this runs on it alone)."""
        return [_Found("number", m.group(), m.group(), m.start(), m.end())
                for m in _NUMBER_RE.finditer(text)]

    def _own(self, value: str) -> bool:
        return bool(self.own_ids) and any(own in value for own in self.own_ids)

    def _facts(self, text: str) -> list[_Found]:
        assert self.options.facts is not None
        norm = None
        out: list[_Found] = []
        for fact in self.options.facts:
            if fact.value not in text and normalize(fact.value) not in text:
                if norm is None:
                    norm = normalize(text)
                if normalize(fact.value) not in norm:
                    continue
            norm = normalize(text) if norm is None else norm
            if contains_token_normalized(norm, normalize(fact.value)):
                at = text.find(fact.value)
                at = max(at, 0)
                out.append(_Found(fact.kind, fact.value, fact.value, at, at + len(fact.value),
                                  fact.label, _seen_as(fact.kind, fact.value)))
        return out


TASK_REF_KIND = "task_ref"
"""The kind (``track = false``) of the ids the runtime gives sub-agents and background
commands."""

CODE_NAME_KIND = "code_name"
"""The kind (``track = false``) whose matches name the code's own UPPER_SNAKE names."""

_UPPER_SNAKE = re.compile(r"(?<![\w$])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w])")

_ENV_READ = re.compile(
    r"(?:\benv\.|\bENV\[[\"']|\benviron(?:\.get\(|\[)[\"']|\b(?:(?i:get_?env)|env::var)\([\"']"
    r"|\.get(?:<[^<>()\n]*>)?\([ \t\n]*[\"']|\bexport[ \t]+|\bENV\.fetch\([\"'])$")
"""What stands right before a name the code reads from the environment."""


def _ip(text: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(text.strip("[]"))]
    except ValueError:
        return []


_PART_KINDS: dict[str, tuple[str, ...]] = {"host": ("host", "url", "email"), "ip": ("ip", "url"),
                                           "path": ("path", "url")}
"""The kinds whose values have the part a signature looks at (a host, an IP, a path): a rule
looking at another part may hit a value of any kind."""


def _seen_as(kind: str, key: str) -> tuple[str, ...]:
    """What seeing a (non-composite) value shows: its key, and for a path its directory (a
    new file in a known directory is work, not a stand-in)."""
    if kind == "path":
        return (key, posixpath.dirname(key.rstrip("/")) + "/")
    return (key,)


_NUMBER_RE = re.compile(r"(?<![\w.,-])\d{2,}(?![\w]|[.,]\d)")


def _context(text: str, start: int, end: int) -> str:
    """The text around a use, on one line, shown literally."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    snippet = ("…" if lo > 0 else "") + text[lo:hi] + ("…" if hi < len(text) else "")
    return literal(" ".join(snippet.split()), keep_newlines=False)


# --- the streaming audit -------------------------------------------------------------------------


@dataclass(slots=True)
class _Seen:
    kind: str
    value: str
    key: str
    first_at: int
    last_at: int
    label: str | None
    written: bool = True
    """The agent or the person wrote it in the window (or the summary before carried it)."""


# A compaction's records while the session streams past it are plain tuples of strings and
# numbers, the fields of the record they become (the garbage collector stops looking at such
# tuples: a session's hundred thousand lost values cost no collection time); :meth:`_Building.audit`
# makes the records.
_State = tuple[str, str, int, str | None, str | None]
"""An :class:`IdentifierState`'s fields (the state by its number, :data:`_CODE`)."""
_Lost = tuple[str, str, int, str, int, str | None, str, bool]
"""A :class:`LostAndNeeded`'s fields (the state by its number)."""
_Back = tuple[str, str, int, str, int, str | None, str]
"""A :class:`Reappeared`'s fields (the state by its number)."""
_New = tuple[str, str, int, tuple[str, ...]]
"""A :class:`NewAfter`'s fields."""


@dataclass(slots=True)
class _Building:
    """One compaction's audit while the rest of the session streams past it."""

    index: int
    compaction: Compaction
    tokens_before: int | None
    tokens_after: int | None
    identifiers: list[_State]
    lost_kinds: frozenset[str]
    altered: frozenset[str]
    lost: list[_Lost] = field(default_factory=list)
    reappeared: list[_Back] = field(default_factory=list)
    new_after: list[_New] = field(default_factory=list)
    new_seen: set[str] = field(default_factory=set)

    def audit(self, weights: Mapping[str, float]) -> CompactionAudit:
        c = self.compaction
        lost = sorted(self.lost, key=lambda n: (n[2], -weights.get(n[0], 1.0), n[1]))
        return CompactionAudit(
            index=self.index, at=c.at, kind=c.kind, trigger=c.trigger,
            tokens_before=self.tokens_before, tokens_after=self.tokens_after,
            identifiers=tuple(IdentifierState(kind, value, _MEMBERS[state], altered, label)
                              for kind, value, state, altered, label in self.identifiers),
            lost_and_needed=tuple(map(_lost_record, lost)),
            new_after=tuple(NewAfter(*n) for n in self.new_after),
            reappeared=tuple(Reappeared(kind, value, at, channel, _MEMBERS[state], label, context)
                             for kind, value, at, channel, state, label, context
                             in self.reappeared),
            carrier=c.carrier, summary_at=c.summary_at)


def _lost_record(n: _Lost) -> LostAndNeeded:
    kind, value, used_at, used_in, state, label, context, recovered = n
    return LostAndNeeded(kind, value, used_at, used_in, _MEMBERS[state], label, context, recovered)


# A lost value waiting to be used again is a number: its compaction, state and flags stand at
# that place of three columns of the auditor (no object per value), and the values waiting
# under a key are a tuple of those numbers.
_BACK_FROM_TOOL = 1
"""It came back through tool output."""
_REAPPEARED = 2
"""Its reappearance was reported."""
_LATENT = 4
"""Only tool output had shown it and the summary did not carry it: not one of the
compaction's identifiers unless the agent writes it again (then it was lost and needed)."""


DERIVED_CACHE_SIZE = 4096
"""Identifiers whose derived values are remembered, in each of two generations (when the young
one is full it becomes the old one and the old one is forgotten; one found in the old one moves
to the young one)."""

PART_CACHE_SIZE = 4096
"""URLs whose parts are remembered (all are forgotten when the bound is hit)."""

BATCH_CHARS = 1_000_000
"""Entry text whose identifiers :meth:`SessionAuditor.feed_all` finds together (their new lines
searched in one pass per rule): the items it holds ahead of the one it audits."""

BATCH_ITEMS = 512
"""Most items held ahead (a session of many short entries)."""


GC_YOUNG_THRESHOLD = 100_000
"""While :meth:`SessionAuditor.feed_all` runs, the cyclic garbage collector looks at the youngest
objects after this many more allocations than frees (Python's default is 700). An audit makes
millions of short-lived objects and almost no cycles, and every 10th young collection looks at
the older ones and every 100th at all of them (which grow with the values still waiting): at the
default those collections are a few per cent of an audit's time for nothing collected."""


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Raise the collector's young threshold to :data:`GC_YOUNG_THRESHOLD` (never lower it),
    and put the thresholds back as they were, whatever happens inside (nested uses restore
    theirs in turn). Reference counting frees objects as before; a cycle is collected later."""
    before = gc.get_threshold()
    if before[0] and before[0] < GC_YOUNG_THRESHOLD:  # 0: the caller turned collection off
        gc.set_threshold(GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class SessionAuditor:
    """Audits a session as its items arrive (a file read line by line, or one being written).

    Args:
        options: rules and kinds, or named facts.
        on_compaction: called with each compaction's audit as far as it is known when the
            compaction lands (identifier states; uses come later).
        on_use: called with ``(compaction index, LostAndNeeded)`` whenever the agent writes a
            lost value again.
        keep: keep every compaction's audit for :meth:`audits` (False when following a session
            for hours: each is reported through the callbacks and then let go, once none of its
            values is still waiting to be used).
    """

    def __init__(self, options: AuditOptions | None = None, *,
                 on_compaction: Callable[[CompactionAudit], None] | None = None,
                 on_use: Callable[[int, LostAndNeeded], None] | None = None,
                 keep: bool = True) -> None:
        self.options = options or AuditOptions()
        self.paths = PathContext()
        self.finder = _Finder(self.options, self.paths)
        self.excluded = set(self.options.excluded_kinds) if self.options.facts is None else set()
        self.on_compaction = on_compaction
        self.on_use = on_use
        self.keep = keep
        self.compactions = 0
        self._window: dict[tuple[str, str], _Seen] = {}
        self._seen: set[str] = set()
        self._pending: dict[str, tuple[int, ...]] = {}
        self._open_building: list[_Building | None] = []
        self._open_state: list[_State | None] = []
        self._open_flags = bytearray()
        self._built: list[_Building] = []
        self._current: _Building | None = None
        self._last_usage: int | None = None
        self._implied: set[str] = set()
        """Path keys of the compaction being audited that its summary's paths only imply
        (:func:`_carried_by`)."""

    # items

    def feed(self, item: Item) -> None:
        """Take the next item of the session."""
        if isinstance(item, Entry):
            self._entry(item)
        elif isinstance(item, Compaction):
            self._compaction(item)
        elif isinstance(item, Context):
            self.paths.add(item.cwd, item.home)
            self.finder.own_ids.update(i for i in item.own_ids if len(i) >= 6)
        elif isinstance(item, Usage):
            self._last_usage = item.tokens
            current = self._current
            if current is not None and current.tokens_after is None and item.at > current.compaction.at:
                current.tokens_after = item.tokens

    def feed_all(self, items: Iterable[Item]) -> None:
        """Take the items of a session (or its rest): as :meth:`feed` one by one, the
        identifiers of up to :data:`BATCH_CHARS` of entry text found together."""
        with _fewer_collections():
            if self.options.facts is not None:
                for item in items:
                    self.feed(item)
                return
            batch: list[Item] = []
            size = 0
            for item in items:
                batch.append(item)
                if isinstance(item, Entry):
                    size += len(item.text)
                if size >= BATCH_CHARS or len(batch) >= BATCH_ITEMS:
                    self._feed_batch(batch)
                    batch = []
                    size = 0
            self._feed_batch(batch)

    def _feed_batch(self, batch: list[Item]) -> None:
        texts = [item.text for item in batch if isinstance(item, Entry)]
        spans = identifier_spans_many(texts, self.finder.rules)
        self.finder.prepare(texts, spans)
        found = iter(spans)
        for item in batch:
            if isinstance(item, Entry):
                self._entry(item, next(found))
            else:
                self.feed(item)

    def audits(self) -> list[CompactionAudit]:
        """Every compaction's audit so far, in session order."""
        weights = self.finder.weights
        return [b.audit(weights) for b in self._built]

    def _track(self, found: _Found, at: int, written: bool) -> None:
        if (found.kind in self.excluded or found.nobodys
                or (found.kind == "path" and found.key in _PLACES)):
            return
        slot = (found.kind, found.key)  # /repo/src/a.py and src/a.py are one path
        seen = self._window.get(slot)
        if seen is None:
            self._window[slot] = _Seen(found.kind, found.value, found.key, at, at, found.label,
                                       written)
        else:
            seen.last_at = at
            if written and not seen.written:
                seen.written = True

    def _entry(self, entry: Entry, spans: list[tuple[int, int, str]] | None = None) -> None:
        found = self.finder.find(entry.text, spans)
        current = self._current
        authored = entry.channel in AUTHORED_CHANNELS
        # Named facts are the person's own list: any channel that shows one counts.
        written = entry.channel in WRITTEN_CHANNELS or self.options.facts is not None
        pending = self._pending
        if authored and self.options.facts is None and pending:
            taken = {f.start for f in found}
            for number in self.finder.numbers(entry.text):
                waiting = pending.get(number.key)
                if waiting and number.start not in taken:
                    self._use(waiting, number, entry)
        # Each value once per entry, where it first stands (its later mentions in the entry
        # change nothing: a use is reported once, a window keeps one line per value).
        firsts: dict[tuple[str, str], _Found] = {}
        for f in found:
            if (f.kind, f.key) not in firsts:
                firsts[(f.kind, f.key)] = f
        new_after = (current is not None and authored and self.options.facts is None
                     and current.lost_kinds)
        at = entry.at
        for f in firsts.values():
            if pending:
                waiting = pending.get(f.key)
                if waiting:
                    self._use(waiting, f, entry)
            self._track(f, at, written)
            if (new_after and current is not None and f.kind in current.lost_kinds
                    and self._unseen(f) and f.value not in current.altered
                    and f.key not in current.new_seen):
                current.new_seen.add(f.key)
                current.new_after.append((
                    f.kind, f.value, at,
                    tuple(signature_hits(f.value, f.kind, self.options.signatures))))
        # After the entry: a value a tool showed is "seen" only from the next entry on (an
        # agent's own first mention in this entry was still its own).
        self._see(firsts.values())

    def _see(self, found: Iterable[_Found]) -> None:
        seen = self._seen
        for f in found:
            seen.update(f.seen_as)

    def _unseen(self, f: _Found) -> bool:
        """Nothing had shown this value before: not it, not (for a path) its directory, not (for
        a URL) its host."""
        seen = self._seen
        if f.key in seen:
            return False
        return not any(shown in seen for shown in f.seen_as[1:])

    def _use(self, waiting: tuple[int, ...], f: _Found, entry: Entry) -> None:
        buildings, states, flags = self._open_building, self._open_state, self._open_flags
        if entry.channel in AUTHORED_CHANNELS:
            context = _context(entry.text, f.start, f.end)
            for n in waiting:
                building, ident = buildings[n], states[n]
                assert building is not None and ident is not None  # a used value is no longer waiting
                if flags[n] & _LATENT:  # the agent needed what only tool output had shown: the task's
                    building.identifiers.append(ident)
                kind, value, state, _altered, label = ident
                need = (kind, value, entry.at, entry.channel, state, label, context,
                        bool(flags[n] & _BACK_FROM_TOOL))
                building.lost.append(need)
                if self.on_use is not None:
                    self.on_use(building.index, _lost_record(need))
                buildings[n] = states[n] = None
            del self._pending[f.key]
        elif entry.channel in RETURNED_CHANNELS:
            context = ""
            for n in waiting:
                was = flags[n]
                flags[n] = was | _BACK_FROM_TOOL
                if not was & (_REAPPEARED | _LATENT):
                    flags[n] |= _REAPPEARED
                    building, ident = buildings[n], states[n]
                    assert building is not None and ident is not None
                    context = context or _context(entry.text, f.start, f.end)
                    kind, value, state, _altered, label = ident
                    building.reappeared.append((kind, value, entry.at, entry.channel, state,
                                                label, context))

    def _compaction(self, c: Compaction) -> None:
        summary_at = c.summary_at if c.summary_at is not None else c.at
        window = self._window
        summary_found = self.finder.find(c.summary) if c.summary else []
        carried_found = self.finder.find(c.carried) if c.carried else []
        summary_own = {f.key for f in summary_found}
        summary_keys = summary_own | {f.key for f in carried_found}
        tokens: dict[str, list[str]] = {}
        values = {s.value for s in window.values()}
        for f in summary_found:
            # A near miss must be a value the session never showed: one it did show (in this
            # window or before, in any channel) is another real value, not this one garbled.
            if f.value not in values and f.key not in self._seen:
                tokens.setdefault(f.kind, []).append(f.value)
        summary_dirs = {f.key for found in (summary_found, carried_found) for f in found
                        if f.kind == "path"}
        carried_paths = _carried_paths(summary_dirs)
        summary_norm = normalize(f"{c.summary}\n{c.carried}" if c.carried else c.summary)
        kept_from = c.kept_from
        code_only = self.finder.code_names - self.finder.env_names
        every = [(seen, self._state(seen, c, summary_norm, summary_keys, summary_dirs, tokens,
                                    kept_from, carried_paths)) for seen in window.values()
                 if not (seen.kind == "env_var" and seen.key in code_only)]
        # The task's values are what the agent or the person wrote (or the summary before
        # carried), and whatever the summary carries; a value only tool output showed that the
        # summary dropped is no loss of the task's unless the agent writes it again (latent).
        # The runtime's carried text holds values too, but it makes none the task's.
        runtime_only = ({f.key for f in carried_found} - summary_own) if carried_found else set()
        # A directory (or a path) only implied by the summary's paths is not carried text: a
        # value only tool output showed stays unlisted.
        runtime_only |= self._implied
        states = [state for seen, state in every
                  if seen.written or (state[2] in _CARRIED and seen.key not in runtime_only)]
        self._implied = set()
        self.compactions += 1
        building = _Building(
            index=self.compactions, compaction=c,
            tokens_before=c.tokens_before if c.tokens_before is not None else self._last_usage,
            tokens_after=c.tokens_after, identifiers=states,
            # Kinds of every value not carried, latent ones included: an agent that invents a
            # port after a compaction dropped the one its tools had shown has re-invented it.
            lost_kinds=frozenset(i[0] for _seen, i in every if i[2] != _PRESENT),
            altered=frozenset(i[3] for _seen, i in every if i[3]))
        if self.keep:
            self._built.append(building)
        pending = self._pending
        for seen, ident in every:
            if ident[2] != _PRESENT:
                latent = not seen.written and ident[2] not in _CARRIED
                pending[seen.key] = pending.get(seen.key, ()) + (len(self._open_flags),)
                self._open_building.append(building)
                self._open_state.append(ident)
                self._open_flags.append(_LATENT if latent else 0)
        # The summary's own values: new if nothing showed them before.
        if self.options.facts is None:
            for f in summary_found:
                if (f.kind in building.lost_kinds and self._unseen(f)
                        and f.value not in building.altered and f.key not in building.new_seen):
                    building.new_seen.add(f.key)
                    building.new_after.append((
                        f.kind, f.value, summary_at,
                        tuple(signature_hits(f.value, f.kind, self.options.signatures))))
        self._see(summary_found)
        self._see(carried_found)
        # The next compaction replaces this summary and whatever this one kept verbatim.
        next_window: dict[tuple[str, str], _Seen] = {}
        for f in summary_found:
            if f.kind not in self.excluded and not f.nobodys:
                next_window.setdefault((f.kind, f.key), _Seen(f.kind, f.value, f.key, summary_at,
                                                                summary_at, f.label))
        if kept_from is not None:
            for slot, seen in window.items():
                if seen.last_at >= kept_from:
                    next_window.setdefault(slot, seen)
        self._window = next_window
        self._current = building
        if self.on_compaction is not None:
            self.on_compaction(building.audit(self.finder.weights))

    def _state(self, seen: _Seen, c: Compaction, summary_norm: str, summary_keys: set[str],
               summary_dirs: set[str], tokens: Mapping[str, list[str]],
               kept_from: int | None,
               carried_paths: tuple[set[str], set[str], set[str]] = (set(), set(), set())
               ) -> _State:
        if kept_from is not None and seen.last_at >= kept_from:
            return (seen.kind, seen.value, _PRESENT, None, seen.label)
        if seen.key in summary_keys or (seen.kind == "path" and _listed_under(
                seen.key, summary_dirs, summary_norm)):
            return (seen.kind, seen.value, _PRESENT, None, seen.label)
        if seen.kind == "path" and _carried_by(seen.key, carried_paths):
            self._implied.add(seen.key)
            return (seen.kind, seen.value, _PRESENT, None, seen.label)
        if c.carrier != "text":  # what the readable part does not hold, the opaque part may
            return (seen.kind, seen.value, _UNKNOWN, None, seen.label)
        kind_tokens = None if self.options.facts is not None else tokens.get(seen.kind, [])
        norm_value = normalize(seen.value)
        if kind_tokens is not None and not kind_tokens and norm_value not in summary_norm:
            # Not in the text at all and no token of its kind to be a near miss: missing,
            # without the whole-token rule's cost.
            return (seen.kind, seen.value, _MISSING, None, seen.label)
        state, miss = value_state(summary_norm, norm_value, seen.kind, kind_tokens)
        return (seen.kind, seen.value, _CODE[state], miss.altered if miss else None, seen.label)


_MEMBERS: tuple[TimelineState, ...] = tuple(TimelineState)
_CODE = {state: code for code, state in enumerate(_MEMBERS)}
"""A state's number in the records of :data:`_State` (an enum member is an object the garbage
collector follows; a small number is not)."""
_PRESENT, _MUTATED, _MISSING, _UNKNOWN = (_CODE[s] for s in (PRESENT, MUTATED, MISSING, UNKNOWN))

_CARRIED = frozenset({_PRESENT, _MUTATED})
"""States in which the summary holds the value (intact or garbled)."""

_PLACES = frozenset({".", "~", "/", "~/"})
"""Path keys that are the session's own places (its working directory, home, the root): where
the work happens, not a value of it."""


def _listed_under(key: str, dirs: set[str], summary_norm: str) -> bool:
    """A file whose directory the summary names, with the file's name in it too."""
    parent, _, name = key.rstrip("/").rpartition("/")
    if not parent or not name:
        return False
    while parent:
        if parent in dirs or parent + "/" in dirs:
            norm_name = normalize(name)
            return norm_name in summary_norm and contains_token_normalized(summary_norm, norm_name)
        parent = parent.rpartition("/")[0]
    return False


def _segments(key: str) -> list[str]:
    return [part for part in key.strip("/").split("/") if part and part != "."]


def _carried_paths(keys: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    """What the summary's paths carry besides themselves: ``(tails, parents, ends)``. ``tails``:
    its relative paths of two segments or more (``src/cli.ts``, written from a directory the
    agent had gone into, names ``packages/app/src/cli.ts``); ``ends``: the last two segments or
    more of each (``frontend/src/a.tsx`` names ``src/a.tsx`` as the session keys it after going
    into ``frontend``); ``parents``: every run of segments a
    summary path continues after, from its start or, of two segments or more, inside it
    (``app/src/tui/a.ts`` carries the directories ``app``, ``app/src``, ``app/src/tui`` and
    ``src/tui``, not ``tui``: a file named is its directory named)."""
    tails: set[str] = set()
    parents: set[str] = set()
    ends: set[str] = set()
    for key in keys:
        parts = _segments(key)
        if len(parts) >= 2 and not key.startswith(("/", "~")):
            tails.add("/".join(parts))
        for i in range(1, len(parts) - 1):
            ends.add("/".join(parts[i:]))
        for j in range(1, len(parts)):
            parents.add("/".join(parts[:j]))
            for i in range(1, j - 1):  # inner runs of two segments or more
                parents.add("/".join(parts[i:j]))
    return tails, parents, ends


def _carried_by(key: str, carried: tuple[set[str], set[str], set[str]]) -> bool:
    """A path the summary's paths carry (see :func:`_carried_paths`): one of their directories,
    a path that ends in one of their relative paths, or a relative one they end in."""
    tails, parents, ends = carried
    parts = _segments(key)
    if not parts:
        return False
    joined = "/".join(parts)
    if joined in parents or (len(parts) >= 2 and not key.startswith(("/", "~")) and joined in ends):
        return True
    return any("/".join(parts[i:]) in tails for i in range(1, len(parts) - 1))


def audit_session(session: Session, options: AuditOptions | None = None) -> list[CompactionAudit]:
    """Audit every compaction of a session.

    Args:
        session: the session as a reader produced it.
        options: rules and kinds, or named facts (default: the shipped tracked kinds minus
            ``number``).

    Returns:
        One audit per compaction, in session order (empty when the session never compacted).
    """
    auditor = SessionAuditor(options)
    auditor.feed_all(session.items)
    return auditor.audits()


@dataclass(frozen=True)
class StoredAudit:
    """A session audit as the store keeps it (``foldscope audit --db``)."""

    id: int
    created_at: float
    source: str | None
    session: str | None
    format: str
    redacted: bool
    compactions: int
    lost_and_needed: int
    document: dict[str, Any]


def redaction_key() -> bytes:
    """A fresh random key for one audit's redaction (never stored)."""
    return secrets.token_bytes(32)


def redact(value: str, key: bytes) -> str:
    """A value's stand-in in redacted output: ``hmac:`` and 16 hex digits of its HMAC-SHA256
    under the audit's random key.

    Equal values redact equally within one audit, so a redacted audit still shows which entries
    agree; without the key (shown once, never stored) a value cannot be recovered by trying
    candidates, not even one of the 65,536 ports.
    """
    return "hmac:" + hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


def audit_json(session: Session, audits: Sequence[CompactionAudit], *,
               redacted: bool = False, source: str | None = None,
               with_summaries: bool = True, redact_key: bytes | None = None,
               summaries: Sequence[str] | None = None) -> dict[str, Any]:
    """The document ``foldscope audit --json`` prints (and ``--db`` stores).

    Args:
        session: the audited session (its format, name, skipped lines and notes; its items
            only for the summaries when ``summaries`` is not given).
        audits: its compaction audits.
        redacted: replace every value (and altered text, label and context) by :func:`redact`.
        source: the file the session came from, as given (left out when redacted).
        with_summaries: give each compaction its ``summary`` text (never when redacted).
        redact_key: the key values are redacted under (default: a fresh random one).
        summaries: the compactions' summaries, when the session's items were streamed.

    Returns:
        ``{"format", "session", "skipped_lines", "compactions": [{index, tokens_before,
        tokens_after, identifiers: [{kind, value, state, altered}], lost_and_needed: [{kind,
        value, used_at, used_in, context, recovered}], reappeared: [...], new_after: [{kind,
        value, first_seen_at, signatures}]}]}`` plus extra keys (``at``, ``type``, ``trigger``,
        ``carrier``, ``counts``, ``summary``, ``label``).
    """
    if redacted and redact_key is None:
        redact_key = redaction_key()
    if summaries is None and with_summaries:
        summaries = [c.summary for c in session.compactions]
    def v(text: str | None) -> str | None:
        if text is None:
            return None
        return redact(text, redact_key) if redacted and redact_key is not None else text

    compactions = []
    for a in audits:
        identifiers = []
        for i in a.identifiers:
            item: dict[str, Any] = {"kind": i.kind, "value": v(i.value), "state": i.state,
                                    "altered": v(i.altered)}
            if i.label is not None:
                item["label"] = v(i.label)
            identifiers.append(item)
        lost = []
        for n in a.lost_and_needed:
            item = {"kind": n.kind, "value": v(n.value), "used_at": n.used_at,
                    "used_in": n.used_in, "state": n.state,
                    "context": None if redacted else n.context, "recovered": n.recovered}
            if n.label is not None:
                item["label"] = v(n.label)
            lost.append(item)
        back = []
        for r in a.reappeared:
            item = {"kind": r.kind, "value": v(r.value), "at": r.at, "channel": r.channel,
                    "state": r.state, "context": None if redacted else r.context}
            if r.label is not None:
                item["label"] = v(r.label)
            back.append(item)
        compaction: dict[str, Any] = {
            "index": a.index, "at": a.at, "summary_at": a.summary_at, "type": a.kind,
            "trigger": a.trigger, "carrier": a.carrier,
            "tokens_before": a.tokens_before, "tokens_after": a.tokens_after,
            "counts": {s: a.count(s) for s in STATES},
            "identifiers": identifiers,
            "lost_and_needed": lost,
            "reappeared": back,
            "new_after": [{"kind": n.kind, "value": v(n.value), "first_seen_at": n.first_seen_at,
                           "signatures": list(n.signatures)} for n in a.new_after],
        }
        if not redacted and summaries is not None and a.index - 1 < len(summaries):
            # The carrier itself, so a stored audit can be read in the TUI like a row; a
            # redacted audit keeps kinds and hashes only, never session text.
            compaction["summary"] = summaries[a.index - 1]
        compactions.append(compaction)
    doc: dict[str, Any] = {"format": session.format, "redacted": redacted}
    if redacted:
        doc["redaction"] = "hmac-sha256 under a random per-audit key (shown once, not stored)"
    else:
        doc["source"] = source
        doc["session"] = session.name
    doc.update({"skipped_lines": session.skipped_lines, "skipped_at": list(session.skipped_at[:20]),
                "notes": list(session.notes[:20]), "compactions": compactions})
    return doc


def facts_from_data(data: Mapping[str, Any], source: str = "facts file",
                    rules: Sequence[KindRule] | None = None) -> tuple[AuditFact, ...]:
    """Named facts from a parsed facts file: ``[[facts]]`` tables with ``label`` and ``value``
    (and an optional ``kind``; other keys, such as a scenario's ``role`` or ``chunk``, are ignored,
    so a scenario file is itself a facts file).

    Raises:
        ConfigError: one line naming the file, the fact and what is wrong.
    """
    entries = data.get("facts")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{source}: no [[facts]] tables (each needs a label and a value)")
    out: list[AuditFact] = []
    labels: set[str] = set()
    for n, entry in enumerate(entries, 1):
        where = f"{source}: fact #{n}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: must be a table")
        label, value, kind = entry.get("label"), entry.get("value"), entry.get("kind")
        if not isinstance(label, str) or not label.strip():
            raise ConfigError(f"{where}: 'label' must be a non-empty string")
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: 'value' must be a non-empty string")
        if kind is not None and (not isinstance(kind, str) or not kind.strip()):
            raise ConfigError(f"{where}: 'kind' must be a non-empty string")
        if label in labels:
            raise ConfigError(f"{where}: label {label!r} used twice")
        labels.add(label)
        out.append(AuditFact(label, value.strip(), kind or main_kind(value, rules) or "value"))
    return tuple(out)
