"""Session audits: what each compaction in a real agent history kept, garbled or dropped, and
whether the agent needed the dropped values afterwards.

A real session is a row whose folds are its compactions: the history a compaction replaced
(every entry since the previous compaction, plus the previous summary) is the chunk, the new
summary is the carrier. For each compaction the audit lists the identifiers of the replaced
history (found by the kind-named rules of :mod:`foldscope.core.identifiers`, or the named facts
of a facts file) and their state in the summary — ``present`` (the grader's whole-token rule),
``mutated`` (a near miss) or ``missing``; then, for every identifier not carried intact, whether
the agent used it again after the compaction (*lost and needed*); and the values of the same
kinds that the agent wrote after the compaction and that never appeared before it (*new after*:
likely re-invented), with their stock-value signatures.

Pure: readers in ``foldscope.engine.audit_readers`` turn files into :class:`Session` objects.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from foldscope.core.errors import ConfigError
from foldscope.core.grading import contains_token_normalized, normalize, token_spans
from foldscope.core.identifiers import (
    Identifier,
    KindRule,
    default_rules,
    find_identifiers,
    main_kind,
)
from foldscope.core.nearmiss import near_miss
from foldscope.core.signatures import Signature, signature_hits

Channel = Literal["user", "system", "assistant", "tool_call", "tool_output"]
"""Who wrote an entry's text: the person, the runtime, the agent (prose or a tool call) or a tool."""

AGENT_CHANNELS: frozenset[str] = frozenset({"assistant", "tool_call", "tool_output"})
"""Where a later use of a value counts as the session needing it: the agent's own messages and
tool calls, and what its tools returned (the issue's definition; a person re-typing a value is
not the agent using it)."""

AUTHORED_CHANNELS: frozenset[str] = frozenset({"assistant", "tool_call"})
"""Where a value counts as written by the agent (a candidate re-invention); tool output is what
the world returned, not something the agent made up."""

DEFAULT_EXCLUDED_KINDS: frozenset[str] = frozenset({"number"})
"""Kinds left out of audits by default: a bare ``number`` is every count, size and line number in
a session, far too noisy to call a lost fact. A port, version or timestamp has its own kind."""

State = Literal["present", "mutated", "missing"]


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
    """A compaction marker: the summary that replaced the history before it."""

    at: int
    summary: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    kind: str = "summary"
    trigger: str | None = None


@dataclass(frozen=True)
class Session:
    """An agent history as ordered entries and compaction markers, plus what the reader skipped."""

    items: tuple[Entry | Compaction, ...]
    format: str
    skipped_lines: int = 0
    skipped_at: tuple[int, ...] = ()
    name: str | None = None

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


@dataclass(frozen=True)
class IdentifierState:
    """One identifier of a replaced history and its state in the new summary."""

    kind: str
    value: str
    state: State
    altered: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class LostAndNeeded:
    """An identifier the summary did not carry intact that the session used again afterwards."""

    kind: str
    value: str
    used_at: int
    used_in: str
    state: State
    label: str | None = None


@dataclass(frozen=True)
class NewAfter:
    """A value of a lost kind the agent wrote after the compaction and never seen before it."""

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

    def count(self, state: State) -> int:
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


def _segments(session: Session) -> list[tuple[Compaction, list[Entry], str, list[Entry]]]:
    """Per compaction: the marker, the entries it replaced, the previous summary, the entries after."""
    out: list[tuple[Compaction, list[Entry], str, list[Entry]]] = []
    items = list(session.items)
    previous_summary = ""
    replaced: list[Entry] = []
    for pos, item in enumerate(items):
        if isinstance(item, Compaction):
            after = [e for e in items[pos + 1:] if isinstance(e, Entry)]
            out.append((item, replaced, previous_summary, after))
            previous_summary = item.summary
            replaced = []
        else:
            replaced.append(item)
    return out


def _found(text: str, options: AuditOptions) -> list[tuple[str, str, str | None]]:
    """``(kind, value, label)`` of every identifier (or named fact) in ``text``, first-seen order."""
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str, str | None]] = []
    if options.facts is not None:
        norm = normalize(text)
        for fact in options.facts:
            if (fact.kind, fact.value) not in seen and contains_token_normalized(norm, fact.value):
                seen.add((fact.kind, fact.value))
                out.append((fact.kind, fact.value, fact.label))
        return out
    for ident in _with_parts(find_identifiers(text, options.rules), options.rules):
        key = (ident.kind, ident.value)
        if ident.kind in options.excluded_kinds or key in seen:
            continue
        seen.add(key)
        out.append((ident.kind, ident.value, None))
    return out


