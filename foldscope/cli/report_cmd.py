"""``foldscope report``: a stored sweep's cells (table, JSON) and the study's tables (md, CSV)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from foldscope.cli.paths import add_db_option
from foldscope.core.cuts import GIST_FILL
from foldscope.core.errors import ConfigError, StoreError
from foldscope.core.text import json_text, literal

if TYPE_CHECKING:
    from foldscope.engine.store import Store

def register(subparsers: Any) -> None:
    """Add the ``report`` command."""
    p = subparsers.add_parser(
        "report", help="report a stored sweep (table or JSON)",
        description="Report a stored sweep: per arm x model cell, valid rows, mean recall and the "
        "cell's own ICC and design effect (a diagnostic), and per scenario the pooled ICC(1) over "
        "every valid row's checks with its design effect and effective n (study.scenarios[]."
        "tables.icc: icc_pooled). Each cell's interval (check_ci95) is wilson_design_effect: a "
        "Wilson 95 % interval on checks / the scenario's pooled design effect, since a row's "
        "checks are not independent trials (JSON: interval_method, interval_design_effect, "
        "interval_design_effect_source, effective_checks). A negative cell ICC is shown as "
        "measured, its design effect floored at 1 with a note (design_effect_raw keeps "
        "1 + (m - 1) * ICC).")
    add_db_option(p)
    p.add_argument("--sweep", metavar="SWEEP_ID", help="which sweep (default: the newest)")
    p.add_argument("--format", choices=["table", "json", "md", "csv"], default="table",
                   help="table: the cells; json: the cells and the study tables (key 'study'); "
                        "md: the study tables as markdown; csv: one CSV per study table")
    p.add_argument("--gist-fill", type=float, metavar="FILL",
                   help="the failure-mode cut: a failing j carrier filling at least this share "
                        "of its declared ceiling is over-writing description, less an "
                        f"under-writing gist (default {GIST_FILL:g}, between 0 and 1)")
    p.add_argument("--partial", action="store_true",
                   help="report an interrupted sweep (rows left running, no live runner) as far "
                        "as it was committed; without it such a sweep is refused, like anything "
                        "`foldscope check` flags")
    p.add_argument("--out", metavar="DIR",
                   help="with --format csv: write <table>.csv files into DIR (default: every "
                        "table on stdout, each after a '# <table>' line)")
    p.set_defaults(handler=report)


def _show(line: str) -> None:
    # Model ids, scenario names and warnings (which can quote an endpoint) are outside text.
    print(literal(line, keep_newlines=False))


def _pct(x: float | None) -> str:
    return "  —  " if x is None else f"{x:5.2f}"


def _num(x: float | None, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _pooled_line(scenario: dict[str, Any]) -> str:
    """One scenario's pooled ICC line (its study ``icc`` table) for the table output."""
    table = scenario["tables"].get("icc")
    if not table or not table["rows"]:
        return f"{scenario['scenario']}: no pooled ICC"
    r = table["rows"][0]
    return (f"{scenario['scenario']}: icc_pooled {_num(r['icc_pooled'], '.3f')} "
            f"(used {_num(r['icc_used'], '.3f')}) · DE {_num(r['design_effect'], '.2f')} · "
            f"effective n {_num(r['effective_n'], '.1f')} · {r['valid_rows']} valid rows, "
            f"{r['checks']} checks · icc_cells_diagnostic "
            f"{_num(r['icc_cells_diagnostic'], '.3f')} ({r['cells_used']} cells)")


COLUMN_LEGEND = (
    "recall: mean recall over valid rows · valid/rows: valid rows / planned rows · abst, fabr, "
    "hedg: honest abstentions, fabrications, hedged answers over the valid rows' graded checks · "
    "parse: folds whose reply did not parse against the arm's schema · len: folds that stopped "
    "on their output budget (finish reason length) · retry c/r: retried calls / rows run again "
    "after an infrastructure fault")
"""What each column of the table output counts (printed under it; README says the same)."""


