"""The session audits repository: stored ``foldscope audit`` documents."""

from __future__ import annotations

import json
import time
from typing import Any

from foldscope.core.audit import StoredAudit
from foldscope.engine.store.connection import Repository

_AUDIT_COLUMNS = ("id, created_at, source, session, format, redacted, compactions, lost_and_needed, "
                  "audit_json")


def _audit(row: tuple[Any, ...]) -> StoredAudit:
    (audit_id, created_at, source, session, fmt, redacted, compactions, lost, doc) = row
    return StoredAudit(audit_id, created_at, source, session, fmt, bool(redacted), compactions,
                       lost, json.loads(doc))


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
        return [_audit(r) for r in self.db.execute(
            f"SELECT {_AUDIT_COLUMNS} FROM audits ORDER BY id DESC").fetchall()]

    def audit(self, audit_id: int) -> StoredAudit | None:
        """One stored session audit, or None."""
        row = self.db.execute(f"SELECT {_AUDIT_COLUMNS} FROM audits WHERE id=?", [audit_id]).fetchone()
        return None if row is None else _audit(row)