COMPOSITE_KINDS: frozenset[str] = frozenset({"url"})
"""Kinds whose parts are identifiers too: a summary that drops ``http://ledger-1.internal:62114/``
but keeps "ledger-1.internal, port 62114" has kept the host and the port."""


def _with_parts(found: Sequence[Identifier], rules: Sequence[KindRule]) -> list[Identifier]:
    """The identifiers, each composite one followed by the identifiers inside it."""
    inner_rules = [r for r in rules if r.name not in COMPOSITE_KINDS]
    out: list[Identifier] = []
    for ident in found:
        out.append(ident)
        if ident.kind in COMPOSITE_KINDS:
            out.extend(find_identifiers(ident.value, inner_rules))
    return out


def _state(summary_norm: str, kind: str, value: str,
           values: frozenset[str]) -> tuple[State, str | None]:
    """A value's state in a summary; a "near miss" that is itself another value of the replaced
    history is that other value carried, not this one garbled."""
    if contains_token_normalized(summary_norm, normalize(value)):
        return "present", None
    miss = near_miss(summary_norm, normalize(value), kind)
    if miss is None or (miss.altered != value and miss.altered in values):
        return "missing", None
    return "mutated", miss.altered


@dataclass(frozen=True)
class _AgentText:
    """The agent-channel entries of a session as one normalised text, so that finding a value's
    first use after a compaction is one search, not one per entry (sessions run to many
    thousands of entries and a compaction can lose thousands of identifiers)."""

    text: str
    offsets: tuple[int, ...]
    entries: tuple[Entry, ...]

    @classmethod
    def of(cls, session: Session) -> _AgentText:
        entries = tuple(e for e in session.items if isinstance(e, Entry) and e.channel in AGENT_CHANNELS)
        offsets: list[int] = []
        parts: list[str] = []
        at = 0
        for entry in entries:
            offsets.append(at)
            part = normalize(entry.text)
            parts.append(part)
            at += len(part) + 1
        return cls("\n".join(parts), tuple(offsets), entries)

    def after(self, first: int) -> tuple[str, int]:
        """The text from the ``first``-th agent entry on, and where it starts in the whole."""
        start = self.offsets[first] if first < len(self.offsets) else len(self.text)
        return self.text[start:], start

    def first_use(self, value: str, after: str, start: int) -> Entry | None:
        """The first entry in ``after`` (which begins at ``start``) holding ``value`` as a token."""
        norm_value = normalize(value)
        if norm_value not in after:
            return None
        spans = token_spans(after, norm_value)
        if not spans:
            return None
        return self.entries[bisect.bisect_right(self.offsets, start + spans[0][0]) - 1]


def _new_after(compaction: Compaction, before_text: str, window: Sequence[Entry],
               lost_kinds: set[str], excluded: set[str], options: AuditOptions) -> list[NewAfter]:
    """Values of lost kinds the summary or the agent wrote after the compaction, never seen before."""
    if not lost_kinds:
        return []
    before_norm = normalize(before_text)
    sources: list[tuple[int, str]] = [(compaction.at, compaction.summary)]
    sources += [(e.at, e.text) for e in window if e.channel in AUTHORED_CHANNELS]
    seen: set[tuple[str, str]] = set()
    out: list[NewAfter] = []
    for at, text in sources:
        for ident in find_identifiers(text, options.rules, lost_kinds):
            key = (ident.kind, ident.value)
            if key in seen or ident.value in excluded:
                continue
            seen.add(key)
            norm_value = normalize(ident.value)
            if norm_value in before_norm and contains_token_normalized(before_norm, norm_value):
                continue
            hits = tuple(signature_hits(ident.value, ident.kind, options.signatures))
            out.append(NewAfter(ident.kind, ident.value, at, hits))
    return out


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


