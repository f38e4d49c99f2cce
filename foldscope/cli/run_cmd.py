"""``foldscope run``: plan (or resume) a sweep and run it headless or in the TUI."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from foldscope.cli.paths import add_db_option
from foldscope.core.designs import balance_note
from foldscope.core.status import SweepStatus
from foldscope.core.text import literal


def register(subparsers: Any) -> None:
    """Add the ``run`` command."""
    from foldscope.core.designs import DEFAULT_MODE, EXECUTION_MODES

    p = subparsers.add_parser("run", help="run (or resume) a compaction sweep",
                              description="Run a sweep from a TOML file and/or flags. Re-running "
                              "the same definition resumes its sweep.")
    p.add_argument("sweep_file", nargs="?", metavar="SWEEP.toml", help="sweep definition file")
    p.add_argument("--scenario", help="scenario name (or comma-separated names)")
    p.add_argument("--models", help="comma-separated model ids, e.g. sim/faithful,sim/describer")
    p.add_argument("--arms", help="comma-separated arm ids, e.g. j,q,m")
    p.add_argument("--repeats", type=int, help="repeats per model × arm")
    p.add_argument("--design", choices=["latin", "williams"], help="execution order design")
    p.add_argument("--concurrency", type=int, help="rows (and calls) in flight per provider")
    p.add_argument("--mode", choices=list(EXECUTION_MODES),
                   help="execution mode: " + "; ".join(f"{k}: {v}" for k, v in
                                                       EXECUTION_MODES.items())
                   + f" (default {DEFAULT_MODE})")
    p.add_argument("--seed", type=int,
                   help="send a seed with every request (offset per repeat) and record it with "
                   "the sweep; default: no seed is sent")
    add_db_option(p)
    p.add_argument("--headless", action="store_true", help="no TUI; progress on stderr")
    p.add_argument("--json-events", action="store_true",
                   help="with --headless, stream one JSON event per line on stdout")
    p.add_argument("--resume", metavar="SWEEP_ID", help="continue a stored sweep")
    p.add_argument("--retry-failed", action="store_true",
                   help="run rows that failed on infrastructure again, those at their attempt "
                   "limit included")
    p.add_argument("--new", action="store_true",
                   help="plan a new sweep even if this definition was run before; its calls "
                   "are all made again (the response cache is off unless the file sets "
                   "cache = true, which is then said)")
    p.add_argument("--latency-scale", type=float, default=None,
                   help="multiply simulated latency (0 runs simulated models at full speed)")
    p.add_argument("--stop-with-parent", action="store_true",
                   help="with --headless: stop (recording the sweep stopped) when the process "
                   "that started this one exits, i.e. when stdin, a pipe from it, closes or the "
                   "parent pid changes (how the TUI runs a sweep in a child process)")
    p.set_defaults(handler=run)


def definition_from_args(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """Merge the sweep file (if any) with flags; flags win. Returns (data, source name).

    The merge itself is ``engine.launch.definition_from_fields``, which the TUI's form uses too.
    """
    from foldscope.engine.launch import SweepFields, definition_from_fields

    # Commands sharing this parser may lack a flag.
    fields = SweepFields(**{name: getattr(args, name, None) for name in (
        "sweep_file", "scenario", "models", "arms", "repeats", "design", "concurrency", "mode",
        "seed")})
    return definition_from_fields(fields)


def run(args: argparse.Namespace) -> int:
    """Handle ``foldscope run``."""
    from foldscope.engine.launch import check_credentials, check_resumable, prepare_sweep, stored_config

    if args.resume:
        check_resumable(args.db, args.resume)
        sweep_id, resumed = args.resume, True
    else:
        data, source = definition_from_args(args)
        if args.new:
            _fresh_cache(data)
        prepared = prepare_sweep(args.db, data, source, fresh=args.new)
        sweep_id, resumed = prepared.sweep_id, prepared.resumed
    config = stored_config(args.db, sweep_id)
    check_credentials(config)
    note = balance_note(config.sweep.arms, config.sweep.repeats, config.sweep.design)
    if note:
        print(f"foldscope: note: {note}", file=sys.stderr)
    if not args.headless:
        from foldscope.cli.demo_cmd import run_app

        return run_app(args.db, sweep_id, run=True, latency_scale=args.latency_scale,
                       retry_failed=args.retry_failed)
    return run_headless(args.db, sweep_id, resumed=resumed, json_events=args.json_events,
                        latency_scale=args.latency_scale, retry_failed=args.retry_failed,
                        stop_with_parent=args.stop_with_parent)


EXIT_ALL_FAILED = 1
"""Exit code of a sweep in which every row failed (its status is ``failed``)."""

EXIT_KEY_REJECTED = 2
"""Exit code when an endpoint refused a model's API key (the sweep stops, rows left planned)."""


