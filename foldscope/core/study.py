"""The study's tables from one sweep: pure builders over typed rows, their folds and checks.

Every table here reads the rows of ONE sweep and ONE scenario (the engine splits a sweep by
scenario before calling ``study_tables``); a contrast pairs two arms of one model inside that
sweep by repeat, never across sweeps. Cells are ``core.cells`` cells, and rows enter a recall
figure only through ``core.cells.valid_rows`` on their stored verdict. Statistics are never re-derived
here: means and intervals come from ``core.stats``, tests and the bootstrap from
``core.inference``, answer classes from ``core.answers``.

A table is data (``Table``: a name, columns, rows of plain values, notes). Tables that need an
arm the sweep lacks are left out and say so in ``StudyTables.notes`` (e.g. "no t arm in this
sweep").
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields

from foldscope.core.answers import ANSWER_CLASSES
from foldscope.core.cells import cell_key, group_cells
from foldscope.core.cells import valid_rows as cell_valid_rows
from foldscope.core.cuts import GIST_FILL as GIST_FILL
from foldscope.core.errors import StatsError
from foldscope.core.evidence import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from foldscope.core.fabrication import (
    ANSWER_COUNTS,
    RowChecks,
    counted_as,
    failing_rows,
    row_checks,
)
from foldscope.core.forensics import MISSING, MUTATED, PRESENT
from foldscope.core.inference import (
    ROW_THRESHOLD,
    fisher_exact,
    pair_by_key,
    paired_bootstrap,
    pearson,
    rows_table,
    separation_probability,
)
from foldscope.core.planning import pooled_cell_icc
from foldscope.core.row import FOLD_FIELDS, Check, RowRecord
from foldscope.core.stats import (
    Clustering,
    clustering_counts,
    icc_counts,
    row_mean,
    wilson_interval,
)
from foldscope.core.validity import Validity

Value = str | int | float | None
"""What a table cell holds: text, a count, a figure, or None where it is undefined."""

def check_gist_fill(gist_fill: float) -> float:
    """The failure-mode cut, checked: a number strictly between 0 and 1.

    Raises:
        StatsError: not a finite number in (0, 1).
    """
    if isinstance(gist_fill, bool) or not isinstance(gist_fill, (int, float)) \
            or not math.isfinite(gist_fill) or not 0 < gist_fill < 1:
        raise StatsError(f"the failure-mode cut (gist fill) must be a number between 0 and 1, "
                         f"got {gist_fill!r}")
    return float(gist_fill)

AT_CEILING_TOLERANCE = 0.005
"""A fold's carrier "ends at its ceiling" when its fill fraction is within 0.5 % of 1."""

RECALLED = "recalled"
OVER_WRITING = "over-writing description"
UNDER_WRITING = "under-writing gist"
NO_FILL = "no declared ceiling"
FAILURE_MODES: tuple[str, ...] = (RECALLED, OVER_WRITING, UNDER_WRITING, NO_FILL)
"""What ``failure_mode`` returns."""

CAPACITY = ("j", "t", "m", "u")
"""The capacity table's arms: one field at its ceiling and halved (j, t), plain text under
headings at the full and the cut carry cap (m, u)."""
SCHEMA_ARMS = ("j", "t")
PLAIN_ARMS = ("m", "u")
"""The two representations the pooled representation contrast compares."""
PARTITION = ("j", "q")
"""The capacity-matched partition contrast: one 9,600-char field vs five 1,920-char fields."""
CEILING = ("j", "t")
"""The ceiling contrast: the one-field schema at its ceiling and at half of it."""
LADDER = ("j", "q", "m")
"""The ladder of representations: one field, five fields, plain text under five headings."""


@dataclass(frozen=True, slots=True)
class FoldMeasure:
    """What the tables read from one stored fold (a subset of ``core.row.FoldRecord``)."""

    fold_index: int
    carrier_chars: int
    clipped_chars: int
    headings_carried: int
    fill_fraction: float | None
    finish_reason: str
    parse_status: str


FOLD_MEASURE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(FoldMeasure))
"""The fold columns the tables read (each one a ``FoldRecord`` field)."""
assert set(FOLD_MEASURE_FIELDS) <= set(FOLD_FIELDS)


@dataclass(frozen=True, slots=True)
class RowFolds:
    """What the tables read from one row's folds, without them: how many, how they stopped,
    how many ended at the ceiling or were clipped, and the final fold's measures (a sweep's
    rows are summarised as they are read; ``RowFolds.of``)."""

    count: int = 0
    stop: int = 0
    """Folds whose reply's finish reason is ``stop``."""
    length: int = 0
    """Folds whose reply's finish reason is ``length``."""
    ceilinged: int = 0
    """Folds with a fill fraction (arms with a declared ceiling)."""
    at_ceiling: int = 0
    """Folds whose carrier ends at its ceiling (``at_ceiling``)."""
    clipped: int = 0
    """Folds the carry cap cut."""
    clipped_chars: int = 0
    final: FoldMeasure | None = None
    """The last fold: its carrier is what the recall turn read."""

    @classmethod
    def of(cls, folds: Iterable[FoldMeasure]) -> RowFolds:
        """Summarise one row's folds, in fold order."""
        count = stop = length = ceilinged = at = clipped = clipped_chars = 0
        final = None
        for f in folds:
            count += 1
            stop += f.finish_reason == "stop"
            length += f.finish_reason == "length"
            if f.fill_fraction is not None:
                ceilinged += 1
                at += at_ceiling(f.fill_fraction)
            clipped += f.clipped_chars > 0
            clipped_chars += f.clipped_chars
            final = f
        return cls(count, stop, length, ceilinged, at, clipped, clipped_chars, final)

    def __len__(self) -> int:
        return self.count


