"""``foldscope demo`` and the bare ``foldscope``: the TUI on a live simulated sweep."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from foldscope.cli.paths import DEMO_DB, default_db
from foldscope.core.errors import FoldscopeError, StoreError
from foldscope.core.status import FINISHED_SWEEP_STATUSES, SweepStatus

DEMO_MODELS = ("sim/faithful", "sim/describer", "sim/gister", "sim/garbler")
DEMO_ARMS = ("f", "j", "q", "m", "o")
DEMO_LATENCY_S = 1.2
"""Mean simulated latency per call in the demo, so a person can watch the grid fill."""
DEMO_REPEATS = len(DEMO_ARMS)
"""One repeat per arm: the Latin square's five sequences each run once, so every arm leads
(and takes every execution position) equally often — a balanced design, as the report checks."""
DEMO_CONCURRENCY = 10


def demo_definition(repeats: int = DEMO_REPEATS,
                    latency_s: float = DEMO_LATENCY_S) -> dict[str, Any]:
    """The demo sweep: kestrel × four simulated temperaments × five arms, with latency."""
    return {
        "sweep": {"name": "demo", "scenario": "kestrel", "arms": list(DEMO_ARMS),
                  "repeats": repeats, "design": "latin", "concurrency": DEMO_CONCURRENCY,
                  "seed": 7},
        "models": [{"id": mid, "faults": {"latency_s": latency_s}} for mid in DEMO_MODELS],
    }


def register(subparsers: Any) -> None:
    """Add the ``demo`` command."""
    p = subparsers.add_parser(
        "demo", help="open the TUI on a live simulated sweep (the unfinished demo if there is one)",
        description="Open the TUI on the demo sweep: the newest demo of the same definition "
        "while it is unfinished (it resumes where its committed folds end), else a fresh one "
        "(a finished demo stays in the database; `s` picks it).")
    p.add_argument("--db", default=DEMO_DB, help=f"database path (default {DEMO_DB})")
    p.add_argument("--repeats", type=int, default=DEMO_REPEATS,
                   help=f"repeats per model × arm (default {DEMO_REPEATS}: one per arm, so the "
                   "Latin square is balanced)")
    p.add_argument("--latency", type=float, default=DEMO_LATENCY_S,
                   help=f"mean simulated seconds per call (default {DEMO_LATENCY_S})")
    p.set_defaults(handler=demo)


def demo(args: argparse.Namespace) -> int:
    """Open the TUI running the demo: the newest unfinished demo sweep of this definition
    (resumed), else a freshly planned one."""
    from foldscope.engine.launch import prepare_sweep

    prepared = prepare_sweep(args.db, demo_definition(args.repeats, args.latency), "demo",
                             fresh_if_finished=True)
    return run_app(args.db, prepared.sweep_id, run=True)


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

    path = db or default_db()
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
                known = ", ".join(s.id for s in sweeps[:5]) or "none"
                raise StoreError(f"{path}: no sweep '{sweep_id}' (recent: {known})")
        elif len(sweeps) == 1:
            sweep_id = sweeps[0].id
        sweep = store.sweep(sweep_id) if sweep_id is not None else None
        unfinished = sweep is not None and sweep.status != SweepStatus.DONE
        elsewhere = run_elsewhere(sweep) if sweep is not None else None
        sessions = not sweeps and bool(store.audits())
    if sessions:  # only stored session audits (foldscope audit --db): the picker lists them
        return run_app(path, None)
    if not sweeps:
        if readonly or db is not None or path != DEMO_DB:
            raise StoreError(f"{path}: no sweeps recorded" + (
                " (and the database is read-only)" if readonly else
                f"; start one with `foldscope demo --db {path}` or `foldscope run --db {path}`"))
        return demo(argparse.Namespace(db=path, repeats=2, latency=DEMO_LATENCY_S))
    # An unfinished sweep (e.g. quit mid-way) resumes where its committed folds end.
    return run_app(path, sweep_id, run=unfinished and not readonly and elsewhere is None)


def run_app(db: str, sweep_id: str | None, *, run: bool = False, **options: Any) -> int:
    """Run the TUI on a database (``options`` go to the app); once it quits, say how to resume
    the sweep it showed if that is left unfinished (on stderr, one line)."""
    from foldscope.ui.app import FoldscopeApp

    app = FoldscopeApp(db, sweep_id=sweep_id, run=run, **options)
    app.run()
    hint = resume_hint(db, app.sweep_id)
    if hint is not None:
        print(hint, file=sys.stderr)
    return 0


def resume_hint(db: str, sweep_id: str | None) -> str | None:
    """``sweep ID stopped; resume with: foldscope --db PATH --sweep ID`` for a sweep left
    unfinished (stopped, interrupted, planned), else None (done, failed, gone, run elsewhere)."""
    import shlex

    from foldscope.engine.listing import run_elsewhere
    from foldscope.engine.store import Store

    if sweep_id is None:
        return None
    try:
        with Store(db, readonly=True) as store:
            sweep = store.sweep(sweep_id)
            if sweep is None or sweep.status in FINISHED_SWEEP_STATUSES:
                return None
            status = store.live_status(sweep)
            if run_elsewhere(sweep) is not None:
                return None  # another process runs it: nothing to resume
    except FoldscopeError:
        return None
    return (f"sweep {sweep_id} {status}; resume with: foldscope --db {shlex.quote(db)} "
            f"--sweep {shlex.quote(sweep_id)}")
