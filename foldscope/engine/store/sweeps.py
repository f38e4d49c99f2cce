"""The sweeps repository: a sweep's definition, status and the claim of the runner that holds it."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from foldscope.core.errors import StoreError, SweepClaimed
from foldscope.core.nesting import loads_json
from foldscope.core.row import PlannedRow
from foldscope.core.status import LIVE_SWEEP_STATUSES, SweepStatus
from foldscope.engine.procinfo import RunnerId, claim_alive
from foldscope.engine.store.connection import _ROW_SEQ, Repository, named

LIVE_STATUSES = LIVE_SWEEP_STATUSES
"""Sweep statuses that mean a runner holds the sweep (a paused run still holds it)."""


@dataclass(frozen=True, slots=True)
class NewSweep:
    """A sweep as it is planned (``Store.create_sweep``): its definition, before any row ran."""

    id: str
    name: str
    config_digest: str
    """The definition's digest (``SweepConfig.digest``): a rerun of it resumes this sweep."""
    config: dict[str, Any]
    """The definition as JSON (``SweepConfig.model_dump(mode="json")``)."""
    simulated: bool = False
    """Planned with simulated model ids only."""
    pins: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SweepHeader:
    """One stored sweep as a listing reads it (``Store.sweeps``): no definition."""

    id: str
    created_at: float
    name: str
    status: str
    """As stored (``Store.live_status`` says how a reader should show it)."""
    stop_reason: str | None
    simulated: bool
    """Planned with simulated model ids only."""


@dataclass(frozen=True, slots=True)
class SweepRecord(SweepHeader):
    """One stored sweep with its definition and pins decoded (``Store.sweep``)."""

    config_digest: str
    config: dict[str, Any]
    """The stored definition (``engine.sweep.SweepConfig`` as JSON; read it through
    ``engine.sweep.stored_definition`` or validate it with ``SweepConfig``)."""
    pins: dict[str, Any]
    """The endpoint pins recorded at the run's start, by model id."""
    updated_at: float | None
    runner_pid: int | None
    """The process that claimed the sweep last (None: released)."""
    runner_started: str | None
    """That process's start token (``engine.procinfo``)."""
    runner_heartbeat: float | None
    """When that runner last wrote its status (None: no live record)."""


_HEADER_COLUMNS = ", ".join(f.name for f in dataclasses.fields(SweepHeader))
_STORED_COLUMNS = ", ".join(
    {"config": "config_json", "pins": "pins_json"}.get(f.name, f.name)
    for f in dataclasses.fields(SweepRecord) if f.name != "runner_heartbeat")


