"""``foldscope inspect ROW_ID``: one row's fact timeline, headless (what the inspector shows)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from foldscope.cli.paths import add_db_option
from foldscope.core.errors import StoreError
from foldscope.core.text import json_text, literal


def register(subparsers: Any) -> None:
    """Add the ``inspect`` command."""
    p = subparsers.add_parser(
        "inspect", help="one row's fact timeline: each fact's state per fold, where it was lost",
        description="Folds are numbered from 1, as on screen. States: not_yet (its chunk not "
        "folded yet), present, mutated (with the altered text), missing.")
    p.add_argument("row_id", metavar="ROW_ID", help="the row's id (the rows table and the "
                   "inspector show it), or an export's id such as db1-48 (with --db naming "
                   "that database)")
    add_db_option(p)
    p.add_argument("--fold", type=int, metavar="K",
                   help="show the timeline as it stood after fold K (from 1)")
    p.add_argument("--json", action="store_true", help="print the timeline as JSON")
    p.set_defaults(handler=inspect)


def parse_row_id(text: str) -> int:
    """A row id as the screens show it (``48``) or as an export names it (``db1-48``: row 48
    of the first database given to ``export``; ``--db`` says which database that is).

    Raises:
        StoreError: neither form.
    """
    match = re.fullmatch(r"\s*(?:db\d+-)?(\d+)\s*", text)
    if match is None:
        raise StoreError(f"ROW_ID must be a row id like 48, or an export's id like db1-48 "
                         f"(got {text!r})")
    return int(match.group(1))


def inspect(args: argparse.Namespace) -> int:
    """Handle ``foldscope inspect``."""
    from foldscope.core.forensics import MUTATED, STATE_MARKS, timeline_document
    from foldscope.engine.store import Store
    from foldscope.engine.timelines import read_row_timeline

    row_id = parse_row_id(args.row_id)
    with Store(args.db, readonly=True) as store:
        found = read_row_timeline(store, row_id)
    folds = len(found.timeline.folds)
    upto = None
    if args.fold is not None:
        if not 1 <= args.fold <= folds:
            raise StoreError(f"--fold {args.fold}: row {row_id} has "
                             + (f"folds 1 to {folds}" if folds else "no folds yet"))
        upto = args.fold - 1
    doc: dict[str, Any] = timeline_document(found.timeline, upto)
    row = found.row
    if args.json:
        print(json_text({"row": row.id, "model": row.model, "arm": row.arm,
                         "scenario": row.scenario, "repeat": row.repeat, "status": row.status,
                         **doc}, indent=2))
        return 0
    shown = doc["folds"]
    print(literal(f"row {row.id} · {row.model} × arm {row.arm} · {row.scenario} · repeat "
                  f"{row.repeat} · {row.status} · {folds} folds", keep_newlines=False))
    print("states: · not yet  ● present  ◐ mutated  ○ missing   ★ graded")
    header = "".join(str(f["fold"] % 10) for f in shown)
    print(f"  {header:<{max(len(shown), 5)}}  lost at  label = value")
    for i, fact in enumerate(doc["facts"]):
        strip = "".join(STATE_MARKS[f["facts"][i]["state"]] for f in shown)
        lost = "—" if fact["lost_fold"] is None else str(fact["lost_fold"])
        if fact["returned"]:
            lost += " ↺"
        line = (f"{'★' if fact['graded'] else ' '} {strip:<{max(len(shown), 5)}}  {lost:<7}  "
                f"{fact['label']} = {fact['value']}")
        if fact["final_state"] == MUTATED:
            line += f"  → {fact['altered']} ({fact['rule']})"
        print(literal(line, keep_newlines=False))
    return 0