@dataclass(frozen=True, slots=True)
class StudyRow:
    """One stored row with what the tables read of its folds (in fold order) and of its graded
    checks: their summaries (``RowFolds``, ``core.fabrication.RowChecks``). Sequences of
    ``FoldMeasure`` and ``Check`` are summarised when the row is made."""

    row: RowRecord
    folds: RowFolds = RowFolds()
    checks: RowChecks = RowChecks()

    def __init__(self, row: RowRecord, folds: RowFolds | Iterable[FoldMeasure] = (),
                 checks: RowChecks | Sequence[Check] = ()) -> None:
        object.__setattr__(self, "row", row)
        object.__setattr__(self, "folds", folds if isinstance(folds, RowFolds)
                           else RowFolds.of(folds))
        object.__setattr__(self, "checks", row_checks(checks))

    @property
    def verdict(self) -> Validity:
        """The row's stored validity verdict (what ``core.cells.valid_rows`` selects on)."""
        return self.row.verdict

    @property
    def final(self) -> FoldMeasure | None:
        """The last fold: its carrier is what the recall turn read."""
        return self.folds.final

    @property
    def fill(self) -> float | None:
        """The final carrier's fill fraction (None for arms without a declared ceiling)."""
        return self.final.fill_fraction if self.final else None


@dataclass(frozen=True)
class Table:
    """One study table: named columns and rows of plain values, with notes to print under it."""

    name: str
    """Stable key (JSON key, CSV file name)."""
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    notes: tuple[str, ...] = ()

    def records(self) -> list[dict[str, Value]]:
        """The rows as column → value mappings."""
        return [dict(zip(self.columns, r)) for r in self.rows]


@dataclass(frozen=True)
class StudyTables:
    """Every table of one scenario of one sweep, and what was left out and why."""

    scenario: str
    tables: tuple[Table, ...]
    notes: tuple[str, ...] = ()
    gist_fill: float = GIST_FILL
    """The failure-mode cut the tables used."""

    def table(self, name: str) -> Table | None:
        """The table of that name, or None when it was left out."""
        return next((t for t in self.tables if t.name == name), None)


# -- small shared rules -----------------------------------------------------------------------


def _num(x: float | None) -> float | None:
    """A figure as stored in a table: NaN and infinities become None (undefined)."""
    if x is None or not math.isfinite(x):
        return None
    return float(x)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def valid_rows(rows: Sequence[StudyRow]) -> list[StudyRow]:
    """Rows that may enter an aggregate (``core.cells.valid_rows``) and have a recall."""
    return [r for r in cell_valid_rows(rows) if r.row.recall is not None]


def _recalls(rows: Sequence[StudyRow]) -> list[float]:
    return [r.row.recall for r in rows if r.row.recall is not None]


def _recalled(recalls: Sequence[float]) -> int:
    return sum(v >= ROW_THRESHOLD for v in recalls)


def failure_mode(recall: float, fill: float | None, gist_fill: float = GIST_FILL) -> str:
    """How a carrier (a row, or a cell on its means) failed, from its recall and fill fraction.

    Recall at or above ``ROW_THRESHOLD`` is ``recalled``. Below it, a carrier that fills at
    least ``gist_fill`` (the cut, default ``GIST_FILL``) of its declared ceiling was written at
    length and still lost the identifiers (``over-writing description``); one that fills less
    is a short gist (``under-writing gist``). Without a declared ceiling there is no fill to
    judge.
    """
    if recall >= ROW_THRESHOLD:
        return RECALLED
    if fill is None:
        return NO_FILL
    return OVER_WRITING if fill >= gist_fill else UNDER_WRITING


class _Cells:
    """One scenario's rows grouped into cells (``core.cells``), in the sweep's model and arm
    order; ``by`` is keyed by (model, arm), the scenario being one."""

    def __init__(self, rows: Sequence[StudyRow], models: Sequence[str], arms: Sequence[str],
                 gist_fill: float = GIST_FILL):
        self.gist_fill = gist_fill
        grouped = group_cells(rows, lambda r: cell_key(r.row))  # one scenario: study_tables
        self.by: dict[tuple[str, str], list[StudyRow]] = defaultdict(list)
        for key, group in grouped.items():
            self.by[(key.model, key.arm)] = group
        self.models = list(dict.fromkeys([*models, *(r.row.model for r in rows)]))
        self.arms = list(dict.fromkeys([*arms, *(r.row.arm for r in rows)]))

    def keys(self, arms: Sequence[str] | None = None) -> list[tuple[str, str]]:
        """(model, arm) pairs that have rows, model-major."""
        wanted = self.arms if arms is None else [a for a in arms if a in self.arms]
        return [(m, a) for m in self.models for a in wanted if self.by.get((m, a))]

    def valid(self, model: str, arm: str) -> list[StudyRow]:
        return valid_rows(self.by.get((model, arm), []))


