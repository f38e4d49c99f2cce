"""``foldscope stats``: the study's statistics on plain numbers (Fisher, separation, ICC, TOST...)."""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

from foldscope.core.errors import StatsError

EPILOG = """\
lists are comma-separated numbers (e.g. 0.5,1,0.25); put `--` before a list that starts with a
minus sign. Every subcommand takes --json; non-finite figures are null in JSON.

  fisher S1/N1 S2/N2          Fisher's exact test on two groups' counts (e.g. rows >= 0.5 of
                              all rows): 1/10 8/10; --rows with two lists of per-row recalls
                              (split at 0.5); or --table a,b,c,d for any 2x2 table
  separation N K              chance 1/C(N, K) that a post-hoc split picks exactly the K lowest
  icc --csv FILE              ICC(1), design effect and effective n of 0/1 checks in rows
                              (CSV columns row_id,check,value)
  tost --margin D A [B]       TOST equivalence: A alone (e.g. paired differences) against 0,
                              A vs B (Welch), or A vs B with --paired
  pearson X Y                 Pearson r with a Fisher-z interval and p-value
  bootstrap A B               paired percentile bootstrap of mean(A - B), seeded
"""


def register(subparsers: Any) -> None:
    """Add the ``stats`` command and its subcommands."""
    from foldscope.core.inference import ALTERNATIVES

    p = subparsers.add_parser(
        "stats", help="statistics on plain numbers (fisher, separation, icc, tost, pearson, "
        "bootstrap)", description="The study's statistics on plain numbers.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="stat", metavar="STAT", required=True,
                           parser_class=type(p))

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        q = sub.add_parser(name, help=help_text, description=help_text)
        q.add_argument("--json", action="store_true", help="print the result as JSON")
        return q

    q = add("fisher", "Fisher's exact test on two groups' counts or a 2x2 table")
    q.add_argument("groups", nargs="*", metavar="S/N",
                   help="successes/total of each group, e.g. 1/10 8/10")
    q.add_argument("--table", metavar="A,B,C,D", help="any 2x2 table [[A, B], [C, D]]")
    q.add_argument("--rows", action="store_true",
                   help="the two groups are lists of per-row recalls; rows >= 0.5 count as "
                   "recalled (e.g. --rows 0,0.1,1 0.9,1,1)")
    q.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided",
                   help="less / greater refer to the odds ratio vs 1 (default two-sided)")
    q.set_defaults(handler=fisher)

    q = add("separation", "chance 1/C(n, k) of a post-hoc complete separation")
    q.add_argument("n", help="items in all (e.g. rows)")
    q.add_argument("k", help="items singled out (e.g. the k lowest)")
    q.set_defaults(handler=separation)

    q = add("icc", "ICC(1), design effect and effective n of 0/1 checks clustered in rows")
    q.add_argument("--csv", required=True, metavar="FILE",
                   help="CSV with columns row_id,check,value (value 0 or 1)")
    q.set_defaults(handler=icc)

    q = add("tost", "two one-sided t-tests for equivalence within +-margin")
    q.add_argument("a", metavar="A", help="values (one sample, e.g. paired differences)")
    q.add_argument("b", metavar="B", nargs="?", help="second sample (optional)")
    q.add_argument("--margin", required=True, help="equivalence margin, > 0")
    q.add_argument("--alpha", default="0.05", help="level of each one-sided test (default 0.05)")
    q.add_argument("--paired", action="store_true", help="A and B are paired: test A - B")
    q.set_defaults(handler=tost)

    q = add("pearson", "Pearson r with a Fisher-z interval")
    q.add_argument("x", metavar="X", help="first variable")
    q.add_argument("y", metavar="Y", help="second variable")
    q.add_argument("--confidence", default="0.95", help="interval level (default 0.95)")
    q.set_defaults(handler=pearson_cmd)

    q = add("bootstrap", "paired percentile bootstrap interval of mean(A - B)")
    q.add_argument("a", metavar="A", help="values under the first arm")
    q.add_argument("b", metavar="B", help="the paired values under the second arm")
    q.add_argument("--resamples", default="10000", help="bootstrap resamples (default 10000)")
    q.add_argument("--seed", default="0", help="generator seed (default 0)")
    q.add_argument("--confidence", default="0.95", help="interval level (default 0.95)")
    q.set_defaults(handler=bootstrap)


