"""The fold protocol as pure functions: what each fold and the recall turn send, and when to catch up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from foldscope.core.arms import Arm
from foldscope.core.messages import RECALL_SYSTEM_PROMPT, fold_user_message, recall_user_message
from foldscope.core.tokens import estimate_tokens

RECALL_BUDGET = 1024
"""Output tokens allowed for the recall answer."""


MESSAGE_OVERHEAD_TOKENS = 4
"""Chat-template tokens per message (role markers), added to every estimate."""

FENCE_TOKENS = 40
"""Estimated tokens of a fold's fences and segment label."""


@dataclass(frozen=True)
class CallSpec:
    """The model-facing content of one call: messages, reply shape, output budget and estimate.

    ``estimated_prompt_tokens`` is the planning estimate recorded beside the provider's reported
    usage, so the estimator's error can be reported.
    """

    messages: list[dict[str, str]]
    max_tokens: int
    response_format: dict[str, Any] | None
    estimated_prompt_tokens: int


def fold_call(arm: Arm, previous_carrier: str, chunk_texts: Sequence[str], first_index: int,
              total_chunks: int, chunk_tokens: Sequence[int] | None = None,
              carrier_tokens: int | None = None) -> CallSpec:
    """Build one fold: previous carrier plus the chunk(s) this fold takes, in the arm's shape.

    Args:
        arm: the row's arm.
        previous_carrier: the carrier exactly as this fold receives it.
        chunk_texts: the chunk text(s) this fold takes.
        first_index: zero-based index of the first chunk taken.
        total_chunks: number of chunks in the scenario.
        chunk_tokens: estimated tokens of ``chunk_texts`` if already known (chunks are large and
            folded by every row, so the runner estimates each once).
        carrier_tokens: estimated tokens of ``previous_carrier`` if already known (the
            previous fold recorded it).

    Returns:
        The call's messages, reply shape, output budget and prompt-token estimate.
    """
    user = fold_user_message(previous_carrier, chunk_texts, first_index, total_chunks,
                             arm.instruction)
    payload = sum(chunk_tokens) if chunk_tokens is not None else sum(
        estimate_tokens(t) for t in chunk_texts)
    estimate = (_fixed_tokens(arm.system_prompt, arm.instruction)
                + (estimate_tokens(previous_carrier) if carrier_tokens is None else carrier_tokens)
                + payload)
    return CallSpec(
        messages=[{"role": "system", "content": arm.system_prompt},
                  {"role": "user", "content": user}],
        max_tokens=arm.output_budget,
        response_format=arm.response_format(),
        estimated_prompt_tokens=estimate,
    )


@lru_cache(maxsize=64)
def _fixed_tokens(system_prompt: str, instruction: str) -> int:
    return (estimate_tokens(system_prompt) + estimate_tokens(instruction) + FENCE_TOKENS
            + 2 * MESSAGE_OVERHEAD_TOKENS)


def recall_call(carrier: str, labels: Sequence[str]) -> CallSpec:
    """Build the recall turn that asks for the graded facts by label."""
    messages = [{"role": "system", "content": RECALL_SYSTEM_PROMPT},
                {"role": "user", "content": recall_user_message(carrier, labels)}]
    return CallSpec(
        messages=messages,
        max_tokens=RECALL_BUDGET,
        response_format=None,
        estimated_prompt_tokens=sum(estimate_tokens(m["content"]) for m in messages)
        + MESSAGE_OVERHEAD_TOKENS * len(messages),
    )
