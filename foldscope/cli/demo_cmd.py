"""``foldscope demo`` and the bare ``foldscope``: the TUI on a live simulated sweep."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.cli.paths import DEMO_DB
from foldscope.core.errors import StoreError

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
    from foldscope.engine.launch import prepare_sweep
    from foldscope.ui.app import FoldscopeApp

    prepared = prepare_sweep(args.db, demo_definition(args.repeats, args.latency), "demo",
                             fresh=True)
    FoldscopeApp(args.db, sweep_id=prepared.sweep_id, run=True).run()
    return 0


def open_tui(db: str | None = None, sweep_id: str | None = None) -> int:
    """Open the TUI on a database: the named sweep, the only one, or the picker when it holds
    several (or only stored session audits). With no ``db``, the demo database is used and a demo
    sweep started if it is empty.

    An unfinished sweep is resumed here (from its last committed fold) unless another live
    process runs it — then it is watched — or the database is read-only.
    """
    from pathlib import Path

    from foldscope.engine.listing import run_elsewhere
    from foldscope.engine.store import Store, writable
    from foldscope.ui.app import FoldscopeApp

    path = db or DEMO_DB
    if db is not None and not Path(db).exists():
        raise StoreError(f"{db}: no such database")
    if Path(path).is_dir():
        raise StoreError(f"{path}: is a folder, not a database")
    # A database on a read-only file or mount is watched, never run (nor planted with a demo).
    readonly = Path(path).exists() and not writable(path)
    with Store(path, readonly=readonly) as store:
        sweeps = store.sweeps()
        if sweep_id is not None:
            sweep = store.sweep(sweep_id)
            if sweep is None:
                known = ", ".join(s["id"] for s in sweeps[:5]) or "none"
                raise StoreError(f"{path}: no sweep '{sweep_id}' (recent: {known})")
        elif len(sweeps) == 1:
            sweep_id = sweeps[0]["id"]
        sweep = store.sweep(sweep_id) if sweep_id is not None else None
        unfinished = sweep is not None and sweep["status"] != "done"
        elsewhere = run_elsewhere(sweep) if sweep is not None else None
        sessions = not sweeps and bool(store.audits())
    if sessions:  # only stored session audits (foldscope audit --db): the picker lists them
        FoldscopeApp(path).run()
        return 0
    if not sweeps:
        if readonly or db is not None:
            raise StoreError(f"{path}: no sweeps recorded" + (
                " (and the database is read-only)" if readonly else
                f"; start one with `foldscope demo --db {path}` or `foldscope run --db {path}`"))
        return demo(argparse.Namespace(db=path, repeats=2, latency=DEMO_LATENCY_S))
    # An unfinished sweep (e.g. quit mid-way) resumes where its committed folds end.
    FoldscopeApp(path, sweep_id=sweep_id,
                 run=unfinished and not readonly and elsewhere is None).run()
    return 0
