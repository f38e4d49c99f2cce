"""The checks and verdicts repository: a finished row's per-fact checks, people's verdicts."""

from __future__ import annotations

import dataclasses
import operator
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any

from foldscope.core.errors import FlagRefused
from foldscope.core.fabrication import CLEARED, HumanVerdict, flag_refusal
from foldscope.core.row import StoredCheck
from foldscope.engine.store.connection import _ROW_SEQ, Repository, column_names

_CHECK_FIELDS = tuple(f.name for f in dataclasses.fields(StoredCheck))
"""A stored check's fields, each a ``checks`` column of the same name."""
_CHECK_COLUMNS = ", ".join(_CHECK_FIELDS)
_CHECK_BOOLS = frozenset({"correct", "abstained", "unit_dropped", "in_carrier", "flagged"})

_VERDICT_COLUMNS = ", ".join(f.name for f in dataclasses.fields(HumanVerdict))
"""A verdict entry's fields, each a ``verdicts`` column of the same name."""

CHECK_BATCH = 2000
"""Checks read per fetch when a whole sweep's are iterated."""
CHECK_IDS = 500
"""Row ids per ``IN`` list when a batch of rows' checks is read."""


_BOOLS_AT = tuple(i for i, name in enumerate(_CHECK_FIELDS) if name in _CHECK_BOOLS)


def _checks(cursor: sqlite3.Cursor) -> list[StoredCheck]:
    """A query's checks, each column read into the ``StoredCheck`` field of its name."""
    names = column_names(cursor)
    out = []
    if tuple(names) == _CHECK_FIELDS:  # the columns in the fields' order: built positionally
        make = StoredCheck
        for row in cursor:
            values = list(row)
            for i in _BOOLS_AT:
                values[i] = bool(values[i])
            out.append(make(*values))
        return out
    for row in cursor:
        data: dict[str, Any] = dict(zip(names, row))
        for name in _CHECK_BOOLS:
            data[name] = bool(data[name])
        out.append(StoredCheck(**data))
    return out


def _verdicts(cursor: sqlite3.Cursor) -> list[HumanVerdict]:
    """A query's verdict entries, each column read into the field of its name."""
    names = column_names(cursor)
    return [HumanVerdict(**dict(zip(names, values))) for values in cursor]


