"""The live read path: a sweep's header, cells and progress, re-read only where they changed.

``LiveSweep.poll`` reads the rows whose change sequence moved since its last poll (and the
classes of their checks) and folds them into running cell tallies (``core.tally``). It never
re-reads a finished row that did not change and never loads a scenario, so one poll costs what
changed since the last, whatever the size of the sweep.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from foldscope.core.pace import run_pace
from foldscope.core.status import LIVE_SWEEP_STATUSES as LIVE_STATUSES
from foldscope.core.status import SweepStatus
from foldscope.core.tally import NO_CHECKS, CellTally, Progress, Tallies
from foldscope.engine.activity import RunnerStatus, StoredEvent
from foldscope.engine.events import Retry, RowFailed
from foldscope.engine.listing import runner_pid
from foldscope.engine.pins import ModelPin, PinnedEndpoint, stored_pins
from foldscope.engine.store import Store
from foldscope.engine.sweep import stored_definition


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
    pins: tuple[PinInfo, ...] = ()
    """Each model's recorded pin (empty before the runner recorded them)."""


@dataclass(frozen=True)
class PinInfo:
    """One model's pin as the runner recorded it with the sweep (``Store.set_pins``)."""

    model: str
    provider: str
    pin: str | None
    """The endpoint the model is held to; None: unpinned."""
    endpoint: str | None
    """The pinned endpoint's name as the gateway lists it, when it was found."""
    quantization: str | None
    context_length: int | None
    price_prompt_per_mtok: float | None
    price_completion_per_mtok: float | None
    warnings: tuple[str, ...]


def pin_infos(pins: Mapping[str, ModelPin]) -> tuple[PinInfo, ...]:
    """The stored pins of a sweep (``engine.pins.stored_pins``) as rows of the pins panel, in
    the order they were recorded."""
    out = []
    for model, entry in pins.items():
        endpoint = entry.endpoint or PinnedEndpoint()
        out.append(PinInfo(
            model=model, provider=entry.provider, pin=entry.pin, endpoint=endpoint.shown_name,
            quantization=endpoint.quantization, context_length=endpoint.context_length,
            price_prompt_per_mtok=endpoint.price_prompt_per_mtok,
            price_completion_per_mtok=endpoint.price_completion_per_mtok,
            warnings=entry.warnings))
    return tuple(out)


@dataclass(frozen=True)
class RunState:
    """The run's numbers for the header: status, time, pace, spend, retries, invalid rows."""

    status: str
    elapsed_s: float | None
    """Time since the last run started (to its end, once it ended); None if never run."""
    eta_s: float | None
    """Time left at this run's pace, while it runs (None: unknown, or not running)."""
    folds_per_s: float | None
    spend_usd: float
    unpriced_calls: int
    """Calls not priced (the spend is then unknown)."""
    call_retries: int
    row_retries: int
    invalid_rows: int
    """Finished rows that may not enter an aggregate (failed, incomplete, ...)."""
    runner_pid: int | None


@dataclass(frozen=True)
class EndpointLine:
    """One provider endpoint, for the line under the grid: calls in flight against the adaptive
    limit, and the 429s and errors its models met in the last minute."""

    endpoint: str
    models: tuple[str, ...]
    in_flight: int
    limit: int
    ceiling: int
    rate_limited_1m: int
    errors_1m: int


WINDOW_S = 60.0
"""The window of the endpoint lines' 429 and error counts."""


