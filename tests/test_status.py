"""Row, sweep and value states are str-valued enums defined once: stored and printed values unchanged."""

from __future__ import annotations

import json
import sqlite3
from typing import get_args

from foldscope.core import audit
from foldscope.core.forensics import STATE_MARKS, FactState, TimelineState
from foldscope.core.status import (
    FINISHED_ROW_STATUSES,
    LIVE_SWEEP_STATUSES,
    OPEN_ROW_STATUSES,
    STORED_ROW_STATUSES,
    RowStatus,
    SweepStatus,
)
from foldscope.core.validity import STATUSES, RowFacts, row_validity


def test_the_stored_spellings_are_unchanged():
    assert [s.value for s in RowStatus] == ["planned", "running", "done", "failed", "interrupted"]
    assert [s.value for s in SweepStatus] == ["planned", "running", "paused", "done", "failed",
                                              "stopped", "interrupted"]
    assert [s.value for s in TimelineState] == ["not_yet", "present", "mutated", "missing",
                                                "unknown"]
    assert STATUSES == ("planned", "running", "done", "failed")
    assert set(STORED_ROW_STATUSES) == set(OPEN_ROW_STATUSES) | set(FINISHED_ROW_STATUSES)
    assert RowStatus.INTERRUPTED not in STORED_ROW_STATUSES
    assert set(LIVE_SWEEP_STATUSES) == {"running", "paused"}


def test_a_member_is_its_string_wherever_it_goes():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (s TEXT)")
    db.execute("INSERT INTO t VALUES (?)", [SweepStatus.STOPPED])
    (stored,) = db.execute("SELECT s FROM t").fetchone()
    assert type(stored) is str and stored == SweepStatus.STOPPED == "stopped"
    assert json.dumps({RowStatus.DONE: TimelineState.PRESENT}) == '{"done": "present"}'
    assert f"{RowStatus.FAILED} · {TimelineState.MUTATED}" == "failed · mutated"
    # A status read back as a plain string is still found among the members.
    assert "done" in FINISHED_ROW_STATUSES and "paused" in LIVE_SWEEP_STATUSES


def test_the_validity_rule_reads_plain_strings_and_members_alike():
    for status in STORED_ROW_STATUSES:
        assert row_validity(RowFacts(status=status.value)) == row_validity(RowFacts(status=status))


def test_the_audit_states_are_the_text_states_plus_unknown():
    assert audit.STATES == (TimelineState.PRESENT, TimelineState.MUTATED, TimelineState.MISSING,
                            TimelineState.UNKNOWN)
    assert set(get_args(FactState)) < set(audit.STATES)
    assert set(STATE_MARKS) == {"not_yet", "present", "mutated", "missing"}
