"""Tests for the character-class token estimator."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.tokens import (
    CHARS_PER_TOKEN,
    CLASSES,
    ESTIMATE,
    FLAT_USAGE,
    TokenRule,
    class_chars,
    dominant_class,
    estimate_by_class,
    estimate_tokens,
    estimator_error,
    tokens_at,
)


def test_empty_text_costs_nothing():
    assert estimate_tokens("") == 0
    assert all(c.chars == 0 and c.tokens == 0 for c in estimate_by_class("").values())
    assert dominant_class("") == "latin"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abcd", 1),
        ("abcde", 2),  # rounds up
        ("a" * 400, 100),
        ("ж" * 25, 10),
        ("{}[]" * 7, 8),  # 28 JSON chars / 3.5
        ("漢" * 3, 2),
        ("🚀", 1),
    ],
)
def test_estimates_per_class(text, expected):
    assert estimate_tokens(text) == expected


def test_classes_are_counted_separately():
    text = 'Отдел {"port": 62114} 漢字 café'
    counts = class_chars(text)
    assert counts == {"cyrillic": 5, "json": 5, "other": 2, "latin": len(text) - 12}
    by_class = estimate_by_class(text)
    assert set(by_class) == set(CLASSES)
    assert by_class["cyrillic"].tokens == pytest.approx(5 / CHARS_PER_TOKEN["cyrillic"])
    total = sum(c.tokens for c in by_class.values())
    assert estimate_tokens(text) == math.ceil(total)


def test_latin_with_diacritics_counts_as_latin():
    assert class_chars("Ærøskøbing ñ")["latin"] == 12


def test_lone_surrogate_is_counted_not_raised():
    assert class_chars("a\ud800b") == {"latin": 2, "cyrillic": 0, "json": 0, "other": 1}


@given(st.text())
def test_class_counts_cover_every_character(text):
    counts = class_chars(text)
    assert sum(counts.values()) == len(text)
    assert all(v >= 0 for v in counts.values())


@given(st.text(), st.text())
def test_estimate_is_subadditive_within_one_token(a, b):
    # Rounding happens once per text, so a concatenation never costs more than its parts.
    assert estimate_tokens(a + b) <= estimate_tokens(a) + estimate_tokens(b)
    assert estimate_tokens(a + b) >= estimate_tokens(a) + estimate_tokens(b) - 2


def test_dominant_class():
    assert dominant_class("plain English text") == "latin"
    assert dominant_class("Отдел расчётов переносит реестр") == "cyrillic"
    assert dominant_class("{}" * 10) == "json"
    assert dominant_class("漢字漢字 ab") == "other"


def test_estimator_error():
    assert estimator_error(110, 100) == pytest.approx(0.10)
    assert estimator_error(90, 100) == pytest.approx(-0.10)
    assert estimator_error(0, 0) == 0.0
    assert math.isnan(estimator_error(5, 0))


def test_my_core_modules_stay_pure():
    # In a fresh interpreter, so modules other tests imported cannot mask an import.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import foldscope.core.tokens, foldscope.core.grading, foldscope.core.validity\n"
        "import foldscope.core.designs, foldscope.core.stats\n"
        "bad = [m for m in ('textual', 'httpx', 'sqlite3', 'sqlite_utils') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@given(st.text(max_size=300))
def test_the_estimate_is_the_token_rule_at_the_calibrated_rates(text):
    assert ESTIMATE.tokens(text) == estimate_tokens(text)
    # Several texts counted together are rounded once, as their concatenation is.
    assert ESTIMATE.count([text, text]) == estimate_tokens(text + text)


@given(st.lists(st.text(max_size=200), max_size=5))
def test_the_flat_usage_is_the_same_rule_at_one_rate_four_characters_a_token(texts):
    # The simulated provider's count: four characters a token whatever the script (its
    # shortcut over the class split must agree with the rule applied class by class).
    assert FLAT_USAGE.count(texts) == math.ceil(sum(len(t) for t in texts) / 4)
    assert tokens_at(class_chars("".join(texts)), FLAT_USAGE.chars_per_token) == FLAT_USAGE.count(texts)
    uneven = TokenRule("uneven", {**FLAT_USAGE.chars_per_token, "other": 1.0})
    assert uneven.count(texts) == tokens_at(class_chars("".join(texts)), uneven.chars_per_token)
    assert FLAT_USAGE.of_chars(sum(len(t) for t in texts)) == FLAT_USAGE.count(texts)
    assert FLAT_USAGE.chars_for(FLAT_USAGE.of_chars(8)) == 8


def test_estimator_error_compares_the_estimate_with_a_flat_provider_count():
    text = "Привет, мир! " * 20 + '{"a": [1, 2]}' * 10
    est, flat = ESTIMATE.tokens(text), FLAT_USAGE.tokens(text)
    assert est != flat  # the report's figure has something to measure
    assert estimator_error(est, flat) == (est - flat) / flat
