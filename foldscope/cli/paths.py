"""Default database locations shared by the commands: one default for every command."""

from __future__ import annotations

import argparse

DEMO_DB = "db/demo.sqlite"
"""The demo's database: where `make demo` and `foldscope demo` keep their sweeps."""

DB_DEFAULT_TEXT = "the database the TUI opened last, else db/demo.sqlite"
"""How ``--help`` names the default database (one wording for every command)."""

DB_HELP = f"database path (default: {DB_DEFAULT_TEXT})"


def default_db() -> str:
    """The database a command uses without ``--db``: the one the TUI opened last (remembered
    as ``last_db`` in ``$XDG_CONFIG_HOME/foldscope/config.toml``) while that file exists, else
    the demo's database. Commands and the TUI share it, so the first command after
    ``make demo`` reads the demo's sweeps."""
    from foldscope.engine.userconfig import last_database

    return last_database() or DEMO_DB


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--db PATH`` defaulting to :func:`default_db` (resolved when the command runs, so
    ``--help`` reads no settings file)."""
    parser.add_argument("--db", metavar="PATH", type=str, default=None, help=DB_HELP)
    parser.set_defaults(resolve_db=True)


def resolve_db_default(args: argparse.Namespace) -> None:
    """Fill an unset ``--db`` of a command that takes the default database."""
    if getattr(args, "resolve_db", False) and getattr(args, "db", None) is None:
        args.db = default_db()