# -- parsing ----------------------------------------------------------------------------------

def _number(text: str | float, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise StatsError(f"{what}: not a number: {text!r}") from None
    if not math.isfinite(value):
        raise StatsError(f"{what}: must be a finite number, got {text!r}")
    return value


def _integer(text: str | float, what: str) -> int:
    value = _number(text, what)
    if not value.is_integer():
        raise StatsError(f"{what}: must be an integer, got {text!r}")
    return int(value)


def _numbers(text: str, what: str) -> list[float]:
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(p == "" for p in parts):
        raise StatsError(f"{what}: expected comma-separated numbers, got {text!r}")
    return [_number(p, what) for p in parts]


def _fraction(text: str) -> tuple[int, int]:
    successes, sep, total = text.partition("/")
    if not sep:
        raise StatsError(f"group {text!r}: expected successes/total, e.g. 3/10")
    return _integer(successes, f"group {text!r}"), _integer(total, f"group {text!r}")


def _json_number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _emit(args: argparse.Namespace, data: dict[str, Any], text: str) -> int:
    print(json.dumps(data, indent=2) if args.json else text)
    return 0


def _fmt(x: float, digits: int = 4) -> str:
    return "n/a" if math.isnan(x) else f"{x:.{digits}g}"


# -- handlers ---------------------------------------------------------------------------------

def fisher(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats fisher``."""
    from foldscope.core.inference import counts_table, fisher_exact, rows_table

    if args.table is not None:
        if args.groups:
            raise StatsError("give either two groups S/N or --table, not both")
        cells = [_integer(p, "--table") for p in _numbers(args.table, "--table")]
        if len(cells) != 4:
            raise StatsError(f"--table: expected four counts a,b,c,d, got {len(cells)}")
        table = [cells[:2], cells[2:]]
    else:
        if len(args.groups) != 2:
            shape = "lists of row recalls" if args.rows else "S/N (e.g. 1/10 8/10)"
            raise StatsError(f"expected two groups {shape}, got {len(args.groups)}")
        if args.rows:
            table = rows_table(_numbers(args.groups[0], "first group"),
                               _numbers(args.groups[1], "second group"))
        else:
            (s1, n1), (s2, n2) = (_fraction(g) for g in args.groups)
            table = counts_table(s1, n1, s2, n2)
    r = fisher_exact(table, args.alternative)
    data = {"test": "fisher_exact", "table": [list(row) for row in r.table],
            "odds_ratio": _json_number(r.odds_ratio), "p_value": r.p_value,
            "alternative": r.alternative}
    text = (f"table {list(map(list, r.table))}  odds ratio {_fmt(r.odds_ratio)}  "
            f"p = {r.p_value:.6g} ({r.alternative})")
    return _emit(args, data, text)


def separation(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats separation``."""
    from foldscope.core.inference import separation_probability

    r = separation_probability(_integer(args.n, "n"), _integer(args.k, "k"))
    data = {"n": r.n, "k": r.k, "ways": r.ways, "probability": r.probability}
    return _emit(args, data, f"1 / C({r.n}, {r.k}) = 1/{r.ways} = {r.probability:.6g}")


def read_checks_csv(path: str) -> list[tuple[str, str, int]]:
    """Read ``row_id,check,value`` records from a CSV file (header required).

    Raises:
        StatsError: the file is unreadable, lacks a column, or holds a value other than 0/1.
    """
    try:
        with Path(path).open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = {"row_id", "check", "value"} - set(reader.fieldnames or [])
            if missing:
                raise StatsError(f"{path}: missing column(s) {', '.join(sorted(missing))} "
                                 "(need row_id,check,value)")
            out = []
            for line, rec in enumerate(reader, start=2):
                value = (rec["value"] or "").strip()
                if value not in ("0", "1"):
                    raise StatsError(f"{path}: line {line}: value must be 0 or 1, got {value!r}")
                out.append((rec["row_id"], rec["check"], int(value)))
    except FileNotFoundError:
        raise StatsError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise StatsError(f"{path}: not UTF-8 text") from None
    except (OSError, csv.Error) as exc:
        raise StatsError(f"{path}: cannot read CSV ({exc})") from None
    if not out:
        raise StatsError(f"{path}: no checks")
    return out


def icc(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats icc``."""
    from foldscope.core.stats import clustering, group_checks

    records = read_checks_csv(args.csv)
    try:
        groups = group_checks(records)
    except ValueError as exc:
        raise StatsError(f"{args.csv}: {exc}") from None
    c = clustering(groups)
    data = {"icc": _json_number(c.icc), "design_effect": _json_number(c.design_effect),
            "effective_n": _json_number(c.effective_n), "rows": c.rows, "checks": c.checks,
            "m": c.m}
    text = (f"ICC {_fmt(c.icc)}  DE {_fmt(c.design_effect)}  effective n {_fmt(c.effective_n)}  "
            f"({c.checks} checks in {c.rows} rows, m = {c.m:.4g})")
    return _emit(args, data, text)


def tost(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats tost``."""
    from foldscope.core.inference import tost_one_sample, tost_two_sample

    margin, alpha = _number(args.margin, "--margin"), _number(args.alpha, "--alpha")
    a = _numbers(args.a, "A")
    if args.b is None:
        if args.paired:
            raise StatsError("--paired needs two samples A and B")
        r, design = tost_one_sample(a, margin, alpha), "one-sample"
    else:
        b = _numbers(args.b, "B")
        if args.paired:
            if len(a) != len(b):
                raise StatsError(f"paired samples must have the same length, got {len(a)} and "
                                 f"{len(b)}")
            r, design = tost_one_sample([x - y for x, y in zip(a, b)], margin, alpha), "paired"
        else:
            r, design = tost_two_sample(a, b, margin, alpha), "welch"
    data = {"test": "tost", "design": design, "estimate": r.estimate, "margin": r.margin,
            "alpha": r.alpha, "df": r.df, "se": r.se, "p_lower": r.p_lower, "p_upper": r.p_upper,
            "p_value": r.p_value, "ci": [r.ci[0], r.ci[1]], "ci_level": 1 - 2 * r.alpha,
            "equivalent": r.equivalent, "n": list(r.n)}
    verdict = "equivalent" if r.equivalent else "not shown equivalent"
    text = (f"difference {r.estimate:.4g}, {100 * (1 - 2 * r.alpha):.0f}% CI "
            f"[{r.ci[0]:.4g}, {r.ci[1]:.4g}] vs ±{r.margin:g}: p = {r.p_value:.4g} ({verdict})")
    return _emit(args, data, text)


def pearson_cmd(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats pearson``."""
    from foldscope.core.inference import pearson

    r = pearson(_numbers(args.x, "X"), _numbers(args.y, "Y"),
                _number(args.confidence, "--confidence"))
    data = {"r": _json_number(r.r), "n": r.n, "p_value": _json_number(r.p_value),
            "ci": [_json_number(r.ci[0]), _json_number(r.ci[1])], "confidence": r.confidence}
    text = (f"r = {_fmt(r.r)} (n = {r.n}), {100 * r.confidence:g}% CI "
            f"[{_fmt(r.ci[0])}, {_fmt(r.ci[1])}], p = {_fmt(r.p_value)}")
    return _emit(args, data, text)


def bootstrap(args: argparse.Namespace) -> int:
    """Handle ``foldscope stats bootstrap``."""
    from foldscope.core.inference import paired_bootstrap

    r = paired_bootstrap(_numbers(args.a, "A"), _numbers(args.b, "B"),
                         resamples=_integer(args.resamples, "--resamples"),
                         confidence=_number(args.confidence, "--confidence"),
                         seed=_integer(args.seed, "--seed"))
    data = {"estimate": r.estimate, "ci": [r.ci[0], r.ci[1]], "n": r.n,
            "resamples": r.resamples, "seed": r.seed, "confidence": r.confidence}
    text = (f"mean(A - B) = {r.estimate:.4g} over {r.n} pairs, {100 * r.confidence:g}% CI "
            f"[{r.ci[0]:.4g}, {r.ci[1]:.4g}] ({r.resamples} resamples, seed {r.seed})")
    return _emit(args, data, text)