def report(args: argparse.Namespace) -> int:
    """Handle ``foldscope report``."""
    if args.out is not None and args.format != "csv":
        raise ConfigError("--out is for --format csv")
    if args.gist_fill is None:
        args.gist_fill = GIST_FILL
    if not 0 < args.gist_fill < 1:  # also NaN
        raise ConfigError(f"--gist-fill must be between 0 and 1, got {args.gist_fill:g}")
    from foldscope.core.distributions import preload

    # The intervals' special functions (scipy: about half of a cold report's time) are
    # imported beside the report's own imports and reading of the database.
    preload()
    from foldscope.engine.integrity import refuse_unsound, refuse_unsound_later

    refuse_unsound(args.db, "report", full=False)
    # Everything `foldscope check` would flag in what this report reads stops it: the checks
    # run beside the report's imports and figures, and nothing is shown before they passed (a
    # figure that fails on what they find gives way to their refusal).
    checked = refuse_unsound_later(args.db, "report", partial=args.partial)
    from foldscope.engine.report import sweep_report
    from foldscope.engine.store import Store

    with Store(args.db, readonly=True) as store:
        sweep_id = args.sweep or store.latest_sweep_id()
        if sweep_id is None:
            raise StoreError(f"{args.db}: no sweeps recorded")
        try:
            if args.format in ("md", "csv"):
                tables = _study_tables(store, sweep_id, args.gist_fill)
            else:
                data = sweep_report(store, sweep_id, gist_fill=args.gist_fill)
        except Exception:
            checked(sweep_id)
            raise
    checked(sweep_id)
    if args.format in ("md", "csv"):
        return _show_study(args, tables)
    if args.format == "json":
        print(json_text(data, indent=2))
        return 0
    sim = " (simulated models)" if data["simulated"] else ""
    _show(f"sweep {data['sweep']} · {data['scenario']} · {data['status']}{sim} · "
          f"{data['design']} design, {data['mode']} mode")
    for warning in data["warnings"]:
        _show(f"warning: {warning}")
    if data["design_note"]:
        _show(f"note: {data['design_note']}")
    _show(f"{'model':<28} {'arm':<4} {'recall':>6} {'valid/rows':>10} {'cICC':>6} {'cDE':>6} "
          f"{'abst':>5} {'noans':>5} {'fabr':>5} {'hedg':>5} {'parse':>5} {'len':>4} "
          f"{'retry c/r':>9}")
    for c in data["cells"]:
        icc = "—" if c["icc"] is None else f"{c['icc']:.2f}"
        de = "—" if c["design_effect"] is None else f"{c['design_effect']:.2f}"
        retries = f"{c['call_retries']}/{c['row_retries']}"
        _show(f"{c['model']:<28} {c['arm']:<4} {_pct(c['mean_recall']):>6} "
              f"{c['valid_rows']:>4}/{c['rows']:<5} {icc:>6} {de:>6} {c['honest_abstention']:>5} "
              f"{c['no_answer']:>5} "
              f"{c['fabricated']:>5} {c['hedged']:>5} {c['parse_failures']:>5} {c['length_stops']:>4} "
              f"{retries:>9}")
    for c in data["cells"]:
        if c.get("icc_note"):
            _show(f"note: {c['model']} {c['arm']}: {c['icc_note']}")
    _show("cICC, cDE: each cell's own ICC and design effect (a diagnostic); intervals use the "
          "pooled DE below")
    _show(COLUMN_LEGEND)
    for note in data.get("capacity_notes", []):
        _show(f"note: {note}")
    for scenario in data["study"]["scenarios"]:
        _show(_pooled_line(scenario))
    total = data["accounting"]["total"]
    spend = "unknown" if total["cost_usd"] is None else f"${total['cost_usd']:.4f}"
    _show(f"spend {spend} · prompt tokens {total['prompt_tokens']:,} reported / "
          f"{total['est_prompt_tokens']:,} estimated · retries {total['call_retries']} calls, "
          f"{total['row_retries']} rows · {total['cached_calls']} calls from cache")
    return 0


def _study_tables(store: Store, sweep_id: str, gist_fill: float) -> tuple[Any, str]:
    """One sweep's study tables, and the title of their markdown."""
    from foldscope.engine.study import sweep_study

    studies = sweep_study(store, sweep_id, gist_fill=gist_fill)
    sweep = store.sweep(sweep_id)
    sim = " (simulated models)" if sweep is not None and sweep.simulated else ""
    return studies, f"Study tables · sweep {sweep_id}{sim}"


def _show_study(args: argparse.Namespace, tables: tuple[Any, str]) -> int:
    """Print (or, for CSV with --out, write) the study's tables of one sweep."""
    from foldscope.engine.study import study_csv, study_markdown, write_study_csv

    studies, title = tables
    if args.format == "md":
        print(study_markdown(studies, title), end="")
    elif args.out is not None:
        for path in write_study_csv(studies, args.out):
            _show(f"wrote {path}")
    else:
        print("\n".join(f"# {name}\n{text}" for name, text in study_csv(studies).items()),
              end="")
    return 0
