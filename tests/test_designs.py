"""Tests for execution designs: Latin square and Williams balance properties."""

from __future__ import annotations

from collections import Counter

import pytest

from foldscope.core.designs import execution_order, latin_square, williams
from foldscope.core.errors import ConfigError

SIZES = range(1, 13)


def arms_of(n: int) -> list[str]:
    return [f"arm{i}" for i in range(n)]


def assert_latin_balanced(square: list[list[str]], arms: list[str]) -> None:
    assert all(sorted(seq) == sorted(arms) for seq in square)  # each sequence is a permutation
    for position in range(len(arms)):
        counts = Counter(seq[position] for seq in square)
        assert set(counts) == set(arms)
        assert len(set(counts.values())) == 1  # every arm equally often in every position


@pytest.mark.parametrize("n", SIZES)
def test_latin_square_balance(n):
    arms = arms_of(n)
    square = latin_square(arms)
    assert len(square) == n
    assert_latin_balanced(square, arms)
    assert Counter(seq[0] for seq in square) == Counter(arms)  # each arm leads exactly once


@pytest.mark.parametrize("n", SIZES)
def test_williams_balances_positions_and_first_order_carryover(n):
    arms = arms_of(n)
    square = williams(arms)
    assert len(square) == (2 * n if n % 2 and n > 1 else n)
    assert_latin_balanced(square, arms)
    pairs = Counter((a, b) for seq in square for a, b in zip(seq, seq[1:]))
    expected_pairs = {(a, b) for a in arms for b in arms if a != b}
    assert set(pairs) == expected_pairs
    assert len(set(pairs.values())) <= 1  # every ordered pair adjacent equally often


def test_williams_four_arms_known_square():
    assert williams(["a", "b", "c", "d"])[0] == ["a", "d", "b", "c"]


@pytest.mark.parametrize("design", ["latin", "williams"])
@pytest.mark.parametrize("n", [3, 4, 5])
def test_execution_order_cycles_the_square(design, n):
    arms = arms_of(n)
    square = latin_square(arms) if design == "latin" else williams(arms)
    order = execution_order(arms, 2 * len(square) + 1, design)
    assert order == square + square + square[:1]
    order[0][0] = "mutated"
    assert square[0][0] != "mutated"  # sequences are copies
    leads = Counter(seq[0] for seq in execution_order(arms, 3 * len(square), design))
    assert len(set(leads.values())) == 1


def test_execution_order_errors():
    with pytest.raises(ConfigError, match="unknown execution design 'greco'"):
        execution_order(["a", "b"], 2, "greco")
    with pytest.raises(ConfigError):
        execution_order(["a", "a"], 2, "latin")
    with pytest.raises(ConfigError):
        execution_order([], 2, "latin")
    with pytest.raises(ConfigError):
        execution_order(["a"], -1, "latin")
    assert execution_order(["a", "b"], 0, "williams") == []


def test_balance_note_names_the_repeats_that_balance():
    from foldscope.core.designs import balance_note

    assert balance_note(["j", "q", "m"], 3, "latin") is None
    assert balance_note(["j", "q", "m"], 6, "williams") is None
    note = balance_note(["j", "q", "m"], 4, "williams")
    assert "6 sequences" in note and "multiple of 6" in note
    assert "multiple of 3" in balance_note(["j", "q", "m"], 2, "latin")
    assert balance_note(["j"], 5, "latin") is None
