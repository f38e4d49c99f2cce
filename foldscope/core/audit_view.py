"""A session audit read back as typed records for display: the ``audit --json`` document (fresh
or stored with ``--db``) as compactions with their summary, identifier states, lost-and-needed
and new-after lists, plus where each identifier stands in its summary.

Pure: the TUI's audit screen shows an :class:`AuditView`; ``foldscope.core.audit`` makes the
document.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foldscope.core.audit import (
    CompactionAudit,
    IdentifierState,
    LostAndNeeded,
    NewAfter,
    Reappeared,
)
from foldscope.core.errors import ConfigError
from foldscope.core.forensics import MISSING, FactSpan, fact_spans


@dataclass(frozen=True)
class AuditView:
    """One audited session: its compactions' audits and, beside each, its summary (the carrier;
    None when the audit was redacted or stored without it)."""

    source: str | None
    session: str | None
    format: str
    redacted: bool
    skipped_lines: int
    compactions: tuple[CompactionAudit, ...]
    summaries: tuple[str | None, ...]
    stored_as: int | None = None

    @property
    def where(self) -> str:
        """What ``at`` counts: JSONL lines, or messages of a log read through an API."""
        return "message" if self.format == "inspect" else "line"


def _get(data: Mapping[str, Any], key: str, kind: type, where: str,
         *, optional: bool = False) -> Any:
    """``data[key]`` if it has type ``kind`` (a bool is no int here), else one-line error."""
    value = data.get(key) if isinstance(data, Mapping) else None
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{where}: '{key}' is missing or has the wrong type")
    return value


def _compaction(c: Any, n: int) -> tuple[CompactionAudit, str | None]:
    where = f"audit document: compaction #{n}"
    if not isinstance(c, Mapping):
        raise ConfigError(f"{where}: must be an object")
    identifiers, lost, new, back = [], [], [], []
    for i in _get(c, "identifiers", list, where):
        identifiers.append(IdentifierState(
            _get(i, "kind", str, where), _get(i, "value", str, where),
            _get(i, "state", str, where), _get(i, "altered", str, where, optional=True),
            _get(i, "label", str, where, optional=True)))
    for x in _get(c, "lost_and_needed", list, where):
        lost.append(LostAndNeeded(
            _get(x, "kind", str, where), _get(x, "value", str, where),
            _get(x, "used_at", int, where), str(x.get("used_in") or ""),
            _get(x, "state", str, where), _get(x, "label", str, where, optional=True),
            str(x.get("context") or ""), x.get("recovered") is True))
    for x in c.get("reappeared") or []:
        back.append(Reappeared(
            _get(x, "kind", str, where), _get(x, "value", str, where), _get(x, "at", int, where),
            str(x.get("channel") or ""), _get(x, "state", str, where),
            _get(x, "label", str, where, optional=True), str(x.get("context") or "")))
    for x in _get(c, "new_after", list, where):
        new.append(NewAfter(
            _get(x, "kind", str, where), _get(x, "value", str, where),
            _get(x, "first_seen_at", int, where),
            tuple(str(s) for s in _get(x, "signatures", list, where))))
    audit = CompactionAudit(
        index=_get(c, "index", int, where), at=_get(c, "at", int, where),
        kind=str(c.get("type") or "summary"), trigger=_get(c, "trigger", str, where, optional=True),
        tokens_before=_get(c, "tokens_before", int, where, optional=True),
        tokens_after=_get(c, "tokens_after", int, where, optional=True),
        identifiers=tuple(identifiers), lost_and_needed=tuple(lost), new_after=tuple(new),
        reappeared=tuple(back), carrier=str(c.get("carrier") or "text"),
        summary_at=_get(c, "summary_at", int, where, optional=True))
    return audit, _get(c, "summary", str, where, optional=True)


def audit_view(doc: Mapping[str, Any]) -> AuditView:
    """Read one session's ``audit --json`` document (as printed or as stored) into records.

    Args:
        doc: the document of one session.

    Returns:
        The audit as typed records.

    Raises:
        ConfigError: one line naming what in the document is malformed.
    """
    if not isinstance(doc, Mapping):
        raise ConfigError("audit document: must be an object")
    where = "audit document"
    read = [_compaction(c, n) for n, c in enumerate(_get(doc, "compactions", list, where), 1)]
    return AuditView(
        source=_get(doc, "source", str, where, optional=True),
        session=_get(doc, "session", str, where, optional=True),
        format=_get(doc, "format", str, where), redacted=bool(doc.get("redacted")),
        skipped_lines=int(doc.get("skipped_lines") or 0),
        compactions=tuple(a for a, _ in read), summaries=tuple(s for _, s in read),
        stored_as=_get(doc, "stored_as", int, where, optional=True))


@dataclass(frozen=True)
class _Shown:
    """An identifier the summary carries, in the shape ``fact_spans`` locates."""

    label: str
    value: str
    kind: str


def summary_spans(summary: str, identifiers: Sequence[IdentifierState]) -> list[FactSpan]:
    """Where a summary holds the identifiers it carried: present ones at every whole-token
    occurrence, mutated ones at their near miss (the same rules the audit decided them by).

    Args:
        summary: the compaction's summary.
        identifiers: the audit's identifier states for that compaction.

    Returns:
        Sorted, non-overlapping spans labelled with the identifier's value; missing identifiers
        have no place in the summary and get none.
    """
    carried = [_Shown(i.value, i.value, i.kind) for i in identifiers if i.state != MISSING]
    return fact_spans(summary, carried)