# -- the tables -------------------------------------------------------------------------------


def recall_table(cells: _Cells) -> Table:
    """Recall by model × arm: rows planned, valid rows (n) and mean recall with a t interval."""
    out = []
    for model, arm in cells.keys():
        recalls = _recalls(cells.valid(model, arm))
        summary = row_mean(recalls)
        out.append((model, arm, len(cells.by[(model, arm)]), len(recalls),
                    _num(summary.mean), _num(summary.ci[0]), _num(summary.ci[1])))
    return Table("recall", "Recall by model × arm",
                 ("model", "arm", "rows", "valid_rows", "mean_recall", "ci_low", "ci_high"),
                 tuple(out), ("mean of per-row recall over valid rows; 95 % t interval over rows (each row one "
                  "observation, so no design effect: the clustering of checks is inside each "
                  "row's recall)",))


@dataclass(frozen=True)
class Contrast:
    """Two arms of one model in one sweep: paired bootstrap of b − a, Fisher on rows ≥ 0.5."""

    pairs: int
    difference: float | None
    boot_low: float | None
    boot_high: float | None
    a_recalled: int
    a_rows: int
    b_recalled: int
    b_rows: int
    fisher_p: float | None


def contrast(a: Sequence[StudyRow], b: Sequence[StudyRow]) -> Contrast:
    """Contrast arm b against arm a over valid rows of one model in one sweep.

    Rows are paired by repeat (``core.inference.pair_by_key``) for the bootstrap of mean recall
    b − a (seed and resamples as the evidence package's contrasts); Fisher's exact test compares
    the valid rows with recall ≥ 0.5 under each arm.
    """
    _, first, second = pair_by_key(
        {r.row.repeat: r.row.recall for r in b if r.row.recall is not None},
        {r.row.repeat: r.row.recall for r in a if r.row.recall is not None})
    boot = (paired_bootstrap(first, second, resamples=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED)
            if first else None)
    ra, rb = _recalls(a), _recalls(b)
    fisher = fisher_exact(rows_table(rb, ra)) if ra and rb else None
    return Contrast(pairs=len(first), difference=_num(boot.estimate) if boot else None,
                    boot_low=_num(boot.ci[0]) if boot else None,
                    boot_high=_num(boot.ci[1]) if boot else None,
                    a_recalled=_recalled(ra), a_rows=len(ra), b_recalled=_recalled(rb),
                    b_rows=len(rb), fisher_p=_num(fisher.p_value) if fisher else None)


def fisher_floor(n_a: int, n_b: int) -> float | None:
    """The smallest two-sided p Fisher's exact test can give with these row counts: that of the
    most extreme table, every row of one arm recalled and none of the other (either way round).

    With two rows per arm it is 1/3, so a complete rescue never reaches 0.05: read the p-value
    beside this floor.
    """
    if n_a == 0 or n_b == 0:
        return None
    return min(fisher_exact([[n_b, 0], [0, n_a]]).p_value,
               fisher_exact([[0, n_b], [n_a, 0]]).p_value)


def rescue(mode: str, b_recall: float | None, c: Contrast) -> str:
    """Whether the partitioned arm rescues a failing one.

    ``n/a`` when the first arm did not fail (or has no valid rows); ``no`` when the second
    arm's mean recall is below ``ROW_THRESHOLD``; ``yes`` when it is at or above it and the
    paired bootstrap interval of the difference lies above 0; otherwise ``unclear``.
    """
    if mode == RECALLED or b_recall is None:
        return "n/a"
    if b_recall < ROW_THRESHOLD:
        return "no"
    if c.boot_low is not None and c.boot_low > 0:
        return "yes"
    return "unclear"


@dataclass(frozen=True)
class PartitionLine:
    """One model's j vs q contrast, with j's fill, failure mode and whether q rescues it."""

    model: str
    j_recall: float | None
    j_fill: float | None
    mode: str | None
    q_recall: float | None
    contrast: Contrast
    rescued: str
    """``rescue``'s verdict: yes, no, unclear or n/a."""


def partition_lines(cells: _Cells) -> list[PartitionLine]:
    """Every model with rows under both j and q, in the sweep's model order."""
    out = []
    for model in cells.models:
        if not cells.by.get((model, "j")) or not cells.by.get((model, "q")):
            continue
        j, q = cells.valid(model, "j"), cells.valid(model, "q")
        j_recall, q_recall = _mean(_recalls(j)), _mean(_recalls(q))
        j_fill = _mean([r.fill for r in j if r.fill is not None])
        mode = failure_mode(j_recall, j_fill, cells.gist_fill) if j_recall is not None else None
        c = contrast(j, q)
        out.append(PartitionLine(model, j_recall, j_fill, mode, q_recall, c,
                                 rescue(mode or RECALLED, q_recall, c)))
    return out


