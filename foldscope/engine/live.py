"""The live read path: a sweep's header, cells and progress, re-read only where they changed.

``LiveSweep.poll`` reads the rows whose change sequence moved since its last poll (and the
classes of their checks) and folds them into running cell tallies (``core.tally``). It never
re-reads a finished row that did not change and never loads a scenario, so one poll costs what
changed since the last, whatever the size of the sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from foldscope.core.tally import NO_CHECKS, CellTally, Progress, Tallies
from foldscope.engine.listing import runner_pid
from foldscope.engine.store import Store
from foldscope.engine.sweep import stored_mode, stored_scenarios


@dataclass(frozen=True)
class SweepHeader:
    """What a live view shows about a sweep besides its cells."""

    id: str
    name: str
    status: str
    """As a reader should show it (``interrupted`` when its runner died)."""
    stop_reason: str | None
    simulated: bool
    scenarios: tuple[str, ...]
    arms: tuple[str, ...]
    models: tuple[str, ...]
    repeats: int
    design: str
    mode: str
    warnings: tuple[str, ...]
    """Pin and endpoint warnings, each ``model: warning``."""
    runner_pid: int | None = None
    """The live process running the sweep, if any (``engine.listing.runner_pid``)."""


@dataclass(frozen=True)
class LiveView:
    """One poll's result: the header, every cell's tally, progress, and how much changed."""

    header: SweepHeader
    cells: tuple[CellTally, ...]
    progress: Progress
    changed_rows: int


class LiveSweep:
    """Follow one sweep (the newest, if none is named) by polling its database.

    Not thread-safe: polls must not overlap (the TUI skips a tick while one runs). Each poll
    opens its own read-only connection, so successive polls may run in different threads.
    """

    def __init__(self, db_path: str | Path, sweep_id: str | None = None) -> None:
        self.db_path = Path(db_path)
        self.sweep_id = sweep_id
        self.seq: int | None = None
        """The highest change sequence read so far (None before the first poll)."""
        self._tallies = Tallies()

    def poll(self) -> LiveView | None:
        """Read what changed since the last poll; None when there is no sweep to show."""
        with Store(self.db_path, readonly=True) as store:
            if self.sweep_id is None:
                self.sweep_id = store.latest_sweep_id()
                if self.sweep_id is None:
                    return None
            sweep = store.sweep(self.sweep_id)
            if sweep is None:
                return None
            status = store.live_status(sweep)
            rows, classes, finals = store.changes(self.sweep_id, self.seq)
        for row in rows:
            # A changed row's checks were read with it: none there means it has none now.
            self._tallies.update(row, classes.get(row.id, NO_CHECKS), finals.get(row.id))
            if self.seq is None or row.seq > self.seq:
                self.seq = row.seq
        if self.seq is None:
            self.seq = 0
        config = sweep["config"]
        s = config["sweep"]
        header = SweepHeader(
            id=self.sweep_id, name=sweep["name"], status=status,
            stop_reason=sweep["stop_reason"], simulated=bool(sweep["simulated"]),
            scenarios=tuple(stored_scenarios(config)), arms=tuple(s["arms"]),
            models=tuple(m["id"] for m in config["models"]), repeats=s["repeats"],
            design=s["design"], mode=stored_mode(config),
            warnings=tuple(f"{model}: {w}" for model, entry in sweep["pins"].items()
                           for w in entry.get("warnings", [])),
            runner_pid=runner_pid(sweep))
        return LiveView(header, tuple(self._tallies.cells()), self._tallies.progress(), len(rows))

