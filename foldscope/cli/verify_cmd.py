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
        description="Check every file of an evidence package against its manifest, the package "
        "digest (binding every file, config.json and provenance.lock.json included) against the "
        "manifest and README.txt, and recompute every aggregate, contrast and study figure from "
        "rows.csv and checks.csv. Exit 0 when everything matches; exit 1 naming each file and "
        "figure that does not. Anyone can rewrite every file and hash consistently: to show a "
        "package is the one exported, compare its digest with one published apart (--digest).")
    p.add_argument("package", metavar="DIR", help="the package folder")
    p.add_argument("--digest", metavar="HEX",
                   help="the package digest published with the study (export prints it): "
                        "verify fails unless the files' digest is this one")
    p.set_defaults(handler=verify)


def verify(args: argparse.Namespace) -> int:
    """Handle ``foldscope verify``."""
    from foldscope.core.text import literal
    from foldscope.engine.evidence import verify_package

    # A package is untrusted: file names, manifest keys and CSV cells in the problems are shown
    # through the one literal-text function, never raw.
    result = verify_package(args.package, expected_digest=args.digest)
    if result.problems:
        for problem in result.problems:
            print(literal(f"foldscope: verify: {problem}", keep_newlines=False), file=sys.stderr)
        print(literal(f"foldscope: verify: FAILED: {len(result.problems)} problem(s) in "
                      f"{args.package}", keep_newlines=False), file=sys.stderr)
        return EXIT_MISMATCH
    print(literal(f"verified {args.package}: {result.files} files match the manifest; "
                  f"{result.rows} rows, {result.checks} checks, {result.cells} cells, "
                  f"{result.contrasts} contrasts and {result.studies} study lines recomputed "
                  f"identically; package digest {result.digest}"
                  + (" (as expected)" if args.digest else ""), keep_newlines=False))
    return 0
