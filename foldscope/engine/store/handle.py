"""The database handle the store works through: ``execute`` that commits a lone write, and
``atomic`` blocks that nest as savepoints, on a plain ``sqlite3`` connection.

These are the only parts of ``sqlite_utils.Database`` the store used. Importing sqlite_utils costs
~0.1–0.2 s of CPU (it loads numpy, click and pluggy, and runs plugin hooks) before any command that
opens a database does anything, and its wrappers ran on every statement of the runner's writes.
The behaviour is the same: a write outside a transaction is committed at once, a statement that
fails outside one leaves none open, and ``atomic`` commits on success and rolls back (to its
savepoint when nested) on any exception.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_TRANSACTION_CONTROL = frozenset({"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"})

# What may stand before a statement's first keyword: whitespace, empty statements, a byte order
# mark, ``--`` and ``/* */`` comments (an unclosed one runs to the end).
_LEADING_RE = re.compile(r"(?:[\s;\ufeff]+|--[^\n]*(?:\n|\Z)|/\*.*?(?:\*/|\Z))*", re.DOTALL)
_KEYWORD_RE = re.compile(r"[A-Za-z_]+")


def first_keyword(sql: str) -> str:
    """A statement's first keyword, upper-cased (``""`` when it has none)."""
    found = _KEYWORD_RE.match(sql, _LEADING_RE.match(sql).end())  # type: ignore[union-attr]
    return found.group().upper() if found else ""


class Database:
    """A ``sqlite3`` connection (legacy transaction control) with the store's two helpers.

    Args:
        conn: an open connection; the handle owns it (``close`` closes it).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._savepoints = itertools.count(1)

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None
                ) -> sqlite3.Cursor:
        """Run one statement and return its cursor.

        A write (a statement that returns no rows and opens a transaction) run outside a
        transaction is committed at once; inside one it is part of it. A statement that fails
        outside a transaction leaves none open.
        """
        conn = self.conn
        was_open = conn.in_transaction
        try:
            cursor = conn.execute(sql) if parameters is None else conn.execute(sql, parameters)
        except Exception:
            if not was_open and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if not was_open and conn.in_transaction and cursor.description is None \
                and first_keyword(sql) not in _TRANSACTION_CONTROL:
            conn.execute("COMMIT")
        return cursor

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """A transaction: committed when the block ends, rolled back if it raises; inside another
        transaction, a savepoint released or rolled back to the same way."""
        conn = self.conn
        if conn.in_transaction:
            name = f"foldscope_{next(self._savepoints)}"
            conn.execute(f"SAVEPOINT {name}")
            try:
                yield self
            except BaseException:
                # An error such as a trigger's RAISE(ROLLBACK) may have ended the whole
                # transaction, savepoint included: then there is nothing to roll back to.
                if conn.in_transaction:
                    conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                    conn.execute(f"RELEASE SAVEPOINT {name}")
                raise
            conn.execute(f"RELEASE SAVEPOINT {name}")
            return
        conn.execute("BEGIN")
        try:
            yield self
        except BaseException:
            self.rollback()
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            self.rollback()
            raise

    def rollback(self) -> None:
        """Roll back the open transaction, if any."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def table_names(self) -> list[str]:
        """The database's tables."""
        return [r[0] for r in self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()
