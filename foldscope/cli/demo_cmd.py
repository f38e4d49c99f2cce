"""``foldscope demo`` and the bare ``foldscope``: the TUI on a live simulated sweep."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.cli.paths import DEMO_DB
from foldscope.core.errors import StoreError
from foldscope.engine.launch import prepare_sweep

DEMO_MODELS = ("sim/faithful", "sim/describer", "sim/gister", "sim/garbler")
DEMO_ARMS = ("f", "j", "q", "m", "o")
DEMO_LATENCY_S = 1.2
"""Mean simulated latency per call in the demo, so a person can watch the grid fill."""


def demo_definition(repeats: int = 2, latency_s: float = DEMO_LATENCY_S) -> dict[str, Any]:
    """The demo sweep: kestrel × four simulated temperaments × five arms, with latency."""
    return {
        "sweep": {"name": "demo", "scenario": "kestrel", "arms": list(DEMO_ARMS),
                  "repeats": repeats, "design": "latin", "concurrency": 6, "seed": 7},
        "models": [{"id": mid, "faults": {"latency_s": latency_s}} for mid in DEMO_MODELS],
    }


def register(subparsers: Any) -> None:
    """Add the ``demo`` command."""
    p = subparsers.add_parser("demo", help="open the TUI on a live simulated sweep")
    p.add_argument("--db", default=DEMO_DB, help=f"database path (default {DEMO_DB})")
    p.add_argument("--repeats", type=int, default=2, help="repeats per model × arm (default 2)")
    p.add_argument("--latency", type=float, default=DEMO_LATENCY_S,
                   help=f"mean simulated seconds per call (default {DEMO_LATENCY_S})")
    p.set_defaults(handler=demo)


def demo(args: argparse.Namespace) -> int:
    """Plan a fresh demo sweep and open the TUI running it."""
    from foldscope.ui.app import FoldscopeApp

    prepared = prepare_sweep(args.db, demo_definition(args.repeats, args.latency), "demo",
                             fresh=True)
    FoldscopeApp(args.db, sweep_id=prepared.sweep_id, run=True).run()
    return 0


def open_tui(db: str = DEMO_DB) -> int:
    """Open the TUI on the newest sweep in ``db`` (starting a demo sweep if there is none)."""
    from pathlib import Path

    from foldscope.engine.store import Store, writable
    from foldscope.ui.app import FoldscopeApp

    # A database on a read-only file or mount is watched, never run (nor planted with a demo).
    readonly = Path(db).exists() and not writable(db)
    with Store(db, readonly=readonly) as store:
        latest = store.latest_sweep_id()
        unfinished = latest is not None and store.sweep(latest)["status"] != "done"
    if latest is None:
        if readonly:
            raise StoreError(f"{db}: no sweeps recorded (and the database is read-only)")
        return demo(argparse.Namespace(db=db, repeats=2, latency=DEMO_LATENCY_S))
    # An unfinished sweep (e.g. quit mid-way) resumes where its committed folds end.
    FoldscopeApp(db, sweep_id=latest, run=unfinished and not readonly).run()
    return 0