def _fresh_cache(data: dict[str, Any]) -> None:
    """``--new`` asks the models again: the response cache is off for the new sweep, unless the
    definition turns it on itself, which is then said (its replies are replays)."""
    sweep = data.setdefault("sweep", {})
    if not isinstance(sweep, dict):
        return
    if sweep.get("cache") is True:
        print("foldscope: note: --new with cache = true: identical calls are replayed from the "
              "response cache, not asked again", file=sys.stderr)
        return
    sweep["cache"] = False


EXIT_CODES = {"interrupted by SIGINT": 130, "interrupted by SIGTERM": 143}
"""Exit codes of a run a signal stopped (128 + the signal's number, as shells report it)."""


def run_headless(db: str, sweep_id: str, *, resumed: bool, json_events: bool = False,
                 latency_scale: float | None = None, retry_failed: bool = False,
                 stop_with_parent: bool = False) -> int:
    """Run a stored sweep to the end with progress on stderr; return the exit code.

    SIGINT (ctrl+c) and SIGTERM stop it: calls in flight are dropped, committed folds stay,
    the sweep is recorded ``stopped`` (``done`` if every row had finished) and the summary
    line is printed; the exit code is then 130 or 143. With ``stop_with_parent`` the run also
    stops that way when the process that started it goes (``engine.runner_process``).
    """
    import asyncio

    from foldscope.engine.events import Event, SweepStarted
    from foldscope.engine.progress import HeadlessProgress
    from foldscope.engine.runner import SweepRunner

    runner = SweepRunner(db, sweep_id, latency_scale=latency_scale, retry_failed=retry_failed)
    progress = HeadlessProgress(runner.totals, sys.stderr, json_events=json_events)

    def on_event(event: Event) -> None:
        if isinstance(event, SweepStarted):  # claimed: a runner that lost the claim says only why
            print(f"foldscope: {'resuming' if resumed else 'running'} sweep {sweep_id} in {db}",
                  file=sys.stderr)
        progress(event)

    runner.on_event = on_event

    async def run_tied() -> str:
        from foldscope.engine.runner_process import tie_to_parent

        tie_to_parent(asyncio.get_running_loop(), runner.cancel)
        return await runner.run_with_signals()

    try:
        status = asyncio.run(run_tied() if stop_with_parent else runner.run_with_signals())
    finally:
        progress.close()
    t = runner.totals
    why = f" ({runner.cancelled})" if runner.cancelled and status != SweepStatus.DONE else ""
    print(literal(f"foldscope: sweep {sweep_id} {status}{why}: {t.rows_done} rows done, "
                  f"{t.rows_failed} failed, {t.folds} folds this run", keep_newlines=False),
          file=sys.stderr)
    if runner.key_rejected is not None:  # the rows wait, planned, for a key that works
        print(literal(f"foldscope: error: {runner.key_rejected}; fix the key and run again",
                      keep_newlines=False), file=sys.stderr)
        return EXIT_KEY_REJECTED
    if status == SweepStatus.FAILED:
        return EXIT_ALL_FAILED
    return EXIT_CODES.get(runner.cancelled or "", 0) if status != SweepStatus.DONE else 0
