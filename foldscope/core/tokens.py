"""Token estimation by character class, fast enough to run on every fold and every chunk."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# Characters per token for each class. They are calibrated against BPE tokenizers of the
# GPT-4 / Llama-3 family on mixed agent transcripts and are deliberately round numbers: the
# estimate only has to size chunks and carry caps, and its error is reported per class
# (``estimator_error``) so a drift shows up in the report instead of hiding in an average.
CHARS_PER_TOKEN: dict[str, float] = {
    # ASCII letters, digits, whitespace and ASCII punctuation other than JSON's, plus the Latin
    # blocks U+0080-U+027F (Latin-1 Supplement, Latin Extended-A/B, IPA): text that merges well.
    "latin": 4.0,
    # Cyrillic and Cyrillic Supplement, U+0400-U+053F (the block boundary is taken at the UTF-8
    # lead byte, so the 15 Armenian capitals at U+0531-U+053F come along): vocabularies hold far
    # fewer Cyrillic merges, so words split into more pieces.
    "cyrillic": 2.5,
    # JSON structure ``{}[]":,``: mostly merged with a neighbour (``": "``), rarely alone.
    "json": 3.5,
    # Everything else (CJK, emoji, other scripts, Vietnamese Latin Extended Additional, typographic
    # punctuation): often a token or more per character; 1.5 is the middle of what CJK (~1.2-1.8)
    # and emoji (<1) measure.
    "other": 1.5,
}
"""Characters per token for each character class; the estimator's only tuning knobs."""

CLASSES: tuple[str, ...] = ("latin", "cyrillic", "json", "other")
"""The character classes, in the order reports list them (also the tie-break order)."""

FLAT_CHARS_PER_TOKEN = 4
"""The rate of the flat rule of thumb a tokenizer-less provider counts usage by: four characters
a token, whatever the character class (:data:`FLAT_USAGE`)."""

# Classes are read off UTF-8 bytes: JSON punctuation is ASCII, and a non-ASCII character's script
# block shows in its lead byte. ``bytes.translate(None, delete)`` runs at memory speed, so a
# 100k-character chunk costs a fraction of a millisecond where a per-character loop costs ~10 ms.
_JSON_BYTES = b'{}[]":,'
_NON_ASCII_BYTES = bytes(range(0x80, 0x100))
_LATIN_LEADS = bytes(range(0xC2, 0xCA))  # U+0080-U+027F
_CYRILLIC_LEADS = bytes(range(0xD0, 0xD5))  # U+0400-U+053F


def _count_bytes(raw: bytes, members: bytes) -> int:
    return len(raw) - len(raw.translate(None, members))


@dataclass(frozen=True)
class TokenClassCount:
    """Characters of one class in a text and the tokens they are estimated to cost."""

    chars: int
    tokens: float
    """Unrounded estimate; ``estimate_tokens`` rounds the sum over classes up, once."""


def class_chars(text: str) -> dict[str, int]:
    """Count the characters of each class in a text.

    Args:
        text: any text.

    Returns:
        Characters per class, keyed by every name in ``CLASSES``.
    """
    # surrogatepass: a lone surrogate (broken model output) must be counted, not raise.
    raw = text.encode("utf-8", "surrogatepass")
    json_chars = _count_bytes(raw, _JSON_BYTES)
    if len(raw) == len(text):  # pure ASCII, the common case
        return {"latin": len(text) - json_chars, "cyrillic": 0, "json": json_chars, "other": 0}
    ascii_chars = len(raw.translate(None, _NON_ASCII_BYTES))
    latin_ext = _count_bytes(raw, _LATIN_LEADS)
    cyrillic = _count_bytes(raw, _CYRILLIC_LEADS)
    return {
        "latin": ascii_chars - json_chars + latin_ext,
        "cyrillic": cyrillic,
        "json": json_chars,
        "other": len(text) - ascii_chars - latin_ext - cyrillic,
    }


def estimate_by_class(text: str) -> dict[str, TokenClassCount]:
    """Split a text's estimated token cost by character class.

    Args:
        text: any text.

    Returns:
        ``{"latin"|"cyrillic"|"json"|"other": TokenClassCount}``, every class present.
    """
    return {
        name: TokenClassCount(chars=count, tokens=count / CHARS_PER_TOKEN[name])
        for name, count in class_chars(text).items()
    }


