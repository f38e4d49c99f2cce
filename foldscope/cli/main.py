"""The ``foldscope`` command: argument parsing and dispatch to one module per command."""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from foldscope.core.errors import FoldscopeError
from foldscope.core.text import literal

# Each module exposes ``register(subparsers)``, which adds its parser and sets ``handler`` via
# ``set_defaults(handler=...)``; handlers return the process exit code.
COMMAND_MODULES: tuple[str, ...] = (
    "foldscope.cli.run_cmd",
    "foldscope.cli.report_cmd",
    "foldscope.cli.check_cmd",
    "foldscope.cli.demo_cmd",
    "foldscope.cli.scenario_cmd",
    "foldscope.cli.arms_cmd",
    "foldscope.cli.grade_cmd",
    "foldscope.cli.classify_cmd",
    "foldscope.cli.probe_cmd",
    "foldscope.cli.sim_cmd",
    "foldscope.cli.stats_cmd",
    "foldscope.cli.export_cmd",
    "foldscope.cli.verify_cmd",
    "foldscope.cli.plan_cmd",
    "foldscope.cli.audit_cmd",
    "foldscope.cli.inspect_cmd",
    "foldscope.cli.reindex_cmd",
    "foldscope.cli.control_cmd",
)

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line and exit 2."""

    def error(self, message: str) -> NoReturn:  # noqa: D102 - argparse hook
        self.exit(EXIT_USAGE, f"foldscope: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available command registered."""
    parser = _Parser(
        prog="foldscope",
        description="Compaction sweeps: which facts survive when an agent folds its history. "
        "With no command, opens the TUI: on --db (default: the database the TUI opened last, "
        "else db/demo.sqlite, where a demo sweep is started if there is none) and --sweep, or "
        "the sweep picker when the database holds several sweeps and none is named. Every "
        "command's --db has the same default, so `foldscope report` after `make demo` reads "
        "the demo.",
    )
    parser.add_argument("--db", dest="tui_db", metavar="PATH",
                        help="database the TUI opens (default: the database the TUI opened "
                        "last, else db/demo.sqlite)")
    parser.add_argument("--sweep", dest="tui_sweep", metavar="ID",
                        help="sweep the TUI opens (default: the only one, else the picker)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # command not built yet in this checkout
                continue
            raise
        module.register(subparsers)
    return parser


def _no_collection_at_exit() -> None:
    """Have the interpreter's exit skip its last full collections of the cyclic garbage
    collector (once per process).

    At exit CPython collects every object a command left (its modules, classes, functions and
    figures: a few hundred thousand) once or twice more, to free memory the process is about
    to give back: 1.7 % of a cold report's instructions, after it has printed. Frozen at exit
    (``gc.freeze``, after every other exit handler) they are skipped. Objects are still freed
    as their references go; only objects left in reference cycles are not collected, so their
    finalizers do not run at exit (CPython does not promise that they do; what foldscope must
    close, a database or a temporary directory, its owner closes, or ``weakref.finalize``).
    """
    global _EXIT_FROZEN
    if not _EXIT_FROZEN:
        _EXIT_FROZEN = True
        atexit.register(gc.freeze)


_EXIT_FROZEN = False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit code."""
    _no_collection_at_exit()
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    try:
        if handler is None:
            from foldscope.cli.demo_cmd import open_tui

            return open_tui(args.tui_db, args.tui_sweep)
        from foldscope.cli.paths import resolve_db_default

        resolve_db_default(args)
        return int(handler(args) or 0)
    except FoldscopeError as exc:
        print(f"foldscope: error: {literal(str(exc), keep_newlines=False)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("foldscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
