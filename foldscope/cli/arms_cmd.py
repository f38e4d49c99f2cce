"""``foldscope arms``: print the arm catalog."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.core.arms import ARMS
from foldscope.core.text import json_text


def register(subparsers: Any) -> None:
    """Add the ``arms`` command."""
    p = subparsers.add_parser("arms", help="list the carrier arms and their ceilings")
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")
    p.set_defaults(handler=arms)


def arms(args: argparse.Namespace) -> int:
    """Handle ``foldscope arms``."""
    if args.json:
        print(json_text([a.describe() for a in ARMS.values()], indent=2))
        return 0
    print(f"{'arm':<4}{'representation':<16}{'fields':>7}{'ceiling':>9}{'budget':>8}{'cap':>6}  "
          f"{'prompt':<17}title")
    for a in ARMS.values():
        fields = len(a.carried_fields) if a.representation == "schema" else "—"
        per = a.declared_ceilings
        if per and len(set(per.values())) == 1 and len(per) > 1:
            ceiling = f"{len(per)}×{next(iter(per.values()))}"
        else:
            ceiling = str(a.declared_ceiling) if a.declared_ceiling else "—"
        rep = a.representation + (" (headed)" if a.headed else "")
        print(f"{a.id:<4}{rep:<16}{fields!s:>7}{ceiling:>9}{a.output_budget:>8}{a.carry_cap:>6}  "
              f"{a.prompt_digest:<17}{a.title}")
    return 0