def tokens_at(counts: Mapping[str, int], rates: Mapping[str, float]) -> int:
    """The token rule: characters of each class over that class's characters per token, summed
    and rounded up once.

    Args:
        counts: characters per class (:func:`class_chars`), keyed by every name in ``CLASSES``.
        rates: characters per token per class (``CHARS_PER_TOKEN``, or a ``TokenRule``'s).

    Returns:
        The token count; 0 for no characters.
    """
    return math.ceil(sum(counts[name] / rates[name] for name in CLASSES))


def estimate_tokens(text: str) -> int:
    """Estimate how many tokens a text costs (:func:`tokens_at` at ``CHARS_PER_TOKEN``).

    Args:
        text: any text.

    Returns:
        The estimate, rounded up; 0 for the empty string.
    """
    return tokens_at(class_chars(text), CHARS_PER_TOKEN)


@dataclass(frozen=True)
class TokenRule:
    """The token rule (:func:`tokens_at`) at a named set of rates.

    foldscope's own estimate is the rule at ``CHARS_PER_TOKEN`` (:data:`ESTIMATE`). A provider
    with no tokenizer counts usage by the same rule at one flat rate for every class
    (:data:`FLAT_USAGE`); the simulated endpoint reports its usage that way, so the report's
    estimator error (``estimate`` against the provider's count) measures something.
    """

    name: str
    chars_per_token: Mapping[str, float]
    """Characters per token, keyed by every name in ``CLASSES``."""

    def count(self, texts: Iterable[str]) -> int:
        """Tokens of several texts counted together (rounded up once, as one prompt is)."""
        totals = dict.fromkeys(CLASSES, 0)
        if len(set(self.chars_per_token.values())) == 1:
            # One rate for every class: the classes' characters sum to the text's length, so
            # the split is not needed to apply the rule.
            totals["latin"] = sum(len(t) for t in texts)
        else:
            for text in texts:
                for name, n in class_chars(text).items():
                    totals[name] += n
        return tokens_at(totals, self.chars_per_token)

    def tokens(self, text: str) -> int:
        """Tokens of one text."""
        return self.count((text,))

    def of_chars(self, chars: int, char_class: str = "latin") -> int:
        """Tokens of ``chars`` characters of one class."""
        return tokens_at({**dict.fromkeys(CLASSES, 0), char_class: chars}, self.chars_per_token)

    def chars_for(self, tokens: int, char_class: str = "latin") -> int:
        """Characters of one class that ``tokens`` tokens hold (a budget read as text)."""
        return int(tokens * self.chars_per_token[char_class])


ESTIMATE = TokenRule("estimate", CHARS_PER_TOKEN)
"""foldscope's estimate: the rule at the calibrated per-class rates (:func:`estimate_tokens`)."""

FLAT_USAGE = TokenRule("flat", dict.fromkeys(CLASSES, float(FLAT_CHARS_PER_TOKEN)))
"""A tokenizer-less provider's usage count: the rule at four characters a token in every class.
The simulated endpoint reports usage (and reads ``max_tokens``) by it."""


def dominant_class(text: str) -> str:
    """Name the character class that accounts for most of a text's estimated tokens.

    Args:
        text: any text.

    Returns:
        One of ``CLASSES``; ties go to the earlier class, and "" counts as "latin".
    """
    by_class = estimate_by_class(text)
    return max(CLASSES, key=lambda name: (by_class[name].tokens, -CLASSES.index(name)))


def estimator_error(estimated: int, reported: int) -> float:
    """Signed relative error of an estimate against the token count a provider reported.

    Args:
        estimated: tokens ``estimate_tokens`` predicted.
        reported: tokens the provider's usage block reported for the same text.

    Returns:
        ``(estimated - reported) / reported``: positive means the estimator over-counts.
        0.0 when both are 0, NaN when only ``reported`` is 0 (no scale to relate to).
    """
    if reported == 0:
        return 0.0 if estimated == 0 else float("nan")
    return (estimated - reported) / reported
