"""``foldscope reindex``: recompute fact timelines, answer classes and cross-tabs of a database."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from foldscope.cli.paths import add_db_option
from foldscope.core.errors import StoreError
from foldscope.core.text import literal


def register(subparsers: Any) -> None:
    """Add the ``reindex`` command."""
    p = subparsers.add_parser(
        "reindex", help="recompute fact timelines and answer classes by today's rules",
        description="For every row (of one sweep with --sweep): each fold's fact states, each "
        "fact's course (planted, first carried, lost, returned), and a finished row's checks, "
        "answer classes and recall. One transaction per row; flags set by hand are kept.")
    add_db_option(p)
    p.add_argument("--sweep", metavar="ID", help="only this sweep (default: every sweep)")
    p.set_defaults(handler=run_reindex)


def run_reindex(args: argparse.Namespace) -> int:
    """Handle ``foldscope reindex``."""
    from foldscope.engine.store import Store
    from foldscope.engine.timelines import reindex

    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if tty:
            print(f"\rreindexed {done}/{total} rows", end="", file=sys.stderr, flush=True)
        elif done == total or done % 50 == 0:
            print(f"reindexed {done}/{total} rows", file=sys.stderr)

    from pathlib import Path

    if not Path(args.db).exists():
        raise StoreError(f"{args.db}: no such database")
    with Store(args.db) as store:
        result = reindex(store, args.sweep, progress)
    if tty and result.rows:
        print(file=sys.stderr)
    print(literal(f"reindexed {result.rows} rows ({result.folds} folds, {result.regraded} "
                  f"answers regraded) in {args.db}", keep_newlines=False))
    return 0