def _cut_note(gist_fill: float) -> str:
    return (f"failure mode: recall < {ROW_THRESHOLD} and fill ≥ {gist_fill:g} (the cut, "
            f"gist_fill) is over-writing description, fill < {gist_fill:g} an under-writing gist")


def partition_table(cells: _Cells) -> Table:
    """The capacity-matched partition contrast j vs q, per model, with j's fill and failure mode."""
    out = []
    for line in partition_lines(cells):
        c = line.contrast
        out.append((line.model, c.a_rows, line.j_recall, line.j_fill, line.mode, c.b_rows,
                    line.q_recall, c.pairs, c.difference, c.boot_low, c.boot_high, c.a_recalled,
                    c.b_recalled, c.fisher_p, _num(fisher_floor(c.a_rows, c.b_rows)),
                    line.rescued))
    return Table(
        "partition", "Capacity-matched partition: j (one field) vs q (five fields), per model",
        ("model", "j_rows", "j_recall", "j_fill", "failure_mode", "q_rows", "q_recall", "pairs",
         "q_minus_j", "boot_low", "boot_high", "j_recalled", "q_recalled", "fisher_p",
         "fisher_floor", "q_rescues"),
        tuple(out),
        (f"j_fill: mean fill fraction of j's final carriers; {_cut_note(cells.gist_fill)}",
         f"q_minus_j: paired bootstrap over repeats ({BOOTSTRAP_RESAMPLES} resamples, seed "
         f"{BOOTSTRAP_SEED}); fisher_p on valid rows with recall ≥ {ROW_THRESHOLD}; "
         "fisher_floor: the smallest p these row counts allow",
         f"q rescues: yes when q's mean recall ≥ {ROW_THRESHOLD} and the bootstrap interval "
         "lies above 0; no when q's recall is below it"))


def _fills_text(fills: Sequence[float]) -> str | None:
    return ", ".join(f"{f:.2f}" for f in sorted(fills)) or None


def separation_table(cells: _Cells) -> Table:
    """The failure modes apart by fill: the failing models' j fills per mode, how many q
    rescued, and how cleanly fill separates rescued from not rescued (margin, 1 ÷ C(n, k)).

    Failing models are those whose mean j recall is below ``ROW_THRESHOLD`` and whose j
    carriers have a declared ceiling (a fill). A model whose rescue is ``unclear`` is counted
    in its mode's row but left out of the separation.
    """
    failing = [x for x in partition_lines(cells)
               if x.mode in (OVER_WRITING, UNDER_WRITING) and x.j_fill is not None]
    out: list[tuple[Value, ...]] = []
    for mode in (OVER_WRITING, UNDER_WRITING):
        group = [x for x in failing if x.mode == mode]
        fills = [x.j_fill for x in group if x.j_fill is not None]
        out.append((mode, len(group), _fills_text(fills), min(fills, default=None),
                    max(fills, default=None), sum(x.rescued == "yes" for x in group),
                    sum(x.rescued == "no" for x in group),
                    sum(x.rescued == "unclear" for x in group), None, None, None, None, None))
    yes = [x.j_fill for x in failing if x.rescued == "yes" and x.j_fill is not None]
    no = [x.j_fill for x in failing if x.rescued == "no" and x.j_fill is not None]
    margin = min(yes) - max(no) if yes and no else None
    n, k = len(yes) + len(no), len(no)
    chance = separation_probability(n, k).probability if margin is not None and margin > 0 \
        else None
    in_gap = (max(no) < cells.gist_fill <= min(yes)) if margin is not None else None
    out.append(("rescued vs not rescued", n, None, min(yes, default=None),
                max(no, default=None), len(yes), len(no),
                sum(x.rescued == "unclear" for x in failing), _num(margin), n, k, _num(chance),
                in_gap))
    return Table(
        "failure_mode_separation",
        f"Failure modes apart by fill: j's failing models, cut at fill {cells.gist_fill:g}",
        ("group", "models", "fills", "fill_min", "fill_max", "rescued", "not_rescued", "unclear",
         "margin", "n", "k", "chance", "cut_in_gap"),
        tuple(out),
        (f"failing models: mean j recall < {ROW_THRESHOLD} with a declared ceiling; fills: "
         f"each one's mean final j fill; {_cut_note(cells.gist_fill)}; rescued/not_rescued/"
         "unclear: the partition table's q_rescues",
         "rescued vs not rescued: fill_min is the lowest fill of a rescued model, fill_max the "
         "highest of one q did not rescue; margin = fill_min − fill_max (> 0: fill alone "
         "separates them, and cut_in_gap says whether the cut lies between)",
         "chance = 1 ÷ C(n, k) (core.inference.separation_probability): the probability that "
         "the k models not rescued are the k lowest-filling of n by luck; a post-hoc ceiling on "
         "the evidence, not a planned test; empty unless margin > 0"))


