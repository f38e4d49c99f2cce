"""``foldscope verify``: recompute every figure of an evidence package and check its hashes."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXIT_MISMATCH = 1


def register(subparsers: Any) -> None:
    """Add the ``verify`` command."""
    p = subparsers.add_parser(
        "verify", help="verify an evidence package (hashes and every figure)",
        description="Check every file of an evidence package against its manifest and "
        "recompute every aggregate and contrast from rows.csv and checks.csv. Exit 0 when "
        "everything matches; exit 1 naming each file and figure that does not.")
    p.add_argument("package", metavar="DIR", help="the package folder")
    p.set_defaults(handler=verify)


def verify(args: argparse.Namespace) -> int:
    """Handle ``foldscope verify``."""
    from foldscope.engine.evidence import verify_package

    result = verify_package(args.package)
    if result.problems:
        for problem in result.problems:
            print(f"foldscope: verify: {problem}", file=sys.stderr)
        print(f"foldscope: verify: FAILED: {len(result.problems)} problem(s) in {args.package}",
              file=sys.stderr)
        return EXIT_MISMATCH
    print(f"verified {args.package}: {result.files} files match the manifest; {result.rows} rows, "
          f"{result.checks} checks, {result.cells} cells and {result.contrasts} contrasts "
          "recomputed identically")
    return 0