def audit_session(session: Session, options: AuditOptions | None = None) -> list[CompactionAudit]:
    """Audit every compaction of a session.

    Args:
        session: the session as a reader produced it.
        options: rules and kinds, or named facts (default: the shipped rules minus ``number``).

    Returns:
        One audit per compaction, in session order (empty when the session never compacted).
    """
    options = options or AuditOptions()
    audits: list[CompactionAudit] = []
    segments = _segments(session)
    agent = _AgentText.of(session)
    agent_before: list[int] = []  # per compaction: how many agent entries precede it
    count = 0
    for item in session.items:
        if isinstance(item, Compaction):
            agent_before.append(count)
        elif item.channel in AGENT_CHANNELS:
            count += 1
    history_so_far: list[str] = []
    for index, (compaction, replaced, previous_summary, after) in enumerate(segments):
        replaced_text = "\n".join([previous_summary] + [e.text for e in replaced])
        history_so_far.append(replaced_text)
        summary_norm = normalize(compaction.summary)
        found = _found(replaced_text, options)
        values = frozenset(value for _kind, value, _label in found)
        states: list[IdentifierState] = []
        for kind, value, label in found:
            state, altered = _state(summary_norm, kind, value, values)
            states.append(IdentifierState(kind, value, state, altered, label))
        lost: list[LostAndNeeded] = []
        after_text, after_start = agent.after(agent_before[index])
        for ident in states:
            if ident.state == "present":
                continue
            use = agent.first_use(ident.value, after_text, after_start)
            if use is not None:
                lost.append(LostAndNeeded(ident.kind, ident.value, use.at, use.channel,
                                          ident.state, ident.label))
        next_at = segments[index + 1][0].at if index + 1 < len(segments) else None
        window = [e for e in after if next_at is None or e.at < next_at]
        lost_kinds = {i.kind for i in states if i.state != "present"}
        altered_values = {i.altered for i in states if i.altered}
        new = ([] if options.facts is not None else
               _new_after(compaction, "\n".join(history_so_far), window, lost_kinds,
                          altered_values, options))
        audits.append(CompactionAudit(
            index=index + 1, at=compaction.at, kind=compaction.kind, trigger=compaction.trigger,
            tokens_before=compaction.tokens_before, tokens_after=compaction.tokens_after,
            identifiers=tuple(states), lost_and_needed=tuple(lost), new_after=tuple(new)))
    return audits


def redact(value: str) -> str:
    """A value's stand-in in redacted output: ``sha256:`` and the first 12 hex digits of its hash.

    Equal values redact equally, so a redacted audit still shows which entries agree.
    """
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


def audit_json(session: Session, audits: Sequence[CompactionAudit], *,
               redacted: bool = False, source: str | None = None,
               with_summaries: bool = True) -> dict[str, Any]:
    """The document ``foldscope audit --json`` prints (and ``--db`` stores).

    Args:
        session: the audited session.
        audits: its compaction audits.
        redacted: replace every value (and altered text and label) by :func:`redact`.
        source: the file the session came from, as given (left out when redacted).
        with_summaries: give each compaction its ``summary`` text (never when redacted).

    Returns:
        ``{"format", "session", "skipped_lines", "compactions": [{index, tokens_before,
        tokens_after, identifiers: [{kind, value, state, altered}], lost_and_needed: [{kind,
        value, used_at}], new_after: [{kind, value, first_seen_at, signatures}]}]}`` plus extra
        keys (``at``, ``type``, ``trigger``, ``counts``, ``summary``, ``used_in``, ``label``).
    """
    summaries = [c.summary for c in session.compactions] if with_summaries else None
    def v(text: str | None) -> str | None:
        return None if text is None else (redact(text) if redacted else text)

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
                    "used_in": n.used_in, "state": n.state}
            if n.label is not None:
                item["label"] = v(n.label)
            lost.append(item)
        compaction: dict[str, Any] = {
            "index": a.index, "at": a.at, "type": a.kind, "trigger": a.trigger,
            "tokens_before": a.tokens_before, "tokens_after": a.tokens_after,
            "counts": {s: a.count(s) for s in ("present", "mutated", "missing")},
            "identifiers": identifiers,
            "lost_and_needed": lost,
            "new_after": [{"kind": n.kind, "value": v(n.value), "first_seen_at": n.first_seen_at,
                           "signatures": list(n.signatures)} for n in a.new_after],
        }
        if not redacted and summaries is not None:
            # The carrier itself, so a stored audit can be read in the TUI like a row; a
            # redacted audit keeps kinds and hashes only, never session text.
            compaction["summary"] = summaries[a.index - 1]
        compactions.append(compaction)
    doc: dict[str, Any] = {"format": session.format, "redacted": redacted}
    if not redacted:
        doc["source"] = source
        doc["session"] = session.name
    doc.update({"skipped_lines": session.skipped_lines, "skipped_at": list(session.skipped_at[:20]),
                "compactions": compactions})
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