def headings_table(rows: Sequence[StudyRow]) -> Table:
    """Recall by the number of fixed sections the final carrier held (0–5), over valid rows."""
    groups: dict[int, list[float]] = defaultdict(list)
    for r in valid_rows(rows):
        if r.final is not None and r.row.recall is not None:
            groups[r.final.headings_carried].append(r.row.recall)
    out = tuple((h, len(v), _mean(v), _recalled(v)) for h, v in sorted(groups.items()))
    return Table("headings", "Recall by headings carried (final carrier)",
                 ("headings", "rows", "mean_recall", "rows_recalled"), out,
                 ("valid rows of every model and arm of this sweep",))


def _pearson_line(name: str, pairs: Sequence[tuple[float, float]]) -> tuple[Value, ...]:
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    try:
        res = pearson(xs, ys)
    except StatsError:
        return (name, len(pairs), None, None, None, None)
    return (name, res.n, _num(res.r), _num(res.ci[0]), _num(res.ci[1]), _num(res.p_value))


def correlation_table(rows: Sequence[StudyRow]) -> Table:
    """Pearson r of recall with headings carried and with fill fraction, over valid rows."""
    valid = [r for r in valid_rows(rows) if r.final is not None and r.row.recall is not None]
    headings = [(float(r.final.headings_carried), r.row.recall) for r in valid
                if r.final is not None and r.row.recall is not None]
    fill = [(r.fill, r.row.recall) for r in valid if r.fill is not None and r.row.recall is not None]
    return Table("correlations", "Correlation with recall (per valid row)",
                 ("measure", "n", "r", "ci_low", "ci_high", "p_value"),
                 (_pearson_line("headings carried", headings),
                  _pearson_line("fill fraction", fill)),
                 ("Pearson r with a 95 % Fisher-z interval; empty below three rows or when a "
                  "variable is constant",))


def ceiling_table(cells: _Cells) -> Table:
    """The capacity table per model: j vs t (the field's ceiling halved) and m vs u (plain text,
    carry cap cut), each arm present: rows recalled, the final carriers' length, folds clipped."""
    out = []
    for model, arm in cells.keys(CAPACITY):
        valid = cells.valid(model, arm)
        recalls = _recalls(valid)
        finals = [r.final.carrier_chars for r in valid if r.final is not None]
        out.append((model, arm, len(recalls), _recalled(recalls), _mean(recalls), _mean(finals),
                    max(finals, default=None), sum(r.folds.count for r in valid),
                    sum(r.folds.clipped for r in valid),
                    sum(r.folds.clipped_chars for r in valid)))
    return Table("ceiling", "Capacity: j vs t (ceiling halved) and m vs u (carry cap cut), "
                 "per model",
                 ("model", "arm", "valid_rows", "rows_recalled", "mean_recall", "carried_chars",
                  "max_carried_chars", "folds", "folds_clipped", "clipped_chars"),
                 tuple(out), ("carried_chars: mean length of the final carrier over valid rows; "
                              "folds_clipped: folds the carry cap cut",
                              "arms present of j, t (one schema field, ceiling 9,600 → 4,800 "
                              "characters) and m, u (plain text under five headings, carry cap "
                              "2,400 → 1,400 tokens)"))


def _pooled(cells: _Cells, arms: Sequence[str]) -> list[float]:
    return [v for model in cells.models for arm in arms
            for v in _recalls(cells.valid(model, arm))]


def representation_table(cells: _Cells) -> Table:
    """The pooled representation contrast: rows recalled under the one-field schema (j, t)
    against plain text under headings (m, u), every model pooled, with Fisher's p; and the
    same at each capacity (j vs m, t vs u) where both arms are present."""
    pairs: list[tuple[str, Sequence[str], Sequence[str]]] = [
        ("schema vs plain text", [a for a in SCHEMA_ARMS if a in cells.arms],
         [a for a in PLAIN_ARMS if a in cells.arms]),
        ("full capacity", ["j"], ["m"]), ("reduced capacity", ["t"], ["u"])]
    out = []
    seen: set[tuple[str, str]] = set()
    for name, a_arms, b_arms in pairs:
        key = (",".join(a_arms), ",".join(b_arms))
        if not a_arms or not b_arms or key in seen \
                or any(x not in cells.arms for x in (*a_arms, *b_arms)):
            continue  # an arm missing, or the same contrast as the pooled line
        seen.add(key)
        a, b = _pooled(cells, a_arms), _pooled(cells, b_arms)
        p = fisher_exact(rows_table(a, b)).p_value if a and b else None
        out.append((name, ",".join(a_arms), _recalled(a), len(a), ",".join(b_arms),
                    _recalled(b), len(b), _num(p), _num(fisher_floor(len(a), len(b)))))
    return Table("representation", "Representation, pooled over models: one schema field "
                 "(j, t) vs plain text under headings (m, u)",
                 ("contrast", "a_arms", "a_recalled", "a_rows", "b_arms", "b_recalled", "b_rows",
                  "fisher_p", "fisher_floor"),
                 tuple(out),
                 (f"a_recalled/a_rows: valid rows with recall ≥ {ROW_THRESHOLD} under the a arms, "
                  "every model of this sweep pooled (likewise b); fisher_p: Fisher's exact test "
                  "(two-sided) on those counts, fisher_floor the smallest p they allow",
                  "pooling puts different models' rows together: read it beside the per-model "
                  "capacity table"))


