"""The export repository: the whole-database reads an evidence package hashes and releases.

Its records are plain ``{column: value}`` mappings on purpose: ``engine.evidence`` writes them
into the package and digests their JSON (``json.dumps([sweep, rows, checks])``), so their keys
and values are the package's format, not an in-memory type.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from foldscope.engine.store.connection import Repository, column_names, named

EXPORT_BATCH = 1000
"""Records fetched at a time when a whole sweep's checks or folds stream past."""


_EXPORT_ROWS = (
    "SELECT id, scenario, model, arm, repeat, status, valid, "
    "validity_reason, recall, correct, graded, folds_done, catch_up, "
    "parse_failures, length_stops, simulated, prompt_tokens, "
    "completion_tokens, cost_usd, unpriced_calls, "
    "COALESCE((SELECT body FROM blobs WHERE digest = answer_digest), answer) AS answer, "
    "infra_error FROM rows WHERE sweep_id = ? ORDER BY position")
"""A sweep's rows as the package releases and digests them."""


class ExportRepository(Repository):
    """Reads of ``sweeps``, ``rows``, ``checks`` and ``folds`` in the export's shapes."""

    def _stream(self, sql: str, params: list[Any]) -> Iterator[dict[str, Any]]:
        """A query's records one at a time (a whole sweep's checks or folds are not held)."""
        cursor = self.db.conn.execute(sql, params)
        names = column_names(cursor)
        while batch := cursor.fetchmany(EXPORT_BATCH):
            for values in batch:
                yield dict(zip(names, values))

    def export_sweeps(self) -> list[dict[str, Any]]:
        """Every sweep with its raw configuration and pins (as stored), oldest first."""
        return named(self.db.conn.execute(
            "SELECT id, name, config_json, pins_json, status, simulated "
            "FROM sweeps ORDER BY created_at, rowid"))

    def export_rows(self, sweep_id: str) -> list[dict[str, Any]]:
        """Every row of a sweep in execution order, with its answer and validity verdict."""
        return named(self.db.conn.execute(_EXPORT_ROWS, [sweep_id]))

    def export_row_batches(self, sweep_id: str, size: int | None = None
                           ) -> Iterator[list[dict[str, Any]]]:
        """``export_rows``, ``size`` rows at a time (``EXPORT_BATCH`` unless given), read as
        iterated (a row's answer is read with it: a sweep's answers are never held at once)."""
        size = size or EXPORT_BATCH
        cursor = self.db.conn.execute(_EXPORT_ROWS, [sweep_id])
        names = [d[0] for d in cursor.description]
        while batch := cursor.fetchmany(size):
            yield [dict(zip(names, values)) for values in batch]

    def export_final_folds_of(self, row_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """``export_final_folds`` of these rows only (one batch of a streamed sweep)."""
        out: dict[int, dict[str, Any]] = {}
        for start in range(0, len(row_ids), EXPORT_BATCH):
            ids = list(row_ids[start:start + EXPORT_BATCH])
            out.update((r["row_id"], r) for r in named(self.db.conn.execute(
                "SELECT f.row_id, f.headings_carried, f.fill_fraction, f.carrier_chars "
                f"FROM folds f WHERE f.row_id IN ({', '.join('?' * len(ids))}) "
                "AND f.fold_index = (SELECT MAX(g.fold_index) FROM folds g "
                "WHERE g.row_id = f.row_id)", ids)))
        return out

    def export_checks(self, sweep_id: str) -> Iterator[dict[str, Any]]:
        """Every check of a sweep's rows, in row and check order, read as iterated."""
        return self._stream(
            "SELECT c.row_id, c.label, c.correct, c.abstained, c.unit_dropped, "
            "c.classification, c.in_carrier, c.flagged FROM checks c "
            "JOIN rows r ON r.id = c.row_id WHERE r.sweep_id = ? "
            "ORDER BY r.position, c.id", [sweep_id])

    def export_final_folds(self, sweep_id: str) -> dict[int, dict[str, Any]]:
        """Each row's last committed fold's measures (headings carried, fill fraction, carried
        characters), by row id: the carrier the recall turn read."""
        return {r["row_id"]: r for r in named(self.db.conn.execute(
            "SELECT f.row_id, f.headings_carried, f.fill_fraction, f.carrier_chars "
            "FROM folds f JOIN rows r ON r.id = f.row_id WHERE r.sweep_id = ? "
            "AND f.fold_index = (SELECT MAX(g.fold_index) FROM folds g "
            "WHERE g.row_id = f.row_id)", [sweep_id]))}

    def export_carriers(self, sweep_id: str) -> Iterator[dict[str, Any]]:
        """Every fold's reply and carrier of a sweep (hashed into the lock, never released),
        read as iterated."""
        return self._stream(
            "SELECT f.row_id, f.fold_index, "
            "COALESCE((SELECT body FROM blobs WHERE digest = f.reply_digest), f.reply) AS reply, "
            "f.carrier FROM folds f JOIN rows r ON r.id = f.row_id WHERE r.sweep_id = ? "
            "ORDER BY f.row_id, f.fold_index", [sweep_id])
