"""The one rule for the bounded memos the hot paths keep (readings of lines, judgements, fact
records, compiled screens): a memo that reaches its bound is emptied whole before the next entry
is stored. Callers look up with ``memo.get(key)`` themselves (the lookup stays inline where it is
hot) and store through :func:`remember`, so the bound is kept the same way everywhere."""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], bound: int, key: K, value: V) -> V:
    """Store ``value`` under ``key`` in ``memo``, emptying it first when it holds ``bound``
    entries already; returns ``value``."""
    if len(memo) >= bound:
        memo.clear()
    memo[key] = value
    return value