def ladder_table(cells: _Cells) -> Table:
    """The ladder j → q → m per model: rows recalled at each rung's ends, with Fisher's p."""
    present = [a for a in LADDER if a in cells.arms]
    out = []
    for model in cells.models:
        for lo, hi in zip(present, present[1:]):
            if not cells.by.get((model, lo)) or not cells.by.get((model, hi)):
                continue
            a, b = _recalls(cells.valid(model, lo)), _recalls(cells.valid(model, hi))
            p = fisher_exact(rows_table(b, a)).p_value if a and b else None
            out.append((model, f"{lo}→{hi}", _mean(a), _mean(b), _recalled(a), len(a),
                        _recalled(b), len(b), _num(p), _num(fisher_floor(len(a), len(b)))))
    return Table("ladder", "Ladder j → q → m, per model",
                 ("model", "rung", "from_recall", "to_recall", "from_recalled", "from_rows",
                  "to_recalled", "to_rows", "fisher_p", "fisher_floor"),
                 tuple(out), (f"fisher_p: Fisher's exact test (two-sided) on valid rows with "
                              f"recall ≥ {ROW_THRESHOLD} at the rung's two arms; fisher_floor: "
                              "the smallest p these row counts allow",))


def at_ceiling(fill: float | None) -> bool:
    """Whether a carrier ends within ``AT_CEILING_TOLERANCE`` of its declared ceiling."""
    # The 1e-12 keeps the band's edge inside it: 0.995 - 1.0 is -0.0050000000000000044 in floats.
    return fill is not None and abs(fill - 1.0) <= AT_CEILING_TOLERANCE + 1e-12


def ceiling_target_table(cells: _Cells) -> Table:
    """The ceiling as a target: folds stopping naturally vs on length, and folds at the ceiling.

    Counts every committed fold of the sweep's rows, valid or not: a length stop is the arm's
    own behaviour, recorded whatever became of the row.
    """
    out = []
    for model, arm in cells.keys():
        group = [r.folds for r in cells.by[(model, arm)]]
        folds = sum(f.count for f in group)
        if not folds:
            continue
        stop = sum(f.stop for f in group)
        length = sum(f.length for f in group)
        ceilinged = sum(f.ceilinged for f in group)
        at = sum(f.at_ceiling for f in group)
        out.append((model, arm, folds, stop, length, folds - stop - length,
                    stop / folds, length / folds,
                    at if ceilinged else None, at / ceilinged if ceilinged else None))
    return Table("ceiling_target", "The ceiling as a target: how folds stop, and folds at the "
                 "ceiling",
                 ("model", "arm", "folds", "stop", "length", "other", "stop_share",
                  "length_share", "at_ceiling", "at_ceiling_share"),
                 tuple(out),
                 ("every committed fold of the sweep's rows; stop/length: the reply's "
                  "finish_reason",
                  f"at_ceiling: folds whose carrier ends within {AT_CEILING_TOLERANCE:.1%} of its "
                  "declared ceiling (empty for arms without one)"))


def carrier_answer_table(rows: Sequence[StudyRow]) -> Table:
    """The final carrier's state of each graded fact × the answer's class, over valid rows."""
    counts: dict[str, Counter[str]] = {s: Counter() for s in (PRESENT, MUTATED, MISSING)}
    for r in valid_rows(rows):
        for (state, classification, detail), n in r.checks.kinds:
            counts.setdefault(state, Counter())[counted_as(classification, detail)] += n
    out: tuple[tuple[Value, ...], ...] = tuple(
        (state, *(n[k] for k in ANSWER_COUNTS), sum(n.values())) for state, n in counts.items())
    return Table("carrier_answer", "Final carrier × answer (graded facts of valid rows)",
                 ("carrier", *ANSWER_COUNTS, "total"), out,
                 ("carrier: the final carrier's state of the fact; columns: the answer class "
                  "(core.answers), with no_answer (an answer that gave nothing for a value the "
                  "carrier lost) apart from honest_abstention (core.fabrication.counted_as)",))


MISSED_CLASSES: tuple[str, ...] = tuple(c for c in ANSWER_CLASSES if c != "correct")
"""How an answer can miss a fact the carrier held (every answer class but ``correct``)."""


def carrier_had_table(cells: _Cells) -> Table:
    """Per arm (models pooled): graded facts the final carrier held verbatim that the answer
    still missed, and how it missed them, over valid rows."""
    out = []
    for arm in cells.arms:
        valid = [r for model in cells.models for r in cells.valid(model, arm)]
        if not any(cells.by.get((model, arm)) for model in cells.models):
            continue
        checks = had = 0
        missed: Counter[str] = Counter()
        for r in valid:
            checks += r.checks.checks
            for (state, classification, _), n in r.checks.kinds:
                if state == PRESENT:
                    had += n
                    if classification != "correct":
                        missed[classification] += n
        n_missed = sum(missed.values())
        out.append((arm, len(valid), checks, had, had - n_missed, n_missed,
                    n_missed / had if had else None, *(missed[k] for k in MISSED_CLASSES)))
    return Table("carrier_had_answer_missed",
                 "Carrier had it, answer missed it: per arm (models pooled)",
                 ("arm", "valid_rows", "graded", "carrier_had", "answered", "missed",
                  "missed_share", *MISSED_CLASSES),
                 tuple(out),
                 ("carrier_had: graded facts of valid rows that the final carrier held verbatim "
                  "(state present); answered: of those, answered correctly; missed: answered any "
                  "other way, by answer class (core.answers); missed_share = missed ÷ "
                  "carrier_had",))


