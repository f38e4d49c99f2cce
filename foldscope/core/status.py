"""Row and sweep statuses: the one definition of each, as str-valued enums.

``StrEnum`` members are the strings the store has always recorded (``"done"`` is
``RowStatus.DONE``), so stored and printed values are unchanged and a status read back from the
database as a plain ``str`` still compares equal to its member.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class RowStatus(StrEnum):
    """Where one row is in its life."""

    PLANNED = "planned"
    """Not started (or put back to be run again)."""
    RUNNING = "running"
    """Being folded by a runner."""
    DONE = "done"
    """Folded to its end and graded."""
    FAILED = "failed"
    """Ended without a graded answer (an infrastructure fault, a refused request...)."""
    INTERRUPTED = "interrupted"
    """Never stored: how a reader shows a row left ``running`` by a runner no longer alive."""


STORED_ROW_STATUSES: Final[tuple[RowStatus, ...]] = (
    RowStatus.PLANNED, RowStatus.RUNNING, RowStatus.DONE, RowStatus.FAILED)
"""Every row status the store records."""

FINISHED_ROW_STATUSES: Final[tuple[RowStatus, ...]] = (RowStatus.DONE, RowStatus.FAILED)
"""A row in one of these has ended and carries its stored verdict."""

OPEN_ROW_STATUSES: Final[tuple[RowStatus, ...]] = (RowStatus.PLANNED, RowStatus.RUNNING)
"""A row in one of these has not ended yet (it is ``incomplete`` to the validity rule)."""


class SweepStatus(StrEnum):
    """Where one sweep is in its life."""

    PLANNED = "planned"
    """Recorded, never run."""
    RUNNING = "running"
    """A runner is folding its rows."""
    PAUSED = "paused"
    """Its runner holds it but starts no new calls until resumed."""
    DONE = "done"
    """Every row ended."""
    FAILED = "failed"
    """The runner gave up on it (e.g. every row failed)."""
    STOPPED = "stopped"
    """Cancelled, or stopped by a limit or a fault, with the reason; it resumes when run again."""
    INTERRUPTED = "interrupted"
    """Never stored: how a reader shows a sweep left live by a runner no longer alive."""


LIVE_SWEEP_STATUSES: Final[tuple[SweepStatus, ...]] = (SweepStatus.RUNNING, SweepStatus.PAUSED)
"""A sweep recorded in one of these is held by a runner (if that runner still lives)."""

FINISHED_SWEEP_STATUSES: Final[tuple[SweepStatus, ...]] = (SweepStatus.DONE, SweepStatus.FAILED)
"""A sweep in one of these will not run again."""

RESUMABLE_SWEEP_STATUSES: Final[tuple[SweepStatus, ...]] = (
    SweepStatus.STOPPED, SweepStatus.INTERRUPTED, SweepStatus.PLANNED)
"""A sweep shown in one of these can be (re)started."""