@dataclass(frozen=True)
class LiveView:
    """One poll's result: the header, every cell's tally, progress, and how much changed."""

    header: SweepHeader
    cells: tuple[CellTally, ...]
    progress: Progress
    changed_rows: int
    run: RunState | None = None
    endpoints: tuple[EndpointLine, ...] = ()
    new_events: tuple[StoredEvent, ...] = ()
    """Events logged since the last poll (all kept ones on the first), oldest first."""


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
        self.event_id = 0
        """The newest event log entry read so far."""
        self._faults: deque[tuple[float, str | None, bool]] = deque()
        """Recent retries and row failures: (time, model, whether a 429)."""

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
            events = store.events(self.sweep_id, since=self.event_id)
            runner = store.runner_status(self.sweep_id)
        for row in rows:
            # A changed row's checks were read with it: none there means it has none now.
            self._tallies.update(row, classes.get(row.id, NO_CHECKS), finals.get(row.id))
            if self.seq is None or row.seq > self.seq:
                self.seq = row.seq
        if self.seq is None:
            self.seq = 0
        definition = stored_definition(sweep.config)
        pins = stored_pins(sweep.pins)
        header = SweepHeader(
            id=self.sweep_id, name=sweep.name, status=status,
            stop_reason=sweep.stop_reason, simulated=sweep.simulated,
            scenarios=definition.scenarios, arms=definition.arms, models=definition.models,
            repeats=definition.section.repeats, design=definition.section.design,
            mode=definition.mode,
            warnings=tuple(f"{model}: {w}" for model, entry in pins.items() for w in entry.warnings),
            runner_pid=runner_pid(sweep),
            pins=pin_infos(pins))
        cells = tuple(self._tallies.cells())
        progress = self._tallies.progress()
        now = time.time()
        endpoints = self._endpoint_lines(events, runner, status, now)
        return LiveView(header, cells, progress, len(rows),
                        run_state(status, header.runner_pid, cells, progress, runner, now),
                        endpoints, tuple(events))

    def _endpoint_lines(self, events: list[StoredEvent], runner: RunnerStatus | None,
                        status: str, now: float) -> tuple[EndpointLine, ...]:
        """Fold new events into the one-minute window and count it per endpoint."""
        if events:
            self.event_id = events[-1].id
        for e in events:
            if isinstance(e.event, Retry | RowFailed):
                self._faults.append((e.t, e.model, isinstance(e.event, Retry)
                                     and e.event.fault == "rate_limited"))
        while self._faults and self._faults[0][0] < now - WINDOW_S:
            self._faults.popleft()
        if runner is None:
            return ()
        live = status in LIVE_STATUSES
        out = []
        for ep in runner.endpoints:
            mine = [f for f in self._faults if f[1] in ep.models]
            limited = sum(1 for f in mine if f[2])
            out.append(EndpointLine(ep.endpoint, ep.models, ep.in_flight if live else 0,
                                    ep.limit, ep.ceiling, limited, len(mine) - limited))
        return tuple(out)


def run_state(status: str, pid: int | None, cells: tuple[CellTally, ...], progress: Progress,
              runner: RunnerStatus | None, now: float) -> RunState:
    """The header's numbers from the cells' sums, the progress and the runner's own record.

    Pace counts this run's own work only (rows an earlier run finished are not its speed), and
    the ETA is given only while the sweep runs.
    """
    elapsed = eta = rate = None
    if runner is not None:
        live = status in LIVE_STATUSES
        end = runner.finished_at or (now if live else runner.updated_at)
        pace = run_pace(end - runner.started_at, progress.folds - runner.folds_at_start,
                        progress.finished - runner.finished_at_start,
                        progress.total - progress.finished)
        elapsed, rate = pace.elapsed_s, pace.folds_per_s
        eta = pace.eta_s if status == SweepStatus.RUNNING else None
    finished = sum(c.done_rows + c.failed_rows for c in cells)
    return RunState(
        status=status, elapsed_s=elapsed, eta_s=eta, folds_per_s=rate,
        spend_usd=sum(c.cost_usd for c in cells),
        unpriced_calls=sum(c.unpriced_calls for c in cells),
        call_retries=sum(c.call_retries for c in cells),
        row_retries=sum(c.row_retries for c in cells),
        invalid_rows=max(0, finished - sum(c.valid_rows for c in cells)),
        runner_pid=pid if status in LIVE_STATUSES else None)

