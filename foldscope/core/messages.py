"""The exact text of fold and recall requests: the only thing a model (real or simulated) sees."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.core.sections import SECTIONS, heading_line

# Fences are plain, unusual lines so that a chunk containing code or markdown cannot end a block
# early by accident; simulated models find the blocks with the same markers a human would read.
SUMMARY_BEGIN = "=== BEGIN PREVIOUS SUMMARY ==="
SUMMARY_END = "=== END PREVIOUS SUMMARY ==="
SEGMENT_BEGIN = "=== BEGIN NEW SEGMENT ==="
SEGMENT_END = "=== END NEW SEGMENT ==="
RECALL_SUMMARY_BEGIN = "=== BEGIN SUMMARY ==="
RECALL_SUMMARY_END = "=== END SUMMARY ==="
QUESTIONS_HEADER = "QUESTIONS:"
EMPTY_SUMMARY = "(empty: this is the first segment)"
UNKNOWN = "unknown"

RECALL_SYSTEM_PROMPT = (
    "You are continuing an agent session. All you know of it is the summary below. "
    "Answer from the summary only."
)

RECALL_INSTRUCTION = (
    "Answer each item on its own line as `label: value`, copying the value exactly as the summary "
    f"gives it. If the summary does not contain the value, answer `label: {UNKNOWN}`."
)


def headings_instruction() -> str:
    """Return the instruction block that asks for the five fixed headings, one per line."""
    lines = ["Write the new summary as plain text under exactly these headings, in this order:"]
    lines += [heading_line(s) for s in SECTIONS]
    return "\n".join(lines)


def fold_user_message(previous_carrier: str, chunk_texts: Sequence[str], first_index: int,
                      total_chunks: int, instruction: str) -> str:
    """Build the user message of one fold.

    Args:
        previous_carrier: the carrier exactly as this fold receives it ("" before the first fold).
        chunk_texts: the transcript text of the chunk(s) this fold takes (several in catch-up).
        first_index: zero-based index of the first chunk taken.
        total_chunks: number of chunks in the scenario.
        instruction: the arm's instruction for the reply's shape.

    Returns:
        The message text.
    """
    last = first_index + len(chunk_texts)
    label = (f"segment {first_index + 1} of {total_chunks}" if len(chunk_texts) == 1
             else f"segments {first_index + 1}-{last} of {total_chunks}")
    carrier = previous_carrier if previous_carrier.strip() else EMPTY_SUMMARY
    body = "\n\n".join(chunk_texts)
    return (
        f"{SUMMARY_BEGIN}\n{carrier}\n{SUMMARY_END}\n\n"
        f"Conversation {label}:\n{SEGMENT_BEGIN}\n{body}\n{SEGMENT_END}\n\n"
        f"{instruction}"
    )


def recall_user_message(carrier: str, labels: Sequence[str]) -> str:
    """Build the user message of the recall turn: the final carrier and the labels asked for."""
    questions = "\n".join(f"- {label}" for label in labels)
    return (
        f"{RECALL_SUMMARY_BEGIN}\n{carrier}\n{RECALL_SUMMARY_END}\n\n"
        f"{QUESTIONS_HEADER}\n{RECALL_INSTRUCTION}\n{questions}"
    )


def between(text: str, begin: str, end: str) -> str | None:
    """Return the text between the first ``begin`` line and the last ``end`` line, or None."""
    start = text.find(begin + "\n")
    stop = text.rfind("\n" + end)
    if start < 0 or stop < 0 or stop < start:
        return None
    return text[start + len(begin) + 1: stop]
