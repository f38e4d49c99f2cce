"""``foldscope probe MODEL…``: capability-probe models (strict schema, reasoning off, pinned)."""

from __future__ import annotations

import argparse

from foldscope.core.text import json_text, literal


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``probe`` command."""
    p = subparsers.add_parser(
        "probe", help="probe models for strict-schema support and name culprit parameters",
        description="Send each model the sweep's largest schemas (the schema arms of a sweep "
        "file given with --config, else every schema arm) in each schema dialect of its "
        "provider's ladder, and report a verdict (ok, probe_rejected_no_endpoint_for_parameters, "
        "probe_rejected_reasoning_not_disableable, schema_advertised_reply_nonconforming, "
        "transport_error, probe_rejected_every_schema_dialect), the dialect a sweep will use and "
        "the culprit parameter of a refusal. Exit status 0 when every verdict is ok, 1 otherwise.")
    p.add_argument("models", nargs="+", metavar="MODEL", help="model ids (sim/faithful, …)")
    p.add_argument("--config", metavar="FILE", help="TOML model file with [[models]] entries")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per model")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Probe the models named on the command line."""
    from foldscope.engine.models import load_models_toml, lookup_model, sweep_arm_ids
    from foldscope.engine.probe import OK, format_line, probe_models

    configured = load_models_toml(args.config) if args.config else None
    cfgs = [lookup_model(m, configured) for m in args.models]  # unknown id → one line, exit 2
    import asyncio

    arm_ids = sweep_arm_ids(args.config) if args.config else None
    results = asyncio.run(probe_models(cfgs, arm_ids=arm_ids))
    if args.json:
        print(json_text([r.to_json() for r in results], indent=2))
    else:
        for r in results:
            print(literal(format_line(r), keep_newlines=False))  # quotes endpoint text
    return 0 if all(r.verdict == OK for r in results) else 1
