"""The sessions section of the sweep picker: session audits stored with ``foldscope audit --db``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from foldscope.core.audit import StoredAudit
from foldscope.core.text import literal

SESSION_COLUMNS: tuple[tuple[str, int], ...] = (
    ("audit", 6), ("session", 48), ("format", 12), ("compactions", 11),
    ("lost & needed", 13), ("audited", 16))
"""The sessions table's columns (label and key), each with the widest it grows to."""


def session_cells(a: StoredAudit) -> list[Text]:
    """One stored audit as the table's cells (its file name shown literally, on one line)."""
    if a.redacted:
        name = "(redacted session)"
    else:
        # An inspect log holds one session per sample; other formats are one per file.
        sample = f" · sample {a.session}" if a.format == "inspect" and a.session else ""
        name = literal((a.source or "(unnamed session)") + sample, keep_newlines=False)
    cap = SESSION_COLUMNS[1][1]
    name = name if len(name) <= cap else "…" + name[-(cap - 1):]  # the file name ends the path
    return [Text(str(a.id)), Text(name), Text(literal(a.format, keep_newlines=False)),
            Text(str(a.compactions)), Text(str(a.lost_and_needed)),
            Text(time.strftime("%Y-%m-%d %H:%M", time.localtime(a.created_at)))]


class SessionTable(DataTable):
    """Stored session audits, newest first; the picker dismisses with the highlighted one."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self._audits: list[StoredAudit] = []

    def show(self, audits: Sequence[StoredAudit]) -> None:
        """Fill the table (widths from the contents, up to each column's cap)."""
        self.clear(columns=True)
        self._audits = list(audits)
        rows = [session_cells(a) for a in self._audits]
        for i, (label, cap) in enumerate(SESSION_COLUMNS):
            width = max([len(label), *(cells[i].cell_len for cells in rows)])
            self.add_column(label, key=label, width=min(cap, width))
        for a, cells in zip(self._audits, rows):
            self.add_row(*cells, key=str(a.id))

    @property
    def highlighted(self) -> StoredAudit | None:
        """The stored audit under the cursor, if any."""
        if 0 <= self.cursor_row < len(self._audits):
            return self._audits[self.cursor_row]
        return None
