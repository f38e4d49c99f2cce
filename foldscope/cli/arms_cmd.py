"""``foldscope arms``: print the arm catalog."""

from __future__ import annotations

import argparse
from typing import Any

from foldscope.core.text import json_text


def register(subparsers: Any) -> None:
    """Add the ``arms`` command."""
    p = subparsers.add_parser(
        "arms", help="list the carrier arms and their ceilings",
        description="The carrier arms as the study defines them: representation, every field a "
        "schema declares (and how many are carried), declared ceilings, output budget, carry cap "
        "and the system prompt's digest.")
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")
    p.set_defaults(handler=arms)


def arms(args: argparse.Namespace) -> int:
    """Handle ``foldscope arms``."""
    from foldscope.core.arms import ARMS

    if args.json:
        print(json_text([a.describe() for a in ARMS.values()], indent=2))
        return 0
    print(f"{'arm':<4}{'representation':<16}{'fields':>7}{'carried':>8}{'ceiling':>9}{'budget':>8}"
          f"{'cap':>6}  {'prompt':<17}title")
    for a in ARMS.values():
        schema = a.representation == "schema"
        fields = len(a.fields) if schema else "—"  # every field the schema declares
        carried = len(a.carried_fields) if schema else "—"
        per = a.declared_ceilings
        if per and len(set(per.values())) == 1 and len(per) > 1:
            ceiling = f"{len(per)}×{next(iter(per.values()))}"
        else:
            ceiling = str(a.declared_ceiling) if a.declared_ceiling else "—"
        rep = a.representation + (" (headed)" if a.headed else "")
        print(f"{a.id:<4}{rep:<16}{fields!s:>7}{carried!s:>8}{ceiling:>9}{a.output_budget:>8}"
              f"{a.carry_cap:>6}  {a.prompt_digest:<17}{a.title}")
    return 0
