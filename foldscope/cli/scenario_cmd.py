"""The ``foldscope scenario`` command: list scenario files and show one's chunks and facts."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from foldscope.core.text import json_text, literal

if TYPE_CHECKING:
    from foldscope.core.scenario import Scenario


def register(subparsers: Any) -> None:
    """Add the ``scenario`` command with its ``list`` and ``show`` subcommands.

    Args:
        subparsers: The top-level parser's subparsers action.
    """
    parser = subparsers.add_parser(
        "scenario", help="list scenarios or show one's chunks and planted facts",
        description="Built-in scenarios ship with foldscope; folders listed in "
                    "$FOLDSCOPE_SCENARIOS are searched first.")
    parser.set_defaults(handler=lambda args: _usage(parser))
    commands = parser.add_subparsers(dest="scenario_command", metavar="SUBCOMMAND")

    listing = commands.add_parser("list", help="one line per scenario")
    listing.set_defaults(handler=cmd_list)

    show = commands.add_parser(
        "show", help="chunks, token estimates and planted facts of one scenario",
        description="Humans see 1-based chunk numbers; --json keeps the API's 0-based indexes.")
    show.add_argument("name", metavar="NAME", help="scenario name, or path to a .toml file")
    show.add_argument("--json", action="store_true",
                      help="print one JSON object (chunk indexes 0-based)")
    show.set_defaults(handler=cmd_show)


def _show(line: str) -> None:
    # Labels, values and descriptions come from a file someone else may have written.
    print(literal(line, keep_newlines=False))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_list(args: argparse.Namespace) -> int:
    """Print one line per scenario: name, chunks, estimated tokens, planted/graded, description.

    Args:
        args: Parsed arguments (none used).

    Returns:
        Exit code 0.
    """
    from foldscope.engine.loader import list_scenarios

    scenarios = list_scenarios()
    if not scenarios:
        _show("no scenarios found")
        return 0
    width = max(len(s.name) for s in scenarios)
    for s in scenarios:
        _show(f"{s.name:<{width}}  {len(s.chunks):>2} chunks  ~{s.total_tokens:>7,} tokens  "
              f"{len(s.facts):>2} planted / {len(s.graded):>2} graded  {s.description}")
    return 0


def scenario_json(scenario: Scenario) -> dict[str, Any]:
    """Describe a scenario as plain data (what ``show --json`` prints).

    Args:
        scenario: A loaded scenario.

    Returns:
        ``name, description, seed, total_tokens, chunks[{index, tokens, turns}],
        facts[{label, value, role, chunk, graded, kind}]`` with 0-based chunk indexes.
    """
    return {
        "name": scenario.name,
        "description": scenario.description,
        "seed": scenario.seed,
        "total_tokens": scenario.total_tokens,
        "chunks": [{"index": c.index, "tokens": c.tokens, "turns": len(c.turns)}
                   for c in scenario.chunks],
        "facts": [f.model_dump() for f in scenario.facts],
    }


def cmd_show(args: argparse.Namespace) -> int:
    """Print one scenario's chunks (with estimated tokens) and its planted facts.

    Args:
        args: Parsed arguments: ``name`` and ``json``.

    Returns:
        Exit code 0.
    """
    from foldscope.engine.loader import load_scenario

    scenario = load_scenario(args.name)
    if args.json:
        print(json_text(scenario_json(scenario), indent=2))
        return 0
    graded, decoys = len(scenario.graded), len(scenario.decoys)
    spread = "distributed" if scenario.distributed else "graded facts in one chunk"
    _show(f"{scenario.name}: {scenario.description}")
    _show(f"seed {scenario.seed} · {len(scenario.chunks)} chunks · "
          f"~{scenario.total_tokens:,} estimated tokens · {len(scenario.facts)} planted "
          f"({graded} graded, {decoys} decoys) · {spread}")
    _show("")
    _show(f"{'chunk':>5}  {'tokens':>8}  {'turns':>5}  {'planted':>7}  {'graded':>6}")
    for c in scenario.chunks:
        here = scenario.facts_in_chunk(c.index)
        _show(f"{c.index + 1:>5}  {c.tokens:>8,}  {len(c.turns):>5}  {len(here):>7}  "
              f"{sum(f.graded for f in here):>6}")
    _show(f"{'total':>5}  {scenario.total_tokens:>8,}")
    _show("")
    label_w = max(len(f.label) for f in scenario.facts)
    _show(f"{'#':>3}  {'chunk':>5}  {'role':<9}  {'graded':<6}  {'kind':<12}  "
          f"{'label':<{label_w}}  value")
    for i, f in enumerate(scenario.facts, start=1):
        _show(f"{i:>3}  {f.chunk + 1:>5}  {f.role:<9}  {'graded' if f.graded else 'decoy':<6}  "
              f"{f.kind:<12}  {f.label:<{label_w}}  {f.value}")
    return 0
