"""The export repository: the whole-database reads an evidence package hashes and releases.

Its records are plain ``{column: value}`` mappings on purpose: ``engine.evidence`` writes them
into the package and digests their JSON (``json.dumps([sweep, rows, checks])``), so their keys
and values are the package's format, not an in-memory type.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from foldscope.engine.store.connection import Repository, column_names, named

EXPORT_BATCH = 1000
"""Records fetched at a time when a whole sweep's checks or folds stream past."""


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
        return named(self.db.conn.execute(
            "SELECT id, scenario, model, arm, repeat, status, valid, "
            "validity_reason, recall, correct, graded, folds_done, catch_up, "
            "parse_failures, length_stops, simulated, prompt_tokens, "
            "completion_tokens, cost_usd, unpriced_calls, "
            "COALESCE((SELECT body FROM blobs WHERE digest = answer_digest), answer) AS answer, "
            "infra_error FROM rows WHERE sweep_id = ? ORDER BY position", [sweep_id]))

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
