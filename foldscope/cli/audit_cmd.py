"""``foldscope audit``: what each compaction in a real agent session dropped, and whether the agent
needed it afterwards: the audit screen of the TUI when stdout is a terminal, else a plain-text
report (or JSON); optionally stored in a database."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from foldscope.core.text import json_text, literal

if TYPE_CHECKING:
    from foldscope.core.audit import AuditOptions


def register(subparsers: Any) -> None:
    """Add the ``audit`` command."""
    from foldscope.engine.options import KINDS_ENV
    from foldscope.engine.options import SESSION_FORMATS as FORMATS

    p = subparsers.add_parser(
        "audit", help="audit a real agent session: what each compaction dropped, and what the "
        "agent needed again afterwards",
        description="Read an agent session locally (nothing is sent anywhere), find every "
        "compaction, and report the identifiers of the history it replaced as present, mutated "
        "or missing in the new summary; the lost values the agent wrote again (lost and needed) "
        "or that only came back in tool output (reappeared); and the values of lost kinds that "
        "nothing had shown before (likely re-invented). Claude Code, Codex CLI, pi, inspect_ai "
        "and generic JSONL sessions.")
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
                   help="show (and store) identifier kinds and keyed hashes (HMAC under a random "
                   "key made for this audit and shown once on stderr) instead of values")
    p.add_argument("--follow", action="store_true",
                   help="watch a session file an agent is writing: show each new compaction's "
                   "losses as it lands and the lost values the agent needs again, and keep "
                   "watching (ctrl+c stops)")
    p.add_argument("--idle", type=float, metavar="SECONDS",
                   help="with --follow: stop once the file has not grown for this long")
    p.set_defaults(handler=audit)


def audit(args: argparse.Namespace) -> int:
    """Handle ``foldscope audit``."""
    from foldscope.core.audit import AuditOptions, SessionAuditor, audit_json, audit_session, redaction_key
    from foldscope.engine.audit_readers import (
        check_read,
        is_inspect,
        read_facts,
        read_sessions,
        stream_session,
    )
    from foldscope.engine.kinds_file import identifier_rules
    from foldscope.engine.rulefiles import load_signatures
    from foldscope.engine.store import Store

    rules = identifier_rules(args.kinds)
    facts = read_facts(args.facts, rules) if args.facts else None
    options = AuditOptions(rules=rules, facts=facts, signatures=load_signatures())
    if args.follow:
        return follow(args, options)
    key = redaction_key() if args.redact else None
    if is_inspect(args.path, args.format):
        docs = [audit_json(s, audit_session(s, options), redacted=args.redact, source=args.path,
                           redact_key=key) for s in read_sessions(args.path, args.format)]
    else:
        stream = stream_session(args.path, args.format)
        auditor = SessionAuditor(options)
        auditor.feed_all(stream.items)
        check_read(stream, args.format)
        docs = [audit_json(stream.session(), auditor.audits(), redacted=args.redact,
                           source=args.path, redact_key=key, summaries=stream.state.summaries)]
    if key is not None:
        print(f"redaction key of this audit (shown once, stored nowhere): {key.hex()}",
              file=sys.stderr)
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


def follow(args: argparse.Namespace, options: AuditOptions) -> int:
    """``--follow``: tail the session file, report each compaction as it lands and each lost
    value when the agent writes it again; memory holds the values still awaited, never the
    session's text."""
    from foldscope.core.audit import (
        STATES,
        CompactionAudit,
        LostAndNeeded,
        SessionAuditor,
        redact,
        redaction_key,
    )
    from foldscope.core.forensics import MISSING, MUTATED, PRESENT, UNKNOWN
    from foldscope.engine.audit_readers import stream_session

    stream = stream_session(args.path, args.format, follow=True, idle_s=args.idle)
    where = "line"
    key = redaction_key() if args.redact else None
    if key is not None:
        print(f"redaction key of this audit (shown once, stored nowhere): {key.hex()}",
              file=sys.stderr)

    def shown(value: str) -> str:
        return redact(value, key) if key is not None else _shown(value)

    def on_compaction(c: CompactionAudit) -> None:
        if args.json:
            print(json_text({"event": "compaction", "index": c.index, "at": c.at,
                             "carrier": c.carrier, "tokens_before": c.tokens_before,
                             "counts": {s: c.count(s) for s in STATES},
                             "lost": [{"kind": i.kind, "value": shown(i.value), "state": i.state}
                                      for i in c.identifiers if i.state != PRESENT]}), flush=True)
            return
        n = {s: c.count(s) for s in STATES}
        carrier = "" if c.carrier == "text" else f" · carrier {c.carrier}"
        unknown = f" · {n[UNKNOWN]} unknown" if n[UNKNOWN] else ""
        print(f"compaction {c.index} at {where} {c.at:,}{carrier} · {n[PRESENT]} present · "
              f"{n[MUTATED]} mutated · {n[MISSING]} missing{unknown}", flush=True)
        lost = [i for i in c.identifiers if i.state in (MISSING, MUTATED)]
        for i in lost[:10]:
            altered = f" → {shown(i.altered)}" if i.altered else ""
            print(f"  {i.state:<8} {i.kind:<10} {shown(i.value)}{altered}", flush=True)
        if len(lost) > 10:
            print(f"  … and {len(lost) - 10} more", flush=True)

    def on_use(index: int, need: LostAndNeeded) -> None:
        if args.json:
            print(json_text({"event": "needed", "compaction": index, "kind": need.kind,
                             "value": shown(need.value), "used_at": need.used_at,
                             "used_in": need.used_in, "recovered": need.recovered,
                             "context": None if key is not None else need.context}), flush=True)
            return
        back = " (after tool output showed it)" if need.recovered else ""
        print(f"  NEEDED {need.kind} {shown(need.value)} — lost at compaction {index}, written "
              f"again at {where} {need.used_at:,} ({need.used_in.replace('_', ' ')}){back}",
              flush=True)

    auditor = SessionAuditor(options, on_compaction=on_compaction, on_use=on_use, keep=False)
    if not args.json:
        print(f"watching {_shown(args.path)} ({stream.format}); ctrl+c stops", flush=True)
    try:
        for item in stream.items:
            auditor.feed(item)
    except KeyboardInterrupt:
        pass
    if not args.json:
        print(f"stopped after {auditor.compactions} compaction(s)", flush=True)
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
    from foldscope.core.forensics import MISSING, MUTATED, PRESENT, UNKNOWN

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
    if doc.get("notes"):
        lines += [f"  note: {_shown(n)}" for n in doc["notes"]]
    for c in compactions:
        n = c["counts"]
        trigger = f" · {_shown(c['trigger'])}" if c.get("trigger") else ""
        lines += ["", f"compaction {c['index']} at {where} {c['at']} · {c['type']} · {_tokens(c)}{trigger}"]
        if c.get("carrier", "text") != "text":
            lines.append(f"  the carrier is {c['carrier']}: what it kept cannot be read, so states "
                         "are unknown; what the agent wrote again afterwards is listed")
        unknown = f" · {n[UNKNOWN]} unknown" if n.get(UNKNOWN) else ""
        lines.append(f"  {n[PRESENT]} present · {n[MUTATED]} mutated · {n[MISSING]} missing"
                     f"{unknown} (of {len(c['identifiers'])} identifiers in the history it replaced)")
        if c["lost_and_needed"]:
            lines.append("  LOST AND NEEDED (not carried, written again by the agent afterwards):")
            for x in c["lost_and_needed"]:
                back = ", back in tool output first" if x.get("recovered") else ""
                lines.append(f"    {x['kind']:<10} {_shown(x['value'])}  [{x['state']}] at "
                             f"{where} {x['used_at']} ({x['used_in'].replace('_', ' ')}{back})")
                if x.get("context"):
                    lines.append(f"               {_shown(x['context'])}")
        else:
            lines.append("  lost and needed: none")
        if c.get("reappeared"):
            lines.append(f"  reappeared only in tool output: "
                         f"{len(c['reappeared'])} value(s)")
            for x in c["reappeared"]:
                lines.append(f"    {x['kind']:<10} {_shown(x['value'])}  at {where} {x['at']} "
                             f"({x['channel'].replace('_', ' ')})")
        for state in (MUTATED, MISSING, UNKNOWN, PRESENT):
            items = [i for i in c["identifiers"] if i["state"] == state]
            if not items:
                continue
            lines.append(f"  {state}:")
            for i in items:
                altered = f"  → {_shown(i['altered'])}" if i.get("altered") else ""
                label = f" ({_shown(i['label'])})" if i.get("label") else ""
                lines.append(f"    {i['kind']:<10} {_shown(i['value'])}{label}{altered}")
        if c["new_after"]:
            lines.append("  new after (values of lost kinds nothing had shown before; likely re-invented):")
            for x in c["new_after"]:
                sig = f"  signatures: {', '.join(x['signatures'])}" if x["signatures"] else ""
                lines.append(f"    {x['kind']:<10} {_shown(x['value'])}  first at {where} "
                             f"{x['first_seen_at']}{sig}")
    if doc.get("stored_as") is not None:
        lines += ["", f"stored as audit {doc['stored_as']}"]
    return lines
