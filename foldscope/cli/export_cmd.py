"""``foldscope export``: write a sanitised, verifiable evidence package of one or more databases."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.cli.paths import DB_DEFAULT_TEXT, default_db


def register(subparsers: Any) -> None:
    """Add the ``export`` command."""
    from foldscope.engine.options import DEFAULT_ANSWER_PREFIX

    p = subparsers.add_parser(
        "export", help="write a sanitised evidence package (CSVs, aggregates, manifest)",
        description="Write an evidence package of every sweep in the databases: row- and "
        "check-level CSVs, aggregates and contrasts computed from them, the sanitised study "
        "configuration, a provenance lock hashing what is not released, and a manifest with "
        "the sha256 of every file. API keys, private endpoint URLs, local paths and e-mail "
        "addresses are never written. Check a package with `foldscope verify DIR`.")
    p.add_argument("--db", action="append", metavar="PATH",
                   help="a database; repeat for a study sharded over several (rows are named "
                   f"db1-…, db2-… in the order given; default: {DB_DEFAULT_TEXT})")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="package folder (created; must be empty if it exists)")
    p.add_argument("--answer-prefix", type=int, default=DEFAULT_ANSWER_PREFIX, metavar="N",
                   help=f"characters of each recall answer to release "
                   f"(default {DEFAULT_ANSWER_PREFIX}; 0 for none)")
    p.set_defaults(handler=export)


def export(args: argparse.Namespace) -> int:
    """Handle ``foldscope export``."""
    from foldscope.engine.evidence import export_package

    s = export_package(args.db or [default_db()], args.out, answer_prefix=args.answer_prefix)
    print(f"wrote {s.out}: {s.sweeps} sweep(s), {s.rows} rows, {s.checks} checks, "
          f"{s.cells} cells, {s.contrasts} contrasts")
    print(f"package digest {s.digest} (publish it with the study: `foldscope verify DIR "
          "--digest HEX` checks a copy against it)")
    return 0
