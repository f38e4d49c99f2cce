"""Execution designs: the order in which a sweep interleaves its arms (Latin square, Williams)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from foldscope.core.errors import ConfigError

DESIGNS: tuple[str, ...] = ("latin", "williams")
"""Every design name ``execution_order`` accepts."""

EXECUTION_MODES: dict[str, str] = {
    "sequential": "each model x repeat's rows run one after another in design order "
                  "(for carryover-sensitive studies)",
    "blocked": "all arms of one model x repeat start together, blocks in design order "
               "(endpoint drift cannot favour one arm)",
    "free": "any row at any time, in plan order, up to the limits",
}
"""The execution modes a sweep can run in, and what each means (``engine.runner`` runs them)."""

DEFAULT_MODE: Final = "blocked"
"""The mode of a sweep that names none."""

LEGACY_MODE = "sequential"
"""How sweeps stored before modes existed ran (their stored definition names no mode)."""


def _check_arms(arms: Sequence[str]) -> list[str]:
    arms = list(arms)
    if not arms:
        raise ConfigError("execution design needs at least one arm")
    seen: set[str] = set()
    for arm in arms:
        if arm in seen:
            raise ConfigError(f"arm {arm!r} is listed twice in the execution design")
        seen.add(arm)
    return arms


def latin_square(arms: Sequence[str]) -> list[list[str]]:
    """Rotating Latin square: sequence i starts at arm i and keeps the given cyclic order.

    Every arm leads exactly once and stands in every position exactly once.

    Args:
        arms: distinct arm ids.

    Returns:
        n sequences of n arms.

    Raises:
        ConfigError: no arms, or an arm listed twice.
    """
    arms = _check_arms(arms)
    return [arms[i:] + arms[:i] for i in range(len(arms))]


def williams(arms: Sequence[str]) -> list[list[str]]:
    """Williams design: a Latin square that also balances first-order carryover.

    The first sequence interleaves from both ends (0, 1, n-1, 2, n-2, ...); the others add i
    modulo n. For even n that square has every ordered pair adjacent exactly once. For odd n no
    single square can, so the mirror image of each sequence is appended (2n sequences, every
    ordered pair adjacent exactly twice). One arm gives the one trivial sequence.

    Args:
        arms: distinct arm ids.

    Returns:
        n sequences (even n, and n = 1) or 2n sequences (odd n ≥ 3).

    Raises:
        ConfigError: no arms, or an arm listed twice.
    """
    arms = _check_arms(arms)
    n = len(arms)
    first: list[int] = []
    low, high = 0, n - 1
    for k in range(n):
        if k % 2 == 0:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    # ``first`` is 0, n-1, 1, n-2, ...; the textbook 0, 1, n-1, 2, ... is its mirror modulo n,
    # and either one has all differences between neighbours distinct, which is what balances.
    square = [[arms[(j + i) % n] for j in first] for i in range(n)]
    if n % 2 == 1 and n > 1:
        square += [list(reversed(seq)) for seq in square]
    return square


def execution_order(arms: Sequence[str], repeats: int, design: str = "latin") -> list[list[str]]:
    """Arm order for each repeat of a sweep, cycling through the design's sequences.

    Balance is exact when ``repeats`` is a multiple of the design's sequence count (n for a
    Latin square, n or 2n for Williams); otherwise the first sequences come up once more.

    Args:
        arms: distinct arm ids.
        repeats: how many repeats the sweep runs (0 gives no sequences).
        design: ``"latin"`` or ``"williams"``.

    Returns:
        One arm sequence per repeat.

    Raises:
        ConfigError: unknown design, negative repeats, no arms, or an arm listed twice.
    """
    if design == "latin":
        square = latin_square(arms)
    elif design == "williams":
        square = williams(arms)
    else:
        raise ConfigError(f"unknown execution design {design!r}; expected one of: "
                          f"{', '.join(DESIGNS)}")
    if repeats < 0:
        raise ConfigError(f"repeats must be 0 or more, got {repeats}")
    return [list(square[r % len(square)]) for r in range(repeats)]


def balance_note(arms: Sequence[str], repeats: int, design: str = "latin") -> str | None:
    """Say when a sweep's repeats leave its execution design unbalanced, or None when exact.

    Args:
        arms: the sweep's arms.
        repeats: repeats per model.
        design: ``"latin"`` or ``"williams"``.

    Returns:
        A one-line note naming the repeat counts that would balance it, or None.
    """
    if len(arms) < 2:
        return None
    cycle = len(williams(arms)) if design == "williams" else len(arms)
    if repeats % cycle == 0:
        return None
    what = "first-order carryover" if design == "williams" else "arm position"
    return (f"{design} design over {len(arms)} arms has {cycle} sequences; with {repeats} "
            f"repeats {what} is not balanced (use a multiple of {cycle})")