def answer_class_table(cells: _Cells) -> Table:
    """Abstention vs fabrication: answer classes per model × arm, and how failing rows failed.

    The failing-row columns are ``core.fabrication.failing_rows`` (the report's
    ``abstention_vs_fabrication``): among valid rows with recall below ``ROW_THRESHOLD``, rows
    that fabricate with no abstention anywhere in the answer, rows that abstain somewhere
    (``core.fabrication.abstains``), and rows whose answer stopped early, with how many labels
    each reached.
    """
    out = []
    for model, arm in cells.keys():
        valid = cells.valid(model, arm)
        classes: Counter[str] = Counter()
        for r in valid:
            classes.update(r.checks.answer_counts())
        split = failing_rows([(r.row, r.checks) for r in valid])
        failing = (split[0].failing_rows, split[0].fabricate_never_abstain,
                   split[0].abstain_somewhere, split[0].stopped_early) if split else (0, 0, 0, 0)
        reached = ", ".join(str(n) for n in split[0].items_reached) if split else ""
        out.append((model, arm, len(valid), *(classes[k] for k in ANSWER_COUNTS), *failing,
                    reached or None))
    return Table("answer_classes", "Abstention vs fabrication, per model × arm",
                 ("model", "arm", "valid_rows", *ANSWER_COUNTS, "failing_rows",
                  "fabricate_never_abstain", "abstain_somewhere", "stopped_early",
                  "items_reached"),
                 tuple(out),
                 (f"class counts over graded facts of valid rows (honest_abstention: said it "
                  "does not know; no_answer: gave nothing for a value the carrier lost — never "
                  "named the label, named it with no value, or prose without a value of its "
                  f"kind; core.fabrication.counted_as); failing rows: recall < "
                  f"{ROW_THRESHOLD}; abstain: honest abstention or an abstention from a carrier "
                  "that held the value; stopped early: the answer has no line for the last "
                  "label(s) asked, items reached: labels up to its last line",))


ICC_POOLED_NOTE = ("icc_pooled: one-way random-effects ICC(1) (ANOVA estimator, "
                   "core.stats.icc_binary) over every valid row's graded checks of this scenario, "
                   "all models and arms pooled, rows as clusters; icc_used: clamped to [0, 1] "
                   "(undefined taken as 1: a row is one trial); DE = 1 + (m − 1)·icc_used; "
                   "effective n = checks ÷ DE. The report's check-level intervals (cells' "
                   "check_ci95) use this DE")
"""What the ``icc`` table's pooled figures are, printed under it."""


def pooled_clustering(rows: Sequence[StudyRow]) -> Clustering:
    """The scenario's pooled clustering: ``core.stats.clustering`` over the graded checks of
    every valid row (all models and arms together), rows as clusters."""
    return clustering_counts([r.checks.counts for r in valid_rows(rows)])


def icc_table(cells: _Cells) -> Table:
    """The ICC/DE line: the pooled ICC(1) over all valid rows, its design effect and effective n,
    with the per-cell ICCs' row-weighted mean beside it as a diagnostic.

    The pooled figure (``pooled_clustering``) is the study's: it is what the check-level
    intervals discount by. Pooling counts differences between arms and models as clustering,
    which is why it is larger than the per-cell figure (``core.planning.pooled_cell_icc``, the
    ICC ``foldscope plan`` reads a sweep with), shown only as a diagnostic.
    """
    pooled = pooled_clustering([r for key in cells.keys() for r in cells.by[key]])
    per_cell = []
    for model, arm in cells.keys():
        groups = [r.checks.counts for r in cells.valid(model, arm) if r.checks]
        per_cell.append((len(groups), icc_counts(groups)))
    cell_icc, used = pooled_cell_icc(per_cell)
    rows_n = pooled.rows
    return Table("icc", "Clustering of checks in rows: pooled ICC and design effect",
                 ("valid_rows", "checks", "m", "icc_pooled", "icc_used", "design_effect",
                  "effective_n", "icc_cells_diagnostic", "cells_used"),
                 ((rows_n, pooled.checks, _num(pooled.m), _num(pooled.icc),
                   _num(pooled.icc_used) if rows_n else None,
                   _num(pooled.design_effect_used), _num(pooled.effective_n_used),
                   _num(cell_icc), used),),
                 (ICC_POOLED_NOTE,
                  "icc_cells_diagnostic: row-weighted mean of per-cell ICC(1) over valid rows, "
                  "cells with an undefined ICC skipped (cells_used: the cells it averages; as "
                  "foldscope plan reads a sweep): a diagnostic of clustering within cells, used "
                  "by no interval"))


