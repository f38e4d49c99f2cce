"""``foldscope plan``: rows per cell to detect a recall contrast, and the sweep's cost, before running."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from foldscope.core.errors import ConfigError, StatsError

HELP = """\
method: the two-proportion z-test needs n = (z(1-a/2)*sqrt(2*pbar*(1-pbar)) +
z(power)*sqrt(p1*(1-p1) + p2*(1-p2)))^2 / (p1 - p2)^2 independent checks per arm (Fleiss, no
continuity correction). The m graded checks of one row are clustered, so a cell needs
ceil(n * DE / m) rows, with DE = 1 + (m - 1)*ICC and m the scenario's graded facts. The ICC is
given (--icc) or taken from a stored sweep (--db, --sweep): the row-weighted mean of its cells'
ICCs over valid rows. Tokens come from the scenario's per-chunk estimates and each arm's prompt,
with every carrier at its cap and every reply at its output budget (an upper bound); dollars from
the models' configured prices (price_prompt_per_mtok, price_completion_per_mtok). With --db,
the plan also gives tokens and cost at the stored sweep's reported tokens per row (by scenario
and arm), when it has them for every planned scenario and arm.

example: foldscope plan --scenario kestrel --models sim/describer --contrast j:q \\
             --p1 0.3 --p2 0.9 --icc 0.8
"""


def register(subparsers: Any) -> None:
    """Add the ``plan`` command."""
    p = subparsers.add_parser(
        "plan", help="rows per cell to detect a recall contrast, with tokens and cost",
        description="Size a sweep before running it: the valid rows each cell needs to detect "
        "an expected recall contrast at a given power, and the sweep's estimated tokens and "
        "dollar cost at that size.", epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep_file", nargs="?", metavar="SWEEP.toml", help="sweep definition file")
    p.add_argument("--scenario", help="scenario name (or comma-separated names)")
    p.add_argument("--models", help="comma-separated model ids")
    p.add_argument("--arms", help="comma-separated arm ids (default: the sweep file's, else the contrast's two)")
    p.add_argument("--contrast", metavar="A:B", help="the two arms compared, e.g. j:q")
    p.add_argument("--p1", required=True, type=float, help="expected recall of the first arm")
    p.add_argument("--p2", required=True, type=float, help="expected recall of the second arm")
    p.add_argument("--power", type=float, default=0.8, help="wanted power (default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--icc", type=float, help="check-level ICC to assume")
    p.add_argument("--db", metavar="PATH", help="take the ICC from a stored sweep in this database")
    p.add_argument("--sweep", metavar="SWEEP_ID", help="with --db: which sweep (default newest)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(handler=plan, repeats=None, design=None, concurrency=None, seed=None)


def plan(args: argparse.Namespace) -> int:
    """Handle ``foldscope plan``."""
    from foldscope.cli.run_cmd import definition_from_args
    from foldscope.engine.plan import parse_contrast, plan_sweep, stored_icc
    from foldscope.engine.sweep import build_config

    if (args.icc is None) == (args.db is None):
        raise StatsError("give the ICC with --icc X, or a stored sweep with --db PATH (not both)")
    if args.sweep and not args.db:
        raise StatsError("--sweep needs --db")
    contrast = parse_contrast(args.contrast) if args.contrast else None
    if contrast and not args.arms and not args.sweep_file:
        args.arms = ",".join(contrast)
    if not args.models and not args.sweep_file:
        raise ConfigError("command line: --models: required (the cost depends on the models)")
    if not args.arms and not args.sweep_file:
        raise ConfigError("command line: --arms: required (or --contrast A:B)")
    data, source = definition_from_args(args)
    config = build_config(data, source)
    if contrast:
        missing = [a for a in contrast if a not in config.sweep.arms]
        if missing:
            raise ConfigError(f"--contrast: arm '{missing[0]}' is not among the sweep's arms "
                              f"({', '.join(config.sweep.arms)})")
    observed = None
    if args.icc is not None:
        if not math.isfinite(args.icc) or not -1 <= args.icc <= 1:
            raise StatsError(f"--icc must be between -1 and 1, got {args.icc}")
        icc, icc_source = args.icc, "given"
    else:
        found = stored_icc(args.db, args.sweep)
        icc, icc_source = found.icc, f"{found.source} ({found.cells_used} cells)"
        observed = found.observed
    result = plan_sweep(config, p1=args.p1, p2=args.p2, icc=icc, icc_source=icc_source,
                        alpha=args.alpha, power=args.power,
                        planned_repeats=data["sweep"].get("repeats"), observed=observed)
    if contrast:
        result["contrast"] = list(contrast)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    what = f"{contrast[0]} vs {contrast[1]}" if contrast else "the contrast"
    print(f"detect recall {args.p1:g} vs {args.p2:g} ({what}) at power {args.power:g}, "
          f"alpha {args.alpha:g}, ICC {icc:.3g} ({icc_source})")
    for s in result["scenarios"]:
        print(f"  {s['scenario']}: m = {s['m']} checks/row, DE = {s['design_effect']:.3g}, "
              f"{s['checks_independent']:.1f} independent checks -> "
              f"{s['rows_per_cell']} valid rows per cell")
    tokens = result["tokens"]
    cost = "unknown" if result["cost_usd"] is None else f"${result['cost_usd']:.2f}"
    print(f"sweep: {result['rows_total']} rows in {result['cells']} cells; at most {tokens['prompt']:,} prompt + "
          f"{tokens['completion']:,} completion tokens; cost {cost}")
    if result["tokens_observed"] is not None:
        seen = result["tokens_observed"]
        seen_cost = ("unknown" if result["cost_usd_observed"] is None
                     else f"${result['cost_usd_observed']:.2f}")
        print(f"at the stored sweep's reported tokens per row: {seen['prompt']:,} prompt + "
              f"{seen['completion']:,} completion tokens; cost {seen_cost}")
    for m in result["by_model"]:
        c = "unknown" if m["cost_usd"] is None else f"${m['cost_usd']:.2f}"
        print(f"  {m['model']}: {m['prompt_tokens']:,} + {m['completion_tokens']:,} tokens, {c}")
    for note in result["notes"]:
        print(f"note: {note}")
    return 0