class CheckRepository(Repository):
    """The ``checks`` and ``verdicts`` tables."""

    def checks(self, row_id: int) -> list[StoredCheck]:
        """The per-fact checks of a finished row."""
        return _checks(self.db.execute(
            f"SELECT {_CHECK_COLUMNS} FROM checks WHERE row_id=? ORDER BY id", [row_id]))

    def set_flag(self, check_id: int, flagged: bool, author: str = "unknown") -> None:
        """Flag a checked answer as fabricated, or withdraw its verdict (the ``f`` toggle).

        Raises:
            FlagRefused: the answer is correct, an abstention or empty (``core.fabrication``).
        """
        self.add_verdict(check_id, "fabricated" if flagged else CLEARED, author=author)

    def check(self, check_id: int) -> StoredCheck | None:
        """One check by id, or None."""
        found = _checks(self.db.execute(f"SELECT {_CHECK_COLUMNS} FROM checks WHERE id=?",
                                        [check_id]))
        return found[0] if found else None

    def add_verdict(self, check_id: int, verdict: str, reason: str | None = None, *,
                    author: str) -> int:
        """Record a person's verdict on a checked answer (a new history entry; the automatic
        class is never touched). The check's ``flagged`` mark follows the latest verdict.

        Args:
            check_id: the checked answer.
            verdict: one of ``core.fabrication.VERDICTS``, or ``CLEARED`` to withdraw.
            reason: an optional one-line reason.
            author: who says so.

        Returns:
            The history entry's id.

        Raises:
            FlagRefused: no such check, or the rule refuses it (a correct answer, an abstention,
                an empty answer, an unknown verdict).
        """
        with self.db.atomic():
            check = self.check(check_id)
            if check is None:
                raise FlagRefused(f"no check {check_id} in {self.path}")
            refusal = flag_refusal(check, verdict)
            if refusal is not None:
                raise FlagRefused(refusal)
            reason = " ".join((reason or "").split()) or None
            cursor = self.db.execute(
                "INSERT INTO verdicts (check_id, verdict, reason, author, created_at) "
                "VALUES (?,?,?,?,?)", [check_id, verdict, reason, author, time.time()])
            self._sync_flag(check_id)
        return int(cursor.lastrowid or 0)

    def undo_verdict(self, check_id: int) -> bool:
        """Take back the latest verdict entry of a check (the one before it applies again).

        Returns:
            Whether there was an entry to take back.
        """
        with self.db.atomic():
            cursor = self.db.execute(
                "DELETE FROM verdicts WHERE id=(SELECT MAX(id) FROM verdicts WHERE check_id=?)",
                [check_id])
            self._sync_flag(check_id)
        return cursor.rowcount > 0

    def remove_verdict(self, check_id: int, entry_id: int) -> bool:
        """Take back one verdict entry of a check (the one a writer made; the entry before it
        applies again).

        Returns:
            Whether the entry was there to take back.
        """
        with self.db.atomic():
            cursor = self.db.execute("DELETE FROM verdicts WHERE id=? AND check_id=?",
                                     [entry_id, check_id])
            self._sync_flag(check_id)
        return cursor.rowcount > 0

    def _sync_flag(self, check_id: int) -> None:
        self.db.execute(
            "UPDATE checks SET flagged=COALESCE((SELECT verdict = 'fabricated' FROM verdicts "
            "WHERE check_id=? ORDER BY id DESC LIMIT 1), 0) WHERE id=?", [check_id, check_id])
        self.db.execute(f"UPDATE rows SET seq={_ROW_SEQ} WHERE id=(SELECT row_id FROM checks "
                        "WHERE id=?)", [check_id])

    def verdicts(self, sweep_id: str) -> dict[int, HumanVerdict]:
        """Every check of a sweep that has a verdict now (its latest entry, unless withdrawn)."""
        found = _verdicts(self.db.execute(
            f"SELECT {_VERDICT_COLUMNS} FROM verdicts "
            "WHERE id IN (SELECT MAX(id) FROM verdicts WHERE check_id IN (SELECT c.id FROM "
            "checks c JOIN rows r ON r.id = c.row_id WHERE r.sweep_id=?) GROUP BY check_id)",
            [sweep_id]))
        return {v.check_id: v for v in found if v.verdict != CLEARED}

    def verdict(self, check_id: int) -> HumanVerdict | None:
        """One check's verdict now (its latest entry, unless withdrawn), or None: what a writer
        reads back after a write, instead of the whole sweep's verdicts."""
        found = _verdicts(self.db.execute(
            f"SELECT {_VERDICT_COLUMNS} FROM verdicts WHERE check_id=? ORDER BY id DESC LIMIT 1",
            [check_id]))
        return found[0] if found and found[0].verdict != CLEARED else None

    def verdict_history(self, check_id: int) -> list[HumanVerdict]:
        """Every verdict entry of a check, oldest first (withdrawals included)."""
        return _verdicts(self.db.execute(
            f"SELECT {_VERDICT_COLUMNS} FROM verdicts WHERE check_id=? ORDER BY id", [check_id]))

    def rows_checks(self, row_ids: Sequence[int]) -> dict[int, list[StoredCheck]]:
        """The checks of these rows (one batch of a streamed sweep), by row id, each in the
        order asked."""
        out: dict[int, list[StoredCheck]] = {}
        for start in range(0, len(row_ids), CHECK_IDS):
            ids = list(row_ids[start:start + CHECK_IDS])
            for check in _checks(self.db.execute(
                    f"SELECT {_CHECK_COLUMNS} FROM checks WHERE row_id IN "
                    f"({', '.join('?' * len(ids))}) ORDER BY id", ids)):
                out.setdefault(check.row_id, []).append(check)
        return out

    def review_checks(self, sweep_id: str, classes: Sequence[str]) -> Iterator[StoredCheck]:
        """The checks of a sweep whose class is one of ``classes`` or that have ever had a
        verdict, in id order: what the agreement of people's verdicts reads (a subset of
        ``sweep_checks`` chosen in SQL, not by reading every check)."""
        cursor = self.db.conn.execute(
            f"SELECT {_CHECK_COLUMNS} FROM checks WHERE row_id IN "
            "(SELECT id FROM rows WHERE sweep_id=?) AND (classification IN "
            f"({', '.join('?' * len(classes))}) OR id IN (SELECT check_id FROM verdicts)) "
            "ORDER BY id", [sweep_id, *classes])
        names = column_names(cursor)
        while batch := cursor.fetchmany(CHECK_BATCH):  # read as iterated, never all at once
            for values in batch:
                data: dict[str, Any] = dict(zip(names, values))
                for name in _CHECK_BOOLS:
                    data[name] = bool(data[name])
                yield StoredCheck(**data)

    def sweep_checks(self, sweep_id: str) -> Iterator[StoredCheck]:
        """Every check of a sweep, for check-level statistics: read in batches as it is
        iterated (a 50,000-row sweep has 700,000), each label, expected value and class text
        one shared string."""
        cursor = self.db.conn.execute(
            f"SELECT {_CHECK_COLUMNS} FROM checks WHERE row_id IN "
            "(SELECT id FROM rows WHERE sweep_id=?) ORDER BY id", [sweep_id])
        # Each field's column found by name once; the values then come in the record's order.
        names = column_names(cursor)
        pick = operator.itemgetter(*(names.index(f) for f in _CHECK_FIELDS))
        shared: dict[str, str] = {}
        while batch := cursor.fetchmany(CHECK_BATCH):
            for values in batch:
                (label, expected, found, correct, abstained, unit_dropped, in_carrier,
                 classification, carrier_state, class_detail, check_id, row_id,
                 flagged) = pick(values)
                yield StoredCheck(
                    shared.setdefault(label, label), shared.setdefault(expected, expected),
                    found if found is None else shared.setdefault(found, found), bool(correct),
                    bool(abstained), bool(unit_dropped), bool(in_carrier),
                    shared.setdefault(classification, classification),
                    shared.setdefault(carrier_state, carrier_state),
                    class_detail if class_detail is None
                    else shared.setdefault(class_detail, class_detail),
                    check_id, row_id, bool(flagged))
