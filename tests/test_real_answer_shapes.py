"""Answer shapes a real model wrote (issue 21's llama.cpp runs) bind to the right value.

The rules are the grader's (``core.grading``); these are the shapes the real server's answers
took, kept so a change to the rules cannot quietly lose them again.
"""

from __future__ import annotations

import pytest

from foldscope.core.grading import grade_answer
from foldscope.engine.loader import load_scenario

KESTREL = load_scenario("kestrel")
GRADED = {f.label: f for f in KESTREL.graded}


@pytest.mark.parametrize("line,label", [
    ("- backup cutoff 2026-07-14 01:26 UTC", "backup cutoff"),  # label, space, value with a colon
    ("**ledger service port** 62114", "ledger service port"),
    ("1. install lock path /opt/kestrel/state/install.lock", "install lock path"),
    ("Admin console port 47031", "admin console port"),
    ("- cache origin https://origin-7.cdn.kestrel-internal.net/assets", "cache origin"),
    ("certificate expiry 2026-08-02 06:10 UTC", "certificate expiry"),
])
def test_label_then_value_shapes_bind_the_whole_value(line, label):
    [grade] = grade_answer(line, [GRADED[label]])
    assert grade.correct and grade.found == GRADED[label].value, grade


def test_a_numbered_list_of_bare_values_in_question_order_is_graded():
    answer = "\n".join(f"{i}. {f.value}" for i, f in enumerate(KESTREL.graded, start=1))
    grades = grade_answer(answer, KESTREL.graded)
    assert all(g.correct for g in grades), [g for g in grades if not g.correct]


def test_the_real_models_repeated_number_list_is_no_correct_value():
    # SmolLM2-135M answered every label with the same run of numbers: nothing is credited.
    tiny = load_scenario("tiny")
    run = "1024, 32768, 512, 932, 1024, 1280, 1600, 2048, 2560, 3200, 4096"
    answer = "\n".join(f"- {f.label}: {run}" for f in tiny.graded)
    assert not any(g.correct for g in grade_answer(answer, tiny.graded))