class SweepRepository(Repository):
    """The ``sweeps`` table: definitions, statuses, pins and runner claims."""

    def create_sweep(self, sweep: NewSweep, rows: Iterable[PlannedRow]) -> None:
        """Store a sweep and its whole plan in one transaction, before any call is made."""
        with self.db.atomic():
            self.db.execute(
                "INSERT INTO sweeps (id, created_at, name, config_digest, config_json, pins_json, "
                "status, simulated, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                [sweep.id, time.time(), sweep.name, sweep.config_digest,
                 json.dumps(sweep.config, ensure_ascii=False, sort_keys=True),
                 json.dumps(sweep.pins, ensure_ascii=False, sort_keys=True),
                 SweepStatus.PLANNED, int(sweep.simulated), time.time()])
            self.db.conn.executemany(
                "INSERT INTO rows (sweep_id, position, scenario, model, arm, repeat, prompt_digest, "
                "declared_ceilings_json, output_budget, carry_cap, seq) "
                f"VALUES (?,?,?,?,?,?,?,?,?,?,{_ROW_SEQ})",
                [(sweep.id, r.position, r.scenario, r.model, r.arm, r.repeat, r.prompt_digest,
                  json.dumps(r.declared_ceilings), r.output_budget, r.carry_cap) for r in rows])

    def sweep(self, sweep_id: str) -> SweepRecord | None:
        """Return one sweep with its definition and pins decoded, or None."""
        found = named(self.db.conn.execute(f"SELECT {_STORED_COLUMNS} FROM sweeps WHERE id = ?",
                                           [sweep_id]))
        if not found:
            return None
        out = found[0]
        try:
            out["config"] = loads_json(out.pop("config_json"))
            out["pins"] = loads_json(out.pop("pins_json"))
        except ValueError:
            raise StoreError(f"{self.path}: sweep {sweep_id}: its stored definition cannot be "
                             "read (run `foldscope check`)") from None
        if not isinstance(out["config"], dict) or not isinstance(out["pins"], dict):
            raise StoreError(f"{self.path}: sweep {sweep_id}: its stored definition is not a "
                             "table (run `foldscope check`)")
        out["runner_heartbeat"] = self.heartbeat(sweep_id, out["runner_pid"])
        out["simulated"] = bool(out["simulated"])
        return SweepRecord(**out)

    def heartbeat(self, sweep_id: str, pid: int | None) -> float | None:
        """When the sweep's claimed runner last wrote its status (None: no live record)."""
        if not pid:
            return None
        found = self.db.execute("SELECT updated_at FROM runner_status WHERE sweep_id=? AND pid=? "
                                "AND finished_at IS NULL", [sweep_id, pid]).fetchone()
        return float(found[0]) if found and isinstance(found[0], int | float) else None

    def claim_holds(self, sweep: SweepRecord) -> bool:
        """Whether a sweep's recorded runner still holds it: alive here, or beating (its
        heartbeat fresh) where its pid cannot be seen (another pid namespace)."""
        if not sweep.runner_pid:
            return False
        return claim_alive(RunnerId(sweep.runner_pid, sweep.runner_started),
                           sweep.runner_heartbeat, time.time())

    def live_status(self, sweep: SweepRecord) -> str:
        """A sweep's status as a reader should show it: "running" (or "paused") only while its
        runner lives.

        A runner killed outright (kill -9, a crash, a closed pipe) cannot record that it
        stopped; its sweep reads as "interrupted" until it is run again.
        """
        if sweep.status in LIVE_STATUSES and not self.claim_holds(sweep):
            return SweepStatus.INTERRUPTED
        return sweep.status

    def sweeps(self) -> list[SweepHeader]:
        """Every sweep, newest first (without definitions)."""
        return [SweepHeader(**{**r, "simulated": bool(r["simulated"])}) for r in named(
            self.db.conn.execute(f"SELECT {_HEADER_COLUMNS} FROM sweeps "
                                 "ORDER BY created_at DESC, rowid DESC"))]

    def latest_sweep_id(self) -> str | None:
        """The newest sweep's id, or None for an empty database."""
        found = self.db.execute("SELECT id FROM sweeps ORDER BY created_at DESC, rowid DESC "
                                "LIMIT 1").fetchone()
        return found[0] if found else None

    def sweep_by_digest(self, digest: str) -> str | None:
        """The newest sweep planned from an identical definition, so a rerun resumes it."""
        row = self.db.execute(
            "SELECT id FROM sweeps WHERE config_digest = ? ORDER BY created_at DESC LIMIT 1",
            [digest]).fetchone()
        return row[0] if row else None

    def set_sweep_status(self, sweep_id: str, status: str, reason: str | None = None) -> None:
        """Record a sweep's status (planned, running, done, stopped) and why it stopped."""
        self.db.execute("UPDATE sweeps SET status=?, stop_reason=?, updated_at=? WHERE id=?",
                        [status, reason, time.time(), sweep_id])

    def claim(self, sweep_id: str, runner: RunnerId,
              is_alive: Callable[[RunnerId], bool] | None = None) -> None:
        """Record ``runner`` as the sweep's runner, unless a live one already is.

        One ``BEGIN IMMEDIATE`` transaction: of several processes claiming together exactly one
        wins, and the others read its claim.

        Raises:
            SweepClaimed: another live process is running the sweep (two runners would race
                for the same rows).
        """
        with self.immediate():
            row = self.db.execute("SELECT runner_pid, runner_started FROM sweeps WHERE id=?",
                                  [sweep_id]).fetchone()
            holder = RunnerId(row[0], row[1]) if row and row[0] else None
            if holder is not None and holder != runner and (
                    is_alive(holder) if is_alive is not None else claim_alive(
                        holder, self.heartbeat(sweep_id, holder.pid), time.time())):
                raise SweepClaimed(f"{self.path}: sweep {sweep_id} is already being run by "
                                   f"process {holder.pid}; watch it with `foldscope` or wait for "
                                   "it to stop", holder.pid)
            self.db.execute("UPDATE sweeps SET runner_pid=?, runner_started=? WHERE id=?",
                            [runner.pid, runner.started, sweep_id])

    def release(self, sweep_id: str, runner: RunnerId) -> None:
        """Clear this runner's claim on a sweep."""
        self.db.execute("UPDATE sweeps SET runner_pid=NULL, runner_started=NULL WHERE id=? "
                        "AND runner_pid=?", [sweep_id, runner.pid])

    def record_fault(self, sweep_id: str, exc: BaseException) -> None:
        """Best effort, after a database failure: mark the sweep stopped with the reason.

        On a full disk the write itself may fail; then the sweep reads as interrupted once its
        runner has exited, which is also true.
        """
        try:
            self.set_sweep_status(sweep_id, SweepStatus.STOPPED, " ".join(str(exc).split()))
        except sqlite3.Error:
            pass

    def set_pins(self, sweep_id: str, pins: dict[str, Any]) -> None:
        """Record the endpoint pins (quantization, context, prices, parameters) of a sweep."""
        self.db.execute("UPDATE sweeps SET pins_json=? WHERE id=?",
                        [json.dumps(pins, ensure_ascii=False, sort_keys=True), sweep_id])
