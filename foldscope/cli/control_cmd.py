"""``foldscope pause|resume|cancel SWEEP_ID --db PATH``: ask a running sweep, in any process, to
pause, resume or stop, through its database."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from foldscope.cli.paths import add_db_option
from foldscope.core.text import literal

HELP = {
    "pause": "pause a running sweep: no new calls start; calls in flight finish and commit",
    "resume": "resume a paused sweep",
    "cancel": "stop a running sweep (recorded 'stopped' with the reason; run it again to resume)",
}


def register(subparsers: Any) -> None:
    """Add the ``pause``, ``resume`` and ``cancel`` commands."""
    for name, text in HELP.items():
        p = subparsers.add_parser(name, help=text, description=text[0].upper() + text[1:] + ". "
                                  "The runner, headless or in the TUI, reads the request from the "
                                  "database between calls.")
        p.add_argument("sweep_id", metavar="SWEEP_ID", help="the sweep")
        add_db_option(p)
        p.add_argument("--reason", help="recorded with the request (default: who asked)")
        p.add_argument("--no-wait", action="store_true",
                       help="return once the request is recorded, without waiting for the runner")
        p.set_defaults(handler=control, request=name)


def control(args: argparse.Namespace) -> int:
    """Handle ``pause``, ``resume`` and ``cancel``: exit 0 once obeyed (or recorded, with
    ``--no-wait``), 1 if the runner did not act within the wait, 2 on bad input."""
    from foldscope.engine.control import await_outcome, request_control

    reason = args.reason or f"{args.request} from the command line"
    pid = request_control(args.db, args.sweep_id, args.request, reason)
    if args.no_wait:
        print(f"foldscope: {args.request} requested for sweep {args.sweep_id} (runner pid {pid})",
              file=sys.stderr)
        return 0
    outcome = await_outcome(args.db, args.sweep_id, args.request, pid)
    if not outcome.obeyed:
        print(f"foldscope: {args.request} recorded for sweep {args.sweep_id}, but its runner "
              f"(pid {pid}) has not acted on it yet (status {outcome.status})", file=sys.stderr)
        return 1
    print(literal(f"foldscope: sweep {args.sweep_id} {outcome.status}", keep_newlines=False),
          file=sys.stderr)
    return 0
