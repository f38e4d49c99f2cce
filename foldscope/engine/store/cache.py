"""The response cache repository: replies stored for replay, their bodies in the blob table."""

from __future__ import annotations

import json
import time
from typing import Any

from foldscope.core.nesting import loads_json
from foldscope.engine.store.connection import Repository


class CacheRepository(Repository):
    """The ``cache`` table."""

    def cached_reply(self, key: str) -> dict[str, Any] | None:
        """A cached reply by key (pin, request digest and repeat index), or None."""
        row = self.db.execute("SELECT reply_json FROM cache WHERE key=?", [key]).fetchone()
        if row is None:
            return None
        try:
            reply = loads_json(row[0])
        except ValueError:
            reply = None
        if not isinstance(reply, dict):  # unreadable: dropped, and the call is made again
            self.drop_cached_reply(key)
            return None
        digest = reply.pop("content_digest", None)
        if digest is not None:
            body = self.db.execute("SELECT body FROM blobs WHERE digest=?", [digest]).fetchone()
            if body is None:  # its body is gone: a miss, and the call is made again
                return None
            reply["content"] = body[0]
        return reply

    def drop_cached_reply(self, key: str) -> None:
        """Remove a cache entry that may not be replayed (it failed validation)."""
        self.db.execute("DELETE FROM cache WHERE key=?", [key])

    def cache_reply(self, key: str, model: str, reply: dict[str, Any]) -> None:
        """Store a successful reply for replay; an existing entry is kept (first answer wins).

        The reply's text goes to blobs (the fold or answer that used it refers to the same
        body), the entry keeps its digest.
        """
        record = {k: v for k, v in reply.items() if k != "content"}
        with self.db.atomic():
            record["content_digest"] = self._conn.put_blob(self.db.conn, reply["content"])
            self.db.execute("INSERT OR IGNORE INTO cache (key, model, reply_json, created_at) "
                            "VALUES (?,?,?,?)",
                            [key, model, json.dumps(record, ensure_ascii=False), time.time()])
