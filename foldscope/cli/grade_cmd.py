"""``foldscope grade``: grade any answer text against a scenario's graded facts."""

from __future__ import annotations

import argparse
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.errors import FoldscopeError
from foldscope.core.nesting import NestingError, loads_toml
from foldscope.core.text import json_text, literal

if TYPE_CHECKING:
    from foldscope.core.grading import AnswerMarkers
    from foldscope.core.row import Check
    from foldscope.core.scenario import Fact


def register(subparsers: Any) -> None:
    """Add the ``grade`` command to the top-level parser.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers`` returned.
    """
    parser = subparsers.add_parser(
        "grade",
        help="grade an answer text against a scenario's graded facts",
        description="Grade a recall answer (lines of `label: value`) against a scenario's graded "
        "facts: per label, whether it is correct, the value found, its answer class and the unit "
        "diagnostic. One value per label: an answer offering competing candidates (another "
        "planted value, another token of the value's kind), or a hedged, negated or struck-out "
        "value, is `hedged` and never credited; one giving only an abstention marker (\"I don't "
        "know\", \"not recorded\", N/A, ...) is an abstention.",
    )
    parser.add_argument("--scenario", required=True, metavar="NAME",
                        help="scenario name (e.g. kestrel) or path to a scenario .toml file")
    parser.add_argument("--answer", required=True, metavar="FILE",
                        help="file holding the answer text; - reads standard input")
    parser.add_argument("--carrier", metavar="FILE", action="append",
                        help="the final carrier the answer was given from: each fact's answer "
                        "class is judged by its state there (without it every fact counts as "
                        "lost); give it once per fold, in fold order, to judge each value's "
                        "course through the carriers (the last is the final carrier)")
    parser.add_argument("--json", action="store_true", help="print the grades as JSON")
    parser.add_argument("--markers", metavar="FILE",
                        help="TOML file of extra answer markers (abstention, hedge, negation, "
                        "strike), added to the shipped foldscope/core/data/answer_markers.toml")
    parser.set_defaults(handler=run)


def load_markers(source: str | None) -> AnswerMarkers | None:
    """Read a user markers file and add it to the shipped markers (None: the shipped ones).

    Raises:
        FoldscopeError: the file is missing, unreadable or malformed (one line naming it).
    """
    from foldscope.core.grading import default_markers, markers_from_data

    if source is None:
        return None
    try:
        data = loads_toml(Path(source).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FoldscopeError(f"markers file not found: {source}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FoldscopeError(f"cannot read markers file {source}: {exc}") from None
    except (tomllib.TOMLDecodeError, NestingError) as exc:
        raise FoldscopeError(f"markers file {source}: {exc}") from None
    return markers_from_data(data, source=source, base=default_markers())


def _load_graded(name: str) -> tuple[list[Fact], list[str]]:
    """The scenario's graded facts and every planted value (decoys too: competing candidates)."""
    # Imported here so that ``foldscope --help`` works in a checkout where the scenario loader
    # is not built yet, and so tests can substitute a scenario source.
    from foldscope.engine.loader import load_scenario

    scenario = load_scenario(name)
    return list(scenario.graded), [f.value for f in scenario.facts]


def read_answer(source: str, what: str = "answer") -> str:
    """Read the answer text from a file, or from standard input for ``-``.

    Args:
        source: a path, or ``-``.
        what: what the file holds, for errors (``answer``, ``carrier``).

    Returns:
        The text.

    Raises:
        FoldscopeError: the file is missing, unreadable or not UTF-8 (one line naming it).
    """
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FoldscopeError(f"{what} file not found: {source}") from None
    except IsADirectoryError:
        raise FoldscopeError(f"{what} file is a directory: {source}") from None
    except UnicodeDecodeError:
        raise FoldscopeError(f"{what} file is not UTF-8 text: {source}") from None
    except OSError as exc:
        raise FoldscopeError(f"cannot read {what} file {source}: {exc.strerror}") from None


def _recall(grades: Sequence[Check]) -> float | None:
    return sum(g.correct for g in grades) / len(grades) if grades else None


def grades_json(scenario: str, grades: Sequence[Check]) -> dict[str, Any]:
    """Build the JSON document ``grade --json`` prints.

    Args:
        scenario: the scenario name as given.
        grades: the checks (``core.row.grade_checks``), the same records a sweep stores.

    Returns:
        ``{"scenario", "recall", "correct", "graded", "facts": [...]}``; recall is null when
        nothing was graded. Each fact has its answer ``class`` (``core.answers``) and the
        ``carrier_state`` it was judged by.
    """
    return {
        "scenario": scenario,
        "recall": _recall(grades),
        "correct": sum(g.correct for g in grades),
        "graded": len(grades),
        "facts": [
            {"label": g.label, "expected": g.expected, "found": g.found, "correct": g.correct,
             "abstained": g.abstained, "hedged": g.classification == "hedged",
             "unit_dropped": g.unit_dropped,
             "nothing": g.class_detail == "nothing",
             "class": g.classification, "detail": g.class_detail,
             "carrier_state": g.carrier_state}
            for g in grades
        ],
    }


def format_grades(scenario: str, grades: Sequence[Check]) -> str:
    """Render grades as the human-readable table ``grade`` prints.

    Args:
        scenario: the scenario name as given.
        grades: the checks.

    Returns:
        The text, one line per fact and a recall line.
    """
    width = max((len(g.label) for g in grades), default=0)
    lines = []
    for g in grades:
        verdict = ("correct" if g.correct else "hedged" if g.classification == "hedged"
                   else "abstained" if g.abstained
                   else "no answer" if g.class_detail == "nothing" else "wrong")
        found = ("(no line)" if g.found is None
                 else literal(g.found, keep_newlines=False) or "(empty)")
        line = f"{verdict:<10} {g.label:<{width}}  {found}"
        if not g.correct:
            line += f"   [expected: {g.expected}]"
        if g.unit_dropped:
            line += "   [unit dropped]"
        lines.append(line)
    correct = sum(g.correct for g in grades)
    rate = _recall(grades)
    shown = "n/a" if rate is None else f"{rate:.3f}"
    lines.append(f"recall {correct}/{len(grades)} = {shown}   (scenario {scenario})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Grade the answer and print the result.

    Args:
        args: parsed ``grade`` arguments.

    Returns:
        0 (the grade is the output, not the exit code).
    """
    from foldscope.core.row import grade_checks

    answer = read_answer(args.answer)  # before loading: a bad path should fail fast
    sources = args.carrier or []
    if "-" in sources and (args.answer == "-" or sources.count("-") > 1):
        raise FoldscopeError("--answer and --carrier cannot both read standard input")
    read = [read_answer(source, what="carrier") for source in sources]
    carrier = read[-1] if read else None
    markers = load_markers(args.markers)
    graded, planted = _load_graded(args.scenario)
    grades = grade_checks(answer, graded, carrier=carrier, rivals=planted, markers=markers,
                          carriers=read[:-1])
    if args.json:
        print(json_text(grades_json(args.scenario, grades), indent=2))
    else:
        print(format_grades(args.scenario, grades))
    return 0
