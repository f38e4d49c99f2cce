"""``foldscope audit``: what each compaction in a real agent session dropped, and whether the agent
needed it afterwards: the audit screen of the TUI when stdout is a terminal, else a plain-text
report (or JSON); optionally stored in a database."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from foldscope.core.text import json_text, literal


def register(subparsers: Any) -> None:
    """Add the ``audit`` command."""
    from foldscope.engine.options import KINDS_ENV
    from foldscope.engine.options import SESSION_FORMATS as FORMATS

    p = subparsers.add_parser(
        "audit", help="audit a real agent session: what each compaction dropped, and what the "
        "agent needed again afterwards",
        description="Read an agent session locally (nothing is sent anywhere), find every "
        "compaction, and report the identifiers of the history it replaced as present, mutated "
        "or missing in the new summary; the lost values the session used again; and the values "
        "of lost kinds that first appeared afterwards (likely re-invented).")
    p.add_argument("path", metavar="PATH", help="the session file")
    p.add_argument("--format", choices=FORMATS, default="auto",
                   help="session format (default: auto, told apart by content)")
    p.add_argument("--json", action="store_true", help="print the audit as JSON")
    p.add_argument("--plain", action="store_true",
                   help="print the plain-text report even on a terminal (it is printed whenever "
                   "stdout is not a terminal; on one, without --json, the TUI opens)")
    p.add_argument("--db", metavar="PATH", help="also store the audit in this database")
    p.add_argument("--facts", metavar="FILE",
                   help="audit these named facts ([[facts]] label/value tables) instead of the "
                   "identifiers the kind rules find")
    p.add_argument("--kinds", metavar="FILE",
                   help=f"extra identifier-kind rules (also read from ${KINDS_ENV})")
    p.add_argument("--redact", action="store_true",
                   help="show (and store) identifier kinds and hashes instead of values")
    p.set_defaults(handler=audit)


def audit(args: argparse.Namespace) -> int:
    """Handle ``foldscope audit``."""
    from foldscope.core.audit import AuditOptions, audit_json, audit_session
    from foldscope.engine.audit_readers import read_facts, read_sessions
    from foldscope.engine.kinds_file import identifier_rules
    from foldscope.engine.rulefiles import load_signatures
    from foldscope.engine.store import Store

    rules = identifier_rules(args.kinds)
    facts = read_facts(args.facts, rules) if args.facts else None
    sessions = read_sessions(args.path, args.format)
    options = AuditOptions(rules=rules, facts=facts, signatures=load_signatures())
    docs = [audit_json(s, audit_session(s, options), redacted=args.redact, source=args.path)
            for s in sessions]
    if args.db:
        store = Store(args.db)
        try:
            ids = [store.add_audit(doc) for doc in docs]
        finally:
            store.close()
        for doc, audit_id in zip(docs, ids, strict=True):
            doc["stored_as"] = audit_id
    if args.json:
        out: dict[str, Any] = docs[0] if len(docs) == 1 else {
            "format": "inspect", "sessions": docs,
            "compactions": [dict(c, session=d.get("session")) for d in docs for c in d["compactions"]]}
        print(json_text(out, indent=2))
        return 0
    if docs and not args.plain and sys.stdout.isatty():
        return open_tui(docs, args.db)
    if not docs:
        print(f"{_shown(args.path)}: no samples in this log")
    for doc in docs:
        print("\n".join(report_lines(doc, args.path)))
    return 0


def open_tui(docs: list[dict[str, Any]], db: str | None) -> int:
    """Open the audited sessions in the TUI's audit screen (``s`` lists the database's sweeps
    and stored sessions when ``--db`` was given)."""
    from foldscope.core.audit_view import audit_view
    from foldscope.ui.app import FoldscopeApp

    FoldscopeApp(db, audits=[audit_view(doc) for doc in docs]).run()
    return 0


def _shown(text: str) -> str:
    """Session text on one report line, shown literally (core.text.literal)."""
    return literal(text, keep_newlines=False)


def _where(doc: dict[str, Any]) -> str:
    return "message" if doc["format"] == "inspect" else "line"


def _tokens(c: dict[str, Any]) -> str:
    before, after = c["tokens_before"], c["tokens_after"]
    if before is None and after is None:
        return "tokens not recorded"
    show = (lambda n: "?" if n is None else f"{n:,}")
    return f"{show(before)} → {show(after)} tokens"


def report_lines(doc: dict[str, Any], path: str) -> list[str]:
    """The plain-text report of one audited session (every value shown literally)."""
    where = _where(doc)
    name = (f" · sample {_shown(doc['session'])}" if doc.get("session") and doc["format"] == "inspect"
            else "")
    compactions = doc["compactions"]
    shown = "(redacted session)" if doc.get("redacted") else _shown(path)
    head = f"{shown} ({doc['format']}{name}): {len(compactions)} compaction(s)"
    lines = [head]
    if doc["skipped_lines"]:
        at = ", ".join(str(n) for n in doc["skipped_at"])
        lines.append(f"  {doc['skipped_lines']} unreadable or unknown line(s) skipped (lines {at}"
                     f"{', ...' if doc['skipped_lines'] > len(doc['skipped_at']) else ''})")
    if not compactions:
        lines.append("  no compaction in this session: nothing was summarised away")
        return lines
    for c in compactions:
        n = c["counts"]
        trigger = f" · {_shown(c['trigger'])}" if c.get("trigger") else ""
        lines += ["", f"compaction {c['index']} at {where} {c['at']} · {c['type']} · {_tokens(c)}{trigger}",
                  f"  {n['present']} present · {n['mutated']} mutated · {n['missing']} missing "
                  f"(of {len(c['identifiers'])} identifiers in the history it replaced)"]
        if c["lost_and_needed"]:
            lines.append("  LOST AND NEEDED (not carried, used again afterwards):")
            for x in c["lost_and_needed"]:
                lines.append(f"    {x['kind']:<10} {_shown(x['value'])}  [{x['state']}] used again at "
                             f"{where} {x['used_at']} ({x['used_in'].replace('_', ' ')})")
        else:
            lines.append("  lost and needed: none")
        for state in ("mutated", "missing", "present"):
            items = [i for i in c["identifiers"] if i["state"] == state]
            if not items:
                continue
            lines.append(f"  {state}:")
            for i in items:
                altered = f"  → {_shown(i['altered'])}" if i.get("altered") else ""
                label = f" ({_shown(i['label'])})" if i.get("label") else ""
                lines.append(f"    {i['kind']:<10} {_shown(i['value'])}{label}{altered}")
        if c["new_after"]:
            lines.append("  new after (values of lost kinds never seen before; likely re-invented):")
            for x in c["new_after"]:
                sig = f"  signatures: {', '.join(x['signatures'])}" if x["signatures"] else ""
                lines.append(f"    {x['kind']:<10} {_shown(x['value'])}  first at {where} "
                             f"{x['first_seen_at']}{sig}")
    if doc.get("stored_as") is not None:
        lines += ["", f"stored as audit {doc['stored_as']}"]
    return lines
