"""The session audits repository: stored ``foldscope audit`` documents."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import TYPE_CHECKING, Any

from foldscope.engine.store.connection import Repository, named

if TYPE_CHECKING:  # the audit's module (its identifier rules) loads when an audit is read
    from foldscope.core.audit import StoredAudit

_AUDIT_COLUMNS = ("id, created_at, source, session, format, redacted, compactions, lost_and_needed, "
                  "audit_json AS document")
"""A stored audit's fields, each the ``audits`` column of its name (the document as JSON)."""


def _audits(cursor: sqlite3.Cursor) -> list[StoredAudit]:
    """A query's audits, each column read into the ``StoredAudit`` field of its name."""
    from foldscope.core.audit import StoredAudit

    return [StoredAudit(**{**a, "redacted": bool(a["redacted"]),
                           "document": json.loads(a["document"])}) for a in named(cursor)]


class AuditRepository(Repository):
    """The ``audits`` table."""

    def add_audit(self, doc: dict[str, Any]) -> int:
        """Store one session audit (the ``audit --json`` document) and return its id."""
        lost = sum(len(c["lost_and_needed"]) for c in doc["compactions"])
        with self.db.atomic():
            cursor = self.db.execute(
                "INSERT INTO audits (created_at, source, session, format, redacted, compactions, "
                "lost_and_needed, audit_json) VALUES (?,?,?,?,?,?,?,?)",
                [time.time(), doc.get("source"), doc.get("session"), doc["format"],
                 int(bool(doc.get("redacted"))), len(doc["compactions"]), lost,
                 json.dumps(doc, ensure_ascii=False, sort_keys=True)])
        return int(cursor.lastrowid or 0)

    def audits(self) -> list[StoredAudit]:
        """Every stored session audit, newest first."""
        return _audits(self.db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits ORDER BY id DESC"))

    def audit(self, audit_id: int) -> StoredAudit | None:
        """One stored session audit, or None."""
        found = _audits(self.db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits WHERE id=?",
                                        [audit_id]))
        return found[0] if found else None