def rows_recalled_table(cells: _Cells) -> Table:
    """Valid rows with recall ≥ 0.5 per cell, with a Wilson interval over rows."""
    out = []
    for model, arm in cells.keys():
        recalls = _recalls(cells.valid(model, arm))
        k, n = _recalled(recalls), len(recalls)
        low, high = wilson_interval(k, n) if n else (None, None)
        out.append((model, arm, n, k, k / n if n else None, _num(low), _num(high)))
    return Table("rows_recalled", f"Rows with recall ≥ {ROW_THRESHOLD} per cell",
                 ("model", "arm", "valid_rows", "rows_recalled", "share", "wilson_low",
                  "wilson_high"),
                 tuple(out), ("95 % Wilson interval over valid rows (each row one trial, so no design "
                              "effect)",))


# -- the whole study --------------------------------------------------------------------------


def _missing(need: Sequence[str], arms: Sequence[str]) -> list[str]:
    return [a for a in need if a not in arms]


def _lacks(missing: Sequence[str]) -> str:
    return " and ".join(f"no {a} arm" for a in missing) + " in this sweep"


def study_tables(rows: Sequence[StudyRow], models: Sequence[str],
                 arms: Sequence[str], gist_fill: float = GIST_FILL) -> StudyTables:
    """Every study table for the rows of one scenario of one sweep.

    Args:
        rows: the rows (any status; only valid ones enter recall figures).
        models: the sweep's models, in its order.
        arms: the sweep's arms, in its order.
        gist_fill: the failure-mode cut (``check_gist_fill``).

    Returns:
        The tables; those that need an arm the sweep lacks are left out, and ``notes`` says so.

    Raises:
        ValueError: rows of several scenarios (scenarios are never pooled).
        StatsError: a cut outside (0, 1).
    """
    gist_fill = check_gist_fill(gist_fill)
    scenarios = {r.row.scenario for r in rows}
    if len(scenarios) > 1:
        raise ValueError("study tables take one scenario's rows: got "
                         + ", ".join(sorted(scenarios)))
    cells = _Cells(rows, models, arms, gist_fill)
    present = cells.arms
    tables: list[Table] = [recall_table(cells)]
    notes: list[str] = []

    def needs(arms_needed: Sequence[str], what: str, build: Callable[[_Cells], Table]) -> None:
        missing = _missing(arms_needed, present)
        if missing:
            notes.append(f"{what} left out: {_lacks(missing)}")
        else:
            tables.append(build(cells))

    needs(PARTITION, "partition contrast (j vs q)", partition_table)
    needs(PARTITION, "failure-mode separation (j vs q)", separation_table)
    tables += [headings_table(rows), correlation_table(rows)]
    if all(a in present for a in CEILING) or all(a in present for a in PLAIN_ARMS):
        tables.append(ceiling_table(cells))
    else:
        missing = [a for pair in (CEILING, PLAIN_ARMS) for a in pair if a not in present]
        notes.append(f"capacity table (j vs t, m vs u) left out: {_lacks(missing)}")
    if any(a in present for a in SCHEMA_ARMS) and any(a in present for a in PLAIN_ARMS):
        tables.append(representation_table(cells))
    else:
        missing = [a for a in (*SCHEMA_ARMS, *PLAIN_ARMS) if a not in present]
        notes.append("representation contrast (j, t vs m, u) left out: "
                     f"{' or '.join(f'no {a} arm' for a in missing)} in this sweep")
    ladder = [a for a in LADDER if a in present]
    if len(ladder) < 2:
        notes.append(f"ladder (j → q → m) left out: {_lacks(_missing(LADDER, present))}")
    else:
        if len(ladder) < len(LADDER):
            notes.append(f"ladder (j → q → m) runs {' → '.join(ladder)}: "
                         f"{_lacks(_missing(LADDER, present))}")
        tables.append(ladder_table(cells))
    tables += [ceiling_target_table(cells), carrier_answer_table(rows), carrier_had_table(cells),
               answer_class_table(cells), icc_table(cells), rows_recalled_table(cells)]
    scenario = next(iter(scenarios), "")
    return StudyTables(scenario, tuple(tables), tuple(notes), gist_fill)


@dataclass(frozen=True)
class FillPoint:
    """One valid row for the fill-vs-recall scatter."""

    model: str
    arm: str
    repeat: int
    fill: float
    recall: float
    mode: str
    """``failure_mode`` of the row."""


def fill_points(rows: Sequence[StudyRow], gist_fill: float = GIST_FILL) -> list[FillPoint]:
    """Valid rows of arms with a declared ceiling: final fill fraction, recall, failure mode
    (at the cut ``gist_fill``)."""
    return [FillPoint(r.row.model, r.row.arm, r.row.repeat, r.fill, r.row.recall,
                      failure_mode(r.row.recall, r.fill, gist_fill))
            for r in valid_rows(rows) if r.fill is not None and r.row.recall is not None]


def cell_text(column: str, value: Value) -> str:
    """How a table value is shown (markdown report and TUI): counts plainly, p-values to three
    significant digits, other figures to three decimals, undefined as "—"."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if column.endswith("_p") or column in ("p_value", "fisher_floor", "chance"):
            return f"{value:.3g}"
        if column.endswith("chars"):
            return f"{value:.0f}"
        return f"{value:.3f}"
    return value
