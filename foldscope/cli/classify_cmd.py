"""``foldscope classify``: the answer classifier on one value (class, carrier state, provenance)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from foldscope.core.errors import FoldscopeError
from foldscope.core.text import json_text

if TYPE_CHECKING:
    from foldscope.core.answers import ValueVerdict


def register(subparsers: Any) -> None:
    """Add the ``classify`` command to the top-level parser.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers`` returned.
    """
    from foldscope.engine.options import SIGNATURES_ENV

    parser = subparsers.add_parser(
        "classify",
        help="class one answer value against its carrier: fabricated, abstention, corruption...",
        description="Class one answer to one label as the sweep does: correct, hedged, "
        "honest_abstention, fabricated, read_failure or carried_corruption, judged by the "
        "carrier the answer was given from (with no --carrier the fact counts as lost); trace a "
        "wrong value (cross-binding, the carrier, the session input, or invention); name the "
        f"stock-value signatures it hits (user rules: ${SIGNATURES_ENV}).",
    )
    parser.add_argument("--label", required=True, help="the label asked")
    parser.add_argument("--planted", required=True, metavar="V", help="the planted value")
    parser.add_argument("--answer", required=True, metavar="TEXT",
                        help="the answer: the value given, or `label: value` lines")
    parser.add_argument("--carrier", metavar="FILE", action="append",
                        help="the carrier the answer was given from (- reads stdin); give it "
                        "once per fold, in fold order, to judge the value's course (the last is "
                        "the final carrier)")
    parser.add_argument("--scenario", metavar="NAME",
                        help="scenario whose planted facts and decoys (and chunks) a wrong value "
                        "is traced to")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(handler=run)


def verdict_json(v: ValueVerdict) -> dict[str, Any]:
    """The JSON document ``classify --json`` prints.

    Keys: ``label``, ``planted``, ``given``, ``class``, ``detail`` (read-failure sub-kind),
    ``carrier_state``, ``carrier_altered``, ``carrier_rule``, ``carried`` (null, or
    ``{value, fold, rule, source}``: the carried form a ``carried_corruption`` repeats, with
    the fold it entered, 0-based), ``provenance`` (null, or
    ``{source, value, label, graded, fold, chunk}``), ``signatures`` (rule names) and
    ``near_miss`` (null, or ``{rule, altered, original}``: the answer against the planted
    value; a diagnostic, never the class).
    """
    miss = v.verdict.near_miss
    p = v.provenance
    return {
        "label": v.label, "planted": v.planted, "given": v.given,
        "class": v.verdict.answer_class, "detail": v.verdict.detail,
        "carrier_state": v.verdict.carrier_state, "carrier_altered": v.carrier_altered,
        "carrier_rule": v.carrier_rule,
        "provenance": None if p is None else {
            "source": p.source, "value": p.value, "label": p.fact_label, "graded": p.fact_graded,
            "fold": p.fold, "chunk": p.chunk},
        "carried": None if v.verdict.carried is None else {
            "value": v.verdict.carried.value, "fold": v.verdict.carried.fold,
            "rule": v.verdict.carried.rule, "source": v.verdict.carried.source},
        "signatures": list(v.signatures),
        "near_miss": None if miss is None else {
            "rule": miss.rule, "altered": miss.altered, "original": miss.original},
    }


def format_verdict(doc: dict[str, Any]) -> str:
    """The human-readable lines ``classify`` prints (values quoted as JSON strings through
    ``core.text.json_text``, so nothing in them can drive the terminal)."""
    lines = [f"class          {doc['class']}" + (f" ({doc['detail']})" if doc["detail"] else ""),
             f"given          {json_text(doc['given'])}",
             f"carrier state  {doc['carrier_state']}"
             + (f" — holds {json_text(doc['carrier_altered'])} "
                f"({doc['carrier_rule']})" if doc["carrier_altered"] else "")]
    carried = doc.get("carried")
    if carried is not None:
        lines.append(f"carried        {json_text(carried['value'])} entered at fold "
                     f"{carried['fold']} ({carried['rule']} of {json_text(carried['source'])})")
    p = doc["provenance"]
    if p is not None:
        where = {"cross_binding": f"the value of {'fact' if p['graded'] else 'decoy'} "
                                  f"{json_text(p['label'])}",
                 "earlier_carrier": f"the carrier (fold {p['fold']})",
                 "session_input": f"the session input (chunk {(p['chunk'] or 0) + 1})",
                 "invention": "nowhere: invented"}[p["source"]]
        lines.append(f"provenance     {p['source']}: {where}")
    lines.append(f"signatures     {', '.join(doc['signatures']) or 'none'}")
    miss = doc["near_miss"]
    shown = "none" if miss is None else \
        f"{miss['rule']}: {json_text(miss['altered'])}"
    lines.append(f"near miss      {shown}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Classify the value and print the verdict.

    Args:
        args: parsed ``classify`` arguments.

    Returns:
        0 (the verdict is the output, not the exit code).
    """
    from foldscope.cli.grade_cmd import read_answer
    from foldscope.core.answers import classify_value
    from foldscope.engine.rulefiles import load_signatures

    if not args.label.strip():
        raise FoldscopeError("--label is empty")
    if not args.planted.strip():
        raise FoldscopeError("--planted is empty")
    sources = args.carrier or []
    if sources.count("-") > 1:
        raise FoldscopeError("--carrier - (standard input) can be given only once")
    read = [read_answer(source, what="carrier") for source in sources]
    carrier = read[-1] if read else None
    rules = load_signatures()
    facts: list[Any] = []
    chunks: list[str] = []
    kind = None
    if args.scenario:
        from foldscope.engine.loader import load_scenario

        scenario = load_scenario(args.scenario)
        facts = list(scenario.facts)
        chunks = [c.text for c in scenario.chunks]
        own = next((f for f in facts if f.label.casefold() == args.label.casefold()), None)
        kind = own.kind if own is not None else None
    verdict = classify_value(args.label, args.planted, args.answer, carrier=carrier, facts=facts,
                             chunks=chunks, kind=kind, signature_rules=rules, carriers=read[:-1])
    doc = verdict_json(verdict)
    if args.json:
        print(json_text(doc, indent=2))
    else:
        print(format_verdict(doc))
    return 0
