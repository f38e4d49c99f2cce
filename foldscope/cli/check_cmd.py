"""``foldscope check``: is a database sound? SQLite's integrity check and foldscope's invariants."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.cli.paths import add_db_option
from foldscope.core.text import json_text, literal

EXIT_PROBLEM = 1
"""Exit code when the database has a problem (2 stays for bad input, as everywhere)."""


def register(subparsers: Any) -> None:
    """Add the ``check`` command."""
    p = subparsers.add_parser(
        "check", help="check a database: SQLite integrity and foldscope's invariants",
        description="Reads only (works on read-only and corrupt files). Exit 0 when clean, "
        "1 when a problem is found, 2 on bad input.")
    add_db_option(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=check)


def check(args: argparse.Namespace) -> int:
    """Handle ``foldscope check``."""
    from foldscope.engine.integrity import check_database

    report = check_database(args.db)
    if args.json:
        print(json_text(report.as_json(), indent=2))
    else:
        print(literal(f"foldscope check {report.db}", keep_newlines=False))
        for c in report.checks:
            print(f"{'ok  ' if c.ok else 'FAIL'}  {c.name}"
                  + ("" if c.ok else f": {c.count} found"))
            for example in c.examples:
                print(f"        {literal(example, keep_newlines=False)}")
        problems = sum(not c.ok for c in report.checks)
        print("clean" if report.clean else f"{problems} problem{'s' * (problems != 1)} found")
    return 0 if report.clean else EXIT_PROBLEM
